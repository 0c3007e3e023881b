// End-to-end: the bench against the mock OpenAI server, checking the summary
// against the server's own counters; failed-request accounting; the CLI.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench/bench_cli.h"
#include "bench/bench_runner.h"
#include "bench/run_report.h"
#include "bench/stream_client.h"
#include "bench/trace_kv_cache_tester.h"
#include "bench/trace_mooncake.h"
#include "bench/workload_agentic.h"
#include "testing/http_test_util.h"
#include "testing/mock_openai_server.h"

namespace pg::bench {
namespace {

std::unique_ptr<Workload> SmallAgentic(int64_t sessions, int32_t turns) {
  WorkloadOptions opt;
  opt.ctx_max = 512;
  opt.turns = turns;
  opt.sessions = sessions;
  opt.out_median = 8;
  opt.tool_gap_s = 0.002;
  return AgenticWorkload::Create(*TokenSpace::ForVocab(1000, 5), opt).value();
}

ClientOptions Client(const MockOpenAiServer& m, PromptMode mode = PromptMode::kTokens) {
  ClientOptions c;
  c.url = m.url();
  c.mode = mode;
  c.timeout_s = 10;
  return c;
}

TEST(BenchE2E, SummaryMatchesServerCounters) {
  MockOptions mo;
  mo.token_gap_s = 0.0005;
  mo.vocab_size = 1000;
  mo.report_tiers = true;
  MockOpenAiServer mock(mo);
  ASSERT_TRUE(mock.Start().ok());
  auto w = SmallAgentic(/*sessions=*/3, /*turns=*/4);
  RunOptions ro;
  ro.concurrency = 1;  // one request at a time: the mock's cache sees prompts in send order
  auto run = RunBench(*w, Client(mock), ro);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  MockCounters mc = mock.counters();
  int64_t expected = 0;
  for (int k = 0; k < 3; ++k) expected += CountRequests(w->MakeSession(k));
  ASSERT_EQ(static_cast<int64_t>(run->records.size()), expected);
  Summary s = Summarize(run->records, {});
  EXPECT_EQ(s.completed, mc.completed);
  EXPECT_EQ(s.completed, expected);
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.prompt_tokens, mc.prompt_tokens);
  EXPECT_EQ(s.output_tokens, mc.output_tokens);
  ASSERT_TRUE(s.cache_reuse.has_value());
  EXPECT_DOUBLE_EQ(*s.cache_reuse, static_cast<double>(mc.cached_tokens) / static_cast<double>(mc.prompt_tokens));
  // The mock is an unlimited 16-token-block cache: it reaches exactly the ideal.
  EXPECT_DOUBLE_EQ(*s.reuse_of_ideal, 1.0);
  EXPECT_GT(*s.ideal_reuse, 0.3);
  EXPECT_NEAR(*s.tier_device + *s.tier_host, *s.cache_reuse, 1e-12);
  for (const RequestRecord& r : run->records) {
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.output_tokens, r.max_tokens);
    EXPECT_EQ(r.output_chunks, r.max_tokens);
    EXPECT_EQ(static_cast<int64_t>(r.itl_s.size()), r.max_tokens - 1);
    EXPECT_EQ(r.cached_tokens, r.ideal_cached_tokens);
    EXPECT_GE(r.e2e_s, r.ttft_s);
    EXPECT_EQ(r.finish_reason, "length");
  }
}

TEST(BenchE2E, FailedRequestsAreCountedNotMeasured) {
  MockOptions mo;
  mo.fail_every = 3;
  mo.drop_every = 5;
  MockOpenAiServer mock(mo);
  ASSERT_TRUE(mock.Start().ok());
  auto w = SmallAgentic(4, 4);
  RunOptions ro;
  ro.concurrency = 2;
  ro.max_requests = 12;
  auto run = RunBench(*w, Client(mock), ro);
  ASSERT_TRUE(run.ok());
  MockCounters mc = mock.counters();
  Summary s = Summarize(run->records, {});
  EXPECT_EQ(mc.requests, 12);
  EXPECT_EQ(s.completed + s.failed, 12);
  EXPECT_EQ(s.completed, mc.completed);
  EXPECT_EQ(s.failed, mc.failed_500 + mc.dropped);
  EXPECT_GE(mc.failed_500, 3);
  EXPECT_GE(mc.dropped, 1);
  EXPECT_EQ(s.output_tokens, mc.output_tokens);
  int http500 = 0, cut = 0;
  for (const RequestRecord& r : run->records) {
    if (r.ok) continue;
    EXPECT_FALSE(r.error.empty());
    if (r.http_status == 500) {
      ++http500;
      EXPECT_NE(r.error.find("injected failure"), std::string::npos) << r.error;
    } else {
      ++cut;
    }
  }
  EXPECT_EQ(http500, mc.failed_500);
  EXPECT_EQ(cut, mc.dropped);
}

// llama-server closes a kept-alive connection shortly after a streamed
// response. A request sent at once on that connection is written before the
// close arrives and then reads EOF; it never reached the server, so the client
// must send it again on a fresh connection rather than count a failure. The
// server here answers one request per connection and closes 100 ms later.
TEST(BenchE2E, RequestOnAConnectionTheServerIsClosingIsResent) {
  int port = 0;
  int lfd = testing::BindLoopback(true, &port);
  ASSERT_GE(lfd, 0);
  std::atomic<int> answered{0};
  std::thread server([&] {
    const std::string body =
        "data: {\"choices\":[{\"text\":\"hi\",\"finish_reason\":null}]}\n\n"
        "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}],"
        "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n";
    const std::string resp =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\n\r\n" + body;
    for (int conn = 0; conn < 2; ++conn) {
      pollfd p{lfd, POLLIN, 0};
      if (::poll(&p, 1, 3000) != 1) return;  // no second connection: the client gave up
      int fd = ::accept(lfd, nullptr, nullptr);
      if (fd < 0) return;
      std::string req;
      char buf[4096];
      // Read the head and the Content-Length body of one request.
      while (true) {
        ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) break;
        req.append(buf, static_cast<size_t>(n));
        size_t head = req.find("\r\n\r\n");
        if (head == std::string::npos) continue;
        size_t cl = req.find("Content-Length: ");
        size_t want = cl == std::string::npos ? 0 : std::stoul(req.substr(cl + 16));
        if (req.size() >= head + 4 + want) break;
      }
      ssize_t w = ::send(fd, resp.data(), resp.size(), MSG_NOSIGNAL);
      (void)w;
      answered++;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ::close(fd);
    }
  });
  ClientOptions c;
  c.url = "http://127.0.0.1:" + std::to_string(port);
  c.timeout_s = 5;
  auto client = StreamClient::Create(c);
  ASSERT_TRUE(client.ok());
  RequestRecord a, b;
  (*client)->Send({1, 2, 3}, 1, &a);
  (*client)->Send({1, 2, 3}, 1, &b);  // at once: lands on the connection being closed
  server.join();
  ::close(lfd);
  EXPECT_TRUE(a.ok) << a.error;
  EXPECT_TRUE(b.ok) << b.error;
  EXPECT_EQ(answered.load(), 2);
}

TEST(BenchE2E, UnreachableServerFailsEveryRequest) {
  // A port held bound but not listening: connections are refused.
  int port = 0;
  int fd = testing::BindLoopback(false, &port);
  ASSERT_GE(fd, 0);
  ClientOptions c;
  c.url = "http://127.0.0.1:" + std::to_string(port);
  c.timeout_s = 2;
  auto w = SmallAgentic(1, 2);
  auto run = RunBench(*w, c, {});
  ASSERT_TRUE(run.ok());
  Summary s = Summarize(run->records, {});
  EXPECT_EQ(s.completed, 0);
  EXPECT_EQ(s.failed, 2);
  EXPECT_NE(run->records[0].error.find("transport"), std::string::npos);
  ::close(fd);
}

TEST(BenchE2E, TimingsTextChatAndWarmup) {
  MockOptions mo;
  mo.ttft_s = 0.03;
  mo.token_gap_s = 0.004;
  mo.report_usage = false;
  mo.llama_timings = true;
  MockOpenAiServer mock(mo);
  ASSERT_TRUE(mock.Start().ok());
  auto w = SmallAgentic(2, 2);
  for (PromptMode mode : {PromptMode::kText, PromptMode::kChat}) {
    RunOptions ro;
    ro.concurrency = 1;
    ro.warmup = 1;
    auto run = RunBench(*w, Client(mock, mode), ro);
    ASSERT_TRUE(run.ok());
    ASSERT_EQ(run->records.size(), 4u);
    EXPECT_TRUE(run->records[0].warmup);
    Summary s = Summarize(run->records, {});
    EXPECT_EQ(s.completed, 3);
    EXPECT_EQ(s.warmup, 1);
    EXPECT_EQ(s.cache_reuse_source, "timings");
    for (const RequestRecord& r : run->records) {
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_GE(r.ttft_s, 0.03);
      EXPECT_GE(r.e2e_s, 0.03 + 0.004 * (r.max_tokens - 1));
      EXPECT_FALSE(r.output_from_usage);  // counted chunks
      EXPECT_EQ(r.output_tokens, r.max_tokens);
      EXPECT_GE(r.prompt_tokens, 1);
    }
    // Measured on the receive side, where a loaded machine bunches chunks:
    // only its presence is checked here (the figure itself is a benchmark's).
    ASSERT_TRUE(s.interactivity_p50.has_value());
    EXPECT_GT(*s.interactivity_p50, 0);
  }
}

TEST(BenchE2E, OpenLoopMooncakeAndTraceSubagents) {
  MockOpenAiServer mock({});
  ASSERT_TRUE(mock.Start().ok());
  TokenSpace space = *TokenSpace::ForVocab(1000, 2);
  WorkloadOptions wo;
  wo.length_scale = 1.0 / 64;
  auto reqs = ParseMooncake(
      "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 64, \"hash_ids\": [0, 1]}\n"
      "{\"timestamp\": 150, \"input_length\": 1000, \"output_length\": 64, \"hash_ids\": [0, 1]}\n"
      "{\"timestamp\": 300, \"input_length\": 1500, \"output_length\": 64, \"hash_ids\": [0, 1, 2]}\n",
      "m");
  ASSERT_TRUE(reqs.ok());
  auto moon = MooncakeWorkload::FromRequests(*reqs, space, wo);
  RunOptions ro;
  ro.open_loop = true;
  ro.ideal_block_tokens = 8;
  auto run = RunBench(*moon, Client(mock), ro);
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->records.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(run->records[i].ok) << run->records[i].error;
    EXPECT_GE(run->records[i].send_s, 0.15 * static_cast<double>(i) - 1e-3);
  }
  EXPECT_EQ(run->records[1].ideal_cached_tokens, 8);  // same 16 tokens again; the last block holds the last token
  EXPECT_EQ(run->records[2].ideal_cached_tokens, 16);

  // A trace with a sub-agent: the child session runs beside its parent.
  auto trace = ParseKvTrace(R"({"id": "t", "requests": [
      {"in": 128, "out": 64, "hash_ids": [1, 2]},
      {"type": "subagent", "requests": [{"in": 128, "out": 64, "hash_ids": [1, 7]}]},
      {"in": 192, "out": 64, "hash_ids": [1, 2, 3], "think_time": 0.01}]})",
                            "t");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  wo.length_scale = 0.25;
  auto kv = KvCacheTesterWorkload::FromTraces({*trace}, space, wo);
  auto run2 = RunBench(*kv, Client(mock), RunOptions{});
  ASSERT_TRUE(run2.ok());
  ASSERT_EQ(run2->records.size(), 3u);
  int children = 0;
  for (const RequestRecord& r : run2->records) {
    EXPECT_TRUE(r.ok) << r.error;
    children += r.session == "t#0/sub0";
  }
  EXPECT_EQ(children, 1);
}

TEST(BenchCli, ArgumentsRunAndCompare) {
  auto call = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return BenchMain(static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_EQ(call({"bench", "--help"}), 0);
  EXPECT_EQ(call({"bench", "compare", "--help"}), 0);
  EXPECT_EQ(call({"bench", "--concurrency", "abc"}), 2);
  EXPECT_EQ(call({"bench", "--workload", "agentic"}), 2);  // no --url
  EXPECT_EQ(
      call({"bench", "--url", "http://127.0.0.1:1", "--workload", "agentic", "--duration", "1", "--max-requests", "2"}),
      2);
  EXPECT_EQ(call({"bench", "--url", "ftp://x", "--workload", "agentic"}), 2);
  EXPECT_EQ(call({"bench", "compare", "only-one.json"}), 2);

  MockOptions mo;
  mo.vocab_size = 500;
  MockOpenAiServer mock(mo);
  ASSERT_TRUE(mock.Start().ok());
  EXPECT_EQ(call({"bench", "--url", mock.url(), "--workload", "nope"}), 2);
  std::string dir = ::testing::TempDir() + "/bench_cli_" + std::to_string(getpid());
  std::string common = "--workload agentic --ctx-max 512 --turns 2 --out-median 8 --tool-gap-s 0 --no-progress";
  auto run = [&](const std::string& sub, const std::string& extra) {
    std::vector<std::string> args = {"bench", "--url", mock.url(), "--out", dir + "/" + sub};
    std::istringstream in(common + " " + extra);
    std::string a;
    while (in >> a) args.push_back(a);
    return call(args);
  };
  ASSERT_EQ(run("a", "--concurrency 1 --label base --gpu-hour-cost 2"), 0);
  ASSERT_EQ(run("b", "--sweep-concurrency 1,2 --label opt"), 0);
  for (const char* f : {"a/run.json", "a/summary.md", "a/ttft_cdf.svg", "a/throughput_vs_interactivity.svg",
                        "a/cache_reuse_over_time.svg", "b/run-c1.json", "b/run-c2.json"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + f)) << f;
  }
  auto rep = LoadRunReport(dir + "/a/run.json");
  ASSERT_TRUE(rep.ok());
  EXPECT_EQ(rep->summary.label, "base");
  EXPECT_EQ(rep->config["vocab_size"], 500);
  EXPECT_EQ(rep->config["vocab_source"], "/v1/models");
  EXPECT_TRUE(rep->summary.cost_per_mtok.has_value());
  EXPECT_EQ(rep->summary.completed, static_cast<int64_t>(rep->records.size()));
  std::string ref = std::string(PROSGROW_SHARED_DIR) + "/data/reference/published.csv";
  std::vector<std::string> cmp = {"bench",        "compare", dir + "/a/run.json", dir + "/b/run-c2.json", "--plots",
                                  dir + "/plots", "--out",   dir + "/cmp.md"};
  if (std::filesystem::exists(ref)) {
    cmp.push_back("--reference");
    cmp.push_back(ref);
  }
  EXPECT_EQ(call(cmp), 0);
  EXPECT_TRUE(std::filesystem::exists(dir + "/plots/ttft_cdf.svg"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/plots/cache_reuse_over_time_2.svg"));
  std::ifstream md(dir + "/cmp.md");
  std::string first;
  std::getline(md, first);
  EXPECT_EQ(first, "| metric | base | opt c2 |");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pg::bench
