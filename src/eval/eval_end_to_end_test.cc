// End-to-end: EvalMain against the test-support mock OpenAI server on 127.0.0.1.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "eval/eval_cli.h"
#include "eval/eval_test_util.h"
#include "testing/http_test_util.h"
#include "testing/mock_openai_server.h"

namespace pg {
namespace {

using nlohmann::json;

// The shared test server (src/testing), answering question i
// deterministically by i % 4:
//   0: "... The answer is <right>."          -> correct (answer phrase)
//   1: "... The answer is <right + 1>."      -> wrong
//   2: "I get <right> apples"                -> correct (last number), finish "length"
//   3: "I cannot tell."                      -> no answer
// Question 7 gets HTTP 500 when fail_seven is set.
std::unique_ptr<bench::MockOpenAiServer> StartMock(bool fail_seven = false) {
  auto index_of = std::make_shared<std::map<std::string, int>>();
  for (int i = 0; i < 64; ++i) (*index_of)[testing_util::SyntheticQuestion(i)] = i;
  bench::MockOptions mo;
  mo.model_id = "mock-model";
  mo.reply_fn = [index_of, fail_seven](const json& body) {
    bool chat = body.contains("messages");
    std::string prompt = chat ? body["messages"][0]["content"].get<std::string>() : body["prompt"].get<std::string>();
    size_t q = prompt.rfind("Question: ");
    size_t a = prompt.rfind("\nAnswer:");
    int i = index_of->at(prompt.substr(q + 10, a - q - 10));
    bench::MockReply r;
    if (fail_seven && i == 7) {
      r.status = 500;
      return r;
    }
    int right = testing_util::SyntheticAnswer(i);
    switch (i % 4) {
      case 0: r.text = fmt::format(" He has {} + {} = {} apples.\nThe answer is {}.", i, i + 2, right, right); break;
      case 1: r.text = fmt::format(" The answer is {}.", right + 1); break;
      case 2:
        r.text = fmt::format(" I get {} apples", right);
        r.finish_reason = "length";
        break;
      default: r.text = " I cannot tell.";
    }
    return r;
  };
  auto server = std::make_unique<bench::MockOpenAiServer>(mo);
  Status st = server->Start();
  EXPECT_TRUE(st.ok()) << st.ToString();
  return server;
}

class EvalEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::path(::testing::TempDir()) / ("eval_e2e_" + std::to_string(::getpid()) + "_" +
                                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    dataset_ = (dir_ / "data.jsonl").string();
    std::ofstream(dataset_) << testing_util::SyntheticJsonl(12);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), "eval");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return EvalMain(static_cast<int>(argv.size()), argv.data());
  }

  static std::string ReadFile(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::filesystem::path dir_;
  std::string dataset_;
};

TEST_F(EvalEndToEnd, ChatRunWritesResultsAndSummary) {
  auto server = StartMock();
  std::string out = (dir_ / "run").string();
  ASSERT_EQ(Run({"--url", server->url() + "/v1/", "--dataset", dataset_, "--limit", "8", "--concurrency", "3",
                 "--max-tokens", "64", "--out", out}),
            0);
  json results = json::parse(ReadFile(std::filesystem::path(out) / "results.json"));
  EXPECT_EQ(results["settings"]["model"], "mock-model");  // from GET /v1/models
  EXPECT_EQ(results["styles"], json::array({"short", "long"}));
  for (const char* style : {"short", "long"}) {
    SCOPED_TRACE(style);
    const json& s = results["summary"][style];
    EXPECT_EQ(s["total"], 8);
    EXPECT_EQ(s["correct"], 4);    // 0, 2, 4, 6
    EXPECT_EQ(s["wrong"], 2);      // 1, 5
    EXPECT_EQ(s["no_answer"], 2);  // 3, 7
    EXPECT_EQ(s["failed"], 0);
    EXPECT_DOUBLE_EQ(s["accuracy"].get<double>(), 4.0 / 8.0);  // no answer counts as not correct
  }
  ASSERT_EQ(results["results"].size(), 16u);
  const char* expected_verdict[] = {"correct", "wrong", "correct", "no_answer"};
  for (const json& r : results["results"]) {
    int i = r["index"];
    SCOPED_TRACE(i);
    EXPECT_EQ(r["verdict"], expected_verdict[i % 4]);
    EXPECT_EQ(r["question"], testing_util::SyntheticQuestion(i));
    EXPECT_EQ(r["reference"], std::to_string(testing_util::SyntheticAnswer(i)));
    EXPECT_EQ(r["completion_tokens"], 5);
    EXPECT_EQ(r["error"], "");
    if (i % 4 == 0) {
      EXPECT_EQ(r["extraction_rule"], "answer_phrase");
    }
    if (i % 4 == 1) {
      EXPECT_EQ(r["extracted"], std::to_string(testing_util::SyntheticAnswer(i) + 1));
    }
    if (i % 4 == 2) {
      EXPECT_EQ(r["extraction_rule"], "last_number");
      EXPECT_EQ(r["finish_reason"], "length");
    }
    if (i % 4 == 3) {
      EXPECT_TRUE(r["extracted"].is_null());
    }
    std::string prompt = r["prompt"];
    size_t shots = 0;
    for (size_t p = prompt.find("Question: "); p != std::string::npos; p = prompt.find("Question: ", p + 1)) ++shots;
    EXPECT_EQ(shots, r["style"] == "long" ? 9u : 1u);
  }
  // What the server saw: greedy, max tokens, model name, exact prompts.
  std::vector<json> requests = server->requests();
  ASSERT_EQ(requests.size(), 16u);
  for (const json& req : requests) {
    EXPECT_EQ(req["temperature"], 0.0);
    EXPECT_EQ(req["max_tokens"], 64);
    EXPECT_EQ(req["model"], "mock-model");
    EXPECT_EQ(req["messages"].size(), 1u);
  }
  std::string summary = ReadFile(std::filesystem::path(out) / "summary.md");
  EXPECT_NE(summary.find("| short | 50.0% | 4 | 2 | 2 | 0 | 8 |"), std::string::npos) << summary;
  EXPECT_NE(summary.find("| long | 50.0% | 4 | 2 | 2 | 0 | 8 |"), std::string::npos) << summary;
  EXPECT_NE(summary.find("| short | 1 | wrong | 5 | 4 |"), std::string::npos) << summary;
}

TEST_F(EvalEndToEnd, CompletionsEndpointReportsFailedRequests) {
  auto server = StartMock(/*fail_seven=*/true);
  std::string out = (dir_ / "run").string();
  EXPECT_EQ(Run({"--url", server->url(), "--dataset", dataset_, "--limit", "12", "--prompts", "short", "--endpoint",
                 "completions", "--api-key", "sekrit", "--model", "m1", "--out", out}),
            3);  // some requests failed
  json results = json::parse(ReadFile(std::filesystem::path(out) / "results.json"));
  EXPECT_EQ(results["styles"], json::array({"short"}));
  const json& s = results["summary"]["short"];
  EXPECT_EQ(s["total"], 12);
  EXPECT_EQ(s["failed"], 1);
  EXPECT_EQ(s["no_answer"], 2);  // 3, 11 (7 failed)
  const json& r7 = results["results"][7];
  EXPECT_EQ(r7["verdict"], "failed");
  EXPECT_NE(r7["error"].get<std::string>().find("HTTP 500"), std::string::npos);
  for (const json& req : server->requests()) {
    EXPECT_EQ(req["model"], "m1");
    EXPECT_TRUE(req.contains("prompt"));
    EXPECT_EQ(req["stop"], json::array({"\nQuestion:"}));
  }
  for (const std::string& auth : server->auth_headers()) EXPECT_EQ(auth, "Bearer sekrit");
  std::string summary = ReadFile(std::filesystem::path(out) / "summary.md");
  EXPECT_NE(summary.find("| short | 7 | failed | - | 16 |"), std::string::npos) << summary;
}

// The mechanics of the baseline-vs-optimized gate: two runs against the same
// deterministic server are 100% identical with no flips.
TEST_F(EvalEndToEnd, TwoRunsCompareIdentical) {
  auto server = StartMock();
  std::string a = (dir_ / "a").string(), b = (dir_ / "b").string();
  ASSERT_EQ(Run({"--url", server->url(), "--dataset", dataset_, "--limit", "10", "--out", a}), 0);
  ASSERT_EQ(Run({"--url", server->url(), "--dataset", dataset_, "--limit", "10", "--concurrency", "4", "--out", b}), 0);
  ::testing::internal::CaptureStdout();
  int rc = Run({"compare", a + "/results.json", b + "/results.json", "--fail-on-flip"});
  std::string text = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_NE(text.find("## short prompts (10 questions paired)"), std::string::npos) << text;
  EXPECT_NE(text.find("## long prompts (10 questions paired)"), std::string::npos) << text;
  size_t identical = 0;
  for (size_t p = text.find("identical outputs: 100.0% (10/10)"); p != std::string::npos;
       p = text.find("identical outputs: 100.0% (10/10)", p + 1)) {
    ++identical;
  }
  EXPECT_EQ(identical, 2u) << text;
  EXPECT_NE(text.find("flips right -> wrong: 0 [none]"), std::string::npos) << text;
}

TEST_F(EvalEndToEnd, BadArgumentsAndInputsExitTwo) {
  std::string bad = (dir_ / "bad.jsonl").string();
  std::ofstream(bad) << testing_util::SyntheticJsonl(2) << "{\"question\": \"q\"}\n";
  const std::string url = "http://127.0.0.1:9";
  EXPECT_EQ(Run({"--help"}), 0);
  EXPECT_EQ(Run({"--dataset", dataset_}), 2);  // no --url
  EXPECT_EQ(Run({"--url", url}), 2);           // no --dataset
  EXPECT_EQ(Run({"--url", url, "--dataset", dataset_, "--prompts", "medium"}), 2);
  EXPECT_EQ(Run({"--url", url, "--dataset", dataset_, "--limit", "0"}), 2);
  EXPECT_EQ(Run({"--url", url, "--dataset", dataset_, "--limit", "abc"}), 2);
  EXPECT_EQ(Run({"--url", url, "--dataset", dataset_, "--concurrency", "-1"}), 2);
  EXPECT_EQ(Run({"--url", url, "--dataset", dataset_, "--endpoint", "embeddings"}), 2);
  EXPECT_EQ(Run({"--url", url, "--dataset", dataset_, "--unknown"}), 2);
  EXPECT_EQ(Run({"--url", url, "--dataset", (dir_ / "missing.jsonl").string()}), 2);
  EXPECT_EQ(Run({"--url", url, "--dataset", bad}), 2);
  EXPECT_EQ(Run({"--url", "ftp://x", "--dataset", dataset_}), 2);
  EXPECT_EQ(Run({"--url", "http://127.0.0.1:99999", "--dataset", dataset_}), 2);
  // Long prompts on a dataset too small for 8 examples.
  std::string tiny = (dir_ / "tiny.jsonl").string();
  std::ofstream(tiny) << testing_util::SyntheticJsonl(3);
  EXPECT_EQ(Run({"--url", url, "--dataset", tiny, "--model", "m"}), 2);
}

TEST_F(EvalEndToEnd, UnreachableServerCountsFailures) {
  // A port held bound but not listening: connections are refused.
  int port = 0;
  int fd = testing::BindLoopback(false, &port);
  ASSERT_GE(fd, 0);
  std::string out = (dir_ / "run").string();
  EXPECT_EQ(Run({"--url", "http://127.0.0.1:" + std::to_string(port), "--model", "m", "--dataset", dataset_, "--limit",
                 "2", "--prompts", "short", "--timeout", "5", "--out", out}),
            3);
  json results = json::parse(ReadFile(std::filesystem::path(out) / "results.json"));
  EXPECT_EQ(results["summary"]["short"]["failed"], 2);
  EXPECT_EQ(results["summary"]["short"]["accuracy"], 0.0);
  ::close(fd);
}

}  // namespace
}  // namespace pg
