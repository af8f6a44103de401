// Device memory emulated in host memory: the seam of the emulated build,
// which runs the device code path on machines without a GPU (Thrust's CPP
// device system stands in for the GPU, and this for the CUDA runtime's
// memory calls). Host work runs in order, so every event has completed as
// soon as it is recorded.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "caching_allocator.hpp"
#include "pinned_allocator.hpp"

namespace tsr::detail::cuda {

class HostMemory final : public DeviceMemory {
 public:
  // A device of `capacity` bytes: allocations beyond it fail as cudaMalloc
  // does when the device is full.
  explicit HostMemory(std::size_t capacity) : capacity_(capacity) {}
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  ~HostMemory() override {
    for (auto& [ptr, size] : sizes_) std::free(ptr);
  }

  void* malloc(std::size_t nbytes) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (nbytes > capacity_ - used_) return nullptr;
    void* ptr = std::aligned_alloc(256, (nbytes + 255) / 256 * 256);  // cudaMalloc's alignment
    if (!ptr) return nullptr;
    sizes_.emplace(ptr, nbytes);
    used_ += nbytes;
    ++mallocs_;
    return ptr;
  }
  void free(void* ptr) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = sizes_.find(ptr);
    if (it == sizes_.end()) return;
    used_ -= it->second;
    sizes_.erase(it);
    std::free(ptr);
  }
  std::pair<std::size_t, std::size_t> memory_info() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    return {capacity_ - used_, capacity_};
  }
  Event record_event(StreamId) override { return nullptr; }
  bool event_completed(Event) override { return true; }
  void synchronize_event(Event) override {}
  void destroy_event(Event) override {}

  // For tests: device allocations made so far, and bytes held now.
  std::size_t malloc_count() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return mallocs_;
  }
  std::size_t used() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return used_;
  }

 private:
  std::size_t capacity_;
  std::size_t used_ = 0;
  std::size_t mallocs_ = 0;
  std::unordered_map<void*, std::size_t> sizes_;
  mutable std::mutex mutex_;
};

// "Pinned" host memory of the emulated build: ordinary host memory, which
// the emulated devices read and write directly.
class HostPinnedSource final : public PinnedSource {
 public:
  void* allocate(std::size_t nbytes) override { return std::aligned_alloc(kMinBlockSize, nbytes); }
  void release(void* ptr) override { std::free(ptr); }
};

}  // namespace tsr::detail::cuda
