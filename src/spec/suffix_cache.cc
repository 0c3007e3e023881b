#include "spec/suffix_cache.h"

#include <algorithm>
#include <map>

namespace pg {

SuffixCache::SuffixCache(Options options) : opt_(options) {
  opt_.depth = std::max(2, opt_.depth);
  opt_.max_match = std::clamp(opt_.max_match, 1, opt_.depth - 1);
  nodes_.emplace_back();
}

uint32_t SuffixCache::Child(uint32_t parent, int32_t token) const {
  auto it = edges_.find(EdgeKey(parent, token));
  return it == edges_.end() ? 0 : it->second;
}

uint32_t SuffixCache::AddChild(uint32_t parent, int32_t token) {
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  Node& n = nodes_[id];
  n.token = token;
  n.parent = parent;
  n.count = 0;
  n.children.clear();
  nodes_[parent].children.push_back(id);
  edges_[EdgeKey(parent, token)] = id;
  ++n_live_;
  return id;
}

void SuffixCache::RemoveNode(uint32_t id) {
  Node& n = nodes_[id];
  auto& siblings = nodes_[n.parent].children;
  siblings.erase(std::find(siblings.begin(), siblings.end(), id));
  edges_.erase(EdgeKey(n.parent, n.token));
  n.children.clear();
  free_.push_back(id);
  --n_live_;
}

// delta +1: insert every depth-bounded suffix path; -1: remove them (the
// nodes of a removed path are freed bottom-up once their count is 0).
void SuffixCache::AddPaths(std::span<const int32_t> doc, int64_t delta) {
  std::vector<uint32_t> path;
  for (size_t i = 0; i < doc.size(); ++i) {
    const size_t end = std::min(doc.size(), i + static_cast<size_t>(opt_.depth));
    uint32_t cur = 0;
    path.clear();
    for (size_t j = i; j < end; ++j) {
      uint32_t next = Child(cur, doc[j]);
      if (next == 0) {
        if (delta < 0) break;  // cannot happen for a held document
        next = AddChild(cur, doc[j]);
      }
      nodes_[next].count += delta;
      path.push_back(next);
      cur = next;
    }
    if (delta < 0)
      for (auto it = path.rbegin(); it != path.rend(); ++it)
        if (nodes_[*it].count <= 0) RemoveNode(*it);
  }
}

void SuffixCache::Insert(std::span<const int32_t> doc) {
  if (doc.size() > static_cast<size_t>(opt_.max_doc_tokens)) doc = doc.last(static_cast<size_t>(opt_.max_doc_tokens));
  if (doc.empty()) return;
  docs_.emplace_back(doc.begin(), doc.end());
  n_tokens_ += static_cast<int64_t>(doc.size());
  AddPaths(docs_.back(), +1);
  while (n_live_ > opt_.max_nodes && !docs_.empty()) {
    AddPaths(docs_.front(), -1);
    n_tokens_ -= static_cast<int64_t>(docs_.front().size());
    docs_.pop_front();
  }
}

int SuffixCache::Propose(std::span<const int32_t> context, int max, std::vector<int32_t>* out) const {
  if (max <= 0 || context.empty()) return 0;
  const int64_t len = static_cast<int64_t>(context.size());
  for (int64_t m = std::min<int64_t>(opt_.max_match, len); m >= 1; --m) {
    uint32_t cur = 0;
    for (int64_t j = len - m; j < len && (cur != 0 || j == len - m); ++j)
      cur = Child(cur, context[static_cast<size_t>(j)]);
    if (cur == 0) continue;
    int produced = 0;
    for (int64_t d = m; d < opt_.depth && produced < max; ++d) {
      const Node& n = nodes_[cur];
      uint32_t best = 0;
      for (uint32_t c : n.children) {
        const Node& cn = nodes_[c];
        if (best == 0 || cn.count > nodes_[best].count ||
            (cn.count == nodes_[best].count && cn.token < nodes_[best].token))
          best = c;
      }
      if (best == 0) break;
      out->push_back(nodes_[best].token);
      ++produced;
      cur = best;
    }
    if (produced > 0) return produced;
  }
  return 0;
}

bool SuffixCache::CheckIntegrity() const {
  std::map<std::vector<int32_t>, int64_t> expect;  // path -> count
  for (const auto& doc : docs_)
    for (size_t i = 0; i < doc.size(); ++i) {
      std::vector<int32_t> p;
      for (size_t j = i; j < std::min(doc.size(), i + static_cast<size_t>(opt_.depth)); ++j) {
        p.push_back(doc[j]);
        expect[p]++;
      }
    }
  if (static_cast<int64_t>(expect.size()) != n_live_ || edges_.size() != expect.size()) return false;
  for (const auto& [path, count] : expect) {
    uint32_t cur = 0;
    for (int32_t t : path) {
      cur = Child(cur, t);
      if (cur == 0) return false;
    }
    if (nodes_[cur].count != count) return false;
  }
  return true;
}

}  // namespace pg
