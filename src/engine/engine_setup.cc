// How an Engine is put together from its config, past the model and the
// executor (engine.cc's Create): the speculative decoder with its draft
// model's or MTP block's own KV pool, and the KV cache with its KV-event
// bridge.
#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "engine/engine.h"
#include "engine/kv_cache_setup.h"

namespace pg {
namespace {

// The part of a device budget that a second KV pool of `other`'s blocks
// takes so that it holds as many tokens as the trunk's pool of `trunk`'s
// blocks: the budget splits in proportion to the two KV bytes per token.
uint64_t EqualTokensShare(uint64_t budget, const KvLayout& trunk, const KvLayout& other) {
  const double t = static_cast<double>(trunk.block_bytes()), d = static_cast<double>(other.block_bytes());
  return static_cast<uint64_t>(static_cast<double>(budget) * d / (t + d));
}

}  // namespace

Status Engine::CreateSpeculation(const KvLayout& layout) {
  EngineConfig& c = config_;
  SpecLimits limits;
  limits.ctx_size = c.ctx_size;
  limits.catchup_budget = c.max_batch_tokens;
  limits.max_seq_tokens = 0;  // set by FillInfo, once the device tier's size is known
  PG_ASSIGN_OR_RETURN(spec_, SpeculativeDecoder::Create(c.spec, limits));
  if (std::find(c.spec.drafters.begin(), c.spec.drafters.end(), DrafterKind::kDraft) != c.spec.drafters.end()) {
    PG_RETURN_IF_ERROR(
        spec_->LoadDraftModel(c.spec.draft_model, ModelOptionsFor(c.attention), c.model_path, *model_, *tokenizer_));
    const KvLayout dl = spec_->DraftLayout(layout.page_tokens, layout.dtype);
    // The two pools hold the same number of tokens: --kv-device-mem splits in
    // proportion to the two models' KV bytes per token. The host tier keeps
    // its size (4x the whole device budget by default).
    const uint64_t draft_bytes = EqualTokensShare(c.kv_device_bytes, layout, dl);
    if (c.policy == ServePolicy::kOptimized && c.kv_host_bytes == kDefaultHostTierBytes)
      c.kv_host_bytes = HostTierBytes(c);
    PG_RETURN_IF_ERROR(spec_->CreateDraftKv(draft_bytes, layout.page_tokens, layout.dtype));
    c.kv_device_bytes -= draft_bytes;
    PG_LOG_INFO("engine: draft model {} ({}); device KV split {:.1f} MiB target / {:.1f} MiB draft ({} blocks, {})",
                c.spec.draft_model, spec_->draft_model()->model().config().Summary(),
                static_cast<double>(c.kv_device_bytes) / (1 << 20), static_cast<double>(draft_bytes) / (1 << 20),
                spec_->draft_model()->kv().device_blocks(), dl.ToString());
  }
  if (std::find(c.spec.drafters.begin(), c.spec.drafters.end(), DrafterKind::kMtp) != c.spec.drafters.end()) {
    PG_RETURN_IF_ERROR(spec_->EnableMtp(*model_));
    // The block's one-layer pool holds as many tokens as the trunk's (the split as for a draft model).
    const KvLayout ml = spec_->MtpLayout(layout.page_tokens, layout.dtype);
    const uint64_t mtp_bytes = EqualTokensShare(c.kv_device_bytes, layout, ml);
    PG_RETURN_IF_ERROR(spec_->CreateMtpKv(mtp_bytes, layout.page_tokens, layout.dtype));
    c.kv_device_bytes -= mtp_bytes;
    PG_LOG_INFO("engine: MTP drafter (the model's NextN block); device KV {:.1f} MiB for its cache ({} blocks, {})",
                static_cast<double>(mtp_bytes) / (1 << 20), spec_->mtp()->kv().device_blocks(), ml.ToString());
  }
  for (DrafterKind k : c.spec.drafters)
    info_.speculative += (info_.speculative.empty() ? "" : ",") + std::string(DrafterName(k));
  info_.synthetic_acceptance_length = c.spec.synthetic_length;
  PG_LOG_INFO("engine: speculative decoding with {}, at most {} draft tokens per step", info_.speculative,
              c.spec.draft_max);
  if (c.spec.synthetic())
    PG_LOG_WARN(
        "engine: SYNTHETIC ACCEPTANCE (benchmark only): mean accepted length {} (p = {:.4f}); accepted "
        "drafts are NOT the model's output",
        c.spec.synthetic_length, spec_->synthetic_p());
  return Status::Ok();
}

Status Engine::CreateKvCache(const KvLayout& layout) {
  const EngineConfig& c = config_;
  // K/V computed by one executor's arithmetic never meet another's (executor.h).
  const std::string identity = KvModelIdentity(model_->identity(), *executor_);
  PG_ASSIGN_OR_RETURN(KvCacheConfig kc, KvCacheConfigOf(c, layout, identity));
  PG_ASSIGN_OR_RETURN(kv_, KvCacheManager::Create(std::move(kc)));
  PG_RETURN_IF_ERROR(executor_->Prepare(DevicePagesOf(*kv_, layout)));

  if (!c.kv_events.empty()) {
    KvEventPublisherOptions po;
    po.endpoint = c.kv_events;
    po.replay_endpoint = c.kv_events_replay;
    po.topic = c.kv_events_topic;
    po.curve_secret_key = c.kv_events_curve_secret;
    PG_ASSIGN_OR_RETURN(kv_events_, KvEventBridge::Create(po, layout.page_tokens, c.kv_events_tokens));
    kv_->SetBlockObserver(kv_events_.get());
    info_.kv_events_endpoint = c.kv_events;
    info_.kv_events_replay_endpoint = c.kv_events_replay;
    info_.kv_events_topic = c.kv_events_topic;
    info_.kv_events_curve_public_key = kv_events_->curve_public_key();
    if (!c.kv_events_curve_secret.empty())
      PG_LOG_INFO("KV events: CURVE on; subscribers need the public key {}", info_.kv_events_curve_public_key);
    if (!c.kv_events_tokens) PG_LOG_INFO("KV events: block hashes only (--kv-events-tokens off)");
    info_.kv_events_token_ids = c.kv_events_tokens;
    info_.kv_block_size = layout.page_tokens;
  }
  return Status::Ok();
}

}  // namespace pg
