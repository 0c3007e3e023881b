// Streaming text that is held back until it is safe to emit (the tail of a
// UTF-8 sequence still missing bytes, a possible start of a stop string):
// IncrementalDecoder and StopStringFilter keep their pending bytes in a
// std::string and release all of it but such a tail.
#pragma once

#include <string>

namespace pg {

// Removes and returns all of *pending but its last `hold` bytes (hold <=
// pending->size()); 0 releases everything.
inline std::string ReleaseAllBut(std::string* pending, size_t hold) {
  std::string out = pending->substr(0, pending->size() - hold);
  pending->erase(0, pending->size() - hold);
  return out;
}

}  // namespace pg
