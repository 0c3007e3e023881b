// HfPipeline's decoding half: Hugging Face's decoders over token texts.
#include "tokenizer/hf_pipeline.h"
#include "tokenizer/unicode.h"

namespace pg {
namespace {

// <0xNN> -> NN, or -1.
int ByteTokenValue(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  int v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = t[i];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// ByteLevel: every token's characters back to bytes; a token with a
// character outside the byte map stays as its UTF-8 text. One token out.
std::vector<std::string> DecodeByteLevel(const std::vector<std::string>& tokens) {
  std::string out;
  std::string bytes;
  for (const std::string& t : tokens) {
    bytes.clear();
    bool mapped = true;
    for (uint32_t cp : DecodeUtf8(t)) {
      const int b = UnicodeToByte(cp);
      if (b < 0) {
        mapped = false;
        break;
      }
      bytes.push_back(static_cast<char>(b));
    }
    out += mapped ? bytes : t;
  }
  return {out};
}

// ByteFallback: runs of <0xNN> tokens become their bytes when those form
// valid UTF-8, else one U+FFFD per byte (raw bytes when streaming).
std::vector<std::string> DecodeByteFallback(const std::vector<std::string>& tokens, bool streaming) {
  std::vector<std::string> out;
  std::string run;
  size_t run_len = 0;
  auto flush = [&] {
    if (run_len == 0) return;
    if (streaming || ToValidUtf8(run) == run) {
      out.push_back(run);
    } else {
      for (size_t i = 0; i < run_len; ++i) out.emplace_back("\xEF\xBF\xBD");
    }
    run.clear();
    run_len = 0;
  };
  for (const std::string& t : tokens) {
    const int b = ByteTokenValue(t);
    if (b >= 0) {
      run.push_back(static_cast<char>(b));
      ++run_len;
      continue;
    }
    flush();
    out.push_back(t);
  }
  flush();
  return out;
}

// Strip: up to `start` leading and `stop` trailing copies of content from each token.
void StripTokens(std::vector<std::string>* tokens, const std::string& content, int start, int stop) {
  for (std::string& t : *tokens) {
    for (int i = 0; i < start && !content.empty() && t.compare(0, content.size(), content) == 0; ++i) {
      t.erase(0, content.size());
    }
    for (int i = 0; i < stop && !content.empty() && t.size() >= content.size() &&
                    t.compare(t.size() - content.size(), content.size(), content) == 0;
         ++i) {
      t.erase(t.size() - content.size());
    }
  }
}

}  // namespace

std::string HfPipeline::Decode(std::vector<std::string> tokens, bool streaming) const {
  for (const HfDecoder& d : decoders) {
    switch (d.kind) {
      case HfDecoder::Kind::kByteLevel: tokens = DecodeByteLevel(tokens); break;
      case HfDecoder::Kind::kReplace:
        for (std::string& t : tokens) ReplaceAll(&t, d.pattern, d.content);
        break;
      case HfDecoder::Kind::kByteFallback: tokens = DecodeByteFallback(tokens, streaming); break;
      case HfDecoder::Kind::kFuse: {
        std::string all;
        for (const std::string& t : tokens) all += t;
        tokens = {all};
        break;
      }
      case HfDecoder::Kind::kStrip:
        if (!streaming) StripTokens(&tokens, d.content, d.start, d.stop);
        break;
      case HfDecoder::Kind::kMetaspace:
        for (size_t i = 0; i < tokens.size(); ++i) {
          ReplaceAll(&tokens[i], d.content, " ");
          if (i == 0 && d.prepend && !streaming && !tokens[i].empty() && tokens[i][0] == ' ') tokens[i].erase(0, 1);
        }
        break;
    }
  }
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
}

}  // namespace pg
