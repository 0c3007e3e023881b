// TenantKeys: which tenant an API key belongs to, and which cache each tenant
// uses (docs/server.md, "Multi-tenant deployment").
//
// Keys come from `--api-key` (one tenant, "default") and `--api-keys-file`
// (one "TENANT KEY" pair per line, whitespace-separated, '#' starts a
// comment). Tenant ids are 1..64 bytes of [A-Za-z0-9_.-]; keys are 8..512
// bytes without whitespace; a key names one tenant. Reload() re-reads the
// file (SIGHUP); a bad file keeps the keys in force.
//
// Find() hashes the given key with SHA-256 and compares it with every known
// digest by CRYPTO_memcmp, without stopping at a match, so its time does not
// depend on which key (or how much of one) was right.
//
// Cache groups: each tenant's cache is salted by its group, which is the
// tenant itself unless `--tenant-share-cache a,b` puts it in a group with
// others (TenantCacheSalt, tenant.h).
//
// Thread-safety: Find/Reload/Enabled from any thread (the table is swapped
// under a mutex as one immutable snapshot).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "server/common/tenant.h"

namespace pg {

// The token of an Authorization header value "Bearer TOKEN": the scheme in
// any case (RFC 9110 11.1), then one or more spaces. "" for another scheme.
std::string BearerToken(std::string_view authorization);

struct TenantKeysConfig {
  std::string single_key;                // --api-key (tenant "default"); "" = none
  std::string keys_file;                 // --api-keys-file; "" = none
  std::vector<std::string> share_cache;  // --tenant-share-cache, each "a,b[,c...]"
};

class TenantKeys {
 public:
  // Reads the file and checks the share groups; the message names the flag and line.
  static Result<std::unique_ptr<TenantKeys>> Create(TenantKeysConfig config);

  // True when any key is configured (requests then need one).
  bool Enabled() const;
  // The tenant whose key `given` is; nullopt for none ("" never matches).
  std::optional<Tenant> Find(const std::string& given) const;
  // Re-reads --api-keys-file; on error keeps the old keys and returns why.
  Status Reload();
  // Number of keys in force.
  size_t size() const;

  // Parses the file's text (exposed for tests); `source` names it in errors.
  struct Entry {
    std::string tenant;
    std::string key;
  };
  static Result<std::vector<Entry>> Parse(const std::string& text, const std::string& source);

 private:
  struct Table;
  explicit TenantKeys(TenantKeysConfig config) : config_(std::move(config)) {}
  Result<std::shared_ptr<const Table>> Build() const;

  const TenantKeysConfig config_;
  mutable std::mutex mu_;
  std::shared_ptr<const Table> table_;
};

}  // namespace pg
