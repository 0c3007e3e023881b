#include "doctor/kv_check.h"

#include <fmt/format.h>

#include "base/units.h"

namespace pg {

std::string KvTokenParts(const KvLayout& l) {
  const char* dtype = KvDtypeName(l.dtype);
  std::string s = l.kind == AttentionKind::kMla
                      ? fmt::format("{} layers x latent {} x {}", l.n_layers, l.kv_dim(), dtype)
                      : fmt::format("{} layers x K+V {} x {} x {}", l.n_layers, l.n_kv_heads, l.head_dim, dtype);
  if (l.n_index_layers > 0)
    s += fmt::format(" + {} indexer layers x key {} x {}", l.n_index_layers, l.index_dim, dtype);
  return s;
}

CheckResult CheckKvBytes(const KvLayout& l, const KvTierBytes& tiers) {
  const uint64_t token = l.token_bytes(), block = l.block_bytes();
  if (token == 0 || block == 0) return CheckResult::Fail("kv cache", "the model caches 0 bytes per token", "");
  auto tokens_in = [&](uint64_t bytes) { return bytes / block * uint64_t(l.page_tokens); };
  std::string s =
      fmt::format("{} per token ({}); block of {} tokens {}; device tier holds {} tokens", FormatBytes(token),
                  KvTokenParts(l), l.page_tokens, FormatBytes(block), tokens_in(tiers.device));
  if (tiers.host > 0) s += fmt::format(", host {}", tokens_in(tiers.host));
  if (tiers.disk > 0) s += fmt::format(", disk {}", tokens_in(tiers.disk));
  return CheckResult::Ok("kv cache", s);
}

}  // namespace pg
