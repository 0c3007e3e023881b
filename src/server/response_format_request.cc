#include "server/response_format_request.h"

#include <cctype>
#include <string>

#include <fmt/format.h>

#include "base/bounded_json.h"
#include "server/known_keys.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

// llama.cpp's top-level "json_schema" and vLLM's "guided_json" (chat and
// completions): the output is one value valid under the schema, as with
// response_format json_schema. vLLM also takes the schema as JSON text.
void ReadTopLevelJsonSchema(FieldReader& r, ApiRequest* req) {
  for (const char* key : {"json_schema", "guided_json"}) {
    const json* v = r.Get(key);
    if (!v) continue;
    json schema = *v;
    if (schema.is_string() && std::string(key) == "guided_json")
      schema = ParseBoundedOrDiscard(v->get<std::string>());
    if (!schema.is_object() && !schema.is_boolean()) {
      r.WrongType(key, "a JSON schema object", *v);
      return;
    }
    if (req->response_format != ApiRequest::ResponseFormat::kText) {
      r.Fail(BadRequest("'json_schema' and 'guided_json' both give the output's schema; send one of them", key));
      return;
    }
    req->response_format = ApiRequest::ResponseFormat::kJsonSchema;
    req->response_schema_name = key;
    req->response_schema = std::move(schema);
    req->response_schema_param = key;
  }
}

bool ValidSchemaName(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

// False (and r failed, naming the first) when `obj` has a key not in `known`.
bool OnlyKnownKeys(const json& obj, std::initializer_list<const char*> known, const std::string& where,
                   FieldReader& r) {
  std::optional<ApiError> e = UnknownKey(obj, known, where);
  if (e) r.Fail(std::move(*e));
  return !e;
}

// OpenAI's json_schema object: {"name", "schema", "strict", "description"}.
void ReadJsonSchemaObject(const json& rf, FieldReader& r, ApiRequest* req) {
  auto js = rf.find("json_schema");
  if (js == rf.end() || !js->is_object()) {
    r.Fail(BadRequest("'response_format' json_schema needs a 'json_schema' object", "response_format.json_schema"));
    return;
  }
  if (!OnlyKnownKeys(*js, {"name", "schema", "strict", "description"}, "response_format.json_schema", r)) return;
  auto name = js->find("name");
  if (name == js->end() || !name->is_string() || !ValidSchemaName(name->get<std::string>())) {
    r.Fail(BadRequest("'response_format.json_schema.name' must be a string of 1 to 64 letters, digits, '_' or '-'",
                      "response_format.json_schema.name"));
    return;
  }
  auto schema = js->find("schema");
  if (schema == js->end() || !(schema->is_object() || schema->is_boolean())) {
    r.Fail(BadRequest("'response_format.json_schema.schema' must be a JSON schema object",
                      "response_format.json_schema.schema"));
    return;
  }
  for (const char* key : {"strict", "description"}) {
    auto it = js->find(key);
    const bool ok = it == js->end() || it->is_null() || (std::string(key) == "strict" ? it->is_boolean() : it->is_string());
    if (!ok) {
      r.Fail(BadRequest(fmt::format("'response_format.json_schema.{}' must be a {}", key,
                                    std::string(key) == "strict" ? "boolean" : "string"),
                        fmt::format("response_format.json_schema.{}", key)));
      return;
    }
  }
  req->response_format = ApiRequest::ResponseFormat::kJsonSchema;
  req->response_schema_name = name->get<std::string>();
  req->response_schema = *schema;
  req->response_schema_param = "response_format.json_schema.schema";
}

// {"type": "json_object"}: any object; llama.cpp's {"type": "json_object",
// "schema": ...}: one value valid under the schema.
void ReadJsonObject(const json& rf, FieldReader& r, ApiRequest* req) {
  auto schema = rf.find("schema");
  if (schema == rf.end() || schema->is_null()) {
    req->response_format = ApiRequest::ResponseFormat::kJsonObject;
    return;
  }
  if (!schema->is_object() && !schema->is_boolean()) {
    r.Fail(BadRequest("'response_format.schema' must be a JSON schema object", "response_format.schema"));
    return;
  }
  req->response_format = ApiRequest::ResponseFormat::kJsonSchema;
  req->response_schema_name = "schema";
  req->response_schema = *schema;
  req->response_schema_param = "response_format.schema";
}

void ReadResponseFormatObject(const json& rf, FieldReader& r, ApiRequest* req) {
  auto type = rf.is_object() ? rf.find("type") : rf.end();
  if (!rf.is_object() || type == rf.end() || !type->is_string()) {
    r.Fail(BadRequest("'response_format' must be an object with a string 'type'", "response_format"));
    return;
  }
  const std::string t = type->get<std::string>();
  const bool known = t == "json_schema"   ? OnlyKnownKeys(rf, {"type", "json_schema"}, "response_format", r)
                     : t == "json_object" ? OnlyKnownKeys(rf, {"type", "schema"}, "response_format", r)
                                          : OnlyKnownKeys(rf, {"type"}, "response_format", r);
  if (!known || t == "text") return;
  if (t != "json_object" && t != "json_schema") {
    r.Fail(BadRequest(fmt::format("'response_format' type '{}' is not one of text, json_object, json_schema", t),
                      "response_format.type"));
    return;
  }
  if (req->response_format != ApiRequest::ResponseFormat::kText) {  // a top-level json_schema / guided_json
    r.Fail(BadRequest(fmt::format("'{}' and 'response_format' both constrain the output; send one of them",
                                  req->response_schema_param),
                      req->response_schema_param));
    return;
  }
  if (t == "json_object") ReadJsonObject(rf, r, req);
  else ReadJsonSchemaObject(rf, r, req);
}

}  // namespace

void ReadOutputFormat(FieldReader& r, ApiRequest* req) {
  ReadTopLevelJsonSchema(r, req);
  if (const json* rf = r.Get("response_format")) ReadResponseFormatObject(*rf, r, req);
}

}  // namespace pg
