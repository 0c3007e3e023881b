#include "constrain/grammar.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "base/check.h"

namespace pg {

NodeId GrammarBuilder::Add(GrammarNode n) {
  g_.nodes.push_back(std::move(n));
  return static_cast<NodeId>(g_.nodes.size() - 1);
}

NodeId GrammarBuilder::Literal(std::string bytes) {
  if (bytes.empty()) return Seq({});
  return Add({GrammarNode::Kind::kLiteral, std::move(bytes), {}, 0, 0});
}

NodeId GrammarBuilder::Seq(std::vector<NodeId> children) {
  return Add({GrammarNode::Kind::kSeq, "", std::move(children), 0, 0});
}

NodeId GrammarBuilder::Choice(std::vector<NodeId> children) {
  if (children.size() == 1) return children[0];
  return Add({GrammarNode::Kind::kChoice, "", std::move(children), 0, 0});
}

NodeId GrammarBuilder::Ws(uint32_t max) { return Add({GrammarNode::Kind::kWs, "", {}, 0, max}); }

NodeId GrammarBuilder::String(uint32_t min_chars, uint32_t max_chars) {
  return Add({GrammarNode::Kind::kString, string_forbidden_, {}, min_chars, max_chars});
}

NodeId GrammarBuilder::Number(bool integer) {
  return Add({GrammarNode::Kind::kNumber, "", {}, integer ? 1u : 0u, kMaxNumberBytes});
}

NodeId GrammarBuilder::Repeat(NodeId item, NodeId separator, uint32_t min, uint32_t max) {
  return Add({GrammarNode::Kind::kRepeat, "", {item, separator}, min, max});
}

NodeId GrammarBuilder::FreeUntil(std::string trigger, NodeId body) {
  return Add({GrammarNode::Kind::kFreeUntil, std::move(trigger), {body}, 0, 0});
}

NodeId GrammarBuilder::RawText(std::vector<std::string> stops, uint32_t min_chars, uint32_t max_chars) {
  PG_CHECK(stops.size() <= kMaxStops);
  for (const std::string& s : stops) PG_CHECK(!s.empty() && s.size() < 256);
  GrammarNode n{GrammarNode::Kind::kRawText, "", {}, min_chars, max_chars};
  n.stops = std::move(stops);
  return Add(std::move(n));
}

NodeId GrammarBuilder::Placeholder() { return Add({GrammarNode::Kind::kChoice, "", {}, 0, 0}); }

void GrammarBuilder::Fill(NodeId placeholder, NodeId target) { g_.nodes[placeholder].children = {target}; }

NodeId GrammarBuilder::JsonValue() {
  if (any_value_ != Grammar::kUnbounded) return any_value_;
  any_value_ = Placeholder();
  const NodeId sep = Seq({Ws(), Literal(","), Ws()});
  const NodeId member = Seq({String(), Ws(), Literal(":"), Ws(), any_value_});
  any_object_ = Seq({Literal("{"), Ws(), Repeat(member, sep, 0, Grammar::kUnbounded), Ws(), Literal("}")});
  const NodeId array = Seq({Literal("["), Ws(), Repeat(any_value_, sep, 0, Grammar::kUnbounded), Ws(), Literal("]")});
  Fill(any_value_,
       Choice({any_object_, array, String(), Number(false), Literal("true"), Literal("false"), Literal("null")}));
  return any_value_;
}

NodeId GrammarBuilder::JsonObject() {
  JsonValue();
  return any_object_;
}

std::string GrammarBuilder::Quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Grammar GrammarBuilder::Build(NodeId root) && {
  g_.root = root;
  return std::move(g_);
}

}  // namespace pg
