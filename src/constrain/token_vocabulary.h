// TokenVocabulary: the bytes every token of a tokenizer writes, in a trie,
// for computing token masks (constraint.h).
//
// A token is in the trie when it writes bytes as text: normal, byte and
// user-defined tokens (e.g. Qwen's <tool_call>). Control, unknown, unused
// tokens and those writing no bytes are never allowed by a constraint; the
// end-of-generation tokens (Tokenizer::IsEog) are kept apart, allowed only
// where the constrained output may end.
//
// Two tries: one over every allowed token, one over those that do not keep
// a JSON string's body open (GrammarMatcher::KeepsStringBody); inside an
// unbounded string the mask is string_body_mask() plus a walk of the second,
// much smaller trie.
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

struct TokenTrie {
  struct Node {
    uint32_t first_edge = 0, n_edges = 0;
    uint32_t first_token = 0, n_tokens = 0;
  };
  struct Edge {
    uint8_t byte = 0;
    uint32_t child = 0;
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<int32_t> token_ids;

  // The trie of `ids` (bytes[id] non-empty).
  static TokenTrie Build(std::vector<int32_t> ids, const std::vector<std::string>& bytes);
};

class TokenVocabulary {
 public:
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

  const TokenTrie& trie() const { return trie_; }
  // The tokens that do not keep a string body open, and the bitset of those that do.
  const TokenTrie& non_string_body_trie() const { return non_body_trie_; }
  const std::vector<uint64_t>& string_body_mask() const { return body_mask_; }

 private:
  int32_t n_vocab_ = 0;
  std::vector<std::string> bytes_;  // (n_vocab) the bytes each token writes ("" for control)
  std::vector<uint8_t> in_trie_;    // (n_vocab) 1 = may be allowed by a mask
  std::vector<int32_t> eog_ids_;
  uint64_t fingerprint_ = 0;
  TokenTrie trie_;
  TokenTrie non_body_trie_;
  std::vector<uint64_t> body_mask_;  // (ceil(n_vocab / 64)) bit id: KeepsStringBody(bytes(id))
};

}  // namespace pg
