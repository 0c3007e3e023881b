// prosgrow generate: one prompt through the engine (same path as the server),
// printing the text as it is produced, or one JSON object with --json.
#include <nlohmann/json.hpp>

#include <cstdio>

#include "base/clock.h"
#include "base/cli_util.h"
#include "engine/engine.h"
#include "engine_flags.h"
#include "subcommands.h"

namespace pg {

int GenerateMain(int argc, char** argv) {
  CLI::App app("Generate text from a prompt", "prosgrow generate");
  EngineFlags ef;
  ef.max_seqs = 1;
  AddEngineFlags(app, &ef);
  std::string prompt;
  int n_predict = 64;
  float temp = 0.8f, top_p = 1.0f, min_p = 0.0f;
  int top_k = 0;
  int64_t seed = -1;
  bool json = false, ignore_eos = false, cache_report = false;
  app.add_option("-p,--prompt", prompt, "prompt text")->required();
  app.add_option("-n,--n-predict", n_predict, "tokens to generate")->check(CLI::Range(1, 1 << 20));
  app.add_option("--temp", temp, "temperature (0 = greedy)")->check(CLI::Range(0.0f, 100.0f));
  app.add_option("--top-k", top_k, "top-k (0 = off)")->check(CLI::Range(0, 1 << 24));
  app.add_option("--top-p", top_p, "top-p in (0, 1]")->check(CLI::Range(1e-6f, 1.0f));
  app.add_option("--min-p", min_p, "min-p in [0, 1]")->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--seed", seed, "RNG seed (default: random)")->check(CLI::Range(int64_t{-1}, INT64_MAX));
  app.add_flag("--json", json, "print one JSON object with tokens and top-10 logprobs");
  app.add_flag("--ignore-eos", ignore_eos, "keep generating past end-of-generation tokens");
  app.add_flag("--cache-report", cache_report, "print per-tier KV cache counters at the end (stderr)");
  if (int rc = ParseCli(app, argc, argv); rc >= 0) return rc;

  auto config = ToEngineConfig(ef);
  if (!config.ok()) return Fail("generate", config.status().message());
  auto engine = Engine::Create(*config);
  if (!engine.ok()) return Fail("generate", engine.status().message());
  Engine& e = **engine;
  const Tokenizer& tok = e.tokenizer();

  GenerationRequest req;
  req.id = "generate-0";
  req.prompt = tok.Encode(prompt, true, true);
  if (req.prompt.empty()) return Fail("generate", "the prompt encodes to no tokens");
  req.sampling.temperature = temp;
  req.sampling.top_k = top_k;
  req.sampling.top_p = top_p;
  req.sampling.min_p = min_p;
  req.sampling.max_tokens = n_predict;
  req.sampling.ignore_eos = ignore_eos;
  if (seed >= 0) {
    req.sampling.has_seed = true;
    req.sampling.seed = static_cast<uint64_t>(seed);
  }
  if (json) {
    req.sampling.logprobs = true;
    req.sampling.top_logprobs = 10;
  }
  req.arrival_s = NowSeconds();
  const std::vector<int32_t> prompt_tokens = req.prompt;

  std::vector<int32_t> out_tokens;
  nlohmann::json top = nlohmann::json::array();
  std::string text;
  FinishEvent finish;
  IncrementalDecoder dec(tok);
  Status st = e.Submit(std::move(req), [&](const ServiceEvent& ev) {
    if (ev.kind == ServiceEvent::Kind::kFinish) {
      finish = ev.finish;
      return;
    }
    out_tokens.push_back(ev.token.token);
    std::string piece = dec.Push(ev.token.token);
    text += piece;
    if (json) {
      nlohmann::json row = nlohmann::json::array();
      for (auto& [id, lp] : ev.token.top) row.push_back({{"id", id}, {"logprob", lp}});
      top.push_back(std::move(row));
    } else {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
  });
  if (!st.ok()) return Fail("generate", st.message());
  const double t0 = NowSeconds();
  e.RunUntilIdle();
  const double dt = NowSeconds() - t0;
  std::string tail = dec.Flush();
  text += tail;
  if (finish.finish_reason == "error") return Fail("generate", finish.error);
  if (json) {
    nlohmann::json j;
    j["prompt_tokens"] = prompt_tokens;
    j["tokens"] = out_tokens;
    j["text"] = text;
    j["top_logprobs"] = top;
    j["finish_reason"] = finish.finish_reason;
    j["cached_tokens"] = finish.cache.cached_tokens;
    if (config->spec.enabled())
      j["speculative"] = {{"steps", finish.spec.steps},
                          {"drafted_tokens", finish.spec.drafted},
                          {"accepted_tokens", finish.spec.accepted},
                          {"synthetic_acceptance", finish.spec.synthetic}};
    std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::printf("%s\n", s.c_str());
  } else {
    std::fwrite(tail.data(), 1, tail.size(), stdout);
    std::printf("\n");
    std::fprintf(stderr, "[%zu prompt tokens (%lld cached), %zu generated in %.2f s, %s]\n", prompt_tokens.size(),
                 static_cast<long long>(finish.cache.cached_tokens), out_tokens.size(), dt,
                 finish.finish_reason.c_str());
    if (config->spec.enabled())
      std::fprintf(stderr, "[speculative %s: %lld steps, %lld drafted, %lld accepted (rate %.3f, mean length %.2f)%s]\n",
                   e.info().speculative.c_str(), static_cast<long long>(finish.spec.steps),
                   static_cast<long long>(finish.spec.drafted), static_cast<long long>(finish.spec.accepted),
                   finish.spec.drafted ? static_cast<double>(finish.spec.accepted) / static_cast<double>(finish.spec.drafted) : 0.0,
                   finish.spec.steps ? 1.0 + static_cast<double>(finish.spec.accepted) / static_cast<double>(finish.spec.steps) : 0.0,
                   finish.spec.synthetic ? " SYNTHETIC: not the model's output" : "");
  }
  Status flush = e.FlushCache();
  if (!flush.ok()) std::fprintf(stderr, "prosgrow generate: warning: %s\n", flush.message().c_str());
  if (cache_report) {
    std::fprintf(stderr, "cache: prompt %zu tokens, reused %lld (device %lld, host %lld, disk %lld)\n%s\n",
                 prompt_tokens.size(), static_cast<long long>(finish.cache.cached_tokens),
                 static_cast<long long>(finish.cache.device_tokens), static_cast<long long>(finish.cache.host_tokens),
                 static_cast<long long>(finish.cache.disk_tokens), e.cache_counters().Report().c_str());
  }
  return 0;
}

}  // namespace pg
