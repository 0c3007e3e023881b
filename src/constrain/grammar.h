// Grammar: a byte-level grammar for constrained decoding, as a graph of
// nodes (a node refers to others by index, so a schema's `$ref` recursion is
// a cycle in the graph, bounded at match time by GrammarMatcher's depth cap).
//
// Node kinds and what each matches:
//   kLiteral    the bytes of `text`, exactly
//   kSeq        children in order
//   kChoice     any one child (alternatives may overlap; the matcher follows
//               every live alternative at once)
//   kWs         0..max bytes of JSON whitespace (space, \n, \r, \t): bounded so
//               a model cannot loop on whitespace
//   kString     one JSON string, quotes included: escapes checked, UTF-8
//               checked (lead/continuation bytes), no raw control characters,
//               min..max characters (code points; an escape is one); the
//               ASCII bytes in `text` never appear raw in the body (GLM
//               values: a JSON string there cannot hold a raw '<', so never
//               a closing tag; it can still write \u003c)
//   kNumber     one JSON number (min == 1: an integer, no fraction or
//               exponent), at most max bytes
//   kRepeat     children[0] repeated count in [min, max] times, with
//               children[1] between two items (max == kUnbounded: no bound)
//   kRawText    min..max characters of raw UTF-8 text (tab, newline, CR
//               and bytes >= 0x20; ends only between characters) in which
//               no string of `stops` (at most kMaxStops, each under 256
//               bytes) ever appears: a GLM string value ends at the first
//               "</arg_value>". Stops should have no border (no proper
//               prefix that is also a suffix) so that text + stop holds the
//               stop only at its end.
//   kFreeUntil  any text; whenever it contains `text` (the trigger),
//               children[0] must follow, after which free text resumes. Can
//               end anywhere outside a trigger's body (tool calls under
//               tool_choice "auto": the lazy grammar)
//
// GrammarBuilder adds nodes; the JSON pieces (JsonValue: any JSON value,
// used by response_format json_object) are built from these primitives.
//
// Thread-safety: a built Grammar is immutable and shared between threads.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace pg {

using NodeId = uint32_t;

struct GrammarNode {
  enum class Kind : uint8_t { kLiteral, kSeq, kChoice, kWs, kString, kNumber, kRepeat, kFreeUntil, kRawText };
  Kind kind = Kind::kLiteral;
  std::string text;              // kLiteral: the bytes; kFreeUntil: the trigger
  std::vector<NodeId> children;  // see the table above
  uint32_t min = 0;
  uint32_t max = 0;
  std::vector<std::string> stops;  // kRawText: strings the text never holds
};

struct Grammar {
  static constexpr uint32_t kUnbounded = std::numeric_limits<uint32_t>::max();
  std::vector<GrammarNode> nodes;
  NodeId root = 0;

  const GrammarNode& node(NodeId id) const { return nodes[id]; }
};

class GrammarBuilder {
 public:
  // Whitespace allowed between JSON tokens (bytes per gap).
  static constexpr uint32_t kMaxWs = 16;
  // Longest JSON number, in bytes.
  static constexpr uint32_t kMaxNumberBytes = 24;

  NodeId Literal(std::string bytes);
  NodeId Seq(std::vector<NodeId> children);
  NodeId Choice(std::vector<NodeId> children);
  NodeId Ws(uint32_t max = kMaxWs);
  NodeId String(uint32_t min_chars = 0, uint32_t max_chars = Grammar::kUnbounded);
  NodeId Number(bool integer);
  NodeId Repeat(NodeId item, NodeId separator, uint32_t min, uint32_t max);
  NodeId FreeUntil(std::string trigger, NodeId body);
  static constexpr size_t kMaxStops = 3;
  NodeId RawText(std::vector<std::string> stops, uint32_t min_chars = 0, uint32_t max_chars = Grammar::kUnbounded);
  // ASCII bytes that JSON strings built from now on never hold raw
  // (kString's `text`); "" by default.
  void set_string_forbidden(std::string bytes) { string_forbidden_ = std::move(bytes); }
  // A node to be filled later (for recursion): kChoice with no children yet.
  NodeId Placeholder();
  void Fill(NodeId placeholder, NodeId target);  // placeholder becomes Choice{target}

  // Any JSON value (objects with any keys); shared by every use in this grammar.
  NodeId JsonValue();
  // Any JSON object.
  NodeId JsonObject();

  // A JSON string literal for `s`, quotes included, escaped as JSON.
  static std::string Quoted(const std::string& s);

  Grammar Build(NodeId root) &&;
  size_t size() const { return g_.nodes.size(); }

 private:
  NodeId Add(GrammarNode n);
  Grammar g_;
  NodeId any_value_ = Grammar::kUnbounded;
  NodeId any_object_ = Grammar::kUnbounded;
  std::string string_forbidden_;
};

}  // namespace pg
