// Page-locked ("pinned") host memory, cached as PyTorch's
// CachingHostAllocator caches it.
//
// A copy between a device and pinned host memory is done by the device's
// copy engine straight from or into the pages, so it can run while the host
// goes on (non_blocking) and at the bus's full speed; a copy from ordinary
// (pageable) memory is staged by the driver and waited for. Pinning pages
// is slow (the driver maps them for the device), so freed blocks are kept,
// by size rounded up to a power of two, and handed out again. A block that
// an asynchronous copy still reads or writes is not handed out until that
// copy is done: each such copy records an event on its stream, and a freed
// block waits until its events have completed.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../errors.hpp"
#include "caching_allocator.hpp"

namespace tsr::detail::cuda {

// Where pinned memory comes from: cudaHostAlloc / cudaFreeHost under nvcc,
// aligned host memory in the emulated build.
class PinnedSource {
 public:
  virtual ~PinnedSource() = default;
  virtual void* allocate(std::size_t nbytes) = 0;  // null when the host cannot pin that much
  virtual void release(void* ptr) = 0;
};

class PinnedAllocator {
 public:
  // Events of copies on a device are recorded through that device's memory
  // interface (devices[d]).
  PinnedAllocator(std::unique_ptr<PinnedSource> source, const std::vector<std::unique_ptr<DeviceMemory>>& devices)
      : source_(std::move(source)), devices_(devices) {}
  PinnedAllocator(const PinnedAllocator&) = delete;
  PinnedAllocator& operator=(const PinnedAllocator&) = delete;
  ~PinnedAllocator() {
    for (auto& [ptr, block] : blocks_) source_->release(ptr);
  }

  // nbytes of pinned memory (null for 0 bytes): a cached block of the
  // rounded size whose copies are done, or a new one.
  void* allocate(std::size_t nbytes) {
    if (nbytes == 0) return nullptr;
    const std::size_t size = rounded(nbytes);
    const std::lock_guard<std::mutex> lock(mutex_);
    collect_finished();
    if (auto it = free_.find(size); it != free_.end() && !it->second.empty()) {
      void* ptr = it->second.back();
      it->second.pop_back();
      blocks_.at(ptr).in_use = true;
      cached_ -= size;
      return ptr;
    }
    void* ptr = source_->allocate(size);
    if (!ptr) {  // give the cache back and try once more
      release_cached();
      ptr = source_->allocate(size);
    }
    if (!ptr)
      fail<OutOfMemoryError>("CUDA out of memory. Tried to allocate ", size,
                             " bytes of pinned (page-locked) host memory");
    blocks_.emplace(ptr, Block{size, true, {}});
    return ptr;
  }

  // Gives a block back; it is reused once the copies recorded on it are done.
  void deallocate(void* ptr) {
    if (!ptr) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    Block& block = blocks_.at(ptr);
    block.in_use = false;
    if (block.events.empty()) make_free(ptr, block);
    else pending_.push_back(ptr);
  }

  // An asynchronous copy queued on `stream` of `device` reads or writes the
  // block at ptr: record an event there.
  void record_use(void* ptr, int device, StreamId stream) {
    const std::lock_guard<std::mutex> lock(mutex_);
    blocks_.at(ptr).events.emplace_back(device, devices_[static_cast<std::size_t>(device)]->record_event(stream));
  }

  // Releases the cached blocks whose copies are done (as empty_cache does
  // for device memory).
  void empty_cache() {
    const std::lock_guard<std::mutex> lock(mutex_);
    collect_finished();
    release_cached();
  }

  // Bytes in blocks handed out and not given back, and in cached free blocks.
  std::size_t allocated_bytes() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::size_t n = 0;
    for (const auto& [ptr, block] : blocks_)
      if (block.in_use) n += block.size;
    return n;
  }
  std::size_t cached_bytes() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }

 private:
  struct Block {
    std::size_t size;
    bool in_use;
    std::vector<std::pair<int, DeviceMemory::Event>> events;  // (device, event) of copies not known to be done
  };

  static std::size_t rounded(std::size_t nbytes) {
    std::size_t size = kMinBlockSize;
    while (size < nbytes) size *= 2;
    return size;
  }
  // Drops the completed events of freed blocks; those with none left are free.
  void collect_finished() {
    std::vector<void*> still;
    for (void* ptr : pending_) {
      Block& block = blocks_.at(ptr);
      std::erase_if(block.events, [&](const std::pair<int, DeviceMemory::Event>& e) {
        DeviceMemory& memory = *devices_[static_cast<std::size_t>(e.first)];
        if (!memory.event_completed(e.second)) return false;
        memory.destroy_event(e.second);
        return true;
      });
      if (block.events.empty()) make_free(ptr, block);
      else still.push_back(ptr);
    }
    pending_ = std::move(still);
  }
  void make_free(void* ptr, const Block& block) {
    free_[block.size].push_back(ptr);
    cached_ += block.size;
  }
  void release_cached() {
    for (auto& [size, ptrs] : free_)
      for (void* ptr : ptrs) {
        blocks_.erase(ptr);
        source_->release(ptr);
      }
    free_.clear();
    cached_ = 0;
  }

  std::unique_ptr<PinnedSource> source_;
  const std::vector<std::unique_ptr<DeviceMemory>>& devices_;
  std::unordered_map<void*, Block> blocks_;              // every block, in use or not
  std::map<std::size_t, std::vector<void*>> free_;       // free blocks by size
  std::vector<void*> pending_;                           // freed blocks with copies maybe running
  std::size_t cached_ = 0;
  mutable std::mutex mutex_;
};

}  // namespace tsr::detail::cuda
