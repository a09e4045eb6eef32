// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for RpcFramer (one JSON object per request, found by scanning) and RpcDispatcher
// (JSON-RPC 2.0 requests, answers and error codes) and the parameter helpers handlers use.
#include "target/rpc.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvmf::target {
namespace {

using json = nlohmann::json;
using Next = RpcFramer::Next;

// Every message the framer has complete now, then what stopped it.
struct Framed {
  std::vector<std::string> messages;
  Next last = Next::kNeedMore;
};

Framed drain(RpcFramer& framer) {
  Framed out;
  std::string message;
  for (;;) {
    out.last = framer.next(&message);
    if (out.last != Next::kMessage) return out;
    out.messages.push_back(message);
  }
}

RpcLimits limits(size_t max_message_bytes, uint32_t max_depth) {
  RpcLimits l;
  l.max_message_bytes = max_message_bytes;
  l.max_depth = max_depth;
  return l;
}

// ------------------------------------------------------------------------------ framing --

TEST(RpcFramer, OneObject) {
  RpcFramer framer;
  const std::string request = R"({"jsonrpc":"2.0","method":"m","id":1})";
  framer.feed(request);
  Framed f = drain(framer);
  ASSERT_EQ(f.messages.size(), 1u);
  EXPECT_EQ(f.messages[0], request);
  EXPECT_EQ(f.last, Next::kNeedMore);
  EXPECT_EQ(framer.pending_bytes(), 0u);
}

TEST(RpcFramer, TwoObjectsInOneFeed) {
  RpcFramer framer;
  framer.feed(R"({"a":1}{"b":[2,{"c":3}]})");
  Framed f = drain(framer);
  ASSERT_EQ(f.messages.size(), 2u);
  EXPECT_EQ(f.messages[0], R"({"a":1})");
  EXPECT_EQ(f.messages[1], R"({"b":[2,{"c":3}]})");
  EXPECT_EQ(f.last, Next::kNeedMore);
}

TEST(RpcFramer, ObjectSplitByteByByte) {
  RpcFramer framer;
  const std::string request = R"({"jsonrpc":"2.0","method":"m","params":{"s":"}\"{"},"id":"x"})";
  std::string message;
  for (size_t i = 0; i + 1 < request.size(); ++i) {
    framer.feed(request.substr(i, 1));
    ASSERT_EQ(framer.next(&message), Next::kNeedMore) << "after byte " << i;
    EXPECT_EQ(framer.pending_bytes(), i + 1);
  }
  framer.feed(request.substr(request.size() - 1));
  ASSERT_EQ(framer.next(&message), Next::kMessage);
  EXPECT_EQ(message, request);
  EXPECT_EQ(framer.next(&message), Next::kNeedMore);
  EXPECT_EQ(framer.pending_bytes(), 0u);
}

TEST(RpcFramer, WhitespaceBetweenAndAroundObjects) {
  RpcFramer framer;
  framer.feed(" \n\t\r{\"a\":1}\n\r\n  \t{ \"b\" : 2 }\n");
  Framed f = drain(framer);
  ASSERT_EQ(f.messages.size(), 2u);
  EXPECT_EQ(f.messages[0], R"({"a":1})");
  EXPECT_EQ(f.messages[1], R"({ "b" : 2 })");
  EXPECT_EQ(f.last, Next::kNeedMore);
  EXPECT_EQ(framer.pending_bytes(), 0u);  // whitespace between requests is not held
}

TEST(RpcFramer, BracesBracketsAndEscapesInsideStrings) {
  // "c\\" ends with an escaped backslash: the quote after it closes the string.
  const std::string request = R"({"s":"}{][","q":"a\"}b","b":"c\\","t":"{[","u":"\\\"}","k}":"]"})";
  RpcFramer framer;
  framer.feed(request + request);
  Framed f = drain(framer);
  ASSERT_EQ(f.messages.size(), 2u);
  EXPECT_EQ(f.messages[0], request);
  EXPECT_EQ(f.messages[1], request);
  EXPECT_EQ(f.last, Next::kNeedMore);
  EXPECT_EQ(json::parse(f.messages[0])["u"], "\\\"}");
}

TEST(RpcFramer, UnfinishedStringHoldsTheObjectOpen) {
  RpcFramer framer;
  framer.feed(R"({"s":"}})");
  EXPECT_EQ(drain(framer).messages.size(), 0u);
  framer.feed(R"("})");
  Framed f = drain(framer);
  ASSERT_EQ(f.messages.size(), 1u);
  EXPECT_EQ(f.messages[0], R"({"s":"}}"})");
}

TEST(RpcFramer, TopLevelArrayIsAnInvalidRequest) {
  RpcFramer framer;
  framer.feed(R"([{"jsonrpc":"2.0","method":"m","id":1}])");
  std::string message;
  ASSERT_EQ(framer.next(&message), Next::kError);
  EXPECT_EQ(framer.error().code, RpcErrorCode::kInvalidRequest);
  EXPECT_EQ(framer.error().message,
            "batch requests are not supported: send one object per request");
}

TEST(RpcFramer, NonObjectByteIsAParseError) {
  for (const std::string bad : {"x", "1", "\"s\"", "null", "\x01", "\xff"}) {
    RpcFramer framer;
    framer.feed(bad);
    std::string message;
    ASSERT_EQ(framer.next(&message), Next::kError) << bad;
    EXPECT_EQ(framer.error().code, RpcErrorCode::kParseError) << bad;
    EXPECT_EQ(framer.error().message, "a request must be a JSON object") << bad;
  }
}

TEST(RpcFramer, GarbageAfterARequestIsAParseError) {
  RpcFramer framer;
  framer.feed(R"({"a":1} x{"b":2})");
  Framed f = drain(framer);
  ASSERT_EQ(f.messages.size(), 1u);
  EXPECT_EQ(f.last, Next::kError);
  EXPECT_EQ(framer.error().code, RpcErrorCode::kParseError);
}

TEST(RpcFramer, UnbalancedClosingBraceIsAParseError) {
  for (const std::string bad : {"}", "]", R"({"a":1}})", R"({"a":1}])"}) {
    RpcFramer framer;
    framer.feed(bad);
    Framed f = drain(framer);
    EXPECT_EQ(f.messages.size(), bad.size() > 1 ? 1u : 0u) << bad;
    ASSERT_EQ(f.last, Next::kError) << bad;
    EXPECT_EQ(framer.error().code, RpcErrorCode::kParseError) << bad;
    EXPECT_FALSE(framer.error().message.empty()) << bad;
  }
}

TEST(RpcFramer, NestingUpToMaxDepthPasses) {
  RpcFramer framer(limits(1024, 3));
  framer.feed(R"({"a":{"b":[1]}})");
  Framed f = drain(framer);
  ASSERT_EQ(f.messages.size(), 1u);
  EXPECT_EQ(f.last, Next::kNeedMore);
}

TEST(RpcFramer, NestingDeeperThanMaxDepthIsAnErrorNamingTheLimit) {
  RpcFramer framer(limits(1024, 3));
  framer.feed(R"({"a":{"b":[[1]]}})");
  std::string message;
  ASSERT_EQ(framer.next(&message), Next::kError);
  EXPECT_EQ(framer.error().code, RpcErrorCode::kInvalidRequest);
  EXPECT_EQ(framer.error().message, "request nested deeper than 3 levels");
}

TEST(RpcFramer, DefaultDepthLimitIs32) {
  auto nested = [](int depth) {
    std::string s;
    for (int i = 0; i < depth; ++i) s += "{\"a\":";
    s += "1";
    for (int i = 0; i < depth; ++i) s += "}";
    return s;
  };
  RpcFramer ok;
  ok.feed(nested(32));
  EXPECT_EQ(drain(ok).messages.size(), 1u);
  RpcFramer deep;
  deep.feed(nested(33));
  std::string message;
  ASSERT_EQ(deep.next(&message), Next::kError);
  EXPECT_EQ(deep.error().message, "request nested deeper than 32 levels");
}

TEST(RpcFramer, CompleteRequestOverMaxMessageBytesIsAnError) {
  const std::string fits = R"({"s":"0123456789"})";  // 18 bytes
  RpcFramer at_limit(limits(fits.size(), 32));
  at_limit.feed(fits);
  EXPECT_EQ(drain(at_limit).messages.size(), 1u);

  RpcFramer over(limits(fits.size() - 1, 32));
  over.feed(fits);
  std::string message;
  ASSERT_EQ(over.next(&message), Next::kError);
  EXPECT_EQ(over.error().code, RpcErrorCode::kInvalidRequest);
  EXPECT_EQ(over.error().message, "request larger than 17 bytes");
}

TEST(RpcFramer, IncompleteRequestOverMaxMessageBytesIsAnError) {
  RpcFramer framer(limits(16, 32));
  std::string message;
  framer.feed(R"({"s":"0123456789)");  // 16 bytes, no end yet
  ASSERT_EQ(framer.next(&message), Next::kNeedMore);
  EXPECT_EQ(framer.pending_bytes(), 16u);
  framer.feed("a");
  ASSERT_EQ(framer.next(&message), Next::kError);
  EXPECT_EQ(framer.error().code, RpcErrorCode::kInvalidRequest);
  EXPECT_EQ(framer.error().message, "request larger than 16 bytes");
}

TEST(RpcFramer, LimitAppliesToEachRequestNotTheStream) {
  RpcFramer framer(limits(8, 32));
  std::string stream;
  for (int i = 0; i < 100; ++i) stream += R"({"a":1} )";  // 7 bytes each
  framer.feed(stream);
  Framed f = drain(framer);
  EXPECT_EQ(f.messages.size(), 100u);
  EXPECT_EQ(f.last, Next::kNeedMore);
}

TEST(RpcFramer, ErrorIsFinal) {
  RpcFramer framer;
  framer.feed("x");
  std::string message;
  ASSERT_EQ(framer.next(&message), Next::kError);
  framer.feed(R"({"a":1})");
  EXPECT_EQ(framer.next(&message), Next::kError);
  EXPECT_EQ(framer.error().code, RpcErrorCode::kParseError);
}

TEST(RpcFramer, PendingBytesCountsTheUnfinishedRequest) {
  RpcFramer framer;
  EXPECT_EQ(framer.pending_bytes(), 0u);
  framer.feed(R"({"a":)");
  std::string message;
  EXPECT_EQ(framer.next(&message), Next::kNeedMore);
  EXPECT_EQ(framer.pending_bytes(), 5u);
  framer.feed(R"(1}{"bc")");
  EXPECT_EQ(framer.next(&message), Next::kMessage);
  EXPECT_EQ(message, R"({"a":1})");
  EXPECT_EQ(framer.pending_bytes(), 5u);  // {"bc"
  EXPECT_EQ(framer.next(&message), Next::kNeedMore);
  EXPECT_EQ(framer.pending_bytes(), 5u);
  framer.feed("}");
  EXPECT_EQ(framer.next(&message), Next::kMessage);
  EXPECT_EQ(message, R"({"bc"})");
  EXPECT_EQ(framer.pending_bytes(), 0u);
}

// ----------------------------------------------------------------------------- dispatch --

// A dispatcher with the handlers the tests call: "echo" returns its params, "count" counts its
// calls, "create" checks its params with the helpers, the others fail in each way.
class RpcDispatcherTest : public ::testing::Test {
 protected:
  RpcDispatcherTest() {
    d_.add("echo", [](const json& params) { return params; });
    d_.add("count", [this](const json&) { return ++calls_; });
    d_.add("create", [](const json& params) {
      rpc_only_keys(params, {"name", "size"});
      return json{{"name", rpc_string(params, "name")}, {"size", rpc_uint(params, "size", 1, 100)}};
    });
    d_.add("refuse", [](const json&) -> json {
      throw RpcError{RpcErrorCode::kMethodNotFound, "not in this state"};
    });
    d_.add("crash", [](const json&) -> json { throw std::runtime_error("disk on fire"); });
    d_.add("crash_bad_utf8", [](const json&) -> json { throw std::runtime_error("bad \xff\xfe"); });
  }

  // The answer to `request`, parsed (it must be one JSON object).
  json call(const std::string& request) {
    const std::string answer = d_.handle(request);
    EXPECT_FALSE(answer.empty()) << request;
    EXPECT_EQ(answer.find('\n'), std::string::npos) << answer;
    json j = json::parse(answer, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << answer;
    return j;
  }

  static json error(RpcErrorCode code, const std::string& message, json id) {
    return json{{"jsonrpc", "2.0"},
                {"error", {{"code", static_cast<int>(code)}, {"message", message}}},
                {"id", std::move(id)}};
  }

  static json result(json value, json id) {
    return json{{"jsonrpc", "2.0"}, {"result", std::move(value)}, {"id", std::move(id)}};
  }

  RpcDispatcher d_;
  int calls_ = 0;
};

TEST_F(RpcDispatcherTest, ResultEchoesAStringId) {
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"echo","params":{"a":[1,"b"]},"id":"req-1"})"),
            result({{"a", {1, "b"}}}, "req-1"));
}

TEST_F(RpcDispatcherTest, ResultEchoesANumericId) {
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"count","id":42})"), result(1, 42));
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"count","id":-7})"), result(2, -7));
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"count","id":1.5})"), result(3, 1.5));
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"count","id":18446744073709551615})"),
            result(4, 18446744073709551615ull));
}

TEST_F(RpcDispatcherTest, ResultEchoesANullId) {
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"count","id":null})"), result(1, nullptr));
}

TEST_F(RpcDispatcherTest, AbsentParamsArriveAsAnEmptyObject) {
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"echo","id":1})"), result(json::object(), 1));
}

TEST_F(RpcDispatcherTest, NotificationRunsAndGetsNoAnswer) {
  EXPECT_EQ(d_.handle(R"({"jsonrpc":"2.0","method":"count"})"), "");
  EXPECT_EQ(calls_, 1);
  // Nor does a notification whose method fails (JSON-RPC 2.0 section 4.1).
  EXPECT_EQ(d_.handle(R"({"jsonrpc":"2.0","method":"crash"})"), "");
  EXPECT_EQ(d_.handle(R"({"jsonrpc":"2.0","method":"nope"})"), "");
}

TEST_F(RpcDispatcherTest, WrongJsonrpcIsAnInvalidRequest) {
  const json expected = error(RpcErrorCode::kInvalidRequest, R"("jsonrpc" must be "2.0")", 3);
  EXPECT_EQ(call(R"({"jsonrpc":"1.0","method":"count","id":3})"), expected);
  EXPECT_EQ(call(R"({"jsonrpc":2.0,"method":"count","id":3})"), expected);
  EXPECT_EQ(call(R"({"method":"count","id":3})"), expected);
  EXPECT_EQ(calls_, 0);
}

TEST_F(RpcDispatcherTest, MissingMethodIsAnInvalidRequest) {
  const json expected = error(RpcErrorCode::kInvalidRequest, R"("method" must be a string)", "x");
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","id":"x"})"), expected);
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":7,"id":"x"})"), expected);
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":null,"id":"x"})"), expected);
}

TEST_F(RpcDispatcherTest, UnknownMethodIsNamed) {
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"bdev_nope","id":1})"),
            error(RpcErrorCode::kMethodNotFound, R"(no method "bdev_nope")", 1));
  // Quotes and control characters in the name stay escaped inside the message.
  json j = call(R"({"jsonrpc":"2.0","method":"a\"b\n","id":1})");
  EXPECT_EQ(j["error"]["code"], -32601);
  EXPECT_EQ(j["error"]["message"], R"(no method "a\"b\n")");
}

TEST_F(RpcDispatcherTest, ParamsNotAnObjectAreInvalidParams) {
  const json expected = error(RpcErrorCode::kInvalidParams, R"("params" must be an object)", 9);
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"echo","params":[1,2],"id":9})"), expected);
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"echo","params":"a","id":9})"), expected);
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"echo","params":null,"id":9})"), expected);
}

TEST_F(RpcDispatcherTest, HandlerRpcErrorKeepsItsCodeAndMessage) {
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"refuse","id":5})"),
            error(RpcErrorCode::kMethodNotFound, "not in this state", 5));
}

TEST_F(RpcDispatcherTest, HandlerExceptionIsAnInternalError) {
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"crash","id":5})"),
            error(RpcErrorCode::kInternalError, "disk on fire", 5));
  // Invalid UTF-8 in an exception's text is replaced, not thrown on.
  json j = call(R"({"jsonrpc":"2.0","method":"crash_bad_utf8","id":5})");
  EXPECT_EQ(j["error"]["code"], -32603);
  EXPECT_EQ(j["error"]["message"], "bad \xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_F(RpcDispatcherTest, InvalidJsonIsAParseErrorWithNullId) {
  const json expected = error(RpcErrorCode::kParseError, "invalid JSON", nullptr);
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"count","id":1)"), expected);
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"count","id":1}})"), expected);
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"count",})"), expected);
  EXPECT_EQ(call("{\"jsonrpc\":\"2.0\",\"method\":\"co\xffunt\",\"id\":1}"), expected);
  EXPECT_EQ(call(""), expected);
  EXPECT_EQ(calls_, 0);
}

TEST_F(RpcDispatcherTest, NonObjectJsonIsAnInvalidRequest) {
  const json expected =
      error(RpcErrorCode::kInvalidRequest, "a request must be a JSON object", nullptr);
  EXPECT_EQ(call(R"([{"jsonrpc":"2.0","method":"count","id":1}])"), expected);
  EXPECT_EQ(call("5"), expected);
  EXPECT_EQ(call(R"("count")"), expected);
}

TEST_F(RpcDispatcherTest, IdOfWrongTypeIsAnInvalidRequestWithNullId) {
  const json expected =
      error(RpcErrorCode::kInvalidRequest, R"("id" must be a string, number or null)", nullptr);
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"count","id":{"a":1}})"), expected);
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"count","id":[1]})"), expected);
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"count","id":true})"), expected);
  EXPECT_EQ(calls_, 0);
}

// JSON-RPC 2.0 section 5: "If there was an error in detecting the id in the Request object
// (e.g. Parse error/Invalid Request), it MUST be Null"; section 7's example answers
// {"jsonrpc": "2.0", "method": 1, "params": "bar"} (no id) with an Invalid Request error. An
// object that is not a valid Request is not a notification: it is answered, so that a client
// waiting for an answer gets one.
// Disabled: handle() treats every object without "id" as a notification and answers nothing.
TEST_F(RpcDispatcherTest, InvalidRequestWithoutIdIsAnsweredWithNullId) {
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":1,"params":"bar"})"),
            error(RpcErrorCode::kInvalidRequest, R"("method" must be a string)", nullptr));
  EXPECT_EQ(call(R"({"method":"count"})"),
            error(RpcErrorCode::kInvalidRequest, R"("jsonrpc" must be "2.0")", nullptr));
  EXPECT_EQ(call(R"({})"),
            error(RpcErrorCode::kInvalidRequest, R"("jsonrpc" must be "2.0")", nullptr));
  EXPECT_EQ(calls_, 0);
}

TEST_F(RpcDispatcherTest, ParamHelpersThroughAHandler) {
  EXPECT_EQ(call(R"({"jsonrpc":"2.0","method":"create","params":{"name":"a","size":100},"id":1})"),
            result({{"name", "a"}, {"size", 100}}, 1));
  struct Case {
    const char* params;
    const char* message;
  };
  for (const Case& c : {
           Case{R"({"size":1})", R"(missing "name")"},
           Case{R"({"name":"a"})", R"(missing "size")"},
           Case{R"({"name":5,"size":1})", R"("name" must be a string)"},
           Case{R"({"name":null,"size":1})", R"("name" must be a string)"},
           Case{R"({"name":"a","size":"5"})", R"("size" must be an integer from 1 to 100)"},
           Case{R"({"name":"a","size":0})", R"("size" must be an integer from 1 to 100)"},
           Case{R"({"name":"a","size":101})", R"("size" must be an integer from 1 to 100)"},
           Case{R"({"name":"a","size":-1})", R"("size" must be an integer from 1 to 100)"},
           Case{R"({"name":"a","size":1.5})", R"("size" must be an integer from 1 to 100)"},
           Case{R"({"name":"a","size":1e2})", R"("size" must be an integer from 1 to 100)"},
           Case{R"({"name":"a","size":18446744073709551616})",
                R"("size" must be an integer from 1 to 100)"},
           Case{R"({"name":"a","size":1,"sise":2})", R"(unknown parameter "sise")"},
       }) {
    const std::string request =
        std::string(R"({"jsonrpc":"2.0","method":"create","id":2,"params":)") + c.params + "}";
    EXPECT_EQ(call(request), error(RpcErrorCode::kInvalidParams, c.message, 2)) << c.params;
  }
}

TEST_F(RpcDispatcherTest, MethodsAreSorted) {
  EXPECT_EQ(d_.methods(), (std::vector<std::string>{"count", "crash", "crash_bad_utf8", "create",
                                                    "echo", "refuse"}));
}

TEST(RpcDispatcher, ErrorResponseHasNullId) {
  const std::string answer =
      RpcDispatcher::error_response({RpcErrorCode::kInvalidRequest, "request larger than 4 bytes"});
  EXPECT_EQ(json::parse(answer),
            json::parse(R"({"jsonrpc":"2.0","error":{"code":-32600,)"
                        R"("message":"request larger than 4 bytes"},"id":null})"));
}

// ------------------------------------------------------------------------------- params --

// The RpcError a call throws (code kInternalError with an empty message when it throws none).
template <typename F>
RpcError thrown(F&& f) {
  try {
    f();
  } catch (const RpcError& e) {
    return e;
  }
  return {RpcErrorCode::kInternalError, ""};
}

TEST(RpcParams, Param) {
  const json p = json::parse(R"({"a":{"b":1}})");
  EXPECT_EQ(rpc_param(p, "a"), json({{"b", 1}}));
  RpcError e = thrown([&] { rpc_param(p, "b"); });
  EXPECT_EQ(e.code, RpcErrorCode::kInvalidParams);
  EXPECT_EQ(e.message, R"(missing "b")");
}

TEST(RpcParams, String) {
  const json p = json::parse(R"({"s":"text","n":1,"o":{}})");
  EXPECT_EQ(rpc_string(p, "s"), "text");
  RpcError missing = thrown([&] { rpc_string(p, "t"); });
  EXPECT_EQ(missing.code, RpcErrorCode::kInvalidParams);
  EXPECT_EQ(missing.message, R"(missing "t")");
  for (const char* key : {"n", "o"}) {
    RpcError wrong = thrown([&] { rpc_string(p, key); });
    EXPECT_EQ(wrong.code, RpcErrorCode::kInvalidParams);
    EXPECT_EQ(wrong.message, "\"" + std::string(key) + "\" must be a string");
  }
}

TEST(RpcParams, Uint) {
  const json p = json::parse(
      R"({"zero":0,"max":18446744073709551615,"neg":-1,"f":2.0,"s":"2","b":true,"mid":7})");
  EXPECT_EQ(rpc_uint(p, "zero", 0, 10), 0u);
  EXPECT_EQ(rpc_uint(p, "max", 0, UINT64_MAX), UINT64_MAX);
  EXPECT_EQ(rpc_uint(p, "mid", 7, 7), 7u);
  RpcError missing = thrown([&] { rpc_uint(p, "nope", 0, 1); });
  EXPECT_EQ(missing.code, RpcErrorCode::kInvalidParams);
  EXPECT_EQ(missing.message, R"(missing "nope")");
  for (const char* key : {"neg", "f", "s", "b"}) {
    RpcError wrong = thrown([&] { rpc_uint(p, key, 0, 10); });
    EXPECT_EQ(wrong.code, RpcErrorCode::kInvalidParams) << key;
    EXPECT_EQ(wrong.message, "\"" + std::string(key) + "\" must be an integer from 0 to 10");
  }
  EXPECT_EQ(thrown([&] { rpc_uint(p, "mid", 8, 10); }).message,
            R"("mid" must be an integer from 8 to 10)");
  EXPECT_EQ(thrown([&] { rpc_uint(p, "mid", 0, 6); }).message,
            R"("mid" must be an integer from 0 to 6)");
  EXPECT_EQ(thrown([&] { rpc_uint(p, "max", 0, UINT64_MAX - 1); }).message,
            R"("max" must be an integer from 0 to 18446744073709551614)");
}

TEST(RpcParams, OnlyKeys) {
  const json p = json::parse(R"({"name":"a","size":1})");
  EXPECT_NO_THROW(rpc_only_keys(p, {"name", "size", "extra"}));
  EXPECT_NO_THROW(rpc_only_keys(json::object(), {}));
  RpcError e = thrown([&] { rpc_only_keys(p, {"name"}); });
  EXPECT_EQ(e.code, RpcErrorCode::kInvalidParams);
  EXPECT_EQ(e.message, R"(unknown parameter "size")");
  // The unknown key is quoted and escaped.
  EXPECT_EQ(thrown([&] { rpc_only_keys(json::parse(R"({"a\"b":1})"), {"a"}); }).message,
            R"(unknown parameter "a\"b")");
}

}  // namespace
}  // namespace nvmf::target
