#include "doctor_device_check.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#ifdef PROSGROW_DEVICE_EXECUTOR
#include "gpu/executor/device_agreement.h"
#include "model/model.h"
#include "synth/make_model.h"
#endif

namespace pg {

#ifdef PROSGROW_DEVICE_EXECUTOR
namespace {

CheckResult CheckOneDevice(const Model& model, int device) {
  const std::string name = fmt::format("gpu {} vs cpu", device);
  gpu::DeviceOptions o;
  o.device = device;
  auto a = gpu::CompareWithCpu(model, o, KvDtype::kF16);
  if (!a.ok())
    return CheckResult::Fail(name, a.status().message(), "see the gpu line; run scripts/gpu_check.sh's op tests");
  int64_t rows = 0;
  for (const gpu::StepAgreement& s : a->steps) rows += s.rows;
  const std::string detail = fmt::format(
      "tiny qwen3 Q8_0 model, {} steps, {} logit rows: normalised error {:.1e}, greedy tokens {} "
      "(arithmetic {})",
      a->steps.size(), rows, a->worst_nmse(), a->greedy_equal() ? "equal" : "DIFFER", a->arithmetic);
  if (a->worst_nmse() > kDoctorDeviceTolerance || !a->greedy_equal())
    return CheckResult::Fail(name, detail,
                             fmt::format("the device's arithmetic disagrees with the CPU's (bar {:.0e}); use "
                                         "--device cpu and report it with scripts/gpu_check.sh's results",
                                         kDoctorDeviceTolerance));
  return CheckResult::Ok(name, detail);
}

}  // namespace

std::vector<CheckResult> CheckDevicesAgainstCpu(const GpuReport& report) {
  std::vector<CheckResult> out;
  if (report.devices.empty()) return out;
  namespace fs = std::filesystem;
  MakeModelOptions m;
  m.shape = "tiny";
  m.arch = "qwen3";
  m.type = GgmlType::Q8_0;
  m.seed = 3;
  m.n_threads = 2;
  m.out_path = (fs::temp_directory_path() / fmt::format("prosgrow-doctor-{}.gguf", ::getpid())).string();
  Status made = MakeModel(m);
  auto model = made.ok() ? Model::Load(m.out_path, ModelOptionsFor(AttentionMode::kPrecise))
                         : Result<std::unique_ptr<Model>>(made);
  std::error_code ec;
  if (!model.ok()) {
    fs::remove(m.out_path, ec);
    out.push_back(CheckResult::Fail("gpu vs cpu", "could not make the tiny test model: " + model.status().message(),
                                    "check that the temp dir is writable"));
    return out;
  }
  for (const GpuDevice& d : report.devices) out.push_back(CheckOneDevice(**model, d.index));
  model->reset();
  fs::remove(m.out_path, ec);
  return out;
}
#else
std::vector<CheckResult> CheckDevicesAgainstCpu(const GpuReport&) { return {}; }
#endif

}  // namespace pg
