#include "model/model_weights.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/rope.h"
#include "base/thread_pool.h"
#include "model/model_source.h"

namespace pg {
namespace {

// Drops this process's mapping of the whole pages inside a matrix that was
// repacked (its bytes are never read again; the page cache keeps the file),
// so a repacked model's resident memory is not twice its size. A page shared
// with a neighbouring tensor is left mapped.
void ReleaseMapped(const WeightMatrix& m) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(m.data);
  const uintptr_t end = begin + static_cast<uintptr_t>(m.rows) * m.row_bytes;
  const uintptr_t lo = (begin + page - 1) / page * page, hi = end / page * page;
  if (hi > lo) (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

std::string Shape(const GgufTensorInfo& t) {
  std::string s = "[";
  for (size_t i = 0; i < t.dims.size(); ++i) s += (i ? ", " : "") + std::to_string(t.dims[i]);
  return s + "]";
}

}  // namespace

// Reads one model's tensors into a ModelWeights: shape and type checks with
// one-line errors, f32 copies of small vectors.
class WeightLoader {
 public:
  WeightLoader(const ModelSource& f, const ModelConfig& c, ModelWeights* w) : f_(f), c_(c), w_(w) {}

  Status Matrix(const std::string& name, int64_t rows, int64_t cols, WeightMatrix* out) const {
    const GgufTensorInfo* t = f_.FindTensor(name);
    if (!t) return InvalidArgument(f_.path() + ": missing tensor " + name);
    if (t->dims.size() != 2 || t->dims[0] != cols || t->dims[1] != rows)
      return InvalidArgument(
          fmt::format("{}: tensor {} has shape {}, expected [{}, {}]", f_.path(), name, Shape(*t), cols, rows));
    PG_RETURN_IF_ERROR(CheckType(*t));
    *out = MakeWeightMatrix(t->type, t->data, rows, cols);
    return out->Validate();
  }

  // A 3-D [cols, rows, n] stack (n = n_expert, or heads), left in the mapping.
  Status Experts(const std::string& name, int64_t rows, int64_t cols, ExpertStack* out, int64_t n = 0) const {
    if (n == 0) n = c_.moe.n_expert;
    const GgufTensorInfo* t = f_.FindTensor(name);
    if (!t) return InvalidArgument(f_.path() + ": missing tensor " + name);
    if (t->dims.size() != 3 || t->dims[0] != cols || t->dims[1] != rows || t->dims[2] != n)
      return InvalidArgument(
          fmt::format("{}: tensor {} has shape {}, expected [{}, {}, {}]", f_.path(), name, Shape(*t), cols, rows, n));
    PG_RETURN_IF_ERROR(CheckType(*t));
    out->first = MakeWeightMatrix(t->type, t->data, rows, cols);
    out->expert_bytes = static_cast<size_t>(rows) * out->first.row_bytes;
    out->n_expert = n;
    if (out->expert_bytes * static_cast<size_t>(n) != t->n_bytes)
      return InvalidArgument(f_.path() + ": tensor " + name + " has the wrong size");
    return out->first.Validate();
  }

  Status Vec(const std::string& name, int64_t n, const float** out, bool optional) const {
    const GgufTensorInfo* t = f_.FindTensor(name);
    if (!t) return optional ? Status::Ok() : InvalidArgument(f_.path() + ": missing tensor " + name);
    if (t->n_elements() != n)
      return InvalidArgument(
          fmt::format("{}: tensor {} has shape {}, expected {} elements", f_.path(), name, Shape(*t), n));
    PG_RETURN_IF_ERROR(CheckType(*t));
    w_->owned_.emplace_back(static_cast<size_t>(n));
    PG_RETURN_IF_ERROR(DequantizeRow(t->type, t->data, w_->owned_.back().data(), n));
    *out = w_->owned_.back().data();
    return Status::Ok();
  }

  Status Layer(int64_t i, LayerWeights* L) const {
    const ModelConfig& c = c_;
    const std::string p = "blk." + std::to_string(i) + ".";
    PG_RETURN_IF_ERROR(Vec(p + "attn_norm.weight", c.n_embd, &L->attn_norm, false));
    if (c.mla.enabled) {
      PG_RETURN_IF_ERROR(MlaAttention(i, p, L));
      return Ffn(i, p, "ffn_norm.weight", L);
    }
    PG_RETURN_IF_ERROR(Matrix(p + "attn_q.weight", c.q_dim(), c.n_embd, &L->wq));
    PG_RETURN_IF_ERROR(Matrix(p + "attn_k.weight", c.kv_dim(), c.n_embd, &L->wk));
    PG_RETURN_IF_ERROR(Matrix(p + "attn_v.weight", c.kv_dim(), c.n_embd, &L->wv));
    PG_RETURN_IF_ERROR(Matrix(p + "attn_output.weight", c.n_embd, c.q_dim(), &L->wo));
    // glm4moe's biases and q/k norms are optional (llama.cpp loads them if present).
    const bool glm = c.arch == "glm4moe";
    PG_RETURN_IF_ERROR(Vec(p + "attn_q.bias", c.q_dim(), &L->bq, !c.qkv_bias));
    PG_RETURN_IF_ERROR(Vec(p + "attn_k.bias", c.kv_dim(), &L->bk, !c.qkv_bias));
    PG_RETURN_IF_ERROR(Vec(p + "attn_v.bias", c.kv_dim(), &L->bv, !c.qkv_bias));
    if (c.qk_norm || glm) {
      PG_RETURN_IF_ERROR(Vec(p + "attn_q_norm.weight", c.head_dim, &L->q_norm, glm));
      PG_RETURN_IF_ERROR(Vec(p + "attn_k_norm.weight", c.head_dim, &L->k_norm, glm));
    }
    if ((L->bq == nullptr) != (L->bk == nullptr) || (L->bq == nullptr) != (L->bv == nullptr))
      return InvalidArgument(f_.path() + ": layer " + std::to_string(i) + " has some of the q/k/v biases, not all");
    if ((L->q_norm == nullptr) != (L->k_norm == nullptr))
      return InvalidArgument(f_.path() + ": layer " + std::to_string(i) + " has one of attn_q_norm / attn_k_norm");
    return Ffn(i, p, glm ? "post_attention_norm.weight" : "ffn_norm.weight", L);
  }

  // The pre-FFN norm and the dense or MoE FFN of layer i.
  Status Ffn(int64_t i, const std::string& p, const char* norm, LayerWeights* L) const {
    const ModelConfig& c = c_;
    PG_RETURN_IF_ERROR(Vec(p + norm, c.n_embd, &L->ffn_norm, false));
    if (c.IsMoeLayer(i)) return MoeFfn(p, L);
    PG_RETURN_IF_ERROR(Matrix(p + "ffn_gate.weight", c.n_ff, c.n_embd, &L->gate));
    PG_RETURN_IF_ERROR(Matrix(p + "ffn_up.weight", c.n_ff, c.n_embd, &L->up));
    return Matrix(p + "ffn_down.weight", c.n_embd, c.n_ff, &L->down);
  }

  // MLA attention tensors of layer i, and the indexer where it runs one
  // (the NextN block's indexer, i >= n_layer, is loaded when present).
  Status MlaAttention(int64_t i, const std::string& p, LayerWeights* L) const {
    const ModelConfig& c = c_;
    const MlaConfig& m = c.mla;
    const int64_t D = c.n_embd, H = c.n_head;
    if (m.q_lora > 0) {
      PG_RETURN_IF_ERROR(Matrix(p + "attn_q_a.weight", m.q_lora, D, &L->wq_a));
      PG_RETURN_IF_ERROR(Vec(p + "attn_q_a_norm.weight", m.q_lora, &L->q_a_norm, false));
      PG_RETURN_IF_ERROR(Matrix(p + "attn_q_b.weight", H * m.k_head(), m.q_lora, &L->wq_b));
    } else {
      PG_RETURN_IF_ERROR(Matrix(p + "attn_q.weight", H * m.k_head(), D, &L->wq));
    }
    PG_RETURN_IF_ERROR(Matrix(p + "attn_kv_a_mqa.weight", m.row(), D, &L->wkv_a));
    PG_RETURN_IF_ERROR(Vec(p + "attn_kv_a_norm.weight", m.kv_lora, &L->kv_a_norm, false));
    PG_RETURN_IF_ERROR(Experts(p + "attn_k_b.weight", m.kv_lora, m.nope, &L->wk_b, H));
    PG_RETURN_IF_ERROR(Experts(p + "attn_v_b.weight", m.v_head, m.kv_lora, &L->wv_b, H));
    PG_RETURN_IF_ERROR(Matrix(p + "attn_output.weight", D, H * m.v_head, &L->wo));
    const bool trunk = i < c.n_layer;
    if (!m.sparse() || (trunk && !m.index_full[static_cast<size_t>(i)])) return Status::Ok();
    if (!trunk && !f_.FindTensor(p + "indexer.attn_k.weight")) return Status::Ok();
    if (m.q_lora == 0) return InvalidArgument(f_.path() + ": the DSA indexer needs a q LoRA");
    PG_RETURN_IF_ERROR(Matrix(p + "indexer.attn_q_b.weight", m.index_heads * m.index_dim, m.q_lora, &L->ix_q_b));
    PG_RETURN_IF_ERROR(Matrix(p + "indexer.attn_k.weight", m.index_dim, D, &L->ix_k));
    PG_RETURN_IF_ERROR(Vec(p + "indexer.k_norm.weight", m.index_dim, &L->ix_k_norm, false));
    PG_RETURN_IF_ERROR(Vec(p + "indexer.k_norm.bias", m.index_dim, &L->ix_k_norm_b, false));
    return Matrix(p + "indexer.proj.weight", m.index_heads, D, &L->ix_proj);
  }

  // NextN block j (blk.{n_layer + j}).
  Status Nextn(int64_t j, NextnWeights* n) const {
    const int64_t i = c_.n_layer + j, D = c_.n_embd;
    const std::string p = "blk." + std::to_string(i) + ".";
    PG_RETURN_IF_ERROR(Layer(i, &n->block));
    PG_RETURN_IF_ERROR(Matrix(p + "nextn.eh_proj.weight", D, 2 * D, &n->eh_proj));
    PG_RETURN_IF_ERROR(Vec(p + "nextn.enorm.weight", D, &n->enorm, false));
    PG_RETURN_IF_ERROR(Vec(p + "nextn.hnorm.weight", D, &n->hnorm, false));
    return Vec(p + "nextn.shared_head_norm.weight", D, &n->shared_head_norm, true);
  }

 private:
  Status CheckType(const GgufTensorInfo& t) const {
    if (IsSupportedWeightType(t.type)) return Status::Ok();
    return Unimplemented(f_.path() + ": tensor " + t.name + " has unsupported type " + TypeName(t.type));
  }

  Status MoeFfn(const std::string& p, LayerWeights* L) const {
    const int64_t D = c_.n_embd, E = c_.moe.n_expert, F = c_.moe.n_ff_exp, FS = c_.moe.n_shared * F;
    PG_RETURN_IF_ERROR(Matrix(p + "ffn_gate_inp.weight", E, D, &L->router));
    PG_RETURN_IF_ERROR(Vec(p + "exp_probs_b.bias", E, &L->router_bias, true));
    PG_RETURN_IF_ERROR(Experts(p + "ffn_gate_exps.weight", F, D, &L->gate_exps));
    PG_RETURN_IF_ERROR(Experts(p + "ffn_up_exps.weight", F, D, &L->up_exps));
    PG_RETURN_IF_ERROR(Experts(p + "ffn_down_exps.weight", D, F, &L->down_exps));
    if (FS == 0) return Status::Ok();
    PG_RETURN_IF_ERROR(Matrix(p + "ffn_gate_shexp.weight", FS, D, &L->gate_shexp));
    PG_RETURN_IF_ERROR(Matrix(p + "ffn_up_shexp.weight", FS, D, &L->up_shexp));
    return Matrix(p + "ffn_down_shexp.weight", D, FS, &L->down_shexp);
  }

  const ModelSource& f_;
  const ModelConfig& c_;
  ModelWeights* w_;
};

std::vector<float> ModelWeights::InvFreq(const ModelConfig& c) const {
  RopeScaling scaling;
  if (c.rope_scale_factor > 0) {
    scaling.kind = RopeScaling::Kind::kLlama3;
    scaling.factor = c.rope_scale_factor;
    scaling.low_freq_factor = c.rope_low_freq_factor;
    scaling.high_freq_factor = c.rope_high_freq_factor;
    scaling.original_context = static_cast<float>(c.rope_orig_ctx);
  }
  std::vector<float> f(static_cast<size_t>(c.n_rot / 2));
  RopeInvFreq(c.n_rot, c.rope_base, scaling, rope_freqs, f.data());
  return f;
}

Result<std::unique_ptr<ModelWeights>> ModelWeights::Load(const ModelSource& f, const ModelConfig& c, bool repack) {
  auto w = std::make_unique<ModelWeights>();
  const WeightLoader load(f, c, w.get());
  PG_RETURN_IF_ERROR(load.Matrix("token_embd.weight", c.n_vocab, c.n_embd, &w->token_embd));
  if (c.tied_embeddings)
    w->output = w->token_embd;
  else
    PG_RETURN_IF_ERROR(load.Matrix("output.weight", c.n_vocab, c.n_embd, &w->output));
  PG_RETURN_IF_ERROR(load.Vec("output_norm.weight", c.n_embd, &w->output_norm, false));
  PG_RETURN_IF_ERROR(load.Vec("rope_freqs.weight", c.n_rot / 2, &w->rope_freqs, true));
  w->layers.resize(static_cast<size_t>(c.n_layer));
  for (int64_t i = 0; i < c.n_layer; ++i) PG_RETURN_IF_ERROR(load.Layer(i, &w->layers[static_cast<size_t>(i)]));
  // NextN blocks: glm4moe's are skipped as before; the MLA archs' are loaded
  // (the multi-token-prediction drafter's weights).
  if (c.mla.enabled) {
    w->nextn.resize(static_cast<size_t>(c.n_nextn));
    for (int64_t j = 0; j < c.n_nextn; ++j) PG_RETURN_IF_ERROR(load.Nextn(j, &w->nextn[static_cast<size_t>(j)]));
  }
  if (repack) {
    // A tied output projection gets its own copy: token_embd stays row-major
    // (and mapped) for the embedding lookup.
    std::vector<WeightMatrix*> ms{&w->output};
    std::vector<LayerWeights*> blocks;  // the trunk's layers, then the NextN blocks (the MTP drafter's)
    for (LayerWeights& L : w->layers) blocks.push_back(&L);
    for (NextnWeights& n : w->nextn) {
      blocks.push_back(&n.block);
      ms.push_back(&n.eh_proj);
    }
    for (LayerWeights* B : blocks) {
      LayerWeights& L = *B;
      for (WeightMatrix* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.gate, &L.up, &L.down, &L.gate_shexp, &L.up_shexp,
                              &L.down_shexp, &L.wq_a, &L.wq_b, &L.wkv_a, &L.ix_q_b, &L.ix_k})
        if (m->rows > 0) ms.push_back(m);
    }
    std::erase_if(ms, [&](const WeightMatrix* m) { return f.Owns(m->data); });  // see ModelSource::Owns
    // Each expert stack (and MLA's per-head k_b / v_b) is repacked as one matrix of n_expert * rows rows:
    // with rows a multiple of 8 no row group crosses an expert, so expert e
    // starts at e * GroupOffset(view, rows) of the copy.
    std::vector<ExpertStack*> stacks;
    for (LayerWeights* L : blocks)
      for (ExpertStack* s : {&L->gate_exps, &L->up_exps, &L->down_exps, &L->wk_b, &L->wv_b})
        if (s->n_expert > 0 && s->first.rows % kQ8_0x8Rows == 0 && !f.Owns(s->first.data)) stacks.push_back(s);
    std::vector<WeightMatrix> whole(stacks.size());  // sized once: ms points into it
    for (size_t i = 0; i < stacks.size(); ++i) {
      whole[i] = stacks[i]->first;
      whole[i].rows *= stacks[i]->n_expert;
      ms.push_back(&whole[i]);
    }
    ThreadPool pool(0);  // one thread per core: the copy is memory-bound
    w->repacked_.AddAll(ms, pool, ActiveKernels(), [&](size_t i, const WeightMatrix& src) {
      if (!(ms[i] == &w->output && c.tied_embeddings)) ReleaseMapped(src);
    });
    for (size_t i = 0; i < stacks.size(); ++i) {
      ExpertStack& s = *stacks[i];
      const int64_t rows = s.first.rows;
      s.first = whole[i];
      s.first.rows = rows;
      s.expert_bytes = GroupOffset(s.first, rows);
    }
  }
  return w;
}

}  // namespace pg
