#include "engine/request_admission.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

ServiceInfo Info() {
  ServiceInfo info;
  info.n_vocab = 100;
  info.n_ctx = 64;
  info.max_seq_tokens = 48;
  return info;
}

GenerationRequest Request(size_t n_prompt, int max_tokens) {
  GenerationRequest r;
  for (size_t i = 0; i < n_prompt; ++i) r.prompt.push_back(static_cast<int32_t>(i % 100));
  r.sampling.max_tokens = max_tokens;
  return r;
}

void ExpectRefused(const GenerationRequest& r, const ServiceInfo& info, const std::string& words) {
  const Status st = CheckAdmissible(r, info);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(words), std::string::npos) << st.message();
}

TEST(RequestAdmission, AcceptsWhatFits) {
  EXPECT_TRUE(CheckAdmissible(Request(10, 38), Info()).ok());  // 48 tokens: exactly the device bound
  ServiceInfo roomy = Info();
  roomy.max_seq_tokens = 64;
  // max_tokens past the context is capped at it: 64 positions needed.
  EXPECT_TRUE(CheckAdmissible(Request(10, 1000), roomy).ok());
}

TEST(RequestAdmission, RefusesWhatCannotRun) {
  ExpectRefused(Request(0, 8), Info(), "the prompt is empty");
  ExpectRefused(Request(64, 8), Info(), "context size is 64");
  GenerationRequest bad = Request(4, 8);
  bad.prompt[2] = 100;
  ExpectRefused(bad, Info(), "token id 100 is outside the vocabulary (0..99)");
  bad.prompt[2] = -1;
  ExpectRefused(bad, Info(), "token id -1");
  ExpectRefused(Request(4, 0), Info(), "max_tokens must be >= 1");
  ExpectRefused(Request(10, 39), Info(), "needs 49 tokens of KV (10 prompt + 39 max_tokens)");
}

}  // namespace
}  // namespace pg
