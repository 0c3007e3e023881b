#include "kv/media/remote_tier.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/clock.h"
#include "base/log.h"
#include "base/stop_and_join.h"
#include "metrics/metric_set.h"

namespace pg {

namespace {
constexpr size_t kBatchBlocks = 16;               // commands per pipelined batch
constexpr size_t kMaxStoredRemembered = 1 << 20;  // hashes remembered as stored
}  // namespace

Result<std::unique_ptr<RemoteTier>> RemoteTier::Create(const RemoteTierConfig& config, const KvLayout& layout,
                                                       const std::string& model_identity) {
  PG_RETURN_IF_ERROR(layout.Validate());
  PG_ASSIGN_OR_RETURN(RedisUrl ep, ParseRedisUrl(config.url));
  if (!config.password.empty()) ep.password = config.password;
  if (config.secret.empty()) {
    PG_LOG_WARN(
        "kv remote tier: no --kv-remote-secret-file: blocks read from {} are not authenticated, so anyone "
        "who can write to that Redis can plant KV this server serves",
        RedactRedisUrl(config.url));
  }
  if (config.ttl_s < 0) return InvalidArgument("--kv-remote-ttl must be >= 0 seconds (0 = no expiry)");
  if (config.timeout_s <= 0) return InvalidArgument("--kv-remote-timeout-ms must be > 0");
  if (config.write_queue_blocks < 1) return InvalidArgument("remote tier: write queue must hold at least one block");
  return std::unique_ptr<RemoteTier>(new RemoteTier(config, layout, model_identity, std::move(ep)));
}

RemoteTier::RemoteTier(const RemoteTierConfig& config, const KvLayout& layout, const std::string& model_identity,
                       RedisUrl endpoint)
    : cfg_(config),
      layout_(layout),
      codec_(layout, model_identity, config.secret),
      write_client_(endpoint),
      read_client_(endpoint) {
  writer_ = std::thread([this] { WriterLoop(); });
  reader_ = std::thread([this] { ReaderLoop(); });
}

RemoteTier::~RemoteTier() { StopAndJoin(mu_, &stop_, {&write_cv_, &read_cv_}, {&writer_, &reader_}); }

bool RemoteTier::Skipping() const { return NowSeconds() < skip_until_s_.load(); }

void RemoteTier::Failed(const Status& why) {
  errors_++;
  const double now = NowSeconds();
  // One warning per back-off period, not one per command.
  if (now >= skip_until_s_.load())
    PG_LOG_WARN("kv remote tier: {}; treating it as a miss, retrying in {:.1f} s", why.message(), cfg_.retry_after_s);
  skip_until_s_.store(now + cfg_.retry_after_s);
}

// ---------------------------------------------------------------- lookups

void RemoteTier::Lookup(uint64_t ticket, std::vector<RemoteWant> want, double deadline_s) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    lookups_.push_back(PendingLookup{ticket, std::move(want), deadline_s});
  }
  read_cv_.notify_one();
}

std::vector<RemoteFound> RemoteTier::TakeFound() {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<RemoteFound> out;
  out.swap(found_);
  return out;
}

void RemoteTier::ReaderLoop() {
  for (;;) {
    PendingLookup l;
    {
      std::unique_lock<std::mutex> lk(mu_);
      read_cv_.wait(lk, [&] { return stop_ || !lookups_.empty(); });
      if (stop_) return;
      l = std::move(lookups_.front());
      lookups_.pop_front();
    }
    RemoteFound f = RunLookup(l);
    std::lock_guard<std::mutex> lk(mu_);
    // A hash asked for and not found is not in Redis (any more): let it be written again.
    for (size_t i = f.blocks.size(); i < l.want.size(); ++i) stored_.erase(l.want[i].hash);
    found_.push_back(std::move(f));
  }
}

RemoteFound RemoteTier::RunLookup(PendingLookup& l) {
  RemoteFound f;
  f.ticket = l.ticket;
  lookups_n_++;
  lookup_blocks_ += int64_t(l.want.size());
  auto finish = [&] {
    miss_blocks_ += int64_t(l.want.size() - f.blocks.size());
    return std::move(f);
  };
  if (Skipping() || NowSeconds() >= l.deadline_s) {
    skipped_++;
    return finish();
  }
  for (size_t begin = 0; begin < l.want.size(); begin += kBatchBlocks) {
    const size_t end = std::min(l.want.size(), begin + kBatchBlocks);
    std::vector<RedisClient::Command> cmds;
    for (size_t i = begin; i < end; ++i) cmds.push_back({"GET", codec_.Key(l.want[i].hash)});
    auto replies = read_client_.Run(cmds, l.deadline_s);
    read_redirects_.store(read_client_.redirects());
    if (!replies.ok()) {
      Failed(replies.status());
      return finish();
    }
    for (size_t i = begin; i < end; ++i) {
      const RedisReply& r = (*replies)[i - begin];
      if (r.type != RedisReply::Type::kString) {
        if (r.type == RedisReply::Type::kError) Failed(Unavailable(fmt::format("GET refused: {}", r.str)));
        return finish();  // absent: the chain stops here
      }
      RemoteBlock b;
      b.info = l.want[i];
      b.data.resize(layout_.block_bytes());
      const RemoteBlockInfo expect{b.info.hash, b.info.parent, b.info.depth, b.info.tokens};
      const std::string key = codec_.Key(b.info.hash);
      const bool authentic = codec_.Authentic(key, r.str);
      const Status st = authentic ? codec_.Decode(r.str, expect, b.data.data())
                                  : Corrupt("no valid HMAC tag (written without --kv-remote-secret-file's secret)");
      if (!st.ok()) {
        (authentic ? corrupt_ : rejected_hmac_)++;
        PG_LOG_WARN("kv remote tier: {}: {}; deleting it, recomputing", codec_.Key(b.info.hash), st.message());
        auto del = read_client_.RunOne({"DEL", codec_.Key(b.info.hash)}, NowSeconds() + cfg_.timeout_s);
        if (!del.ok()) read_client_.Disconnect();
        return finish();
      }
      hit_blocks_++;
      f.blocks.push_back(std::move(b));
    }
  }
  return finish();
}

// ---------------------------------------------------------------- writes

bool RemoteTier::Write(const RemoteBlockInfo& info, const uint8_t* data) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stored_.count(info.hash)) return false;
    if (Skipping() || int64_t(writes_.size()) >= cfg_.write_queue_blocks) {
      dropped_++;
      return false;
    }
  }
  PendingWrite w;  // one copy of the block here; the writer thread encodes it
  w.info = RemoteWant{info.hash, info.parent, info.depth, std::vector<int32_t>(info.tokens.begin(), info.tokens.end())};
  w.data.assign(data, data + layout_.block_bytes());
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stored_.size() >= kMaxStoredRemembered) stored_.clear();
    stored_.insert(info.hash);
    writes_.push_back(std::move(w));
  }
  write_cv_.notify_one();
  return true;
}

void RemoteTier::WriterLoop() {
  for (;;) {
    std::vector<PendingWrite> batch;
    {
      std::unique_lock<std::mutex> lk(mu_);
      write_cv_.wait(lk, [&] { return stop_ || !writes_.empty(); });
      if (stop_) return;
      while (!writes_.empty() && batch.size() < kBatchBlocks) {
        batch.push_back(std::move(writes_.front()));
        writes_.pop_front();
      }
      writing_ = true;
    }
    WriteBatch(batch);
    {
      std::lock_guard<std::mutex> lk(mu_);
      writing_ = false;
    }
    idle_cv_.notify_all();
  }
}

void RemoteTier::WriteBatch(std::vector<PendingWrite>& batch) {
  auto forget = [&](const PendingWrite& w) {
    std::lock_guard<std::mutex> lk(mu_);
    stored_.erase(w.info.hash);
  };
  if (Skipping()) {
    skipped_++;
    dropped_ += int64_t(batch.size());
    for (const PendingWrite& w : batch) forget(w);
    return;
  }
  std::vector<RedisClient::Command> cmds;
  std::vector<const PendingWrite*> sent;
  const int64_t value_bytes = int64_t(codec_.value_bytes());
  for (const PendingWrite& w : batch) {
    if (cfg_.max_bytes > 0 && uint64_t(write_bytes_.load() + value_bytes) > cfg_.max_bytes) {
      budget_refused_++;
      forget(w);
      continue;
    }
    write_bytes_ += value_bytes;  // reserved now, returned if the write fails
    const RemoteBlockInfo info{w.info.hash, w.info.parent, w.info.depth, w.info.tokens};
    std::string key = codec_.Key(w.info.hash);
    std::string value = codec_.Encode(info, w.data.data());
    if (cfg_.ttl_s > 0)
      cmds.push_back({"SET", std::move(key), std::move(value), "PX", std::to_string(int64_t(cfg_.ttl_s * 1000))});
    else
      cmds.push_back({"SET", std::move(key), std::move(value)});
    sent.push_back(&w);
  }
  if (cmds.empty()) return;
  auto replies = write_client_.Run(cmds, NowSeconds() + cfg_.write_timeout_s);
  write_redirects_.store(write_client_.redirects());
  for (size_t i = 0; i < sent.size(); ++i) {
    const bool ok = replies.ok() && (*replies)[i].ok();
    if (ok) {
      writes_n_++;
      continue;
    }
    write_bytes_ -= value_bytes;
    dropped_++;
    forget(*sent[i]);
  }
  if (!replies.ok())
    Failed(replies.status());
  else if (std::any_of(replies->begin(), replies->end(), [](const RedisReply& r) { return !r.ok(); }))
    Failed(Unavailable(
        fmt::format("SET refused: {}",
                    std::find_if(replies->begin(), replies->end(), [](const RedisReply& r) { return !r.ok(); })->str)));
}

void RemoteTier::Stage(const BlockHash& hash, std::vector<uint8_t> data) {
  std::lock_guard<std::mutex> lk(mu_);
  staged_[hash] = std::move(data);
}

Status RemoteTier::Read(const BlockRef& b, uint8_t* dst) {
  std::vector<uint8_t> data;
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = staged_.find(b.hash);
    if (it == staged_.end()) return NotFound("kv remote tier: block not staged");
    data = std::move(it->second);
    staged_.erase(it);
  }
  if (data.size() != layout_.block_bytes()) return Internal("kv remote tier: staged block of the wrong size");
  std::copy(data.begin(), data.end(), dst);
  return Status::Ok();
}

Status RemoteTier::Write(const BlockRef& b, const uint8_t* src) {
  Write(RemoteBlockInfo{b.hash, b.parent, b.depth, b.tokens}, src);
  return Status::Ok();
}

bool RemoteTier::DrainWrites(double timeout_s) {
  std::unique_lock<std::mutex> lk(mu_);
  return idle_cv_.wait_for(lk, std::chrono::duration<double>(timeout_s), [&] { return writes_.empty() && !writing_; });
}

RemoteCounters RemoteTier::counters() const {
  RemoteCounters c;
  c.enabled = true;
  c.lookups = lookups_n_.load();
  c.lookup_blocks = lookup_blocks_.load();
  c.hit_blocks = hit_blocks_.load();
  c.miss_blocks = miss_blocks_.load();
  c.errors = errors_.load();
  c.skipped = skipped_.load();
  c.corrupt = corrupt_.load();
  c.rejected_hmac = rejected_hmac_.load();
  c.writes = writes_n_.load();
  c.write_bytes = write_bytes_.load();
  c.dropped_writes = dropped_.load();
  c.budget_refused = budget_refused_.load();
  c.redirects = read_redirects_.load() + write_redirects_.load();
  std::lock_guard<std::mutex> lk(mu_);
  c.write_queue = int64_t(writes_.size()) + (writing_ ? 1 : 0);
  return c;
}

void CollectRemoteMetrics(const RemoteCounters& c, MetricSet* out) {
  if (!c.enabled) return;
  auto metric = [&](const char* name, const char* help, bool counter, int64_t v) {
    if (counter)
      out->Counter(name, help, v);
    else
      out->Gauge(name, help, v);
  };
  metric("prosgrow_kv_remote_lookups_total", "Remote-tier lookups (prompts with blocks past the local cache).", true,
         c.lookups);
  metric("prosgrow_kv_remote_hit_blocks_total", "Blocks found in the remote tier and verified.", true, c.hit_blocks);
  metric("prosgrow_kv_remote_miss_blocks_total", "Blocks asked of the remote tier and not delivered.", true,
         c.miss_blocks);
  metric("prosgrow_kv_remote_imported_blocks_total", "Remote blocks taken into the device tier.", true,
         c.imported_blocks);
  metric("prosgrow_kv_remote_errors_total", "Remote-tier commands failed: unreachable, broken, past the deadline.",
         true, c.errors);
  metric("prosgrow_kv_remote_skipped_total", "Remote lookups and writes skipped while backing off after an error.",
         true, c.skipped);
  metric("prosgrow_kv_remote_corrupt_total", "Remote values that failed verification (then deleted).", true, c.corrupt);
  out->Counter("prosgrow_kv_remote_rejected_total", "Remote values refused before use, by reason (hmac: no valid tag).")
      .Add({{"reason", "hmac"}}, c.rejected_hmac);
  metric("prosgrow_kv_remote_abandoned_total", "Remote lookups the scheduler stopped waiting for.", true, c.abandoned);
  metric("prosgrow_kv_remote_writes_total", "Blocks stored in the remote tier.", true, c.writes);
  metric("prosgrow_kv_remote_write_bytes_total", "Bytes stored in the remote tier by this process.", true,
         c.write_bytes);
  metric("prosgrow_kv_remote_dropped_writes_total", "Remote writes dropped (queue full or Redis unavailable).", true,
         c.dropped_writes);
  metric("prosgrow_kv_remote_budget_refused_total", "Remote writes refused by --kv-remote-size.", true,
         c.budget_refused);
  metric("prosgrow_kv_remote_redirects_total", "Redis Cluster redirects followed.", true, c.redirects);
  metric("prosgrow_kv_remote_write_queue", "Remote writes queued now.", false, c.write_queue);
}

}  // namespace pg
