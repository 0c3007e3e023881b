#include "base/redis_url.h"

#include <fmt/format.h>

#include <charconv>

namespace pg {

bool ParseTcpPort(std::string_view s, int* port) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v <= 0 || v > 65535) return false;
  *port = v;
  return true;
}

std::string RedactRedisUrl(const std::string& url) {
  const std::string scheme = "redis://";
  const size_t start = url.rfind(scheme, 0) == 0 ? scheme.size() : 0;
  const size_t at = url.rfind('@');
  if (at == std::string::npos || at < start) return url;
  const size_t colon = url.find(':', start);
  if (colon == std::string::npos || colon > at) return url;  // a user, no password
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

Result<RedisUrl> ParseRedisUrl(const std::string& url_text) {
  const std::string url = RedactRedisUrl(url_text);  // what messages show
  const std::string scheme = "redis://";
  if (url_text.rfind(scheme, 0) != 0)
    return InvalidArgument(fmt::format("--kv-remote '{}' is not a redis:// URL", url));
  std::string rest = url_text.substr(scheme.size());
  RedisUrl u;
  if (size_t at = rest.rfind('@'); at != std::string::npos) {
    const std::string auth = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const size_t colon = auth.find(':');
    u.user = auth.substr(0, colon);
    if (colon != std::string::npos) u.password = auth.substr(colon + 1);
    if (colon == std::string::npos && u.user.empty())
      return InvalidArgument(fmt::format("--kv-remote '{}': credentials must be user[:password]", url));
  }
  if (size_t slash = rest.find('/'); slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    auto [p, ec] = std::from_chars(db.data(), db.data() + db.size(), u.db);
    if (!db.empty() && (ec != std::errc() || p != db.data() + db.size() || u.db < 0))
      return InvalidArgument(fmt::format("--kv-remote '{}': the database must be a number", url));
  }
  if (size_t colon = rest.rfind(':'); colon != std::string::npos) {
    if (!ParseTcpPort(std::string_view(rest).substr(colon + 1), &u.port))
      return InvalidArgument(fmt::format("--kv-remote '{}': bad port", url));
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return InvalidArgument(fmt::format("--kv-remote '{}' has no host", url));
  u.host = rest;
  return u;
}

}  // namespace pg
