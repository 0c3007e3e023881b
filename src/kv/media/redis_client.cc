#include "kv/media/redis_client.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>

#include "base/clock.h"

namespace pg {

namespace {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

// One command as hiredis's binary-safe argv (pointers into the strings, lengths).
struct Argv {
  explicit Argv(const RedisClient::Command& c) {
    for (const std::string& a : c) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
  }
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
};

ReplyPtr CommandArgv(redisContext* ctx, const RedisClient::Command& c) {
  Argv a(c);
  return ReplyPtr(static_cast<redisReply*>(redisCommandArgv(ctx, int(a.ptrs.size()), a.ptrs.data(), a.lens.data())));
}

void AppendArgv(redisContext* ctx, const RedisClient::Command& c) {
  Argv a(c);
  redisAppendCommandArgv(ctx, int(a.ptrs.size()), a.ptrs.data(), a.lens.data());
}

timeval Remaining(double deadline_s) {
  const double left = std::max(0.001, deadline_s - NowSeconds());
  timeval tv;
  tv.tv_sec = static_cast<time_t>(left);
  tv.tv_usec = static_cast<suseconds_t>((left - std::floor(left)) * 1e6);
  return tv;
}

RedisReply Convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:  // the three replies that carry text
      out.type = r->type == REDIS_REPLY_STRING   ? RedisReply::Type::kString
                 : r->type == REDIS_REPLY_STATUS ? RedisReply::Type::kStatus
                                                 : RedisReply::Type::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      out.integer = static_cast<int64_t>(r->elements);
      break;
    default: out.type = RedisReply::Type::kNil;
  }
  return out;
}

// "MOVED 3999 127.0.0.1:6381" / "ASK 3999 127.0.0.1:6381": the slot and node.
bool ParseRedirect(const std::string& err, bool* ask, int* slot, std::string* host, int* port) {
  *ask = err.rfind("ASK ", 0) == 0;
  if (!*ask && err.rfind("MOVED ", 0) != 0) return false;
  const size_t sp1 = err.find(' ');
  const size_t sp2 = err.find(' ', sp1 + 1);
  if (sp2 == std::string::npos) return false;
  const std::string_view slot_s = std::string_view(err).substr(sp1 + 1, sp2 - sp1 - 1);
  auto [p, ec] = std::from_chars(slot_s.data(), slot_s.data() + slot_s.size(), *slot);
  if (ec != std::errc() || p != slot_s.data() + slot_s.size()) return false;
  const std::string node = err.substr(sp2 + 1);
  const size_t colon = node.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  *host = node.substr(0, colon);
  return ParseTcpPort(std::string_view(node).substr(colon + 1), port);
}

uint16_t Crc16(std::string_view s) {
  uint16_t crc = 0;
  for (unsigned char ch : s) {
    crc ^= static_cast<uint16_t>(ch) << 8;
    for (int i = 0; i < 8; ++i) crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021) : uint16_t(crc << 1);
  }
  return crc;
}

}  // namespace

int RedisKeySlot(std::string_view key) {
  // Only the part between the first '{' and the next '}' counts, when non-empty.
  if (size_t open = key.find('{'); open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return Crc16(key) & 16383;
}

struct RedisClient::Node {
  redisContext* ctx = nullptr;
  ~Node() {
    if (ctx) redisFree(ctx);
  }
};

RedisClient::RedisClient(RedisUrl seed) : seed_(std::move(seed)) {}
RedisClient::~RedisClient() = default;

void RedisClient::Disconnect() { nodes_.clear(); }

Result<RedisClient::Node*> RedisClient::Connect(const std::string& host, int port, double deadline_s) {
  const std::string name = fmt::format("{}:{}", host, port);
  if (auto it = nodes_.find(name); it != nodes_.end()) return it->second.get();
  if (NowSeconds() >= deadline_s) return Unavailable(fmt::format("redis {}: deadline passed before connecting", name));
  auto node = std::make_unique<Node>();
  node->ctx = redisConnectWithTimeout(host.c_str(), port, Remaining(deadline_s));
  if (node->ctx == nullptr || node->ctx->err)
    return Unavailable(fmt::format("redis {}: {}", name, node->ctx ? node->ctx->errstr : "cannot allocate a context"));
  redisSetTimeout(node->ctx, Remaining(deadline_s));
  std::vector<Command> setup;
  if (!seed_.password.empty()) {
    if (seed_.user.empty())
      setup.push_back({"AUTH", seed_.password});
    else
      setup.push_back({"AUTH", seed_.user, seed_.password});
  }
  if (seed_.db != 0) setup.push_back({"SELECT", std::to_string(seed_.db)});
  for (const Command& c : setup) {
    ReplyPtr r = CommandArgv(node->ctx, c);
    if (!r) return Unavailable(fmt::format("redis {}: {}", name, node->ctx->errstr));
    if (r->type == REDIS_REPLY_ERROR)
      return Unavailable(fmt::format("redis {}: {} refused: {}", name, c[0], std::string(r->str, r->len)));
  }
  Node* out = node.get();
  nodes_[name] = std::move(node);
  return out;
}

Result<RedisReply> RedisClient::Redirected(const Command& command, const RedisReply& reply, double deadline_s,
                                           int hops) {
  bool ask = false;
  int slot = 0, port = 0;
  std::string host;
  if (reply.type != RedisReply::Type::kError || !ParseRedirect(reply.str, &ask, &slot, &host, &port)) return reply;
  if (hops >= 3) return Unavailable(fmt::format("redis: too many cluster redirects ({})", reply.str));
  redirects_++;
  if (!ask) slot_node_[slot] = fmt::format("{}:{}", host, port);
  PG_ASSIGN_OR_RETURN(Node * node, Connect(host, port, deadline_s));
  std::vector<Command> batch;
  if (ask) batch.push_back({"ASKING"});
  batch.push_back(command);
  for (const Command& c : batch) {
    redisSetTimeout(node->ctx, Remaining(deadline_s));
    ReplyPtr r = CommandArgv(node->ctx, c);
    if (!r) {
      const std::string why = node->ctx->errstr;
      Disconnect();
      return Unavailable(fmt::format("redis {}:{}: {}", host, port, why));
    }
    if (&c == &batch.back()) return Redirected(command, Convert(r.get()), deadline_s, hops + 1);
  }
  return Internal("redis: empty redirect batch");
}

Result<std::vector<RedisReply>> RedisClient::Run(const std::vector<Command>& commands, double deadline_s) {
  // Group the commands by the node their key's slot is known to live on.
  const std::string seed_name = fmt::format("{}:{}", seed_.host, seed_.port);
  std::map<std::string, std::vector<size_t>> by_node;
  for (size_t i = 0; i < commands.size(); ++i) {
    std::string node = seed_name;
    if (commands[i].size() > 1 && !slot_node_.empty()) {
      auto it = slot_node_.find(RedisKeySlot(commands[i][1]));
      if (it != slot_node_.end()) node = it->second;
    }
    by_node[node].push_back(i);
  }
  std::vector<RedisReply> replies(commands.size());
  for (const auto& [name, idx] : by_node) {
    const size_t colon = name.rfind(':');
    PG_ASSIGN_OR_RETURN(Node * node, Connect(name.substr(0, colon), std::stoi(name.substr(colon + 1)), deadline_s));
    for (size_t i : idx) {
      AppendArgv(node->ctx, commands[i]);
    }
    for (size_t i : idx) {
      redisSetTimeout(node->ctx, Remaining(deadline_s));
      void* raw = nullptr;
      if (redisGetReply(node->ctx, &raw) != REDIS_OK || raw == nullptr || NowSeconds() > deadline_s) {
        if (raw) freeReplyObject(raw);
        const bool timed_out = NowSeconds() > deadline_s || (node->ctx->err == REDIS_ERR_IO && errno == EAGAIN);
        const std::string why = timed_out ? "no reply before the deadline" : node->ctx->errstr;
        Disconnect();  // the pipeline's remaining replies are lost with the connection
        return Unavailable(fmt::format("redis {}: {}", name, why));
      }
      ReplyPtr r(static_cast<redisReply*>(raw));
      replies[i] = Convert(r.get());
    }
  }
  for (size_t i = 0; i < commands.size(); ++i) {
    if (replies[i].type != RedisReply::Type::kError) continue;
    PG_ASSIGN_OR_RETURN(replies[i], Redirected(commands[i], replies[i], deadline_s, 0));
  }
  return replies;
}

Result<RedisReply> RedisClient::RunOne(const Command& command, double deadline_s) {
  PG_ASSIGN_OR_RETURN(std::vector<RedisReply> r, Run({command}, deadline_s));
  return r[0];
}

}  // namespace pg
