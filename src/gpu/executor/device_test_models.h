// Synthetic models for the device executor's tests, made once per machine
// under the temp dir (as testing/tiny_model.h): written under a per-process
// name and renamed, so concurrent test processes never read a half-written
// file. "" if it cannot be made.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "gguf/ggml_type.h"
#include "synth/make_model.h"

namespace pg::test {

inline std::string DeviceTestModel(const std::string& arch, const std::string& shape, GgmlType type) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "prosgrow-e2e-models";
  fs::create_directories(dir);
  const fs::path out = dir / (shape + "-" + arch + "-" + TypeName(type) + "-seed3.gguf");
  if (fs::exists(out)) return out.string();
  MakeModelOptions o;
  o.shape = shape;
  o.arch = arch;
  o.type = type;
  o.seed = 3;
  o.n_threads = 2;
  o.out_path = out.string() + ".tmp" + std::to_string(::getpid());
  if (!MakeModel(o).ok()) return std::string();
  fs::rename(o.out_path, out);
  return out.string();
}

}  // namespace pg::test
