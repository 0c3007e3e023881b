// The fields a request carried that this server accepts without effect
// (ApiRequest::ignored_fields): named in a response header and the log,
// never dropped silently. Used by /v1/messages and /v1/responses.
// Thread-safety: free functions.
#pragma once

#include <httplib.h>

#include <string>
#include <vector>

namespace pg {

// Response header naming the request fields accepted without effect (comma-separated).
inline constexpr const char* kIgnoredFieldsHeader = "x-prosgrow-ignored-fields";

// Sets kIgnoredFieldsHeader and logs the fields (INFO), when there are any.
void ReportIgnoredFields(const std::string& request_id, const std::vector<std::string>& fields, httplib::Response& res);

}  // namespace pg
