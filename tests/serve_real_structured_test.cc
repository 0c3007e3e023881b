// Structured outputs and enforced tool calls on the real engine (`prosgrow
// serve` on the tiny random-weight model): a streamed json_schema answer
// assembles into a valid value, llama.cpp's and vLLM's schema fields are the
// same constraint, and tests/node/openai_structured_test.mjs
// drives the server with the official OpenAI SDK, validating every output
// with ajv (skipped without node or tests/node/node_modules).
#include <unistd.h>

#include "serve_real_fixture.h"

namespace pg::serve_real {
namespace {

TEST_F(ServeReal, StreamedJsonSchemaOutputIsOneValidValue) {
  auto s = Serve({"--threads", "2"}, "structured-stream");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  const std::string body = R"({"messages": [{"role": "user", "content": "A point."}], "stream": true,
      "temperature": 1.0, "seed": 5, "max_tokens": 200,
      "response_format": {"type": "json_schema", "json_schema": {"name": "point", "schema": {"type": "object",
        "properties": {"x": {"type": "integer"}, "tag": {"type": "string", "maxLength": 5},
                       "ok": {"type": "boolean"}},
        "required": ["x", "tag", "ok"], "additionalProperties": false}}}})";
  for (int i = 0; i < 3; ++i) {
    json req = json::parse(body);
    req["seed"] = i;
    auto res = srv.Client()->Post("/v1/chat/completions", req.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    std::string content, finish;
    for (const std::string& e : SseData(res->body)) {
      if (e == "[DONE]") continue;
      json c = json::parse(e);
      if (c["choices"].empty()) continue;
      const json& d = c["choices"][0]["delta"];
      if (d.contains("content") && d["content"].is_string()) content += d["content"].get<std::string>();
      if (!c["choices"][0]["finish_reason"].is_null()) finish = c["choices"][0]["finish_reason"];
    }
    EXPECT_EQ(finish, "stop") << content;
    json v = json::parse(content, nullptr, false);
    ASSERT_TRUE(v.is_object()) << content;
    EXPECT_TRUE(v["x"].is_number_integer()) << content;
    EXPECT_TRUE(v["tag"].is_string() && v["tag"].get<std::string>().size() <= 5 * 4) << content;
    EXPECT_TRUE(v["ok"].is_boolean()) << content;
    EXPECT_EQ(v.size(), 3u) << content;
  }
  int status;
  json err = Post(srv, "/v1/chat/completions", R"({"messages": [{"role": "user", "content": "x"}],
      "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": {"type": "object",
      "properties": {"n": {"type": "number", "minimum": 0}}}}}})",
                  &status);
  EXPECT_EQ(status, 400) << err.dump();
  EXPECT_EQ(err["error"]["code"], "unsupported_parameter") << err.dump();
  EXPECT_EQ(err["error"]["param"], "response_format.json_schema.schema") << err.dump();
  EXPECT_NE(err["error"]["message"].get<std::string>().find("'minimum' at #/properties/n"), std::string::npos)
      << err.dump();
  EXPECT_TRUE(srv.Alive());
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

// llama.cpp's and vLLM's ways of sending a schema constrain the output as
// response_format json_schema does, on chat and on completions (which take
// response_format too, as vLLM's do); vLLM's choice gives one of its strings.
TEST_F(ServeReal, OtherServersSchemaFormsConstrainTheOutput) {
  auto s = Serve({"--threads", "2"}, "structured-forms");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  const std::string schema =
      R"({"type": "object", "properties": {"ok": {"type": "boolean"}, "k": {"enum": ["a", "b"]}},
          "required": ["ok", "k"], "additionalProperties": false})";
  const std::string chat = R"({"messages": [{"role": "user", "content": "Answer."}], "max_tokens": 200, "seed": 3,
      "temperature": 1.0, )";
  const std::string completion = R"({"prompt": "Answer:", "max_tokens": 200, "seed": 3, "temperature": 1.0, )";
  const std::pair<std::string, std::string> cases[] = {
      {"/v1/chat/completions", chat + R"("response_format": {"type": "json_object", "schema": )" + schema + "}}"},
      {"/v1/chat/completions", chat + R"("json_schema": )" + schema + "}"},
      {"/v1/chat/completions", chat + R"("guided_json": )" + json(json::parse(schema).dump()).dump() + "}"},
      {"/v1/completions", completion + R"("json_schema": )" + schema + "}"},
      {"/v1/completions", completion + R"("guided_json": )" + schema + "}"},
      {"/v1/chat/completions", chat + R"("structured_outputs": {"json": )" + schema + "}}"},
      {"/v1/completions", completion +
                              R"("response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": )" +
                              schema + "}}}"}};
  for (const auto& [path, body] : cases) {
    int status = 0;
    json res = Post(srv, path, body, &status);
    ASSERT_EQ(status, 200) << body << "\n" << res.dump();
    const json& choice = res["choices"][0];
    const std::string text = choice.contains("message") ? choice["message"]["content"].get<std::string>()
                                                        : choice["text"].get<std::string>();
    EXPECT_EQ(choice["finish_reason"], "stop") << body << "\n" << text;
    json v = json::parse(text, nullptr, false);
    ASSERT_TRUE(v.is_object()) << body << "\n" << text;
    EXPECT_EQ(v.size(), 2u) << text;
    EXPECT_TRUE(v["ok"].is_boolean()) << text;
    EXPECT_TRUE(v["k"] == "a" || v["k"] == "b") << text;
  }
  // vLLM's choice: the output is exactly one of the strings.
  const std::pair<std::string, std::string> choices[] = {
      {"/v1/chat/completions", chat + R"("structured_outputs": {"choice": ["positive", "negative", "n/a"]}})"},
      {"/v1/completions", completion + R"("guided_choice": ["positive", "negative", "n/a"]})"}};
  for (const auto& [path, body] : choices) {
    for (int seed = 0; seed < 3; ++seed) {
      json req = json::parse(body);
      req["seed"] = seed;
      int status = 0;
      json res = Post(srv, path, req.dump(), &status);
      ASSERT_EQ(status, 200) << body << "\n" << res.dump();
      const json& choice = res["choices"][0];
      const std::string text = choice.contains("message") ? choice["message"]["content"].get<std::string>()
                                                          : choice["text"].get<std::string>();
      EXPECT_TRUE(text == "positive" || text == "negative" || text == "n/a") << text;
      EXPECT_EQ(choice["finish_reason"], "stop") << text;
    }
  }
  int status = 0;
  json err =
      Post(srv, "/v1/completions", R"({"prompt": "x", "json_schema": {"type": "integer", "minimum": 1}})", &status);
  EXPECT_EQ(status, 400) << err.dump();
  EXPECT_EQ(err["error"]["param"], "json_schema") << err.dump();
  EXPECT_TRUE(srv.Alive());
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

TEST_F(ServeReal, OpenAiSdkStructuredOutputsValidateWithAjv) {
  const std::string dir = std::string(PROSGROW_SOURCE_DIR) + "/tests/node";
  if (access((dir + "/node_modules/openai/package.json").c_str(), R_OK) != 0 ||
      access((dir + "/node_modules/ajv/package.json").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "run `npm ci` in " << dir << " first";
  }
  int rc = 0;
  RunShell("node --version > /dev/null 2>&1", &rc);
  if (rc != 0) GTEST_SKIP() << "node not installed";
  auto s = Serve({"--threads", "2", "--max-seqs", "16"}, "structured-sdk");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  const std::string out = RunShell(
      "cd '" + dir + "' && PROSGROW_BASE_URL=" + srv.base_url() + "/v1 node openai_structured_test.mjs 2>&1", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("openai structured test: ok"), std::string::npos) << out;
  EXPECT_TRUE(srv.Alive());
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

}  // namespace
}  // namespace pg::serve_real
