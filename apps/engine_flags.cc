#include "engine_flags.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

#include "base/units.h"
#include "device_flag.h"
#include "synth/make_model.h"

namespace pg {

namespace {

// The KV tiers this process keeps: sizes, eviction, writes, promotion.
void AddKvTierFlags(CLI::App& app, EngineFlags* f) {
  app.add_option("--kv-device-mem", f->kv_device_mem, "device-tier KV memory, e.g. 512MiB (0 is refused)");
  app.add_option("--kv-host-mem", f->kv_host_mem,
                 "host-tier KV memory (optimized; default 4x device; 0 = no host tier)");
  app.add_option("--kv-disk-dir", f->kv_disk_dir, "disk-tier directory (optimized); made 0700, its block files 0600");
  app.add_option("--kv-disk-size", f->kv_disk_size, "disk-tier cap, e.g. 4GiB (default 4GiB; 0 = no disk tier)");
  app.add_option("--kv-eviction", f->kv_eviction, "eviction: lru | cost (default per policy)")
      ->check(CLI::IsMember({"lru", "cost"}));
  app.add_option("--kv-write-policy", f->kv_write_policy, "write-through | write-back")
      ->check(CLI::IsMember({"write-through", "write-back"}));
  app.add_option("--kv-min-promote", f->kv_min_promote, "host/disk hits shorter than this are recomputed")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  app.add_flag("--no-prefix-cache", f->no_prefix_cache, "disable prefix reuse");
  app.add_option("--kv-debug-load-delay", f->kv_debug_load_delay,
                 "fault injection: every host/disk promotion waits this many seconds first (a slow tier)")
      ->check(CLI::Range(0.0, 60.0));
}

// What the process shares with a fleet: KV events, the remote tier, and the secrets of both.
void AddKvFleetFlags(CLI::App& app, EngineFlags* f) {
  app.add_option("--kv-events", f->kv_events,
                 "publish KV events in vLLM's format (ZMQ PUB, msgpack): bound when a wildcard (tcp://*:5557), "
                 "else connected to (a subscriber that binds, as llm-d's endpoint picker does)");
  app.add_option("--kv-events-topic", f->kv_events_topic,
                 "topic frame of every KV event message (llm-d: kv@POD@MODEL)");
  app.add_option("--kv-events-replay", f->kv_events_replay,
                 "ZMQ ROUTER endpoint answering replay requests for missed KV event batches, e.g. tcp://*:5558");
  app.add_option("--kv-remote", f->kv_remote,
                 "remote KV tier shared by replicas: redis://[[user]:password@]HOST[:PORT][/DB] (Redis or Valkey; "
                 "a Cluster node works too)");
  app.add_option("--kv-remote-ttl", f->kv_remote_ttl, "seconds a block stays in the remote tier (0 = no expiry)")
      ->check(CLI::Range(0.0, 31536000.0));
  app.add_option("--kv-remote-size", f->kv_remote_size,
                 "bytes this process may store in the remote tier, e.g. 8GiB (default and 0: no budget of its "
                 "own; Redis' maxmemory policy evicts)");
  app.add_option("--kv-remote-timeout-ms", f->kv_remote_timeout_ms,
                 "how long a request waits for its remote-tier lookup before recomputing")
      ->check(CLI::Range(1.0, 10000.0));
  app.add_option("--kv-remote-password-file", f->kv_remote_password_file,
                 "read the Redis AUTH password from this file (else $PROSGROW_REDIS_PASSWORD, else the URL's); "
                 "never printed");
  app.add_option("--kv-remote-secret-file", f->kv_remote_secret_file,
                 "HMAC-SHA256 key (16+ bytes) authenticating every remote-tier value; without it the tier trusts "
                 "everyone who can write to Redis");
  app.add_option("--kv-events-tokens", f->kv_events_tokens,
                 "publish token ids in BlockStored events: on | off | auto (off when an API key is set)")
      ->check(CLI::IsMember({"on", "off", "auto"}));
  app.add_option("--kv-events-curve-secret-file", f->kv_events_curve_secret_file,
                 "ZMQ CURVE: this server's secret key (40 Z85 characters; docs/kv-events.md makes one); "
                 "subscribers then need its public key (logged, and in GET /kv-events)");
  app.add_option("--kv-hash-secret-file", f->kv_hash_secret_file,
                 "the fleet secret (16+ bytes; else $PROSGROW_KV_HASH_SECRET): keys every KV block hash (HMAC-SHA256), "
                 "so the hashes on KV events, in Redis key names and in disk file names cannot be checked against "
                 "guessed prompts without it; replicas share blocks only under the same secret");
}

}  // namespace

void AddEngineFlags(CLI::App& app, EngineFlags* f) {
  app.add_option("-m,--model", f->model, "GGUF model file (default: the built-in synthetic model, made on first use)");
  app.add_option("--policy", f->policy, "KV/scheduling policy: baseline | optimized")
      ->check(CLI::IsMember({"baseline", "optimized"}));
  app.add_option("--threads", f->threads, "compute threads (default: cores)")->check(CLI::Range(0, 1024));
  app.add_option("--ctx-size", f->ctx_size, "max tokens per sequence (default: min(model context, 8192))")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
  app.add_option("--max-batch-tokens", f->max_batch_tokens, "tokens per forward step")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_option("--max-seqs", f->max_seqs, "max running sequences")->check(CLI::Range(int64_t{1}, int64_t{4096}));
  app.add_option("--prefill-slice", f->prefill_slice,
                 "optimized: while other requests share the server, a long prefill advances at most this many "
                 "tokens a step, and none in a step that finishes a shorter one (0 = whole chunks, also when "
                 "alone; default 64)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  app.add_option("--long-prefill-threshold", f->long_prefill_threshold,
                 "optimized: a prefill with more tokens left than this is long (--prefill-slice); alone it "
                 "advances at most this many tokens a step, or a slice if larger (default 256)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  app.add_option("--max-queue", f->max_queue, "max waiting requests (then 429)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_option("--kv-page-tokens", f->page_tokens, "tokens per KV block")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}));
  app.add_option("--kv-dtype", f->kv_dtype, "KV element type: f16 | bf16")->check(CLI::IsMember({"f16", "bf16"}));
  app.add_option("--attn", f->attn,
                 "arithmetic: fast (default; f32 tiled attention sharing K/V across a GQA group, several times "
                 "faster at long context, and weights repacked at load for ~1.7x faster Q8_0 matmuls) | llama "
                 "(llama.cpp's order: f16 online softmax one key at a time as llama.cpp computes short batches, "
                 "row-major Q8_0 dot products; log-probs differ slightly) | precise (fast's attention, and "
                 "matrix products on unquantized f32 activations: quantized models' logits much closer to "
                 "exact arithmetic, matmuls slower; docs/quality.md)")
      ->check(CLI::IsMember({"llama", "fast", "precise"}));
  app.add_option("--attn-sparse", f->attn_sparse,
                 "models with DeepSeek sparse attention (glm-dsa): sparse (default; each query reads only its "
                 "indexer's top-k latent rows) | dense-masked (scores every cached key and masks the unselected "
                 "ones, as llama.cpp does; the same bits, for checking)")
      ->check(CLI::IsMember({"sparse", "dense-masked"}));
  AddDeviceFlags(app, &f->device);
  AddKvTierFlags(app, f);
  AddKvFleetFlags(app, f);
  AddSpecFlags(app, &f->spec);
}

namespace {

// The first line of a secret file, without its line end; one-line errors naming the flag.
Result<std::string> ReadSecretFile(const std::string& path, const char* flag, size_t min_bytes) {
  std::ifstream in(path);
  if (!in) return IoError(fmt::format("{}: cannot read {}", flag, path));
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.size() < min_bytes)
    return InvalidArgument(fmt::format("{} {}: needs at least {} bytes", flag, path, min_bytes));
  return line;
}

// The fleet secret keying block hashes: --kv-hash-secret-file, else
// $PROSGROW_KV_HASH_SECRET, else "" (unkeyed).
Result<std::string> FleetHashSecret(const EngineFlags& f) {
  if (!f.kv_hash_secret_file.empty()) return ReadSecretFile(f.kv_hash_secret_file, "--kv-hash-secret-file", 16);
  const char* env = std::getenv("PROSGROW_KV_HASH_SECRET");
  if (env == nullptr || *env == '\0') return std::string();
  if (std::string_view(env).size() < 16) return InvalidArgument("PROSGROW_KV_HASH_SECRET: needs at least 16 bytes");
  return std::string(env);
}

}  // namespace

void AddSpecFlags(CLI::App& app, SpecFlags* f) {
  app.add_option("--spec", f->spec,
                 "speculative decoding: none (default) | ngram (prompt lookup in the request's own context) | suffix "
                 "(suffix decoding over recent requests) | draft (a draft model) | mtp (the model's own NextN layer); "
                 "several joined with commas are tried in order");
  app.add_option("--spec-draft-model", f->draft_model, "GGUF draft model for --spec draft (same vocabulary)");
  app.add_option("--spec-draft-max", f->draft_max, "most draft tokens verified per step (K)")->check(CLI::Range(1, 64));
  app.add_option("--spec-max-batch", f->max_batch,
                 "speculate only in steps with at most N running sequences, none of them prefilling (0 = always)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--spec-policy", f->policy,
                 "which proposed draft tokens to verify: goodput (default: each step, those whose expected tokens "
                 "are worth their measured cost) | always (all of them)");
  app.add_option("--spec-synthetic-acceptance-length", f->synthetic_length,
                 "BENCHMARK ONLY: accept drafts at random so a step yields L tokens on average (1 <= L <= K + 1); "
                 "outputs are then not the model's own");
}

Result<SpecConfig> ToSpecConfig(const SpecFlags& f) {
  SpecConfig c;
  PG_ASSIGN_OR_RETURN(c.drafters, ParseDrafterList(f.spec));
  c.draft_model = f.draft_model;
  c.draft_max = f.draft_max;
  c.max_batch = f.max_batch;
  PG_ASSIGN_OR_RETURN(c.policy, ParseSpecPolicy(f.policy));
  c.synthetic_length = f.synthetic_length;
  PG_RETURN_IF_ERROR(ValidateSpecConfig(c));
  return c;
}

Result<EngineConfig> ToEngineConfig(const EngineFlags& f) {
  EngineConfig c;
  PG_RETURN_IF_ERROR(ApplyDeviceFlags(f.device, &c));
  if (f.policy == "baseline" && (f.prefill_slice >= 0 || f.long_prefill_threshold >= 0))
    return InvalidArgument(
        "--policy baseline runs prefills first come, first served; drop --prefill-slice/--long-prefill-threshold");
  if (f.model.empty()) {
    PG_ASSIGN_OR_RETURN(c.model_path, EnsureDefaultModel(""));
  } else {
    c.model_path = f.model;
  }
  c.policy = f.policy == "baseline" ? ServePolicy::kBaseline : ServePolicy::kOptimized;
  c.threads = f.threads;
  c.ctx_size = f.ctx_size;
  c.max_batch_tokens = f.max_batch_tokens;
  c.max_seqs = f.max_seqs;
  if (f.prefill_slice >= 0) c.prefill_slice_tokens = f.prefill_slice;
  if (f.long_prefill_threshold >= 0) c.long_prefill_tokens = f.long_prefill_threshold;
  c.max_queue = f.max_queue;
  c.page_tokens = f.page_tokens;
  c.kv_bf16 = f.kv_dtype == "bf16";
  c.attention = f.attn == "llama"     ? AttentionMode::kLlamaF16
                : f.attn == "precise" ? AttentionMode::kPrecise
                                      : AttentionMode::kTiledF32;
  c.sparse_attention = f.attn_sparse == "dense-masked" ? SparseAttention::kDenseMasked : SparseAttention::kSparse;
  PG_ASSIGN_OR_RETURN(c.kv_device_bytes, ParseByteSize(f.kv_device_mem));
  if (c.kv_device_bytes == 0) return InvalidArgument("--kv-device-mem 0: the device tier needs room for a sequence");
  if (!f.kv_host_mem.empty()) {
    PG_ASSIGN_OR_RETURN(c.kv_host_bytes, ParseByteSize(f.kv_host_mem));
  }
  c.kv_disk_dir = f.kv_disk_dir;
  if (!f.kv_disk_size.empty()) {
    PG_ASSIGN_OR_RETURN(c.kv_disk_bytes, ParseByteSize(f.kv_disk_size));
    if (c.kv_disk_bytes == 0) c.kv_disk_dir.clear();  // 0 = no disk tier
  }
  if (c.policy == ServePolicy::kBaseline && (!f.kv_host_mem.empty() || !f.kv_disk_dir.empty()))
    return InvalidArgument("--policy baseline has no host or disk tier; drop --kv-host-mem/--kv-disk-dir");
  c.eviction = f.kv_eviction;
  c.write_policy = f.kv_write_policy;
  c.min_promote_tokens = f.kv_min_promote;
  c.prefix_cache = !f.no_prefix_cache;
  c.kv_debug_load_delay_s = f.kv_debug_load_delay;
  if (!f.kv_events_replay.empty() && f.kv_events.empty())
    return InvalidArgument("--kv-events-replay needs --kv-events");
  c.kv_events = f.kv_events;
  c.kv_events_replay = f.kv_events_replay;
  c.kv_events_topic = f.kv_events_topic;
  if (!f.kv_remote.empty() && f.no_prefix_cache)
    return InvalidArgument("--kv-remote needs the prefix cache; drop --no-prefix-cache");
  if (f.kv_remote.empty() && !f.kv_remote_size.empty()) return InvalidArgument("--kv-remote-size needs --kv-remote");
  c.kv_remote = f.kv_remote;
  c.kv_remote_ttl_s = f.kv_remote_ttl;
  c.kv_remote_timeout_s = f.kv_remote_timeout_ms / 1000.0;
  if (!f.kv_remote_size.empty()) {
    auto bytes = ParseByteSize(f.kv_remote_size);
    if (!bytes.ok()) return InvalidArgument("--kv-remote-size: " + bytes.status().message());
    c.kv_remote_bytes = *bytes;
  }
  if (f.kv_remote.empty() && (!f.kv_remote_password_file.empty() || !f.kv_remote_secret_file.empty()))
    return InvalidArgument("--kv-remote-password-file and --kv-remote-secret-file need --kv-remote");
  if (!f.kv_remote_password_file.empty()) {
    PG_ASSIGN_OR_RETURN(c.kv_remote_password,
                        ReadSecretFile(f.kv_remote_password_file, "--kv-remote-password-file", 1));
  } else if (const char* env = std::getenv("PROSGROW_REDIS_PASSWORD"); env && *env && !f.kv_remote.empty()) {
    c.kv_remote_password = env;
  }
  if (!f.kv_remote_secret_file.empty()) {
    PG_ASSIGN_OR_RETURN(c.kv_remote_secret, ReadSecretFile(f.kv_remote_secret_file, "--kv-remote-secret-file", 16));
  }
  if (f.kv_events.empty() && !f.kv_events_curve_secret_file.empty())
    return InvalidArgument("--kv-events-curve-secret-file needs --kv-events");
  c.kv_events_tokens = f.kv_events_tokens != "off";  // "auto" is resolved by serve (ResolveKvEventTokens)
  if (!f.kv_events_curve_secret_file.empty()) {
    PG_ASSIGN_OR_RETURN(c.kv_events_curve_secret,
                        ReadSecretFile(f.kv_events_curve_secret_file, "--kv-events-curve-secret-file", 40));
  }
  PG_ASSIGN_OR_RETURN(c.kv_hash_secret, FleetHashSecret(f));
  PG_ASSIGN_OR_RETURN(c.spec, ToSpecConfig(f.spec));
  return c;
}

}  // namespace pg
