#include "hf/hf_dir.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/bounded_json.h"
#include "hf/error_text.h"

namespace pg {
namespace {

constexpr int kMaxConfigDepth = 16;
namespace fs = std::filesystem;

bool Exists(const std::string& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// A shard named by the index must be a plain file name in the directory.
bool PlainFileName(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos && s.find('\0') == std::string::npos;
}

// tokenizer_config.json's bos_token / eos_token: a string or {"content": s}.
std::string TokenText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return "";
}

}  // namespace

Result<nlohmann::json> ReadJsonFile(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open");
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return IoError(path + ": " + ec.message());
  if (size > max_bytes) return Corrupt(path + ": larger than " + std::to_string(max_bytes) + " bytes");
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  nlohmann::json j;
  JsonParseError e = ParseBoundedJson(text, kMaxConfigDepth, &j);
  if (e.kind != JsonParseError::Kind::kNone) return Corrupt(path + ": not valid JSON: " + e.message);
  if (!j.is_object()) return Corrupt(path + ": not a JSON object");
  return j;
}

Result<std::unique_ptr<HfDir>> HfDir::Open(const std::string& dir) {
  std::unique_ptr<HfDir> d(new HfDir());
  d->dir_ = dir;
  while (d->dir_.size() > 1 && d->dir_.back() == '/') d->dir_.pop_back();
  const std::string config = d->dir_ + "/config.json";
  if (!Exists(config)) return NotFound(config + ": missing (not a Hugging Face model directory)");
  PG_ASSIGN_OR_RETURN(d->config_, ReadJsonFile(config));
  PG_RETURN_IF_ERROR(d->OpenShards());
  PG_RETURN_IF_ERROR(d->ReadGenerationConfig());
  PG_RETURN_IF_ERROR(d->ReadTokenizerConfig());
  return d;
}

Status HfDir::AddShard(const std::string& file) {
  const std::string path = dir_ + "/" + file;
  if (!Exists(path)) return NotFound(path + ": missing shard");
  PG_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> s, SafetensorsFile::Open(path));
  for (const SafeTensor& t : s->tensors()) {
    if (tensors_.count(t.name))
      return Corrupt(path + ": tensor " + QuotedText(t.name) + " is also in " + shards_[shard_of_[t.name]]->path());
    tensors_[t.name] = &t;
    shard_of_[t.name] = shards_.size();
  }
  shards_.push_back(std::move(s));
  return Status::Ok();
}

Status HfDir::OpenShards() {
  const std::string index = dir_ + "/model.safetensors.index.json";
  if (!Exists(index)) {
    if (!Exists(dir_ + "/model.safetensors"))
      return NotFound(dir_ + "/model.safetensors: missing (and no model.safetensors.index.json)");
    return AddShard("model.safetensors");
  }
  PG_ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(index));
  auto wm = j.find("weight_map");
  if (wm == j.end() || !wm->is_object() || wm->empty())
    return Corrupt(index + ": weight_map missing or not an object of tensor -> shard");
  std::set<std::string> files;
  for (const auto& [name, file] : wm->items()) {
    if (!file.is_string() || !PlainFileName(file.get<std::string>()))
      return Corrupt(index + ": weight_map " + QuotedText(name) + " is not a file name in the directory");
    files.insert(file.get<std::string>());
  }
  for (const std::string& f : files) PG_RETURN_IF_ERROR(AddShard(f));
  for (const auto& [name, file] : wm->items()) {
    auto it = shard_of_.find(name);
    if (it == shard_of_.end())
      return Corrupt(index + ": weight_map " + QuotedText(name) + " names " + file.get<std::string>() +
                     ", which lacks it");
  }
  return Status::Ok();
}

namespace {

// generation_config.json's float sampling fields, in the ranges a request's
// must be in (server/request_fields.cc).
Status ReadSamplingFields(const nlohmann::json& j, const std::string& path, HfGenerationConfig* g) {
  struct Field {
    const char* name;
    std::optional<double>* slot;
    double lo, hi;
    bool lo_open;
    const char* range;
  };
  for (const Field& f :
       {Field{"temperature", &g->temperature, 0, 100, false, "[0, 100]"},
        Field{"top_p", &g->top_p, 0, 1, true, "(0, 1]"}, Field{"min_p", &g->min_p, 0, 1, false, "[0, 1]"},
        Field{"repetition_penalty", &g->repetition_penalty, 0, 1e6, true, "(0, 1e6]"}}) {
    auto e = j.find(f.name);
    if (e == j.end() || e->is_null()) continue;
    if (!e->is_number()) return Corrupt(path + ": " + f.name + " is not a number");
    const double v = e->get<double>();
    if (!(f.lo_open ? v > f.lo : v >= f.lo) || !(v <= f.hi))
      return Corrupt(path + ": " + f.name + " " + e->dump() + " is outside " + f.range);
    *f.slot = v;
  }
  return Status::Ok();
}

}  // namespace

Status HfDir::ReadGenerationConfig() {
  const std::string path = dir_ + "/generation_config.json";
  if (!Exists(path)) return Status::Ok();
  PG_ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(path));
  HfGenerationConfig& g = generation_;
  auto bad = [&](const char* field, const char* what) { return Corrupt(path + ": " + field + " is not " + what); };
  if (auto e = j.find("eos_token_id"); e != j.end() && !e->is_null()) {
    if (e->is_number_integer()) {
      g.eos_token_ids.push_back(e->get<int64_t>());
    } else if (e->is_array()) {
      for (const auto& v : *e) {
        if (!v.is_number_integer()) return bad("eos_token_id", "an integer or a list of integers");
        g.eos_token_ids.push_back(v.get<int64_t>());
      }
    } else {
      return bad("eos_token_id", "an integer or a list of integers");
    }
  }
  if (auto e = j.find("bos_token_id"); e != j.end() && !e->is_null()) {
    if (!e->is_number_integer()) return bad("bos_token_id", "an integer");
    g.bos_token_id = e->get<int64_t>();
  }
  PG_RETURN_IF_ERROR(ReadSamplingFields(j, path, &g));
  if (auto e = j.find("top_k"); e != j.end() && !e->is_null()) {
    if (!e->is_number_integer()) return bad("top_k", "an integer");
    g.top_k = e->get<int64_t>();
    if (*g.top_k < -1) return bad("top_k", "-1, 0 (off) or positive");
  }
  return Status::Ok();
}

Status HfDir::ReadTokenizerConfig() {
  const std::string path = dir_ + "/tokenizer_config.json";
  if (Exists(path)) {
    PG_ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(path));
    if (auto t = j.find("chat_template"); t != j.end() && !t->is_null()) {
      if (t->is_string()) {
        chat_template_ = t->get<std::string>();
      } else if (t->is_array()) {  // [{"name": "default", "template": "..."}, ...]
        for (const auto& e : *t)
          if (e.is_object() && e.contains("name") && e["name"] == "default" && e.contains("template") &&
              e["template"].is_string())
            chat_template_ = e["template"].get<std::string>();
        if (chat_template_.empty()) return Corrupt(path + ": chat_template has no \"default\" entry");
      } else {
        return Corrupt(path + ": chat_template is not a string or a list of named templates");
      }
    }
    if (j.contains("bos_token")) bos_token_ = TokenText(j["bos_token"]);
    if (j.contains("eos_token")) eos_token_ = TokenText(j["eos_token"]);
  }
  const std::string jinja = dir_ + "/chat_template.jinja";
  if (Exists(jinja)) {
    std::ifstream in(jinja, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    if (!in && !in.eof()) return IoError(jinja + ": cannot read");
    chat_template_ = s.str();
  }
  return Status::Ok();
}

const SafeTensor* HfDir::Find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second;
}

std::string HfDir::ShardOf(const std::string& name) const {
  auto it = shard_of_.find(name);
  return it == shard_of_.end() ? "" : shards_[it->second]->path();
}

void HfDir::DropPages(const std::string& name) const {
  auto it = shard_of_.find(name);
  if (it != shard_of_.end()) shards_[it->second]->DropPages(*tensors_.at(name));
}

uint64_t HfDir::total_bytes() const {
  uint64_t n = 0;
  for (const auto& s : shards_) n += s->file_size();
  return n;
}

}  // namespace pg
