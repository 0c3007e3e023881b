#include "server/core/ignored_fields.h"

#include "base/log.h"

namespace pg {

void ReportIgnoredFields(const std::string& request_id, const std::vector<std::string>& fields,
                         httplib::Response& res) {
  if (fields.empty()) return;
  std::string list;
  for (const std::string& f : fields) list += (list.empty() ? "" : ", ") + f;
  res.set_header(kIgnoredFieldsHeader, list);
  PG_LOG_INFO("{}: accepted without effect: {}", request_id, list);
}

}  // namespace pg
