// Tool calls through the HTTP server for every format, on the fake engine
// (random-weight models never write a tool call, and the fake engine emits
// exact text, one token at a time, so markers arrive split over tokens).
// The streamed deltas, reassembled as an OpenAI client does, must equal the
// non-streamed message; the name comes once per call, then argument
// fragments; finish_reason "tool_calls". Also POST /apply-template's error
// and success paths on the same server.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <map>

#include "server/core/tool_call_chunks.h"
#include "testing/test_server_harness.h"

namespace pg {
namespace {

using json = nlohmann::json;
using namespace pg::testing;

// A minimal template per format: enough markers for DetectToolCallFormat.
struct FormatCase {
  const char* name;
  const char* chat_template;
  const char* reply;
};

const FormatCase kCases[] = {
    {"hermes",
     "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
     "{% if tools %}<tool_call>{% endif %}<|im_start|>assistant\n",
     "Checking both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n"
     "</tool_call>\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>"},
    {"glm45",
     "[gMASK]<sop>{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}{% endfor %}"
     "{# <tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call> #}<|assistant|>",
     "Checking both.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
     "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\n<tool_call>read_file\n"
     "<arg_key>path</arg_key>\n<arg_value>a.txt</arg_value>\n</tool_call>"},
    {"deepseek_v3",
     "{% for m in messages %}<｜User｜>{{ m.content }}{% endfor %}"
     "{# <｜tool▁calls▁begin｜> ```json #}<｜Assistant｜>",
     "Checking both.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
     "{\"city\": \"Paris\", \"days\": "
     "3}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n"
     "```json\n{\"path\": \"a.txt\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
    {"deepseek_v31",
     "{% for m in messages %}<｜User｜>{{ m.content }}{% endfor %}"
     "{# <｜tool▁calls▁begin｜> #}<｜Assistant｜>",
     "Checking both.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\", "
     "\"days\": 3}<｜tool▁call▁end｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\": \"a.txt\"}"
     "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
};

const char* kTools = R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
  {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object",
    "properties": {"path": {"type": "string"}}}}}])";

std::string ChatBody(bool stream, bool parallel = true) {
  json body = {{"messages", {{{"role", "user"}, {"content", "Weather in Paris, and read a.txt"}}}},
               {"tools", json::parse(kTools)},
               {"stream", stream}};
  if (!parallel) body["parallel_tool_calls"] = false;
  return body.dump();
}

// An OpenAI client's reassembly of a streamed chat: content, calls, finish.
struct Reassembled {
  std::string content, finish;
  std::map<int, json> calls;  // index -> {"id", "name", "arguments", "deltas"}
};

Reassembled Reassemble(const std::string& sse) {
  Reassembled r;
  for (const std::string& e : SseData(sse)) {
    if (e == "[DONE]") continue;
    json c = json::parse(e);
    const json& ch = c["choices"][0];
    const json& d = ch["delta"];
    if (d.contains("content") && d["content"].is_string()) r.content += d["content"].get<std::string>();
    for (const json& tc : d.value("tool_calls", json::array())) {
      json& call = r.calls[tc["index"].get<int>()];
      if (call.is_null()) {  // the first delta of a call: id, type, name
        EXPECT_TRUE(tc.contains("id") && tc["type"] == "function" && tc["function"].contains("name")) << tc.dump();
        call = {{"id", tc["id"]}, {"name", tc["function"]["name"]}, {"arguments", ""}, {"deltas", 0}};
      } else {
        EXPECT_FALSE(tc.contains("id") || tc["function"].contains("name")) << "name sent twice: " << tc.dump();
      }
      call["arguments"] = call["arguments"].get<std::string>() + tc["function"]["arguments"].get<std::string>();
      call["deltas"] = call["deltas"].get<int>() + 1;
    }
    if (!ch["finish_reason"].is_null()) r.finish = ch["finish_reason"];
  }
  return r;
}

// A test server whose fake model has fc's template and reply.
std::unique_ptr<TestServer> StartFormatServer(const FormatCase& fc) {
  FakeServiceOptions fake;
  fake.chat_template = fc.chat_template;
  fake.reply = fc.reply;
  return StartTestServer(fake);
}

TEST(ToolCallStreaming, EveryFormatStreamsWhatTheFullResponseHolds) {
  for (const FormatCase& fc : kCases) {
    SCOPED_TRACE(fc.name);
    auto t = StartFormatServer(fc);
    ASSERT_TRUE(t);
    auto full = t->Client().Post("/v1/chat/completions", ChatBody(false), "application/json");
    ASSERT_TRUE(full);
    ASSERT_EQ(full->status, 200) << full->body;
    json j = json::parse(full->body);
    const json& msg = j["choices"][0]["message"];
    EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
    EXPECT_EQ(msg["content"], "Checking both.");
    ASSERT_EQ(msg["tool_calls"].size(), 2u) << j.dump();
    EXPECT_EQ(msg["tool_calls"][0]["function"]["name"], "get_weather");
    EXPECT_EQ(json::parse(msg["tool_calls"][0]["function"]["arguments"].get<std::string>()),
              json({{"city", "Paris"}, {"days", 3}}));
    EXPECT_EQ(msg["tool_calls"][1]["function"]["name"], "read_file");
    EXPECT_EQ(json::parse(msg["tool_calls"][1]["function"]["arguments"].get<std::string>()), json({{"path", "a.txt"}}));

    auto res = t->Client().Post("/v1/chat/completions", ChatBody(true), "application/json");
    ASSERT_TRUE(res);
    Reassembled r = Reassemble(res->body);
    EXPECT_EQ(r.finish, "tool_calls");
    EXPECT_EQ(r.content, msg["content"]);
    ASSERT_EQ(r.calls.size(), 2u) << res->body;
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(r.calls[i]["name"], msg["tool_calls"][i]["function"]["name"]);
      EXPECT_EQ(r.calls[i]["arguments"], msg["tool_calls"][i]["function"]["arguments"]);  // the same text
      EXPECT_EQ(r.calls[i]["id"].get<std::string>().rfind("call_", 0), 0u);
    }
    EXPECT_NE(r.calls[0]["id"], r.calls[1]["id"]);

    // parallel_tool_calls false: the first call only, both ways.
    res = t->Client().Post("/v1/chat/completions", ChatBody(true, false), "application/json");
    ASSERT_TRUE(res);
    r = Reassemble(res->body);
    EXPECT_EQ(r.calls.size(), 1u) << res->body;
    EXPECT_EQ(r.finish, "tool_calls");
  }
}

// The official OpenAI Node SDK's stream helper assembles our deltas into the
// same message as the non-streamed answer (tests/node/tool_stream_test.mjs).
// Skipped when node or the SDK (npm ci in tests/node) is missing.
TEST(ToolCallStreaming, OpenAiSdkAssemblesTheStreamedCalls) {
  const std::string dir = std::string(PROSGROW_SOURCE_DIR) + "/tests/node";
  if (access((dir + "/node_modules/openai/package.json").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "run `npm ci` in " << dir << " first";
  }
  if (system("node --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "node not installed";
  for (const FormatCase& fc : kCases) {
    SCOPED_TRACE(fc.name);
    auto t = StartFormatServer(fc);
    ASSERT_TRUE(t);
    std::string cmd = "cd '" + dir + "' && PROSGROW_BASE_URL=http://127.0.0.1:" + std::to_string(t->port) +
                      "/v1 node tool_stream_test.mjs 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string output;
    char buf[512];
    while (fgets(buf, sizeof(buf), p)) output += buf;
    EXPECT_EQ(pclose(p), 0) << output;
    EXPECT_NE(output.find("tool stream test: ok"), std::string::npos) << output;
  }
}

// A vocabulary holding the markers as control tokens (as GGUF conversions of
// some models do): decoding drops control tokens, so the server must render
// these for the parser to see the call.
TEST(ToolCallStreaming, MarkersThatAreControlTokensAreRendered) {
  std::vector<std::string> specials = {"<|endoftext|>", "<tool_call>", "</tool_call>", "<|im_end|>"};
  auto trained = TrainByteLevelBpe("the weather in paris is sunny. get_weather city name arguments", 300, specials);
  ASSERT_TRUE(trained.ok()) << trained.status().ToString();
  VocabData vocab = ToVocabData(*trained);
  vocab.eos_id = static_cast<int32_t>(vocab.tokens.size()) - 1;  // <|im_end|>
  auto tok = Tokenizer::FromVocab(vocab);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  std::optional<int32_t> open = (*tok)->FindToken("<tool_call>");
  ASSERT_TRUE(open && (*tok)->IsControl(*open));  // the case under test

  FakeServiceOptions fake;
  fake.chat_template = kCases[0].chat_template;
  fake.reply = "Sure.<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>";
  auto t = std::make_unique<TestServer>();
  t->service = std::make_unique<FakeInferenceService>(std::move(tok).value(), fake);
  ServerOptions opts;
  opts.host = "127.0.0.1";
  opts.port = 0;
  t->server = std::make_unique<HttpServer>(opts, t->service.get());
  ASSERT_TRUE(t->server->Start().ok());
  t->port = t->server->port();

  auto full = t->Client().Post("/v1/chat/completions", ChatBody(false), "application/json");
  ASSERT_TRUE(full);
  json j = json::parse(full->body);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls") << full->body;
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Sure.");
  ASSERT_EQ(j["choices"][0]["message"]["tool_calls"].size(), 1u) << full->body;
  auto res = t->Client().Post("/v1/chat/completions", ChatBody(true), "application/json");
  ASSERT_TRUE(res);
  Reassembled r = Reassemble(res->body);
  ASSERT_EQ(r.calls.size(), 1u) << res->body;
  EXPECT_EQ(r.calls[0]["arguments"], "{\"city\":\"Paris\"}");
  EXPECT_EQ(r.content, "Sure.");

  // Without tools the markers stay unrendered control tokens (as before).
  auto plain =
      t->Client().Post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"Hi"}]})", "application/json");
  ASSERT_TRUE(plain);
  EXPECT_EQ(json::parse(plain->body)["choices"][0]["message"]["content"],
            "Sure.{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}");
}

TEST(ToolCallChunksTest, NameOnceThenArgumentFragmentsInOrder) {
  GenerationOutput out(true, ToolCallFormat::kHermes, nullptr, true);
  std::vector<json> all;
  for (const char* piece :
       {"Hi <tool_", "call>{\"name\": \"f\", \"arguments\": {\"a\":", " [1, 2", "]}}</tool_call>", " bye"}) {
    for (json& d : ToolCallDeltas(out.Push(piece), out.calls(), false)) all.push_back(std::move(d));
  }
  for (json& d : ToolCallDeltas(out.Finish(), out.calls(), true)) all.push_back(std::move(d));
  ASSERT_EQ(all.size(), 6u) << json(all).dump();
  EXPECT_EQ(all[0], json({{"content", "Hi"}}));
  EXPECT_EQ(all[1]["tool_calls"][0]["function"], json({{"name", "f"}, {"arguments", ""}}));
  EXPECT_EQ(all[1]["tool_calls"][0]["id"], out.calls()[0].id);
  EXPECT_EQ(all[2]["tool_calls"][0], json({{"index", 0}, {"function", {{"arguments", "{\"a\":"}}}}));
  EXPECT_EQ(all[3]["tool_calls"][0]["function"]["arguments"], "[1,2");
  EXPECT_EQ(all[4]["tool_calls"][0]["function"]["arguments"], "]}");
  EXPECT_EQ(all[5], json({{"content", "  bye"}}));  // the space held before the call, then " bye"
}

TEST(ApplyTemplate, RendersAndRefusesLikeChat) {
  FakeServiceOptions fake;
  ServerOptions opts;
  opts.api_key = "sk-t";
  auto t = StartTestServer(fake, opts);
  ASSERT_TRUE(t);
  httplib::Headers auth = {{"Authorization", "Bearer sk-t"}};
  auto post = [&](const std::string& body, const httplib::Headers& h) {
    return t->Client().Post("/apply-template", h, body, "application/json");
  };
  auto res = post(R"({"messages":[{"role":"user","content":"Hi"}]})", {});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = post(R"({"messages":[{"role":"user","content":"Hi"}]})", auth);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  // The ChatML fallback template (the fake model has none).
  EXPECT_EQ(json::parse(res->body), json({{"prompt", "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"}}));
  res = post(R"({"messages":[{"role":"user","content":"Hi"}],"add_generation_prompt":false})", auth);
  ASSERT_TRUE(res);
  EXPECT_EQ(json::parse(res->body)["prompt"], "<|im_start|>user\nHi<|im_end|>\n");
  res = post(R"({"messages":[{"role":"user","content":"Hi"}],"tools":)" + std::string(kTools) + "}", auth);
  ASSERT_TRUE(res);
  EXPECT_NE(json::parse(res->body)["prompt"].get<std::string>().find("get_weather"), std::string::npos) << res->body;

  const std::pair<const char*, const char*> bad[] = {
      {"{", "JSON"},
      {R"({"messages":[]})", "messages"},
      {R"({"messages":[{"role":"robot","content":"x"}]})", "role"},
      {R"({"messages":[{"role":"user","content":"x"}],"add_generation_prompt":"yes"})", "add_generation_prompt"},
      {R"({"messages":[{"role":"user","content":"x"}],"tools":{}})", "tools"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", "messages[0].content"},
  };
  for (const auto& [body, part] : bad) {
    res = post(body, auth);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << body << " -> " << res->body;
    json e = json::parse(res->body, nullptr, false);
    ASSERT_TRUE(e.is_object() && e.contains("error")) << res->body;
    EXPECT_EQ(e["error"]["type"], "invalid_request_error");
    EXPECT_NE(e["error"]["message"].get<std::string>().find(part), std::string::npos) << res->body;
  }
  res = t->Client().Get("/apply-template", auth);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
}

}  // namespace
}  // namespace pg
