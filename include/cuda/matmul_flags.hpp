// PyTorch's precision switches for matrix products on CUDA devices:
//
//   tsr::backends::cuda::matmul::allow_tf32 = true;   // float products may round inputs to TF32
//   tsr::backends::cuda::matmul::allow_fp16_reduced_precision_reduction = false;
//
// allow_tf32 is false by default, as in PyTorch 1.12 and later: float
// products are computed in float. Half and bfloat16 products accumulate in
// float; allow_fp16_reduced_precision_reduction (true by default, as in
// PyTorch) lets cuBLAS reduce partial sums in half precision. (The emulated
// build computes exactly in the accumulation type whatever they say.)
#pragma once
#include <atomic>

namespace tsr::backends::cuda::matmul {
inline std::atomic<bool> allow_tf32{false};
inline std::atomic<bool> allow_fp16_reduced_precision_reduction{true};
}  // namespace tsr::backends::cuda::matmul
