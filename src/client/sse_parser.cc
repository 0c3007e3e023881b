#include "client/sse_parser.h"

namespace pg {

void SseParser::Feed(const char* data, size_t n) {
  bytes_fed_ += n;
  for (size_t i = 0; i < n; ++i) {
    char c = data[i];
    if (c == '\n' && last_was_cr_) {  // second half of a split "\r\n"
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = c == '\r';
    if (c == '\r' || c == '\n') {
      Line(partial_);
      partial_.clear();
      continue;
    }
    if (partial_.size() >= kMaxLine) {
      overflowed_ = true;
      continue;
    }
    partial_.push_back(c);
  }
}

void SseParser::Line(const std::string& line) {
  if (line.empty()) {
    if (has_data_) on_event_(data_);
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line[0] == ':') return;
  size_t colon = line.find(':');
  std::string field = line.substr(0, colon);
  if (field != "data") return;
  std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.erase(0, 1);
  if (has_data_) data_.push_back('\n');
  data_ += value;
  has_data_ = true;
}

void SseParser::Finish() {
  if (!partial_.empty()) {
    Line(partial_);
    partial_.clear();
  }
  Line("");
}

}  // namespace pg
