// What clients parse, against a real `prosgrow serve` (issue 24 items 2 and
// 4): the context errors in each API's words (Claude Code matches
// Anthropic's two sentences; OpenAI clients the context_length_exceeded
// code), errors on /v1/messages in Anthropic's shape when the body is
// compressed (Accept-Encoding: gzip, as every SDK sends), message_start's
// cache split, and the stop sequence attributed on a SentencePiece
// vocabulary (whose completions start with a space).
#include <fmt/format.h>

#include <cctype>
#include <sstream>

#include "serve_real_fixture.h"

namespace pg::serve_real {
namespace {

constexpr int kCtx = 512;

json Message(const std::string& text, int64_t max_tokens) {
  return {{"model", "tiny"},
          {"max_tokens", max_tokens},
          {"temperature", 0},
          {"messages", {{{"role", "user"}, {"content", text}}}}};
}

// The data of each named event of an Anthropic stream, in order.
std::vector<json> EventData(const std::string& sse) {
  std::vector<json> out;
  std::istringstream in(sse);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("data: ", 0) == 0) out.push_back(json::parse(line.substr(6)));
  }
  return out;
}

// The server of the context, error-shape and cache tests: a 512-token
// context, an API key, a 64 KiB body limit, the prefix cache on.
struct WordsServer {
  std::unique_ptr<ServeProcess> srv;
  json Post(const std::string& path, const json& body, int* status) const {
    auto res = srv->Client()->Post(path.c_str(), {{"x-api-key", "sk-words"}}, body.dump(), "application/json");
    *status = res ? res->status : -1;
    return res ? json::parse(res->body, nullptr, false) : json();
  }
  int64_t CountTokens(const std::string& text) const {
    int status = 0;
    json c =
        Post("/v1/messages/count_tokens", {{"model", "tiny"}, {"messages", Message(text, 1)["messages"]}}, &status);
    EXPECT_EQ(status, 200) << c.dump();
    return c.value("input_tokens", int64_t{-1});
  }
};

#define START_WORDS_SERVER(w, name)                                                                                    \
  WordsServer w;                                                                                                       \
  {                                                                                                                    \
    auto s = Serve({"--threads", "2", "--ctx-size", std::to_string(kCtx), "--api-key", "sk-words", "--max-body-bytes", \
                    "65536", "--served-model-name", "tiny"},                                                           \
                   name);                                                                                              \
    ASSERT_TRUE(s.ok()) << s.status().ToString();                                                                      \
    w.srv = std::move(s).value();                                                                                      \
  }

TEST_F(ServeReal, ContextErrorsInEachApisWords) {
  START_WORDS_SERVER(w, "words-context");
  std::string longer;
  while (static_cast<int64_t>(longer.size()) < 6 * kCtx) longer += "tokens and more words ";
  const int64_t n_long = w.CountTokens(longer);
  ASSERT_GT(n_long, kCtx);
  int status = 0;
  json e = w.Post("/v1/messages", Message(longer, 16), &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["type"], "error") << e.dump();
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_EQ(e["error"]["message"], fmt::format("prompt is too long: {} tokens > {} maximum", n_long, kCtx - 1));

  const int64_t n_hi = w.CountTokens("Hi");
  e = w.Post("/v1/messages", Message("Hi", 32000), &status);  // Claude Code's default output cap
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["message"],
            fmt::format("input length and `max_tokens` exceed context limit: {} + 32000 > {}", n_hi, kCtx));
  e = w.Post("/v1/messages", Message("Hi", kCtx - static_cast<int>(n_hi) + 1), &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["message"], fmt::format("input length and `max_tokens` exceed context limit: {} + {} > {}", n_hi,
                                               kCtx - n_hi + 1, kCtx));
  w.Post("/v1/messages", Message("Hi", kCtx - static_cast<int>(n_hi)), &status);
  EXPECT_EQ(status, 200);  // exactly at the limit fits

  // OpenAI's routes: the code, and a message naming both numbers.
  json chat = {{"messages", {{{"role", "user"}, {"content", longer}}}}, {"max_tokens", 16}};
  e = w.Post("/v1/chat/completions", chat, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["code"], "context_length_exceeded") << e.dump();
  const std::string msg = e["error"]["message"];
  EXPECT_NE(msg.find(std::to_string(n_long)), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(kCtx)), std::string::npos) << msg;
  chat = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", kCtx - 1}};
  e = w.Post("/v1/chat/completions", chat, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["code"], "context_length_exceeded") << e.dump();
  EXPECT_NE(e["error"]["message"].get<std::string>().find(std::to_string(kCtx - 1)), std::string::npos) << e.dump();
}

TEST_F(ServeReal, ErrorsKeepAnthropicsShapeWhenCompressed) {
  START_WORDS_SERVER(w, "words-gzip");
  auto client = w.srv->Client();
  const httplib::Headers gzip = {{"Accept-Encoding", "gzip, deflate"}};
  auto expect_shape = [](const httplib::Result& res, int status, const char* type) {
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, status);
    EXPECT_EQ(res->get_header_value("Content-Encoding"), "gzip");  // the case that lost the shape
    json body = json::parse(res->body, nullptr, false);
    EXPECT_EQ(body["type"], "error") << res->body;
    EXPECT_EQ(body["error"]["type"], type) << res->body;
    EXPECT_TRUE(body["error"]["message"].is_string()) << res->body;
  };
  expect_shape(client->Post("/v1/messages", gzip, Message("Hi", 8).dump(), "application/json"), 401,
               "authentication_error");
  httplib::Headers keyed = gzip;
  keyed.emplace("x-api-key", "sk-words");
  expect_shape(client->Post("/v1/messages", keyed, std::string(70000, ' ') + "{}", "application/json"), 413,
               "request_too_large");
  expect_shape(client->Get("/v1/messages", keyed), 405, "invalid_request_error");
  expect_shape(client->Post("/v1/messages", keyed, Message("Hi", 100000).dump(), "application/json"), 400,
               "invalid_request_error");
  // The OpenAI paths keep OpenAI's shape.
  auto res = client->Post("/v1/chat/completions", gzip, R"({"messages": []})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  json body = json::parse(res->body, nullptr, false);
  EXPECT_FALSE(body.contains("type")) << res->body;
  EXPECT_EQ(body["error"]["type"], "authentication_error") << res->body;
}

TEST_F(ServeReal, MessageStartCarriesTheCacheSplit) {
  START_WORDS_SERVER(w, "words-cache");
  std::string system;
  while (system.size() < 1200) system += "You are a careful assistant who reads every file. ";
  json body = Message("Hi", 4);
  body["system"] = system;
  body["stream"] = true;
  auto usage_of = [&](json* start, json* end) {
    auto res = w.srv->Client()->Post("/v1/messages", {{"x-api-key", "sk-words"}}, body.dump(), "application/json");
    ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "no answer");
    for (const json& d : EventData(res->body)) {
      if (d["type"] == "message_start") *start = d["message"]["usage"];
      if (d["type"] == "message_delta") *end = d["usage"];
    }
  };
  json start, end;
  usage_of(&start, &end);
  usage_of(&start, &end);  // the second reads the first's prompt from the KV cache
  EXPECT_GT(end["cache_read_input_tokens"].get<int64_t>(), 0) << end.dump();
  for (const char* k : {"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}) {
    EXPECT_EQ(start[k], end[k]) << k << ": " << start.dump() << " vs " << end.dump();
  }
  EXPECT_EQ(start["output_tokens"], 0);
}

// SentencePiece: the completion's first piece starts with "▁", which Decode
// drops and the streamed text keeps; the stop sequence is found in the text
// the client sees.
TEST_F(ServeReal, StopSequenceOnASentencePieceVocabulary) {
  const std::string model = std::string(PROSGROW_SHARED_DIR) + "/fixtures/models/small-llama-spm-q8_0.gguf";
  if (access(model.c_str(), R_OK) != 0) GTEST_SKIP() << model << " not found (../shared fixtures)";
  auto srv = ServeProcess::Start(PROSGROW_BINARY, model,
                                 {"--threads", "2", "--no-prefix-cache", "--served-model-name", "tiny"},
                                 (*dir_ / "serve-spm-stop.log").string());
  ASSERT_TRUE(srv.ok()) << srv.status().ToString();
  std::string prompt, text;
  for (const char* p : {"Hi", "Hello there", "Tell me a story", "What is the weather?", "Write some code"}) {
    int status = 0;
    json m = Post(**srv, "/v1/messages", Message(p, 24).dump(), &status);
    ASSERT_EQ(status, 200) << m.dump();
    text = m["content"][0]["text"];
    prompt = p;
    if (text.size() >= 8 && text[0] == ' ') break;
  }
  ASSERT_TRUE(text.size() >= 8 && text[0] == ' ') << "no greedy answer starts with a space: [" << text << "]";
  size_t at = text.size() / 2;  // two ASCII characters, no space, from the middle on
  while (at + 2 < text.size() && !(std::isgraph(static_cast<unsigned char>(text[at])) &&
                                   std::isgraph(static_cast<unsigned char>(text[at + 1]))))
    ++at;
  ASSERT_LT(at + 2, text.size()) << "no two printable characters after the middle of [" << text << "]";
  const std::string stop = text.substr(at, 2);
  const std::string before = text.substr(0, text.find(stop));
  json req = Message(prompt, 24);
  req["stop_sequences"] = {stop};
  int status = 0;
  json m = Post(**srv, "/v1/messages", req.dump(), &status);
  ASSERT_EQ(status, 200) << m.dump();
  EXPECT_EQ(m["stop_reason"], "stop_sequence") << m.dump();
  EXPECT_EQ(m["stop_sequence"], stop) << m.dump();
  EXPECT_EQ(m["content"][0]["text"], before);
  req["stream"] = true;
  auto res = (*srv)->Client()->Post("/v1/messages", req.dump(), "application/json");
  ASSERT_TRUE(res && res->status == 200);
  json delta;
  for (const json& d : EventData(res->body)) {
    if (d["type"] == "message_delta") delta = d["delta"];
  }
  EXPECT_EQ(delta["stop_reason"], "stop_sequence") << res->body;
  EXPECT_EQ(delta["stop_sequence"], stop) << res->body;
  EXPECT_EQ((*srv)->Stop(), 0) << (*srv)->Log();
}

}  // namespace
}  // namespace pg::serve_real
