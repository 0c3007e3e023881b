// Rotary position embedding (RoPE): inverse frequencies (with llama3 and
// linear scaling), per-position cos/sin tables, and the two rotation layouts.
//
// Frequencies. For i in [0, n_rot/2):
//   inv_freq[i] = freq_base^(-2i / n_rot) / freq_factor[i]
// where freq_factor[] is the optional GGUF tensor `rope_freqs.weight`
// (llama.cpp's encoding of llama3 scaling). When no such tensor exists but
// the metadata says `{arch}.rope.scaling.type = llama3`, the factors are
// computed with the Llama 3.1 formula (as in HF transformers
// `_compute_llama3_parameters`):
//   wavelen = 2*pi / inv_freq
//   low_wavelen  = original_context / low_freq_factor
//   high_wavelen = original_context / high_freq_factor
//   wavelen < high_wavelen  -> inv_freq unchanged
//   wavelen > low_wavelen   -> inv_freq / factor
//   otherwise               -> smooth = (original_context / wavelen - low_freq_factor)
//                                       / (high_freq_factor - low_freq_factor)
//                              inv_freq * ((1 - smooth) / factor + smooth)
// Linear scaling (`rope.scaling.type = linear`, or rope.scale_linear)
// divides positions by `factor`, i.e. multiplies every inv_freq by 1/factor.
//
// Rotation, on one head vector x of head_dim floats, pairs (a, b):
//   NORM (llama):  a = x[2i],  b = x[2i+1]
//   NEOX (qwen2/3): a = x[i], b = x[i + n_rot/2]
//   a' = a*cos[i] - b*sin[i];  b' = a*sin[i] + b*cos[i]
// Elements past n_rot are left unchanged.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

namespace pg {

struct RopeScaling {
  enum class Kind { kNone, kLinear, kLlama3 };
  Kind kind = Kind::kNone;
  float factor = 1.0f;            // linear / llama3 factor
  float low_freq_factor = 1.0f;   // llama3
  float high_freq_factor = 4.0f;  // llama3
  float original_context = 8192;  // llama3: original_max_position_embeddings
};

// Fills inv_freq[n_rot / 2]. freq_factors (n_rot/2 entries, may be null) is
// the rope_freqs.weight tensor; when given it replaces the llama3 formula.
void RopeInvFreq(int64_t n_rot, float freq_base, const RopeScaling& scaling, const float* freq_factors,
                 float* inv_freq);

// cos_out[i] = cos(pos * inv_freq[i]), sin_out[i] likewise, i < n_rot/2.
// Angles are computed in double so large positions stay accurate.
void RopeCosSin(const float* inv_freq, int64_t n_rot, int64_t pos, float* cos_out, float* sin_out);

// Rotate n_heads consecutive head vectors (x + h * head_dim) in place.
// cos/sin have n_rot/2 entries (one position). n_rot <= head_dim, even.
void RopeNorm(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin);
void RopeNeox(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin);

}  // namespace pg
