// TokenVocabulary: the bytes every token of a tokenizer writes, in a trie,
// for computing token masks (constraint.h).
//
// A token is in the trie when it writes bytes as text: normal, byte and
// user-defined tokens (e.g. Qwen's <tool_call>). Control, unknown, unused
// tokens and those writing no bytes are never allowed by a constraint; the
// end-of-generation tokens (Tokenizer::IsEog) are kept apart, allowed only
// where the constrained output may end.
//
// Trie layout (flattened, built once):
//   nodes[i]   = {first_edge, n_edges, first_token, n_tokens}
//   edges[e]   = (byte, child node), a node's edges contiguous, bytes ascending
//   token_ids  = ids ending at a node, contiguous per node
// Node 0 is the root (the empty prefix; no token ends there).
//
// Thread-safety: immutable after construction; For() is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pg {

class Tokenizer;

class TokenVocabulary {
 public:
  struct TrieNode {
    uint32_t first_edge = 0, n_edges = 0;
    uint32_t first_token = 0, n_tokens = 0;
  };
  struct Edge {
    uint8_t byte = 0;
    uint32_t child = 0;
  };

  explicit TokenVocabulary(const Tokenizer& tokenizer);

  // One vocabulary per tokenizer, built on first use and kept for the
  // process (keyed by the tokenizer's address and checked against its size
  // and fingerprint-relevant ends, so a new tokenizer gets a new one).
  static std::shared_ptr<const TokenVocabulary> For(const Tokenizer& tokenizer);

  int32_t n_vocab() const { return n_vocab_; }
  const std::string& bytes(int32_t id) const { return bytes_[static_cast<size_t>(id)]; }
  bool in_trie(int32_t id) const { return in_trie_[static_cast<size_t>(id)] != 0; }
  const std::vector<int32_t>& eog_ids() const { return eog_ids_; }
  // FNV-1a over every token's type and text: the tokenizer's identity in cache keys.
  uint64_t fingerprint() const { return fingerprint_; }

  const std::vector<TrieNode>& nodes() const { return nodes_; }
  const std::vector<Edge>& edges() const { return edges_; }
  const std::vector<int32_t>& token_ids() const { return token_ids_; }

 private:
  void BuildTrie();

  int32_t n_vocab_ = 0;
  std::vector<std::string> bytes_;  // (n_vocab) the bytes each token writes ("" for control)
  std::vector<uint8_t> in_trie_;    // (n_vocab) 1 = may be allowed by a mask
  std::vector<int32_t> eog_ids_;
  uint64_t fingerprint_ = 0;
  std::vector<TrieNode> nodes_;
  std::vector<Edge> edges_;
  std::vector<int32_t> token_ids_;
};

}  // namespace pg
