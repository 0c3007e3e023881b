#include "tokenizer/hf_components.h"

namespace pg {
namespace {

using json = nlohmann::json;

std::string TypeOf(const json& j) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return "";
  return j["type"].get<std::string>();
}

Status Refuse(const char* section, const std::string& type) {
  if (type.empty()) return InvalidArgument(std::string(section) + " has no string 'type'");
  return Unimplemented(std::string(section) + " type '" + type + "' is not supported");
}

// A {"type": "Sequence", list: [...]} of a section's components: parse(item,
// out) for each item in order.
template <typename Out>
Status ParseSequence(const json& j, const char* section, const char* list, Status (*parse)(const json&, Out*),
                     Out* out) {
  if (!j.contains(list) || !j[list].is_array()) {
    return InvalidArgument(std::string(section) + " Sequence has no '" + list + "' array");
  }
  for (const json& item : j[list]) PG_RETURN_IF_ERROR(parse(item, out));
  return Status::Ok();
}

// A {"String": s} or {"Regex": r} pattern.
Status ParsePattern(const json& j, const char* section, std::string* literal, std::shared_ptr<const HfRegex>* regex) {
  if (j.is_object() && j.contains("String") && j["String"].is_string()) {
    *literal = j["String"].get<std::string>();
    return Status::Ok();
  }
  if (j.is_object() && j.contains("Regex") && j["Regex"].is_string()) {
    auto re = HfRegex::Compile(j["Regex"].get<std::string>());
    if (!re.ok()) return Status(re.status().code(), std::string(section) + ".pattern: " + re.status().message());
    *regex = *re;
    return Status::Ok();
  }
  return InvalidArgument(std::string(section) + ".pattern is neither {\"String\": ...} nor {\"Regex\": ...}");
}

bool BoolOr(const json& j, const char* key, bool def) {
  return j.contains(key) && j[key].is_boolean() ? j[key].get<bool>() : def;
}
std::string StringOr(const json& j, const char* key, const std::string& def) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : def;
}

// Metaspace's prepend_scheme, or the older add_prefix_space flag.
Result<HfPreTokenizer::Prepend> PrependScheme(const json& j, const char* section) {
  if (j.contains("prepend_scheme") && j["prepend_scheme"].is_string()) {
    const std::string s = j["prepend_scheme"].get<std::string>();
    if (s == "always") return HfPreTokenizer::Prepend::kAlways;
    if (s == "first") return HfPreTokenizer::Prepend::kFirst;
    if (s == "never") return HfPreTokenizer::Prepend::kNever;
    return Unimplemented(std::string(section) + " prepend_scheme '" + s + "' is not supported");
  }
  return BoolOr(j, "add_prefix_space", true) ? HfPreTokenizer::Prepend::kAlways : HfPreTokenizer::Prepend::kNever;
}

Result<HfPreTokenizer::Behavior> ParseBehavior(const json& j) {
  using B = HfPreTokenizer::Behavior;
  const std::string b = StringOr(j, "behavior", "");
  if (b == "Removed") return B::kRemoved;
  if (b == "Isolated") return B::kIsolated;
  if (b == "MergedWithPrevious") return B::kMergedWithPrevious;
  if (b == "MergedWithNext") return B::kMergedWithNext;
  if (b == "Contiguous") return B::kContiguous;
  return Unimplemented("pre_tokenizer Split behavior '" + b + "' is not supported");
}

// GPT-2's regex, what ByteLevel's use_regex splits with.
constexpr const char* kGpt2Regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

}  // namespace

Status ParseNormalizer(const json& j, std::vector<HfNormalizer>* out) {
  if (j.is_null()) return Status::Ok();
  const std::string type = TypeOf(j);
  using K = HfNormalizer::Kind;
  if (type == "Sequence") return ParseSequence(j, "normalizer", "normalizers", ParseNormalizer, out);
  HfNormalizer n{};
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    n.kind = type == "NFC" ? K::kNfc : type == "NFD" ? K::kNfd : type == "NFKC" ? K::kNfkc : K::kNfkd;
  } else if (type == "Replace") {
    n.kind = K::kReplace;
    PG_RETURN_IF_ERROR(ParsePattern(Field(j, "pattern"), "normalizer Replace", &n.pattern, &n.regex));
    n.content = StringOr(j, "content", "");
  } else if (type == "Prepend") {
    n.kind = K::kPrepend;
    n.content = StringOr(j, "prepend", "");
  } else {
    return Refuse("normalizer", type);
  }
  out->push_back(std::move(n));
  return Status::Ok();
}

Status ParsePreTokenizer(const json& j, std::vector<HfPreTokenizer>* out) {
  if (j.is_null()) return Status::Ok();
  const std::string type = TypeOf(j);
  using K = HfPreTokenizer::Kind;
  if (!out->empty() && out->back().kind == K::kByteLevel) {
    return Unimplemented("pre_tokenizer '" + type + "' after ByteLevel is not supported (ByteLevel must come last)");
  }
  if (type == "Sequence") return ParseSequence(j, "pre_tokenizer", "pretokenizers", ParsePreTokenizer, out);
  HfPreTokenizer p{};
  if (type == "Split") {
    p.kind = K::kSplit;
    PG_RETURN_IF_ERROR(ParsePattern(Field(j, "pattern"), "pre_tokenizer Split", &p.literal, &p.regex));
    PG_ASSIGN_OR_RETURN(p.behavior, ParseBehavior(j));
    p.invert = BoolOr(j, "invert", false);
  } else if (type == "Digits") {
    p.kind = K::kSplit;
    auto re = HfRegex::Compile(BoolOr(j, "individual_digits", false) ? "\\p{N}" : "\\p{N}+");
    if (!re.ok()) return re.status();
    p.regex = *re;
    p.behavior = HfPreTokenizer::Behavior::kIsolated;
  } else if (type == "ByteLevel") {
    p.kind = K::kByteLevel;
    p.add_prefix_space = BoolOr(j, "add_prefix_space", true);
    if (BoolOr(j, "use_regex", true)) {
      auto re = HfRegex::Compile(kGpt2Regex);
      if (!re.ok()) return re.status();
      p.gpt2_regex = *re;
    }
  } else if (type == "Metaspace") {
    p.kind = K::kMetaspace;
    p.replacement = StringOr(j, "replacement", "\xE2\x96\x81");
    PG_ASSIGN_OR_RETURN(p.prepend, PrependScheme(j, "pre_tokenizer Metaspace"));
    p.split = BoolOr(j, "split", true);
  } else {
    return Refuse("pre_tokenizer", type);
  }
  out->push_back(std::move(p));
  return Status::Ok();
}

Status ParseDecoder(const json& j, std::vector<HfDecoder>* out) {
  if (j.is_null()) return Status::Ok();
  const std::string type = TypeOf(j);
  using K = HfDecoder::Kind;
  if (type == "Sequence") return ParseSequence(j, "decoder", "decoders", ParseDecoder, out);
  HfDecoder d{};
  if (type == "ByteLevel") {
    d.kind = K::kByteLevel;
  } else if (type == "ByteFallback") {
    d.kind = K::kByteFallback;
  } else if (type == "Fuse") {
    d.kind = K::kFuse;
  } else if (type == "Replace") {
    d.kind = K::kReplace;
    std::shared_ptr<const HfRegex> regex;
    PG_RETURN_IF_ERROR(ParsePattern(Field(j, "pattern"), "decoder Replace", &d.pattern, &regex));
    if (regex != nullptr) return Unimplemented("decoder Replace with a Regex pattern is not supported");
    d.content = StringOr(j, "content", "");
  } else if (type == "Strip") {
    d.kind = K::kStrip;
    d.content = StringOr(j, "content", " ");
    d.start = j.value("start", 0);
    d.stop = j.value("stop", 0);
  } else if (type == "Metaspace") {
    d.kind = K::kMetaspace;
    d.content = StringOr(j, "replacement", "\xE2\x96\x81");
    PG_ASSIGN_OR_RETURN(HfPreTokenizer::Prepend scheme, PrependScheme(j, "decoder Metaspace"));
    d.prepend = scheme != HfPreTokenizer::Prepend::kNever;
  } else {
    return Refuse("decoder", type);
  }
  out->push_back(std::move(d));
  return Status::Ok();
}

Status ParsePostProcessor(const json& j, HfPostProcess* out) {
  if (j.is_null()) return Status::Ok();
  const std::string type = TypeOf(j);
  if (type == "ByteLevel") return Status::Ok();  // offsets only
  if (type == "Sequence") return ParseSequence(j, "post_processor", "processors", ParsePostProcessor, out);
  if (type != "TemplateProcessing") return Refuse("post_processor", type);
  if (!j.contains("single") || !j["single"].is_array()) {
    return InvalidArgument("post_processor TemplateProcessing has no 'single' array");
  }
  bool seen_a = false;
  for (const json& item : j["single"]) {
    if (item.contains("Sequence")) {
      if (seen_a) return Unimplemented("post_processor TemplateProcessing with two sequences in 'single'");
      seen_a = true;
      continue;
    }
    if (!item.contains("SpecialToken") || !item["SpecialToken"].contains("id")) {
      return InvalidArgument(
          "post_processor TemplateProcessing: an item of 'single' is neither Sequence nor SpecialToken");
    }
    const std::string name = item["SpecialToken"]["id"].get<std::string>();
    const json& specials = Field(j, "special_tokens");
    if (!specials.contains(name) || !specials[name].contains("ids") || specials[name]["ids"].size() != 1) {
      return Unimplemented("post_processor TemplateProcessing: special token '" + name +
                           "' is not one id in special_tokens");
    }
    const int32_t id = specials[name]["ids"][0].get<int32_t>();
    std::optional<int32_t>& slot = seen_a ? out->eos_id : out->bos_id;
    if (slot.has_value()) {
      return Unimplemented("post_processor TemplateProcessing with more than one special token on one side");
    }
    slot = id;
  }
  return Status::Ok();
}

}  // namespace pg
