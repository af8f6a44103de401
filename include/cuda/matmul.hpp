// Matrix products of device tensors: the strided batch of
// cuda/gemm_layout.hpp (row-major operands by the transpose identity, no
// copies of transposed ones), multiplied by cuBLAS under nvcc and by the
// host's rendering of cuBLAS's definition in the emulated build.
#pragma once
#include <cstdint>

#include "gemm_layout.hpp"
#if defined(__CUDACC__)
#include <vector>

#include "cublas.hpp"
#include "cuda_memory.hpp"
#include "stream.hpp"
#else
#include "host_gemm.hpp"
#include "matmul_flags.hpp"
#endif

namespace tsr::detail::cuda {

#if defined(__CUDACC__)
// This thread's cuBLAS handle for a device, made on first use and destroyed
// with the thread (a handle is not to be shared by threads that set its
// stream; PyTorch keeps one per thread and device too).
inline cublasHandle_t cublas_handle(int device) {
  struct Handles {
    std::vector<cublasHandle_t> of_device;
    ~Handles() {
      for (cublasHandle_t h : of_device)
        if (h) cublasDestroy(h);
    }
  };
  thread_local Handles handles;
  auto& all = handles.of_device;
  if (all.size() <= static_cast<std::size_t>(device)) all.resize(static_cast<std::size_t>(device) + 1, nullptr);
  cublasHandle_t& handle = all[static_cast<std::size_t>(device)];
  if (!handle) {
    const CurrentDeviceScope scope(device);
    check_cublas(cublasCreate(&handle), "cublasCreate");
  }
  return handle;
}
#endif

// c[i] = alpha a[i] b[i] + beta c[i] for i < batch (m x k times k x n, the
// pointers on `device`). False, with nothing done, when a layout is not one
// cuBLAS reads: the caller makes the operands contiguous.
template <class T>
bool batched_gemm(int device, int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, StridedMatrices<const T> a,
                  StridedMatrices<const T> b, T beta, StridedMatrices<T> c) {
  const auto g = column_major_gemm<T>(batch, m, n, k, a, b, c);
  if (!g) return false;
  if (batch == 0 || m == 0 || n == 0) return true;
#if defined(__CUDACC__)
  const Launch launch(device);  // the device current, the thread's stream on it
  cublasHandle_t handle = cublas_handle(device);
  check_cublas(cublasSetStream(handle, reinterpret_cast<cudaStream_t>(launch.stream())), "cublasSetStream");
  gemm_strided_batched(handle, *g, alpha, beta);
#else
  (void)device;
  host_gemm_strided_batched(*g, alpha, beta);
#endif
  return true;
}

}  // namespace tsr::detail::cuda
