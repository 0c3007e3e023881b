#include "server/core/kv_hints_request.h"

#include <gtest/gtest.h>

#include <string>

#include "server/common/api_error.h"
#include "server/core/request.h"
#include "server/openai/request_test_util.h"

namespace pg {
namespace {

ApiResult<ApiRequest> ChatWithHints(const std::string& hints) {
  return testing::ParseChatBody(R"({"messages":[{"role":"user","content":"hi"}],"kv_hints":)" + hints + "}");
}

// The hints are a 400 whose param (named in the message) is `param`.
void ExpectBadHints(const char* hints, const char* param) {
  auto r = ChatWithHints(hints);
  ASSERT_FALSE(r.ok()) << hints;
  EXPECT_EQ(r.error.http_status, 400) << hints;
  EXPECT_EQ(r.error.param, param) << hints << ": " << r.error.message;
  EXPECT_NE(r.error.message.find(param), std::string::npos) << r.error.message;
}

TEST(KvHintsRequest, ShortForm) {
  auto r = ChatWithHints(R"([{"action":"retain","prefix_tokens":64,"ttl_s":300},{"action":"pin"},
                             {"action":"demote","prefix_tokens":16.0},{"action":"prefetch","ttl_s":null}])");
  ASSERT_TRUE(r.ok()) << r.error.message;
  const auto& h = r.value.kv_hints;
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0].action, KvHint::Action::kRetain);
  EXPECT_EQ(h[0].prefix_tokens, 64);
  EXPECT_DOUBLE_EQ(h[0].ttl_s, 300);
  EXPECT_EQ(h[1].action, KvHint::Action::kPin);
  EXPECT_EQ(h[1].prefix_tokens, -1);  // the whole prompt
  EXPECT_LT(h[1].ttl_s, 0);           // the server's default
  EXPECT_EQ(h[2].action, KvHint::Action::kDemote);
  EXPECT_EQ(h[2].prefix_tokens, 16);
  EXPECT_EQ(h[3].action, KvHint::Action::kPrefetch);
}

TEST(KvHintsRequest, Envelope) {
  auto r = ChatWithHints(R"({"protocol_version":1,"message_id":"m-1","actions":[
      {"action_id":"a1","action_type":"pin","action_version":1,"payload":{"prefix_tokens":32,"ttl_s":60}},
      {"action_type":"prefetch"}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  ASSERT_EQ(r.value.kv_hints.size(), 2u);
  EXPECT_EQ(r.value.kv_hints[0].action, KvHint::Action::kPin);
  EXPECT_EQ(r.value.kv_hints[0].prefix_tokens, 32);
  EXPECT_DOUBLE_EQ(r.value.kv_hints[0].ttl_s, 60);
  EXPECT_EQ(r.value.kv_hints[1].action, KvHint::Action::kPrefetch);
}

// The envelope as SGLang's transport PR (sgl-project/sglang#38595) and the
// Dynamo router send it: string versions ("0.1" envelope, "1.0" actions) and
// action types namespaced under "kv." (rewritten from their examples, with
// prosgrow's payload fields).
TEST(KvHintsRequest, EnvelopeWithStringVersionsAndNamespacedTypes) {
  auto r = ChatWithHints(R"({"protocol_version":"0.1","message_id":"7c0e1a52-93d4-4f0b-b1de-2a9c5e8d6f10",
      "actions":[
        {"action_id":"turn-9-demote","action_type":"kv.demote","action_version":"1.0",
         "payload":{"prefix_tokens":256}},
        {"action_id":"turn-10-prefetch","action_type":"kv.prefetch","action_version":"1.0","payload":{}},
        {"action_id":"sys-pin","action_type":"kv.pin","action_version":"1","payload":{"ttl_s":600}},
        {"action_id":"keep","action_type":"retain","action_version":1,"payload":{"prefix_tokens":64}},
        {"action_id":"keep-ns","action_type":"kv.retain","action_version":"1.0"}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  const auto& h = r.value.kv_hints;
  ASSERT_EQ(h.size(), 5u);
  EXPECT_EQ(h[0].action, KvHint::Action::kDemote);
  EXPECT_EQ(h[0].prefix_tokens, 256);
  EXPECT_EQ(h[1].action, KvHint::Action::kPrefetch);
  EXPECT_EQ(h[1].prefix_tokens, -1);
  EXPECT_EQ(h[2].action, KvHint::Action::kPin);
  EXPECT_DOUBLE_EQ(h[2].ttl_s, 600);
  EXPECT_EQ(h[3].action, KvHint::Action::kRetain);
  EXPECT_EQ(h[3].prefix_tokens, 64);
  EXPECT_EQ(h[4].action, KvHint::Action::kRetain);
}

// What those proposals send that prosgrow does not read is refused, naming
// the field: other versions, and action types it has no meaning for (kv.fetch
// from another worker by block hash, kv.share).
TEST(KvHintsRequest, UnknownVersionsAndActionTypesAreRefused) {
  const struct {
    const char* hints;
    const char* param;
  } kCases[] = {
      {R"({"protocol_version":"0.2","actions":[]})", "kv_hints.protocol_version"},
      {R"({"protocol_version":"1.0","actions":[]})", "kv_hints.protocol_version"},
      {R"({"protocol_version":0.1,"actions":[]})", "kv_hints.protocol_version"},
      {R"({"protocol_version":"0.1","actions":[{"action_type":"kv.pin","action_version":"2.0"}]})",
       "kv_hints.actions[0].action_version"},
      {R"({"protocol_version":"0.1","actions":[{"action_type":"kv.pin","action_version":1.5}]})",
       "kv_hints.actions[0].action_version"},
      {R"({"protocol_version":"0.1","message_id":"m-2","actions":[
          {"action_id":"a1","action_type":"kv.fetch","action_version":"1.0",
           "payload":{"source_control_endpoint":"tcp://10.0.0.2:5557","block_hashes":[7,8]}}]})",
       "kv_hints.actions[0].action_type"},
      {R"({"protocol_version":"0.1","actions":[{"action_type":"kv.share","action_version":"1.0"}]})",
       "kv_hints.actions[0].action_type"},
      {R"({"protocol_version":"0.1","actions":[{"action_type":"vllm.pin","action_version":"1.0"}]})",
       "kv_hints.actions[0].action_type"},
      {R"({"protocol_version":"0.1","actions":[{"action_type":"kv.demote","action_version":"1.0",
           "payload":{"session_id":"agent-7"}}]})",
       "kv_hints.actions[0].payload.session_id"},
      {R"([{"action":"kv.pin"}])", "kv_hints[0].action"},  // the short form keeps its own names
  };
  for (const auto& c : kCases) ExpectBadHints(c.hints, c.param);
}

TEST(KvHintsRequest, AbsentOrNullMeansNone) {
  auto r = ChatWithHints("null");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.value.kv_hints.empty());
  EXPECT_TRUE(ChatWithHints("[]").value.kv_hints.empty());
}

TEST(KvHintsRequest, EveryBadValueIsA400NamingTheField) {
  const struct {
    const char* hints;
    const char* param;
  } kCases[] = {
      {R"("retain")", "kv_hints"},
      {R"([1])", "kv_hints[0]"},
      {R"([{}])", "kv_hints[0].action"},
      {R"([{"action":"keep"}])", "kv_hints[0].action"},
      {R"([{"action":7}])", "kv_hints[0].action"},
      {R"([{"action":"pin"},{"action":"pin","prefix_tokens":0}])", "kv_hints[1].prefix_tokens"},
      {R"([{"action":"pin","prefix_tokens":513}])", "kv_hints[0].prefix_tokens"},
      {R"([{"action":"pin","prefix_tokens":1.5}])", "kv_hints[0].prefix_tokens"},
      {R"([{"action":"pin","prefix_tokens":"8"}])", "kv_hints[0].prefix_tokens"},
      {R"([{"action":"pin","ttl_s":0}])", "kv_hints[0].ttl_s"},
      {R"([{"action":"pin","ttl_s":-1}])", "kv_hints[0].ttl_s"},
      {R"([{"action":"pin","ttl_s":86401}])", "kv_hints[0].ttl_s"},
      {R"([{"action":"pin","ttl_s":"5m"}])", "kv_hints[0].ttl_s"},
      {R"([{"action":"pin","priority":3}])", "kv_hints[0].priority"},
      {R"([{"action":"pin"},{"action":"pin"},{"action":"pin"},{"action":"pin"},{"action":"pin"},
           {"action":"pin"},{"action":"pin"},{"action":"pin"},{"action":"pin"}])",
       "kv_hints"},
      {R"({"protocol_version":2,"actions":[]})", "kv_hints.protocol_version"},
      {R"({"message_id":5,"actions":[]})", "kv_hints.message_id"},
      {R"({"protocol_version":1})", "kv_hints.actions"},
      {R"({"actions":{}})", "kv_hints.actions"},
      {R"({"actions":[],"target":"x"})", "kv_hints.target"},
      {R"({"actions":[{"action":"pin"}]})", "kv_hints.actions[0].action_type"},
      {R"({"actions":[{"action_type":"pin","action_version":2}]})", "kv_hints.actions[0].action_version"},
      {R"({"actions":[{"action_type":"pin","action_id":1}]})", "kv_hints.actions[0].action_id"},
      {R"({"actions":[{"action_type":"pin","payload":[]}]})", "kv_hints.actions[0].payload"},
      {R"({"actions":[{"action_type":"pin","payload":{"ttl_s":0}}]})", "kv_hints.actions[0].payload.ttl_s"},
      {R"({"actions":[{"action_type":"pin","payload":{"session":"s"}}]})", "kv_hints.actions[0].payload.session"},
  };
  for (const auto& c : kCases) ExpectBadHints(c.hints, c.param);
}

TEST(KvHintsRequest, CompletionsAcceptThemToo) {
  auto r = testing::ParseCompletionBody(R"({"prompt":"hi","kv_hints":[{"action":"retain","ttl_s":3600}]})");
  ASSERT_TRUE(r.ok()) << r.error.message;
  ASSERT_EQ(r.value.kv_hints.size(), 1u);
  EXPECT_DOUBLE_EQ(r.value.kv_hints[0].ttl_s, 3600);
}

}  // namespace
}  // namespace pg
