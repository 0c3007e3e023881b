#include "model/model_config.h"

#include <fmt/format.h>

#include "gguf/gguf_file.h"

namespace pg {

Result<ModelConfig> ModelConfig::FromGguf(const GgufFile& f) {
  ModelConfig c;
  PG_ASSIGN_OR_RETURN(c.arch, f.GetString("general.architecture"));
  if (c.arch != "llama" && c.arch != "qwen2" && c.arch != "qwen3")
    return InvalidArgument(f.path() + ": unsupported architecture '" + c.arch + "' (llama, qwen2, qwen3)");
  const std::string a = c.arch + ".";
  c.name = f.GetStringOr("general.name", c.arch);
  PG_ASSIGN_OR_RETURN(c.n_embd, f.GetInt(a + "embedding_length"));
  PG_ASSIGN_OR_RETURN(c.n_layer, f.GetInt(a + "block_count"));
  PG_ASSIGN_OR_RETURN(c.n_head, f.GetInt(a + "attention.head_count"));
  c.n_head_kv = f.GetIntOr(a + "attention.head_count_kv", c.n_head);
  PG_ASSIGN_OR_RETURN(c.n_ff, f.GetInt(a + "feed_forward_length"));
  c.n_ctx_train = f.GetIntOr(a + "context_length", 4096);
  c.rms_eps = static_cast<float>(f.GetFloatOr(a + "attention.layer_norm_rms_epsilon", 1e-6));
  c.rope_base = static_cast<float>(f.GetFloatOr(a + "rope.freq_base", c.arch == "llama" ? 10000.0 : 1000000.0));

  auto bad = [&](const std::string& what) { return InvalidArgument(f.path() + ": " + what); };
  if (c.n_embd <= 0 || c.n_embd > 65536) return bad("embedding_length out of range");
  if (c.n_layer <= 0 || c.n_layer > 512) return bad("block_count out of range");
  if (c.n_head <= 0 || c.n_head > 1024 || c.n_head_kv <= 0 || c.n_head_kv > c.n_head || c.n_head % c.n_head_kv)
    return bad("attention head counts are inconsistent");
  if (c.n_ff <= 0 || c.n_ff > 1 << 20) return bad("feed_forward_length out of range");
  if (c.n_ctx_train <= 0) return bad("context_length out of range");

  c.head_dim = f.GetIntOr(a + "attention.key_length", c.n_embd / c.n_head);
  int64_t v_len = f.GetIntOr(a + "attention.value_length", c.head_dim);
  if (c.head_dim <= 0 || c.head_dim > 1024 || c.head_dim % 2) return bad("head dimension out of range");
  if (v_len != c.head_dim) return bad("value_length != key_length is not supported");
  c.n_rot = f.GetIntOr(a + "rope.dimension_count", c.head_dim);
  if (c.n_rot <= 0 || c.n_rot > c.head_dim || c.n_rot % 2) return bad("rope.dimension_count out of range");
  c.rope_style = c.arch == "llama" ? RopeStyle::kNorm : RopeStyle::kNeox;
  c.qkv_bias = c.arch == "qwen2";
  c.qk_norm = c.arch == "qwen3";

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
  return c;
}

std::string ModelConfig::Summary() const {
  return fmt::format("{} '{}': vocab {}, dim {}, layers {}, heads {}/{} x {}, ffn {}, rope {} base {}{}{}{}", arch,
                     name, n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff,
                     rope_style == RopeStyle::kNorm ? "norm" : "neox", rope_base, qkv_bias ? ", qkv bias" : "",
                     qk_norm ? ", qk norm" : "", tied_embeddings ? ", tied embeddings" : "");
}

}  // namespace pg
