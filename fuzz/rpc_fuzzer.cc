// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes the control socket's JSON-RPC 2.0 layer (target/rpc.h) as the server drives it: any
// byte stream, fed to an RpcFramer in chunks of any size, each framed request handed to an
// RpcDispatcher whose methods check their params with the helpers. What must hold: framing does
// not depend on how the stream was split; a framed request is one object within the limits;
// every answer is one line of JSON-RPC 2.0 (an object with "jsonrpc": "2.0", the request's id,
// and a result or an error with one of the five codes and a message); only a notification goes
// unanswered; nothing throws, aborts or overflows.
//
// Input: byte 0: bits 0-2, how many chunk sizes follow (0: the stream in one feed); bit 3, small
// limits follow (u16 max_message_bytes 1..8192, u8 max_depth). Then the chunk sizes (one byte
// each, a chunk is 1 + it bytes, used in turn), then the stream.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/input.h"
#include "target/rpc.h"

namespace {

using json = nlohmann::json;
using nvmf::target::RpcDispatcher;
using nvmf::target::RpcError;
using nvmf::target::RpcErrorCode;
using nvmf::target::RpcFramer;
using nvmf::target::RpcLimits;

void require(bool ok, const char* what, std::string_view text = {}) {
  if (ok) return;
  std::fprintf(stderr, "rpc_fuzzer: %s\n%.*s\n", what, static_cast<int>(text.size()), text.data());
  std::abort();
}

constexpr RpcErrorCode kCodes[] = {RpcErrorCode::kParseError, RpcErrorCode::kInvalidRequest,
                                   RpcErrorCode::kMethodNotFound, RpcErrorCode::kInvalidParams,
                                   RpcErrorCode::kInternalError};

bool known_code(const json& code) {
  if (!code.is_number_integer()) return false;
  for (RpcErrorCode c : kCodes) {
    if (code == static_cast<int>(c)) return true;
  }
  return false;
}

// Methods shaped like the target's: flat and nested params checked by the helpers, a method
// that fails with any code, one whose handler throws a library exception.
const RpcDispatcher& dispatcher() {
  static const RpcDispatcher* d = [] {
    auto* d = new RpcDispatcher;
    d->add("echo", [](const json& params) { return params; });
    d->add("bdev_create", [](const json& params) {
      using nvmf::target::rpc_only_keys, nvmf::target::rpc_param, nvmf::target::rpc_string,
          nvmf::target::rpc_uint;
      rpc_only_keys(params, {"name", "size", "block_size", "options"});
      json out = {{"name", rpc_string(params, "name")},
                  {"size", rpc_uint(params, "size", 1, uint64_t{1} << 40)},
                  {"block_size", rpc_uint(params, "block_size", 512, 4096)}};
      if (params.contains("options")) {
        const json& o = rpc_param(params, "options");
        if (!o.is_object()) throw RpcError{RpcErrorCode::kInvalidParams, "\"options\": object"};
        rpc_only_keys(o, {"read_only", "label", "tags"});
        if (o.contains("label")) out["label"] = rpc_string(o, "label");
        if (o.contains("read_only")) out["read_only"] = rpc_uint(o, "read_only", 0, 1) != 0;
        if (o.contains("tags")) {
          const json& tags = rpc_param(o, "tags");
          if (!tags.is_object()) throw RpcError{RpcErrorCode::kInvalidParams, "\"tags\": object"};
          for (const auto& [key, value] : tags.items()) {
            out["tags"][key] = rpc_uint(tags, key, 0, UINT64_MAX);
          }
        }
      }
      return out;
    });
    d->add("fail", [](const json& params) -> json {
      const uint64_t code = nvmf::target::rpc_uint(params, "code", 0, 4);
      throw RpcError{kCodes[code], nvmf::target::rpc_string(params, "message")};
    });
    d->add("library_error", [](const json& params) -> json {
      return params.at("a").at(0).get<int>();  // json::exception on any other shape
    });
    d->add("runtime_error",
           [](const json& params) -> json { throw std::runtime_error(params.dump()); });
    d->add("get_methods", [d](const json&) { return d->methods(); });
    return d;
  }();
  return *d;
}

// Checks the dispatcher's answer to one framed request.
void check_answer(const std::string& request, const std::string& answer) {
  const json req = json::parse(request, nullptr, /*allow_exceptions=*/false);
  const bool valid_id = req.is_object() && req.contains("id") &&
                        (req["id"].is_string() || req["id"].is_number() || req["id"].is_null());
  if (answer.empty()) {
    require(req.is_object() && !req.contains("id"), "no answer to a request with an id", request);
    return;
  }
  require(answer.find('\n') == std::string::npos, "an answer of more than one line", answer);
  const json a = json::parse(answer, nullptr, /*allow_exceptions=*/false);
  require(a.is_object(), "an answer that is not a JSON object", answer);
  require(a.size() == 3 && a.contains("jsonrpc") && a.contains("id"), "answer members", answer);
  require(a["jsonrpc"] == "2.0", "answer without \"jsonrpc\": \"2.0\"", answer);
  require(a.contains("result") != a.contains("error"), "not one of result and error", answer);
  if (valid_id) {
    require(a["id"] == req["id"], "the id was not echoed", answer);
  } else {
    require(a["id"].is_null(), "a request without a valid id answered with one", answer);
  }
  if (a.contains("result")) {
    require(valid_id, "a result for a request without a valid id", answer);
    return;
  }
  const json& e = a["error"];
  require(e.is_object() && e.size() == 2 && e.contains("code") && e.contains("message"),
          "error members", answer);
  require(known_code(e["code"]), "an error code outside JSON-RPC's five", answer);
  require(e["message"].is_string() && !e["message"].get_ref<const std::string&>().empty(),
          "an error without a message", answer);
  if (req.is_discarded()) require(e["code"] == -32700, "invalid JSON not a Parse error", answer);
}

struct Framing {
  std::vector<std::string> messages;
  bool failed = false;
  RpcError error;
};

// Drains `framer` into `out`; false once it failed.
bool drain(RpcFramer& framer, Framing& out) {
  std::string message;
  for (;;) {
    switch (framer.next(&message)) {
      case RpcFramer::Next::kMessage:
        out.messages.push_back(message);
        continue;
      case RpcFramer::Next::kNeedMore:
        return true;
      case RpcFramer::Next::kError:
        out.failed = true;
        out.error = framer.error();
        return false;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nvmf::fuzz::Input in(data, size);
  const uint8_t flags = in.u8();
  std::vector<size_t> chunks(flags & 7);
  RpcLimits limits;
  if ((flags & 8) != 0) {
    const uint16_t max_bytes = in.u16();
    limits.max_message_bytes = 1 + max_bytes % 8192;
    limits.max_depth = in.u8();
  }
  for (size_t& c : chunks) c = 1 + size_t{in.u8()};
  const auto rest = in.bytes(size);
  const std::string_view stream(reinterpret_cast<const char*>(rest.data()), rest.size());

  // The stream in the chunks the input gives, draining after each feed as the server does.
  RpcFramer framer(limits);
  Framing chunked;
  size_t pos = 0;
  for (size_t i = 0; pos < stream.size(); ++i) {
    const size_t n = chunks.empty() ? stream.size() : chunks[i % chunks.size()];
    framer.feed(stream.substr(pos, n));
    pos += std::min(n, stream.size() - pos);
    if (!drain(framer, chunked)) break;
    require(framer.pending_bytes() <= limits.max_message_bytes,
            "an unfinished request held beyond the limit");
  }
  // The same stream in one feed frames the same way.
  if (!chunks.empty()) {
    RpcFramer whole(limits);
    Framing once;
    whole.feed(stream);
    drain(whole, once);
    require(once.messages == chunked.messages, "framing depends on how the stream was split");
    require(once.failed == chunked.failed, "an error depends on how the stream was split");
    require(!once.failed || (once.error.code == chunked.error.code &&
                             once.error.message == chunked.error.message),
            "a different error when split");
  }

  for (const std::string& m : chunked.messages) {
    require(m.size() >= 2 && m.front() == '{' && (m.back() == '}' || m.back() == ']'),
            "a framed request that is not one object", m);
    require(m.size() <= limits.max_message_bytes, "a framed request over the limit", m);
    check_answer(m, dispatcher().handle(m));
  }
  if (chunked.failed) {
    const RpcErrorCode code = chunked.error.code;
    require(code == RpcErrorCode::kParseError || code == RpcErrorCode::kInvalidRequest,
            "a framing error that is neither Parse error nor Invalid Request");
    const std::string answer = RpcDispatcher::error_response(chunked.error);
    const json expected = {
        {"jsonrpc", "2.0"},
        {"error", {{"code", static_cast<int>(code)}, {"message", chunked.error.message}}},
        {"id", nullptr}};
    require(json::parse(answer, nullptr, /*allow_exceptions=*/false) == expected,
            "the framing error's answer", answer);
  }
  return 0;
}
