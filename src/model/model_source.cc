#include "model/model_source.h"

#include <filesystem>

#include "model/hf_model_source.h"
#include "tokenizer/tokenizer.h"

namespace pg {

Result<std::unique_ptr<Tokenizer>> GgufModelSource::LoadTokenizer() const { return Tokenizer::FromGguf(*file_); }

bool IsHfModelDir(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

std::string ServedModelName(const std::string& path) {
  const std::filesystem::path p = std::filesystem::path(path).lexically_normal();
  const std::filesystem::path named = p.has_filename() ? p : p.parent_path();
  return (IsHfModelDir(path) ? named.filename() : named.stem()).string();
}

Result<std::shared_ptr<const ModelSource>> OpenModelSource(const std::string& path) {
  if (IsHfModelDir(path)) {
    PG_ASSIGN_OR_RETURN(std::unique_ptr<HfModelSource> hf, HfModelSource::Open(path));
    return std::shared_ptr<const ModelSource>(std::move(hf));
  }
  PG_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::Open(path));
  return std::shared_ptr<const ModelSource>(
      std::make_shared<GgufModelSource>(std::shared_ptr<const GgufFile>(std::move(file))));
}

}  // namespace pg
