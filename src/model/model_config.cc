#include "model/model_config.h"

#include <fmt/format.h>

#include "gguf/gguf_file.h"

namespace pg {
namespace {

bool IsMoeArch(const std::string& arch) { return arch == "qwen3moe" || arch == "glm4moe" || IsMlaArch(arch); }

// expert_group_count / expert_group_used_count (llama.cpp reads them for
// every arch): group-limited routing when more than one group.
Status ReadGroups(const GgufFile& f, const std::string& a, MoeConfig* m) {
  m->n_group = f.GetIntOr(a + "expert_group_count", 1);
  m->n_group_used = f.GetIntOr(a + "expert_group_used_count", 1);
  if (m->n_group <= 1) {
    m->n_group = m->n_group_used = 1;
    return Status::Ok();
  }
  if (m->n_group > 256 || m->n_group > m->n_expert || m->n_expert % m->n_group != 0 || m->n_group_used < 1 ||
      m->n_group_used > m->n_group || m->n_expert_used > m->n_group_used * (m->n_expert / m->n_group))
    return InvalidArgument(f.path() + ": expert_group_count / expert_group_used_count are inconsistent");
  return Status::Ok();
}

// The {arch}.expert_* keys, with llama.cpp's semantics per architecture:
// qwen3moe always uses softmax gating and renormalised top-k weights (its
// graph hard-codes both and never reads expert_weights_scale); glm4moe reads
// expert_gating_func (0 = unset, sigmoid), expert_weights_norm (default
// false) and expert_weights_scale; deepseek2 and glm-dsa read the same keys
// (gating unset: deepseek2 softmax, glm-dsa sigmoid). Expert groups
// (group-limited routing) are read for every arch.
Status ReadMoe(const GgufFile& f, ModelConfig* c) {
  const std::string a = c->arch + ".";
  MoeConfig& m = c->moe;
  auto bad = [&](const std::string& what) { return InvalidArgument(f.path() + ": " + what); };
  PG_ASSIGN_OR_RETURN(m.n_expert, f.GetInt(a + "expert_count"));
  PG_ASSIGN_OR_RETURN(m.n_expert_used, f.GetInt(a + "expert_used_count"));
  PG_ASSIGN_OR_RETURN(m.n_ff_exp, f.GetInt(a + "expert_feed_forward_length"));
  if (m.n_expert <= 0 || m.n_expert > 4096) return bad("expert_count out of range");
  if (m.n_expert_used <= 0 || m.n_expert_used > m.n_expert) return bad("expert_used_count out of range");
  if (m.n_ff_exp <= 0 || m.n_ff_exp > 1 << 20) return bad("expert_feed_forward_length out of range");
  PG_RETURN_IF_ERROR(ReadGroups(f, a, &m));
  if (c->arch == "qwen3moe") {
    m.gating = ExpertGating::kSoftmax;
    m.norm_weights = true;
    return Status::Ok();
  }
  // glm4moe, deepseek2, glm-dsa
  const int64_t nextn = f.GetIntOr(a + "nextn_predict_layers", 0);
  if (nextn < 0 || nextn >= c->n_layer) return bad("nextn_predict_layers out of range");
  c->n_layer -= nextn;  // the NextN (multi-token prediction) blocks follow the main ones and are not run
  c->n_nextn = nextn;
  m.n_dense_lead = f.GetIntOr(a + "leading_dense_block_count", 0);
  if (m.n_dense_lead < 0 || m.n_dense_lead > c->n_layer) return bad("leading_dense_block_count out of range");
  m.n_shared = f.GetIntOr(a + "expert_shared_count", 0);
  if (m.n_shared < 0 || m.n_shared > 64) return bad("expert_shared_count out of range");
  int64_t gating = f.GetIntOr(a + "expert_gating_func", 0);
  if (gating == 0 && c->arch == "deepseek2") {
    // Unset: DeepSeek-V2 files (softmax), except GLM-4.7 Lite (47/48 layers, vocabulary 154880).
    const int64_t vocab = f.GetIntOr(a + "vocab_size", 0);
    gating = (c->n_layer == 47 || c->n_layer == 48) && vocab == 154880 ? 2 : 1;
  }
  if (gating < 0 || gating > 2)
    return bad("expert_gating_func " + std::to_string(gating) + " is not 1 (softmax) or 2 (sigmoid)");
  m.gating = gating == 1 ? ExpertGating::kSoftmax : ExpertGating::kSigmoid;
  m.norm_weights = f.GetBoolOr(a + "expert_weights_norm", false);
  m.weights_scale = static_cast<float>(f.GetFloatOr(a + "expert_weights_scale", 0.0));
  if (!(m.weights_scale >= 0 && m.weights_scale < 1e6f)) return bad("expert_weights_scale out of range");
  return Status::Ok();
}

Status ReadHeads(const GgufFile& f, const std::string& a, ModelConfig* c);
Status ReadRopeAndVocab(const GgufFile& f, const std::string& a, ModelConfig* c);

}  // namespace

Result<ModelConfig> ModelConfig::FromGguf(const GgufFile& f) {
  ModelConfig c;
  PG_ASSIGN_OR_RETURN(c.arch, f.GetString("general.architecture"));
  if (c.arch != "llama" && c.arch != "qwen2" && c.arch != "qwen3" && !IsMoeArch(c.arch))
    return InvalidArgument(f.path() + ": unsupported architecture '" + c.arch +
                           "' (llama, qwen2, qwen3, qwen3moe, glm4moe, deepseek2, glm-dsa)");
  const std::string a = c.arch + ".";
  c.name = f.GetStringOr("general.name", c.arch);
  PG_ASSIGN_OR_RETURN(c.n_embd, f.GetInt(a + "embedding_length"));
  PG_ASSIGN_OR_RETURN(c.n_layer, f.GetInt(a + "block_count"));
  PG_ASSIGN_OR_RETURN(c.n_head, f.GetInt(a + "attention.head_count"));
  c.n_head_kv = f.GetIntOr(a + "attention.head_count_kv", c.n_head);
  if (IsMoeArch(c.arch)) {
    if (c.n_layer <= 0 || c.n_layer > 512) return InvalidArgument(f.path() + ": block_count out of range");
    PG_RETURN_IF_ERROR(ReadMoe(f, &c));
  }
  // qwen3moe has no dense layer; its feed_forward_length (if any) is unused.
  const bool any_dense = !c.is_moe() || c.moe.n_dense_lead > 0;
  if (any_dense) {
    PG_ASSIGN_OR_RETURN(c.n_ff, f.GetInt(a + "feed_forward_length"));
  }
  c.n_ctx_train = f.GetIntOr(a + "context_length", 4096);
  c.rms_eps = static_cast<float>(f.GetFloatOr(a + "attention.layer_norm_rms_epsilon", 1e-6));
  c.rope_base = static_cast<float>(f.GetFloatOr(a + "rope.freq_base", c.arch == "llama" ? 10000.0 : 1000000.0));

  auto bad = [&](const std::string& what) { return InvalidArgument(f.path() + ": " + what); };
  if (c.n_embd <= 0 || c.n_embd > 65536) return bad("embedding_length out of range");
  if (c.n_layer <= 0 || c.n_layer > 512) return bad("block_count out of range");
  if (c.n_head <= 0 || c.n_head > 1024 || c.n_head_kv <= 0 || c.n_head_kv > c.n_head || c.n_head % c.n_head_kv)
    return bad("attention head counts are inconsistent");
  if (any_dense && (c.n_ff <= 0 || c.n_ff > 1 << 20)) return bad("feed_forward_length out of range");
  if (c.n_ctx_train <= 0) return bad("context_length out of range");

  if (IsMlaArch(c.arch)) {
    PG_RETURN_IF_ERROR(ReadMla(f, &c));
  } else {
    PG_RETURN_IF_ERROR(ReadHeads(f, a, &c));
  }
  PG_RETURN_IF_ERROR(ReadRopeAndVocab(f, a, &c));
  return c;
}

namespace {

Status ReadHeads(const GgufFile& f, const std::string& a, ModelConfig* cp) {
  ModelConfig& c = *cp;
  auto bad = [&](const std::string& what) { return InvalidArgument(f.path() + ": " + what); };
  c.head_dim = f.GetIntOr(a + "attention.key_length", c.n_embd / c.n_head);
  int64_t v_len = f.GetIntOr(a + "attention.value_length", c.head_dim);
  if (c.head_dim <= 0 || c.head_dim > 1024 || c.head_dim % 2) return bad("head dimension out of range");
  if (v_len != c.head_dim) return bad("value_length != key_length is not supported");
  c.n_rot = f.GetIntOr(a + "rope.dimension_count", c.head_dim);
  if (c.n_rot <= 0 || c.n_rot > c.head_dim || c.n_rot % 2) return bad("rope.dimension_count out of range");
  c.rope_style = c.arch == "llama" ? RopeStyle::kNorm : RopeStyle::kNeox;
  c.qkv_bias = c.arch == "qwen2";
  c.qk_norm = c.arch == "qwen3" || c.arch == "qwen3moe";
  return Status::Ok();
}

Status ReadRopeAndVocab(const GgufFile& f, const std::string& a, ModelConfig* cp) {
  ModelConfig& c = *cp;
  auto bad = [&](const std::string& what) { return InvalidArgument(f.path() + ": " + what); };
  std::string scaling = f.GetStringOr(a + "rope.scaling.type", "");
  double factor = f.GetFloatOr(a + "rope.scaling.factor", 0);
  if (scaling == "llama3" || (c.arch == "llama" && factor > 1 && f.Find(a + "rope.scaling.low_freq_factor"))) {
    c.rope_scale_factor = static_cast<float>(factor);
    c.rope_low_freq_factor = static_cast<float>(f.GetFloatOr(a + "rope.scaling.low_freq_factor", 1.0));
    c.rope_high_freq_factor = static_cast<float>(f.GetFloatOr(a + "rope.scaling.high_freq_factor", 4.0));
    c.rope_orig_ctx = f.GetIntOr(a + "rope.scaling.original_context_length", 8192);
  }

  const GgufTensorInfo* emb = f.FindTensor("token_embd.weight");
  if (!emb) return bad("missing tensor token_embd.weight");
  if (emb->dims.size() != 2 || emb->dims[0] != c.n_embd) return bad("token_embd.weight has the wrong shape");
  c.n_vocab = emb->dims[1];
  c.tied_embeddings = f.FindTensor("output.weight") == nullptr;
  return Status::Ok();
}

}  // namespace

KvLayout ModelConfig::KvLayoutFor(int64_t page_tokens, KvDtype dtype) const {
  KvLayout l;
  l.n_layers = static_cast<int>(n_layer);
  l.n_kv_heads = static_cast<int>(n_head_kv);
  l.head_dim = static_cast<int>(head_dim);
  l.page_tokens = static_cast<int>(page_tokens);
  l.dtype = dtype;
  l.kind = attention_kind();
  l.n_index_layers = static_cast<int>(mla.n_index_layers());
  l.index_dim = l.n_index_layers > 0 ? static_cast<int>(mla.index_dim) : 0;
  return l;
}

std::string ModelConfig::Summary() const {
  std::string s = fmt::format("{} '{}': vocab {}, dim {}, layers {}, heads {}/{} x {}, ffn {}, rope {} base {}{}{}{}",
                              arch, name, n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff,
                              rope_style == RopeStyle::kNorm ? "norm" : "neox", rope_base, qkv_bias ? ", qkv bias" : "",
                              qk_norm ? ", qk norm" : "", tied_embeddings ? ", tied embeddings" : "");
  if (n_rot != head_dim) s += fmt::format(", rope dims {}", n_rot);
  if (mla.enabled) {
    s += fmt::format(", mla q_lora {} kv_lora {} nope {} rope {} v {} kq_scale {:.6g} rope_mag {:.6g}", mla.q_lora,
                     mla.kv_lora, mla.nope, mla.rope, mla.v_head, mla.kq_scale, mla.rope_mag);
    if (mla.sparse()) {
      std::string types;
      for (bool full : mla.index_full) types += full ? 'F' : 's';
      s += fmt::format(", indexer {} x {} top-{} layers {}", mla.index_heads, mla.index_dim, mla.index_top_k, types);
    }
  }
  if (n_nextn > 0) s += fmt::format(", nextn {}", n_nextn);
  if (moe.n_group > 1) s += fmt::format(", expert groups {} keep {}", moe.n_group, moe.n_group_used);
  if (is_moe())
    s += fmt::format(
        ", experts {} top-{} x {}{}{}, {} router{}{}", moe.n_expert, moe.n_expert_used, moe.n_ff_exp,
        moe.n_dense_lead ? fmt::format(", leading dense {}", moe.n_dense_lead) : "",
        moe.n_shared ? fmt::format(", shared {}", moe.n_shared) : "",
        moe.gating == ExpertGating::kSoftmax ? "softmax" : "sigmoid", moe.norm_weights ? ", norm" : "",
        moe.weights_scale != 0 && moe.weights_scale != 1 ? fmt::format(", scale {}", moe.weights_scale) : "");
  return s;
}

}  // namespace pg
