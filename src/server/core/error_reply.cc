#include "server/core/error_reply.h"

#include <utility>

#include "server/common/api_error.h"
#include "server/core/request_log.h"

namespace pg {

void SendErrorReply(httplib::Response& res, int http_status, std::string body, const ApiError& error,
                    ServerMetrics* metrics) {
  res.status = http_status;
  res.set_content(std::move(body), "application/json");
  NoteRequestResponse(res.status, res.body);  // for the log line, before any compression
  if (metrics) metrics->errors->Inc({error.kind()});
}

}  // namespace pg
