#include "doctor/block_hash_check.h"

#include <string>
#include <vector>

namespace pg {

namespace {

std::string Where(const BlockHashExposure& e) {
  std::vector<std::string> parts;
  if (e.kv_events) parts.push_back("the KV events");
  if (e.kv_remote) parts.push_back("the Redis key names");
  if (e.disk) parts.push_back("the disk tier's file names");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

}  // namespace

CheckResult CheckBlockHashes(const BlockHashExposure& e) {
  const std::string where = Where(e);
  if (e.keyed) {
    return CheckResult::Ok(
        "block hashes", "keyed with the fleet secret (HMAC-SHA256)" +
                            (where.empty() ? std::string() : "; " + where + " say nothing about prompts without it") +
                            "; replicas share blocks only under the same secret");
  }
  if (where.empty()) {
    return CheckResult::Ok("block hashes",
                           "not keyed (no --kv-hash-secret-file); they leave this server only through /tokenize, "
                           "to the caller's own tenant");
  }
  return CheckResult::Warn(
      "block hashes",
      "not keyed: " + where +
          " carry SHA-256 hashes of the model, the tenant and the prompt tokens, so anyone who reads them and knows "
          "the model and a tenant can check offline whether that tenant sent a guessed prompt",
      "give every replica the same secret with --kv-hash-secret-file FILE (16+ bytes) or PROSGROW_KV_HASH_SECRET");
}

}  // namespace pg
