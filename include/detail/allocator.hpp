// CPU memory: 64-byte aligned blocks, with a cache for large ones.
//
// A fresh large buffer costs its page faults on first write (about 50 ms for
// 64 MiB here, against 3 ms to rewrite a reused one), so blocks of 1 MiB and
// more are kept in size-class free lists when freed and handed out again;
// `tsr::empty_cache()` returns them to the system. Large blocks are 2 MiB
// aligned and advised as huge pages, which cuts the fault count further.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <map>
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
    if (nbytes < kLargeThreshold) return aligned(kAlignment, round_up(nbytes, kAlignment));
    const std::size_t cls = round_up(nbytes, kLargeAlignment);
    {
      std::lock_guard lock(mutex_);
      auto it = free_.find(cls);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached_bytes_ -= cls;
        return p;
      }
    }
    void* p = aligned(kLargeAlignment, cls);
#ifdef MADV_HUGEPAGE
    madvise(p, cls, MADV_HUGEPAGE);
#endif
    return p;
  }

  void deallocate(void* p, std::size_t nbytes) {
    if (!p) return;
    if (nbytes < kLargeThreshold) return std::free(p);
    const std::size_t cls = round_up(nbytes, kLargeAlignment);
    std::lock_guard lock(mutex_);
    if (cached_bytes_ + cls > kMaxCachedBytes) return std::free(p);
    free_[cls].push_back(p);
    cached_bytes_ += cls;
  }

  void empty_cache() {
    std::lock_guard lock(mutex_);
    for (auto& [cls, blocks] : free_)
      for (void* p : blocks) std::free(p);
    free_.clear();
    cached_bytes_ = 0;
  }

  std::size_t cached_bytes() const {
    std::lock_guard lock(mutex_);
    return cached_bytes_;
  }

  ~CpuAllocator() { empty_cache(); }

 private:
  static std::size_t round_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }
  static void* aligned(std::size_t alignment, std::size_t nbytes) {
    void* p = std::aligned_alloc(alignment, nbytes);
    if (!p) throw std::bad_alloc();
    return p;
  }

  mutable std::mutex mutex_;
  std::map<std::size_t, std::vector<void*>> free_;
  std::size_t cached_bytes_ = 0;
};

}  // namespace tsr::detail

namespace tsr {
// Returns the CPU blocks held in the cache to the system.
inline void empty_cache() { detail::CpuAllocator::instance().empty_cache(); }
}  // namespace tsr
