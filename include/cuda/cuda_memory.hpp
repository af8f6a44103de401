// Device memory through the CUDA runtime: the seam of the real CUDA build.
// Every call's status is checked; an error is reported with its name and
// the call that returned it.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "caching_allocator.hpp"
#include "pinned_allocator.hpp"

namespace tsr::detail::cuda {

inline void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) [[unlikely]]
    throw Error(tsr::detail::str("CUDA error: ", cudaGetErrorName(status), " (", cudaGetErrorString(status),
                                 ") from ", call));
}

// A stream or event query's answer: done (cudaSuccess) or not yet
// (cudaErrorNotReady, which is no error); anything else is one.
inline bool finished(cudaError_t status, const char* call) {
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  check_cuda(status, call);
  return true;
}

// Makes `device` current for a scope, as c10::cuda::CUDAGuard.
class CurrentDeviceScope {
 public:
  explicit CurrentDeviceScope(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) check_cuda(cudaSetDevice(device), "cudaSetDevice");
    else previous_ = -1;
  }
  CurrentDeviceScope(const CurrentDeviceScope&) = delete;
  CurrentDeviceScope& operator=(const CurrentDeviceScope&) = delete;
  ~CurrentDeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }

 private:
  int previous_ = -1;
};

class CudaMemory final : public DeviceMemory {
 public:
  explicit CudaMemory(int device) : device_(device) {}

  void* malloc(std::size_t nbytes) override {
    const CurrentDeviceScope scope(device_);
    void* ptr = nullptr;
    const cudaError_t status = cudaMalloc(&ptr, nbytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: clear it, the allocator retries or reports
      return nullptr;
    }
    check_cuda(status, "cudaMalloc");
    return ptr;
  }
  void free(void* ptr) override {
    const CurrentDeviceScope scope(device_);
    check_cuda(cudaFree(ptr), "cudaFree");
  }
  std::pair<std::size_t, std::size_t> memory_info() override {
    const CurrentDeviceScope scope(device_);
    std::size_t free = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return {free, total};
  }
  Event record_event(StreamId stream) override {
    const CurrentDeviceScope scope(device_);
    cudaEvent_t event = nullptr;
    check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    check_cuda(cudaEventRecord(event, reinterpret_cast<cudaStream_t>(stream)), "cudaEventRecord");
    return event;
  }
  bool event_completed(Event event) override {
    return finished(cudaEventQuery(static_cast<cudaEvent_t>(event)), "cudaEventQuery");
  }
  void synchronize_event(Event event) override {
    check_cuda(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize");
  }
  void destroy_event(Event event) override {
    check_cuda(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "cudaEventDestroy");
  }

 private:
  int device_;
};

// Pinned host memory from the CUDA runtime (portable: usable with every
// device), for the pinned allocator.
class CudaPinnedSource final : public PinnedSource {
 public:
  void* allocate(std::size_t nbytes) override {
    void* ptr = nullptr;
    const cudaError_t status = cudaHostAlloc(&ptr, nbytes, cudaHostAllocPortable);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    check_cuda(status, "cudaHostAlloc");
    return ptr;
  }
  void release(void* ptr) override { check_cuda(cudaFreeHost(ptr), "cudaFreeHost"); }
};

}  // namespace tsr::detail::cuda
