#include "server/openai/response_format_request.h"

#include <fmt/format.h>

#include <cctype>
#include <string>

#include "base/bounded_json.h"
#include "server/common/api_error.h"
#include "server/core/known_keys.h"
#include "server/core/request.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

// False (and r failed) when an earlier field already set the output format:
// two of them at once are refused, whichever came first.
bool FirstFormat(FieldReader& r, const ApiRequest& req, const std::string& param) {
  if (req.response_format == ApiRequest::ResponseFormat::kText) return true;
  r.Fail(BadRequest(
      fmt::format("'{}' and '{}' both constrain the output; send one of them", req.response_schema_param, param),
      param));
  return false;
}

// A schema sent as an object (or boolean) or, where `text_ok`, as JSON text
// (vLLM's forms). Null when it is neither (r failed).
json SchemaAt(FieldReader& r, const json& v, const std::string& param, bool text_ok) {
  json schema = text_ok && v.is_string() ? ParseBoundedOrDiscard(v.get<std::string>()) : v;
  if (schema.is_object() || schema.is_boolean()) return schema;
  r.Fail(BadRequest(fmt::format("'{}' must be a JSON schema object{}", param, text_ok ? " (or its JSON text)" : ""),
                    param, "invalid_type"));
  return json();
}

constexpr size_t kMaxChoices = 256;
constexpr size_t kMaxChoiceBytes = 1024;

// vLLM's choice: 1 to kMaxChoices non-empty strings of at most
// kMaxChoiceBytes; the output is exactly one of them.
void ReadChoices(FieldReader& r, const json& v, const std::string& param, ApiRequest* req) {
  if (!v.is_array() || v.empty() || v.size() > kMaxChoices) {
    return r.Fail(BadRequest(fmt::format("'{}' must be an array of 1 to {} strings", param, kMaxChoices), param));
  }
  std::vector<std::string> choices;
  for (const json& c : v) {
    if (!c.is_string() || c.get<std::string>().empty() || c.get<std::string>().size() > kMaxChoiceBytes) {
      return r.Fail(BadRequest(
          fmt::format("'{}' entries must be non-empty strings of at most {} bytes, got {}", param, kMaxChoiceBytes,
                      c.is_string() ? "\"" + c.get<std::string>().substr(0, 32) + "\"" : JsonTypeName(c)),
          param));
    }
    choices.push_back(c.get<std::string>());
  }
  if (!FirstFormat(r, *req, param)) return;
  req->SetChoiceFormat(std::move(choices), param);
}

// llama.cpp's top-level "json_schema" and vLLM's "guided_json" (chat and
// completions): the output is one value valid under the schema, as with
// response_format json_schema.
void ReadTopLevelJsonSchema(FieldReader& r, ApiRequest* req) {
  for (const char* key : {"json_schema", "guided_json"}) {
    const json* v = r.Get(key);
    if (!v || r.failed()) continue;
    json schema = SchemaAt(r, *v, key, std::string(key) == "guided_json");
    if (!schema.is_null() && FirstFormat(r, *req, key)) req->SetJsonSchemaFormat(std::move(schema), key, key);
  }
  if (const json* v = r.Get("guided_choice"); v && !r.failed()) ReadChoices(r, *v, "guided_choice", req);
}

// vLLM's structured_outputs (which replaced guided_*): "json" (a schema),
// "json_object" and "choice" are the constraints here; regex, grammar and
// structural tags are refused by name; disable_fallback has nothing to fall
// back from.
void ReadStructuredOutputs(FieldReader& r, ApiRequest* req) {
  const json* so = r.GetObject("structured_outputs");
  if (!so || r.failed()) return;
  if (auto e = UnknownKey(*so,
                          {"json", "json_object", "regex", "choice", "grammar", "structural_tag", "whitespace_pattern",
                           "disable_fallback", "disable_any_whitespace", "disable_additional_properties"},
                          "structured_outputs"))
    return r.Fail(*e);
  for (const char* key : {"regex", "grammar", "structural_tag", "whitespace_pattern", "disable_any_whitespace",
                          "disable_additional_properties"}) {
    auto it = so->find(key);
    if (it == so->end() || it->is_null() || *it == false) continue;
    return r.Fail(BadRequest(fmt::format("'structured_outputs.{}' is not supported; send structured_outputs.json "
                                         "(a JSON schema) or response_format",
                                         key),
                             fmt::format("structured_outputs.{}", key), "unsupported_parameter"));
  }
  if (auto v = so->find("json"); v != so->end() && !v->is_null()) {
    json schema = SchemaAt(r, *v, "structured_outputs.json", true);
    if (schema.is_null() || !FirstFormat(r, *req, "structured_outputs.json")) return;
    req->SetJsonSchemaFormat(std::move(schema), "structured_outputs.json", "structured_outputs.json");
  }
  if (auto v = so->find("json_object"); v != so->end() && !v->is_null() && *v != false) {
    if (!v->is_boolean()) return (void)r.WrongType("structured_outputs.json_object", "a boolean", *v);
    if (!FirstFormat(r, *req, "structured_outputs.json_object")) return;
    req->SetJsonObjectFormat("structured_outputs.json_object");
  }
  if (auto v = so->find("choice"); v != so->end() && !v->is_null())
    ReadChoices(r, *v, "structured_outputs.choice", req);
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
    const bool ok =
        it == js->end() || it->is_null() || (std::string(key) == "strict" ? it->is_boolean() : it->is_string());
    if (!ok) {
      r.Fail(BadRequest(fmt::format("'response_format.json_schema.{}' must be a {}", key,
                                    std::string(key) == "strict" ? "boolean" : "string"),
                        fmt::format("response_format.json_schema.{}", key)));
      return;
    }
  }
  req->SetJsonSchemaFormat(*schema, name->get<std::string>(), "response_format.json_schema.schema");
}

// {"type": "json_object"}: any object; llama.cpp's {"type": "json_object",
// "schema": ...}: one value valid under the schema.
void ReadJsonObject(const json& rf, FieldReader& r, ApiRequest* req) {
  auto schema = rf.find("schema");
  if (schema == rf.end() || schema->is_null()) {
    req->SetJsonObjectFormat("response_format");
    return;
  }
  if (!schema->is_object() && !schema->is_boolean()) {
    r.Fail(BadRequest("'response_format.schema' must be a JSON schema object", "response_format.schema"));
    return;
  }
  req->SetJsonSchemaFormat(*schema, "schema", "response_format.schema");
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
  if (!FirstFormat(r, *req, "response_format")) return;
  if (t == "json_object")
    ReadJsonObject(rf, r, req);
  else
    ReadJsonSchemaObject(rf, r, req);
}

}  // namespace

void ReadOutputFormat(FieldReader& r, ApiRequest* req) {
  ReadTopLevelJsonSchema(r, req);
  ReadStructuredOutputs(r, req);
  if (const json* rf = r.Get("response_format")) ReadResponseFormatObject(*rf, r, req);
}

}  // namespace pg
