#include "model/mla_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <variant>

#include "gguf/gguf_file.h"
#include "model/model_config.h"

namespace pg {
namespace {

constexpr double kPi = 3.14159265358979323846;

// llama.cpp's GLM-5.2 table (1 = full indexer layer), used when a file has
// no attention.indexer.types and context_length >= 2^20: layers 0 and 1
// full, then one full layer in every four; zero past its 78 entries.
bool Glm52DefaultFull(int64_t layer) { return layer < 2 || (layer < 78 && (layer - 2) % 4 == 0); }

double GetMscale(double scale, double m) { return scale <= 1.0 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; }

// RoPE scaling of an MLA arch (llama_model hparams + the llama_context
// constructor + ggml rope_yarn): frequencies, cos/sin magnitude, kq_scale.
Status ReadYarn(const GgufFile& f, const std::string& a, ModelConfig* c) {
  MlaConfig& m = c->mla;
  auto bad = [&](const std::string& what) { return InvalidArgument(f.path() + ": " + what); };
  const std::string type = f.GetStringOr(a + "rope.scaling.type", "linear");
  double factor = f.GetFloatOr(a + "rope.scaling.factor", 0.0);
  if (factor == 0.0) factor = f.GetFloatOr(a + "rope.scale_linear", 0.0);
  if (type != "none" && type != "linear" && type != "yarn") return bad("rope.scaling.type '" + type + "' for MLA");
  if (!(factor >= 0 && factor < 1e6)) return bad("rope.scaling.factor out of range");
  const double fs = (factor == 0.0 || type == "none") ? 1.0 : 1.0 / factor;
  const bool yarn = type == "yarn" && fs != 1.0;
  if (f.GetFloatOr(a + "rope.scaling.yarn_beta_fast", 32.0) != 32.0 ||
      f.GetFloatOr(a + "rope.scaling.yarn_beta_slow", 1.0) != 1.0)
    return bad("YaRN beta_fast/beta_slow other than 32/1 (llama.cpp ignores them) are not supported");
  // deepseek2 only: the converter writes 0.1 * mscale_all_dim, llama.cpp divides by float(0.1) again.
  double log_mul = 0.0;
  if (c->arch == "deepseek2" && f.Find(a + "rope.scaling.yarn_log_multiplier"))
    log_mul = f.GetFloatOr(a + "rope.scaling.yarn_log_multiplier", 0.0) / static_cast<double>(0.1f);
  double attn_factor = 1.0;
  const double fct = 1.0 / fs;
  if (yarn) {
    if (log_mul != 0.0) {
      const double ms = log_mul != 1.0 ? log_mul : 1.0;
      attn_factor = GetMscale(fct, ms) / GetMscale(fct, log_mul);
    } else {
      attn_factor = GetMscale(fct, 1.0);
    }
    attn_factor /= 1.0 + 0.1 * std::log(fct);
  }
  attn_factor *= f.GetFloatOr(a + "rope.scaling.attn_factor", 1.0);
  const double ln_fct = std::log(fct);
  m.rope_mag = yarn ? attn_factor * (1.0 + 0.1 * ln_fct) : attn_factor;
  const double mscale = attn_factor * (1.0 + 0.1 * ln_fct) * (1.0 + 0.1 * log_mul * ln_fct);
  m.kq_scale = mscale * mscale / std::sqrt(static_cast<double>(m.k_head()));

  const int64_t nr = m.rope;
  const double base = c->rope_base;
  m.inv_freq.resize(static_cast<size_t>(nr / 2));
  for (int64_t k = 0; k < nr / 2; ++k)
    m.inv_freq[k] = std::pow(base, -2.0 * static_cast<double>(k) / static_cast<double>(nr));
  if (yarn) {
    const double orig = static_cast<double>(f.GetIntOr(a + "rope.scaling.original_context_length", c->n_ctx_train));
    auto corr = [&](double beta) { return nr * std::log(orig / (beta * 2 * kPi)) / (2 * std::log(base)); };
    const double lo = std::max(0.0, std::floor(corr(32.0)));
    const double hi = std::min(nr - 1.0, std::ceil(corr(1.0)));
    for (int64_t k = 0; k < nr / 2; ++k) {
      const double ramp = 1.0 - std::clamp((static_cast<double>(k) - lo) / std::max(0.001, hi - lo), 0.0, 1.0);
      m.inv_freq[k] *= fs * (1.0 - ramp) + ramp;
    }
  } else if (fs != 1.0) {
    for (double& x : m.inv_freq) x *= fs;
  }
  return Status::Ok();
}

// glm-dsa's indexer: sizes, top-k and which layers run it.
Status ReadIndexer(const GgufFile& f, const std::string& a, ModelConfig* c) {
  MlaConfig& m = c->mla;
  auto bad = [&](const std::string& what) { return InvalidArgument(f.path() + ": " + what); };
  PG_ASSIGN_OR_RETURN(m.index_heads, f.GetInt(a + "attention.indexer.head_count"));
  PG_ASSIGN_OR_RETURN(m.index_dim, f.GetInt(a + "attention.indexer.key_length"));
  PG_ASSIGN_OR_RETURN(m.index_top_k, f.GetInt(a + "attention.indexer.top_k"));
  if (m.index_heads <= 0 || m.index_heads > 1024) return bad("attention.indexer.head_count out of range");
  if (m.index_dim < m.rope || m.index_dim > 4096) return bad("attention.indexer.key_length out of range");
  if (m.index_top_k <= 0 || m.index_top_k > 1 << 20) return bad("attention.indexer.top_k out of range");
  const int64_t L = c->n_layer;
  m.index_full.assign(static_cast<size_t>(L), true);
  if (c->n_ctx_train >= (1 << 20))
    for (int64_t l = 0; l < L; ++l) m.index_full[l] = Glm52DefaultFull(l);
  if (const GgufValue* v = f.Find(a + "attention.indexer.types")) {
    if (const auto* arr = std::get_if<std::vector<bool>>(&v->v)) {
      if (static_cast<int64_t>(arr->size()) != L)
        return bad(fmt::format("attention.indexer.types has {} entries for {} layers", arr->size(), L));
      for (int64_t l = 0; l < L; ++l) m.index_full[l] = (*arr)[l];
    } else if (const auto* b = std::get_if<bool>(&v->v)) {
      m.index_full.assign(static_cast<size_t>(L), *b);
    } else {
      return bad("attention.indexer.types is not a bool array");
    }
  }
  if (!m.index_full[0]) return bad("attention.indexer.types: layer 0 must run its own indexer");
  return Status::Ok();
}

}  // namespace

int64_t MlaConfig::n_index_layers() const {
  return sparse() ? static_cast<int64_t>(std::count(index_full.begin(), index_full.end(), true)) : 0;
}

int64_t MlaConfig::IndexSlot(int64_t layer) const {
  if (!sparse() || !index_full[static_cast<size_t>(layer)]) return -1;
  return static_cast<int64_t>(std::count(index_full.begin(), index_full.begin() + layer, true));
}

bool IsMlaArch(const std::string& arch) { return arch == "deepseek2" || arch == "glm-dsa"; }

Status ReadMla(const GgufFile& f, ModelConfig* c) {
  const std::string a = c->arch + ".";
  MlaConfig& m = c->mla;
  auto bad = [&](const std::string& what) { return InvalidArgument(f.path() + ": " + what); };
  m.enabled = true;
  m.q_lora = f.GetIntOr(a + "attention.q_lora_rank", 0);
  PG_ASSIGN_OR_RETURN(m.kv_lora, f.GetInt(a + "attention.kv_lora_rank"));
  const int64_t k_mla = f.GetIntOr(a + "attention.key_length_mla", 0);
  m.v_head = f.GetIntOr(a + "attention.value_length_mla", 0);
  if (k_mla <= 0 || m.v_head <= 0)
    return bad("MLA needs attention.key_length_mla and value_length_mla (the split attn_k_b / attn_v_b form)");
  PG_ASSIGN_OR_RETURN(m.rope, f.GetInt(a + "rope.dimension_count"));
  m.nope = k_mla - m.rope;
  if (m.q_lora < 0 || m.q_lora > 65536) return bad("attention.q_lora_rank out of range");
  if (m.kv_lora <= 0 || m.kv_lora > 8192) return bad("attention.kv_lora_rank out of range");
  if (m.rope <= 0 || m.rope % 2 || m.nope <= 0 || k_mla > 4096 || m.v_head > 4096)
    return bad("MLA head sizes (key_length_mla, rope.dimension_count, value_length_mla) out of range");
  if (f.GetIntOr(a + "attention.head_count_kv", 1) != 1) return bad("MLA files have attention.head_count_kv 1");
  if (f.GetIntOr(a + "attention.key_length", m.row()) != m.row() ||
      f.GetIntOr(a + "attention.value_length", m.kv_lora) != m.kv_lora)
    return bad("attention.key_length / value_length are not kv_lora_rank + rope / kv_lora_rank");
  c->n_head_kv = 1;
  c->head_dim = m.row();
  c->n_rot = m.rope;
  c->rope_style = RopeStyle::kNorm;
  PG_RETURN_IF_ERROR(ReadYarn(f, a, c));
  if (c->arch == "glm-dsa") PG_RETURN_IF_ERROR(ReadIndexer(f, a, c));
  return Status::Ok();
}

}  // namespace pg
