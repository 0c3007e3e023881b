#include "server/common/tenant.h"

#include <fmt/format.h>

namespace pg {
namespace {

thread_local const Tenant* t_current = nullptr;

}  // namespace

const Tenant& Tenant::Current() {
  static const Tenant kAnonymous;
  return t_current ? *t_current : kAnonymous;
}

TenantScope::TenantScope(const Tenant* t) : previous_(t_current) { t_current = t; }
TenantScope::~TenantScope() { t_current = previous_; }

std::string TenantCacheSalt(const Tenant& t, const std::string& cache_salt) {
  if (t.id.empty() && cache_salt.empty()) return "";
  return fmt::format("tenant:{}:{}|salt:{}:{}", t.cache_group.size(), t.cache_group, cache_salt.size(), cache_salt);
}

std::string TenantSessionId(const Tenant& t, const std::string& session) {
  if (session.empty() || t.id.empty()) return session;
  return t.id + "/" + session;
}

bool ValidTenantId(const std::string& id) {
  if (id.empty() || id.size() > kMaxTenantIdBytes) return false;
  for (char c : id) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace pg
