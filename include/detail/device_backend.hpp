// The seam between the core and a device backend: what storage, copies and
// tsr::cuda:: need from one, registered at start-up by the CUDA backend
// (include/cuda/tensor_backend.hpp) when a translation unit of the program
// has it. The core itself never calls the CUDA runtime.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "../device.hpp"
#include "config.hpp"

namespace tsr::detail {

class DeviceBackend {
 public:
  enum class Copy { HostToDevice, DeviceToHost, DeviceToDevice };

  virtual ~DeviceBackend() = default;
  virtual int device_count() = 0;
  // nbytes of memory on a device (null for 0 bytes), and its release.
  virtual void* allocate(int device, std::size_t nbytes) = 0;
  virtual void deallocate(int device, void* ptr) = 0;
  // Copies nbytes and returns when they are in place. `device` is the
  // device side's index (the destination's for device-to-device copies).
  virtual void copy(int device, void* dst, const void* src, std::size_t nbytes, Copy kind) = 0;
  // Page-locked (pinned) host memory (null for 0 bytes), and its release.
  virtual void* allocate_pinned(std::size_t nbytes) = 0;
  virtual void deallocate_pinned(void* ptr) = 0;
  // Queues a copy between the host and a device on the thread's current
  // stream of `device` and returns at once. The host side lies in the
  // pinned block `pinned_block`, which is not handed out again before the
  // copy is done.
  virtual void copy_async(int device, void* dst, const void* src, std::size_t nbytes, Copy kind,
                          void* pinned_block) = 0;
  virtual void synchronize() = 0;
  // The calling thread's current stream on a device (its cudaStream_t; 0 is
  // the default stream), where tessera queues that thread's work.
  virtual std::uintptr_t current_stream(int device) = 0;
  virtual std::size_t memory_allocated(int device) = 0;
  virtual std::size_t max_memory_allocated(int device) = 0;
  virtual std::size_t memory_reserved(int device) = 0;
  virtual void reset_peak_memory_stats(int device) = 0;
  virtual void empty_cache() = 0;
  virtual std::string memory_summary(int device) = 0;
};

// The registered CUDA backend, or null in a program without one.
inline DeviceBackend*& cuda_backend_slot() {
  static DeviceBackend* backend = nullptr;
  return backend;
}

[[noreturn, gnu::noinline]] inline void fail_without_cuda(const std::string& what) {
  fail<Error>("Torch not compiled with CUDA enabled (tessera: no translation unit of this program was compiled "
              "with the CUDA backend, by nvcc or as the emulated build; ", what, ")");
}

// The backend for a device index, checked as PyTorch checks it.
inline DeviceBackend& cuda_backend(int device) {
  DeviceBackend* backend = cuda_backend_slot();
  if (!backend) [[unlikely]]
    fail_without_cuda("requested device cuda:" + std::to_string(device));
  if (device >= backend->device_count()) [[unlikely]]
    fail<Error>("CUDA error: invalid device ordinal (device cuda:", device, " of ", backend->device_count(),
                " devices)");
  return *backend;
}

// The errors for device tensors that reach code without a device path: an
// operation that runs on the host only, and any evaluation in a translation
// unit compiled without the CUDA backend. (Two functions, chosen by the
// templates that call them: one inline function whose text depended on the
// translation unit would be one function to the linker.)
[[noreturn, gnu::noinline]] inline void fail_host_only(Device device, const char* what) {
  fail<Error>(what, " runs on the CPU only in tessera and cannot take tensors on ", device.str(),
              "; copy them to the CPU first with .to(tsr::kCPU)");
}
[[noreturn, gnu::noinline]] inline void fail_compiled_without_cuda(Device device, const char* what) {
  fail<Error>("tessera was compiled without CUDA in this translation unit, which cannot run ", what, " on ",
              device.str(), " tensors: compile it with nvcc (or as the emulated device build), or copy the "
              "tensors to the CPU first with .to(tsr::kCPU)");
}

// PyTorch's error for operands on different devices.
[[noreturn, gnu::noinline]] inline void fail_mixed_devices(Device a, Device b) {
  fail<Error>("Expected all tensors to be on the same device, but found at least two devices, ", a.str(), " and ",
              b.str(), "!");
}

}  // namespace tsr::detail

namespace tsr {

inline bool cuda::is_available() { return device_count() > 0; }
inline int cuda::device_count() {
  detail::DeviceBackend* backend = detail::cuda_backend_slot();
  return backend ? backend->device_count() : 0;
}
inline void cuda::synchronize() {
  if (detail::DeviceBackend* backend = detail::cuda_backend_slot()) backend->synchronize();
  else detail::fail_without_cuda("cuda::synchronize()");
}
inline std::size_t cuda::memory_allocated(int device) { return detail::cuda_backend(device).memory_allocated(device); }
inline std::size_t cuda::max_memory_allocated(int device) {
  return detail::cuda_backend(device).max_memory_allocated(device);
}
inline std::size_t cuda::memory_reserved(int device) { return detail::cuda_backend(device).memory_reserved(device); }
inline void cuda::reset_peak_memory_stats(int device) { detail::cuda_backend(device).reset_peak_memory_stats(device); }
inline void cuda::empty_cache() {
  // As torch.cuda.empty_cache(): nothing to do without CUDA.
  if (detail::DeviceBackend* backend = detail::cuda_backend_slot()) backend->empty_cache();
}
inline std::string cuda::memory_summary(int device) { return detail::cuda_backend(device).memory_summary(device); }

}  // namespace tsr
