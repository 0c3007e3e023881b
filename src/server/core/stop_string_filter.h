// StopStringFilter: finds OpenAI `stop` strings in streamed text.
//
// Text arrives in pieces (whole UTF-8 characters, from IncrementalDecoder).
// Push() returns the part that can be sent to the client now: it holds back
// a tail that could still turn into a stop string, and once a stop string
// appears it returns the text before it and reports stopped(); everything
// from the stop string on is dropped. Flush() releases the held-back tail
// when generation ends without a stop.
//
// Not thread-safe; one per request.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pg {

class StopStringFilter {
 public:
  // Empty strings in `stops` are ignored.
  explicit StopStringFilter(std::vector<std::string> stops);

  std::string Push(std::string_view text);
  std::string Flush();
  bool stopped() const { return stopped_; }
  // After stopped(): the stop string found (the earliest in the text; of
  // those starting there, the shortest).
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;  // held back: a suffix that is a proper prefix of some stop string
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace pg
