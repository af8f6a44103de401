// The caching allocator over the CUDA runtime: must compile with nvcc
// (compiled, not executed, on machines without a GPU).
#include <cuda/cuda_memory.hpp>

void allocate_and_free() {
  tsr::cuda::detail::CudaMemory device(0);
  tsr::cuda::detail::CachingAllocator allocator(device, 0);
  void* p = allocator.allocate(1 << 20, 0);
  allocator.record_stream(p, 0);
  allocator.deallocate(p);
  allocator.empty_cache();
}
