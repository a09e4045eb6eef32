// SPDX-License-Identifier: BSD-3-Clause
// JSON-RPC 2.0 (https://www.jsonrpc.org/specification) as the target's control socket speaks
// it: the framing of a byte stream into requests (RpcFramer) and the dispatch of one request to
// a method (RpcDispatcher). No sockets here (target/rpc_server.h serves them), so both are
// unit-tested and fuzzed as they are.
//
// Framing, as SPDK's JSON-RPC server and its scripts/rpc.py: a request is one JSON object sent
// as it is, with no length prefix and no delimiter; the server finds its end by scanning
// (braces and brackets outside strings), and answers each with one JSON object followed by a
// newline. A client may send several requests back to back. Batches (a JSON array) are not
// supported (SPDK has none either): they get an Invalid Request error.
#ifndef NVMF_TARGET_RPC_H_
#define NVMF_TARGET_RPC_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace nvmf::target {

// JSON-RPC 2.0 error codes (section 5.1).
enum class RpcErrorCode : int32_t {
  kParseError = -32700,      // not JSON, or not one complete object
  kInvalidRequest = -32600,  // JSON, but not a request (no method, wrong jsonrpc, batch, ...)
  kMethodNotFound = -32601,
  kInvalidParams = -32602,  // the message names the field
  kInternalError = -32603,
};

// A method's failure: JSON-RPC's code and a one-line message naming the field or the reason.
struct RpcError {
  RpcErrorCode code = RpcErrorCode::kInvalidParams;
  std::string message;
};

// Limits of one request (each beyond it is an error answer, then the connection is closed: the
// rest of the stream cannot be framed).
struct RpcLimits {
  // Bytes of one request. 1 MiB: a config with thousands of hosts still fits.
  size_t max_message_bytes = size_t{1} << 20;
  // Nesting of objects and arrays. 32: the deepest request (a namespace inside a config) has 5.
  uint32_t max_depth = 32;
};

// Splits a byte stream into requests: feed() what was read, then take requests while next()
// says one is complete. Scans each byte once (strings and escapes tracked), allocates only the
// buffer it keeps. After an error (a request over max_message_bytes, nesting over max_depth, a
// byte between requests that cannot start an object) it stays in error: the caller answers
// error() and closes.
class RpcFramer {
 public:
  enum class Next { kNeedMore, kMessage, kError };

  explicit RpcFramer(const RpcLimits& limits = {}) : limits_(limits) {}
  void feed(std::string_view bytes);
  // kMessage: *message is one complete top-level JSON object's text (not yet parsed).
  Next next(std::string* message);
  // Why framing stopped (after kError): the JSON-RPC error to answer.
  const RpcError& error() const { return error_; }
  // Bytes of an unfinished request held now (a client that stops mid-request holds them).
  size_t pending_bytes() const { return buffer_.size() - start_; }

 private:
  RpcLimits limits_;
  std::string buffer_;
  size_t start_ = 0;    // first byte of the request being scanned
  size_t scanned_ = 0;  // bytes of it scanned so far (from start_)
  uint32_t depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
  bool started_ = false;  // its opening brace was seen
  bool failed_ = false;
  RpcError error_;
};

// The methods and their handlers. A handler gets the request's "params" (an object; absent
// params arrive as an empty object) and returns the result, or throws RpcError.
class RpcDispatcher {
 public:
  using Handler = std::function<nlohmann::json(const nlohmann::json& params)>;

  // `name` must be new.
  void add(std::string name, Handler handler);
  // Method names, sorted (rpc_get_methods).
  std::vector<std::string> methods() const;
  // Parses and runs one request; returns its response text (no newline), or an empty string for
  // a notification (a request without "id", JSON-RPC 2.0 section 4.1), which gets none. Never
  // throws: a handler's exception other than RpcError is an Internal Error answer.
  std::string handle(std::string_view request) const;
  // The response to a request that could not be framed (id null).
  static std::string error_response(const RpcError& error);

 private:
  std::map<std::string, Handler, std::less<>> methods_;
};

// Parameter helpers for handlers: each throws RpcError(kInvalidParams) naming `key` when it is
// missing (required) or of the wrong type.
const nlohmann::json& rpc_param(const nlohmann::json& params, std::string_view key);
std::string rpc_string(const nlohmann::json& params, std::string_view key);
// An unsigned integer within [min, max].
uint64_t rpc_uint(const nlohmann::json& params, std::string_view key, uint64_t min, uint64_t max);
// Unknown keys are refused (a typo must not be silently ignored), as SPDK's decoders do.
void rpc_only_keys(const nlohmann::json& params, std::initializer_list<std::string_view> keys);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_RPC_H_
