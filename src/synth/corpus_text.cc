#include "synth/corpus_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include "synth/splitmix64.h"

namespace pg {
namespace {

// Hand-written prose, original to this project.
constexpr std::string_view kProse[] = {
    "An inference server spends most of its life waiting on memory. The weights of a model are read "
    "once for every step of decoding, so a batch of sixteen sequences costs little more than a batch "
    "of one. That is why a scheduler tries to keep many requests in flight at the same time, and why "
    "the key and value cache deserves as much care as the matrix kernels.\n",
    "The cache is cut into pages of sixteen tokens. Each sequence keeps a table that maps its logical "
    "pages to physical ones, much like an operating system maps virtual memory. When two requests "
    "share a prefix, such as the same system prompt, they can point at the same pages and save both "
    "memory and the time it would take to compute them again.\n",
    "A good error message names the file, says what was expected, and says what was found. It fits "
    "on one line. It never blames the user for a bug in the program, and it never hides a bug in the "
    "input behind a crash. Tests should feed broken files on purpose and check every one of these "
    "promises.\n",
    "Quantization stores each block of thirty-two weights as small integers with one shared scale. "
    "The dot product then runs on integers, which are cheaper to move and to multiply than floats. "
    "The trick is to keep the rounding error small enough that the next token does not change.\n",
    "An agent reads a task, decides which tool to call, looks at the result, and decides again. The "
    "loop ends when the task is done or the budget runs out. Each turn appends to the same "
    "conversation, so the prefix grows and the server can reuse everything it has already seen.\n",
    "Before you optimize, measure. Write down the command, the machine, the number of threads and "
    "the figures. A benchmark that cannot be repeated is only a rumor, and a speedup that nobody can "
    "reproduce will not survive the next refactoring.\n",
    "The tokenizer turns text into numbers and back. It must be exact: the same text gives the same "
    "ids on every machine, and decoding the ids gives back the original bytes, even when a character "
    "is split across two tokens and arrives half at a time in a stream.\n",
    "Threads should meet rarely. A pool of workers that wakes once per layer, splits the rows of a "
    "matrix evenly, and goes back to sleep is simple and fast. Locks inside the inner loop are a "
    "sign that the work was divided in the wrong place.\n",
};

template <size_t N>
std::string_view Pick(SplitMix64& r, const std::array<std::string_view, N>& a) {
  return a[r.Below(static_cast<uint32_t>(N))];
}

constexpr std::array<std::string_view, 12> kNames = {"Ada",   "Bruno", "Chen", "Dalia", "Emeka", "Farah",
                                                     "Goran", "Hana",  "Ivo",  "Jun",   "Kira",  "Luis"};
constexpr std::array<std::string_view, 10> kItems = {"apples", "books",  "bolts",   "tickets", "stamps",
                                                     "cables", "lemons", "pencils", "boxes",   "coins"};
constexpr std::array<std::string_view, 10> kCities = {"Lisbon", "Nairobi",  "Osaka", "Quito", "Tallinn",
                                                      "Perth",  "Montreal", "Accra", "Hanoi", "Bergen"};
constexpr std::array<std::string_view, 8> kFiles = {"src/main.cc", "README.md", "config.json", "app.py",
                                                    "lib/util.rs", "server.go", "index.ts",    "Makefile"};
constexpr std::array<std::string_view, 8> kVerbs = {"parse", "load", "merge",  "filter",
                                                    "count", "sort", "render", "check"};
constexpr std::array<std::string_view, 8> kNouns = {"records", "tokens", "requests", "pages",
                                                    "rows",    "events", "blocks",   "users"};

// A general English lexicon for the template sentences below, so that the
// vocabulary learns thousands of distinct words and word forms (the
// templates above alone repeat a few hundred words).
constexpr std::string_view kLexNouns[] = {
    "system",  "server",    "client",     "request",   "response", "model",      "layer",      "weight",
    "matrix",  "vector",    "token",      "batch",     "cache",    "page",       "block",      "table",
    "thread",  "worker",    "queue",      "scheduler", "kernel",   "buffer",     "memory",     "disk",
    "network", "socket",    "message",    "error",     "warning",  "result",     "value",      "number",
    "string",  "array",     "object",     "field",     "record",   "file",       "folder",     "path",
    "library", "module",    "function",   "method",    "class",    "interface",  "pointer",    "reference",
    "loop",    "branch",    "test",       "benchmark", "report",   "figure",     "chart",      "plot",
    "metric",  "latency",   "throughput", "budget",    "agent",    "tool",       "task",       "plan",
    "step",    "goal",      "answer",     "question",  "problem",  "solution",   "teacher",    "student",
    "school",  "garden",    "river",      "mountain",  "forest",   "village",    "city",       "country",
    "market",  "price",     "coin",       "ticket",    "train",    "station",    "airport",    "window",
    "door",    "kitchen",   "morning",    "evening",   "winter",   "summer",     "weather",    "storm",
    "cloud",   "rain",      "island",     "harbor",    "engineer", "doctor",     "farmer",     "writer",
    "painter", "musician",  "driver",     "pilot",     "baker",    "sailor",     "letter",     "story",
    "chapter", "sentence",  "word",       "language",  "grammar",  "dictionary", "library",    "museum",
    "animal",  "bird",      "horse",      "dog",       "cat",      "fish",       "tree",       "flower",
    "seed",    "stone",     "computer",   "keyboard",  "screen",   "printer",    "camera",     "phone",
    "battery", "engine",    "wheel",      "bridge",    "company",  "customer",   "contract",   "invoice",
    "payment", "account",   "balance",    "receipt",   "order",    "delivery",   "history",    "science",
    "physics", "chemistry", "biology",    "geometry",  "algebra",  "theory",     "experiment", "measurement",
    "journey", "holiday",   "festival",   "concert",   "meeting",  "lesson",     "exam",       "grade",
    "prize",   "winner",    "signal",     "channel",   "protocol", "header",     "payload",    "checksum",
    "version", "release",   "feature",    "option",    "shadow",   "mirror",     "candle",     "blanket",
    "pillow",  "basket",    "bottle",     "bucket",    "ladder",   "hammer",
};
constexpr std::string_view kLexVerbs[] = {
    "build",    "run",      "test",     "measure",  "load",     "store",   "read",     "write",   "parse",    "render",
    "compute",  "schedule", "allocate", "release",  "merge",    "split",   "sort",     "filter",  "count",    "check",
    "open",     "close",    "start",    "stop",     "wait",     "send",    "receive",  "accept",  "reject",   "retry",
    "learn",    "teach",    "explain",  "describe", "answer",   "ask",     "plan",     "solve",   "finish",   "begin",
    "walk",     "climb",    "travel",   "visit",    "carry",    "paint",   "cook",     "clean",   "repair",   "design",
    "compare",  "collect",  "connect",  "convert",  "copy",     "create",  "delete",   "deliver", "detect",   "divide",
    "encode",   "decode",   "enable",   "expect",   "export",   "import",  "follow",   "forward", "generate", "handle",
    "improve",  "include",  "inspect",  "install",  "invoke",   "launch",  "limit",    "listen",  "lock",     "match",
    "move",     "notice",   "observe",  "order",    "pack",     "prepare", "print",    "protect", "publish",  "query",
    "record",   "reduce",   "refresh",  "remove",   "replace",  "request", "reserve",  "resolve", "restore",  "return",
    "sample",   "search",   "select",   "share",    "show",     "sign",    "simplify", "skip",    "track",    "train",
    "transfer", "update",   "upload",   "use",      "validate", "verify",  "watch",    "wrap",    "yield",    "zoom",
};
constexpr std::string_view kLexAdjs[] = {
    "fast",    "slow",    "small",   "large",  "quick",   "careful", "simple", "complex", "clear",  "hidden",
    "bright",  "dark",    "warm",    "cold",   "quiet",   "loud",    "early",  "late",    "new",    "old",
    "strong",  "weak",    "safe",    "broken", "empty",   "full",    "short",  "long",    "narrow", "wide",
    "happy",   "patient", "curious", "honest", "gentle",  "brave",   "clever", "polite",  "busy",   "tired",
    "correct", "exact",   "stable",  "random", "private", "public",  "local",  "remote",  "global", "shared",
    "modern",  "ancient", "rapid",   "steady", "smooth",  "rough",   "sharp",  "soft",    "heavy",  "light",
    "green",   "yellow",  "purple",  "orange", "silver",  "golden",  "wooden", "frozen",  "rural",  "urban",
};
constexpr std::string_view kLexAdverbs[] = {
    "quickly", "slowly", "carefully", "quietly", "clearly", "rarely",   "often",    "always", "never",   "usually",
    "gently",  "easily", "almost",    "nearly",  "finally", "suddenly", "together", "again",  "already", "soon",
};
constexpr std::string_view kLexPreps[] = {"in",    "on",   "under",   "behind", "near",    "before",
                                          "after", "with", "without", "across", "through", "beside"};

bool IsVowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

std::string Plural(std::string_view n) {
  std::string s(n);
  const char last = s.back();
  if (last == 's' || last == 'x' || last == 'h') return s + "es";
  if (last == 'y' && s.size() > 1 && !IsVowel(s[s.size() - 2])) return s.substr(0, s.size() - 1) + "ies";
  return s + "s";
}
// form 0: base, 1: third person -s, 2: past -ed, 3: -ing.
std::string VerbForm(std::string_view v, int form) {
  std::string s(v);
  const char last = s.back();
  switch (form) {
    case 1: return Plural(v);
    case 2:
      if (last == 'e') return s + "d";
      if (last == 'y' && !IsVowel(s[s.size() - 2])) return s.substr(0, s.size() - 1) + "ied";
      return s + "ed";
    case 3:
      if (last == 'e' && s.size() > 2) return s.substr(0, s.size() - 1) + "ing";
      return s + "ing";
    default: return s;
  }
}
std::string Capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}
template <typename T, size_t N>
std::string_view PickOf(SplitMix64& r, const T (&a)[N]) {
  return a[r.Below(static_cast<uint32_t>(N))];
}

void LexiconSentence(SplitMix64& r, std::string* out) {
  const auto n1 = PickOf(r, kLexNouns), n2 = PickOf(r, kLexNouns), v = PickOf(r, kLexVerbs);
  const auto a1 = PickOf(r, kLexAdjs), a2 = PickOf(r, kLexAdjs), adv = PickOf(r, kLexAdverbs);
  const auto prep = PickOf(r, kLexPreps);
  switch (r.Below(6)) {
    case 0: *out += fmt::format("The {} {} {} the {} {} {}. ", a1, n1, VerbForm(v, 2), a2, Plural(n2), adv); break;
    case 1:
      *out += fmt::format("{} {} are {} {} the {} {}. ", Capitalized(std::string(a1)), Plural(n1), VerbForm(v, 3), prep,
                          a2, n2);
      break;
    case 2:
      *out += fmt::format("Why does the {} {} every {}? Because it is {} and {}. ", n1, VerbForm(v, 1), n2, a1, a2);
      break;
    case 3:
      *out += fmt::format("{} {} the {} before you {} the {}. ", Capitalized(std::string(v)), Plural(n1), a1,
                          PickOf(r, kLexVerbs), n2);
      break;
    case 4:
      // Identifiers as programs name them.
      *out += fmt::format("{}{} {}_{}_{} {}{}{} ", Capitalized(std::string(v)), Capitalized(std::string(n1)), v, n1, n2,
                          v, Capitalized(std::string(a1)), Capitalized(Plural(n2)));
      break;
    default:
      *out += fmt::format("{} {}, the {} had {} {} {}. ", Capitalized(std::string(prep)), Plural(n1), n2,
                          VerbForm(v, 2), adv, prep == "in" ? "again" : "there");
      break;
  }
  if (r.Below(6) == 0) *out += "\n";
}

// Invented proper names (people, places, ships) built from syllables, as
// stories and logs are full of them; each is reused several times so the
// vocabulary learns its pieces.
std::vector<std::string> MakeNames(SplitMix64& r, int n) {
  static constexpr std::string_view kOnsets[] = {"b", "d", "f", "g",  "k",  "l",  "m",  "n",  "p",  "r",  "s",
                                                 "t", "v", "z", "br", "dr", "kr", "st", "tr", "sh", "ch", "th"};
  static constexpr std::string_view kVowels[] = {"a", "e", "i", "o", "u", "ai", "ei", "ou", "ia", "ea"};
  static constexpr std::string_view kCodas[] = {"", "", "", "n", "r", "l", "s", "m", "th", "nd", "rk", "x"};
  std::vector<std::string> names;
  names.reserve(n);
  for (int i = 0; i < n; ++i) {
    std::string w;
    const int syllables = 2 + static_cast<int>(r.Below(2));
    for (int k = 0; k < syllables; ++k) {
      w += PickOf(r, kOnsets);
      w += PickOf(r, kVowels);
      if (k + 1 == syllables || r.Below(3) == 0) w += PickOf(r, kCodas);
    }
    names.push_back(Capitalized(std::move(w)));
  }
  return names;
}

void NameSentence(SplitMix64& r, const std::vector<std::string>& names, std::string* out) {
  auto pick = [&]() -> const std::string& { return names[r.Below(static_cast<uint32_t>(names.size()))]; };
  switch (r.Below(4)) {
    case 0:
      *out += fmt::format("{} sailed from {} to {} on the {}. ", pick(), pick(), pick(), PickOf(r, kLexNouns));
      break;
    case 1:
      *out += fmt::format("In {}, {} met {} at the {} {}. ", pick(), pick(), pick(), PickOf(r, kLexAdjs),
                          PickOf(r, kLexNouns));
      break;
    case 2: *out += fmt::format("The {} of {} is older than {}. ", PickOf(r, kLexNouns), pick(), pick()); break;
    default:
      *out += fmt::format("{} {} the {} near {}. ", pick(), VerbForm(PickOf(r, kLexVerbs), 2), PickOf(r, kLexNouns),
                          pick());
      break;
  }
  if (r.Below(5) == 0) *out += "\n";
}

void WordProblem(SplitMix64& r, std::string* out) {
  const auto name = Pick(r, kNames);
  const auto item = Pick(r, kItems);
  const int a = 3 + static_cast<int>(r.Below(90));
  const int b = 2 + static_cast<int>(r.Below(40));
  const int c = 2 + static_cast<int>(r.Below(9));
  switch (r.Below(4)) {
    case 0:
      *out += fmt::format(
          "Question: {} has {} {} and buys {} more. How many {} does {} have now?\n"
          "Answer: {} + {} = {}. {} has {} {}.\n\n",
          name, a, item, b, item, name, a, b, a + b, name, a + b, item);
      break;
    case 1:
      *out += fmt::format(
          "Question: A shop packs {} {} into each crate. How many {} fit in {} crates?\n"
          "Answer: {} x {} = {}. The crates hold {} {}.\n\n",
          c, item, item, b, c, b, c * b, c * b, item);
      break;
    case 2: {
      const int total = a + b;
      *out += fmt::format(
          "Question: {} had {} {} and gave {} of them to a friend in {}. How many are left?\n"
          "Answer: {} - {} = {}. There are {} {} left.\n\n",
          name, total, item, b, Pick(r, kCities), total, b, a, a, item);
      break;
    }
    default: {
      const int per = c * b;
      *out += fmt::format(
          "Question: {} {} are shared equally among {} people. How many does each person get?\n"
          "Answer: {} / {} = {}. Each person gets {} {}.\n\n",
          per, item, c, per, c, b, b, item);
      break;
    }
  }
}

void ToolDialogue(SplitMix64& r, std::string* out) {
  const auto city = Pick(r, kCities);
  const auto file = Pick(r, kFiles);
  const int x = 10 + static_cast<int>(r.Below(900));
  const int y = 2 + static_cast<int>(r.Below(50));
  switch (r.Below(3)) {
    case 0:
      *out += fmt::format(
          "user: What is the weather in {} right now?\n"
          "assistant: I will look it up.\n"
          "tool_call: {{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{}\", \"unit\": \"celsius\"}}}}\n"
          "tool: {{\"temperature\": {}, \"condition\": \"{}\"}}\n"
          "assistant: It is {} degrees and {} in {}.\n\n",
          city, city, y, y % 2 ? "cloudy" : "clear", y, y % 2 ? "cloudy" : "clear", city);
      break;
    case 1:
      *out += fmt::format(
          "user: Please show me the first lines of {}.\n"
          "assistant: Reading the file.\n"
          "tool_call: {{\"name\": \"read_file\", \"arguments\": {{\"path\": \"{}\", \"max_lines\": {}}}}}\n"
          "tool: {{\"ok\": true, \"lines\": {}}}\n"
          "assistant: The file {} has {} lines; here are the first {}.\n\n",
          file, file, y, x, file, x, y);
      break;
    default:
      *out += fmt::format(
          "user: What is {} times {}?\n"
          "assistant: Let me use the calculator.\n"
          "tool_call: {{\"name\": \"calculator\", \"arguments\": {{\"expression\": \"{} * {}\"}}}}\n"
          "tool: {{\"result\": {}}}\n"
          "assistant: {} times {} is {}.\n\n",
          x, y, x, y, x * y, x, y, x * y);
      break;
  }
}

void CodeSnippet(SplitMix64& r, std::string* out) {
  const auto verb = Pick(r, kVerbs);
  const auto noun = Pick(r, kNouns);
  const int n = 1 + static_cast<int>(r.Below(64));
  switch (r.Below(6)) {
    case 0:
      *out += fmt::format(
          "// C++\nint {}_{}(const std::vector<int>& xs) {{\n  int total = 0;\n"
          "  for (int x : xs) {{\n    if (x > {}) total += x;\n  }}\n  return total;\n}}\n\n",
          verb, noun, n);
      break;
    case 1:
      *out += fmt::format(
          "# Python\ndef {}_{}(items, limit={}):\n    result = []\n    for item in items:\n"
          "        if len(result) >= limit:\n            break\n        result.append(item)\n"
          "    return result\n\n",
          verb, noun, n);
      break;
    case 2:
      *out += fmt::format(
          "// JavaScript\nfunction {}{}(list) {{\n  return list.filter((x) => x.size < {}).map((x) => x.id);\n}}\n\n",
          verb, noun, n);
      break;
    case 3:
      *out += fmt::format(
          "// Rust\nfn {}_{}(v: &[u32]) -> u32 {{\n    v.iter().copied().filter(|x| *x % {} == 0).sum()\n}}\n\n", verb,
          noun, n + 1);
      break;
    case 4:
      *out += fmt::format(
          "// Go\nfunc {}{}(xs []int) int {{\n\tcount := 0\n\tfor _, x := range xs {{\n"
          "\t\tif x == {} {{\n\t\t\tcount++\n\t\t}}\n\t}}\n\treturn count\n}}\n\n",
          verb, noun, n);
      break;
    default:
      *out += fmt::format("-- SQL\nSELECT id, name FROM {} WHERE size > {} ORDER BY id LIMIT {};\n\n", noun, n, n * 10);
      break;
  }
}

void JsonObject(SplitMix64& r, std::string* out) {
  const int id = static_cast<int>(r.Below(100000));
  *out += fmt::format(
      "{{\"id\": {}, \"user\": \"{}\", \"city\": \"{}\", \"active\": {}, \"score\": {}.{}, "
      "\"tags\": [\"{}\", \"{}\"], \"count\": {}}}\n",
      id, Pick(r, kNames), Pick(r, kCities), r.Below(2) ? "true" : "false", r.Below(100), r.Below(10), Pick(r, kNouns),
      Pick(r, kVerbs), r.Below(1000));
}

std::string BuildCorpus() {
  std::string out;
  out.reserve(620 << 10);
  for (auto p : kProse) out += p, out += "\n";
  SplitMix64 r(0x70726F7367726F77ull);  // "prosgrow"
  const std::vector<std::string> names = MakeNames(r, 5000);
  while (out.size() < (600u << 10)) {
    switch (r.Below(14)) {
      case 8:
      case 9:
      case 10:
      case 11:
      case 12:
      case 13: NameSentence(r, names, &out); break;
      case 5:
      case 6:
      case 7: LexiconSentence(r, &out); break;
      case 0: WordProblem(r, &out); break;
      case 1: ToolDialogue(r, &out); break;
      case 2: CodeSnippet(r, &out); break;
      case 3: JsonObject(r, &out); break;
      default: out += kProse[r.Below(std::size(kProse))], out += "\n"; break;
    }
  }
  return out;
}

}  // namespace

const std::string& SynthCorpusText() {
  static const std::string kText = BuildCorpus();
  return kText;
}

}  // namespace pg
