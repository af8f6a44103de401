// The caching allocator for device memory, with PyTorch's policy.
//
// cudaMalloc and cudaFree synchronize the device and take tens of
// microseconds; a training step allocates and frees thousands of tensors.
// So freed blocks are kept and handed out again, as PyTorch's
// CUDACachingAllocator does, with the same rules (users read its numbers in
// memory_summary() and compare them with PyTorch's):
//
// - Sizes are rounded up to 512 bytes. Requests of at most 1 MiB come from
//   the small pool, whose segments (the device allocations) are 2 MiB; larger
//   ones from the large pool, whose segments are 20 MiB for requests under
//   10 MiB and the request rounded up to 2 MiB otherwise.
// - A request takes the smallest free block of its pool that was used on the
//   same stream and is large enough (the best fit); a block larger than
//   needed is split, when the rest is at least 512 bytes (small pool) or
//   more than 1 MiB (large pool). Freed blocks merge with free neighbours of
//   their segment.
// - Blocks are stream-ordered: a block freed on its own stream can be reused
//   by that stream at once (later work on the stream runs after the work that
//   used it). A block also used on other streams (record_stream) is reused
//   only once events recorded on those streams at the free have completed.
// - When the device is out of memory, the cached whole segments are freed
//   and the allocation tried once more; if that fails too, OutOfMemoryError
//   says what was asked for and what is held.
//
// The device calls go through DeviceMemory: the CUDA runtime under nvcc
// (cuda/cuda_memory.hpp), host memory in the emulated build that tests the
// device path on machines without a GPU (cuda/host_memory.hpp).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <iomanip>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../errors.hpp"

namespace tsr::detail::cuda {

// A stream as an integer (cudaStream_t's value; 0 is the default stream).
using StreamId = std::uintptr_t;

// The device calls the allocator makes.
class DeviceMemory {
 public:
  using Event = void*;
  virtual ~DeviceMemory() = default;
  // nbytes of device memory, or null when the device has too little free.
  virtual void* malloc(std::size_t nbytes) = 0;
  virtual void free(void* ptr) = 0;
  // The device's free and total memory in bytes (cudaMemGetInfo).
  virtual std::pair<std::size_t, std::size_t> memory_info() = 0;
  // An event recorded on a stream now; whether it has completed; waiting
  // for it; releasing it.
  virtual Event record_event(StreamId stream) = 0;
  virtual bool event_completed(Event event) = 0;
  virtual void synchronize_event(Event event) = 0;
  virtual void destroy_event(Event event) = 0;
};

inline constexpr std::size_t kMinBlockSize = 512;          // every size is a multiple of this
inline constexpr std::size_t kSmallSize = 1 << 20;         // largest request of the small pool
inline constexpr std::size_t kSmallBuffer = 2 << 20;       // a small pool's segment
inline constexpr std::size_t kLargeBuffer = 20 << 20;      // a large pool's segment for mid-sized requests
inline constexpr std::size_t kMinLargeAlloc = 10 << 20;    // requests from here get their own segment
inline constexpr std::size_t kRoundLarge = 2 << 20;        // which is rounded up to this

inline std::size_t round_size(std::size_t size) {
  return size < kMinBlockSize ? kMinBlockSize : kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize);
}
// The size of the segment made for a (rounded) request the pools cannot serve.
inline std::size_t segment_size(std::size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((size + kRoundLarge - 1) / kRoundLarge);
}

// PyTorch's byte counts in messages: "512 bytes", "1.50 KiB", "20.00 MiB".
inline std::string format_size(std::size_t size) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2);
  if (size <= 1024) os << size << " bytes";
  else if (size <= 1048576) os << static_cast<double>(size) / 1024.0 << " KiB";
  else if (size <= 1073741824) os << static_cast<double>(size) / 1048576.0 << " MiB";
  else os << static_cast<double>(size) / 1073741824.0 << " GiB";
  return os.str();
}

// One statistic as PyTorch keeps it: its current value, its peak since the
// last reset, and the totals added and taken away.
struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;

  void update(int64_t amount) {
    current += amount;
    peak = std::max(peak, current);
    if (amount > 0) allocated += amount;
    else freed -= amount;
  }
};
// Each statistic over both pools, the small pool and the large pool (the
// "all", "small_pool" and "large_pool" of torch.cuda.memory_stats).
enum StatPool : std::size_t { kAllPools = 0, kSmallPool = 1, kLargePool = 2 };
using StatArray = std::array<Stat, 3>;

struct MemoryStats {
  StatArray allocation;            // blocks handed out
  StatArray segment;               // device allocations held
  StatArray active;                // handed out, or freed and waiting for other streams
  StatArray inactive_split;        // free blocks that are part of a split segment
  StatArray allocated_bytes;
  StatArray reserved_bytes;
  StatArray active_bytes;
  StatArray inactive_split_bytes;  // memory empty_cache() cannot give back
  int64_t num_alloc_retries = 0;   // device allocations retried after freeing the cache
  int64_t num_ooms = 0;            // OutOfMemoryErrors thrown
};

class CachingAllocator {
 public:
  CachingAllocator(DeviceMemory& device, int device_index) : device_(device), device_index_(device_index) {}
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  ~CachingAllocator() { release_all(); }

  // nbytes of device memory for use on `stream` (null for 0 bytes).
  void* allocate(std::size_t nbytes, StreamId stream) {
    if (nbytes == 0) return nullptr;
    const std::lock_guard<std::mutex> lock(mutex_);
    process_events();
    const std::size_t size = round_size(nbytes);
    const bool small = size <= kSmallSize;
    Block* block = take_free_block(small ? small_ : large_, stream, size);
    if (!block) block = new_segment(stream, size, small);
    return hand_out(block, size);
  }

  // Gives back memory from allocate(). Reused at once on its stream; after
  // the other streams it was recorded on have done their work, on those.
  void deallocate(void* ptr) {
    if (!ptr) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = allocated_.find(ptr);
    tsr::detail::check(it != allocated_.end(), "invalid device pointer: ", ptr);
    Block* block = it->second;
    allocated_.erase(it);
    block->allocated = false;
    update(stats_.allocation, block, -1);
    update(stats_.allocated_bytes, block, -static_cast<int64_t>(block->size));
    if (block->stream_uses.empty()) {
      free_block(block);
    } else {
      for (const StreamId s : block->stream_uses) {
        pending_.push_back({device_.record_event(s), block});
        ++block->event_count;
      }
      block->stream_uses.clear();
    }
  }

  // Marks memory as used by another stream too (Tensor::record_stream).
  void record_stream(void* ptr, StreamId stream) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = allocated_.find(ptr);
    tsr::detail::check(it != allocated_.end(), "invalid device pointer: ", ptr);
    if (stream != it->second->stream) it->second->stream_uses.insert(stream);
  }

  // Gives every cached segment that holds no block in use back to the
  // device (torch.cuda.empty_cache), after waiting for pending events.
  void empty_cache() {
    const std::lock_guard<std::mutex> lock(mutex_);
    release_cached_segments();
  }

  MemoryStats stats() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }
  // Peaks start again from the current values (torch.cuda.reset_peak_memory_stats).
  void reset_peak_stats() {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (StatArray* a : {&stats_.allocation, &stats_.segment, &stats_.active, &stats_.inactive_split,
                         &stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.active_bytes,
                         &stats_.inactive_split_bytes})
      for (Stat& s : *a) s.peak = s.current;
  }

  int device_index() const { return device_index_; }

 private:
  struct Block {
    std::size_t size = 0;
    char* ptr = nullptr;
    StreamId stream = 0;
    bool small = false;
    bool allocated = false;
    int event_count = 0;             // events to complete before it is free
    Block* prev = nullptr;           // neighbours in the same segment
    Block* next = nullptr;
    std::set<StreamId> stream_uses;  // other streams it was recorded on

    bool is_split() const { return prev || next; }
  };
  // Free blocks by stream, then size, then address: the best fit on a
  // stream is the first not smaller than the request.
  struct ByStreamSize {
    bool operator()(const Block* a, const Block* b) const {
      if (a->stream != b->stream) return a->stream < b->stream;
      if (a->size != b->size) return a->size < b->size;
      return a->ptr < b->ptr;
    }
  };
  using Pool = std::set<Block*, ByStreamSize>;

  Pool& pool_of(const Block* block) { return block->small ? small_ : large_; }

  void update(StatArray& stat, const Block* block, int64_t amount) {
    stat[kAllPools].update(amount);
    stat[block->small ? kSmallPool : kLargePool].update(amount);
  }

  Block* take_free_block(Pool& pool, StreamId stream, std::size_t size) {
    Block key;
    key.stream = stream;
    key.size = size;
    const auto it = pool.lower_bound(&key);
    if (it == pool.end() || (*it)->stream != stream) return nullptr;
    Block* block = *it;
    pool.erase(it);
    return block;
  }

  // A new segment for the request, after freeing the cache once if the
  // device is full; OutOfMemoryError if it still is.
  Block* new_segment(StreamId stream, std::size_t size, bool small) {
    const std::size_t nbytes = segment_size(size);
    void* ptr = device_.malloc(nbytes);
    if (!ptr) {
      release_cached_segments();
      ++stats_.num_alloc_retries;
      ptr = device_.malloc(nbytes);
    }
    if (!ptr) {
      ++stats_.num_ooms;
      const auto [free, total] = device_.memory_info();
      throw OutOfMemoryError(tsr::detail::str(
          "CUDA out of memory. Tried to allocate ", format_size(nbytes), " (GPU ", device_index_, "; ",
          format_size(total), " total capacity; ", format_size(static_cast<std::size_t>(stats_.allocated_bytes[kAllPools].current)),
          " already allocated; ", format_size(free), " free; ",
          format_size(static_cast<std::size_t>(stats_.reserved_bytes[kAllPools].current)), " reserved in total by tessera)"));
    }
    auto* block = new Block;
    block->size = nbytes;
    block->ptr = static_cast<char*>(ptr);
    block->stream = stream;
    block->small = small;
    update(stats_.segment, block, 1);
    update(stats_.reserved_bytes, block, static_cast<int64_t>(nbytes));
    return block;
  }

  // Hands out the front `size` bytes of a free block, splitting off the
  // rest into the pool where it is large enough to be worth keeping apart.
  void* hand_out(Block* block, std::size_t size) {
    const bool already_split = block->is_split();
    const std::size_t rest = block->size - size;
    if (block->small ? rest >= kMinBlockSize : rest > kSmallSize) {
      auto* remaining = new Block;
      remaining->size = rest;
      remaining->ptr = block->ptr + size;
      remaining->stream = block->stream;
      remaining->small = block->small;
      remaining->prev = block;
      remaining->next = block->next;
      if (remaining->next) remaining->next->prev = remaining;
      block->next = remaining;
      block->size = size;
      pool_of(remaining).insert(remaining);
      if (already_split) {  // a free split block shrinks by `size`
        update(stats_.inactive_split_bytes, block, -static_cast<int64_t>(size));
      } else {  // a whole segment becomes a split one with a free part
        update(stats_.inactive_split_bytes, block, static_cast<int64_t>(rest));
        update(stats_.inactive_split, block, 1);
      }
    } else if (already_split) {  // a free split block is handed out whole
      update(stats_.inactive_split_bytes, block, -static_cast<int64_t>(block->size));
      update(stats_.inactive_split, block, -1);
    }
    block->allocated = true;
    allocated_.emplace(block->ptr, block);
    const auto bytes = static_cast<int64_t>(block->size);
    update(stats_.allocation, block, 1);
    update(stats_.allocated_bytes, block, bytes);
    update(stats_.active, block, 1);
    update(stats_.active_bytes, block, bytes);
    return block->ptr;
  }

  // A block whose work is done goes back to its pool, merged with free
  // neighbours.
  void free_block(Block* block) {
    Pool& pool = pool_of(block);
    const auto size = static_cast<int64_t>(block->size);
    int64_t split_blocks = 0, split_bytes = 0;
    for (Block* neighbour : {block->prev, block->next}) {
      if (!neighbour || neighbour->allocated || neighbour->event_count > 0) continue;
      split_blocks -= 1;
      split_bytes -= static_cast<int64_t>(neighbour->size);
      pool.erase(neighbour);
      if (neighbour == block->prev) {
        block->ptr = neighbour->ptr;
        block->prev = neighbour->prev;
        if (block->prev) block->prev->next = block;
      } else {
        block->next = neighbour->next;
        if (block->next) block->next->prev = block;
      }
      block->size += neighbour->size;
      delete neighbour;
    }
    pool.insert(block);
    if (block->is_split()) {
      split_blocks += 1;
      split_bytes += static_cast<int64_t>(block->size);
    }
    update(stats_.inactive_split, block, split_blocks);
    update(stats_.inactive_split_bytes, block, split_bytes);
    update(stats_.active, block, -1);
    update(stats_.active_bytes, block, -size);
  }

  // Frees the blocks whose other streams have finished with them.
  void process_events() {
    for (std::size_t i = 0; i < pending_.size();) {
      auto [event, block] = pending_[i];
      if (!device_.event_completed(event)) {
        ++i;
        continue;
      }
      device_.destroy_event(event);
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      if (--block->event_count == 0) free_block(block);
    }
  }

  void release_cached_segments() {
    for (auto& [event, block] : pending_) {
      device_.synchronize_event(event);
      device_.destroy_event(event);
      if (--block->event_count == 0) free_block(block);
    }
    pending_.clear();
    for (Pool* pool : {&small_, &large_}) {
      for (auto it = pool->begin(); it != pool->end();) {
        Block* block = *it;
        if (block->is_split()) {
          ++it;
          continue;
        }
        it = pool->erase(it);
        device_.free(block->ptr);
        update(stats_.segment, block, -1);
        update(stats_.reserved_bytes, block, -static_cast<int64_t>(block->size));
        delete block;
      }
    }
  }

  // At exit: the cache goes back to the device; the memory of blocks still
  // in use is left to the process's end (their tensors may outlive the
  // allocator), only their bookkeeping goes.
  void release_all() {
    try {
      release_cached_segments();
    } catch (...) {  // a device already torn down at exit
    }
    std::set<Block*> blocks(small_.begin(), small_.end());
    blocks.insert(large_.begin(), large_.end());
    for (auto& [ptr, block] : allocated_) {
      for (Block* b = block; b; b = b->prev) blocks.insert(b);
      for (Block* b = block; b; b = b->next) blocks.insert(b);
    }
    for (Block* block : blocks) delete block;
  }

  DeviceMemory& device_;
  int device_index_;
  mutable std::mutex mutex_;
  Pool small_, large_;
  std::unordered_map<void*, Block*> allocated_;
  std::vector<std::pair<DeviceMemory::Event, Block*>> pending_;
  MemoryStats stats_;
};

}  // namespace tsr::detail::cuda
