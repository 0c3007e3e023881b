// GemmFp8's cuBLASLt call (fp8_matmul.h), CUDA build only: E4M3 weights as A
// (transposed: the "TN" form FP8 kernels need), E4M3 activations as B, f32 D,
// CUBLAS_COMPUTE_32F. Scaling: kBlock128 weights BLK128x128_32F with the
// activations' 1x128 groups VEC128_32F; kPerRow weights OUTER_VEC_32F with the
// per-token activation scales OUTER_VEC_32F. The call is made only on devices
// of compute capability >= 8.9 and when cuBLASLt's heuristic returns an
// algorithm for it; otherwise `ran` stays false and GemmFp8 runs our kernel.
#include "gpu/kernels/fp8_matmul.h"

#if PG_HAVE_BLASLT
#include <unordered_map>

namespace pg::gpu {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

// cuBLASLt's handle and workspace for one device, made on first use on this host thread.
struct LtDevice {
  bool fp8_cores = false;
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
};

LtDevice* CurrentLtDevice() {
  thread_local std::unordered_map<int, LtDevice> devices;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return nullptr;
  if (auto it = devices.find(dev); it != devices.end()) return &it->second;
  LtDevice& d = devices[dev];
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, dev) != cudaSuccess || p.major * 10 + p.minor < 89) return &d;
  if (cublasLtCreate(&d.handle) != CUBLAS_STATUS_SUCCESS) return &d;
  if (cudaMalloc(&d.workspace, kWorkspaceBytes) != cudaSuccess) return &d;
  d.fp8_cores = true;
  return &d;
}

// The descriptors of one call, destroyed on every path out.
struct LtCall {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtCall() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

template <typename T>
bool SetDesc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& v) {
  return cublasLtMatmulDescSetAttribute(desc, attr, &v, sizeof(v)) == CUBLAS_STATUS_SUCCESS;
}

// The descriptor and layouts of y^T (m, n) = W (k, m)^T * x^T (k, n), column-major.
bool Describe(const DeviceMatrix& w, const float* xs, int64_t n, LtCall* c) {
  const int64_t m = w.rows, k = w.cols;
  const bool block = w.scale_layout == Fp8Layout::kBlock128;
  const int32_t a_mode =
      block ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F : CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  const int32_t b_mode = block ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F : CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  const int32_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  const void* a_scale = w.scales;
  const void* b_scale = xs;
  if (cublasLtMatmulDescCreate(&c->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return false;
  if (!SetDesc(c->desc, CUBLASLT_MATMUL_DESC_TRANSA, ta) || !SetDesc(c->desc, CUBLASLT_MATMUL_DESC_TRANSB, tb) ||
      !SetDesc(c->desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, a_mode) ||
      !SetDesc(c->desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, b_mode) ||
      !SetDesc(c->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, a_scale) ||
      !SetDesc(c->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b_scale))
    return false;
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  return cublasLtMatrixLayoutCreate(&c->a, CUDA_R_8F_E4M3, u(k), u(m), k) == CUBLAS_STATUS_SUCCESS &&
         cublasLtMatrixLayoutCreate(&c->b, CUDA_R_8F_E4M3, u(k), u(n), k) == CUBLAS_STATUS_SUCCESS &&
         cublasLtMatrixLayoutCreate(&c->d, CUDA_R_32F, u(m), u(n), m) == CUBLAS_STATUS_SUCCESS;
}

}  // namespace

// x8 / xs: n_pad tokens as QuantizeActivationsFp8 wrote them; d: n_pad rows of w.rows.
gpuError_t BlasLtGemmFp8(const DeviceMatrix& w, const uint8_t* x8, const float* xs, int64_t n_pad, float* d,
                         gpuStream_t s, bool* ran) {
  *ran = false;
  if (w.scale_layout == Fp8Layout::kBlock64 || w.rows % 16 != 0 || w.cols % 16 != 0) return gpuSuccess;
  LtDevice* dev = CurrentLtDevice();
  if (dev == nullptr || !dev->fp8_cores) return gpuSuccess;
  LtCall c;
  if (!Describe(w, xs, n_pad, &c)) return gpuSuccess;
  const uint64_t ws = kWorkspaceBytes;
  if (cublasLtMatmulPreferenceCreate(&c.pref) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatmulPreferenceSetAttribute(c.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)) !=
          CUBLAS_STATUS_SUCCESS)
    return gpuSuccess;
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  if (cublasLtMatmulAlgoGetHeuristic(dev->handle, c.desc, c.a, c.b, c.d, c.d, c.pref, 1, &heur, &found) !=
          CUBLAS_STATUS_SUCCESS ||
      found == 0)
    return gpuSuccess;  // this scaling / shape is not offered on this device: our kernel
  const float alpha = 1.0f, beta = 0.0f;
  const cublasStatus_t st = cublasLtMatmul(dev->handle, c.desc, &alpha, w.data, c.a, x8, c.b, &beta, d, c.d, d, c.d,
                                           &heur.algo, dev->workspace, kWorkspaceBytes, s);
  // Refused after all (a combination the heuristic offered but the call does not take): our kernel.
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE) return gpuSuccess;
  if (st != CUBLAS_STATUS_SUCCESS) return gpuErrorLaunchFailure;
  *ran = true;
  return gpuSuccess;
}

}  // namespace pg::gpu
#endif  // PG_HAVE_BLASLT
