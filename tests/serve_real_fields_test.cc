// Issue 23, "every field does what it says, or is a 400", on the real
// engine (`prosgrow serve` on the tiny synthetic model, serve_real_fixture.h):
// stop_token_ids end the answer at that token, min_tokens holds the end
// back, and the no-op fields agent clients send keep working. (The refusals
// are in the bad-input catalogue, serve_real_api_test.cc.)
#include "serve_real_fixture.h"

namespace pg::serve_real {
namespace {

struct Completion {
  std::string text, finish;
  int64_t tokens = -1;
  std::vector<std::string> token_texts;  // logprobs.tokens
};

Completion Complete(const ServeProcess& s, json body) {
  body["prompt"] = "The first words of the answer are";
  body["temperature"] = 0;
  body["logprobs"] = 0;
  auto res = s.Client()->Post("/v1/completions", body.dump(), "application/json");
  Completion c;
  EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no answer");
  if (!res || res->status != 200) return c;
  const json j = json::parse(res->body);
  const json& choice = j["choices"][0];
  c.text = choice["text"];
  c.finish = choice["finish_reason"];
  c.tokens = j["usage"]["completion_tokens"];
  for (const json& t : choice["logprobs"]["tokens"]) c.token_texts.push_back(t);
  return c;
}

TEST_F(ServeReal, StopTokenIdsAndMinTokensAreHonoured) {
  const Completion free = Complete(*shared_, {{"max_tokens", 8}, {"ignore_eos", true}});
  ASSERT_EQ(free.tokens, 8);
  ASSERT_FALSE(free.token_texts.empty());
  // The id of the first greedy token, from the server's own tokenizer.
  int status = 0;
  const json ids = Post(*shared_, "/tokenize", json{{"content", free.token_texts[0]}}.dump(), &status);
  ASSERT_EQ(status, 200) << ids.dump();
  ASSERT_EQ(ids["tokens"].size(), 1u) << "the first token's text does not tokenize to one token: " << ids.dump();
  const int64_t first = ids["tokens"][0];

  // That token ends the answer at once, "stop", and is part of it (vLLM's rule).
  const Completion stopped = Complete(*shared_, {{"max_tokens", 8}, {"ignore_eos", true}, {"stop_token_ids", {first}}});
  EXPECT_EQ(stopped.finish, "stop");
  EXPECT_EQ(stopped.tokens, 1);
  EXPECT_EQ(stopped.text, free.token_texts[0]);

  // min_tokens masks it until 3 tokens are out: the answer is at least that long.
  const Completion held =
      Complete(*shared_, {{"max_tokens", 8}, {"ignore_eos", true}, {"min_tokens", 3}, {"stop_token_ids", {first}}});
  EXPECT_GE(held.tokens, 3);
  ASSERT_FALSE(held.token_texts.empty());
  EXPECT_NE(held.token_texts[0], free.token_texts[0]);  // the greedy pick was held back
  EXPECT_TRUE(held.finish == "stop" || held.finish == "length") << held.finish;
}

TEST_F(ServeReal, AgentClientNoOpFieldsKeepWorking) {
  // What opencode sends beside the messages.
  const json body = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                     {"max_tokens", 4},
                     {"store", false},
                     {"prompt_cache_key", "ses_123"},
                     {"reasoning_effort", "medium"},
                     {"stream", true},
                     {"stream_options", {{"include_usage", true}}}};
  auto res = shared_->Client()->Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(SseData(res->body).back(), "[DONE]");
}

}  // namespace
}  // namespace pg::serve_real
