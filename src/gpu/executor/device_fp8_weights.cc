#include "gpu/executor/device_fp8_weights.h"

#include <vector>

#include "gpu/kernels/fp8_device_form.h"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

Result<DeviceMatrix> UploadFp8Matrix(const WeightMatrix& w, int64_t n_mats, size_t mat_bytes,
                                     const std::function<Result<void*>(size_t)>& alloc) {
  if (w.cols % 64 != 0) return Internal("device executor: an FP8 matrix's columns are not a multiple of 64");
  const auto* blocks = static_cast<const uint8_t*>(w.data);
  const Fp8Layout layout = ChooseFp8Layout(blocks, w.rows, w.cols, n_mats, mat_bytes);
  const Fp8ScaleShape sh = ScaleShapeOf(layout, w.rows, w.cols);
  const auto mat = static_cast<size_t>(w.rows * w.cols);
  const auto per_mat = static_cast<size_t>(sh.per_mat);
  PG_ASSIGN_OR_RETURN(void* bytes, alloc(mat * static_cast<size_t>(n_mats)));
  PG_ASSIGN_OR_RETURN(void* scales, alloc(per_mat * sizeof(float) * static_cast<size_t>(n_mats)));
  std::vector<uint8_t> hb(mat);
  std::vector<float> hs(per_mat);
  for (int64_t e = 0; e < n_mats; ++e) {
    ToFp8DeviceForm(blocks + static_cast<size_t>(e) * mat_bytes, w.rows, w.cols, layout, hb.data(), hs.data());
    if (gpuMemcpy(static_cast<uint8_t*>(bytes) + static_cast<size_t>(e) * mat, hb.data(), mat, gpuMemcpyHostToDevice) !=
            gpuSuccess ||
        gpuMemcpy(static_cast<float*>(scales) + static_cast<size_t>(e) * per_mat, hs.data(), per_mat * sizeof(float),
                  gpuMemcpyHostToDevice) != gpuSuccess)
      return Internal("device executor: upload failed");
  }
  DeviceMatrix d;
  d.type = WType::kFP8_E4M3;
  d.data = bytes;
  d.rows = w.rows;
  d.cols = w.cols;
  d.row_bytes = w.cols;
  d.mat_bytes = w.rows * w.cols;
  d.scales = static_cast<const float*>(scales);
  d.scale_layout = layout;
  d.scale_ld = sh.ld;
  d.scale_mat = sh.per_mat;
  return d;
}

}  // namespace pg::gpu
