#include "server/common/tenant_keys.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <array>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace pg {

using Digest = std::array<unsigned char, SHA256_DIGEST_LENGTH>;

struct TenantKeys::Table {
  std::vector<Digest> digests;  // parallel to tenants
  std::vector<Tenant> tenants;
};

namespace {

constexpr size_t kMinKeyBytes = 8;
constexpr size_t kMaxKeyBytes = 512;

Digest Sha256(const std::string& s) {
  Digest d{};
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d.data());
  return d;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return IoError(fmt::format("cannot read --api-keys-file {}", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// tenant -> its cache group ("a+b" for --tenant-share-cache a,b).
Result<std::map<std::string, std::string>> ShareGroups(const std::vector<std::string>& specs) {
  std::map<std::string, std::string> group;
  for (const std::string& spec : specs) {
    std::set<std::string> names;
    std::stringstream ss(spec);
    for (std::string name; std::getline(ss, name, ',');) {
      if (!ValidTenantId(name)) {
        return InvalidArgument(
            fmt::format("--tenant-share-cache {}: '{}' is not a tenant id ([A-Za-z0-9_.-], 1..64)", spec, name));
      }
      names.insert(name);
    }
    if (names.size() < 2)
      return InvalidArgument(fmt::format("--tenant-share-cache {}: name two tenants or more", spec));
    std::string joined;
    for (const std::string& n : names) joined += (joined.empty() ? "" : "+") + n;
    for (const std::string& n : names) {
      if (group.count(n)) return InvalidArgument(fmt::format("--tenant-share-cache: tenant '{}' is in two groups", n));
      group[n] = joined;
    }
  }
  return group;
}

}  // namespace

Result<std::vector<TenantKeys::Entry>> TenantKeys::Parse(const std::string& text, const std::string& source) {
  std::vector<Entry> out;
  std::set<std::string> keys;
  std::stringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::stringstream words(line);
    Entry e;
    std::string extra;
    if (!(words >> e.tenant)) continue;  // blank or comment
    if (!(words >> e.key) || (words >> extra)) {
      return InvalidArgument(fmt::format("{} line {}: expected 'TENANT KEY'", source, n));
    }
    if (!ValidTenantId(e.tenant)) {
      return InvalidArgument(fmt::format("{} line {}: tenant id must be 1..64 bytes of [A-Za-z0-9_.-]", source, n));
    }
    if (e.key.size() < kMinKeyBytes || e.key.size() > kMaxKeyBytes) {
      return InvalidArgument(
          fmt::format("{} line {}: key must be {}..{} bytes", source, n, kMinKeyBytes, kMaxKeyBytes));
    }
    if (!keys.insert(e.key).second) return InvalidArgument(fmt::format("{} line {}: key given twice", source, n));
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::shared_ptr<const TenantKeys::Table>> TenantKeys::Build() const {
  std::vector<Entry> entries;
  if (!config_.single_key.empty()) entries.push_back({"default", config_.single_key});
  if (!config_.keys_file.empty()) {
    PG_ASSIGN_OR_RETURN(std::string text, ReadFile(config_.keys_file));
    PG_ASSIGN_OR_RETURN(std::vector<Entry> file, Parse(text, "--api-keys-file " + config_.keys_file));
    if (file.empty()) return InvalidArgument(fmt::format("--api-keys-file {} holds no keys", config_.keys_file));
    for (Entry& e : file) {
      if (!config_.single_key.empty() && e.key == config_.single_key) {
        return InvalidArgument("--api-key is also in --api-keys-file; give it once");
      }
      entries.push_back(std::move(e));
    }
  }
  PG_ASSIGN_OR_RETURN(auto groups, ShareGroups(config_.share_cache));
  auto table = std::make_shared<Table>();
  for (const Entry& e : entries) {
    auto g = groups.find(e.tenant);
    table->digests.push_back(Sha256(e.key));
    table->tenants.push_back({e.tenant, g == groups.end() ? e.tenant : g->second});
  }
  return std::shared_ptr<const Table>(std::move(table));
}

Result<std::unique_ptr<TenantKeys>> TenantKeys::Create(TenantKeysConfig config) {
  std::unique_ptr<TenantKeys> keys(new TenantKeys(std::move(config)));
  PG_ASSIGN_OR_RETURN(keys->table_, keys->Build());
  return keys;
}

bool TenantKeys::Enabled() const { return size() > 0; }

size_t TenantKeys::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_->digests.size();
}

std::string BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() || authorization[kScheme.size()] != ' ') return "";
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return "";
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  return std::string(token);
}

std::optional<Tenant> TenantKeys::Find(const std::string& given) const {
  std::shared_ptr<const Table> t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    t = table_;
  }
  const Digest d = Sha256(given);
  size_t found = t->digests.size();
  // Every digest is compared (fixed length, constant time), match or not.
  for (size_t i = 0; i < t->digests.size(); ++i) {
    const bool eq = CRYPTO_memcmp(d.data(), t->digests[i].data(), d.size()) == 0;
    found = eq ? i : found;
  }
  if (given.empty() || found == t->digests.size()) return std::nullopt;
  return t->tenants[found];
}

Status TenantKeys::Reload() {
  if (config_.keys_file.empty()) return Status::Ok();
  Result<std::shared_ptr<const Table>> t = Build();
  if (!t.ok()) return t.status();
  std::lock_guard<std::mutex> lock(mu_);
  table_ = std::move(*t);
  return Status::Ok();
}

}  // namespace pg
