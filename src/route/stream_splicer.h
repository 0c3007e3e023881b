// StreamSplicer: relays an OpenAI event stream (chat or completions) event
// by event, and when the replica serving it dies mid-stream, splices in the
// stream of the same request sent to another replica, so the client sees one
// unbroken stream.
//
// The router sends only complete SSE events (never half of one), and keeps
// the text it has relayed. A replacement stream generates the same request
// from its start; its text is matched against what the client already has
// and only the rest is relayed (its chunk ids rewritten to the first
// stream's id). This is exact for deterministic requests (temperature 0, or
// a seed): replicas of one model give identical outputs. When the
// replacement's text diverges (sampling without a seed), or the stream
// carries what cannot be matched as text (tool-call deltas, several
// choices), the splice is refused and the client gets an error event
// instead of a silently different answer.
//
// Thread-safety: none; one splicer per relayed stream.
#pragma once

#include <string>
#include <string_view>

namespace pg {

class StreamSplicer {
 public:
  // Bytes of the current upstream stream; appends the complete events to
  // relay to *out (possibly none, possibly rewritten).
  void Feed(std::string_view bytes, std::string* out);

  // The current upstream broke. True when a replacement may be spliced in:
  // the next Feed calls then carry the new upstream's stream from its start.
  bool BeginReplacement();

  // After BeginReplacement: true once the replacement has caught up with
  // what the client had (everything after that is relayed as it comes).
  bool caught_up() const { return matched_ >= relayed_text_.size(); }
  // The replacement's text differs from what the client has: end the stream.
  bool diverged() const { return replacing_ && !refused_.empty(); }
  // A finish_reason was relayed (a replacement is not needed for the text).
  bool finished() const { return finished_; }
  // The stream reached its end event ("data: [DONE]").
  bool done() const { return done_; }
  // Why splicing stopped ("" when it has not): the replacement diverged, or
  // the stream cannot be spliced.
  const std::string& refused() const { return refused_; }

  // An error event that ends a stream that could not be continued.
  static std::string ErrorEvent(const std::string& message);

 private:
  // One complete event's text (without the blank line); appends what to relay.
  void OnEvent(const std::string& event, std::string* out);
  // The replacement's event while catching up: drops or trims it.
  bool CatchUp(std::string* text);

  std::string pending_;       // bytes of an incomplete event
  std::string relayed_text_;  // generated text the client has (choice 0)
  std::string id_;            // the first stream's chunk id
  bool role_sent_ = false;    // the client had the assistant role chunk
  bool finished_ = false;     // a finish_reason was relayed
  bool replacing_ = false;    // feeding a replacement stream
  bool done_ = false;
  size_t matched_ = 0;        // bytes of relayed_text_ the replacement has matched
  std::string refused_;
};

}  // namespace pg
