// The CUDA backend's host-side parts, run on the CPU: the caching allocator
// over emulated device memory (PyTorch's sizes, splitting, stream-ordered
// reuse, statistics and out-of-memory behaviour).
#include <doctest/doctest.h>

#include <cuda/caching_allocator.hpp>
#include <cuda/host_memory.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace tsr::cuda::detail;

namespace {

constexpr std::size_t MiB = 1 << 20;

// Device memory whose events complete only when the test says so: the
// cross-stream reuse rules need work that is still running.
class ControlledEvents final : public DeviceMemory {
 public:
  void* malloc(std::size_t nbytes) override { return host.malloc(nbytes); }
  void free(void* ptr) override { host.free(ptr); }
  std::pair<std::size_t, std::size_t> memory_info() override { return host.memory_info(); }
  Event record_event(StreamId stream) override {
    recorded.push_back(stream);
    completed.push_back(false);
    return reinterpret_cast<Event>(completed.size());  // 1-based index
  }
  bool event_completed(Event e) override { return completed[reinterpret_cast<std::uintptr_t>(e) - 1]; }
  void synchronize_event(Event e) override { completed[reinterpret_cast<std::uintptr_t>(e) - 1] = true; }
  void destroy_event(Event) override { ++destroyed; }

  HostMemory host{64 * MiB};
  std::vector<StreamId> recorded;
  std::vector<bool> completed;
  int destroyed = 0;
};

}  // namespace

TEST_CASE("sizes are rounded and segments sized as PyTorch's allocator does") {
  CHECK(round_size(1) == 512);
  CHECK(round_size(512) == 512);
  CHECK(round_size(513) == 1024);
  CHECK(segment_size(512) == 2 * MiB);        // small pool
  CHECK(segment_size(MiB) == 2 * MiB);
  CHECK(segment_size(MiB + 512) == 20 * MiB);  // large pool, shared segment
  CHECK(segment_size(10 * MiB - 512) == 20 * MiB);
  CHECK(segment_size(10 * MiB) == 10 * MiB);  // its own segment, rounded to 2 MiB
  CHECK(segment_size(11 * MiB) == 12 * MiB);
  CHECK(format_size(1024) == "1024 bytes");
  CHECK(format_size(1536) == "1.50 KiB");
  CHECK(format_size(MiB) == "1024.00 KiB");
  CHECK(format_size(20 * MiB) == "20.00 MiB");
  CHECK(format_size(std::size_t(3) << 30) == "3.00 GiB");
}

TEST_CASE("small requests share a segment, and a freed block is reused on its stream") {
  HostMemory device(64 * MiB);
  CachingAllocator alloc(device, 0);
  char* a = static_cast<char*>(alloc.allocate(1000, 0));
  char* b = static_cast<char*>(alloc.allocate(3000, 0));
  CHECK(device.malloc_count() == 1);
  CHECK(b == a + 1024);  // the best fit is the rest of the segment, split after a
  MemoryStats s = alloc.stats();
  CHECK(s.allocated_bytes[kAllPools].current == 1024 + 3072);
  CHECK(s.allocated_bytes[kSmallPool].current == 1024 + 3072);
  CHECK(s.allocated_bytes[kLargePool].current == 0);
  CHECK(s.reserved_bytes[kAllPools].current == int64_t(2 * MiB));
  CHECK(s.segment[kAllPools].current == 1);
  CHECK(s.allocation[kAllPools].current == 2);
  CHECK(s.inactive_split_bytes[kAllPools].current == int64_t(2 * MiB - 4096));

  alloc.deallocate(a);
  CHECK(alloc.allocate(800, 0) == a);  // 800 rounds to 1024: a's block fits exactly
  void* other = alloc.allocate(800, 7);  // another stream does not see stream 0's blocks
  CHECK(device.malloc_count() == 2);
  CHECK(alloc.allocate(0, 0) == nullptr);
  for (void* p : {static_cast<void*>(a), static_cast<void*>(b), other}) alloc.deallocate(p);
  CHECK(alloc.stats().allocated_bytes[kAllPools].current == 0);
}

TEST_CASE("freed neighbours merge back into a whole segment, which empty_cache returns") {
  HostMemory device(64 * MiB);
  CachingAllocator alloc(device, 0);
  void* a = alloc.allocate(512, 0);
  void* b = alloc.allocate(512, 0);
  void* c = alloc.allocate(512, 0);
  alloc.deallocate(b);
  CHECK(alloc.stats().inactive_split[kAllPools].current == 2);  // b, and the rest after c
  alloc.deallocate(a);                                           // merges with b
  CHECK(alloc.stats().inactive_split[kAllPools].current == 2);
  alloc.empty_cache();  // nothing whole to give back: c is in use
  CHECK(device.used() == 2 * MiB);
  alloc.deallocate(c);  // a+b, c and the rest are one block again
  MemoryStats s = alloc.stats();
  CHECK(s.inactive_split[kAllPools].current == 0);
  CHECK(s.inactive_split_bytes[kAllPools].current == 0);
  CHECK(s.allocated_bytes[kAllPools].current == 0);
  CHECK(s.allocated_bytes[kAllPools].allocated == 3 * 512);
  CHECK(s.allocated_bytes[kAllPools].freed == 3 * 512);
  CHECK(s.reserved_bytes[kAllPools].current == int64_t(2 * MiB));
  alloc.empty_cache();
  CHECK(device.used() == 0);
  s = alloc.stats();
  CHECK(s.reserved_bytes[kAllPools].current == 0);
  CHECK(s.reserved_bytes[kAllPools].peak == int64_t(2 * MiB));
  CHECK(s.segment[kAllPools].freed == 1);
}

TEST_CASE("large requests: shared 20 MiB segments, own segments from 10 MiB, split only above 1 MiB") {
  HostMemory device(256 * MiB);
  CachingAllocator alloc(device, 0);
  char* a = static_cast<char*>(alloc.allocate(5 * MiB, 0));
  char* b = static_cast<char*>(alloc.allocate(3 * MiB, 0));
  CHECK(b == a + 5 * MiB);  // from the same 20 MiB segment
  CHECK(alloc.stats().reserved_bytes[kLargePool].current == int64_t(20 * MiB));
  // 13 MiB: more than the 12 MiB left; its own 14 MiB segment, whose last
  // MiB is not split off.
  void* c = alloc.allocate(13 * MiB, 0);
  MemoryStats s = alloc.stats();
  CHECK(s.reserved_bytes[kLargePool].current == int64_t(34 * MiB));
  CHECK(s.allocated_bytes[kLargePool].current == int64_t(22 * MiB));  // 5 + 3 + 14
  CHECK(s.segment[kLargePool].current == 2);
  CHECK(alloc.allocate(11 * MiB, 0) == b + 3 * MiB);  // the 12 MiB left fits; its 1 MiB rest stays with it
  CHECK(alloc.stats().allocated_bytes[kLargePool].current == int64_t(34 * MiB));
  alloc.deallocate(b + 3 * MiB);
  alloc.deallocate(c);
  alloc.deallocate(a);
  alloc.deallocate(b);
  alloc.empty_cache();
  CHECK(device.used() == 0);
}

TEST_CASE("out of memory: the cache is freed and the allocation retried once, then PyTorch's error") {
  HostMemory device(30 * MiB);
  CachingAllocator alloc(device, 0);
  alloc.deallocate(alloc.allocate(5 * MiB, 0));  // a cached 20 MiB segment
  void* held = alloc.allocate(22 * MiB, 0);     // 20 + 22 > 30: frees the cache, then fits
  MemoryStats s = alloc.stats();
  CHECK(s.num_alloc_retries == 1);
  CHECK(s.reserved_bytes[kAllPools].current == int64_t(22 * MiB));
  std::string message;
  try {
    alloc.allocate(2 * MiB, 0);  // a 20 MiB segment: 22 + 20 > 30
  } catch (const tsr::OutOfMemoryError& e) {
    message = e.what();
  }
  CHECK(message ==
        "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 30.00 MiB total capacity; 22.00 MiB already "
        "allocated; 8.00 MiB free; 22.00 MiB reserved in total by tessera)");
  CHECK(alloc.stats().num_ooms == 1);
  CHECK(alloc.stats().num_alloc_retries == 2);
  alloc.deallocate(held);
}

TEST_CASE("a block used on another stream is reused only after that stream's work is done") {
  ControlledEvents device;
  CachingAllocator alloc(device, 0);
  void* a = alloc.allocate(4096, 1);
  alloc.record_stream(a, 2);
  alloc.record_stream(a, 1);  // its own stream needs no event
  alloc.deallocate(a);
  CHECK(device.recorded == std::vector<StreamId>{2});
  MemoryStats s = alloc.stats();
  CHECK(s.allocated_bytes[kAllPools].current == 0);
  CHECK(s.active_bytes[kAllPools].current == 4096);  // still in use on stream 2
  void* b = alloc.allocate(4096, 1);
  CHECK(b != a);  // stream 2 may still be reading a
  device.completed[0] = true;
  alloc.deallocate(b);
  CHECK(alloc.allocate(4096, 1) == a);  // a came back (the best fit, first in address order)
  CHECK(device.destroyed == 1);
  CHECK(alloc.stats().active_bytes[kAllPools].current == 4096);
}

TEST_CASE("peaks reset to the current values; a pointer the allocator did not give is an error") {
  HostMemory device(64 * MiB);
  CachingAllocator alloc(device, 0);
  void* a = alloc.allocate(MiB, 0);
  void* b = alloc.allocate(MiB / 2, 0);
  alloc.deallocate(b);
  CHECK(alloc.stats().allocated_bytes[kAllPools].peak == int64_t(MiB + MiB / 2));
  alloc.reset_peak_stats();
  CHECK(alloc.stats().allocated_bytes[kAllPools].peak == int64_t(MiB));
  int local = 0;
  CHECK_THROWS_WITH_AS(alloc.deallocate(&local), doctest::Contains("invalid device pointer"), tsr::Error);
  alloc.deallocate(a);
}
