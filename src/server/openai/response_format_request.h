// ReadOutputFormat: the request fields that ask for JSON output, on
// /v1/chat/completions and /v1/completions. What each means is compiled
// later (server/core/output_constraint_request.h: schema keywords).
//
//   response_format: {"type": "text"} (the default), {"type": "json_object"},
//     or {"type": "json_schema", "json_schema": {"name": ..., "schema": {...},
//     "strict": bool, "description": ...}} (OpenAI's shape; name 1-64 of
//     a-z A-Z 0-9 _ -); llama.cpp's {"type": "json_object", "schema": {...}}.
//   json_schema (llama.cpp) / guided_json (vLLM; an object or JSON text): a
//     schema at the top level.
//   structured_outputs (vLLM): {"json": schema or its text},
//     {"json_object": true} or {"choice": [strings]} (also the older
//     top-level guided_choice: the output is exactly one of the strings);
//     its other constraints are refused by name.
// Every schema form is the same constraint as a json_schema format, and
// ApiRequest::response_schema_param names where it came from; two of them
// at once is a 400, and so is any key these objects do not define.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include "server/core/request.h"
#include "server/core/request_fields.h"

namespace pg {

void ReadOutputFormat(FieldReader& r, ApiRequest* req);

}  // namespace pg
