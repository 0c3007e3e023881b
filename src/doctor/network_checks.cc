#include "doctor/network_checks.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <string_view>

#include "base/units.h"

namespace pg {
namespace {

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

ReplyPtr Command(redisContext* c, const char* fmt_str, const char* arg = nullptr) {
  void* r = arg ? redisCommand(c, fmt_str, arg) : redisCommand(c, fmt_str);
  return ReplyPtr(static_cast<redisReply*>(r));
}

// The value of a CONFIG GET reply ([name, value]), or "" when not given.
std::string ConfigValue(redisContext* c, const char* key) {
  ReplyPtr r = Command(c, "CONFIG GET %s", key);
  if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[1]->type != REDIS_REPLY_STRING) return "";
  return std::string(r->element[1]->str, r->element[1]->len);
}

}  // namespace

CheckResult CheckRedis(const std::string& url, double timeout_s, const std::string& password) {
  const char* name = "redis";
  if (url.empty()) return CheckResult::Skip(name, "no --kv-remote");
  auto parsed = ParseRedisUrl(url);
  if (!parsed.ok()) return CheckResult::Fail(name, parsed.status().message(), "use redis://HOST:PORT[/DB]");
  RedisUrl u = *parsed;
  if (!password.empty()) u.password = password;
  timeval tv{static_cast<time_t>(timeout_s),
             static_cast<suseconds_t>((timeout_s - static_cast<time_t>(timeout_s)) * 1e6)};
  std::unique_ptr<redisContext, ContextFree> c(redisConnectWithTimeout(u.host.c_str(), u.port, tv));
  std::string where = fmt::format("{}:{}", u.host, u.port);
  if (!c || c->err) {
    return CheckResult::Fail(name, fmt::format("{} unreachable: {}", where, c ? c->errstr : "out of memory"),
                             "start redis-server (or valkey-server) there, or fix --kv-remote");
  }
  redisSetTimeout(c.get(), tv);
  if (!u.password.empty()) {
    ReplyPtr r = u.user.empty() ? Command(c.get(), "AUTH %s", u.password.c_str())
                                : ReplyPtr(static_cast<redisReply*>(
                                      redisCommand(c.get(), "AUTH %s %s", u.user.c_str(), u.password.c_str())));
    if (!r || r->type == REDIS_REPLY_ERROR)
      return CheckResult::Fail(
          name, fmt::format("{}: AUTH refused", where),
          "fix the credentials (--kv-remote user, --kv-remote-password-file or PROSGROW_REDIS_PASSWORD)");
  }
  ReplyPtr pong = Command(c.get(), "PING");
  if (pong && pong->type == REDIS_REPLY_ERROR && std::string_view(pong->str).starts_with("NOAUTH")) {
    return CheckResult::Fail(name, fmt::format("{} needs a password (NOAUTH)", where),
                             "give it with --kv-remote-password-file or PROSGROW_REDIS_PASSWORD");
  }
  if (!pong || pong->type == REDIS_REPLY_ERROR) {
    return CheckResult::Fail(name, fmt::format("{}: no answer to PING: {}", where, pong ? pong->str : c->errstr),
                             "check that it is Redis/Valkey and answers within the timeout");
  }
  std::string policy = ConfigValue(c.get(), "maxmemory-policy");
  std::string maxmem = ConfigValue(c.get(), "maxmemory");
  if (policy.empty() || maxmem.empty()) {
    return CheckResult::Warn(name, fmt::format("{} answers PING; CONFIG GET refused", where),
                             "allow CONFIG GET, or make sure maxmemory is set with an allkeys-* eviction policy");
  }
  uint64_t maxmem_bytes = std::strtoull(maxmem.c_str(), nullptr, 10);
  std::string detail = fmt::format("{} answers PING; maxmemory {}, maxmemory-policy {}", where,
                                   maxmem_bytes ? FormatBytes(maxmem_bytes) : "unbounded", policy);
  if (policy == "noeviction") {
    return CheckResult::Warn(name, detail,
                             "CONFIG SET maxmemory-policy allkeys-lru: with noeviction a full Redis refuses KV "
                             "writes instead of dropping cold blocks");
  }
  if (maxmem_bytes == 0) {
    return CheckResult::Warn(name, detail,
                             "CONFIG SET maxmemory <bytes>: an unbounded cache grows until the host "
                             "runs out of memory");
  }
  return CheckResult::Ok(name, detail);
}

Result<TcpEndpoint> ParseTcpEndpoint(const std::string& endpoint) {
  const std::string scheme = "tcp://";
  if (endpoint.rfind(scheme, 0) != 0)
    return InvalidArgument(fmt::format("'{}' is not a tcp://HOST:PORT endpoint", endpoint));
  std::string rest = endpoint.substr(scheme.size());
  size_t colon = rest.rfind(':');
  TcpEndpoint e;
  if (colon == std::string::npos || colon == 0 || !ParseTcpPort(std::string_view(rest).substr(colon + 1), &e.port))
    return InvalidArgument(fmt::format("'{}' is not a tcp://HOST:PORT endpoint", endpoint));
  e.host = rest.substr(0, colon);
  return e;
}

CheckResult CheckBindable(const std::string& name, const std::string& host, int port, const std::string& flag,
                          bool reuse_port) {
  std::string h = host == "*" ? "0.0.0.0" : host;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string where = fmt::format("{}:{}", host, port);
  int gai = getaddrinfo(h.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (gai != 0) {
    return CheckResult::Fail(name, fmt::format("{}: cannot resolve the host: {}", where, gai_strerror(gai)),
                             fmt::format("fix the host in {}", flag));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, freeaddrinfo);
  int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
  if (fd < 0) return CheckResult::Fail(name, fmt::format("{}: socket: {}", where, std::strerror(errno)), "");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  int rc = bind(fd, res->ai_addr, res->ai_addrlen);
  int err = errno;
  close(fd);
  if (rc != 0) {
    return CheckResult::Fail(name, fmt::format("{} cannot be bound: {}", where, std::strerror(err)),
                             fmt::format("stop what holds it (ss -ltnp) or choose another {}", flag));
  }
  return CheckResult::Ok(name, fmt::format("{} bindable", where));
}

}  // namespace pg
