// FitToContext's two bounds: the model context (n_ctx) and what the device KV
// tier holds for one sequence (ServiceInfo::max_seq_tokens).
#include "server/core/fit_to_context.h"

#include <gtest/gtest.h>

#include "server/anthropic/anthropic_error.h"
#include "server/core/request.h"

namespace pg {
namespace {

constexpr int64_t kCtx = 4096;

ApiRequest Completion(int max_tokens) {
  ApiRequest a;
  a.chat = false;
  if (max_tokens > 0) {
    a.max_tokens_given = true;
    a.sampling.max_tokens = max_tokens;
  }
  return a;
}

TEST(FitToContext, KvBoundNamesBothNumbersAndTheFlag) {
  ApiRequest a = Completion(1000);
  auto err = FitToContext(&a, 4000, 8192, kCtx);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->http_status, 400);
  EXPECT_EQ(err->param, "max_tokens");
  EXPECT_EQ(err->code, "kv_capacity_exceeded");
  EXPECT_NE(err->message.find("5000 tokens of KV (4000 prompt + 1000 max_tokens)"), std::string::npos) << err->message;
  EXPECT_NE(err->message.find("at most 4096 tokens for one sequence (--kv-device-mem)"), std::string::npos)
      << err->message;
}

TEST(FitToContext, ExactlyAtTheKvBoundFits) {
  ApiRequest a = Completion(96);
  EXPECT_FALSE(FitToContext(&a, 4000, 8192, kCtx).has_value());
  a = Completion(97);
  EXPECT_TRUE(FitToContext(&a, 4000, 8192, kCtx).has_value());
}

TEST(FitToContext, PromptAloneFillingTheKvTierIsRefusedWithoutMaxTokens) {
  ApiRequest a = Completion(0);
  auto err = FitToContext(&a, kCtx, 8192, kCtx);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->http_status, 400);
  EXPECT_EQ(err->param, "prompt");
  EXPECT_NE(err->message.find("4097 tokens of KV (4096 prompt"), std::string::npos) << err->message;
  EXPECT_NE(err->message.find("at most 4096"), std::string::npos) << err->message;
}

TEST(FitToContext, DefaultMaxTokensIsTheRoomUnderTheSmallerBound) {
  ApiRequest a = Completion(0);
  ASSERT_FALSE(FitToContext(&a, 1000, 8192, kCtx).has_value());
  EXPECT_EQ(a.sampling.max_tokens, kCtx - 1000);  // the KV tier is the smaller bound
  a = Completion(0);
  ASSERT_FALSE(FitToContext(&a, 1000, 2048, kCtx).has_value());
  EXPECT_EQ(a.sampling.max_tokens, 2048 - 1000);  // the context is
  a = Completion(0);
  ASSERT_FALSE(FitToContext(&a, 1000, 2048, 0).has_value());
  EXPECT_EQ(a.sampling.max_tokens, 2048 - 1000);  // 0 = no KV bound
}

TEST(FitToContext, TheContextErrorWinsWhenBothAreExceeded) {
  ApiRequest a = Completion(3000);
  auto err = FitToContext(&a, 1500, 4000, 2000);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->code, "context_length_exceeded");
  EXPECT_NE(err->message.find("4500"), std::string::npos) << err->message;
  // Within the context, past the KV tier.
  a = Completion(1000);
  err = FitToContext(&a, 1500, 4000, 2000);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->code, "kv_capacity_exceeded");
}

TEST(FitToContext, AKvTierLargerThanTheContextChangesNothing) {
  ApiRequest a = Completion(100);
  auto err = FitToContext(&a, 2000, 2048, 1 << 20);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->code, "context_length_exceeded");
  a = Completion(48);
  EXPECT_FALSE(FitToContext(&a, 2000, 2048, 1 << 20).has_value());
}

// A dialect's wording gets what broke: Anthropic's sentences name the bound
// (the KV tier's when it is the smaller) and the prompt's length.
TEST(FitToContext, TheDialectWordsTheOverflow) {
  ApiRequest a = Completion(0);
  a.chat = true;
  auto err = FitToContext(&a, 5000, kCtx, 0, AnthropicContextError);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->message, "prompt is too long: 5000 tokens > 4095 maximum");
  EXPECT_EQ(err->param, "messages");
  err = FitToContext(&a, 3000, 8192, 2048, AnthropicContextError);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->message, "prompt is too long: 3000 tokens > 2047 maximum");
  a = Completion(3000);
  err = FitToContext(&a, 1500, 8192, kCtx, AnthropicContextError);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->message, "input length and `max_tokens` exceed context limit: 1500 + 3000 > 4096");
  EXPECT_EQ(err->param, "max_tokens");
  EXPECT_EQ(err->code, "context_length_exceeded");
}

}  // namespace
}  // namespace pg
