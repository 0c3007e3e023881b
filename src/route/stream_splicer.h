// StreamSplicer: relays an event stream (OpenAI chat or completions chunks,
// or Anthropic Messages events) event by event, and when the replica serving
// it dies mid-stream, splices in the stream of the same request sent to
// another replica, so the client sees one unbroken stream.
//
// The router sends only complete SSE events (never half of one). A
// replacement stream generates the same request from its start; what the
// client already has is matched and dropped, and only the rest is relayed.
// Two ways of matching:
//   * text (an OpenAI stream whose chunks carry only text): the
//     replacement's text is matched against the text relayed, whatever its
//     chunking; its chunk ids are rewritten to the first stream's id;
//   * events (Anthropic streams, OpenAI streams with tool-call deltas or
//     other non-text chunks): the replacement's events are matched one for
//     one against those relayed, ignoring what differs between two replicas
//     of one model (ids, "created", usage, whose cached-token counts depend
//     on each replica's cache). The ids the client has (message, chunk and
//     tool-call ids) replace the replacement's in everything relayed after.
// Both are exact for deterministic requests (temperature 0, or a seed):
// replicas of one model give identical outputs. When the replacement
// diverges (sampling without a seed) or the stream cannot be matched at all
// (several choices, an error event), the splice is refused and the client
// gets an error event in its own API's format (ErrorEvent) instead of a
// silently different answer.
//
// Thread-safety: none; one splicer per relayed stream.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pg {

class StreamSplicer {
 public:
  enum class Dialect { kOpenAi, kAnthropic };  // the client's API (its stream and error format)
  explicit StreamSplicer(Dialect dialect = Dialect::kOpenAi)
      : dialect_(dialect), by_events_(dialect == Dialect::kAnthropic) {}

  // Bytes of the current upstream stream; appends the complete events to
  // relay to *out (possibly none, possibly rewritten).
  void Feed(std::string_view bytes, std::string* out);

  // The current upstream broke. True when a replacement may be spliced in:
  // the next Feed calls then carry the new upstream's stream from its start.
  bool BeginReplacement();

  // The replacement's output differs from what the client has: end the stream.
  bool diverged() const { return replacing_ && !refused_.empty(); }
  // The answer's end was relayed (a finish_reason, or Anthropic's
  // message_delta with a stop_reason): a replacement is not needed.
  bool finished() const { return finished_; }
  // The stream reached its end event ("data: [DONE]", or message_stop).
  bool done() const { return done_; }
  // Why splicing stopped ("" when it has not).
  const std::string& refused() const { return refused_; }

  // An error event, in the client's format, that ends a stream that could
  // not be continued (OpenAI: a data event with an "error" object, code
  // "replica_lost"; Anthropic: `event: error` with an api_error).
  std::string ErrorEvent(const std::string& message) const;
  // The end event of a stream whose answer was finished() but whose last
  // event was lost with its replica ("data: [DONE]" / message_stop).
  std::string EndEvent() const;

 private:
  // One complete event (without the blank line); appends what to relay.
  void OnEvent(const std::string& event, std::string* out);
  // Text matching of an OpenAI text chunk (its choice 0).
  void OnTextChunk(nlohmann::json& j, const std::string& event, std::string* out);
  // Event matching: one event of the replacement against the next relayed one.
  void OnMatchedEvent(nlohmann::json& j, const std::string& event_name, std::string* out);
  // Records an event relayed to the client (the end state, the event log).
  void Relayed(const nlohmann::json& j);
  // The replacement's text while catching up: drops or trims it.
  bool CatchUp(std::string* text);
  bool text_caught_up() const { return matched_ >= relayed_text_.size(); }

  Dialect dialect_;
  std::string pending_;               // bytes of an incomplete event
  std::vector<nlohmann::json> log_;   // every data event relayed, as parsed
  std::map<std::string, std::string> ids_;  // replacement id -> the id the client has
  size_t events_matched_ = 0;         // replacement events matched against log_
  bool by_events_;                    // Anthropic, or some event cannot be text-matched
  std::string relayed_text_;          // OpenAI: generated text the client has (choice 0)
  std::string id_;                    // OpenAI: the first stream's chunk id
  bool role_sent_ = false;            // OpenAI: the client had the assistant role chunk
  bool finished_ = false;
  bool replacing_ = false;            // feeding a replacement stream
  bool done_ = false;
  size_t matched_ = 0;                // bytes of relayed_text_ the replacement has matched
  std::string refused_;
};

}  // namespace pg
