#include "hf/safetensors_writer.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace pg {

Result<std::vector<uint8_t>> SafetensorsImage(const std::vector<SafeTensorOut>& tensors,
                                              const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const SafeTensorOut& t : tensors) {
    uint64_t n = SafeDtypeBytes(t.dtype);
    for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
    if (n != t.bytes.size())
      return InvalidArgument("safetensors writer: tensor " + t.name + " holds " + std::to_string(t.bytes.size()) +
                             " bytes, its dtype and shape make " + std::to_string(n));
    h[t.name] = {{"dtype", SafeDtypeName(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string header = h.dump();
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<uint8_t> out(8);
  const uint64_t len = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(len >> (8 * i));
  out.insert(out.end(), header.begin(), header.end());
  out.reserve(out.size() + offset);
  for (const SafeTensorOut& t : tensors) out.insert(out.end(), t.bytes.begin(), t.bytes.end());
  return out;
}

Status WriteSafetensors(const std::string& path, const std::vector<SafeTensorOut>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  PG_ASSIGN_OR_RETURN(std::vector<uint8_t> image, SafetensorsImage(tensors, metadata));
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return IoError(path + ": cannot create");
  const bool ok = std::fwrite(image.data(), 1, image.size(), f) == image.size();
  if (std::fclose(f) != 0 || !ok) return IoError(path + ": write failed");
  return Status::Ok();
}

}  // namespace pg
