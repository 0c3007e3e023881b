#include "chat/tool_call_stream.h"

#include <algorithm>

#include "base/tool_call_markers.h"
#include "chat/tool_call_syntax.h"

namespace pg {
namespace {

using namespace tool_markers;  // base/tool_call_markers.h
constexpr std::string_view kToolCallOpen = kCallOpen;
constexpr std::string_view kToolCallClose = kCallClose;

bool IsDeepSeek(ToolCallFormat f) { return f == ToolCallFormat::kDeepSeekV3 || f == ToolCallFormat::kDeepSeekV31; }

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// `s` is a proper prefix of `marker` (more text may complete it).
bool PrefixOf(std::string_view s, std::string_view marker) {
  return s.size() < marker.size() && marker.substr(0, s.size()) == s;
}

// The longest suffix of `s` that is a proper prefix of one of `markers`.
size_t HeldSuffix(std::string_view s, const std::vector<std::string_view>& markers) {
  size_t best = 0;
  for (std::string_view m : markers) {
    for (size_t n = std::min(s.size(), m.size() - 1); n > best; --n) {
      if (s.substr(s.size() - n) == m.substr(0, n)) {
        best = n;
        break;
      }
    }
  }
  return best;
}

// The markers that open a call (or a DeepSeek section) in content.
std::vector<std::string_view> OpenMarkers(ToolCallFormat f) {
  if (f == ToolCallFormat::kHermes || f == ToolCallFormat::kGlm45) return {kToolCallOpen};
  if (IsDeepSeek(f)) return {kDsCallsBegin, kDsCallBegin};
  return {};
}

}  // namespace

ToolCallStream::ToolCallStream(ToolCallFormat format, nlohmann::ordered_json tools, bool bare_json)
    : format_(format),
      tools_(std::move(tools)),
      bare_json_(format == ToolCallFormat::kLlama3Json || (format == ToolCallFormat::kHermes && bare_json)) {}

void ToolCallStream::Push(std::string_view piece, std::vector<ToolCallEvent>* events) {
  out_ = events;
  buf_.append(piece);
  while (Step(false)) {
  }
  out_ = nullptr;
}

void ToolCallStream::Finish(std::vector<ToolCallEvent>* events) {
  out_ = events;
  while (Step(true)) {
  }
  held_ws_.clear();  // trailing whitespace of the content
  out_ = nullptr;
}

bool ToolCallStream::Step(bool final) {
  switch (mode_) {
    case Mode::kText: return StepText(final);
    case Mode::kSection: return StepSection(final);
    case Mode::kHeader: return StepHeader(final);
    case Mode::kArgs:
      if (StepArgs()) return true;
      if (!final) return false;
      EndCall(in_section_, /*cut=*/true);  // the text ended inside the arguments (max_tokens)
      return true;
    case Mode::kTrailer: return StepTrailer(final);
    case Mode::kWhole: return StepWhole(final);
    case Mode::kGlmArgs: return StepGlmArgs(final);
    case Mode::kGlmString: return StepGlmString(final);
  }
  return false;
}

bool ToolCallStream::StepText(bool final) {
  if (at_start_) {
    size_t i = 0;
    while (i < buf_.size() && IsJsonSpace(buf_[i])) ++i;
    buf_.erase(0, i);  // leading whitespace is never content
    if (buf_.empty()) return false;
    if (bare_json_) {
      if (buf_[0] == '{' || StartsWith(buf_, kPythonTag)) {
        raw_ = buf_[0] == '{' ? "" : std::string(kPythonTag);
        buf_.erase(0, raw_.size());
        at_start_ = false;
        bare_ = true;
        mode_ = Mode::kHeader;
        return true;
      }
      if (PrefixOf(buf_, kPythonTag) && !final) return false;
    }
    at_start_ = false;
  }
  const std::vector<std::string_view> markers = OpenMarkers(format_);
  size_t at = std::string::npos;
  std::string_view found;
  for (std::string_view m : markers) {
    size_t p = buf_.find(m);
    if (p < at) {
      at = p;
      found = m;
    }
  }
  if (at != std::string::npos) {
    EmitContent(std::string_view(buf_).substr(0, at));
    buf_.erase(0, at + found.size());
    raw_ = std::string(found);
    bare_ = false;
    in_section_ = found == kDsCallsBegin;
    mode_ = in_section_ ? Mode::kSection : Mode::kHeader;
    return true;
  }
  size_t keep = final ? 0 : HeldSuffix(buf_, markers);
  EmitContent(std::string_view(buf_).substr(0, buf_.size() - keep));
  buf_.erase(0, buf_.size() - keep);
  return false;
}

bool ToolCallStream::StepSection(bool final) {
  size_t i = 0;
  while (i < buf_.size() && IsJsonSpace(buf_[i])) ++i;
  std::string_view rest = std::string_view(buf_).substr(i);
  if (StartsWith(rest, kDsCallBegin)) {  // whitespace between calls is dropped
    buf_.erase(0, i + kDsCallBegin.size());
    raw_ = std::string(kDsCallBegin);
    mode_ = Mode::kHeader;
    return true;
  }
  if (StartsWith(rest, kDsCallsEnd)) {
    buf_.erase(0, i + kDsCallsEnd.size());
    in_section_ = false;
    mode_ = Mode::kText;
    return true;
  }
  if (final) {
    in_section_ = false;
    mode_ = Mode::kText;  // an unterminated section: the rest is content
    return !buf_.empty();
  }
  if (rest.empty() || PrefixOf(rest, kDsCallBegin) || PrefixOf(rest, kDsCallsEnd)) return false;
  // Stray text in the section is content, up to the next possible marker.
  size_t next = buf_.find('<', i + 1);
  if (next == std::string::npos) next = buf_.size();
  EmitContent(std::string_view(buf_).substr(0, next));
  buf_.erase(0, next);
  return true;
}

bool ToolCallStream::StepHeader(bool final) {
  std::string name;
  size_t args_at = 0;
  HeaderMatch m = HeaderMatch::kNo;
  if (bare_ || format_ == ToolCallFormat::kHermes) {
    m = MatchJsonHeader(buf_, &name, &args_at);
  } else if (format_ == ToolCallFormat::kGlm45) {
    m = MatchGlmHeader(buf_, &name, &args_at);
  } else if (format_ == ToolCallFormat::kDeepSeekV3) {
    m = MatchDeepSeekV3Header(buf_, &name, &args_at);
  } else if (format_ == ToolCallFormat::kDeepSeekV31) {
    m = MatchDeepSeekV31Header(buf_, &name, &args_at);
  }
  if (m == HeaderMatch::kMore && !final) return false;
  if (m != HeaderMatch::kYes && bare_ && format_ == ToolCallFormat::kHermes) {
    BlockIsContent(false);  // a JSON answer, not a call: stream it as content
    return true;
  }
  if (m != HeaderMatch::kYes) {
    whole_scanned_ = 0;
    mode_ = Mode::kWhole;  // not streamable; may still be a call once closed
    return true;
  }
  buf_.erase(0, args_at);
  StartCall(std::move(name));
  if (format_ == ToolCallFormat::kGlm45) {
    glm_name_ = out_->back().text;
    glm_pairs_ = 0;
    EmitArgs("{");
    mode_ = Mode::kGlmArgs;
  } else {
    scanner_ = JsonStreamScanner();
    json_args_ = true;
    mode_ = Mode::kArgs;
  }
  return true;
}

bool ToolCallStream::StepArgs() {
  std::string frag;
  size_t i = 0;
  bool ended = false;
  for (; i < buf_.size() && !ended; ++i) {
    JsonStreamScanner::Step st = scanner_.Push(buf_[i], &frag);
    if (st == JsonStreamScanner::Step::kBroken) break;  // not JSON any more: the arguments end here
    ended = st == JsonStreamScanner::Step::kDone;
  }
  ended = ended || i < buf_.size();
  buf_.erase(0, i);
  EmitArgs(frag);
  if (ended) mode_ = Mode::kTrailer;
  return ended;
}

bool ToolCallStream::StepTrailer(bool final) {
  if (bare_) {  // the closing "}" of the call object; what follows is content
    size_t close = buf_.find('}');
    if (close == std::string::npos && !final) {
      buf_.clear();
      return false;
    }
    buf_.erase(0, close == std::string::npos ? buf_.size() : close + 1);
    EndCall(false);
    return true;
  }
  std::string_view marker = CloseMarker();
  size_t close = buf_.find(marker);
  if (close != std::string::npos) {
    buf_.erase(0, close + marker.size());
    EndCall(in_section_);
    return true;
  }
  if (final) {
    buf_.clear();
    EndCall(in_section_);
    return true;
  }
  buf_.erase(0, buf_.size() - HeldSuffix(buf_, {marker}));
  return false;
}

bool ToolCallStream::StepWhole(bool final) {
  std::string_view marker = CloseMarker();
  size_t from = whole_scanned_ >= marker.size() ? whole_scanned_ - marker.size() + 1 : 0;
  size_t close = bare_ ? std::string::npos : buf_.find(marker, from);
  if (close == std::string::npos && !final) {
    whole_scanned_ = buf_.size();  // a long block is searched once, not once per piece
    return false;
  }
  std::string_view inner = std::string_view(buf_).substr(0, close == std::string::npos ? buf_.size() : close);
  std::optional<JsonCall> call;
  if (close != std::string::npos || bare_) call = CallFromJson(TrimJsonSpace(inner));
  if (!call) {
    raw_ += close == std::string::npos ? buf_ : buf_.substr(0, close + marker.size());
    buf_.erase(0, close == std::string::npos ? buf_.size() : close + marker.size());
    BlockIsContent(in_section_);
    return true;
  }
  buf_.erase(0, close == std::string::npos ? buf_.size() : close + marker.size());
  StartCall(std::move(call->name));
  EmitArgs(call->arguments_json);
  EndCall(in_section_);
  return true;
}

bool ToolCallStream::StepGlmArgs(bool final) {
  size_t i = 0;
  while (i < buf_.size() && IsJsonSpace(buf_[i])) ++i;
  buf_.erase(0, i);
  std::string_view rest = buf_;
  auto close_call = [&](size_t drop, bool cut = false) {
    buf_.erase(0, drop);
    if (cut) {
      glm_closing_ += "}";
    } else {
      EmitArgs("}");
    }
    EndCall(false, cut);
    return true;
  };
  if (StartsWith(rest, kToolCallClose)) return close_call(kToolCallClose.size());
  if (StartsWith(rest, kArgKey) && StartGlmString(rest)) return true;
  size_t close_at = rest.find(kToolCallClose);
  size_t pair_end = rest.find(kArgValueEnd);
  if (StartsWith(rest, kArgKey) && pair_end != std::string::npos && pair_end < close_at) {
    std::string_view pair = rest.substr(kArgKey.size(), pair_end - kArgKey.size());
    size_t key_end = pair.find(kArgKeyEnd);
    if (key_end != std::string::npos) {
      std::string_view after = TrimJsonSpace(pair.substr(key_end + kArgKeyEnd.size()));
      std::string key(TrimJsonSpace(pair.substr(0, key_end)));
      if (StartsWith(after, kArgValue) && !key.empty()) {
        std::string_view value = pair.substr(pair.find(kArgValue, key_end) + kArgValue.size());
        std::string frag(glm_pairs_++ ? "," : "");
        frag.append("\"").append(JsonStringBody(key)).append("\":");  // invalid UTF-8 -> U+FFFD
        frag.append(GlmValueJson(tools_, glm_name_, key, value));
        EmitArgs(frag);
      }
    }
    buf_.erase(0, pair_end + kArgValueEnd.size());  // a malformed pair is dropped
    return true;
  }
  if (StartsWith(rest, kArgKey)) {
    // A pair broken before the closing tag is dropped with everything up to it.
    if (close_at != std::string::npos) return close_call(close_at + kToolCallClose.size());
    return final ? close_call(buf_.size(), /*cut=*/true) : false;  // or wait for the rest of the pair
  }
  if (rest.empty() || PrefixOf(rest, kArgKey) || PrefixOf(rest, kToolCallClose)) {
    // At the end of the text: a closing tag begun ends the arguments; before
    // anything (or a pair begun) they may have gone on, so the call is cut.
    return final ? close_call(buf_.size(), /*cut=*/rest.empty() || !PrefixOf(rest, kToolCallClose)) : false;
  }
  // Stray text between pairs is dropped up to the next tag, however the text
  // arrives (a closing tag further on must not swallow the pairs before it).
  size_t next = buf_.find('<', 1);
  if (next == std::string::npos && final) return close_call(buf_.size(), /*cut=*/true);
  buf_.erase(0, next == std::string::npos ? buf_.size() : next);
  return true;
}

bool ToolCallStream::StartGlmString(std::string_view rest) {
  size_t key_end = rest.find(kArgKeyEnd);
  // The key must close before any other tag ends (its first '>' is that of </arg_key>).
  if (key_end == std::string::npos || key_end > rest.find('>', kArgKey.size())) return false;
  size_t v = key_end + kArgKeyEnd.size();
  while (v < rest.size() && IsJsonSpace(rest[v])) ++v;
  if (!StartsWith(rest.substr(v), kArgValue)) return false;
  std::string key(TrimJsonSpace(rest.substr(kArgKey.size(), key_end - kArgKey.size())));
  if (key.empty() || !IsStringParam(tools_, glm_name_, key)) return false;
  std::string frag(glm_pairs_++ ? "," : "");
  frag.append("\"").append(JsonStringBody(key)).append("\":\"");
  EmitArgs(frag);
  buf_.erase(0, v + kArgValue.size());
  mode_ = Mode::kGlmString;
  return true;
}

bool ToolCallStream::StepGlmString(bool final) {
  size_t end = std::min(buf_.find(kArgValueEnd), buf_.find(kToolCallClose));
  if (end == std::string::npos && !final) {
    size_t keep = HeldSuffix(buf_, {kArgValueEnd, kToolCallClose});
    EmitArgs(JsonStringBody(std::string_view(buf_).substr(0, buf_.size() - keep)));
    buf_.erase(0, buf_.size() - keep);
    return false;
  }
  if (end == std::string::npos) {
    // The text ended inside the value (max_tokens). A closing tag it had
    // begun ends the value; otherwise the value is cut and so is the call.
    const size_t keep = HeldSuffix(buf_, {kArgValueEnd, kToolCallClose});
    std::string frag = JsonStringBody(std::string_view(buf_).substr(0, buf_.size() - keep));
    if (keep > 0) {
      frag += '"';
    } else {
      glm_closing_ = "\"";
    }
    EmitArgs(frag);
    buf_.clear();
    mode_ = Mode::kGlmArgs;
    return true;
  }
  std::string frag = JsonStringBody(std::string_view(buf_).substr(0, end));
  frag += '"';
  EmitArgs(frag);
  // </arg_value> is consumed here; a </tool_call> is left to close the call.
  bool value_end = std::string_view(buf_).substr(end, kArgValueEnd.size()) == kArgValueEnd;
  buf_.erase(0, value_end ? end + kArgValueEnd.size() : end);
  mode_ = Mode::kGlmArgs;
  return true;
}

void ToolCallStream::EmitContent(std::string_view text) {
  if (!content_started_) {
    size_t b = 0;
    while (b < text.size() && IsJsonSpace(text[b])) ++b;
    if (b == text.size()) return;
    text = text.substr(b);
    content_started_ = true;
  }
  size_t e = text.size();
  while (e > 0 && IsJsonSpace(text[e - 1])) --e;
  if (e == 0) {
    held_ws_.append(text);
    return;
  }
  ToolCallEvent ev{ToolCallEvent::Kind::kContent, -1, held_ws_};
  ev.text.append(text.substr(0, e));
  held_ws_ = std::string(text.substr(e));
  out_->push_back(std::move(ev));
}

void ToolCallStream::StartCall(std::string name) {
  out_->push_back(ToolCallEvent{ToolCallEvent::Kind::kCallStart, calls_++, std::move(name)});
}

void ToolCallStream::EmitArgs(std::string_view fragment) {
  if (fragment.empty()) return;
  out_->push_back(ToolCallEvent{ToolCallEvent::Kind::kArguments, calls_ - 1, std::string(fragment)});
}

void ToolCallStream::EndCall(bool to_section, bool cut) {
  std::string closing = json_args_ ? scanner_.Completion() : std::move(glm_closing_);  // "" unless cut off or broken
  glm_closing_.clear();
  if (!cut) {
    EmitArgs(closing);  // broken arguments end where they broke, closed
    closing.clear();
  }
  json_args_ = false;
  out_->push_back(ToolCallEvent{ToolCallEvent::Kind::kCallEnd, calls_ - 1, std::move(closing)});
  raw_.clear();
  bare_ = false;
  mode_ = to_section ? Mode::kSection : Mode::kText;
}

void ToolCallStream::BlockIsContent(bool to_section) {
  EmitContent(raw_);
  raw_.clear();
  bare_ = false;
  mode_ = to_section ? Mode::kSection : Mode::kText;
}

std::string_view ToolCallStream::CloseMarker() const { return IsDeepSeek(format_) ? kDsCallEnd : kToolCallClose; }

}  // namespace pg
