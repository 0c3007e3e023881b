// Tool calls in every format the templates use, on both APIs, against a real
// `prosgrow serve` (issue 21 item 5, issue 24 item 4). Random weights never
// call a tool on their own, so each request forces one (tool_choice named:
// constrained decoding writes the call in the template's format, as
// src/constrain/output_grammar.h shows). One tiny model per format, made by
// `make-model --chat-template` with a minimal template carrying that
// format's markers (the builtin default template is Hermes).
//
//   - A streamed /v1/messages answer arrives as tool_use blocks (name and
//     input as the OpenAI message has them), with no markup as text: the
//     DeepSeek-V3 case is issue 21's "done when".
//   - Cut by max_tokens: a binary search finds the smallest max_tokens that
//     leaves the whole call; every answer on the way, and the one a token
//     short of it, agrees: a call cut inside its arguments ends with
//     finish_reason "length" / stop_reason "max_tokens" and its arguments as
//     far as they got (a proper prefix of the whole call's, the same streamed
//     and not, on both APIs); a call whose arguments closed is a call.
#include <sstream>

#include "serve_real_fixture.h"

namespace pg::serve_real {
namespace {

struct FormatCase {
  const char* name;
  const char* chat_template;  // nullptr = the builtin default (Hermes)
};

const FormatCase kFormats[] = {
    {"hermes", nullptr},
    {"llama3_json",
     "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}"
     "<|eot_id|>{% endfor %}<|start_header_id|>assistant<|end_header_id|>\n\n"},
    {"glm45",
     "[gMASK]<sop>{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}{% endfor %}"
     "{# <tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call> #}<|assistant|>"},
    {"deepseek_v3",
     "{% for m in messages %}<｜User｜>{{ m.content }}{% endfor %}"
     "{# <｜tool▁calls▁begin｜> ```json #}<｜Assistant｜>"},
    {"deepseek_v31",
     "{% for m in messages %}<｜User｜>{{ m.content }}{% endfor %}"
     "{# <｜tool▁calls▁begin｜> #}<｜Assistant｜>"},
};

const json kSchema = json::parse(R"({"type": "object",
    "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]},
                   "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"], "additionalProperties": false})");

json OpenAiBody(int max_tokens, bool stream) {
  return {{"messages", {{{"role", "user"}, {"content", "Weather in Paris?"}}}},
          {"tools", {{{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", kSchema}}}}}},
          {"tool_choice", {{"type", "function"}, {"function", {{"name", "get_weather"}}}}},
          {"parallel_tool_calls", false},
          {"temperature", 0},
          {"max_tokens", max_tokens},
          {"stream", stream}};
}

json AnthropicBody(int max_tokens, bool stream) {
  return {{"model", "tiny"},
          {"messages", {{{"role", "user"}, {"content", "Weather in Paris?"}}}},
          {"tools", {{{"name", "get_weather"}, {"input_schema", kSchema}}}},
          {"tool_choice", {{"type", "tool"}, {"name", "get_weather"}, {"disable_parallel_tool_use", true}}},
          {"temperature", 0},
          {"max_tokens", max_tokens},
          {"stream", stream}};
}

// An OpenAI client's reading of a streamed chat with one call.
struct OpenAiStream {
  std::string content, finish, name, arguments;
};
OpenAiStream ReadOpenAiStream(const std::string& sse) {
  OpenAiStream r;
  for (const std::string& e : SseData(sse)) {
    if (e == "[DONE]") continue;
    const json c = json::parse(e);
    if (c["choices"].empty()) continue;
    const json& ch = c["choices"][0];
    const json& d = ch["delta"];
    if (d.contains("content") && d["content"].is_string()) r.content += d["content"].get<std::string>();
    for (const json& tc : d.value("tool_calls", json::array())) {
      if (tc["function"].contains("name")) r.name = tc["function"]["name"];
      r.arguments += tc["function"].value("arguments", "");
    }
    if (!ch["finish_reason"].is_null()) r.finish = ch["finish_reason"];
  }
  return r;
}

// An Anthropic client's reading of a streamed message.
struct AnthropicStream {
  std::string text, stop_reason, tool_name, partial_json;
  int tool_blocks = 0;
};
AnthropicStream ReadAnthropicStream(const std::string& sse) {
  AnthropicStream r;
  std::istringstream in(sse);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("data: ", 0) != 0) continue;  // "event: NAME" lines precede each data line
    const json d = json::parse(line.substr(6));
    if (d["type"] == "content_block_start" && d["content_block"]["type"] == "tool_use") {
      ++r.tool_blocks;
      r.tool_name = d["content_block"]["name"];
    } else if (d["type"] == "content_block_delta" && d["delta"]["type"] == "text_delta") {
      r.text += d["delta"]["text"].get<std::string>();
    } else if (d["type"] == "content_block_delta" && d["delta"]["type"] == "input_json_delta") {
      r.partial_json += d["delta"]["partial_json"].get<std::string>();
    } else if (d["type"] == "message_delta") {
      r.stop_reason = d["delta"]["stop_reason"];
    }
  }
  return r;
}

std::string PostRaw(const ServeProcess& s, const std::string& path, const json& body) {
  auto res = s.Client()->Post(path.c_str(), body.dump(), "application/json");
  EXPECT_TRUE(res && res->status == 200) << path << " -> " << (res ? res->body : "no answer");
  return res ? res->body : "";
}

// The whole forced call: a tool_use block on a streamed /v1/messages.
void ExpectWholeCall(const ServeProcess& s, const json& message) {
  const json& call = message["tool_calls"][0]["function"];
  const json args = json::parse(call["arguments"].get<std::string>());
  AnthropicStream a = ReadAnthropicStream(PostRaw(s, "/v1/messages", AnthropicBody(200, true)));
  EXPECT_EQ(a.stop_reason, "tool_use");
  EXPECT_EQ(a.tool_blocks, 1);
  EXPECT_EQ(a.tool_name, "get_weather");
  EXPECT_EQ(json::parse(a.partial_json, nullptr, false), args) << a.partial_json;
  EXPECT_EQ(a.text, message["content"].is_string() ? message["content"].get<std::string>() : "");  // no markup as text
  json whole = json::parse(PostRaw(s, "/v1/messages", AnthropicBody(200, false)));
  EXPECT_EQ(whole["stop_reason"], "tool_use") << whole.dump();
  EXPECT_EQ(whole["content"].back()["input"], args) << whole.dump();
}

// A call cut at `max_tokens` inside its arguments, streamed and not, on both APIs.
void ExpectCutCall(const ServeProcess& s, int max_tokens, const std::string& partial) {
  SCOPED_TRACE("max_tokens " + std::to_string(max_tokens));
  OpenAiStream o = ReadOpenAiStream(PostRaw(s, "/v1/chat/completions", OpenAiBody(max_tokens, true)));
  EXPECT_EQ(o.finish, "length");
  EXPECT_EQ(o.name, "get_weather");
  EXPECT_EQ(o.arguments, partial);
  AnthropicStream a = ReadAnthropicStream(PostRaw(s, "/v1/messages", AnthropicBody(max_tokens, true)));
  EXPECT_EQ(a.stop_reason, "max_tokens");
  EXPECT_EQ(a.tool_name, "get_weather");
  EXPECT_EQ(a.partial_json, partial);
  json m = json::parse(PostRaw(s, "/v1/messages", AnthropicBody(max_tokens, false)));
  EXPECT_EQ(m["stop_reason"], "max_tokens") << m.dump();
  const json& block = m["content"].back();
  EXPECT_EQ(block["type"], "tool_use") << m.dump();
  ASSERT_TRUE(block["input"].is_object()) << m.dump();  // the arguments so far, closed into an object
  for (const auto& item : block["input"].items()) {
    EXPECT_NE(partial.find("\"" + item.key() + "\""), std::string::npos) << item.key() << " not in " << partial;
  }
}

TEST_F(ServeReal, ToolCallsInEveryFormatOnBothApis) {
  for (const FormatCase& fc : kFormats) {
    SCOPED_TRACE(fc.name);
    const std::string model = (*dir_ / (std::string("tools-") + fc.name + ".gguf")).string();
    std::string extra;
    if (fc.chat_template) {
      const std::string tmpl = model + ".jinja";
      std::ofstream(tmpl) << fc.chat_template;
      extra = " --chat-template '" + tmpl + "'";
    }
    int rc = 0;
    std::string out = RunShell(std::string("'") + PROSGROW_BINARY + "' make-model --shape tiny --vocab builtin " +
                                   "--type q8_0 --seed 3 --out '" + model + "'" + extra + " 2>&1",
                               &rc);
    ASSERT_EQ(rc, 0) << out;
    auto srv = ServeProcess::Start(PROSGROW_BINARY, model,
                                   {"--threads", "2", "--no-prefix-cache", "--served-model-name", "tiny"},
                                   model + ".serve.log");
    ASSERT_TRUE(srv.ok()) << srv.status().ToString();
    const ServeProcess& s = **srv;

    // The whole call, and how many tokens it takes.
    json probe = json::parse(PostRaw(s, "/v1/chat/completions", OpenAiBody(200, false)));
    ASSERT_EQ(probe["choices"][0]["finish_reason"], "tool_calls") << probe.dump();
    const json& message = probe["choices"][0]["message"];
    ASSERT_EQ(message["tool_calls"].size(), 1u) << probe.dump();
    const std::string full = message["tool_calls"][0]["function"]["arguments"];
    const int n = probe["usage"]["completion_tokens"];
    EXPECT_NE(s.Log().find(std::string("tool-call format: ") + fc.name), std::string::npos) << s.Log();
    ExpectWholeCall(s, message);

    // The smallest max_tokens that leaves the whole call (binary search; the
    // answer at every max_tokens tried must be consistent with it): one
    // token less cuts the call inside its arguments.
    int lo = 0, hi = n;  // the call is not whole at lo, whole at hi
    int cut_at = -1;
    std::string cut_partial;
    while (hi - lo > 1) {
      const int m = (lo + hi) / 2;
      json r = json::parse(PostRaw(s, "/v1/chat/completions", OpenAiBody(m, false)));
      const json& ch = r["choices"][0];
      SCOPED_TRACE("max_tokens " + std::to_string(m) + ": " + r.dump());
      if (ch["finish_reason"] == "tool_calls") {
        EXPECT_EQ(ch["message"]["tool_calls"][0]["function"]["arguments"], full);
        hi = m;
        continue;
      }
      EXPECT_EQ(ch["finish_reason"], "length");
      lo = m;
      if (!ch["message"].contains("tool_calls")) continue;  // stopped before the call started
      const std::string args = ch["message"]["tool_calls"][0]["function"]["arguments"];
      EXPECT_NE(args, full);
      EXPECT_EQ(full.compare(0, args.size(), args), 0) << args << " is not a prefix of " << full;
      cut_at = m;
      cut_partial = args;
    }
    if (cut_at != hi - 1) {  // the search did not try one token short of the whole call
      json r = json::parse(PostRaw(s, "/v1/chat/completions", OpenAiBody(hi - 1, false)));
      const json& ch = r["choices"][0];
      EXPECT_EQ(ch["finish_reason"], "length") << r.dump();
      ASSERT_TRUE(ch["message"].contains("tool_calls")) << "max_tokens " << hi - 1 << ": " << r.dump();
      cut_at = hi - 1;
      cut_partial = ch["message"]["tool_calls"][0]["function"]["arguments"];
      EXPECT_NE(cut_partial, full);
      EXPECT_EQ(full.compare(0, cut_partial.size(), cut_partial), 0) << cut_partial << " vs " << full;
    }
    ASSERT_GT(cut_at, 0);
    ExpectCutCall(s, cut_at, cut_partial);
    EXPECT_EQ((*srv)->Stop(), 0) << s.Log();
  }
}

}  // namespace
}  // namespace pg::serve_real
