// Build-wide constants and the one host/device annotation macro.
#pragma once
#include <cstdint>

// Every scalar form that may run inside a CUDA kernel carries this macro;
// under nvcc it expands to __host__ __device__, elsewhere to nothing.
#if defined(__CUDACC__)
#define TSR_HOST_DEVICE __host__ __device__
#else
#define TSR_HOST_DEVICE
#endif

namespace tsr::detail {
// Evaluators hold fixed arrays so that they stay trivially copyable; this is
// the largest rank an expression may have after size-1 dimensions are dropped
// and contiguous dimensions are merged.
inline constexpr int kMaxEvalDims = 16;
}  // namespace tsr::detail
