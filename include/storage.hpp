// A ref-counted byte buffer on a device, shared by all views of a tensor.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>

#include "detail/allocator.hpp"
#include "detail/device_backend.hpp"
#include "device.hpp"

namespace tsr {

class StorageImpl {
 public:
  // Owning storage of nbytes from the device's allocator (the CPU's, or the
  // CUDA backend's caching allocator).
  explicit StorageImpl(std::size_t nbytes, Device device = kCPU) : nbytes_(nbytes), device_(device) {
    data_ = allocate(nbytes);
  }
  // Owning storage of nbytes of page-locked host memory (pin_memory), from
  // the CUDA backend's pinned allocator.
  struct PinnedHost {};
  StorageImpl(std::size_t nbytes, PinnedHost) : nbytes_(nbytes), pinned_(true) { data_ = allocate(nbytes); }
  // Non-owning storage over user memory (from_blob).
  StorageImpl(void* data, std::size_t nbytes, Device device) : data_(data), nbytes_(nbytes), device_(device), owning_(false) {}

  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;
  ~StorageImpl() { release(); }

  void* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool owning() const { return owning_; }
  bool pinned() const { return pinned_; }

  // Changes the buffer's size, keeping the common prefix. Resizing to 0
  // frees the memory while views keep their metadata; reading through them
  // is then an error until the storage is resized back (the pattern sharded
  // data parallelism uses to free parameters between uses).
  //
  // Resizing up from 0 leaves the storage awaiting its fill: the memory
  // holds nothing, so the first write into it restores the content the
  // storage had rather than modifying it, and leaves the version as it was.
  // Autograd's saved tensors stay valid across "freed, resized up, filled
  // with one copy_ or all-gather"; any later write counts as usual.
  void resize_(std::size_t nbytes) {
    detail::check(owning_, "Trying to resize storage that is not resizable");
    if (nbytes == nbytes_) return;
    void* fresh = allocate(nbytes);
    if (data_ && fresh) {
      if (device_.is_cpu()) std::memcpy(fresh, data_, std::min(nbytes, nbytes_));
      else
        detail::cuda_backend(device_.index)
            .copy(device_.index, fresh, data_, std::min(nbytes, nbytes_), detail::DeviceBackend::Copy::DeviceToDevice);
    }
    awaiting_fill_ = nbytes_ == 0 && nbytes > 0;
    release();
    data_ = fresh;
    nbytes_ = nbytes;
  }
  // True between a resize_ up from 0 and the first write after it.
  bool awaiting_fill() const { return awaiting_fill_; }

  // Bumped by every in-place write; autograd compares it to saved versions.
  // A relaxed load and store, not a locked fetch_add: the lock costs more
  // than a tiny op's arithmetic, and two threads writing the same storage at
  // once are racing on its data anyway (the counter still moves).
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  [[gnu::always_inline]] void bump_version() {
    if (awaiting_fill_) [[unlikely]] {
      awaiting_fill_ = false;  // the fill after resize_: not a modification
      return;
    }
    version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

 private:
  void* allocate(std::size_t nbytes) const {
    if (pinned_) [[unlikely]]
      return pinned_backend().allocate_pinned(nbytes);
    if (device_.is_cpu()) [[likely]]
      return detail::CpuAllocator::instance().allocate(nbytes);
    return detail::cuda_backend(device_.index).allocate(device_.index, nbytes);
  }
  void release() {
    if (owning_ && data_) {
      if (pinned_) [[unlikely]] {
        if (detail::DeviceBackend* backend = detail::cuda_backend_slot()) backend->deallocate_pinned(data_);
      } else if (device_.is_cpu()) detail::CpuAllocator::instance().deallocate(data_, nbytes_);
      else if (detail::DeviceBackend* backend = detail::cuda_backend_slot()) backend->deallocate(device_.index, data_);
    }
    data_ = nullptr;
  }
  static detail::DeviceBackend& pinned_backend() {
    detail::DeviceBackend* backend = detail::cuda_backend_slot();
    if (!backend) [[unlikely]]
      detail::fail_without_cuda("pinned memory needs it");
    return *backend;
  }

  void* data_ = nullptr;
  std::size_t nbytes_ = 0;
  Device device_ = kCPU;
  bool owning_ = true;
  bool pinned_ = false;  // page-locked host memory
  bool awaiting_fill_ = false;
  std::atomic<uint64_t> version_{0};
};

using Storage = std::shared_ptr<StorageImpl>;

}  // namespace tsr
