// The CUDA backend's calls into the CUDA runtime and cuBLAS: must compile
// with nvcc (compiled, not executed, on machines without a GPU).
#include <cuda/cublas.hpp>
#include <cuda/cuda_memory.hpp>

void allocate_and_free() {
  tsr::detail::cuda::CudaMemory device(0);
  tsr::detail::cuda::CachingAllocator allocator(device, 0);
  void* p = allocator.allocate(1 << 20, 0);
  allocator.record_stream(p, 0);
  allocator.deallocate(p);
  allocator.empty_cache();
}

template <class T>
void product(cublasHandle_t handle, const T* a, const T* b, T* c) {
  using namespace tsr::detail::cuda;
  const auto args = column_major_gemm<T>(2, 64, 32, 16, {a, 64 * 16, 16, 1}, {b, 0, 1, 16}, {c, 64 * 32, 32, 1});
  if (args) gemm_strided_batched(handle, *args, T(1), T(0));
}
template void product<float>(cublasHandle_t, const float*, const float*, float*);
template void product<double>(cublasHandle_t, const double*, const double*, double*);
template void product<tsr::half>(cublasHandle_t, const tsr::half*, const tsr::half*, tsr::half*);
template void product<tsr::bfloat16>(cublasHandle_t, const tsr::bfloat16*, const tsr::bfloat16*, tsr::bfloat16*);
