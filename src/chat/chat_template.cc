#include "chat/chat_template.h"

#include <cstdio>
#include <new>

#include "chat/jinja_ast.h"
#include "chat/jinja_builtins.h"
#include "chat/jinja_parser.h"

namespace pg {
namespace {

std::tm LocalNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

// Runs `fn`, turning every exception into a Status.
template <typename Fn>
Status Guarded(const char* what, Fn&& fn) {
  try {
    fn();
    return Status::Ok();
  } catch (const jinja::RaisedError& e) {
    return InvalidArgument(std::string("chat template raised: ") + e.what());
  } catch (const jinja::Error& e) {
    return InvalidArgument(std::string(what) + e.what());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string(what) + "bad JSON value: " + e.what());
  } catch (const std::bad_alloc&) {
    return ResourceExhausted(std::string(what) + "out of memory");
  } catch (const std::exception& e) {
    return Internal(std::string(what) + e.what());
  }
}

jinja::Value ContextToValue(const nlohmann::ordered_json& context, int depth_limit) {
  // Nested input deeper than the printers allow is rejected up front.
  std::function<void(const nlohmann::ordered_json&, int)> check = [&](const nlohmann::ordered_json& j, int d) {
    if (d > depth_limit) jinja::Fail("template input nested too deeply");
    if (j.is_structured()) {
      for (const auto& e : j) check(e, d + 1);
    }
  };
  check(context, 0);
  return jinja::FromJson(context);
}

}  // namespace

Result<ChatTemplate> ChatTemplate::Parse(const std::string& source) {
  ChatTemplate t;
  Status st =
      Guarded("chat template: ", [&] { t.program_ = std::make_shared<const jinja::Program>(jinja::Parse(source)); });
  if (!st.ok()) return st;
  t.source_ = std::make_shared<const std::string>(source);
  return t;
}

Result<std::string> ChatTemplate::Render(const nlohmann::ordered_json& context) const {
  return Render(context, ChatTemplateSettings{});
}

Result<std::string> ChatTemplate::Render(const nlohmann::ordered_json& context,
                                         const ChatTemplateSettings& settings) const {
  if (!program_) return InvalidArgument("chat template: not parsed (default-constructed ChatTemplate)");
  if (!context.is_object()) return InvalidArgument("chat template: context must be a JSON object");
  std::string out;
  Status st = Guarded("chat template: ", [&] {
    jinja::Interpreter interp(settings.limits);
    jinja::Value globals = jinja::Value::Dict();
    jinja::AddBuiltinGlobals(interp, globals);
    globals.dict().Set("raise_exception",
                       jinja::Value::Function("raise_exception", [](jinja::CallArgs& a) -> jinja::Value {
                         const jinja::Value* msg = a.Get(0, "message");
                         throw jinja::RaisedError(msg ? jinja::Str(*msg) : std::string("(no message)"));
                       }));
    std::function<std::tm()> now = settings.now ? settings.now : LocalNow;
    globals.dict().Set("strftime_now", jinja::Value::Function("strftime_now", [now](jinja::CallArgs& a) {
                         const jinja::Value* fmt = a.Get(0, "format");
                         if (!fmt || !fmt->is_string()) jinja::Fail("strftime_now() needs a format string");
                         if (fmt->as_string().size() > 256) jinja::Fail("strftime_now() format too long");
                         std::tm tm = now();
                         char buf[1024];
                         size_t n = std::strftime(buf, sizeof(buf), fmt->as_string().c_str(), &tm);
                         return jinja::Value::String(std::string(buf, n));
                       }));
    jinja::Value ctx = ContextToValue(context, jinja::kMaxValueDepth - 8);
    for (auto& [k, v] : ctx.dict().items) globals.dict().Set(k, std::move(v));
    out = interp.Render(*program_, globals);
  });
  if (!st.ok()) return st;
  return out;
}

Result<std::string> RenderChat(const ChatTemplate& t, const nlohmann::ordered_json& messages,
                               const nlohmann::ordered_json& tools, const ChatRenderOptions& opt,
                               const nlohmann::ordered_json& extra) {
  if (!messages.is_array()) return InvalidArgument("messages must be an array");
  if (!tools.is_null() && !tools.is_array()) return InvalidArgument("tools must be an array or null");
  if (!extra.is_null() && !extra.is_object()) return InvalidArgument("chat template kwargs must be an object");
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  ctx["messages"] = messages;
  ctx["tools"] = tools;
  ctx["add_generation_prompt"] = opt.add_generation_prompt;
  ctx["bos_token"] = opt.bos_token;
  ctx["eos_token"] = opt.eos_token;
  if (extra.is_object()) {
    for (auto it = extra.begin(); it != extra.end(); ++it) {
      if (it.key() == "messages" || it.key() == "tools" || it.key() == "add_generation_prompt") continue;
      ctx[it.key()] = it.value();
    }
  }
  ChatTemplateSettings settings;
  if (!opt.date_override.empty()) {
    std::tm tm{};
    int y = 0, m = 0, d = 0;
    char tail = 0;
    if (std::sscanf(opt.date_override.c_str(), "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || m < 1 || m > 12 || d < 1 ||
        d > 31) {
      return InvalidArgument("date override must be YYYY-MM-DD, got '" + opt.date_override + "'");
    }
    tm.tm_year = y - 1900;
    tm.tm_mon = m - 1;
    tm.tm_mday = d;
    tm.tm_hour = 12;
    std::time_t tt = timegm(&tm);  // normalizes and fills tm_wday / tm_yday
    gmtime_r(&tt, &tm);
    tm.tm_hour = 0;
    settings.now = [tm] { return tm; };
  }
  return t.Render(ctx, settings);
}

const char* DefaultChatTemplate() {
  return R"JINJA({%- macro text_of(content) -%}
  {%- if content is string -%}
    {{- content -}}
  {%- elif content is iterable and content is not mapping -%}
    {%- for part in content -%}
      {%- if part is mapping and part.type == 'text' -%}
        {{- part.text -}}
      {%- elif part is string -%}
        {{- part -}}
      {%- endif -%}
    {%- endfor -%}
  {%- elif content is not none -%}
    {{- content -}}
  {%- endif -%}
{%- endmacro -%}
{%- set ns = namespace(system='', skip_first=false) -%}
{%- if messages and messages[0].role == 'system' -%}
  {%- set ns.system = text_of(messages[0].content) -%}
  {%- set ns.skip_first = true -%}
{%- endif -%}
{%- if tools -%}
  {{- '<|im_start|>system\n' -}}
  {%- if ns.system -%}
    {{- ns.system + '\n\n' -}}
  {%- endif -%}
  {{- '# Tools\n\nYou may call the functions below. Their signatures are inside <tools></tools>:\n<tools>' -}}
  {%- for tool in tools -%}
    {{- '\n' + ((tool.function if tool.function is defined else tool) | tojson) -}}
  {%- endfor -%}
  {{- '\n</tools>\n\nTo call a function, answer with one JSON object per call, each inside <tool_call></tool_call> tags:\n<tool_call>\n{"name": <function-name>, "arguments": <arguments-object>}\n</tool_call><|im_end|>\n' -}}
{%- elif ns.system -%}
  {{- '<|im_start|>system\n' + ns.system + '<|im_end|>\n' -}}
{%- endif -%}
{%- for m in messages -%}
  {%- if loop.first and ns.skip_first -%}
  {%- elif m.role == 'tool' -%}
    {%- if loop.first or messages[loop.index0 - 1].role != 'tool' -%}
      {{- '<|im_start|>user' -}}
    {%- endif -%}
    {{- '\n<tool_response>\n' + text_of(m.content) + '\n</tool_response>' -}}
    {%- if loop.last or messages[loop.index0 + 1].role != 'tool' -%}
      {{- '<|im_end|>\n' -}}
    {%- endif -%}
  {%- elif m.role == 'assistant' -%}
    {{- '<|im_start|>assistant\n' + text_of(m.content) -}}
    {%- for tc in (m.tool_calls or []) -%}
      {%- set call = tc.function if tc.function is defined else tc -%}
      {%- if not loop.first or text_of(m.content) -%}
        {{- '\n' -}}
      {%- endif -%}
      {{- '<tool_call>\n{"name": ' + (call.name | tojson) + ', "arguments": ' -}}
      {{- call.arguments if call.arguments is string else (call.arguments | default({}) | tojson) -}}
      {{- '}\n</tool_call>' -}}
    {%- endfor -%}
    {{- '<|im_end|>\n' -}}
  {%- elif m.role == 'system' or m.role == 'user' -%}
    {{- '<|im_start|>' + m.role + '\n' + text_of(m.content) + '<|im_end|>\n' -}}
  {%- else -%}
    {{- raise_exception('Unknown message role: ' ~ m.role) -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<|im_start|>assistant\n' -}}
{%- endif -%}
)JINJA";
}

}  // namespace pg
