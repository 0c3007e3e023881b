#include "base/kv_layout.h"

#include <fmt/format.h>

namespace pg {

const char* KvDtypeName(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kF16: return "f16";
    case KvDtype::kBF16: return "bf16";
    case KvDtype::kF32: return "f32";
  }
  return "?";
}

const char* AttentionKindName(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kMha: return "mha";
    case AttentionKind::kMla: return "mla";
  }
  return "?";
}

Status KvLayout::Validate() const {
  if (n_layers <= 0 || n_kv_heads <= 0 || head_dim <= 0 || page_tokens <= 0) {
    return InvalidArgument(fmt::format("kv layout: every dimension must be positive ({})", ToString()));
  }
  if (dtype != KvDtype::kF16 && dtype != KvDtype::kBF16 && !(dtype == KvDtype::kF32 && kind == AttentionKind::kMla)) {
    return InvalidArgument("kv layout: dtype must be f16 or bf16 (f32: MLA layouts only)");
  }
  if (kind != AttentionKind::kMha && kind != AttentionKind::kMla) return InvalidArgument("kv layout: unknown kind");
  if (n_index_layers < 0 || index_dim < 0 || (n_index_layers > 0) != (index_dim > 0) ||
      (kind == AttentionKind::kMha && n_index_layers > 0) || n_index_layers > n_layers) {
    return InvalidArgument(fmt::format("kv layout: inconsistent indexer keys ({})", ToString()));
  }
  // Guard against overflow and absurd sizes before anyone multiplies further.
  const double bytes = (double(n_layers) * (kind == AttentionKind::kMla ? 1 : 2) * n_kv_heads * head_dim +
                        double(n_index_layers) * index_dim) *
                       page_tokens * double(KvElemBytes(dtype));
  if (bytes > double(1u << 30)) {
    return InvalidArgument(fmt::format("kv layout: block of {:.0f} bytes is too large ({})", bytes, ToString()));
  }
  return Status::Ok();
}

std::string KvLayout::ToString() const {
  std::string s = fmt::format("layers={} kv_heads={} head_dim={} page_tokens={} dtype={}", n_layers, n_kv_heads,
                              head_dim, page_tokens, KvDtypeName(dtype));
  if (kind != AttentionKind::kMha) s += fmt::format(" kind={}", AttentionKindName(kind));
  if (n_index_layers > 0) s += fmt::format(" index_layers={} index_dim={}", n_index_layers, index_dim);
  return s;
}

}  // namespace pg
