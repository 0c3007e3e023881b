// SseParser: incremental Server-Sent Events parser. Bytes arrive in arbitrary
// pieces (an event, a line, even "\r\n" may be split across reads); the
// parser buffers partial lines and emits each complete event's data (the
// "data:" lines of the event joined by '\n') once its blank line arrives.
// Comment lines (":...") and other fields (event:, id:, retry:) are ignored.
// Thread-safety: none (one per stream).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace pg {

class SseParser {
 public:
  using EventFn = std::function<void(const std::string& data)>;
  explicit SseParser(EventFn on_event) : on_event_(std::move(on_event)) {}
  void Feed(const char* data, size_t n);
  // Flushes an event left without its terminating blank line (end of stream).
  void Finish();
  // Bytes received in lines longer than this are an error (protects memory).
  static constexpr size_t kMaxLine = 64 << 20;
  bool overflowed() const { return overflowed_; }
  size_t bytes_fed() const { return bytes_fed_; }

 private:
  void Line(const std::string& line);
  EventFn on_event_;
  std::string partial_;  // bytes of the current, unfinished line
  std::string data_;     // data of the current event so far
  bool has_data_ = false;
  bool last_was_cr_ = false;
  bool overflowed_ = false;
  size_t bytes_fed_ = 0;
};

}  // namespace pg
