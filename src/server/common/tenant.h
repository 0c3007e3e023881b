// Tenant: who sent a request (the API key's owner) and what that scopes:
// the cache salt of its KV blocks and the names of its sessions.
//
//   TenantCacheSalt(tenant, cache_salt)  -> CacheRequest salt (kv block hashes)
//   TenantSessionId(tenant, session)     -> the engine's session name
//
// A server without keys has the anonymous tenant (id ""): its salt is the
// request's cache_salt alone ("" without one) and its session names are the
// client's, exactly as before tenants existed.
//
// Tenant::Current() is the tenant of the request the calling HTTP thread is
// handling, set by HttpServer around each /v1 handler (TenantScope).
#pragma once

#include <cstddef>
#include <string>

namespace pg {

constexpr size_t kMaxTenantIdBytes = 64;
constexpr size_t kMaxSessionIdBytes = 256;  // X-Session-Id, user, metadata.user_id
constexpr size_t kMaxCacheSaltBytes = 256;  // the request field cache_salt

struct Tenant {
  std::string id;           // "" = anonymous (no API keys configured)
  std::string cache_group;  // whose cache it uses: its own id unless shared

  // The tenant of the request this thread is handling (anonymous outside one).
  static const Tenant& Current();
};

// Sets Tenant::Current() for the lifetime of the scope (one handler call).
class TenantScope {
 public:
  explicit TenantScope(const Tenant* t);
  ~TenantScope();
  TenantScope(const TenantScope&) = delete;
  TenantScope& operator=(const TenantScope&) = delete;

 private:
  const Tenant* previous_;
};

// The KV cache salt of a request: "" for the anonymous tenant without a
// cache_salt (the shared cache of a keyless server); otherwise both parts,
// length-prefixed so no two (group, salt) pairs give the same text.
std::string TenantCacheSalt(const Tenant& t, const std::string& cache_salt);

// The engine's name for a client's session: the tenant's id, '/', the
// client's name (tenant ids hold no '/'); the client's name alone for the
// anonymous tenant. "" stays "" (no session).
std::string TenantSessionId(const Tenant& t, const std::string& session);

// True when `id` is a valid tenant id (1..64 bytes of [A-Za-z0-9_.-]).
bool ValidTenantId(const std::string& id);

}  // namespace pg
