#include "server/http/http_framing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace pg {
namespace {

constexpr int64_t kMaxChunkSizeLineBytes = 4096;  // chunk-size with its extensions
constexpr int kMaxChunkSizeDigits = 15;           // 15 hex digits: < 2^60 bytes

FramingError Bad(std::string message) { return FramingError{400, std::move(message), "bad_framing"}; }

bool IsTokenChar(unsigned char c) {
  if (std::isalnum(c)) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// A control character other than HT (CR and LF included), or DEL.
bool IsControl(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// Shown in a message: at most 40 bytes, control characters as '?'.
std::string Shown(std::string_view s) {
  std::string out(s.substr(0, 40));
  for (char& c : out)
    if (IsControl(static_cast<unsigned char>(c))) c = '?';
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<FramingError> RequestFraming::AddRequestLine(std::string_view line) {
  if (line.size() < 2 || line.substr(line.size() - 2) != "\r\n") return Bad("the request line does not end in CRLF");
  return std::nullopt;
}

std::optional<FramingError> RequestFraming::AddHeaderLine(std::string_view line) {
  if (line.size() < 2 || line.substr(line.size() - 2) != "\r\n") return Bad("a header line does not end in CRLF");
  line.remove_suffix(2);
  if (line.empty()) return std::nullopt;
  if (IsBlank(line.front())) return Bad("a header line starts with a space or tab (obsolete line folding)");
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return Bad("a header line has no field name and ':'");
  const std::string_view name = line.substr(0, colon);
  for (unsigned char c : name)
    if (!IsTokenChar(c)) return Bad(fmt::format("header field name '{}' is not a token", Shown(name)));
  const std::string_view value = Trim(line.substr(colon + 1));
  for (unsigned char c : value)
    if (IsControl(c)) return Bad(fmt::format("the value of header '{}' holds a control character", Shown(name)));
  const std::string lower = Lower(name);
  if (lower == "content-length") {
    if (++content_length_lines_ == 1) {
      content_length_raw_ = std::string(value);
      const bool digits = !value.empty() && value.size() <= 18 &&
                          std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (digits) content_length_ = std::stoull(content_length_raw_);
    }
  } else if (lower == "transfer-encoding") {
    transfer_encodings_.emplace_back(value);
  }
  return std::nullopt;
}

std::optional<FramingError> RequestFraming::Check() const {
  if (content_length_lines_ > 1) return Bad("the request has more than one Content-Length header");
  if (content_length_lines_ > 0 && !transfer_encodings_.empty())
    return Bad("the request has both Content-Length and Transfer-Encoding");
  for (const std::string& value : transfer_encodings_) {
    std::string_view rest = value;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string coding = Lower(Trim(rest.substr(0, comma)));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (!coding.empty() && coding != "chunked")
        return FramingError{501, fmt::format("transfer coding '{}' is not implemented (only chunked)", Shown(coding)),
                            "unsupported_transfer_coding"};
    }
  }
  if (!transfer_encodings_.empty() && (transfer_encodings_.size() != 1 || Lower(transfer_encodings_[0]) != "chunked"))
    return Bad("Transfer-Encoding must be exactly 'chunked', once");
  if (content_length_lines_ == 1 && !content_length_)
    return Bad(fmt::format("Content-Length '{}' is not a decimal number", Shown(content_length_raw_)));
  return std::nullopt;
}

std::optional<FramingError> ChunkedBodyCheck::Feed(const char* data, size_t n) {
  size_t i = 0;
  while (i < n && state_ != State::kDone) {
    if (state_ == State::kData) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(size_, n - i));
      size_ -= take;
      i += take;
      if (size_ == 0) state_ = State::kDataCr;
      continue;
    }
    if (auto e = Step(data[i++])) return e;
  }
  return std::nullopt;
}

std::optional<FramingError> ChunkedBodyCheck::Step(char c) {
  if (state_ == State::kSize || state_ == State::kSizeTail || state_ == State::kExt) {
    if (++line_bytes_ > kMaxChunkSizeLineBytes)
      return Bad(fmt::format("a chunk-size line is longer than {} bytes", kMaxChunkSizeLineBytes));
  }
  switch (state_) {
    case State::kSize:
      if (const int v = HexValue(c); v >= 0) {
        if ((digits_ > 0 || v > 0) && ++digits_ > kMaxChunkSizeDigits) return Bad("a chunk size is too large");
        size_ = size_ * 16 + static_cast<uint64_t>(v);
        return std::nullopt;
      }
      if (line_bytes_ == 1) return Bad(fmt::format("chunk size '{}' is not hexadecimal", Shown(std::string(1, c))));
      if (c == ';')
        state_ = State::kExt;
      else if (IsBlank(c))
        state_ = State::kSizeTail;
      else if (c == '\r')
        state_ = State::kSizeLf;
      else
        return Bad("a chunk size is followed by something other than ';' or CRLF");
      return std::nullopt;
    case State::kSizeTail:
      if (c == ';')
        state_ = State::kExt;
      else if (c == '\r')
        state_ = State::kSizeLf;
      else if (!IsBlank(c))
        return Bad("a chunk size is followed by something other than ';' or CRLF");
      return std::nullopt;
    case State::kExt:
      if (c == '\r')
        state_ = State::kSizeLf;
      else if (IsControl(static_cast<unsigned char>(c)))
        return Bad("a chunk extension holds a control character");
      return std::nullopt;
    case State::kSizeLf:
      return Expect(c, '\n', size_ == 0 ? State::kEndCr : State::kData, "a chunk-size line does not end in CRLF");
    case State::kDataCr: return Expect(c, '\r', State::kDataLf, "chunk data is longer than its chunk size");
    case State::kDataLf:
      if (auto e = Expect(c, '\n', State::kSize, "chunk data is not followed by CRLF")) return e;
      size_ = 0;
      digits_ = 0;
      line_bytes_ = 0;
      return std::nullopt;
    case State::kEndCr: return Expect(c, '\r', State::kEndLf, "trailer fields after the last chunk are not accepted");
    case State::kEndLf: return Expect(c, '\n', State::kDone, "the last chunk is not followed by CRLF");
    case State::kData:
    case State::kDone: break;
  }
  return std::nullopt;
}

std::optional<FramingError> ChunkedBodyCheck::Expect(char c, char want, State next, const char* error) {
  if (c != want) return Bad(error);
  state_ = next;
  return std::nullopt;
}

}  // namespace pg
