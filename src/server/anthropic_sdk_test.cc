// Runs tests/node/anthropic_sdk_test.mjs (the official Anthropic Node SDK)
// against an HttpServer over the fake engine, which answers the weather
// question with an exact tool call, so the SDK sees tool_use blocks (plain
// and streamed) and the whole tool round trip. The same script runs against
// a real `prosgrow serve` in tests/serve_real_anthropic_test.cc. Skipped when
// node or the SDK (tests/node/node_modules, from `npm ci` there) is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "testing/test_server_harness.h"

namespace pg {
namespace {

using namespace pg::testing;

TEST(AnthropicSdk, MessagesStreamToolRoundTripCacheAndErrors) {
  const std::string dir = std::string(PROSGROW_SOURCE_DIR) + "/tests/node";
  if (access((dir + "/node_modules/@anthropic-ai/sdk/package.json").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "run `npm ci` in " << dir << " first";
  }
  if (system("node --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "node not installed";

  FakeServiceOptions fake;
  const Tokenizer* tok = nullptr;
  fake.reply_fn = [&tok](const GenerationRequest& r) -> std::string {
    std::string prompt = tok->Decode(r.prompt, true);
    if (prompt.find("sunny") != std::string::npos) return "It is sunny in Paris.";
    if (prompt.find("get_weather") != std::string::npos) {
      return "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    }
    return "Hello from the fake engine!";
  };
  ServerOptions opts;
  opts.api_key = "sk-node-test";
  auto t = StartTestServer(fake, opts);
  ASSERT_TRUE(t);
  tok = &t->service->tokenizer();

  std::string cmd = "cd '" + dir + "' && PROSGROW_BASE_URL=http://127.0.0.1:" + std::to_string(t->port) +
                    " PROSGROW_API_KEY=sk-node-test PROSGROW_EXPECT_TOOL_CALLS=1 node anthropic_sdk_test.mjs 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) output += buf;
  int rc = pclose(p);
  EXPECT_EQ(rc, 0) << output;
  EXPECT_NE(output.find("anthropic sdk test: ok"), std::string::npos) << output;
  // The tool-call turns named no session: only the sessions that asked are noted.
  EXPECT_EQ(t->service->tool_call_sessions().size(), 0u);
}

}  // namespace
}  // namespace pg
