// prosgrow generate: one prompt through the engine (same path as the server),
// printing the text as it is produced, or one JSON object with --json.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/cli_util.h"
#include "base/clock.h"
#include "engine/engine.h"
#include "engine_flags.h"
#include "subcommands.h"

namespace pg {

namespace {

struct GenerateFlags {
  EngineFlags ef;
  std::string prompt;
  int n_predict = 64;
  float temp = 0.8f, top_p = 1.0f, min_p = 0.0f;
  int top_k = 0;
  int64_t seed = -1;
  bool json = false, ignore_eos = false, cache_report = false;
};

void AddGenerateFlags(CLI::App& app, GenerateFlags* f) {
  f->ef.max_seqs = 1;
  AddEngineFlags(app, &f->ef);
  app.add_option("-p,--prompt", f->prompt, "prompt text")->required();
  app.add_option("-n,--n-predict", f->n_predict, "tokens to generate")->check(CLI::Range(1, 1 << 20));
  app.add_option("--temp", f->temp, "temperature (0 = greedy)")->check(CLI::Range(0.0f, 100.0f));
  app.add_option("--top-k", f->top_k, "top-k (0 = off)")->check(CLI::Range(0, 1 << 24));
  app.add_option("--top-p", f->top_p, "top-p in (0, 1]")->check(CLI::Range(1e-6f, 1.0f));
  app.add_option("--min-p", f->min_p, "min-p in [0, 1]")->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--seed", f->seed, "RNG seed (default: random)")->check(CLI::Range(int64_t{-1}, INT64_MAX));
  app.add_flag("--json", f->json, "print one JSON object with tokens and top-10 logprobs");
  app.add_flag("--ignore-eos", f->ignore_eos, "keep generating past end-of-generation tokens");
  app.add_flag("--cache-report", f->cache_report, "print per-tier KV cache counters at the end (stderr)");
}

GenerationRequest RequestOf(const GenerateFlags& f, std::vector<int32_t> prompt) {
  GenerationRequest req;
  req.id = "generate-0";
  req.prompt = std::move(prompt);
  req.sampling.temperature = f.temp;
  req.sampling.top_k = f.top_k;
  req.sampling.top_p = f.top_p;
  req.sampling.min_p = f.min_p;
  req.sampling.max_tokens = f.n_predict;
  req.sampling.ignore_eos = f.ignore_eos;
  if (f.seed >= 0) {
    req.sampling.has_seed = true;
    req.sampling.seed = static_cast<uint64_t>(f.seed);
  }
  if (f.json) {
    req.sampling.logprobs = true;
    req.sampling.top_logprobs = 10;
  }
  req.arrival_s = NowSeconds();
  return req;
}

// What the run produced.
struct Generated {
  std::vector<int32_t> prompt_tokens, out_tokens;
  nlohmann::json top = nlohmann::json::array();
  std::string text;
  FinishEvent finish;
  double seconds = 0;
};

void PrintJson(const Generated& g, bool spec) {
  nlohmann::json j;
  j["prompt_tokens"] = g.prompt_tokens;
  j["tokens"] = g.out_tokens;
  j["text"] = g.text;
  j["top_logprobs"] = g.top;
  j["finish_reason"] = g.finish.finish_reason;
  j["cached_tokens"] = g.finish.cache.cached_tokens;
  if (spec)
    j["speculative"] = {{"steps", g.finish.spec.steps},
                        {"drafted_tokens", g.finish.spec.drafted},
                        {"accepted_tokens", g.finish.spec.accepted},
                        {"synthetic_acceptance", g.finish.spec.synthetic}};
  std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::printf("%s\n", s.c_str());
}

void PrintSummary(const Generated& g, const std::string& speculative) {
  const SpecUsage& sp = g.finish.spec;
  std::fprintf(stderr, "[%zu prompt tokens (%lld cached), %zu generated in %.2f s, %s]\n", g.prompt_tokens.size(),
               static_cast<long long>(g.finish.cache.cached_tokens), g.out_tokens.size(), g.seconds,
               g.finish.finish_reason.c_str());
  if (speculative.empty()) return;
  std::fprintf(stderr, "[speculative %s: %lld steps, %lld drafted, %lld accepted (rate %.3f, mean length %.2f)%s]\n",
               speculative.c_str(), static_cast<long long>(sp.steps), static_cast<long long>(sp.drafted),
               static_cast<long long>(sp.accepted),
               sp.drafted ? static_cast<double>(sp.accepted) / static_cast<double>(sp.drafted) : 0.0,
               sp.steps ? 1.0 + static_cast<double>(sp.accepted) / static_cast<double>(sp.steps) : 0.0,
               sp.synthetic ? " SYNTHETIC: not the model's output" : "");
}

}  // namespace

int GenerateMain(int argc, char** argv) {
  CLI::App app("Generate text from a prompt", "prosgrow generate");
  GenerateFlags f;
  AddGenerateFlags(app, &f);
  if (int rc = ParseCli(app, argc, argv); rc >= 0) return rc;

  auto config = ToEngineConfig(f.ef);
  if (!config.ok()) return Fail("generate", config.status().message());
  auto engine = Engine::Create(*config);
  if (!engine.ok()) return Fail("generate", engine.status().message());
  Engine& e = **engine;
  const Tokenizer& tok = e.tokenizer();
  Generated g;
  g.prompt_tokens = tok.Encode(f.prompt, true, true);
  if (g.prompt_tokens.empty()) return Fail("generate", "the prompt encodes to no tokens");
  IncrementalDecoder dec(tok);
  Status st = e.Submit(RequestOf(f, g.prompt_tokens), [&](const ServiceEvent& ev) {
    if (ev.kind == ServiceEvent::Kind::kFinish) {
      g.finish = ev.finish;
      return;
    }
    g.out_tokens.push_back(ev.token.token);
    std::string piece = dec.Push(ev.token.token);
    g.text += piece;
    if (f.json) {
      nlohmann::json row = nlohmann::json::array();
      for (auto& [id, lp] : ev.token.top) row.push_back({{"id", id}, {"logprob", lp}});
      g.top.push_back(std::move(row));
    } else {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
  });
  if (!st.ok()) return Fail("generate", st.message());
  const double t0 = NowSeconds();
  e.RunUntilIdle();
  g.seconds = NowSeconds() - t0;
  std::string tail = dec.Flush();
  g.text += tail;
  if (g.finish.finish_reason == "error") return Fail("generate", g.finish.error);
  if (f.json) {
    PrintJson(g, config->spec.enabled());
  } else {
    std::fwrite(tail.data(), 1, tail.size(), stdout);
    std::printf("\n");
    PrintSummary(g, config->spec.enabled() ? e.info().speculative : "");
  }
  Status flush = e.FlushCache();
  if (!flush.ok()) std::fprintf(stderr, "prosgrow generate: warning: %s\n", flush.message().c_str());
  if (f.cache_report) {
    const CacheUsage& cu = g.finish.cache;
    std::fprintf(stderr, "cache: prompt %zu tokens, reused %lld (device %lld, host %lld, disk %lld)\n%s\n",
                 g.prompt_tokens.size(), static_cast<long long>(cu.cached_tokens),
                 static_cast<long long>(cu[kDeviceTier]), static_cast<long long>(cu[kHostTier]),
                 static_cast<long long>(cu[kDiskTier]), e.cache_counters().Report().c_str());
  }
  return 0;
}

}  // namespace pg
