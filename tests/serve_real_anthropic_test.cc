// The Anthropic Messages API end to end: tests/node/anthropic_sdk_test.mjs
// (the official Anthropic Node SDK) against a real `prosgrow serve` on the
// tiny synthetic model, with the prefix cache on, so the second turn reads
// the first's prompt from the KV cache. Random weights do not call tools on
// their own: the script sends the tool_use / tool_result history itself, and
// forces calls with tool_choice any / tool (constrained decoding), then runs
// their round trip (the fake-engine run in src/server/node_sdk_test.cc
// covers unforced tool_use from the model).
#include "serve_real_fixture.h"

namespace pg::serve_real {
namespace {

TEST_F(ServeReal, AnthropicNodeSdk) {
  const std::string node_dir = std::string(PROSGROW_SOURCE_DIR) + "/tests/node";
  if (access((node_dir + "/node_modules/@anthropic-ai/sdk/package.json").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "run `npm ci` in " << node_dir << " first";
  }
  int rc;
  RunShell("node --version > /dev/null 2>&1", &rc);
  if (rc != 0) GTEST_SKIP() << "node not installed";
  auto s = Serve({"--threads", "2", "--api-key", "sk-node-test"}, "anthropic");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // tool_choice any / tool is enforced by constrained decoding (src/constrain),
  // so the script always forces tool calls from the random model and runs
  // their round trip to a text answer.
  std::string out =
      RunShell("cd '" + node_dir + "' && env -u PROSGROW_EXPECT_TOOL_CALLS PROSGROW_BASE_URL=" + (*s)->base_url() +
                   " PROSGROW_API_KEY=sk-node-test PROSGROW_EXPECT_FORCED_TOOLS=1"
                   " node anthropic_sdk_test.mjs 2>&1",
               &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("anthropic sdk test: ok"), std::string::npos) << out;
  // Every /v1/messages answer was counted under its own endpoint label.
  std::string metrics = (*s)->Metrics();
  EXPECT_NE(metrics.find("endpoint=\"/v1/messages\""), std::string::npos);
  EXPECT_NE(metrics.find("endpoint=\"/v1/messages/count_tokens\""), std::string::npos);
  EXPECT_TRUE((*s)->Alive());
  EXPECT_EQ((*s)->Stop(), 0) << (*s)->Log();
}

}  // namespace
}  // namespace pg::serve_real
