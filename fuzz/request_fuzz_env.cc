#include "request_fuzz_env.h"

#include <cstdio>
#include <cstdlib>

#include "chat/chat_template.h"

namespace pg {
namespace {

// Special tokens of the families whose templates are compiled in (ChatML /
// Qwen, Llama 3, GLM), so rendered prompts split into them as they would with
// the real vocabularies.
const std::vector<std::string> kSpecials = {
    "<|endoftext|>",     "<|im_start|>",      "<|im_end|>",
    "<tool_call>",       "</tool_call>",      "<think>",
    "</think>",          "<|begin_of_text|>", "<|start_header_id|>",
    "<|end_header_id|>", "<|eot_id|>",        "<|eom_id|>",
    "<|python_tag|>",    "[gMASK]",           "<sop>",
    "<|system|>",        "<|user|>",          "<|assistant|>",
    "<|observation|>",
};

// Text the BPE vocabulary is trained on: every template (so its literal text
// merges into a few tokens) plus some prose and JSON.
std::string TrainingText() {
  std::string text = DefaultChatTemplate();
  for (const EmbeddedTemplate& t : EmbeddedTemplates()) text += t.source;
  text +=
      "You are a helpful assistant. What is the weather in Paris today? It is sunny, 21 degrees. "
      "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}} "
      "The quick brown fox jumps over the lazy dog 1234567890 times. Hello, world! ";
  return text;
}

[[noreturn]] void Die(const std::string& what, const Status& st) {
  std::fprintf(stderr, "request_path_fuzz setup: %s: %s\n", what.c_str(), st.message().c_str());
  std::abort();
}

template <typename T>
T TakeOrDie(Result<T> r, const std::string& what) {
  if (!r.ok()) Die(what, r.status());
  return std::move(*r);
}

int32_t IdOf(const VocabData& v, const std::string& text) {
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    if (v.tokens[i] == text) return static_cast<int32_t>(i);
  }
  std::fprintf(stderr, "request_path_fuzz setup: no token %s\n", text.c_str());
  std::abort();
}

// One trained byte-level vocabulary, loaded under several pre-tokenizers.
void BuildBpe(RequestFuzzEnv* env) {
  BpeTrainResult trained = TakeOrDie(TrainByteLevelBpe(TrainingText(), 1024, kSpecials), "train BPE");
  VocabData v = ToVocabData(trained);
  // <think> / </think> are user-defined in Qwen3: split out even without parse_special.
  v.token_types[IdOf(v, "<think>")] = static_cast<int32_t>(TokenType::kUserDefined);
  v.token_types[IdOf(v, "</think>")] = static_cast<int32_t>(TokenType::kUserDefined);
  v.eos_id = IdOf(v, "<|im_end|>");
  v.pad_id = IdOf(v, "<|endoftext|>");
  for (const char* pre : {"qwen2", "llama-bpe", "gpt-2", "deepseek-llm", "falcon"}) {
    VocabData p = v;
    p.pre = pre;
    if (p.pre == "llama-bpe") {
      p.bos_id = IdOf(v, "<|begin_of_text|>");
      p.eos_id = IdOf(v, "<|eot_id|>");
      p.add_bos = true;  // as Llama 3 does
    }
    env->bpe.push_back(TakeOrDie(Tokenizer::FromVocab(p), std::string("BPE tokenizer ") + pre));
  }
}

// A small SentencePiece vocabulary: <unk> <s> </s>, the 256 byte tokens
// (fallback), and a few scored pieces.
void BuildSpm(RequestFuzzEnv* env) {
  VocabData v;
  v.model = "llama";
  v.pre = "default";
  auto add = [&](std::string text, float score, TokenType type) {
    v.tokens.push_back(std::move(text));
    v.scores.push_back(score);
    v.token_types.push_back(static_cast<int32_t>(type));
  };
  add("<unk>", 0, TokenType::kUnknown);
  add("<s>", 0, TokenType::kControl);
  add("</s>", 0, TokenType::kControl);
  static const char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) add(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", 0, TokenType::kByte);
  add("[INST]", 0, TokenType::kControl);
  add("[/INST]", 0, TokenType::kControl);
  add("<|user|>", 0, TokenType::kUserDefined);
  const std::string sp = "\xE2\x96\x81";  // U+2581, SentencePiece's space
  const std::string pieces[] = {sp,        "e", "t",      "a",        "o",      "n",       "s",        "r",
                                "h",       "l", sp + "t", sp + "the", sp + "a", "in",      "er",       sp + "w",
                                sp + "is", "{", "}",      "\"",       ":",      sp + "\"", "\xC3\xA9", "\xE4\xB8\xAD"};
  float score = -1;
  for (const std::string& p : pieces) add(p, score--, TokenType::kNormal);
  env->spm = TakeOrDie(Tokenizer::FromVocab(v), "SPM tokenizer");
}

void AddPrompt(RequestFuzzEnv* env, std::string name, std::string source, const Tokenizer* tok) {
  ServiceInfo info;
  info.model_name = "fuzz";
  info.n_vocab = env->n_vocab;
  info.n_ctx = env->n_ctx;
  info.chat_template = std::move(source);
  if (tok->bos_id() >= 0) info.bos_token = tok->TokenText(tok->bos_id());
  if (tok->eos_id() >= 0) info.eos_token = tok->TokenText(tok->eos_id());
  std::unique_ptr<ChatPrompt> prompt = TakeOrDie(ChatPrompt::Create(info), "template " + name);
  env->prompts.push_back(FuzzChatPrompt{std::move(name), std::move(prompt), tok});
}

RequestFuzzEnv* Build() {
  auto* env = new RequestFuzzEnv();
  BuildBpe(env);
  BuildSpm(env);
  env->n_vocab = env->bpe[0]->n_vocab();
  AddPrompt(env, "default", "", env->bpe[0].get());  // "" = the built-in default
  for (const EmbeddedTemplate& t : EmbeddedTemplates()) {
    std::string name = t.name;
    const bool llama = name.find("Llama-3") != std::string::npos;
    AddPrompt(env, name, t.source, env->bpe[llama ? 1 : 0].get());
  }
  return env;
}

}  // namespace

const RequestFuzzEnv& GetRequestFuzzEnv() {
  static const RequestFuzzEnv* env = Build();  // never freed: lives for the process
  return *env;
}

}  // namespace pg
