// prosgrow doctor: the deployment checklist, one line per check with its
// verdict and fix (src/doctor/preflight.h). Takes serve's flags, so it checks
// exactly what `serve` with the same flags would use; exits 1 when a check
// fails (serve refuses to start on the same failures). With the device
// executor built, each GPU also runs a tiny model against the CPU
// (doctor_device_check.h).
#include <cstdio>

#include "base/cli_util.h"
#include "doctor/gpu_check.h"
#include "doctor/preflight.h"
#include "doctor_device_check.h"
#include "engine_flags.h"
#include "gpu/device_info.h"
#include "server/http/server_options.h"
#include "subcommands.h"

namespace pg {

int DoctorMain(int argc, char** argv) {
  CLI::App app(
      "Deployment checklist: CPU and kernels, memory, disk tier, Redis, KV-event endpoint, HTTP port, "
      "model file. Takes serve's flags; exits 1 when a check fails.",
      "prosgrow doctor");
  EngineFlags ef;
  AddEngineFlags(app, &ef);
  ServerOptions so;
  AddServerFlags(app, &so);
  // serve's own options, accepted so a serve command line can be checked as is.
  std::string served_name;
  double session_ttl = 120;
  app.add_option("--served-model-name", served_name, "as for serve (not checked)");
  app.add_option("--session-ttl", session_ttl, "as for serve (not checked)");
  if (int rc = ParseCli(app, argc, argv); rc >= 0) return rc;
  auto config = ToEngineConfig(ef);
  if (!config.ok()) return Fail("doctor", config.status().message());
  PreflightPlan plan = PlanFromConfig(*config);
  plan.http_host = so.host;
  plan.http_port = so.port;
  std::vector<CheckResult> results = RunPreflight(plan);
  const GpuReport gpus = QueryGpus();
  results.push_back(CheckGpus(gpus));  // doctor only: serve's preflight does not look for GPUs
  for (CheckResult& r : CheckDevicesAgainstCpu(gpus)) results.push_back(std::move(r));
  for (const CheckResult& r : results) std::printf("%s\n", FormatCheck(r).c_str());
  bool failed = AnyFailed(results);
  std::printf("%s\n", failed ? "doctor: some checks FAILED; serve would refuse to start" : "doctor: ready to serve");
  return failed ? 1 : 0;
}

}  // namespace pg
