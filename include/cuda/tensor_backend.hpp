// The CUDA backend behind device tensors: each device's memory through a
// caching allocator, pinned host memory through another, copies between
// host and device (waited for, or queued from and into pinned memory), and
// the registration that makes them the core's (detail/device_backend.hpp)
// from start-up on.
//
// Compiled by nvcc, the devices are the CUDA runtime's. In the emulated
// build (TSR_CUDA_EMULATED with the host compiler and Thrust's CPP device
// system) there are two devices of host memory, 16 GiB each, so that the
// device code path, device indices and out-of-memory errors are exercised
// on machines without a GPU.
#pragma once
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "../tessera.hpp"
#include "caching_allocator.hpp"
#include "memory_summary.hpp"
#include "stream.hpp"
#if defined(__CUDACC__)
#include "cuda_memory.hpp"
#else
#include "host_memory.hpp"
#endif

namespace tsr::detail::cuda {

#if defined(__CUDACC__)
inline int runtime_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no device: CUDA is not available
    return 0;
  }
  return count;
}
inline std::unique_ptr<DeviceMemory> device_memory(int device) { return std::make_unique<CudaMemory>(device); }
inline std::unique_ptr<PinnedSource> pinned_source() { return std::make_unique<CudaPinnedSource>(); }
// Queued on the thread's current stream of the device; returns that stream.
inline cudaStream_t queue_copy(int device, void* dst, const void* src, std::size_t nbytes, DeviceBackend::Copy kind) {
  const Launch launch(device);
  const cudaMemcpyKind direction = kind == DeviceBackend::Copy::HostToDevice   ? cudaMemcpyHostToDevice
                                   : kind == DeviceBackend::Copy::DeviceToHost ? cudaMemcpyDeviceToHost
                                                                               : cudaMemcpyDeviceToDevice;
  const auto stream = reinterpret_cast<cudaStream_t>(launch.stream());
  check_cuda(cudaMemcpyAsync(dst, src, nbytes, direction, stream), "cudaMemcpyAsync");
  return stream;
}
// The same, waited for: the bytes are in place when it returns.
inline void copy_bytes(int device, void* dst, const void* src, std::size_t nbytes, DeviceBackend::Copy kind) {
  check_cuda(cudaStreamSynchronize(queue_copy(device, dst, src, nbytes, kind)), "cudaStreamSynchronize");
}
inline void synchronize_device(int device) {
  const CurrentDeviceScope scope(device);
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}
#else
inline constexpr int kEmulatedDevices = 2;
inline constexpr std::size_t kEmulatedCapacity = std::size_t(16) << 30;
inline int runtime_device_count() { return kEmulatedDevices; }
inline std::unique_ptr<DeviceMemory> device_memory(int) { return std::make_unique<HostMemory>(kEmulatedCapacity); }
inline std::unique_ptr<PinnedSource> pinned_source() { return std::make_unique<HostPinnedSource>(); }
inline void queue_copy(int, void* dst, const void* src, std::size_t nbytes, DeviceBackend::Copy) {
  std::memcpy(dst, src, nbytes);  // host work is done when it returns
}
inline void copy_bytes(int device, void* dst, const void* src, std::size_t nbytes, DeviceBackend::Copy kind) {
  queue_copy(device, dst, src, nbytes, kind);
}
inline void synchronize_device(int) {}  // host work is done when it returns
#endif

class TensorBackend final : public DeviceBackend {
 public:
  TensorBackend() : count_(runtime_device_count()) {
    for (int d = 0; d < count_; ++d) {
      memory_.push_back(device_memory(d));
      allocators_.push_back(std::make_unique<CachingAllocator>(*memory_.back(), d));
    }
  }

  int device_count() override { return count_; }
  // Memory for use on the thread's current stream of the device.
  void* allocate(int device, std::size_t nbytes) override {
    return allocators_[device]->allocate(nbytes, current_stream_slot(device));
  }
  void deallocate(int device, void* ptr) override { allocators_[device]->deallocate(ptr); }
  void copy(int device, void* dst, const void* src, std::size_t nbytes, Copy kind) override {
    copies_.fetch_add(1, std::memory_order_relaxed);
    copy_bytes(device, dst, src, nbytes, kind);
  }
  void* allocate_pinned(std::size_t nbytes) override { return pinned_.allocate(nbytes); }
  void deallocate_pinned(void* ptr) override { pinned_.deallocate(ptr); }
  void copy_async(int device, void* dst, const void* src, std::size_t nbytes, Copy kind,
                  void* pinned_block) override {
    copies_.fetch_add(1, std::memory_order_relaxed);
    queue_copy(device, dst, src, nbytes, kind);
    pinned_.record_use(pinned_block, device, current_stream_slot(device));
  }
  // The pinned host memory's cache (for tests).
  PinnedAllocator& pinned_allocator() { return pinned_; }
  // Copies made so far, to, from or within devices (for tests).
  std::size_t copy_count() const { return copies_.load(std::memory_order_relaxed); }
  void synchronize() override {
    for (int d = 0; d < count_; ++d) synchronize_device(d);
  }
  std::uintptr_t current_stream(int device) override { return current_stream_slot(device); }
  std::size_t memory_allocated(int device) override { return current(stats(device).allocated_bytes); }
  std::size_t max_memory_allocated(int device) override {
    return static_cast<std::size_t>(stats(device).allocated_bytes[kAllPools].peak);
  }
  std::size_t memory_reserved(int device) override { return current(stats(device).reserved_bytes); }
  void reset_peak_memory_stats(int device) override { allocators_[device]->reset_peak_stats(); }
  void empty_cache() override {
    for (auto& allocator : allocators_) allocator->empty_cache();
  }
  std::string memory_summary(int device) override { return cuda::memory_summary(stats(device), device); }
  // Marks memory as used on another stream of its device too.
  void record_stream(int device, void* ptr, StreamId stream) { allocators_[device]->record_stream(ptr, stream); }

 private:
  MemoryStats stats(int device) const { return allocators_[device]->stats(); }
  static std::size_t current(const StatArray& stat) { return static_cast<std::size_t>(stat[kAllPools].current); }

  int count_;
  std::atomic<std::size_t> copies_{0};
  std::vector<std::unique_ptr<DeviceMemory>> memory_;
  std::vector<std::unique_ptr<CachingAllocator>> allocators_;
  PinnedAllocator pinned_{pinned_source(), memory_};  // after memory_, whose devices record its events
};

// The backend lives as long as the program: tensors with static storage
// duration may free their memory after every other static is gone.
inline TensorBackend& tensor_backend() {
  static TensorBackend* const backend = new TensorBackend;
  return *backend;
}

// Registered during static initialization of any translation unit that
// includes this header.
inline const bool tensor_backend_registered = [] {
  cuda_backend_slot() = &tensor_backend();
  return true;
}();

}  // namespace tsr::detail::cuda

namespace tsr {
// Marks a tensor's memory as used by work queued on `stream` too, as
// torch.Tensor.record_stream: when the tensor is freed, its block is reused
// by another stream only once the work queued on `stream` by then is done.
// (Blocks are otherwise reused at once on the stream they were allocated
// on, which is right for work on that stream only.)
template <class T>
void record_stream(const Tensor<T>& t, const cuda::Stream& stream) {
  detail::check(t.device().is_cuda(), "record_stream: the tensor is on ", t.device().str(), ", not on a CUDA device");
  detail::check(t.device() == stream.device(), "record_stream: the tensor is on ", t.device().str(),
                " and the stream on ", stream.device().str());
  if (t.storage()->data())
    detail::cuda::tensor_backend().record_stream(t.device().index, t.storage()->data(), stream.id());
}
}  // namespace tsr

