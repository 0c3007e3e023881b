#include "base/kv_layout.h"

#include <fmt/format.h>

namespace pg {

const char* KvDtypeName(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kF16: return "f16";
    case KvDtype::kBF16: return "bf16";
  }
  return "?";
}

Status KvLayout::Validate() const {
  if (n_layers <= 0 || n_kv_heads <= 0 || head_dim <= 0 || page_tokens <= 0) {
    return InvalidArgument(fmt::format("kv layout: every dimension must be positive ({})", ToString()));
  }
  if (dtype != KvDtype::kF16 && dtype != KvDtype::kBF16) {
    return InvalidArgument("kv layout: dtype must be f16 or bf16");
  }
  // Guard against overflow and absurd sizes before anyone multiplies further.
  const double bytes = double(n_layers) * 2 * page_tokens * n_kv_heads * head_dim * 2;
  if (bytes > double(1u << 30)) {
    return InvalidArgument(fmt::format("kv layout: block of {:.0f} bytes is too large ({})", bytes, ToString()));
  }
  return Status::Ok();
}

std::string KvLayout::ToString() const {
  return fmt::format("layers={} kv_heads={} head_dim={} page_tokens={} dtype={}", n_layers, n_kv_heads, head_dim,
                     page_tokens, KvDtypeName(dtype));
}

}  // namespace pg
