// RedisClient: a small synchronous client for the remote KV tier, over
// hiredis. It speaks only commands Redis and Valkey share (GET, SET, DEL,
// EXISTS, PEXPIRE, AUTH, SELECT), sends a batch of commands pipelined, and
// follows Redis Cluster redirects itself (hiredis does not): a -MOVED reply
// records the slot's node and re-sends the command there; -ASK re-sends it
// once there after ASKING. Keys carry no hash tag, so a request's blocks
// spread over the cluster's nodes; each command of a batch goes to the node
// its slot is known to live on (CRC16 of the key, as Redis Cluster computes
// it), the seed node until a redirect says otherwise.
//
// Every socket read and write has a deadline: a batch fails (Unavailable)
// once the deadline passes or a connection breaks, and the broken
// connection is dropped (the next batch reconnects).
//
// Thread-safety: none; one thread drives one client.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/redis_url.h"
#include "base/status.h"

struct redisContext;

namespace pg {

// redis://[[user]:password@]HOST[:PORT][/DB]

// The Redis Cluster slot of a key (CRC16-XMODEM mod 16384, honouring {tags}).
int RedisKeySlot(std::string_view key);

struct RedisReply {
  enum class Type { kNil, kString, kInteger, kStatus, kError, kArray };
  Type type = Type::kNil;
  std::string str;      // kString, kStatus, kError
  int64_t integer = 0;  // kInteger
  bool ok() const { return type != Type::kError; }
};

class RedisClient {
 public:
  explicit RedisClient(RedisUrl seed);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  using Command = std::vector<std::string>;  // argv, binary safe
  // Sends every command (pipelined per node) and returns their replies in
  // order, all before `deadline_s` (NowSeconds() clock). A redirect is
  // followed up to 3 times per command. Unavailable when a node cannot be
  // reached, a connection breaks, or the deadline passes.
  Result<std::vector<RedisReply>> Run(const std::vector<Command>& commands, double deadline_s);
  // One command.
  Result<RedisReply> RunOne(const Command& command, double deadline_s);

  // Drops every connection (after an error, or to reconnect).
  void Disconnect();
  int64_t redirects() const { return redirects_; }

 private:
  struct Node;
  Result<Node*> Connect(const std::string& host, int port, double deadline_s);
  Result<RedisReply> Redirected(const Command& command, const RedisReply& reply, double deadline_s, int hops);

  RedisUrl seed_;
  std::map<std::string, std::unique_ptr<Node>> nodes_;  // by "host:port"
  std::map<int, std::string> slot_node_;                // slot -> "host:port", learnt from -MOVED
  int64_t redirects_ = 0;
};

}  // namespace pg
