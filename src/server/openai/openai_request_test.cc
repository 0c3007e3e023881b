#include "server/openai/openai_request.h"

#include <gtest/gtest.h>

#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/fit_to_context.h"
#include "server/core/json_body.h"
#include "server/core/request.h"
#include "server/openai/request_test_util.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

constexpr int64_t kVocab = testing::kTestVocab;
constexpr int64_t kCtx = testing::kTestCtx;
constexpr auto Chat = testing::ParseChatBody;
constexpr auto Completion = testing::ParseCompletionBody;

TEST(ApiRequest, ParsesChatSampling) {
  auto r = Chat(R"({"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"top_p":0.9,
      "top_k":40,"min_p":0.05,"seed":7,"max_tokens":12,"stop":["x","y"],"stream":true,
      "stream_options":{"include_usage":true},"user":"s1","cache_ttl_s":30,"ignore_eos":true,
      "logprobs":true,"top_logprobs":3})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  const ApiRequest& a = r.value;
  EXPECT_FLOAT_EQ(a.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(a.sampling.top_p, 0.9f);
  EXPECT_EQ(a.sampling.top_k, 40);
  EXPECT_TRUE(a.sampling.has_seed);
  EXPECT_EQ(a.sampling.seed, 7u);
  EXPECT_EQ(a.sampling.max_tokens, 12);
  EXPECT_TRUE(a.sampling.ignore_eos);
  EXPECT_TRUE(a.sampling.logprobs);
  EXPECT_EQ(a.sampling.top_logprobs, 3);
  EXPECT_EQ(a.stop, (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(a.stream);
  EXPECT_TRUE(a.include_usage);
  EXPECT_EQ(a.user, "s1");
  EXPECT_DOUBLE_EQ(a.cache_ttl_s, 30);
}

TEST(ApiRequest, ParsesPenaltiesAndLogitBias) {
  auto r = Completion(R"({"prompt":"x","presence_penalty":-1.5,"frequency_penalty":2,"repetition_penalty":1.3,
      "logit_bias":{"999":-100,"0":100,"17":0.5,"007":-2.25}})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  const SamplingParams& s = r.value.sampling;
  EXPECT_FLOAT_EQ(s.presence_penalty, -1.5f);
  EXPECT_FLOAT_EQ(s.frequency_penalty, 2.0f);
  EXPECT_FLOAT_EQ(s.repetition_penalty, 1.3f);
  const std::vector<std::pair<int32_t, float>> want = {{0, 100.0f}, {7, -2.25f}, {17, 0.5f}, {999, -100.0f}};
  EXPECT_EQ(s.logit_bias, want);  // sorted by id
  auto defaults = Chat(R"({"messages":[{"role":"user","content":"x"}],"logit_bias":{}})");
  ASSERT_TRUE(defaults.ok()) << defaults.error.message;
  EXPECT_FLOAT_EQ(defaults.value.sampling.presence_penalty, 0.0f);
  EXPECT_FLOAT_EQ(defaults.value.sampling.frequency_penalty, 0.0f);
  EXPECT_FLOAT_EQ(defaults.value.sampling.repetition_penalty, 1.0f);
  EXPECT_TRUE(defaults.value.sampling.logit_bias.empty());
  for (const char* edge : {"1e-6", "0.5", "1e6"}) {
    auto e = Completion(std::string(R"({"prompt":"x","repetition_penalty":)") + edge + "}");
    EXPECT_TRUE(e.ok()) << edge << ": " << e.error.message;
  }
}

// Each bad sampling value is a 400 whose message names what is wrong.
TEST(ApiRequest, RejectsBadSamplingValues) {
  struct Case {
    const char* fields;  // appended to a valid chat body
    const char* param;
    const char* in_message;
  };
  const Case cases[] = {
      {R"("presence_penalty":2.5)", "presence_penalty", "[-2, 2]"},
      {R"("presence_penalty":-2.01)", "presence_penalty", "[-2, 2]"},
      {R"("presence_penalty":"high")", "presence_penalty", "a number"},
      {R"("frequency_penalty":-3)", "frequency_penalty", "[-2, 2]"},
      {R"("frequency_penalty":true)", "frequency_penalty", "a number"},
      {R"("repetition_penalty":0)", "repetition_penalty", "> 0"},
      {R"("repetition_penalty":-1)", "repetition_penalty", "> 0"},
      {R"("repetition_penalty":1e300)", "repetition_penalty", "> 0"},
      {R"("repetition_penalty":[1])", "repetition_penalty", "a number"},
      {R"("logit_bias":[1])", "logit_bias", "an object"},
      {R"("logit_bias":"5")", "logit_bias", "an object"},
      {R"("logit_bias":{"abc":1})", "logit_bias", "\"abc\" is not a token id"},
      {R"("logit_bias":{"":1})", "logit_bias", "\"\" is not a token id"},
      {R"("logit_bias":{"1.5":1})", "logit_bias", "\"1.5\" is not a token id"},
      {R"("logit_bias":{" 12":1})", "logit_bias", "\" 12\" is not a token id"},
      {R"("logit_bias":{"12abc":1})", "logit_bias", "\"12abc\" is not a token id"},
      {R"("logit_bias":{"+3":1})", "logit_bias", "\"+3\" is not a token id"},
      {R"("logit_bias":{"1000":1})", "logit_bias", "\"1000\" is outside the vocabulary [0, 1000)"},
      {R"("logit_bias":{"-1":1})", "logit_bias", "\"-1\" is outside the vocabulary"},
      {R"("logit_bias":{"99999999999999999999999":1})", "logit_bias", "outside the vocabulary"},
      {R"("logit_bias":{"5":"1"})", "logit_bias", "value for \"5\" must be a number, got string"},
      {R"("logit_bias":{"5":null})", "logit_bias", "value for \"5\" must be a number, got null"},
      {R"("logit_bias":{"5":100.5})", "logit_bias", "value for \"5\" must be in [-100, 100]"},
      {R"("logit_bias":{"5":-101})", "logit_bias", "value for \"5\" must be in [-100, 100]"},
      {R"("logit_bias":{"5":1,"05":2})", "logit_bias", "token id 5 twice"},
      {R"("seed":1.5)", "seed", "an integer"},
      {R"("seed":"7")", "seed", "an integer"},
      {R"("top_k":-2)", "top_k", "-1, 0 (off) or positive"},
      {R"("top_k":2.5)", "top_k", "an integer"},
      {R"("min_p":1.5)", "min_p", "[0, 1]"},
      {R"("min_p":-0.1)", "min_p", "[0, 1]"},
  };
  for (const Case& c : cases) {
    const std::string body = std::string(R"({"messages":[{"role":"user","content":"x"}],)") + c.fields + "}";
    for (bool chat : {true, false}) {
      auto r = chat ? Chat(body) : Completion(std::string(R"({"prompt":"x",)") + c.fields + "}");
      ASSERT_FALSE(r.ok()) << c.fields;
      EXPECT_EQ(r.error.http_status, 400) << c.fields;
      EXPECT_EQ(r.error.param, c.param) << c.fields << " -> " << r.error.message;
      EXPECT_NE(r.error.message.find(c.in_message), std::string::npos) << c.fields << " -> " << r.error.message;
    }
  }
  // A long key is quoted in part, cut on a character boundary.
  auto r = Chat(R"({"messages":[{"role":"user","content":"x"}],"logit_bias":{")" + std::string(39, 'a') + "\xc3\xa9" +
                std::string(100, 'b') + R"(":1}})");
  ASSERT_FALSE(r.ok());
  std::string quoted(40, 'a');  // "aaa...a...": the 2-byte character would straddle byte 40
  quoted.front() = '"';
  quoted += "...\"";
  EXPECT_NE(r.error.message.find(quoted), std::string::npos) << r.error.message;
}

TEST(ApiRequest, LogitBiasEntriesAreLimited) {
  RequestLimits limits;
  limits.max_logit_bias = 2;
  auto chat = [&](const std::string& bias) {
    return ParseChatRequest(
        ParseJsonBody(R"({"messages":[{"role":"user","content":"x"}],"logit_bias":)" + bias + "}").value, kVocab, kCtx,
        limits);
  };
  EXPECT_TRUE(chat(R"({"1":1,"2":2})").ok());
  auto many = chat(R"({"1":1,"2":2,"3":3})");
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error.http_status, 400);
  EXPECT_EQ(many.error.param, "logit_bias");
  EXPECT_NE(many.error.message.find("--max-logit-bias"), std::string::npos) << many.error.message;
}

TEST(ApiRequest, NormalisesContentPartsAndToolArguments) {
  auto r = Chat(R"({"messages":[
      {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
      {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
         "function":{"name":"f","arguments":"{\"x\": 1}"}}]},
      {"role":"tool","tool_call_id":"c1","content":"42"}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value.messages[0]["content"], "ab");
  EXPECT_EQ(r.value.messages[1]["tool_calls"][0]["function"]["arguments"]["x"], 1);
}

TEST(ApiRequest, CompletionPromptForms) {
  auto a = Completion(R"({"prompt":"hello"})");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.value.prompt_text, "hello");
  auto b = Completion(R"({"prompt":[1,2,3]})");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b.value.prompt_is_tokens);
  EXPECT_EQ(b.value.prompt_tokens, (std::vector<int32_t>{1, 2, 3}));
  auto c = Completion(R"({"prompt":[[4,5]]})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value.prompt_tokens, (std::vector<int32_t>{4, 5}));
  auto d = Completion(R"({"prompt":["x"]})");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.value.prompt_text, "x");
  auto e = Completion(R"({"prompt":"p","logprobs":2})");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e.value.sampling.top_logprobs, 2);
}

struct BadCase {
  const char* body;
  const char* param;  // expected `param`
};

TEST(ApiRequest, RejectsBadChatBodies) {
  const BadCase cases[] = {
      {R"({"messages":[{"role":"user","content":"x"}],"temperature":"hot"})", "temperature"},
      {R"({"messages":[{"role":"user","content":"x"}],"temperature":-0.1})", "temperature"},
      {R"({"messages":[{"role":"user","content":"x"}],"top_p":0})", "top_p"},
      {R"({"messages":[{"role":"user","content":"x"}],"top_p":1.01})", "top_p"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":-1})", "max_tokens"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":0})", "max_tokens"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":100000000000})", "max_tokens"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_completion_tokens":1.5})", "max_completion_tokens"},
      {R"({"messages":[{"role":"user","content":"x"}],"n":2})", "n"},
      {R"({"messages":[{"role":"user","content":"x"}],"stop":[1]})", "stop"},
      {R"({"messages":[{"role":"user","content":"x"}],"stream":"yes"})", "stream"},
      {R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":2})", "top_logprobs"},
      {R"({"messages":[{"role":"user","content":"x"}],"cache_ttl_s":-5})", "cache_ttl_s"},
      {R"({"messages":[]})", "messages"},
      {R"({"messages":"hi"})", "messages"},
      {R"({})", "messages"},
      {R"({"messages":[{"role":"wizard","content":"x"}]})", "messages[0].role"},
      {R"({"messages":[{"content":"x"}]})", "messages[0].role"},
      {R"({"messages":[{"role":"user","content":5}]})", "messages[0].content"},
      {R"({"messages":[{"role":"user"}]})", "messages[0].content"},
      {R"({"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]})", "tools[0]"},
      {R"({"messages":[{"role":"user","content":"x"}],"model":7})", "model"},
  };
  for (const BadCase& c : cases) {
    auto r = Chat(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error.http_status, 400) << c.body;
    EXPECT_EQ(r.error.param, c.param) << c.body << " -> " << r.error.message;
    EXPECT_FALSE(r.error.message.empty());
  }
}

TEST(ApiRequest, RejectsBadCompletionBodies) {
  const BadCase cases[] = {
      {R"({"prompt":[1, 1000]})", "prompt"},
      {R"({"prompt":[-1]})", "prompt"},
      {R"({"prompt":[1, "a"]})", "prompt"},
      {R"({"prompt":[]})", "prompt"},
      {R"({"prompt":["a","b"]})", "prompt"},
      {R"({"prompt":5})", "prompt"},
      {R"({"prompt":"x","logprobs":true})", "logprobs"},
      {R"({"prompt":"x","logprobs":50})", "logprobs"},
  };
  for (const BadCase& c : cases) {
    auto r = Completion(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error.http_status, 400) << c.body;
    EXPECT_EQ(r.error.param, c.param) << c.body << " -> " << r.error.message;
  }
}

TEST(ApiRequest, BodyMustBeUtf8JsonObject) {
  for (const char* body : {"[1,2]", "\"str\"", "{\"a\":", "", "{\"prompt\":\"\xff\"}"}) {
    ApiResult<json> j = ParseJsonBody(body);
    ASSERT_FALSE(j.ok()) << body;
    EXPECT_EQ(j.error.http_status, 400);
  }
  // Escaped lone surrogates are rejected by the JSON parser too.
  EXPECT_FALSE(ParseJsonBody(R"({"prompt":"\ud800"})").ok());
  EXPECT_TRUE(ParseJsonBody(R"({"prompt":"\u00e9"})").ok());
}

TEST(ApiRequest, FitToContextReportsCounts) {
  auto r = Completion(R"({"prompt":"x","max_tokens":100})");
  ASSERT_TRUE(r.ok());
  ApiRequest a = r.value;
  auto err = FitToContext(&a, 500, kCtx);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->message.find("512"), std::string::npos) << err->message;
  EXPECT_NE(err->message.find("600"), std::string::npos) << err->message;
  err = FitToContext(&a, 600, kCtx);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->message.find("600 tokens"), std::string::npos) << err->message;
  a = Completion(R"({"prompt":"x"})").value;
  EXPECT_FALSE(FitToContext(&a, 12, kCtx).has_value());
  EXPECT_EQ(a.sampling.max_tokens, kCtx - 12);
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

TEST(ApiRequest, DeepNestingIsA400NamingTheLimit) {
  std::string deep = R"({"messages": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  ApiResult<nlohmann::ordered_json> j = ParseJsonBody(deep);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error.http_status, 400);
  EXPECT_NE(j.error.message.find("--max-json-depth"), std::string::npos) << j.error.message;
  EXPECT_TRUE(ParseJsonBody(R"({"a": [[[1]]]})", 4).ok());
  EXPECT_FALSE(ParseJsonBody(R"({"a": [[[1]]]})", 3).ok());
}

TEST(ApiRequest, CountLimitsAre400sNamingTheFlag) {
  RequestLimits limits;
  limits.max_messages = 2;
  limits.max_tools = 1;
  limits.max_stop = 1;
  auto chat = [&](const std::string& body) { return ParseChatRequest(ParseJsonBody(body).value, 1000, 4096, limits); };
  const std::string msg = R"({"role": "user", "content": "hi"})";
  EXPECT_TRUE(chat(R"({"messages": [)" + msg + "," + msg + "]}").ok());
  auto many = chat(R"({"messages": [)" + msg + "," + msg + "," + msg + "]}");
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.error.message.find("--max-messages"), std::string::npos) << many.error.message;
  const std::string tool = R"({"type": "function", "function": {"name": "f"}})";
  auto tools = chat(R"({"messages": [)" + msg + R"(], "tools": [)" + tool + "," + tool + "]}");
  ASSERT_FALSE(tools.ok());
  EXPECT_NE(tools.error.message.find("--max-tools"), std::string::npos) << tools.error.message;
  auto stops = chat(R"({"messages": [)" + msg + R"(], "stop": ["a", "b"]})");
  ASSERT_FALSE(stops.ok());
  EXPECT_NE(stops.error.message.find("--max-stop"), std::string::npos) << stops.error.message;
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

ApiResult<ApiRequest> ChatWithTool(const std::string& extra) {
  return ParseChatRequest(ParseJsonBody(R"({"messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "f"}}])" +
                                        extra + "}")
                              .value,
                          1000, 4096);
}

TEST(ApiRequest, OutputControlsAreHonouredOrRefusedNeverIgnored) {
  EXPECT_TRUE(ChatWithTool(R"(, "response_format": {"type": "text"})").ok());
  auto obj = ChatWithTool(R"(, "response_format": {"type": "json_object"})");
  ASSERT_TRUE(obj.ok());
  EXPECT_EQ(obj.value.response_format, ApiRequest::ResponseFormat::kJsonObject);
  auto schema = ChatWithTool(R"(, "response_format": {"type": "json_schema", "json_schema": {"name": "p-1_x",
      "strict": true, "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}})");
  ASSERT_TRUE(schema.ok()) << schema.error.message;
  EXPECT_EQ(schema.value.response_format, ApiRequest::ResponseFormat::kJsonSchema);
  EXPECT_EQ(schema.value.response_schema_name, "p-1_x");
  EXPECT_EQ(schema.value.response_schema["properties"]["a"]["type"], "string");
  const std::pair<const char*, const char*> bad_formats[] = {
      {R"("json")", "response_format"},
      {R"({})", "response_format"},
      {R"({"type": "yaml"})", "response_format.type"},
      {R"({"type": "json_schema"})", "response_format.json_schema"},
      {R"({"type": "json_schema", "json_schema": {"name": "x"}})", "response_format.json_schema.schema"},
      {R"({"type": "json_schema", "json_schema": {"name": "x", "schema": []}})", "response_format.json_schema.schema"},
      {R"({"type": "json_schema", "json_schema": {"schema": {}}})", "response_format.json_schema.name"},
      {R"({"type": "json_schema", "json_schema": {"name": "a b", "schema": {}}})", "response_format.json_schema.name"},
      {R"({"type": "json_schema", "json_schema": {"name": 3, "schema": {}}})", "response_format.json_schema.name"},
      {R"({"type": "json_schema", "json_schema": {"name": "x", "schema": {}, "strict": "yes"}})",
       "response_format.json_schema.strict"},
  };
  for (const auto& [rf, param] : bad_formats) {
    auto r = ChatWithTool(std::string(R"(, "response_format": )") + rf);
    ASSERT_FALSE(r.ok()) << rf;
    EXPECT_EQ(r.error.http_status, 400);
    EXPECT_EQ(r.error.param, param) << rf;
  }
  auto autochoice = ChatWithTool(R"(, "tool_choice": "auto")");
  ASSERT_TRUE(autochoice.ok());
  EXPECT_FALSE(autochoice.value.tools.is_null());
  auto none = ChatWithTool(R"(, "tool_choice": "none")");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none.value.tools.is_null());  // neither rendered nor parsed
  auto required = ChatWithTool(R"(, "tool_choice": "required")");
  ASSERT_TRUE(required.ok());
  EXPECT_EQ(required.value.tool_choice, ApiRequest::ToolChoice::kRequired);
  auto named = ChatWithTool(R"(, "tool_choice": {"type": "function", "function": {"name": "f"}})");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named.value.tool_choice, ApiRequest::ToolChoice::kNamed);
  EXPECT_EQ(named.value.tool_choice_name, "f");
  for (const char* tc : {R"("any")", R"({"type": "function"})", R"({"type": "tool", "function": {"name": "f"}})",
                         R"({"type": "function", "function": {"name": 3}})", "3"}) {
    auto r = ChatWithTool(std::string(R"(, "tool_choice": )") + tc);
    ASSERT_FALSE(r.ok()) << tc;
    EXPECT_EQ(r.error.param, "tool_choice");
  }
  auto serial = ChatWithTool(R"(, "parallel_tool_calls": false)");
  ASSERT_TRUE(serial.ok());
  EXPECT_FALSE(serial.value.parallel_tool_calls);
  EXPECT_FALSE(ChatWithTool(R"(, "parallel_tool_calls": "no")").ok());
  EXPECT_FALSE(ChatWithTool(R"(, "functions": [])").ok());
  EXPECT_FALSE(ChatWithTool(R"(, "function_call": "auto")").ok());
}

// Issue 23: every key is read, accepted as a documented no-op, or refused by name.
TEST(ApiRequest, UnknownFieldsAreA400NamingThem) {
  const std::string user = R"("messages":[{"role":"user","content":"hi"}])";
  auto r = Chat("{" + user + R"(,"frobnicate":true})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.param, "frobnicate");
  EXPECT_EQ(r.error.code, "unknown_parameter");
  EXPECT_NE(r.error.message.find("unknown field 'frobnicate'"), std::string::npos) << r.error.message;
  auto c = Completion(R"({"prompt":"x","messages":[]})");  // a chat field on completions
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error.param, "messages");
  // null counts as absent, as for every field.
  EXPECT_TRUE(Chat("{" + user + R"(,"frobnicate":null})").ok());
}

TEST(ApiRequest, AgentClientNoOpFieldsKeepWorking) {
  // What opencode and the openai SDK send that needs no action here.
  auto r = Chat(R"({"messages":[{"role":"user","content":"hi"}],"store":false,"prompt_cache_key":"ses_1",
      "reasoning_effort":"high","metadata":{"k":"v"},"service_tier":"auto","safety_identifier":"u1",
      "modalities":["text"]})");
  EXPECT_TRUE(r.ok()) << r.error.message;
  for (const char* bad : {R"("store":true)", R"("store":"no")", R"("reasoning_effort":"max")",
                          R"("modalities":["text","audio"])", R"("metadata":{"k":1})", R"("prompt_cache_key":7)"}) {
    auto b = Chat(std::string(R"({"messages":[{"role":"user","content":"hi"}],)") + bad + "}");
    EXPECT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.error.code, "unsupported_parameter") << bad;
  }
}

TEST(ApiRequest, OtherServersFieldsAreRefusedWithWhatToUse) {
  struct Case {
    const char* field;
    const char* says;
  } cases[] = {{R"("guided_regex":"a+")", "pattern"},
               {R"("grammar":"root ::= \"a\"")", "GBNF"},
               {R"("prediction":{"type":"content","content":"x"})", "not supported"}};
  for (const Case& c : cases) {
    auto r = Chat(std::string(R"({"messages":[{"role":"user","content":"hi"}],)") + c.field + "}");
    ASSERT_FALSE(r.ok()) << c.field;
    EXPECT_EQ(r.error.code, "unsupported_parameter") << c.field;
    EXPECT_NE(r.error.message.find(c.says), std::string::npos) << r.error.message;
  }
  EXPECT_FALSE(Completion(R"({"prompt":"x","grammar":"root ::= \"a\""})").ok());
}

TEST(ApiRequest, MinTokensAndStopTokenIdsReachSampling) {
  auto r = Completion(R"({"prompt":"x","max_tokens":20,"min_tokens":5,"stop_token_ids":[7,9]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value.sampling.min_tokens, 5);
  EXPECT_EQ(r.value.sampling.stop_token_ids, (std::vector<int32_t>{7, 9}));
  for (const char* bad : {R"("min_tokens":-1)", R"("min_tokens":21)", R"("min_tokens":1.5)", R"("stop_token_ids":7)",
                          R"("stop_token_ids":[1000])", R"("stop_token_ids":[-1])", R"("stop_token_ids":["a"])"}) {
    auto b = Completion(std::string(R"({"prompt":"x","max_tokens":20,)") + bad + "}");
    EXPECT_FALSE(b.ok()) << bad;
  }
}

TEST(ApiRequest, ChatTemplateKwargsReachTheTemplate) {
  auto r = Chat(R"({"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":{"enable_thinking":false}})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value.template_kwargs, json::parse(R"({"enable_thinking":false})"));
  EXPECT_FALSE(Chat(R"({"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":[1]})").ok());
  auto own =
      Chat(R"({"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":{"add_generation_prompt":false}})");
  ASSERT_FALSE(own.ok());
  EXPECT_NE(own.error.message.find("add_generation_prompt"), std::string::npos);
}

TEST(ApiRequest, ToolMessagesNeedTheirCallIdAndToolsAnObjectSchema) {
  auto no_id = Chat(R"({"messages":[{"role":"user","content":"x"},{"role":"tool","content":"42"}]})");
  ASSERT_FALSE(no_id.ok());
  EXPECT_EQ(no_id.error.param, "messages[1].tool_call_id");
  EXPECT_FALSE(Chat(R"({"messages":[{"role":"tool","tool_call_id":"","content":"42"}]})").ok());
  // The id must be a call of an earlier assistant message (an id-less call matches anything).
  auto orphan = Chat(R"({"messages":[{"role":"tool","tool_call_id":"c1","content":"42"}]})");
  ASSERT_FALSE(orphan.ok());
  EXPECT_EQ(orphan.error.param, "messages[0].tool_call_id");
  EXPECT_EQ(orphan.error.code, "unknown_tool_call_id");
  const std::string call = R"({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
      "function":{"name":"f","arguments":"{}"}}]})";
  EXPECT_TRUE(Chat(R"({"messages":[{"role":"user","content":"x"},)" + call +
                   R"(,{"role":"tool","tool_call_id":"c1","content":"42"}]})")
                  .ok());
  EXPECT_FALSE(Chat(R"({"messages":[{"role":"user","content":"x"},)" + call +
                    R"(,{"role":"tool","tool_call_id":"c2","content":"42"}]})")
                   .ok());
  EXPECT_TRUE(Chat(R"({"messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":)"
                   R"([{"type":"function","function":{"name":"f"}}]},)"
                   R"({"role":"tool","tool_call_id":"c9","content":"1"}]})")
                  .ok());
  auto number = Chat(R"({"messages":[{"role":"user","content":"x"}],
      "tools":[{"type":"function","function":{"name":"f","parameters":7}}]})");
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.error.param, "tools[0].function.parameters");
  EXPECT_TRUE(Chat(R"({"messages":[{"role":"user","content":"x"}],
      "tools":[{"type":"function","function":{"name":"f"}}]})")
                  .ok());
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

// Hosted tool declarations in chat tools are skipped, not offered; forcing one is a 400.
TEST(ApiRequest, ChatHostedToolsAreSkipped) {
  auto r = testing::ParseChatBody(R"({"messages": [{"role": "user", "content": "x"}], "tools": [
      {"type": "web_search"}, {"type": "function", "function": {"name": "f"}}, {"type": "custom", "custom": {"name": "g"}}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value.skipped_tools, (std::vector<std::string>{"web_search", "custom"}));
  ASSERT_EQ(r.value.tools.size(), 1u);
  EXPECT_EQ(r.value.tools[0]["function"]["name"], "f");
  auto only =
      testing::ParseChatBody(R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "web_search"}]})");
  ASSERT_TRUE(only.ok()) << only.error.message;
  EXPECT_TRUE(only.value.tools.is_null());
  auto forced = testing::ParseChatBody(R"({"messages": [{"role": "user", "content": "x"}],
      "tools": [{"type": "web_search"}], "tool_choice": {"type": "web_search"}})");
  ASSERT_FALSE(forced.ok());
  EXPECT_EQ(forced.error.param, "tool_choice");
}

}  // namespace
}  // namespace pg
