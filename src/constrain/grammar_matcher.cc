#include "constrain/grammar_matcher.h"

#include <algorithm>

namespace pg {
namespace {

using Kind = GrammarNode::Kind;
using Stack = GrammarMatcher::Stack;
using State = GrammarMatcher::State;

// Epsilon moves one Feed may make before the path is dropped (guards against
// grammar cycles that consume nothing).
constexpr int kEpsilonBudget = 4096;

bool IsWs(uint8_t b) { return b == ' ' || b == '\n' || b == '\r' || b == '\t'; }
bool IsDigit(uint8_t b) { return b >= '0' && b <= '9'; }
bool IsHex(uint8_t b) { return IsDigit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F'); }

// String lexer states (MatchFrame::pos of a kString frame).
constexpr int kOpen = 0;  // expects the opening quote
constexpr int kBody = 1;
constexpr int kEscape = 2;  // after a backslash
constexpr int kHex0 = 3;    // \u: kHex0 + digits read (0..3)
constexpr int kHexD = 7;    // \uD: 0..7 (no surrogate escapes: many parsers refuse them)
constexpr int kCont1 = 10;  // kCont1 - 1 + n: n UTF-8 continuation bytes (80..BF) to go
constexpr int kE0 = 20;     // after E0: A0..BF, then one more
constexpr int kED = 21;     // after ED: 80..9F, then one more
constexpr int kF0 = 22;     // after F0: 90..BF, then two more
constexpr int kF4 = 23;     // after F4: 80..8F, then two more

// Next string state after `b`; -1 rejects, -2 closes the string.
int StringNext(uint32_t upos, uint8_t b) {
  const int pos = static_cast<int>(upos);
  switch (pos) {
    case kOpen: return b == '"' ? kBody : -1;
    case kBody:
      if (b == '"') return -2;
      if (b == '\\') return kEscape;
      if (b < 0x20) return -1;
      if (b < 0x80) return kBody;
      if (b >= 0xC2 && b <= 0xDF) return kCont1;
      if (b == 0xE0) return kE0;
      if (b == 0xED) return kED;
      if (b >= 0xE1 && b <= 0xEF) return kCont1 + 1;
      if (b == 0xF0) return kF0;
      if (b >= 0xF1 && b <= 0xF3) return kCont1 + 2;
      if (b == 0xF4) return kF4;
      return -1;
    case kEscape:
      if (b == 'u') return kHex0;
      return (b == '"' || b == '\\' || b == '/' || b == 'b' || b == 'f' || b == 'n' || b == 'r' || b == 't') ? kBody
                                                                                                             : -1;
    case kHex0: return (b == 'd' || b == 'D') ? kHexD : IsHex(b) ? kHex0 + 1 : -1;
    case kHexD: return (b >= '0' && b <= '7') ? kHex0 + 2 : -1;
    case kHex0 + 1:
    case kHex0 + 2: return IsHex(b) ? pos + 1 : -1;
    case kHex0 + 3: return IsHex(b) ? kBody : -1;
    case kCont1: return (b >= 0x80 && b <= 0xBF) ? kBody : -1;
    case kCont1 + 1:
    case kCont1 + 2: return (b >= 0x80 && b <= 0xBF) ? pos - 1 : -1;
    case kE0: return (b >= 0xA0 && b <= 0xBF) ? kCont1 : -1;
    case kED: return (b >= 0x80 && b <= 0x9F) ? kCont1 : -1;
    case kF0: return (b >= 0x90 && b <= 0xBF) ? kCont1 + 1 : -1;
    case kF4: return (b >= 0x80 && b <= 0x8F) ? kCont1 + 1 : -1;
  }
  return -1;
}

// Number lexer: 0 start, 1 after '-', 2 leading 0, 3 integer digits,
// 4 after '.', 5 fraction digits, 6 after e, 7 after exponent sign,
// 8 one exponent digit, 9 two (the last: exponents stay within +-99, so
// every number is a finite double). Accepting: 2, 3, 5, 8, 9.
int NumberNext(uint32_t pos, uint8_t b, bool integer) {
  const bool digit = IsDigit(b);
  const bool frac = !integer && b == '.';
  const bool exp = !integer && (b == 'e' || b == 'E');
  switch (pos) {
    case 0: return b == '-' ? 1 : b == '0' ? 2 : digit ? 3 : -1;
    case 1: return b == '0' ? 2 : digit ? 3 : -1;
    case 2: return frac ? 4 : exp ? 6 : -1;
    case 3: return digit ? 3 : frac ? 4 : exp ? 6 : -1;
    case 4: return digit ? 5 : -1;
    case 5: return digit ? 5 : exp ? 6 : -1;
    case 6: return (b == '+' || b == '-') ? 7 : digit ? 8 : -1;
    case 7: return digit ? 8 : -1;
    case 8: return digit ? 9 : -1;
  }
  return -1;
}
bool NumberAccepts(uint32_t pos) { return pos == 2 || pos == 3 || pos == 5 || pos == 8 || pos == 9; }

// Longest prefix of `t` that is a suffix of t[0, pos) + b.
uint32_t KmpNext(const std::string& t, uint32_t pos, uint8_t b) {
  for (uint32_t len = std::min<uint32_t>(pos + 1, static_cast<uint32_t>(t.size())); len > 0; --len) {
    // candidate: t[0, len) == (t[0, pos) + b) suffix of length len
    if (static_cast<uint8_t>(t[len - 1]) != b) continue;
    if (t.compare(0, len - 1, t, pos - (len - 1), len - 1) == 0) return len;
  }
  return 0;
}

// kRawText frame: pos bits 0-7 = UTF-8 state (0 between characters, else a
// StringNext continuation state), bits 8 + 8 i = KMP state of stops[i];
// count = characters (only when bounded). Next pos, or -1 to reject.
int64_t RawTextNext(const GrammarNode& n, const MatchFrame& f, uint8_t b, bool* counted) {
  const uint32_t u = f.pos & 0xFF;
  uint32_t next_u = 0;
  *counted = false;
  if (u == 0) {
    if (f.count >= n.max) return -1;
    *counted = n.min > 0 || n.max != Grammar::kUnbounded;
    if (b < 0x80) {
      if (b < 0x20 && b != '\t' && b != '\n' && b != '\r') return -1;
    } else {
      const int r = StringNext(kBody, b);
      if (r < 0) return -1;
      next_u = static_cast<uint32_t>(r);
    }
  } else {
    const int r = StringNext(u, b);
    if (r < 0) return -1;
    next_u = r == kBody ? 0 : static_cast<uint32_t>(r);
  }
  uint32_t pos = next_u;
  for (size_t i = 0; i < n.stops.size(); ++i) {
    const uint32_t k = KmpNext(n.stops[i], (f.pos >> (8 + 8 * i)) & 0xFF, b);
    if (k == n.stops[i].size()) return -1;  // a stop would appear
    pos |= k << (8 + 8 * i);
  }
  return pos;
}

// One alternative: follows epsilon moves from stack `s` until `b` is consumed
// (results appended to *out) or the path dies. `b` < 0: no byte, returns
// whether the stack can reach the end (empty) instead.
class Feeder {
 public:
  Feeder(const Grammar& g, int b, State* out) : g_(g), b_(b), out_(out) {}

  bool Run(Stack s) {
    while (budget_-- > 0) {
      if (s.empty()) return b_ < 0;
      if (s.size() > GrammarMatcher::kMaxDepth) return false;
      const GrammarNode& n = g_.node(s.back().node);
      switch (n.kind) {
        case Kind::kSeq: SeqMove(n, &s); break;
        case Kind::kChoice:
          if (n.children.empty()) return false;
          if (ChoiceMove(n, &s)) return true;
          break;
        case Kind::kLiteral: return LiteralConsume(n, std::move(s));
        case Kind::kString: return StringConsume(n, std::move(s));
        case Kind::kWs:
        case Kind::kNumber:
        case Kind::kFreeUntil:
        case Kind::kRawText:
          // These may take the byte and go on, or end here and leave it to
          // what follows: both paths are followed.
          if (b_ >= 0) ConsumeAndStay(n, s);
          if (n.kind == Kind::kNumber && !NumberAccepts(s.back().pos)) return false;
          if (n.kind == Kind::kRawText && ((s.back().pos & 0xFF) != 0 || s.back().count < n.min)) return false;
          s.pop_back();
          break;
        case Kind::kRepeat:
          if (!RepeatMove(n, &s)) return b_ < 0 && stopped_;
          break;
      }
    }
    return false;
  }

 private:
  void SeqMove(const GrammarNode& n, Stack* s) {
    MatchFrame& f = s->back();
    if (f.pos >= n.children.size()) {
      s->pop_back();
      return;
    }
    const NodeId child = n.children[f.pos];
    if (f.pos + 1 == n.children.size())
      s->pop_back();  // tail position: no frame to come back to
    else
      ++f.pos;
    s->push_back({child, 0, 0});
  }

  // Follows every alternative but the last (recursively), leaves the last
  // on *s. True when looking for the end (b_ < 0) and one reached it.
  bool ChoiceMove(const GrammarNode& n, Stack* s) {
    s->pop_back();
    for (size_t i = 0; i + 1 < n.children.size(); ++i) {
      Stack alt = *s;
      alt.push_back({n.children[i], 0, 0});
      if (Run(std::move(alt)) && b_ < 0) return true;
    }
    s->push_back({n.children.back(), 0, 0});
    return false;
  }

  bool LiteralConsume(const GrammarNode& n, Stack s) {
    MatchFrame& f = s.back();
    if (b_ < 0 || static_cast<uint8_t>(n.text[f.pos]) != b_) return false;
    if (++f.pos == n.text.size()) s.pop_back();
    return Emit(std::move(s));
  }

  bool StringConsume(const GrammarNode& n, Stack s) {
    if (b_ < 0) return false;
    MatchFrame& f = s.back();
    // count = characters so far; a new one may start only below max, and
    // the closing quote needs min.
    if (f.pos == kBody && (b_ == '"' ? f.count < n.min : f.count >= n.max)) return false;
    if (f.pos == kBody && b_ < 0x80 && !n.text.empty() && n.text.find(static_cast<char>(b_)) != std::string::npos)
      return false;
    const int next = StringNext(f.pos, static_cast<uint8_t>(b_));
    if (next == -1) return false;
    if (next == -2) {
      s.pop_back();
    } else {
      // A character ended; counted only where a bound needs it, so an
      // unbounded string's state (and its cached mask) never changes.
      if (next == kBody && f.pos != kOpen && (n.min > 0 || n.max != Grammar::kUnbounded)) ++f.count;
      f.pos = static_cast<uint32_t>(next);
    }
    return Emit(std::move(s));
  }

  // kWs / kNumber / kFreeUntil / kRawText taking the byte and staying on top (a copy
  // of `s` is emitted when it can).
  void ConsumeAndStay(const GrammarNode& n, const Stack& s) {
    const uint8_t b = static_cast<uint8_t>(b_);
    const MatchFrame& f = s.back();
    Stack more;
    if (n.kind == Kind::kWs) {
      if (f.pos >= n.max || !IsWs(b)) return;
      more = s;
      ++more.back().pos;
    } else if (n.kind == Kind::kNumber) {
      const int next = f.count < n.max ? NumberNext(f.pos, b, n.min == 1) : -1;
      if (next < 0) return;
      more = s;
      more.back().pos = static_cast<uint32_t>(next);
      ++more.back().count;
    } else if (n.kind == Kind::kRawText) {
      bool counted = false;
      const int64_t next = RawTextNext(n, f, b, &counted);
      if (next < 0) return;
      more = s;
      more.back().pos = static_cast<uint32_t>(next);
      if (counted) ++more.back().count;
    } else {
      more = s;
      const uint32_t next = KmpNext(n.text, f.pos, b);
      if (next == n.text.size()) {
        more.back().pos = 0;
        more.push_back({n.children[0], 0, 0});  // the trigger appeared: its body must follow
      } else {
        more.back().pos = next;
      }
    }
    Emit(std::move(more));
  }

  // Repeat frame: pos 0 = no item yet, 1 = after an item, 2 = after a
  // separator. Forks where both going on and stopping are allowed.
  bool RepeatMove(const GrammarNode& n, Stack* s) {
    MatchFrame& f = s->back();
    const NodeId item = n.children[0], sep = n.children[1];
    if (f.pos == 2) {
      f.pos = 1;
      ++f.count;
      s->push_back({item, 0, 0});
      return true;
    }
    const bool can_stop = f.count >= n.min;
    const bool can_go = f.count < n.max;
    if (can_go && can_stop) {
      Stack stop = *s;
      stop.pop_back();
      if (Run(std::move(stop)) && b_ < 0) return (stopped_ = true, false);
    }
    if (!can_go) {
      if (!can_stop) return false;
      s->pop_back();
      return true;
    }
    if (f.pos == 0) {
      f.pos = 1;
      f.count = 1;
      s->push_back({item, 0, 0});
    } else {
      f.pos = 2;
      s->push_back({sep, 0, 0});
    }
    return true;
  }

  bool Emit(Stack s) {
    out_->push_back(std::move(s));
    return true;
  }

 public:
  bool stopped_ = false;  // Ends(): a fork inside RepeatMove reached the end

 private:
  const Grammar& g_;
  const int b_;
  State* out_;
  int budget_ = kEpsilonBudget;
};

void Normalize(State* s) {
  std::sort(s->begin(), s->end());
  s->erase(std::unique(s->begin(), s->end()), s->end());
  if (s->size() > GrammarMatcher::kMaxStacks) s->resize(GrammarMatcher::kMaxStacks);
}

}  // namespace

GrammarMatcher::GrammarMatcher(const Grammar* grammar) : g_(grammar) { state_.push_back({{grammar->root, 0, 0}}); }

void GrammarMatcher::Step(const Grammar& g, const State& in, uint8_t byte, State* out) {
  out->clear();
  for (const Stack& s : in) Feeder(g, byte, out).Run(s);
  Normalize(out);
}

bool GrammarMatcher::Ends(const Grammar& g, const State& state) {
  State unused;
  for (const Stack& s : state) {
    Feeder f(g, -1, &unused);
    if (f.Run(s) || f.stopped_) return true;
  }
  return false;
}

bool GrammarMatcher::Advance(uint8_t byte) {
  State next;
  Step(*g_, state_, byte, &next);
  if (next.empty()) return false;
  state_ = std::move(next);
  return true;
}

bool GrammarMatcher::AdvanceBytes(std::string_view bytes) {
  State saved = state_;
  for (char c : bytes) {
    if (!Advance(static_cast<uint8_t>(c))) {
      state_ = std::move(saved);
      return false;
    }
  }
  return true;
}

bool GrammarMatcher::KeepsStringBody(std::string_view bytes) {
  if (bytes.empty()) return false;
  int pos = kBody;
  for (char c : bytes) {
    pos = StringNext(static_cast<uint32_t>(pos), static_cast<uint8_t>(c));
    if (pos < 0) return false;
  }
  return pos == kBody;
}

bool GrammarMatcher::InUnboundedStringBody(const Grammar& g, const State& state) {
  if (state.empty()) return false;
  for (const Stack& s : state) {
    if (s.empty()) return false;
    const MatchFrame& f = s.back();
    const GrammarNode& n = g.node(f.node);
    if (n.kind != Kind::kString || f.pos != kBody || n.max != Grammar::kUnbounded || !n.text.empty()) return false;
  }
  return true;
}

bool GrammarMatcher::CanEnd() const { return Ends(*g_, state_); }

bool GrammarMatcher::CanContinue() const {
  State next;
  for (int b = 0; b < 256; ++b) {
    Step(*g_, state_, static_cast<uint8_t>(b), &next);
    if (!next.empty()) return true;
  }
  return false;
}

void GrammarMatcher::Key(std::string* out) const {
  out->clear();
  for (const Stack& s : state_) {
    const uint32_t n = static_cast<uint32_t>(s.size());
    out->append(reinterpret_cast<const char*>(&n), sizeof n);
    out->append(reinterpret_cast<const char*>(s.data()), s.size() * sizeof(MatchFrame));
  }
}

}  // namespace pg
