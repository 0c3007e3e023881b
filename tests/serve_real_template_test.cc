// POST /apply-template on a real `prosgrow serve` with the fixture models
// (../shared; skipped without it): the prompt equals the truth rendering
// of /work/shared/fixtures/templates (Python Jinja2, as HF
// apply_chat_template) for the model's own template, and it is the text the
// server tokenizes for the same chat request (the chat's usage.prompt_tokens
// equals a completion's over the returned prompt). Also a greedy chat with
// tools streamed and not streamed: the same content and finish (the random
// weights write no call; their text still goes through the format's parser).
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/http_test_util.h"
#include "testing/serve_process.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;  // key order matters: tojson keeps it
using testing::ServeProcess;

struct ModelCase {
  const char* model;      // fixtures/models/
  const char* template_;  // fixtures/templates/<name>.expected.json
};

const ModelCase kModels[] = {{"tiny-glm4moe-spm.gguf", "GLM-4.6"}, {"tiny-qwen3-spm.gguf", "Qwen-Qwen3-0.6B"}};

std::string Fixture(const std::string& rel) { return std::string(PROSGROW_SHARED_DIR) + "/fixtures/" + rel; }

json Post(const ServeProcess& s, const std::string& path, const json& body, int* status) {
  auto res = s.Client()->Post(path.c_str(), body.dump(), "application/json");
  *status = res ? res->status : -1;
  return res ? json::parse(res->body, nullptr, false) : json();
}

std::unique_ptr<ServeProcess> Serve(const std::string& model, const std::string& name) {
  fs::path log = fs::temp_directory_path() / ("pg_apply_template_" + std::to_string(::getpid()) + "_" + name + ".log");
  auto s = ServeProcess::Start(PROSGROW_BINARY, model, {"--threads", "2", "--ctx-size", "2048", "--no-prefix-cache"},
                               log.string());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

TEST(ServeRealApplyTemplate, MatchesTruthAndWhatChatTokenizes) {
  for (const ModelCase& mc : kModels) {
    SCOPED_TRACE(mc.model);
    const std::string model = Fixture(std::string("models/") + mc.model);
    std::ifstream truth_file(Fixture(std::string("templates/") + mc.template_ + ".expected.json"));
    if (!fs::exists(model) || !truth_file) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
    json truth = json::parse(truth_file);
    auto srv = Serve(model, mc.template_);
    ASSERT_TRUE(srv);
    for (const json& c : truth["cases"]) {
      SCOPED_TRACE(c["name"].get<std::string>());
      const json& in = c["inputs"];
      json body = {{"messages", in["messages"]}, {"add_generation_prompt", in["add_generation_prompt"]}};
      if (!in["tools"].is_null()) body["tools"] = in["tools"];
      int status = 0;
      json got = Post(*srv, "/apply-template", body, &status);
      if (c.contains("expected_error")) {
        EXPECT_EQ(status, 400) << got.dump();
        continue;
      }
      ASSERT_EQ(status, 200) << got.dump();
      EXPECT_EQ(got["prompt"], c["expected"]);

      // The server tokenizes exactly this text for the chat request.
      json chat = body;
      chat.erase("add_generation_prompt");
      chat["max_tokens"] = 1;
      json chat_res = Post(*srv, "/v1/chat/completions", chat, &status);
      ASSERT_EQ(status, 200) << chat_res.dump();
      json comp_res = Post(*srv, "/v1/completions", {{"prompt", got["prompt"]}, {"max_tokens", 1}}, &status);
      ASSERT_EQ(status, 200) << comp_res.dump();
      EXPECT_EQ(chat_res["usage"]["prompt_tokens"], comp_res["usage"]["prompt_tokens"]);
    }
    // A template error or a bad body is a 400, never a 500.
    int status = 0;
    json err = Post(*srv, "/apply-template", {{"messages", json::array({{{"role", "user"}}})}}, &status);
    EXPECT_EQ(status, 400) << err.dump();
    EXPECT_TRUE(srv->Alive());
    EXPECT_EQ(srv->Stop(), 0) << srv->Log();
  }
}

// OpenAI's reassembly of a streamed chat: content and the finish reason.
std::pair<std::string, std::string> StreamedContent(const std::string& sse) {
  std::string content, finish;
  for (const std::string& e : testing::SseData(sse)) {
    if (e == "[DONE]") continue;
    json c = json::parse(e);
    const json& ch = c["choices"][0];
    if (ch["delta"].contains("content") && ch["delta"]["content"].is_string()) content += ch["delta"]["content"];
    if (!ch["finish_reason"].is_null()) finish = ch["finish_reason"];
  }
  return {content, finish};
}

TEST(ServeRealApplyTemplate, ToolsStreamedEqualsNotStreamed) {
  for (const ModelCase& mc : kModels) {  // the glm45 and hermes formats
    SCOPED_TRACE(mc.model);
    const std::string model = Fixture(std::string("models/") + mc.model);
    if (!fs::exists(model)) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
    auto srv = Serve(model, std::string("stream-") + mc.template_);
    ASSERT_TRUE(srv);
    json body = {{"messages", {{{"role", "user"}, {"content", "What is the weather in Paris?"}}}},
                 {"tools", json::parse(R"([{"type": "function", "function": {"name": "get_weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])")},
                 {"temperature", 0},
                 {"max_tokens", 24}};
    int status = 0;
    json full = Post(*srv, "/v1/chat/completions", body, &status);
    ASSERT_EQ(status, 200) << full.dump();
    body["stream"] = true;
    auto res = srv->Client()->Post("/v1/chat/completions", body.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    auto [content, finish] = StreamedContent(res->body);
    const json& msg = full["choices"][0]["message"];
    EXPECT_EQ(content, msg["content"].is_string() ? msg["content"].get<std::string>() : "");
    EXPECT_EQ(finish, full["choices"][0]["finish_reason"]);
    EXPECT_FALSE(content.empty()) << "the comparison needs some generated text: " << full.dump();
    EXPECT_EQ(srv->Stop(), 0) << srv->Log();
  }
}

// Issue 23: chat_template_kwargs reach the template. Qwen3's template writes
// an empty think block when enable_thinking is false; the same kwargs reach
// the prompt a chat request generates from.
TEST(ServeRealApplyTemplate, ChatTemplateKwargsReachTheTemplate) {
  const std::string model = Fixture("models/tiny-qwen3-spm.gguf");
  if (!fs::exists(model)) GTEST_SKIP() << "needs ../shared/fixtures/models/tiny-qwen3-spm.gguf (absent)";
  auto srv = Serve(model, "kwargs");
  ASSERT_TRUE(srv);
  const json messages = {{{"role", "user"}, {"content", "Hi"}}};
  int status = 0;
  const json plain = Post(*srv, "/apply-template", {{"messages", messages}}, &status);
  ASSERT_EQ(status, 200) << plain.dump();
  const json off = Post(*srv, "/apply-template",
                        {{"messages", messages}, {"chat_template_kwargs", {{"enable_thinking", false}}}}, &status);
  ASSERT_EQ(status, 200) << off.dump();
  const std::string think = "<think>\n\n</think>";
  EXPECT_EQ(plain["prompt"].get<std::string>().find(think), std::string::npos) << plain["prompt"];
  EXPECT_NE(off["prompt"].get<std::string>().find(think), std::string::npos) << off["prompt"];
  auto prompt_tokens = [&](const json& kwargs) {
    json body = {{"messages", messages}, {"max_tokens", 1}, {"temperature", 0}};
    if (!kwargs.is_null()) body["chat_template_kwargs"] = kwargs;
    const json r = Post(*srv, "/v1/chat/completions", body, &status);
    EXPECT_EQ(status, 200) << r.dump();
    return r["usage"]["prompt_tokens"].get<int64_t>();
  };
  EXPECT_GT(prompt_tokens({{"enable_thinking", false}}), prompt_tokens(nullptr));
}

}  // namespace
}  // namespace pg
