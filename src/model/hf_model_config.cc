#include "model/hf_model_config.h"

#include <cmath>
#include <map>

#include "hf/error_text.h"

namespace pg {
namespace {

using nlohmann::json;

// Typed reads of config.json fields: absent -> the default (or an error when
// required), present with the wrong type -> an error naming the field.
class Fields {
 public:
  Fields(const json& j, const std::string& file) : j_(j), file_(file) {}

  Status Bad(const std::string& field, const std::string& what) const {
    return InvalidArgument(file_ + ": " + field + " " + what);
  }
  bool Has(const char* k) const { return j_.contains(k) && !j_[k].is_null(); }

  Result<int64_t> Int(const char* k, std::optional<int64_t> def = std::nullopt) const {
    if (!Has(k)) return def ? Result<int64_t>(*def) : Result<int64_t>(Bad(k, "is missing"));
    if (!j_[k].is_number_integer()) return Bad(k, "is not an integer");
    return j_[k].get<int64_t>();
  }
  Result<double> Num(const char* k, double def) const {
    if (!Has(k)) return def;
    if (!j_[k].is_number()) return Bad(k, "is not a number");
    return j_[k].get<double>();
  }
  Result<bool> Bool(const char* k, bool def) const {
    if (!Has(k)) return def;
    if (!j_[k].is_boolean()) return Bad(k, "is not true or false");
    return j_[k].get<bool>();
  }
  Result<std::string> Str(const char* k) const {
    if (!Has(k)) return std::string();
    if (!j_[k].is_string()) return Bad(k, "is not a string");
    return j_[k].get<std::string>();
  }
  const json& Get(const char* k) const { return j_[k]; }

 private:
  const json& j_;
  const std::string& file_;
};

const std::map<std::string, std::string>& ArchOfModelType() {
  static const std::map<std::string, std::string> m = {
      {"llama", "llama"}, {"qwen2", "qwen2"}, {"qwen3", "qwen3"}, {"qwen3_moe", "qwen3moe"}, {"glm4_moe", "glm4moe"}};
  return m;
}

// rope_scaling: null, "default", or llama3's parameters.
Status ReadRopeScaling(const Fields& f, ModelConfig* c) {
  if (!f.Has("rope_scaling")) return Status::Ok();
  const json& r = f.Get("rope_scaling");
  if (!r.is_object()) return f.Bad("rope_scaling", "is not an object");
  std::string type;
  for (const char* k : {"rope_type", "type"})
    if (r.contains(k) && r[k].is_string()) type = r[k].get<std::string>();
  if (type.empty() || type == "default") return Status::Ok();
  if (type != "llama3") return f.Bad("rope_scaling.rope_type", QuotedText(type) + " is not supported (llama3)");
  auto num = [&](const char* k, double def, double* out) -> Status {
    if (!r.contains(k)) {
      *out = def;
      return Status::Ok();
    }
    if (!r[k].is_number()) return f.Bad(std::string("rope_scaling.") + k, "is not a number");
    *out = r[k].get<double>();
    return Status::Ok();
  };
  double factor = 0, lo = 1, hi = 4, orig = 8192;
  PG_RETURN_IF_ERROR(num("factor", 0, &factor));
  PG_RETURN_IF_ERROR(num("low_freq_factor", 1, &lo));
  PG_RETURN_IF_ERROR(num("high_freq_factor", 4, &hi));
  PG_RETURN_IF_ERROR(num("original_max_position_embeddings", 8192, &orig));
  if (!(factor > 0 && factor < 1e6) || !(orig >= 1 && orig < 1e9)) return f.Bad("rope_scaling", "is out of range");
  c->rope_scale_factor = static_cast<float>(factor);
  c->rope_low_freq_factor = static_cast<float>(lo);
  c->rope_high_freq_factor = static_cast<float>(hi);
  c->rope_orig_ctx = static_cast<int64_t>(orig);
  return Status::Ok();
}

// The routed experts: their count (under the model type's `count_key`), top-k and width.
Status ReadExperts(const Fields& f, const char* count_key, MoeConfig* m) {
  PG_ASSIGN_OR_RETURN(m->n_expert, f.Int(count_key));
  PG_ASSIGN_OR_RETURN(m->n_expert_used, f.Int("num_experts_per_tok"));
  PG_ASSIGN_OR_RETURN(m->n_ff_exp, f.Int("moe_intermediate_size"));
  return Status::Ok();
}

Status ReadQwen3Moe(const Fields& f, ModelConfig* c) {
  MoeConfig& m = c->moe;
  PG_RETURN_IF_ERROR(ReadExperts(f, "num_experts", &m));
  PG_ASSIGN_OR_RETURN(bool norm, f.Bool("norm_topk_prob", true));
  if (!norm) return f.Bad("norm_topk_prob", "false is not supported (qwen3_moe renormalises the top-k weights)");
  PG_ASSIGN_OR_RETURN(int64_t step, f.Int("decoder_sparse_step", 1));
  if (step != 1) return f.Bad("decoder_sparse_step", "other than 1 is not supported");
  if (f.Has("mlp_only_layers") && !(f.Get("mlp_only_layers").is_array() && f.Get("mlp_only_layers").empty()))
    return f.Bad("mlp_only_layers", "must be empty");
  m.gating = ExpertGating::kSoftmax;
  m.norm_weights = true;
  return Status::Ok();
}

Status ReadGlm4Moe(const Fields& f, ModelConfig* c) {
  MoeConfig& m = c->moe;
  PG_RETURN_IF_ERROR(ReadExperts(f, "n_routed_experts", &m));
  PG_ASSIGN_OR_RETURN(m.n_shared, f.Int("n_shared_experts", 0));
  PG_ASSIGN_OR_RETURN(m.n_dense_lead, f.Int("first_k_dense_replace", 0));
  PG_ASSIGN_OR_RETURN(m.norm_weights, f.Bool("norm_topk_prob", true));
  PG_ASSIGN_OR_RETURN(double scale, f.Num("routed_scaling_factor", 1.0));
  PG_ASSIGN_OR_RETURN(int64_t groups, f.Int("n_group", 1));
  if (groups > 1) return f.Bad("n_group", "> 1 (group-limited routing) is not supported");
  PG_ASSIGN_OR_RETURN(int64_t nextn, f.Int("num_nextn_predict_layers", 0));
  if (nextn < 0 || nextn > 64) return f.Bad("num_nextn_predict_layers", "is out of range");
  PG_ASSIGN_OR_RETURN(double partial, f.Num("partial_rotary_factor", 0.5));
  if (!(partial > 0 && partial <= 1)) return f.Bad("partial_rotary_factor", "is out of range");
  c->n_rot = static_cast<int64_t>(std::lround(static_cast<double>(c->head_dim) * partial));
  PG_ASSIGN_OR_RETURN(c->qkv_bias, f.Bool("attention_bias", false));
  PG_ASSIGN_OR_RETURN(c->qk_norm, f.Bool("use_qk_norm", false));
  if (!(scale >= 0 && scale < 1e6)) return f.Bad("routed_scaling_factor", "is out of range");
  m.weights_scale = static_cast<float>(scale);
  m.gating = ExpertGating::kSigmoid;
  return Status::Ok();
}

// Range checks, as ModelConfig::FromGguf makes them.
Status CheckRanges(const Fields& f, const ModelConfig& c) {
  if (c.n_embd <= 0 || c.n_embd > 65536) return f.Bad("hidden_size", "is out of range");
  if (c.n_layer <= 0 || c.n_layer > 512) return f.Bad("num_hidden_layers", "is out of range");
  if (c.n_head <= 0 || c.n_head > 1024) return f.Bad("num_attention_heads", "is out of range");
  if (c.n_head_kv <= 0 || c.n_head_kv > c.n_head || c.n_head % c.n_head_kv)
    return f.Bad("num_key_value_heads", "does not divide num_attention_heads");
  if (c.head_dim <= 0 || c.head_dim > 1024 || c.head_dim % 2) return f.Bad("head_dim", "is out of range");
  if (c.n_rot <= 0 || c.n_rot > c.head_dim || c.n_rot % 2) return f.Bad("partial_rotary_factor", "is out of range");
  const bool any_dense = !c.is_moe() || c.moe.n_dense_lead > 0;
  if (any_dense && (c.n_ff <= 0 || c.n_ff > 1 << 20)) return f.Bad("intermediate_size", "is out of range");
  if (c.n_vocab <= 0 || c.n_vocab > (1 << 24)) return f.Bad("vocab_size", "is out of range");
  if (c.n_ctx_train <= 0) return f.Bad("max_position_embeddings", "is out of range");
  if (!(c.rms_eps > 0 && c.rms_eps < 1)) return f.Bad("rms_norm_eps", "is out of range");
  if (!(c.rope_base > 0 && std::isfinite(c.rope_base))) return f.Bad("rope_theta", "is out of range");
  if (!c.is_moe()) return Status::Ok();
  const MoeConfig& m = c.moe;
  if (m.n_expert <= 0 || m.n_expert > 4096) return f.Bad("num_experts", "is out of range");
  if (m.n_expert_used <= 0 || m.n_expert_used > m.n_expert) return f.Bad("num_experts_per_tok", "is out of range");
  if (m.n_ff_exp <= 0 || m.n_ff_exp > 1 << 20) return f.Bad("moe_intermediate_size", "is out of range");
  if (m.n_shared < 0 || m.n_shared > 64) return f.Bad("n_shared_experts", "is out of range");
  if (m.n_dense_lead < 0 || m.n_dense_lead > c.n_layer) return f.Bad("first_k_dense_replace", "is out of range");
  return Status::Ok();
}

}  // namespace

Result<std::string> HfQuantMethod(const json& j, const std::string& file) {
  Fields f(j, file);
  if (!f.Has("quantization_config")) return std::string();
  const json& q = f.Get("quantization_config");
  if (!q.is_object() || !q.contains("quant_method") || !q["quant_method"].is_string())
    return f.Bad("quantization_config.quant_method", "is missing or not a string");
  const std::string m = q["quant_method"].get<std::string>();
  if (m != "fp8") return f.Bad("quantization_config.quant_method", QuotedText(m) + " is not supported (fp8)");
  return m;
}

Result<HfFp8Config> HfFp8ConfigOf(const json& j, const std::string& file) {
  Fields top(j, file);
  HfFp8Config out;
  if (!top.Has("quantization_config") || !top.Get("quantization_config").is_object()) return out;
  Fields f(top.Get("quantization_config"), file);
  PG_ASSIGN_OR_RETURN(std::string fmt, f.Str("fmt"));
  if (!fmt.empty() && fmt != "e4m3")
    return top.Bad("quantization_config.fmt", QuotedText(fmt) + " is not supported (e4m3)");
  PG_ASSIGN_OR_RETURN(std::string act, f.Str("activation_scheme"));
  if (!act.empty() && act != "dynamic" && act != "static")
    return top.Bad("quantization_config.activation_scheme", QuotedText(act) + " is not supported (dynamic, static)");
  if (!f.Has("weight_block_size")) return out;
  const json& b = f.Get("weight_block_size");
  const bool ok = b.is_array() && b.size() == 2 && b[0].is_number_integer() && b[1].is_number_integer();
  if (!ok || b[0].get<int64_t>() != 128 || b[1].get<int64_t>() != 128)
    return top.Bad("quantization_config.weight_block_size", QuotedText(b.dump()) + " is not supported ([128, 128])");
  out.block128 = true;
  return out;
}

Result<std::string> HfModelDtype(const json& j, const std::string& file) {
  Fields f(j, file);
  for (const char* k : {"torch_dtype", "dtype"}) {
    PG_ASSIGN_OR_RETURN(std::string d, f.Str(k));
    if (d.empty()) continue;
    if (d != "bfloat16" && d != "float16" && d != "float32")
      return f.Bad(k, QuotedText(d) + " is not supported (bfloat16, float16, float32)");
    return d;
  }
  return std::string();
}

Result<ModelConfig> ModelConfigFromHf(const json& j, const std::string& file, const std::string& name) {
  Fields f(j, file);
  ModelConfig c;
  PG_ASSIGN_OR_RETURN(std::string type, f.Str("model_type"));
  if (type.empty()) return f.Bad("model_type", "is missing");
  auto arch = ArchOfModelType().find(type);
  if (arch == ArchOfModelType().end())
    return f.Bad("model_type", QuotedText(type) + " is not supported (llama, qwen2, qwen3, qwen3_moe, glm4_moe)");
  c.arch = arch->second;
  c.name = name;
  PG_ASSIGN_OR_RETURN(c.n_vocab, f.Int("vocab_size"));
  PG_ASSIGN_OR_RETURN(c.n_embd, f.Int("hidden_size"));
  PG_ASSIGN_OR_RETURN(c.n_layer, f.Int("num_hidden_layers"));
  PG_ASSIGN_OR_RETURN(c.n_head, f.Int("num_attention_heads"));
  PG_ASSIGN_OR_RETURN(c.n_head_kv, f.Int("num_key_value_heads", c.n_head));
  if (c.n_head <= 0 || c.n_head > 1024) return f.Bad("num_attention_heads", "is out of range");
  PG_ASSIGN_OR_RETURN(c.head_dim, f.Int("head_dim", c.n_embd / c.n_head));
  c.n_rot = c.head_dim;
  const bool any_dense = c.arch != "qwen3moe";  // glm4moe: its leading dense layers
  if (any_dense) {
    PG_ASSIGN_OR_RETURN(c.n_ff, f.Int("intermediate_size"));
  }
  PG_ASSIGN_OR_RETURN(c.n_ctx_train, f.Int("max_position_embeddings", 4096));
  PG_ASSIGN_OR_RETURN(double eps, f.Num("rms_norm_eps", 1e-6));
  PG_ASSIGN_OR_RETURN(double theta, f.Num("rope_theta", 10000.0));
  c.rms_eps = static_cast<float>(eps);
  c.rope_base = static_cast<float>(theta);
  c.rope_style = c.arch == "llama" ? RopeStyle::kNorm : RopeStyle::kNeox;
  c.qkv_bias = c.arch == "qwen2";
  c.qk_norm = c.arch == "qwen3" || c.arch == "qwen3moe";
  PG_RETURN_IF_ERROR(ReadRopeScaling(f, &c));
  if (c.arch == "qwen3moe") PG_RETURN_IF_ERROR(ReadQwen3Moe(f, &c));
  if (c.arch == "glm4moe") PG_RETURN_IF_ERROR(ReadGlm4Moe(f, &c));
  if (c.is_moe() && c.moe.n_dense_lead == 0) c.n_ff = 0;
  PG_RETURN_IF_ERROR(CheckRanges(f, c));
  return c;
}

}  // namespace pg
