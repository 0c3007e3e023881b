// InferenceService: the boundary between the HTTP server and the engine.
//
// The server (src/server) parses JSON, renders chat templates and tokenizes on
// its own threads, then hands a GenerationRequest to Submit(). The engine
// thread produces events for it through the callback; the server turns them
// into SSE chunks or one JSON body. The server never includes kv/ or backend/.
//
// Thread-safety: every method may be called from any thread. The callback is
// invoked on the engine thread, in order, one event at a time per request; it
// must not block for long (copy into a queue and return). After a FinishEvent
// no further events arrive for that request.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/kv_tier.h"
#include "base/sampling_defaults.h"
#include "base/status.h"

namespace pg {

class Tokenizer;
class CompiledConstraint;  // src/constrain/constraint.h

// What Sampler (src/engine/sampler.h) does with each field, and in which
// order, is written there.
struct SamplingParams {
  float temperature = 1.0f;         // 0 (below 1e-5) = greedy
  float top_p = 1.0f;               // (0, 1]
  int top_k = 0;                    // 0 = off
  float min_p = 0.0f;               // 0 = off
  float presence_penalty = 0.0f;    // [-2, 2], over generated tokens; 0 = off
  float frequency_penalty = 0.0f;   // [-2, 2], per occurrence in generated tokens; 0 = off
  float repetition_penalty = 1.0f;  // > 0, over prompt and generated tokens; 1 = off
  // (token id, additive bias in [-100, 100]), ids < n_vocab, each id once.
  std::vector<std::pair<int32_t, float>> logit_bias;
  bool has_seed = false;  // seeded: the request's own RNG, so reproducible
  uint64_t seed = 0;
  int max_tokens = 256;  // completion tokens
  // No end of generation (EOS, stop_token_ids) before this many completion
  // tokens: the engine masks those tokens until then (vLLM's min_tokens).
  int min_tokens = 0;
  bool ignore_eos = false;  // EOS does not end the sequence (stop_token_ids still do)
  // Tokens that end the sequence like EOS (finish "stop"); the token itself is
  // part of the output (vLLM's stop_token_ids). Each < n_vocab.
  std::vector<int32_t> stop_token_ids;
  int top_logprobs = 0;   // 0..20 alternatives per position
  bool logprobs = false;  // report the chosen token's logprob
};

// One retention instruction for the KV of a prompt prefix (KV hints on
// OpenAI requests, cache_control breakpoints on Anthropic ones). What each
// action does in the tiers is written in docs/kv-cache.md.
struct KvHint {
  enum class Action { kRetain, kPin, kDemote, kPrefetch };
  Action action = Action::kRetain;
  int64_t prefix_tokens = -1;  // the first N prompt tokens; -1 = the whole prompt
  double ttl_s = -1;           // how long the hint holds; < 0 = the server's default
};

struct GenerationRequest {
  std::string id;               // unique, chosen by the server
  std::vector<int32_t> prompt;  // token ids, already validated < vocab size
  SamplingParams sampling;
  std::string session_id;  // agent session ("" = none); the server scopes it by tenant
  // KV cache salt (CacheRequest::salt): the tenant's cache group and the
  // request's cache_salt, set by the server (server/common/tenant.h); "" = the
  // shared cache of a server without API keys.
  std::string cache_salt;
  double cache_ttl_s = -1;       // retention hint; < 0 = none
  std::vector<KvHint> kv_hints;  // explicit retention hints, in request order
  double arrival_s = 0;          // NowSeconds() at arrival
  // Structured output / enforced tool calls: the grammar the output must
  // follow (null = free text). Built by the server for this tokenizer; the
  // engine keeps a per-sequence matcher and masks every sampling step.
  std::shared_ptr<const CompiledConstraint> constraint;
};

struct TokenEvent {
  int32_t token = -1;
  float logprob = 0;                           // of the chosen token (full softmax)
  std::vector<std::pair<int32_t, float>> top;  // top_logprobs alternatives
};

// Why the prompt tokens that were not cached missed; the five counts sum to
// prompt_tokens - cached_tokens (docs/kv-cache.md defines each reason).
struct MissReasons {
  int64_t never_seen = 0;  // no tier ever held this prefix
  int64_t evicted = 0;     // a tier held it and dropped it (= evicted_by_tier.total())
  // ... by the tier it was last held in (device, host, disk; as kv's MissCounts::evicted)
  TierTokens evicted_by_tier;
  int64_t diverged = 0;       // the prefix matched up to a block, then differed
  int64_t loading = 0;        // a promotion did not finish in time
  int64_t policy = 0;         // skipped by policy (quota, fair share)
  double evicted_age_s = -1;  // seconds since the first evicted block of the prompt was dropped; -1 = none
};

// The prompt tokens of one request served from each tier (TierTokens: device,
// host, disk, remote = fetched from Redis/Valkey), their sum, and why the rest missed.
struct CacheUsage : TierTokens {
  int64_t cached_tokens = 0;  // prompt tokens not recomputed (= total())
  MissReasons miss;
};

// Speculative decoding of one request (a prosgrow extension of usage).
struct SpecUsage {
  int64_t steps = 0;       // verification steps that carried a draft
  int64_t drafted = 0;     // draft tokens verified
  int64_t accepted = 0;    // draft tokens accepted
  bool synthetic = false;  // benchmark-only synthetic acceptance: the output is NOT the model's own
};

struct FinishEvent {
  std::string finish_reason;  // "stop" (EOS), "length", "cancelled", "error"
  std::string error;          // when finish_reason == "error"
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  CacheUsage cache;
  double queue_s = 0;  // arrival -> first scheduled
  double ttft_s = 0;   // arrival -> first token
  SpecUsage spec;      // speculative decoding counts (zeros when off)
};

struct ServiceEvent {
  enum class Kind { kToken, kFinish } kind = Kind::kToken;
  TokenEvent token;
  FinishEvent finish;
  // On a request's first kToken only: the prompt's cache split (as
  // FinishEvent.cache reports it), so a response can open with it.
  bool has_cache = false;
  CacheUsage cache;
};

using EventCallback = std::function<void(const ServiceEvent&)>;

struct ServiceInfo {
  std::string model_name;  // id reported by /v1/models
  int64_t n_vocab = 0;
  int64_t n_ctx = 0;  // max prompt + completion tokens per sequence
  // Most prompt + max_tokens one sequence can hold in the device KV tier when
  // it runs alone (device blocks x tokens per block); 0 = no bound beyond
  // n_ctx. Submit refuses (InvalidArgument) a request past it.
  int64_t max_seq_tokens = 0;
  std::string chat_template;  // tokenizer.chat_template ("" if none)
  // The model's default sampling (generation_config.json of a Hugging Face
  // directory): the server applies it to each request's unset fields.
  SamplingDefaults sampling_defaults;
  std::string bos_token, eos_token;  // text of the special tokens
  // KV events (--kv-events): the ZMQ endpoints routers subscribe to ("" =
  // not published) and tokens per block; reported by GET /kv-events.
  std::string kv_events_endpoint;
  std::string kv_events_replay_endpoint;
  std::string kv_events_topic;
  std::string kv_events_curve_public_key;  // Z85; "" = plain ZMQ (no CURVE)
  bool kv_events_token_ids = true;         // BlockStored carries token ids (--kv-events-tokens)
  int64_t kv_block_size = 0;
  std::string speculative;  // drafters of speculative decoding ("ngram,suffix"); "" = off
  // Benchmark-only synthetic acceptance (--spec-synthetic-acceptance-length):
  // > 0 means outputs are NOT the model's own; servers must say so.
  double synthetic_acceptance_length = 0;
  // True when a request's cache_ttl_s is honoured (--policy optimized keeps
  // session deadlines); otherwise the server refuses the field (400).
  bool honours_cache_ttl = false;
};

class InferenceService {
 public:
  virtual ~InferenceService() = default;

  virtual const ServiceInfo& info() const = 0;
  virtual const Tokenizer& tokenizer() const = 0;
  // False while the model loads (/health answers 503).
  virtual bool ready() const = 0;

  // Queues the request. ResourceExhausted when the queue is full (HTTP 429),
  // InvalidArgument when the prompt does not fit the context (HTTP 400).
  virtual Status Submit(GenerationRequest request, EventCallback on_event) = 0;
  // Cancels a queued or running request (client disconnect, stop string).
  // Its KV is freed within one engine step; a FinishEvent "cancelled" follows
  // unless the request already finished. Unknown ids are ignored.
  virtual void Cancel(const std::string& request_id) = 0;
  // Drops the retention of an agent session's KV (POST /v1/sessions/{id}/release).
  virtual void ReleaseSession(const std::string& session_id) = 0;
  // Marks that a session's last turn ended in a tool call (optimized policy parks its KV).
  virtual void NoteToolCall(const std::string& session_id) = 0;

  // The KV-event hashes (63-bit, kvevents/kv_event.h) of the prompt's full
  // blocks under cache salt `salt` (GenerationRequest::cache_salt): the
  // names this replica's KV events give those blocks, so a router can match
  // a prompt on hashes alone (/tokenize reports them). Pure; any thread.
  // A service without a prefix cache returns none.
  virtual std::vector<uint64_t> PromptBlockHashes(const std::vector<int32_t>& prompt, const std::string& salt) const {
    (void)prompt;
    (void)salt;
    return {};
  }

  // Prometheus text-format lines for engine/cache gauges and counters
  // (queue depth, running sequences, batch tokens, per-tier KV counters...).
  virtual std::string MetricsText() const = 0;
};

}  // namespace pg
