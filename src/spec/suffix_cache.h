// SuffixCache: suffix decoding's global structure. A depth-bounded suffix
// trie over recent documents (prompt + output of finished requests), shared
// by all requests, with a node budget and FIFO eviction of whole documents.
//
// Every suffix of an inserted document, cut to `depth` tokens, is a path from
// the root; each node counts the suffixes through it (with multiplicity), so
// removing a document walks the same paths, decrements the counts and frees
// the nodes that reach zero. When the node budget is exceeded the oldest
// documents are removed until it fits again.
//
//   doc "a b c a b d", depth 3:   root -a-> (2) -b-> (2) -c-> (1)
//                                                 \-d-> (1)
//                                 root -b-> (2) -c-> (1) -a-> (1) ...
//
// Propose(context): the longest suffix of the context (at most max_match
// tokens) that is a path from the root, then greedily the most frequent child
// (ties to the lowest token id), while the path stays within `depth`.
//
// Memory: nodes x (~40 B + a hash-map edge); the budget bounds both.
// Thread-safety: not thread-safe; the engine thread owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

namespace pg {

class SuffixCache {
 public:
  struct Options {
    int depth = 24;                 // longest path (match + draft) in tokens
    int max_match = 12;             // longest context suffix looked up
    int64_t max_nodes = 1 << 18;    // ~25 MB at ~100 B per node (node, children, edge)
    int64_t max_doc_tokens = 4096;  // longer documents keep their last tokens
  };
  SuffixCache() : SuffixCache(Options{}) {}
  explicit SuffixCache(Options options);

  void Insert(std::span<const int32_t> doc);
  int Propose(std::span<const int32_t> context, int max, std::vector<int32_t>* out) const;

  int depth() const { return opt_.depth; }
  int64_t nodes() const { return n_live_; }  // live nodes, root excluded
  size_t documents() const { return docs_.size(); }
  int64_t tokens() const { return n_tokens_; }  // in the documents held
  // Recounts every node from the documents held; false on any mismatch (tests).
  bool CheckIntegrity() const;

 private:
  struct Node {
    int32_t token = -1;
    uint32_t parent = 0;
    int64_t count = 0;
    std::vector<uint32_t> children;
  };
  static uint64_t EdgeKey(uint32_t parent, int32_t token) {
    return (static_cast<uint64_t>(parent) << 32) | static_cast<uint32_t>(token);
  }
  uint32_t Child(uint32_t parent, int32_t token) const;  // 0 = none (0 is the root)
  uint32_t AddChild(uint32_t parent, int32_t token);
  void AddPaths(std::span<const int32_t> doc, int64_t delta);
  void RemoveNode(uint32_t id);

  Options opt_;
  std::vector<Node> nodes_;  // [0] = root
  std::vector<uint32_t> free_;
  std::unordered_map<uint64_t, uint32_t> edges_;  // (parent, token) -> child
  std::deque<std::vector<int32_t>> docs_;         // oldest first
  int64_t n_live_ = 0;
  int64_t n_tokens_ = 0;
};

}  // namespace pg
