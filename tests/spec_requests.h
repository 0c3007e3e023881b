// The speculative-decoding tests' request driver: a batch of prompts made by
// one pattern, submitted together, each request's tokens and speculation
// counts collected (spec_draft_test.cc, spec_mtp_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace pg::test {

struct SpecRun {
  std::vector<int32_t> tokens;
  SpecUsage spec;
};

// Request i's prompt has len0 + len_step * i tokens; token j is
// first + (j * mul + (j < shared ? 0 : i * salt)) % span, so the first
// `shared` tokens are the same in every request.
struct PromptPattern {
  const char* id_prefix;
  int len0, len_step;
  int32_t first;
  int mul, salt, span;
};

inline std::vector<SpecRun> RunSpecRequests(Engine& e, const PromptPattern& p, int n_requests, int n, float temp,
                                            int shared) {
  std::vector<SpecRun> out(static_cast<size_t>(n_requests));
  for (int i = 0; i < n_requests; ++i) {
    GenerationRequest r;
    r.id = p.id_prefix + std::to_string(i);
    for (int j = 0; j < p.len0 + p.len_step * i; ++j)
      r.prompt.push_back(p.first + (j * p.mul + (j < shared ? 0 : i * p.salt)) % p.span);
    r.sampling.temperature = temp;
    r.sampling.top_k = 8;
    r.sampling.max_tokens = n;
    r.sampling.ignore_eos = true;
    SpecRun* o = &out[static_cast<size_t>(i)];
    EXPECT_TRUE(e.Submit(r, [o](const ServiceEvent& ev) {
                   if (ev.kind == ServiceEvent::Kind::kToken)
                     o->tokens.push_back(ev.token.token);
                   else
                     o->spec = ev.finish.spec;
                 }).ok());
  }
  e.RunUntilIdle();
  return out;
}

}  // namespace pg::test
