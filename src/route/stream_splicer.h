// StreamSplicer: relays an event stream (OpenAI chat or completions chunks,
// or Anthropic Messages events) event by event, and when the replica serving
// it dies mid-stream, splices in the stream of the same request sent to
// another replica, so the client sees one unbroken stream.
//
// The router sends only complete SSE events (never half of one). A
// replacement stream generates the same request from its start; what the
// client already has is matched and dropped, and only the rest is relayed.
// Matching is by content, whatever the chunking: each event is its
// streamed string (OpenAI's delta content, completions text, a tool call's
// arguments; Anthropic's text, partial_json or thinking delta) and its
// skeleton (the rest, without what differs between two replicas of one
// model: ids, "created", usage (cached-token counts depend on each
// replica's cache), system_fingerprint, logprobs). Consecutive events of one
// skeleton form a run whose strings concatenate, so a replacement that
// chunks "The", " quick" as "The quick" still matches; a run the replacement
// extends past what the client has is relayed from there on, trimmed. The
// ids the client has (message, chunk and tool-call ids) replace the
// replacement's in everything relayed after.
// Matching is exact for deterministic requests (temperature 0, or a seed):
// replicas of one model give identical outputs. When the replacement
// diverges (sampling without a seed) or the stream cannot be matched at all
// (several choices, an error event), the splice is refused and the client
// gets an error event in its own API's format (ErrorEvent) instead of a
// silently different answer.
//
// Thread-safety: none; one splicer per relayed stream.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace pg {

class StreamSplicer {
 public:
  // The client's API (its stream and error format). A Responses stream
  // (/v1/responses) is relayed but never continued elsewhere: when its
  // replica is lost, it ends with a Responses error event.
  enum class Dialect { kOpenAi, kAnthropic, kResponses };
  explicit StreamSplicer(Dialect dialect = Dialect::kOpenAi) : dialect_(dialect) {}

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
  // "replica_lost"; Anthropic: `event: error` with an api_error; Responses:
  // `event: error` with type "error", code "replica_lost").
  std::string ErrorEvent(const std::string& message) const;
  // The end event of a stream whose answer was finished() but whose last
  // event was lost with its replica ("data: [DONE]" / message_stop).
  std::string EndEvent() const;

 private:
  // A run of relayed events with one skeleton, and their streamed strings.
  struct Run {
    std::string skeleton;
    std::string text;
    nlohmann::json first;  // its first event, for the ids it carries
  };
  // One complete event (without the blank line); appends what to relay.
  void OnEvent(const std::string& event, std::string* out);
  // An event of the replacement: matched against the runs the client has,
  // dropped, trimmed or relayed.
  void OnReplacementEvent(nlohmann::json& j, const std::string& event_name, std::string* out);
  // Records an event relayed to the client (the end state, the runs).
  void Relayed(const nlohmann::json& j);
  // The event's skeleton, and its streamed string (null when it has none).
  std::string Skeleton(nlohmann::json& j, nlohmann::json** streamed) const;

  Dialect dialect_;
  std::string pending_;                     // bytes of an incomplete event
  std::vector<Run> runs_;                   // what the client has, in order
  std::map<std::string, std::string> ids_;  // replacement id -> the id the client has
  size_t run_ = 0;                          // replacement: the run it is matching
  size_t matched_ = 0;                      // replacement: bytes of runs_[run_].text it matched
  bool entered_ = false;                    // replacement: it sent an event of runs_[run_]
  bool finished_ = false;
  bool replacing_ = false;  // feeding a replacement stream
  bool done_ = false;
  std::string refused_;
};

}  // namespace pg
