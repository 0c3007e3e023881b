// What the router checks in a replica's answer before relaying it: a final
// HTTP status (200..599), a JSON body where serve always answers JSON, and
// the id of a Responses answer (recorded so previous_response_id reaches the
// replica holding it). A replica that answers otherwise gets the client a
// 502 in its own API's shape (BadGateway), never the replica's bytes.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "server/common/api_error.h"

namespace pg {

// A final status a replica may answer with (1xx and anything past 599 are not).
bool ValidReplicaStatus(int status);

// 502, "bad_gateway".
ApiError BadGateway(std::string message);

// Whether body is one JSON value (checked without building it).
bool IsJsonText(std::string_view body);

// The top-level "id" of a JSON object, read until found ("" when none).
std::string TopLevelId(std::string_view body);

// The response id of a Responses stream's response.created event among the
// complete SSE events in `events` ("" when none is there).
std::string CreatedResponseId(std::string_view events);

}  // namespace pg
