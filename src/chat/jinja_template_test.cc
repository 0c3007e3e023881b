// Unit tests of the Jinja subset through ChatTemplate. The expected strings
// of kCases were produced by Python Jinja2 3.1 configured like Hugging
// Face's apply_chat_template (immutable sandbox, trim_blocks, lstrip_blocks,
// loopcontrols, HF's tojson, strftime_now fixed to 2026-11-29).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "chat/chat_template.h"

namespace pg {
namespace {

// A clock stopped at the given date (month 0-11, as struct tm counts).
ChatTemplateSettings SettingsAt(int year, int mon, int mday, int wday = 0, int yday = 0) {
  ChatTemplateSettings s;
  s.now = [=] {
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = mon;
    tm.tm_mday = mday;
    tm.tm_wday = wday;
    tm.tm_yday = yday;
    return tm;
  };
  return s;
}

ChatTemplateSettings FixedDate() { return SettingsAt(2026, 10, 29, 0, 332); }

Result<std::string> RenderText(const std::string& tmpl, const std::string& ctx_json = "{}",
                               const ChatTemplateSettings& settings = FixedDate()) {
  Result<ChatTemplate> t = ChatTemplate::Parse(tmpl);
  if (!t.ok()) return t.status();
  return t->Render(nlohmann::ordered_json::parse(ctx_json), settings);
}

struct Case {
  const char* tmpl;
  const char* ctx;
  const char* expected;
};

const Case kCases[] = {
    {"{% for x in [1,2,3] %}{% if loop.first %}{% set y = 5 %}{% endif %}[{{ y }}]{% endfor %}{{ y }}", "{}",
     "[5][][]"},
    {"{% set y = 1 %}{% for x in [1,2,3] %}{{ y }}{% set y = x*10 %}{{ y }}|{% endfor %}{{ y }}", "{}",
     "110|120|130|1"},
    {"{{ [1,\"a\",none,true,1.5,{\"k\":[1]}] }} {{ (1,2) }} {{ (1,) }} {{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} "
     "{{ 0.00001 }} {{ 10/4 }} {{ 7//2 }} {{ -7//2 }} {{ -7 % 3 }} {{ 2**10 }} {{ 2**-1 }} {{ 7.5 % 2 }} {{ -7.5 // 2 "
     "}}",
     "{}",
     "[1, 'a', None, True, 1.5, {'k': [1]}] (1, 2) (1,) 1e+20 1e+16 1000000000000000.0 0.0001 1e-05 2.5 3 -4 2 1024 "
     "0.5 1.5 -4.0"},
    {"{{ \"it's\" }}{{ [\"it's\", \"a\\nb\", 'q\"', 'both \\' and \"', \"tab\\t\", \"\\x01\"] }}", "{}",
     "it's[\"it's\", 'a\\nb', 'q\"', 'both \\' and \"', 'tab\\t', '\\x01']"},
    {"{{ x is iterable }} {{ \"s\" is sequence }} {{ true is number }} {{ true is integer }} {{ 1.0 is float }} {{ {} "
     "is mapping }} {{ none is none }}",
     "{}", "True True True False True True True"},
    {"{% macro m(a, b=2) %}{{ a }}{{ b }}{{ g }}{% endmacro %}{% set g = 9 %}{{ m(1) }}{{ m(1, b=3) }}{{ m(b=4, a=0) "
     "}}",
     "{}", "129139049"},
    {"  {% if true %}\n  x\n  {% endif %}\n  {{ 1 }}\n  {# c #}\n y", "{}", "  x\n  1\n y"},
    {"{{ \"abc\"[::-1] }} {{ \"héllo\"|length }} {{ \"héllo\"[1] }} {{ [1,2,3][-1] }} {{ [1,2,3][5] }}| {{ "
     "\"héllo\"[1:3] }} {{ [1,2,3,4,5][1:4:2] }} {{ [1,2,3][::-1] }} {{ [1,2,3][-2:] }}",
     "{}", "cba 5 é 3 | él [2, 4] [3, 2, 1] [2, 3]"},
    {"{{ none|string }} {{ undefinedv|string }}| {{ \"x\" ~ none }} {{ 1 ~ 2 }} {{ true }}", "{}",
     "None | xNone 12 True"},
    {"{{ {\"a\":1}|tojson }} {{ {\"b\":1,\"a\":[1,2]}|tojson(indent=2, sort_keys=true) }} {{ {\"b\":{}, \"c\": "
     "[]}|tojson(indent=2) }} {{ \"é<>&'\"|tojson }} {{ \"é\"|tojson(ensure_ascii=true) }} {{ "
     "[1,2]|tojson(separators=(\",\",\":\")) }} {{ {\"a\": 1.0, \"b\": none, \"c\": true}|tojson(indent=\"\\t\") }}",
     "{}",
     "{\"a\": 1} {\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": 1\n} {\n  \"b\": {},\n  \"c\": []\n} \"é<>&'\" "
     "\"\\u00e9\" [1,2] {\n\t\"a\": 1.0,\n\t\"b\": null,\n\t\"c\": true\n}"},
    {"{%- set ns = namespace(a=1, b=[]) -%}\n{%- for i in range(5) -%}{%- set ns.a = ns.a * 2 -%}{%- set ns.b = ns.b + "
     "[i] -%}{%- endfor -%}\n{{ ns.a }} {{ ns.b }}",
     "{}", "32 [0, 1, 2, 3, 4]"},
    {"{% for k, v in {\"a\": 1, \"b\": 2}.items() %}{{ k }}={{ v }}{% if not loop.last %}, {% endif %}{% endfor %}",
     "{}", "a=1, b=2"},
    {"{% for x in [1,2,3,4,5] if x is odd %}{{ loop.index }}/{{ loop.length }}:{{ x }} {% else %}none{% endfor %}|{% "
     "for x in [] %}x{% else %}empty{% endfor %}",
     "{}", "1/3:1 2/3:3 3/3:5 |empty"},
    {"{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% "
     "endfor %}",
     "{}", "0134"},
    {"{{ \"  hi  \"|trim }}|{{ \"xxhixx\"|trim(\"x\") }}|{{ \"Hello World\"|lower }}|{{ \"hello world\"|upper }}|{{ "
     "\"hello wORLD-foo(bar\"|title }}|{{ \"hELLO\"|capitalize }}|{{ \"aaa\"|replace(\"a\",\"b\",2) }}",
     "{}", "hi|hi|hello world|HELLO WORLD|Hello World-Foo(Bar|Hello|bba"},
    {"{{ [1,2,3]|join(\", \") }}|{{ [1,2,3]|first }}|{{ [1,2,3]|last }}|{{ []|first }}|{{ x|default(\"dflt\") }}|{{ "
     "\"\"|default(\"dflt\", true) }}|{{ \"\"|d(\"z\") }}",
     "{}", "1, 2, 3|1|3||dflt|dflt|"},
    {"{{ msgs|selectattr(\"role\", \"equalto\", \"user\")|map(attribute=\"content\")|join(\",\") }}|{{ "
     "msgs|rejectattr(\"role\", \"==\", \"user\")|list|length }}|{{ msgs|map(attribute=\"role\")|unique|list }}|{{ "
     "msgs|selectattr(\"tool\")|list }}",
     "{\"msgs\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", \"content\": \"b\"}, {\"role\": "
     "\"user\", \"content\": \"c\", \"tool\": 1}]}",
     "a,c|1|['user', 'assistant']|[{'role': 'user', 'content': 'c', 'tool': 1}]"},
    {"{{ \"3\"|int + 4 }} {{ \"3.7\"|int }} {{ \"x\"|int(9) }} {{ 3.9|int }} {{ \"2.5\"|float }} {{ -3|abs }} {{ "
     "2.567|round(2) }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.1|round(0, \"ceil\") }}",
     "{}", "7 3 9 3 2.5 3 2.57 2.0 4.0 3.0"},
    {"{{ {\"b\": 1, \"A\": 2, \"c\": 0}|dictsort }} {{ {\"b\": 1, \"A\": 2, \"c\": 0}|dictsort(by=\"value\", "
     "reverse=true) }}",
     "{}", "[('A', 2), ('b', 1), ('c', 0)] [('A', 2), ('b', 1), ('c', 0)]"},
    {"{{ \"a\\nb\\n\\nc\"|indent(2) }}|{{ \"a\\nb\"|indent(2, true) }}|{{ \"a\\n\\nb\"|indent(2, blank=true) }}", "{}",
     "a\n  b\n\n  c|  a\n  b|a\n  \n  b"},
    {"{{ [3,1,2]|sort }} {{ [\"b\",\"A\",\"c\"]|sort }} {{ [\"b\",\"A\",\"c\"]|sort(case_sensitive=true) }} {{ "
     "[3,1,2]|sort(reverse=true) }} {{ \"abc\"|reverse }} {{ [1,2]|reverse|list }} {{ \"one two  three\"|wordcount }}",
     "{}", "[1, 2, 3] ['A', 'b', 'c'] ['A', 'b', 'c'] [3, 2, 1] cba [2, 1] 3"},
    {"{{ \"a,b,,c\".split(\",\") }} {{ \"  a b  c \".split() }} {{ \"a b c\".split(None, 1) }} {{ "
     "\"a,b,c\".rsplit(\",\", 1) }} {{ \" a b \".rsplit() }} {{ \"abc\".startswith(\"ab\") }} {{ "
     "\"abc\".endswith((\"x\", \"c\")) }} {{ \"xxaxx\".strip(\"x\") }} {{ \"  a \".lstrip() }}| {{ \"Hello "
     "World\".title() }} {{ \"ab\".upper() }}",
     "{}", "['a', 'b', '', 'c'] ['a', 'b', 'c'] ['a', 'b c'] ['a,b', 'c'] ['a', 'b'] True True a a | Hello World AB"},
    {"{{ \"{} and {}\".format(1, \"x\") }} {{ \"{0}{0}{name}\".format(7, name=\"n\") }} {{ \"abcabc\".find(\"c\") }} "
     "{{ \"abcabc\".count(\"bc\") }}",
     "{}", "1 and x 77n 2 2"},
    {"{{ 1 if x else 2 }} {{ 1 if true }}| {{ x is defined }} {{ x is not defined }} {{ not x }} {{ 1 < 2 < 3 }} {{ 3 "
     "> 2 > 5 }} {{ \"a\" in \"abc\" }} {{ 2 not in [1,2] }} {{ \"k\" in {\"k\": 1} }}",
     "{}", "2 1| False True True True False True False True"},
    {"{% set a, b = [1, 2] %}{{ a }}{{ b }}{% set s %}inner {{ a }}{% endset %}[{{ s }}]", "{}", "12[inner 1]"},
    {"{% filter upper %}hello {{ \"x\" }}{% endfilter %}", "{}", "HELLO X"},
    {"{{ strftime_now(\"%d %b %Y\") }} {{ strftime_now(\"%Y-%m-%d %A\") }}", "{}", "29 Nov 2026 2026-11-29 Sunday"},
    {"{{ {'a': {'b': 1}} }}", "{}", "{'a': {'b': 1}}"},
    {"{{ (1, 2)|list }} {{ {\"a\": 1}|list }} {{ \"ab\"|list }} {{ {\"a\":1}|items|list }}", "{}",
     "[1, 2] ['a'] ['a', 'b'] [('a', 1)]"},
    {"{{ x.0 }} {{ x.1.a }}", "{\"x\": [5, {\"a\": 9}]}", "5 9"},
    {"{{ 1.5e3 }} {{ 1_000 }} {{ 12.0 }} {{ 0.1 + 0.2 }} {{ 1e-7 }} {{ 123456789012345678.0 }}", "{}",
     "1500.0 1000 12.0 0.30000000000000004 1e-07 1.2345678901234568e+17"},
    {"{{ \"a\" * 3 }} {{ [1] * 3 }} {{ 3 * \"b\" }}", "{}", "aaa [1, 1, 1] bbb"},
    {"{{ loop }}", "{}", ""},
    {"{% for a in [[1,2],[3,4]] %}{% for b in a %}{{ loop.index }}{{ b }}{% endfor %}{{ loop.index }};{% endfor %}",
     "{}", "11221;13242;"},
    {"{% for x in [1,2,3] %}{{ loop.previtem }}-{{ loop.nextitem }}-{{ loop.revindex }}-{{ loop.cycle(\"a\",\"b\") }} "
     "{% endfor %}",
     "{}", "-2-3-a 1-3-2-b 2--1-a "},
    {"{{ 'a' 'b' }} {{ \"\\u00e9\\x41\\101\\\\n\" }}", "{}", "ab éAA\\n"},
    {"{{ true == 1 }} {{ 1 == 1.0 }} {{ none == none }} {{ x == none }} {{ [1,2] == [1,2] }} {{ {\"a\":1} == {\"a\":1} "
     "}} {{ \"a\" < \"b\" }} {{ [1,2] < [1,3] }}",
     "{}", "True True True False True True True True"},
    {"{{ [1,2,3]|sum }} {{ [1,5,3]|max }} {{ [4,2,3]|min }} {{ [\"b\",\"A\"]|max }} {{ msgs|sum(attribute=\"n\") }}",
     "{\"msgs\": [{\"n\": 1}, {\"n\": 2}]}", "6 5 2 b 3"},
    {"{{ \"<a href='x'>&</a>\"|e }} {{ \"x\"|safe }} {{ 5|string ~ \"a\" }}", "{}",
     "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt; x 5a"},
    {"{{ [\"a\", \"b\"]|map(\"upper\")|list }} {{ [1, 2, 3]|select(\"odd\")|list }} {{ [1, 2, 3]|reject(\"odd\")|list "
     "}} {{ [1,2,3]|select(\">\", 1)|list }}",
     "{}", "['A', 'B'] [1, 3] [2] [2, 3]"},
    {"{%- macro outer(x) -%}[{{ inner(x) }}]{%- endmacro -%}{%- macro inner(y) -%}<{{ y }}>{%- endmacro -%}{{ outer(3) "
     "}}",
     "{}", "[<3>]"},
    {"{% set ns = namespace() %}{% set ns.x = 1 %}{{ ns.x }}{{ ns }}", "{}", "1<Namespace {'x': 1}>"},
    {"a\n  {%- if true %}\n    b\n  {% endif -%}\n  c", "{}", "a    b\nc"},
    {"{% for i in [1,2] %}\n  item {{ i }}\n{% endfor %}\ndone", "{}", "  item 1\n  item 2\ndone"},
    {"{%+ if true %}  x{% endif +%}\ny", "{}", "  x\ny"},
    {"  {{- \"a\" -}}  \n  {{ \"b\" }}  ", "{}", "ab  "},
    {"text {# comment #} more\n  {#- c2 -#}\n  end", "{}", "text  moreend"},
    {"line1\n    {% set x = 1 %}\nline2 {% set y = 2 %}\n  {% if x %}yes{% endif %}", "{}", "line1\nline2 yes"},
    {"{% if true %}\na\n{% else %}\nb\n{% endif %}\n", "{}", "a\n"},
    {"\t{% if true %}tab{% endif %}", "{}", "tab"},
    {"{%- for m in ms -%}\n<{{ m }}>\n{%- endfor %}\n\ntrailing", "{\"ms\": [1, 2]}", "<1><2>\ntrailing"},
    {"{{ 'x' }}\n{{ 'y' }}", "{}", "x\ny"},
    {"{% macro f() %}\n  inside\n{% endmacro %}\n[{{ f() }}]", "{}", "[  inside\n]"},
    {"{%- set x -%}\n  spaced\n{%- endset -%}\n[{{ x }}]", "{}", "[spaced]"},
    {"  {%- if true -%}\n     \n  {%- endif %}\n   z", "{}", "   z"},
    {"x {# a #}\ny", "{}", "x y"},
    {"{{ \"a\" }}{# c #}\n{{ \"b\" }}", "{}", "ab"},
    {"{% for x in \"ab\" %}{{ x }}{% endfor %}", "{}", "ab"},
    {"Hello\n  {% for x in [1] %}\n    {{ x }}\n  {% endfor %}\n", "{}", "Hello\n    1\n"},
};

TEST(JinjaTemplateTest, MatchesJinja2) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.tmpl);
    Result<std::string> out = RenderText(c.tmpl, c.ctx);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, c.expected);
  }
}

// Errors: syntax errors at Parse, runtime errors at Render, all as Status.
TEST(JinjaTemplateTest, SyntaxErrorsAreStatusWithLine) {
  const char* bad[] = {
      "{% if %}",
      "{{ foo( }}",
      "{{ x|nosuchfilter }}",
      "{% for %}",
      "{{ \"unterminated }}",
      "{% endif %}",
      "{% if x %}",
      "{{ x is nosuchtest }}",
      "{% break %}",
      "{{ 1 + }}",
      "{# open comment",
      "{{ x",
      "{% set %}",
      "{% macro m( %}{% endmacro %}",
      "line1\n{{ (( }}",
      "{{ 9999999999999999999 }}",
  };
  for (const char* t : bad) {
    Result<ChatTemplate> r = ChatTemplate::Parse(t);
    ASSERT_FALSE(r.ok()) << t;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("line "), std::string::npos) << r.status().message();
  }
  Result<ChatTemplate> r = ChatTemplate::Parse("ok\n\n{{ x y }}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("line 3"), std::string::npos) << r.status().message();
}

TEST(JinjaTemplateTest, RuntimeErrorsAreStatus) {
  struct {
    const char* tmpl;
    const char* needle;
  } cases[] = {
      {"{{ x.y }}", "'x' is undefined"},
      {"{{ \"x\" + 1 }}", "unsupported operand"},
      {"{{ 1/0 }}", "division by zero"},
      {"{{ 5 // 0 }}", "division by zero"},
      {"{{ 5 % 0 }}", "modulo by zero"},
      {"{{ messages[0]['role'] }}", "no element 0"},
      {"{% set x = {} %}{% set x.y = 1 %}", "non-namespace"},
      {"{{ 5|length }}", "has no len()"},
      {"{{ 9223372036854775807 + 1 }}", "integer overflow"},
      {"{{ undefined_fn() }}", "'undefined_fn' is undefined"},
      {"{{ 'abc'() }}", "not callable"},
      {"{{ {'a': 1}|tojson(indent=[1]) }}", "indent"},
      {"{{ undefined_thing|tojson }}", "not JSON serializable"},
      {"{% for a, b in [1] %}{% endfor %}", "not iterable"},
      {"{% for a, b in [[1, 2, 3]] %}{% endfor %}", "too many values"},
      {"{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", "takes not more than 1"},
      {"{{ [1, 2][::0] }}", "slice step cannot be zero"},
      {"{{ 1 < 'a' }}", "not supported between"},
  };
  for (const auto& c : cases) {
    Result<std::string> out = RenderText(c.tmpl, R"({"messages": []})");
    ASSERT_FALSE(out.ok()) << c.tmpl << " rendered " << *out;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find(c.needle), std::string::npos) << c.tmpl << ": " << out.status().message();
  }
}

TEST(JinjaTemplateTest, RaiseExceptionCarriesTheMessage) {
  Result<std::string> out = RenderText("before{{ raise_exception('Roles must alternate ' ~ 2) }}after");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "chat template raised: Roles must alternate 2");
}

TEST(JinjaTemplateTest, ContextMustBeAnObject) {
  Result<ChatTemplate> t = ChatTemplate::Parse("x");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->Render(nlohmann::ordered_json::array()).ok());
  EXPECT_TRUE(t->Render(nlohmann::ordered_json::object()).ok());
  EXPECT_FALSE(ChatTemplate().Render(nlohmann::ordered_json::object()).ok());
}

TEST(JinjaTemplateTest, ClockIsInjectable) {
  Result<std::string> out = RenderText("{{ strftime_now('%d %b %Y') }}", "{}", SettingsAt(2024, 6, 26));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "26 Jul 2024");
  // Default clock: today, whatever that is; must render something.
  Result<std::string> today = RenderText("{{ strftime_now('%Y') }}", "{}", ChatTemplateSettings{});
  ASSERT_TRUE(today.ok());
  EXPECT_EQ(today->size(), 4u);
}

TEST(JinjaTemplateTest, ContextValuesKeepTheirTypes) {
  Result<std::string> out = RenderText(
      "{{ i }} {{ f }} {{ b }} {{ n }} {{ s }} {{ l }} {{ d }} {{ i is integer }} {{ f is float }} {{ big }}",
      R"({"i": 3, "f": 1.0, "b": false, "n": null, "s": "é", "l": [1, "x"], "d": {"k": [true]},
          "big": 18446744073709551615})");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "3 1.0 False None é [1, 'x'] {'k': [True]} True True 1.8446744073709552e+19");
}

// A parsed template is shared and rendered from many threads at once.
TEST(JinjaTemplateTest, RenderIsReentrant) {
  Result<ChatTemplate> t = ChatTemplate::Parse(
      "{% set ns = namespace(n=0) %}{% for i in range(k) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}");
  ASSERT_TRUE(t.ok());
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int k = 0; k < 8; ++k) {
    threads.emplace_back([&, k] {
      for (int rep = 0; rep < 50; ++rep) {
        Result<std::string> out = t->Render({{"k", 100 + k}});
        int n = 100 + k;
        if (!out.ok() || *out != std::to_string(n * (n - 1) / 2)) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

// ---------------------------------------------------------------- limits

TEST(JinjaLimitsTest, EndlessLoopHitsTheStepLimit) {
  ChatTemplateSettings s;
  s.limits.max_steps = 100000;
  Result<std::string> out = RenderText(
      "{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}x{% endfor %}{% endfor %}"
      "{% endfor %}",
      "{}", s);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("step limit"), std::string::npos) << out.status().message();
}

TEST(JinjaLimitsTest, HugeRangeIsRefused) {
  Result<std::string> out = RenderText("{% for i in range(10**12) %}{% endfor %}");
  ASSERT_FALSE(out.ok());
}

TEST(JinjaLimitsTest, RecursiveMacroHitsTheDepthLimit) {
  Result<std::string> out = RenderText("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("call depth"), std::string::npos) << out.status().message();
}

TEST(JinjaLimitsTest, StringBlowUpHitsTheSizeLimit) {
  ChatTemplateSettings s;
  s.limits.max_output_bytes = 1 << 20;
  Result<std::string> out = RenderText(
      "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
      "{}", s);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("bytes"), std::string::npos) << out.status().message();
  out = RenderText("{{ 'x' * 100000000000 }}", "{}", s);
  ASSERT_FALSE(out.ok());
  out = RenderText("{{ [1, 2] * 100000000000 }}", "{}", s);
  ASSERT_FALSE(out.ok());
  out = RenderText("{% for i in range(100000) %}0123456789abcdef{% endfor %}", "{}", s);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("output exceeds"), std::string::npos) << out.status().message();
}

TEST(JinjaLimitsTest, DeepNestingIsASyntaxErrorNotACrash) {
  std::string deep(5000, '(');
  EXPECT_FALSE(ChatTemplate::Parse("{{ " + deep + "1" + std::string(5000, ')') + " }}").ok());
  std::string ifs;
  for (int i = 0; i < 2000; ++i) ifs += "{% if true %}";
  EXPECT_FALSE(ChatTemplate::Parse(ifs).ok());
  std::string nots = "{{ ";
  for (int i = 0; i < 5000; ++i) nots += "not ";
  EXPECT_FALSE(ChatTemplate::Parse(nots + "x }}").ok());
}

TEST(JinjaLimitsTest, SelfReferencingNamespaceDoesNotHang) {
  Result<std::string> out = RenderText("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}");
  ASSERT_FALSE(out.ok());
  out = RenderText("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns.me.me.me is defined }}");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "True");
}

TEST(JinjaLimitsTest, DeepInputIsRefused) {
  nlohmann::ordered_json deep = 1;
  for (int i = 0; i < 1000; ++i) deep = nlohmann::ordered_json::array({deep});
  Result<ChatTemplate> t = ChatTemplate::Parse("{{ x }}");
  ASSERT_TRUE(t.ok());
  Result<std::string> out = t->Render({{"x", deep}});
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace pg
