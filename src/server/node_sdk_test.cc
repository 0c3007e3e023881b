// Runs the official Node SDKs' scripts in tests/node (openai_sdk_test.mjs,
// anthropic_sdk_test.mjs) against an HttpServer over the fake engine, which
// answers the weather question with an exact tool call, so each SDK sees tool
// calls (plain and streamed) and the whole tool round trip. The same scripts
// run against a real `prosgrow serve` in tests/serve_real_*. Skipped when node
// or the SDK (tests/node/node_modules, from `npm ci` there) is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "testing/test_server_harness.h"

namespace pg {
namespace {

using namespace pg::testing;

struct SdkRun {
  bool skipped = false;
  int rc = -1;
  std::string output;
  size_t tool_call_sessions = 0;
};

// Starts the fake-engine server and runs `script`; `package` is the SDK's
// directory under node_modules, `base_suffix` what the SDK's base URL adds.
SdkRun RunSdkScript(const std::string& package, const std::string& script, const std::string& base_suffix) {
  SdkRun run;
  const std::string dir = std::string(PROSGROW_SOURCE_DIR) + "/tests/node";
  if (access((dir + "/node_modules/" + package + "/package.json").c_str(), R_OK) != 0 ||
      system("node --version > /dev/null 2>&1") != 0) {
    run.skipped = true;
    return run;
  }
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
  if (!t) return run;
  tok = &t->service->tokenizer();
  std::string cmd = "cd '" + dir + "' && PROSGROW_BASE_URL=http://127.0.0.1:" + std::to_string(t->port) + base_suffix +
                    " PROSGROW_API_KEY=sk-node-test PROSGROW_EXPECT_TOOL_CALLS=1 node " + script + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return run;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) run.output += buf;
  run.rc = pclose(p);
  run.tool_call_sessions = t->service->tool_call_sessions().size();
  return run;
}

TEST(OpenAiSdk, ChatStreamAndToolCallRoundTrip) {
  SdkRun r = RunSdkScript("openai", "openai_sdk_test.mjs", "/v1");
  if (r.skipped) GTEST_SKIP() << "node or the openai SDK missing (run `npm ci` in tests/node)";
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("openai sdk test: ok"), std::string::npos) << r.output;
  EXPECT_EQ(r.tool_call_sessions, 0u);  // the SDK sent no user/session id
}

TEST(AnthropicSdk, MessagesStreamToolRoundTripCacheAndErrors) {
  SdkRun r = RunSdkScript("@anthropic-ai/sdk", "anthropic_sdk_test.mjs", "");
  if (r.skipped) GTEST_SKIP() << "node or the Anthropic SDK missing (run `npm ci` in tests/node)";
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("anthropic sdk test: ok"), std::string::npos) << r.output;
  // The tool-call turns named no session: only the sessions that asked are noted.
  EXPECT_EQ(r.tool_call_sessions, 0u);
}

}  // namespace
}  // namespace pg
