// CPU memory: 64-byte aligned blocks, with a cache for large ones.
//
// A fresh large buffer costs its page faults on first write (about 50 ms for
// 64 MiB here, against 3 ms to rewrite a reused one), so blocks of 1 MiB and
// more are kept in size-class free lists when freed and handed out again;
// `tsr::empty_cache()` returns them to the system. Large blocks are 2 MiB
// aligned and advised as huge pages, which cuts the fault count further.
//
// Large blocks are mapped from the system directly, not taken from malloc.
// malloc serves a large request from free heap memory when it has some
// (after a program frees large buffers of its own, or libtorch's), and those
// pages were faulted in as 4 KiB pages before the advice: a 10M-parameter
// SGD step over such blocks took 1.2-1.27 times as long as over huge pages
// (bench/training), from the TLB misses of five streams. A fresh mapping is
// advised before its first touch, so it gets huge pages where the system
// has them.
#pragma once
#include <sys/mman.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace tsr::detail {

class CpuAllocator {
 public:
  static constexpr std::size_t kAlignment = 64;
  static constexpr std::size_t kLargeThreshold = std::size_t{1} << 20;
  static constexpr std::size_t kLargeAlignment = std::size_t{2} << 20;
  // Cached bytes beyond this are released instead of kept.
  static constexpr std::size_t kMaxCachedBytes = std::size_t{4} << 30;

  static CpuAllocator& instance() {
    static CpuAllocator alloc;
    return alloc;
  }

  void* allocate(std::size_t nbytes) {
    if (nbytes == 0) return nullptr;
    if (nbytes < kLargeThreshold) return small_cache().allocate(nbytes);
    const std::size_t cls = round_up(nbytes, kLargeAlignment);
    {
      std::lock_guard lock(mutex_);
      large_in_use_ += cls;
      auto it = free_.find(cls);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached_bytes_ -= cls;
        return p;
      }
    }
    return map_large(cls);
  }

  void deallocate(void* p, std::size_t nbytes) {
    if (!p) return;
    if (nbytes < kLargeThreshold) return small_cache().deallocate(p, nbytes);
    const std::size_t cls = round_up(nbytes, kLargeAlignment);
    std::lock_guard lock(mutex_);
    large_in_use_ -= cls;
    if (cached_bytes_ + cls > kMaxCachedBytes) return unmap_large(p, cls);
    free_[cls].push_back(p);
    cached_bytes_ += cls;
  }

  void empty_cache() {
    small_cache().release();
    std::lock_guard lock(mutex_);
    for (auto& [cls, blocks] : free_)
      for (void* p : blocks) unmap_large(p, cls);
    free_.clear();
    cached_bytes_ = 0;
  }

  std::size_t cached_bytes() const {
    std::lock_guard lock(mutex_);
    return cached_bytes_;
  }

  // Bytes of the large blocks (1 MiB and up) that tensors hold now. Counted
  // under the lock the large path takes anyway; small blocks are not
  // counted, which keeps their path free of shared writes.
  std::size_t large_bytes_in_use() const {
    std::lock_guard lock(mutex_);
    return large_in_use_;
  }

  ~CpuAllocator() { empty_cache(); }

 private:
  // Small blocks: per-thread free lists by power-of-two size class. glibc's
  // free of a few-KiB aligned block costs more than a tiny op's arithmetic
  // (it consolidates chunks), so freed blocks are kept for the next
  // allocation of their class, up to kPerClass blocks per class.
  class SmallCache {
   public:
    static constexpr int kClasses = 15;  // 64 B .. 1 MiB
    static constexpr std::size_t kPerClass = 32;
    void* allocate(std::size_t nbytes) {
      const int c = size_class(nbytes);
      if (alive_ && !free_[c].empty()) {
        void* p = free_[c].back();
        free_[c].pop_back();
        return p;
      }
      return aligned(kAlignment, std::size_t{64} << c);
    }
    void deallocate(void* p, std::size_t nbytes) {
      const int c = size_class(nbytes);
      if (alive_ && free_[c].size() < kPerClass) return free_[c].push_back(p);
      std::free(p);
    }
    void release() {
      for (auto& list : free_) {
        for (void* p : list) std::free(p);
        list.clear();
      }
    }
    SmallCache() { alive_ = true; }
    ~SmallCache() {
      release();
      alive_ = false;  // blocks freed after this (static tensors) go to free()
    }

   private:
    // The smallest c with 64 << c >= nbytes.
    static int size_class(std::size_t nbytes) {
      return nbytes <= 64 ? 0 : static_cast<int>(std::bit_width((nbytes - 1) >> 6));
    }
    std::vector<void*> free_[kClasses];
    static inline thread_local bool alive_ = false;
  };
  static SmallCache& small_cache() {
    thread_local SmallCache cache;
    return cache;
  }

  static std::size_t round_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }
  // `bytes` (a multiple of kLargeAlignment) at a kLargeAlignment boundary:
  // mapped with one alignment's slack, the slack unmapped again.
  static void* map_large(std::size_t bytes) {
    void* raw = mmap(nullptr, bytes + kLargeAlignment, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto start = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t begin = round_up(start, kLargeAlignment);
    if (begin != start) munmap(raw, begin - start);
    if (const std::uintptr_t tail = start + kLargeAlignment - begin) munmap(reinterpret_cast<void*>(begin + bytes), tail);
    void* p = reinterpret_cast<void*>(begin);
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
  }
  static void unmap_large(void* p, std::size_t bytes) { munmap(p, bytes); }

  static void* aligned(std::size_t alignment, std::size_t nbytes) {
    void* p = std::aligned_alloc(alignment, nbytes);
    if (!p) throw std::bad_alloc();
    return p;
  }

  mutable std::mutex mutex_;
  std::map<std::size_t, std::vector<void*>> free_;
  std::size_t cached_bytes_ = 0;
  std::size_t large_in_use_ = 0;
};

// Tensor handles (TensorImpl, StorageImpl and their shared_ptr control
// blocks) are made and dropped on every evaluation. A per-thread free list
// per node size turns each of those allocations into a few instructions
// instead of a malloc and a free, which is a third of a tiny op's cost.
template <std::size_t Size>
class NodeCache {
 public:
  static constexpr std::size_t kMaxNodes = 1024;
  static void* allocate() {
    NodeCache& c = instance();
    if (alive_ && c.head_) {
      Node* n = c.head_;
      c.head_ = n->next;
      --c.count_;
      return n;
    }
    return ::operator new(Size);
  }
  static void deallocate(void* p) {
    NodeCache& c = instance();
    if (alive_ && c.count_ < kMaxNodes) {
      c.head_ = new (p) Node{c.head_};
      ++c.count_;
      return;
    }
    ::operator delete(p);
  }
  NodeCache() { alive_ = true; }
  ~NodeCache() {
    alive_ = false;  // nodes freed after this (static tensors) go to delete
    while (head_) {
      Node* n = head_;
      head_ = n->next;
      ::operator delete(n);
    }
  }

 private:
  struct Node {
    Node* next;
  };
  static NodeCache& instance() {
    thread_local NodeCache cache;
    return cache;
  }
  Node* head_ = nullptr;
  std::size_t count_ = 0;
  static inline thread_local bool alive_ = false;
};

// The allocator for std::allocate_shared of handles (see NodeCache).
template <class T>
struct HandleAllocator {
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  static constexpr std::size_t kNodeSize = (sizeof(T) + 15) / 16 * 16;
  HandleAllocator() = default;
  template <class U>
  HandleAllocator(const HandleAllocator<U>&) {}  // NOLINT: rebinding
  T* allocate(std::size_t n) {
    if (n == 1) return static_cast<T*>(NodeCache<kNodeSize>::allocate());
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) {
    if (n == 1) return NodeCache<kNodeSize>::deallocate(p);
    ::operator delete(p);
  }
  template <class U>
  bool operator==(const HandleAllocator<U>&) const { return true; }
};

// std::make_shared through the handle cache.
template <class T, class... Args>
std::shared_ptr<T> make_handle(Args&&... args) {
  return std::allocate_shared<T>(HandleAllocator<T>{}, std::forward<Args>(args)...);
}

}  // namespace tsr::detail

namespace tsr {
// Returns the CPU blocks held in the cache to the system.
inline void empty_cache() { detail::CpuAllocator::instance().empty_cache(); }
}  // namespace tsr

namespace tsr {
// Bytes held by tensors in large CPU blocks (1 MiB and up, rounded up to
// 2 MiB): what a memory test or a user watching peak use wants to count.
inline std::size_t cpu_large_bytes_in_use() { return detail::CpuAllocator::instance().large_bytes_in_use(); }
}  // namespace tsr
