// SPDX-License-Identifier: BSD-3-Clause
// RpcFramer and RpcDispatcher.
#include "target/rpc.h"

#include <algorithm>
#include <utility>

namespace nvmf::target {
namespace {

using json = nlohmann::json;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string error_text(const json& id, const RpcError& e) {
  json out = {{"jsonrpc", "2.0"},
              {"error", {{"code", static_cast<int32_t>(e.code)}, {"message", e.message}}},
              {"id", id}};
  // Host-supplied text inside (a method name, a field) is escaped by dump(); invalid UTF-8 is
  // replaced rather than thrown on.
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

[[noreturn]] void invalid_params(std::string message) {
  throw RpcError{RpcErrorCode::kInvalidParams, std::move(message)};
}

}  // namespace

// ------------------------------------------------------------------------------ framing --

void RpcFramer::feed(std::string_view bytes) {
  if (failed_) return;
  // Consumed requests are dropped before appending, so the buffer holds at most one request
  // and what follows it in this read.
  if (start_ > 0) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  buffer_.append(bytes);
}

RpcFramer::Next RpcFramer::next(std::string* message) {
  if (failed_) return Next::kError;
  auto fail = [this](RpcErrorCode code, std::string why) {
    failed_ = true;
    error_ = {code, std::move(why)};
    return Next::kError;
  };
  while (start_ + scanned_ < buffer_.size()) {
    const char c = buffer_[start_ + scanned_];
    if (!started_) {
      if (is_space(c)) {  // whitespace between requests is skipped
        ++start_;
        continue;
      }
      if (c != '{') {
        return fail(c == '[' ? RpcErrorCode::kInvalidRequest : RpcErrorCode::kParseError,
                    c == '[' ? "batch requests are not supported: send one object per request"
                             : "a request must be a JSON object");
      }
      started_ = true;
    }
    ++scanned_;
    if (scanned_ > limits_.max_message_bytes) {
      return fail(RpcErrorCode::kInvalidRequest,
                  "request larger than " + std::to_string(limits_.max_message_bytes) + " bytes");
    }
    if (in_string_) {
      if (escape_) {
        escape_ = false;
      } else if (c == '\\') {
        escape_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      if (++depth_ > limits_.max_depth) {
        return fail(RpcErrorCode::kInvalidRequest,
                    "request nested deeper than " + std::to_string(limits_.max_depth) + " levels");
      }
    } else if (c == '}' || c == ']') {
      if (depth_ == 0) return fail(RpcErrorCode::kParseError, "unbalanced '}' or ']'");
      if (--depth_ == 0) {
        message->assign(buffer_, start_, scanned_);
        start_ += scanned_;
        scanned_ = 0;
        started_ = false;
        return Next::kMessage;
      }
    }
  }
  if (scanned_ > limits_.max_message_bytes) {
    return fail(RpcErrorCode::kInvalidRequest,
                "request larger than " + std::to_string(limits_.max_message_bytes) + " bytes");
  }
  return Next::kNeedMore;
}

// ----------------------------------------------------------------------------- dispatch --

void RpcDispatcher::add(std::string name, Handler handler) {
  methods_.emplace(std::move(name), std::move(handler));
}

std::vector<std::string> RpcDispatcher::methods() const {
  std::vector<std::string> names;
  names.reserve(methods_.size());
  for (const auto& [name, handler] : methods_) names.push_back(name);
  return names;
}

std::string RpcDispatcher::error_response(const RpcError& error) {
  return error_text(nullptr, error);
}

std::string RpcDispatcher::handle(std::string_view request) const {
  json req = json::parse(request, nullptr, /*allow_exceptions=*/false);
  if (req.is_discarded()) return error_text(nullptr, {RpcErrorCode::kParseError, "invalid JSON"});
  if (!req.is_object()) {
    return error_text(nullptr, {RpcErrorCode::kInvalidRequest, "a request must be a JSON object"});
  }
  // The id is echoed as given: a string, a number or null (section 4); anything else is refused
  // (checked before it is copied: an id may be a deep structure).
  json id = nullptr;
  const bool has_id = req.contains("id");
  if (has_id) {
    const json& given = req["id"];
    if (!given.is_string() && !given.is_number() && !given.is_null()) {
      return error_text(nullptr,
                        {RpcErrorCode::kInvalidRequest, "\"id\" must be a string, number or null"});
    }
    id = given;
  }
  // A request that is not well formed is answered even without an id (section 5: its id is then
  // null); only a well-formed request without an id is a notification, which gets no answer.
  if (!req.contains("jsonrpc") || req["jsonrpc"] != "2.0") {
    return error_text(id, {RpcErrorCode::kInvalidRequest, "\"jsonrpc\" must be \"2.0\""});
  }
  if (!req.contains("method") || !req["method"].is_string()) {
    return error_text(id, {RpcErrorCode::kInvalidRequest, "\"method\" must be a string"});
  }
  const bool notification = !has_id;
  auto answer = [&](const RpcError& e) { return notification ? std::string() : error_text(id, e); };
  const std::string& name = req["method"].get_ref<const std::string&>();
  auto it = methods_.find(name);
  if (it == methods_.end()) {
    return answer({RpcErrorCode::kMethodNotFound,
                   "no method " + json(name).dump(-1, ' ', false, json::error_handler_t::replace)});
  }
  json params = json::object();
  if (req.contains("params")) {
    params = req["params"];
    if (!params.is_object()) {
      return answer({RpcErrorCode::kInvalidParams, "\"params\" must be an object"});
    }
  }
  json result;
  try {
    result = it->second(params);
  } catch (const RpcError& e) {
    return answer(e);
  } catch (const std::exception& e) {
    return answer({RpcErrorCode::kInternalError, e.what()});
  }
  if (notification) return {};
  json out = {{"jsonrpc", "2.0"}, {"result", std::move(result)}, {"id", id}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

// ------------------------------------------------------------------------------- params --

const json& rpc_param(const json& params, std::string_view key) {
  auto it = params.find(key);
  if (it == params.end()) invalid_params("missing \"" + std::string(key) + "\"");
  return *it;
}

std::string rpc_string(const json& params, std::string_view key) {
  const json& v = rpc_param(params, key);
  if (!v.is_string()) invalid_params("\"" + std::string(key) + "\" must be a string");
  return v.get<std::string>();
}

uint64_t rpc_uint(const json& params, std::string_view key, uint64_t min, uint64_t max) {
  const json& v = rpc_param(params, key);
  // Parsed non-negative integers are unsigned; one built in C++ from a signed int is not.
  const bool non_negative =
      v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
  if (!non_negative || v.get<uint64_t>() < min || v.get<uint64_t>() > max) {
    invalid_params("\"" + std::string(key) + "\" must be an integer from " + std::to_string(min) +
                   " to " + std::to_string(max));
  }
  return v.get<uint64_t>();
}

void rpc_only_keys(const json& params, std::initializer_list<std::string_view> keys) {
  for (const auto& [key, value] : params.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      invalid_params("unknown parameter " +
                     json(key).dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
}

}  // namespace nvmf::target
