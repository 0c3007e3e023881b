// kernels_bench: throughput of the CPU MatMul at Qwen2.5-0.5B's shapes.
//
//   kernels_bench [--threads N] [--types q8_0,q8_0x8,f16,f16x8,q4_k] [--tokens 1,4,16,512] [--seconds S]
//
// Types: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_k q5_k q6_k nvfp4 fp8_e4m3. q8_0x8, q4_kx8,
// q5_kx8, q6_kx8, f16x8 and bf16x8 are those types repacked (Q8_0x8, Q4_Kx8,
// Q5_Kx8, Q6_Kx8 and Half4 layouts, backend/cpu/repack.h), as models load them
// by default.
// For each weight type, shape (rows x cols) and token count it prints the
// time per call, GFLOP/s (2 * rows * cols * tokens per call) and the weight
// bandwidth in GB/s (weight bytes per call / time: the figure that bounds
// decode). The ISA follows PROSGROW_ISA (scalar|avx2|avx512), default best.
// Prints figures only; it asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/repack.h"
#include "base/thread_pool.h"

namespace {

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

// A name ending in "x8" (q8_0x8, f16x8, bf16x8) is that type repacked.
bool ParseType(std::string s, pg::GgmlType* t, bool* repack) {
  *repack = s.size() > 2 && s.compare(s.size() - 2, 2, "x8") == 0;
  if (*repack) s.resize(s.size() - 2);
  static const std::pair<const char*, pg::GgmlType> kNames[] = {
      {"f32", pg::GgmlType::F32},          {"f16", pg::GgmlType::F16},   {"bf16", pg::GgmlType::BF16},
      {"q8_0", pg::GgmlType::Q8_0},        {"q4_0", pg::GgmlType::Q4_0}, {"q4_k", pg::GgmlType::Q4_K},
      {"q5_k", pg::GgmlType::Q5_K},        {"q6_k", pg::GgmlType::Q6_K}, {"q4_1", pg::GgmlType::Q4_1},
      {"q5_0", pg::GgmlType::Q5_0},        {"q5_1", pg::GgmlType::Q5_1}, {"nvfp4", pg::GgmlType::NVFP4},
      {"fp8_e4m3", pg::GgmlType::FP8_E4M3}};
  for (const auto& [name, type] : kNames) {
    if (s == name) {
      *t = type;
      return true;
    }
  }
  return false;
}

// Process CPU seconds (all threads). On a shared, oversubscribed machine the
// single-thread GFLOP/s per CPU second is the more stable figure.
double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  double seconds = 0.5;
  std::string types = "q8_0,q8_0x8,f16,f16x8,q4_k";
  std::string tokens = "1,4,16,512";
  std::string shapes = "896x896,4864x896,896x4864,151936x896";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads") {
      threads = std::atoi(next().c_str());
    } else if (a == "--types") {
      types = next();
    } else if (a == "--tokens") {
      tokens = next();
    } else if (a == "--shapes") {
      shapes = next();
    } else if (a == "--seconds") {
      seconds = std::atof(next().c_str());
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: kernels_bench [--threads N] [--types q8_0,q8_0x8,f16,f16x8,q4_k] [--tokens 1,4,16,512]\n"
          "                     [--shapes RxC,...] [--seconds S]\n");
      return 0;
    } else {
      std::fprintf(stderr, "unknown argument %s (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (threads <= 0) {
    std::fprintf(stderr, "--threads must be positive\n");
    return 2;
  }
  pg::ThreadPool pool(threads);
  pg::MatMulScratch scratch;
  std::printf("isa=%s threads=%d\n", pg::IsaName(pg::ActiveIsa()), threads);
  std::printf("%-6s %-12s %6s %11s %9s %8s %14s\n", "type", "shape", "tokens", "ms/call", "GFLOP/s", "GB/s",
              "GFLOP/cpu-s");
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 0.05f);
  for (const std::string& tn : Split(types)) {
    pg::GgmlType type;
    bool repack = false;
    if (!ParseType(tn, &type, &repack)) {
      std::fprintf(stderr, "unknown type %s\n", tn.c_str());
      return 2;
    }
    for (const std::string& shape : Split(shapes)) {
      int64_t rows = 0, cols = 0;
      if (std::sscanf(shape.c_str(), "%ldx%ld", &rows, &cols) != 2 || rows <= 0 || cols <= 0) {
        std::fprintf(stderr, "bad shape %s\n", shape.c_str());
        return 2;
      }
      const size_t row_bytes = pg::RowBytes(type, cols);
      if (cols % pg::InfoOf(type).block_elems != 0) {
        std::printf("%-6s %-12s  (cols not a multiple of the block size; skipped)\n", tn.c_str(), shape.c_str());
        continue;
      }
      std::vector<uint8_t> w(row_bytes * rows);
      std::vector<float> row(cols);
      for (int64_t r = 0; r < rows; ++r) {
        if (r < 64) {
          for (auto& v : row) v = dist(rng);
          const pg::Status st = pg::QuantizeRow(type, row.data(), w.data() + r * row_bytes, cols);
          if (!st.ok()) {
            std::fprintf(stderr, "%s\n", st.ToString().c_str());
            return 1;
          }
        } else {
          std::memcpy(w.data() + r * row_bytes, w.data() + (r % 64) * row_bytes, row_bytes);
        }
      }
      pg::RepackedWeights repacked;
      pg::WeightMatrix wm = pg::MakeWeightMatrix(type, w.data(), rows, cols);
      if (repack) wm = repacked.Add(wm, pg::Avx2Kernels());  // the AVX2 table repacks every type that has a layout
      for (const std::string& ts : Split(tokens)) {
        const int64_t n = std::atoll(ts.c_str());
        if (n <= 0) continue;
        std::vector<float> x(n * cols), y(n * rows);
        for (auto& v : x) v = dist(rng) * 20;
        pg::MatMul(wm, x.data(), n, y.data(), pool, scratch);  // warm up
        int iters = 0;
        const double c0 = CpuNow();
        const double t0 = Now();
        double t1 = t0;
        while (t1 - t0 < seconds || iters < 2) {
          pg::MatMul(wm, x.data(), n, y.data(), pool, scratch);
          ++iters;
          t1 = Now();
        }
        const double per = (t1 - t0) / iters;
        const double cpu_per = (CpuNow() - c0) / iters;
        const double gflops = 2.0 * rows * cols * n / per / 1e9;
        const double gbs = static_cast<double>(w.size()) / per / 1e9;
        std::printf("%-6s %-12s %6ld %11.3f %9.1f %8.1f %14.1f\n", tn.c_str(), shape.c_str(), n, per * 1e3, gflops, gbs,
                    2.0 * rows * cols * n / cpu_per / 1e9);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
