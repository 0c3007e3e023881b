#include "synth/make_model.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "backend/cpu/quant.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "synth/splitmix64.h"
#include "synth/synth_vocab.h"
#include "synth/weight_generator.h"

namespace pg {
namespace {

Result<SynthVocab> LoadVocab(const std::string& path) {
  if (path == "builtin") return BuiltinVocab();
  if (path.empty()) return InvalidArgument("make-model: no vocab file given (use a GGUF path or 'builtin')");
  return LoadVocabFromGguf(path);
}

// Default-model file name; bump the version when its content changes.
constexpr const char* kDefaultModelFile = "default-60m-qwen2-q8_0-v1.gguf";

}  // namespace

Result<ModelPlan> PlanModelFor(const MakeModelOptions& opt) {
  PG_ASSIGN_OR_RETURN(SynthVocab vocab, LoadVocab(opt.vocab_path));
  return PlanModel(opt.shape, opt.arch, opt.type, vocab.n_tokens);
}

namespace {

// tokenizer.chat_template := the text of `path`.
Status ReplaceChatTemplate(const std::string& path, SynthVocab* vocab) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("make-model: cannot read the chat template " + path);
  std::ostringstream text;
  text << in.rdbuf();
  GgufValue value;
  value.type = GgufValueType::STRING;
  value.v = text.str();
  for (auto& [key, v] : vocab->keys) {
    if (key == "tokenizer.chat_template") {
      v = std::move(value);
      return Status::Ok();
    }
  }
  vocab->keys.emplace_back("tokenizer.chat_template", std::move(value));
  return Status::Ok();
}

}  // namespace

Status MakeModel(const MakeModelOptions& opt) {
  if (opt.out_path.empty()) return InvalidArgument("make-model: no output path given");
  // Validate the cheap options before reading or training a vocabulary.
  PG_RETURN_IF_ERROR(FindModelShape(opt.shape).status());
  PG_RETURN_IF_ERROR(PlanModel(opt.shape, opt.arch, opt.type, 1).status());
  PG_ASSIGN_OR_RETURN(SynthVocab vocab, LoadVocab(opt.vocab_path));
  PG_ASSIGN_OR_RETURN(ModelPlan plan, PlanModel(opt.shape, opt.arch, opt.type, vocab.n_tokens));
  if (!opt.chat_template_path.empty()) PG_RETURN_IF_ERROR(ReplaceChatTemplate(opt.chat_template_path, &vocab));

  GgufWriter w;
  AddModelMetadata(plan, "prosgrow-synth-" + opt.shape + "-" + opt.arch, &w);
  for (const auto& [key, value] : vocab.keys) PG_RETURN_IF_ERROR(w.SetValue(key, value));

  for (const PlannedTensor& t : plan.tensors) {
    const uint64_t key = HashName(t.name, opt.seed);
    const int64_t ne0 = t.dims[0];
    const size_t row_bytes = RowBytes(t.type, ne0);
    PG_RETURN_IF_ERROR(w.AddTensor(t.name, t.type, t.dims,
                                   [t, key, ne0, row_bytes](int64_t r0, int64_t n_rows, uint8_t* dst) -> Status {
                                     std::vector<float> row(static_cast<size_t>(ne0));
                                     for (int64_t r = 0; r < n_rows; ++r) {
                                       GenerateWeights(key, (r0 + r) * ne0, ne0, t.mean, t.std, row.data());
                                       PG_RETURN_IF_ERROR(QuantizeRow(t.type, row.data(), dst + r * row_bytes, ne0));
                                     }
                                     return Status::Ok();
                                   }));
  }
  ThreadPool pool(opt.n_threads);
  PG_LOG_INFO("make-model: writing {} ({} {} {}, {:.1f}M parameters, vocab {}, {:.1f} MB)", opt.out_path, opt.shape,
              opt.arch, TypeName(opt.type), plan.n_params() / 1e6, plan.vocab_size, w.FileSize() / 1e6);
  return w.Write(opt.out_path, &pool);
}

MakeModelOptions DefaultModelOptions() {
  MakeModelOptions o;
  o.shape = "60m";
  o.vocab_path = "builtin";
  o.type = GgmlType::Q8_0;
  o.arch = "qwen2";
  o.seed = 0;
  return o;
}

std::string DefaultCacheDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return std::string(x) + "/prosgrow";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return std::string(h) + "/.cache/prosgrow";
  return ".cache/prosgrow";
}

Result<std::string> EnsureDefaultModel(const std::string& cache_dir) {
  const std::string dir = cache_dir.empty() ? DefaultCacheDir() : cache_dir;
  const std::string path = dir + "/" + kDefaultModelFile;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    if (GgufFile::Open(path).ok()) return path;
    PG_LOG_WARN("default model {} is unreadable; generating it again", path);
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create cache directory: " + ec.message());
  MakeModelOptions o = DefaultModelOptions();
  o.out_path = path;  // written to a temp file, then renamed: racing creators are safe
  PG_RETURN_IF_ERROR(MakeModel(o));
  return path;
}

}  // namespace pg
