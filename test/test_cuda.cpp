// The CUDA backend, run on the CPU: the caching allocator over emulated
// device memory (PyTorch's sizes, splitting, stream-ordered reuse,
// statistics and out-of-memory behaviour); the arguments of cuBLAS's
// column-major products for row-major strided matrices, checked against
// cuBLAS's documented semantics; and, where Thrust is found, the device's
// elementwise evaluation run by Thrust's CPP device system against the CPU's.
#include <doctest/doctest.h>

#include <cuda/caching_allocator.hpp>
#include <cuda/gemm_layout.hpp>
#include <cuda/host_gemm.hpp>
#include <cuda/host_memory.hpp>
#include <cuda/memory_summary.hpp>
#include <cuda/pinned_allocator.hpp>

#include "cuda/gemm_cases.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace tsr::detail::cuda;

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

TEST_CASE("pinned host memory: sizes rounded to powers of two, a freed block reused once its copies are done") {
  std::vector<std::unique_ptr<DeviceMemory>> devices;
  devices.push_back(std::make_unique<ControlledEvents>());
  auto& device = static_cast<ControlledEvents&>(*devices[0]);
  PinnedAllocator pinned(std::make_unique<HostPinnedSource>(), devices);
  CHECK(pinned.allocate(0) == nullptr);
  void* a = pinned.allocate(3000);  // a 4096-byte block
  CHECK(pinned.allocated_bytes() == 4096);
  pinned.deallocate(a);
  CHECK(pinned.allocated_bytes() == 0);
  CHECK(pinned.cached_bytes() == 4096);
  CHECK(pinned.allocate(4096) == a);  // the cached block, at once: no copy used it
  CHECK(pinned.cached_bytes() == 0);
  pinned.record_use(a, 0, 7);  // an asynchronous copy on stream 7 reads it
  CHECK(device.recorded == std::vector<StreamId>{7});
  pinned.deallocate(a);
  void* b = pinned.allocate(2500);
  CHECK(b != a);  // the copy may still be reading a
  device.completed[0] = true;
  pinned.deallocate(b);
  void* c = pinned.allocate(4000);
  CHECK((c == a || c == b));  // both are free now
  CHECK(device.destroyed == 1);
  CHECK(pinned.cached_bytes() == 4096);
  CHECK(pinned.allocate(4096) != c);  // the other one
  pinned.empty_cache();               // nothing cached: both are in use
  CHECK(pinned.allocated_bytes() == 8192);
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

TEST_CASE("cuBLAS's column-major arguments compute the row-major product for every BLAS layout, without copies") {
  using namespace gemm_cases;
  const int cases = for_each_case([](int64_t batch, int64_t m, int64_t n, int64_t k, Layout la, Layout lb) {
    StridedMatrices<const double> a{}, b{};
    const auto da = fill(batch, m, k, la, a, 1);
    const auto db = fill(batch, k, n, lb, b, 2);
    std::vector<double> dc(static_cast<std::size_t>(batch * m * (n + 1)), -1.0);
    const StridedMatrices<double> c{dc.data(), m * (n + 1), n + 1, 1};  // rows padded by one
    const auto g = column_major_gemm<double>(batch, m, n, k, a, b, c);
    REQUIRE(g.has_value());
    CHECK(g->first == b.data);  // operands passed as they are
    CHECK(g->second == a.data);
    host_gemm_strided_batched(*g, 1.0, 0.0);
    for (int64_t x = 0; x < batch; ++x)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          REQUIRE(dc[static_cast<std::size_t>(x * c.batch_stride + i * c.row_stride + j)] ==
                  product_element(a, b, k, x, i, j));
  });
  CHECK(cases == 125);
}

TEST_CASE("cuBLAS's arguments: no call for layouts it cannot read") {
  std::vector<double> d(64);
  const StridedMatrices<const double> ok{d.data(), 0, 4, 1};
  const StridedMatrices<const double> doubly_strided{d.data(), 0, 8, 2};
  StridedMatrices<double> c{d.data(), 0, 4, 1};
  CHECK(column_major_gemm<double>(1, 4, 4, 4, ok, ok, c).has_value());
  CHECK_FALSE(column_major_gemm<double>(1, 4, 4, 4, doubly_strided, ok, c).has_value());
  CHECK_FALSE(column_major_gemm<double>(1, 4, 4, 4, ok, doubly_strided, c).has_value());
  c.col_stride = 4;  // C stored column by column
  c.row_stride = 1;
  CHECK_FALSE(column_major_gemm<double>(1, 4, 4, 4, ok, ok, c).has_value());
}

namespace {

// (current, peak, allocated, freed) for all pools, the small pool, the large pool.
using Values = std::array<std::array<int64_t, 4>, 3>;
void set(StatArray& stat, const Values& v) {
  for (std::size_t pool = 0; pool < 3; ++pool) stat[pool] = {v[pool][0], v[pool][1], v[pool][2], v[pool][3]};
}
constexpr int64_t K = 1024, M = K * K, G = M * K, T = G * K;

}  // namespace

TEST_CASE("memory_summary prints torch.cuda.memory_summary's table") {
  // The statistics of tools/make_golden.py's CUDA_SUMMARY_CASES.
  MemoryStats small;
  set(small.allocation, {{{2, 3, 5, 3}, {0, 1, 1, 1}, {2, 2, 4, 2}}});
  set(small.segment, {{{1, 2, 2, 1}, {0, 1, 1, 1}, {1, 1, 1, 0}}});
  set(small.active, {{{2, 3, 5, 3}, {0, 1, 1, 1}, {2, 2, 4, 2}}});
  set(small.inactive_split, {{{1, 1, 2, 1}, {0, 0, 0, 0}, {1, 1, 2, 1}}});
  set(small.allocated_bytes, {{{4096, 5 * M, 5 * M + 5120, 5 * M + 1024}, {0, 5 * M, 5 * M, 5 * M}, {4096, 4096, 5120, 1024}}});
  set(small.reserved_bytes, {{{2 * M, 22 * M, 22 * M, 20 * M}, {0, 20 * M, 20 * M, 20 * M}, {2 * M, 2 * M, 2 * M, 0}}});
  set(small.active_bytes, {{{4096, 5 * M, 5 * M + 5120, 5 * M + 1024}, {0, 5 * M, 5 * M, 5 * M}, {4096, 4096, 5120, 1024}}});
  set(small.inactive_split_bytes,
      {{{2 * M - 4096, 2 * M - 512, 2 * M - 512, 3584}, {0, 0, 0, 0}, {2 * M - 4096, 2 * M - 512, 2 * M - 512, 3584}}});

  MemoryStats large;  // every unit prefix
  large.num_ooms = 2;
  large.num_alloc_retries = 17;
  set(large.allocation, {{{812345, 1234567, 98765432, 97953087}, {12345, 800000, 5000000, 4987655},
                          {800000, 900000, 93765432, 92965432}}});
  set(large.segment, {{{700, 800, 900, 200}, {500, 600, 700, 200}, {200, 200, 200, 0}}});
  set(large.active, {{{812345, 1234567, 98765432, 97953087}, {12345, 800000, 5000000, 4987655},
                      {800000, 900000, 93765432, 92965432}}});
  set(large.inactive_split, {{{749999, 750000, 750001, 2}, {0, 1, 1, 1}, {749999, 750000, 750000, 1}}});
  set(large.allocated_bytes,
      {{{40 * G, 70 * G, 5 * T, 5 * T - 40 * G}, {39 * G, 69 * G, 3 * T, 3 * T}, {G, G, 2 * T, 2 * T}}});
  set(large.reserved_bytes, {{{786431, 786432, 805306368, 1}, {0, 1023, 1024, 1024}, {786431, 786431, 805305344, 0}}});
  set(large.active_bytes,
      {{{767 * K, 768 * K, 3 * T * K, T * K}, {0, 767, 768, 768}, {767 * K, 768 * K, 3 * T * K, T * K}}});
  set(large.inactive_split_bytes,
      {{{123456789, 987654321, 8 * G, M}, {0, 0, 0, 0}, {123456789, 987654321, 8 * G, M}}});

  std::ifstream file(std::string(TSR_GOLDEN_DIR) + "/cuda_memory_summary.txt");
  std::stringstream golden;
  golden << file.rdbuf();
  REQUIRE(!golden.str().empty());
  CHECK(memory_summary(small, 0) + memory_summary(large, 3) == golden.str());
}

TEST_CASE("memory_summary of a real sequence: the allocator's statistics in the table") {
  HostMemory device(64 * MiB);
  CachingAllocator alloc(device, 0);
  void* a = alloc.allocate(3 * MiB, 0);
  const std::string text = memory_summary(alloc.stats(), 0);
  CHECK(text.find("| Allocated memory      |    3072 KB |    3072 KB |    3072 KB |       0 B  |") != std::string::npos);
  CHECK(text.find("| GPU reserved memory   |   20480 KB |   20480 KB |   20480 KB |       0 B  |") != std::string::npos);
  alloc.deallocate(a);
}

#if TSR_TEST_THRUST
#include <tessera.hpp>  // with the backend: cuda/elementwise.hpp and cuda/reduce.hpp
#include <nn/nn.hpp>
#include <optim/optim.hpp>
#include <optim/serialize.hpp>
#include <nn/serialize.hpp>

#include <cstdio>
#include <unistd.h>

namespace {

// src written by the device path into a tensor laid out like `like`
// (values first set to a sentinel), next to the CPU's evaluation.
template <class T, class E>
std::pair<tsr::Tensor<T>, tsr::Tensor<T>> both_ways(const E& src, const tsr::Tensor<T>& like) {
  tsr::Tensor<T> device_out = like;
  device_out.fill_(T(77));
  const auto plan = tsr::detail::strided_plan(device_out.sizes(), device_out, src);
  write_elements(device_out, src, plan);
  tsr::Tensor<T> cpu = src;
  return {device_out, cpu};
}

}  // namespace

TEST_CASE("device elementwise evaluation (Thrust, emulated on the CPU) gives the CPU's results") {
  using namespace tsr;
  const auto a = arange<float>(-6.f, 6.f).view({3, 4});
  const auto b = arange<float>(1.f, 5.f);
  const auto col = arange<float>(0.f, 3.f).view({3, 1});
  SUBCASE("broadcast operands, contiguous output") {
    const auto [dev, cpu] = both_ways(a * b + col - 2.f, empty<float>({3, 4}));
    CHECK(equal(dev, cpu));
  }
  SUBCASE("a transposed operand into a transposed output") {
    const auto [dev, cpu] = both_ways(a.t() / b.view({4, 1}), empty<float>({3, 4}).t());
    CHECK(equal(dev, cpu));
  }
  SUBCASE("strided slices and a 3-d broadcast") {
    const auto big = arange<double>(0., 60.).view({3, 4, 5});
    const auto sliced = big.slice(2, 0, 5, 2);  // [3, 4, 3], stride 2 inside
    const auto row = arange<double>(0., 3.).view({1, 1, 3});
    const auto [dev, cpu] = both_ways(sliced * row - sliced, empty<double>({3, 4, 3}));
    CHECK(equal(dev, cpu));
  }
  SUBCASE("transcendental functions (scalar forms, within float rounding)") {
    const auto [dev, cpu] = both_ways(exp(sin(a) * 0.5f) + tanh(b) * log1p(abs(a)), empty<float>({3, 4}));
    CHECK(allclose(dev, cpu, 1e-6, 1e-6));
  }
  SUBCASE("comparisons, where and casts") {
    const auto [dev, cpu] = both_ways(where(a > 0.f, a, -a * 2.f), empty<float>({3, 4}));
    CHECK(equal(dev, cpu));
    const auto [dev_i, cpu_i] = both_ways(cast<int32_t>(a * 3.f) % 4, empty<int32_t>({3, 4}));
    CHECK(equal(dev_i, cpu_i));
    const auto [dev_b, cpu_b] = both_ways(a >= b, empty<bool>({3, 4}));
    CHECK(equal(dev_b, cpu_b));
  }
  SUBCASE("a 0-d output and an empty one") {
    const auto [dev, cpu] = both_ways(full<float>({}, 3.f) * 2.f, empty<float>({}));
    CHECK(dev.item() == 6.f);
    const auto [dev_e, cpu_e] = both_ways(empty<float>({0, 4}) + 1.f, empty<float>({0, 4}));
    CHECK(dev_e.numel() == 0);
  }
}

TEST_CASE("device full reductions (Thrust, emulated on the CPU) give the CPU's") {
  using namespace tsr;
  using tsr::detail::MaxReducer;
  using tsr::detail::MinReducer;
  using tsr::detail::ProdReducer;
  using tsr::detail::SumReducer;
  const auto a = arange<float>(-6.f, 6.f).view({3, 4});
  const auto b = arange<float>(1.f, 5.f);
  // Small integers: every partial sum is exact, whatever the order.
  CHECK(reduce_elements<SumReducer, float>(a * b + 1.f) == sum(a * b + 1.f).item());
  CHECK(reduce_elements<SumReducer, double>(a.t() * 2.f) == -12.0);
  CHECK(reduce_elements<ProdReducer, float>(b * b) == 576.f);
  CHECK(reduce_elements<MaxReducer, float>(a - b) == amax(a - b).item());
  CHECK(reduce_elements<MinReducer, float>(a.t() * b.view({4, 1})) == amin(a.t() * b.view({4, 1})).item());
  CHECK(reduce_elements<SumReducer, int64_t>(a > 0.f) == 5);
  CHECK(reduce_elements<tsr::detail::AllReducer, bool>(b > 0.f));
  CHECK_FALSE(reduce_elements<tsr::detail::AllReducer, bool>(a > -6.f));
  // NaN propagates through max and min, as on the CPU.
  const auto with_nan = where(a == 2.f, full<float>({}, std::numeric_limits<float>::quiet_NaN()), a);
  CHECK(std::isnan(reduce_elements<MaxReducer, float>(with_nan)));
  CHECK(std::isnan(reduce_elements<MinReducer, float>(with_nan)));
  // Empty: the identity.
  CHECK(reduce_elements<SumReducer, float>(empty<float>({0, 3}) * 2.f) == 0.f);
  CHECK(reduce_elements<MaxReducer, float>(empty<float>({0})) == -std::numeric_limits<float>::infinity());
}

namespace {
// A run of positions [first, last]; combining two runs is in order only when
// the second starts where the first ends. A reduction whose combinations
// are all in order ends with the whole run.
struct Run {
  int64_t first, last;
  bool in_order;
};
struct RunReducer {
  static Run combine(Run x, Run y) { return {x.first, y.last, x.in_order && y.in_order && x.last + 1 == y.first}; }
};
}  // namespace

TEST_CASE("the device reductions' pairwise combiner combines every value once, in order") {
  // Past 16 values (one block), 2048 (the pairwise levels) and in between,
  // with a partial block at the end.
  for (const int64_t n : {1, 15, 16, 17, 255, 2048, 2049, 4096 + 16 * 3 + 5, 40000}) {
    tsr::detail::cuda::PairwiseCombiner<RunReducer, Run> acc;
    for (int64_t i = 0; i < n; ++i) acc.push({i, i, true}, i);
    const Run all = acc.finish({-1, -1, false});
    CHECK(all.first == 0);
    CHECK(all.last == n - 1);
    CHECK(all.in_order);
  }
  tsr::detail::cuda::PairwiseCombiner<RunReducer, Run> none;
  CHECK_FALSE(none.finish({-1, -1, false}).in_order);  // nothing pushed: the identity
  // 10^5 tenths in float: pairwise within groups of 2048, so the error stays
  // near float's epsilon (one running float sum gives 9998.56).
  tsr::detail::cuda::PairwiseCombiner<tsr::detail::SumReducer, float> tenths;
  for (int i = 0; i < 100000; ++i) tenths.push(0.1f, i);
  CHECK(tenths.finish(0.f) == doctest::Approx(10000.0).epsilon(1e-5));
}

// ----- device tensors (the emulated build: two devices of host memory) -------

namespace {

// The same tensor on the CPU and on a device.
template <class T>
std::pair<tsr::Tensor<T>, tsr::Tensor<T>> on_both(const tsr::Tensor<T>& cpu, tsr::Device device = tsr::cuda(0)) {
  return {cpu, cpu.to(device)};
}

// Evaluated on a device, copied back: the same bits as the CPU's evaluation.
template <class T>
bool same_as_cpu(const tsr::Tensor<T>& device_result, const tsr::Tensor<T>& cpu_result) {
  return device_result.device() == tsr::Device(tsr::cuda(0)) && device_result.sizes() == cpu_result.sizes() &&
         device_result.to_vector() == cpu_result.to_vector();
}

}  // namespace

TEST_CASE("device tensors: created on a device, copied both ways, printed with their device") {
  using namespace tsr;
  REQUIRE(tsr::cuda::is_available());
  CHECK(tsr::cuda::device_count() == 2);
  const Device one = tsr::cuda(1);
  CHECK((one.is_cuda() && one.index == 1 && one != kCPU && one == tsr::cuda(1)));
  std::ostringstream name;
  name << tsr::cuda(1) << " " << kCPU;
  CHECK(name.str() == "cuda:1 cpu");
  const auto host = arange<float>(0.f, 12.f).view({3, 4});
  const Tensor<float> dev = host.to(tsr::cuda(0));
  CHECK(dev.device() == Device(tsr::cuda(0)));
  CHECK(dev.device().str() == "cuda:0");
  CHECK(dev.sizes() == host.sizes());
  CHECK(dev.is_contiguous());
  CHECK(dev.to(tsr::cuda(0)).is_alias_of(dev));  // already there: itself
  CHECK(dev.to(kCPU).to_vector() == host.to_vector());
  // Views of a device tensor come back with their own layout; so do
  // non-contiguous CPU tensors going out.
  CHECK(dev.t().to(kCPU).to_vector() == host.t().contiguous().to_vector());
  CHECK(dev.slice(1, 1, 4, 2).to(kCPU).to_vector() == host.slice(1, 1, 4, 2).contiguous().to_vector());
  CHECK(host.t().to(tsr::cuda(0)).to_vector() == host.t().contiguous().to_vector());
  CHECK(dev.to(tsr::cuda(1)).device() == Device(tsr::cuda(1)));
  CHECK(dev.to(tsr::cuda(1)).to_vector() == host.to_vector());
  CHECK(dev.select(0, 2).select(0, 3).item() == 11.f);

  CHECK(zeros<double>({2, 2}, tsr::cuda(1)).to_vector() == std::vector<double>(4, 0.0));
  CHECK(ones<int32_t>({3}, tsr::cuda(0)).to_vector() == std::vector<int32_t>(3, 1));
  CHECK(full<float>({2}, 2.5f, tsr::cuda(0)).to_vector() == std::vector<float>(2, 2.5f));
  CHECK(empty<float>({0, 3}, tsr::cuda(0)).to(kCPU).numel() == 0);

  // PyTorch prints the device first among the suffixes, then the dtype and
  // the autograd state.
  std::ostringstream os;
  os << arange<float>(0.f, 4.f).view({2, 2}).to(tsr::cuda(0)) << "\n"
     << arange<int32_t>(1, 4).to(tsr::cuda(1)) << "\n"
     << empty<float>({0, 2}, tsr::cuda(0)) << "\n"
     << full<double>({}, 0.5, tsr::cuda(0)).requires_grad_();
  CHECK(os.str() ==
        "tensor([[0., 1.],\n"
        "        [2., 3.]], device='cuda:0')\n"
        "tensor([1, 2, 3], device='cuda:1', dtype=torch.int32)\n"
        "tensor([], device='cuda:0', size=(0, 2))\n"
        "tensor(0.5000, device='cuda:0', dtype=torch.float64, requires_grad=True)");
}

TEST_CASE("device tensors: pinned host memory, and copies from and into it that do not wait") {
  using namespace tsr;
  const Tensor<float> x = arange<float>(0.f, 12.f).view({3, 4});
  const Tensor<float> p = x.t().pin_memory();
  CHECK(p.is_pinned());
  CHECK_FALSE(x.is_pinned());
  CHECK(p.is_contiguous());
  CHECK(equal(p, x.t()));
  CHECK(p.pin_memory().storage() == p.storage());  // pinned already: itself
  // Host to device from pinned memory, queued; device to host into a new
  // pinned tensor, queued; read after a synchronize.
  const Tensor<float> d = p.to(tsr::cuda(0), true);
  const Tensor<float> back = d.to(kCPU, true);
  tsr::cuda::synchronize();
  CHECK(back.is_pinned());
  CHECK(equal(back, x.t()));
  CHECK(equal(x.to(tsr::cuda(1), true).to(kCPU), x));  // from pageable memory: waited for
  const Tensor<float> strided = d.t().to(kCPU, true);  // not contiguous on the device: waited for
  CHECK_FALSE(strided.is_pinned());
  CHECK(equal(strided, x));
  // The gradient goes through.
  auto w = x.clone().requires_grad_();
  const Tensor<float> pinned_w = w.pin_memory();
  CHECK(pinned_w.grad_fn_name() == "PinMemoryBackward0");  // PyTorch 1.13's name
  (pinned_w * w).sum().backward();
  CHECK(equal(w.grad(), Tensor<float>(x * 2.f)));
  // Blocks come back to the cache and are reused.
  auto& cache = tsr::detail::cuda::tensor_backend().pinned_allocator();
  const std::size_t cached = cache.cached_bytes();
  const float* first = nullptr;
  {
    const Tensor<float> q = zeros<float>({1000}).pin_memory();  // 4000 bytes: a 4096-byte block
    first = q.data_ptr();
  }
  CHECK(cache.cached_bytes() >= std::max<std::size_t>(cached, 4096));
  CHECK(zeros<float>({1000}).pin_memory().data_ptr() == first);
  CHECK_THROWS_WITH_AS(d.pin_memory(), "cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned", Error);
}

TEST_CASE("device tensors: expressions run on the device and give the CPU's results") {
  using namespace tsr;
  const auto [a, da] = on_both(arange<float>(-6.f, 6.f).view({3, 4}));
  const auto [b, db] = on_both(arange<float>(1.f, 5.f));
  const auto [col, dcol] = on_both(arange<float>(0.f, 3.f).view({3, 1}));
  SUBCASE("broadcasting, transposes, scalars") {
    CHECK(same_as_cpu<float>(da * db + dcol - 2.f, a * b + col - 2.f));
    CHECK(same_as_cpu<float>(da.t() / db.view({4, 1}), a.t() / b.view({4, 1})));
    CHECK(same_as_cpu<float>(exp(sin(da) * 0.5f) + tanh(db) * log1p(abs(da)), exp(sin(a) * 0.5f) + tanh(b) * log1p(abs(a))));
    CHECK(same_as_cpu<float>(where(da > 0.f, da, -da * 2.f), where(a > 0.f, a, -a * 2.f)));
    CHECK(same_as_cpu<int32_t>(cast<int32_t>(da * 3.f) % 4, cast<int32_t>(a * 3.f) % 4));
    CHECK(same_as_cpu<bool>(da >= db, a >= b));
  }
  SUBCASE("contiguous rows in packets of 16 bytes, a last partial packet, and rows that cannot be") {
    // 1003 values: 250 packets of 4 floats and 3 left; a broadcast 0-d
    // operand; a double result of float operands (packets of 2); a bool
    // result (packets of 16); half (packets of 8); a slice starting one
    // element in (not aligned to 16 bytes: one element per thread).
    const auto [u, du] = on_both(Tensor<float>(sin(arange<float>(0.f, 1003.f))));
    const auto [v, dv] = on_both(Tensor<float>(cos(arange<float>(0.f, 1003.f)) * 3.f));
    const auto [s, ds] = on_both(full<float>({}, 1.5f));
    CHECK(same_as_cpu<float>(du * dv + exp(du) - 2.f, u * v + exp(u) - 2.f));
    CHECK(same_as_cpu<float>(du * ds + dv, u * s + v));
    CHECK(same_as_cpu<double>(cast<double>(du) * 0.25, cast<double>(u) * 0.25));
    CHECK(same_as_cpu<bool>(du > dv, u > v));
    CHECK(same_as_cpu<float>(where(du > 0.f, du, dv), where(u > 0.f, u, v)));
    const auto [h, dh] = on_both(Tensor<tsr::half>(cast<tsr::half>(v.slice(0, 0, 37))));
    CHECK(same_as_cpu<tsr::half>(dh * dh + 1.f, h * h + 1.f));
    CHECK(same_as_cpu<float>(du.slice(0, 1, 1003) + dv.slice(0, 1, 1003), u.slice(0, 1, 1003) + v.slice(0, 1, 1003)));
    Tensor<float> shifted = zeros<float>({1004}), dshifted = shifted.to(tsr::cuda(0));
    shifted.slice(0, 1, 1004).copy_(u * 2.f);
    dshifted.slice(0, 1, 1004).copy_(du * 2.f);
    CHECK(dshifted.to_vector() == shifted.to_vector());
  }
  SUBCASE("in place: operators, fill, copies into views, and overlapping copies through a temporary") {
    Tensor<float> x = a.clone(), dx = da.clone();
    CHECK(dx.device() == Device(tsr::cuda(0)));
    x += b * 2.f;
    dx += db * 2.f;
    CHECK(same_as_cpu(dx, x));
    x.slice(1, 0, 4, 2).fill_(7.f);
    dx.slice(1, 0, 4, 2).fill_(7.f);
    CHECK(same_as_cpu(dx, x));
    x.select(0, 1).copy_(b);
    dx.select(0, 1).copy_(db);
    CHECK(same_as_cpu(dx, x));
    auto sq = arange<double>(0., 9.).view({3, 3});
    auto dsq = sq.to(tsr::cuda(0));
    sq.copy_(sq.t());  // reads what it overwrites: evaluated through a temporary
    dsq.copy_(dsq.t());
    CHECK(same_as_cpu(dsq, sq));
    CHECK(dsq.to_vector() == std::vector<double>{0, 3, 6, 1, 4, 7, 2, 5, 8});
  }
  SUBCASE("cat and stack: one copy per piece on the device") {
    CHECK(same_as_cpu<float>(cat({da, dcol, da.slice(1, 0, 1)}, 1), cat({a, col, a.slice(1, 0, 1)}, 1)));
    CHECK(same_as_cpu<float>(stack<float>({da.t(), Tensor<float>(da.t() * 2.f)}, 1), stack<float>({a.t(), Tensor<float>(a.t() * 2.f)}, 1)));
    CHECK(cat({da, da}, 0).device() == Device(tsr::cuda(0)));
    CHECK_THROWS_WITH_AS(cat({da, a}, 0), "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!", Error);
  }
  SUBCASE("full reductions: 0-d tensors on the device") {
    // 2048 + 32 ones in half: summed in float (2080), then converted; sums
    // rounded to half at each step would stay at 2048.
    const auto halves = Tensor<tsr::half>(cast<tsr::half>(cat({full<float>({1}, 2048.f), ones<float>({32})})))
                            .to(tsr::cuda(0));
    // Computed and kept on the device: no copy to the host and back.
    const auto copy_count = [] { return tsr::detail::cuda::tensor_backend().copy_count(); };
    const std::size_t copies = copy_count();
    const Tensor<float> s = sum(da * db + 1.f);
    const Tensor<float> average = mean(da), product = prod(db), largest = amax(da - db), smallest = min(da.t());
    const Tensor<int64_t> positives = sum(da > 0.f);  // bool sums are int64
    const Tensor<double> double_average = mean(cast<double>(da));
    const Tensor<tsr::half> half_sum = sum(halves), half_average = mean(halves);
    const Tensor<float> empty_sum = sum(da.slice(0, 0, 0)), empty_product = prod(da.slice(0, 0, 0));
    CHECK(copy_count() == copies);
    for (const Device d : {s.device(), average.device(), product.device(), largest.device(), smallest.device(),
                           positives.device(), double_average.device(), half_sum.device(), half_average.device()})
      CHECK(d == Device(tsr::cuda(0)));
    CHECK(s.dim() == 0);
    CHECK(s.item() == sum(a * b + 1.f).item());
    CHECK(average.item() == mean(a).item());
    CHECK(product.item() == 24.f);
    CHECK(largest.item() == amax(a - b).item());
    CHECK(smallest.item() == -6.f);
    CHECK(positives.item() == 5);
    CHECK(double_average.item() == mean(cast<double>(a)).item());
    CHECK(float(half_sum.item()) == 2080.f);
    CHECK(float(half_average.item()) == float(tsr::half(2080.f / 33.f)));
    CHECK(empty_sum.device() == Device(tsr::cuda(0)));
    CHECK(empty_sum.item() == 0.f);  // the reducers' identities
    CHECK(empty_product.item() == 1.f);
    CHECK(equal(da, da.clone()));
    CHECK_FALSE(equal(da, da + 1.f));
    CHECK(allclose(da, da + 1e-9f));
    CHECK_FALSE(allclose(da, da + 1e-3f));
  }
  SUBCASE("reductions over dimensions: kept inner and outer dims, transposed and 3-d inputs") {
    const auto [c, dc] = on_both(arange<double>(0., 60.).view({3, 4, 5}));
    CHECK(same_as_cpu<float>(sum(da, {0}), sum(a, {0})));
    CHECK(same_as_cpu<float>(sum(da * db, {1}, true), sum(a * b, {1}, true)));
    CHECK(same_as_cpu<float>(amax(da.t(), {1}), amax(a.t(), {1})));
    CHECK(same_as_cpu<float>(amin(da - dcol, {0}), amin(a - col, {0})));
    CHECK(same_as_cpu<float>(prod(db.view({2, 2}), {1}), prod(b.view({2, 2}), {1})));
    CHECK(same_as_cpu<double>(sum(dc, {1}), sum(c, {1})));
    CHECK(same_as_cpu<double>(sum(dc, {0, 2}), sum(c, {0, 2})));
    CHECK(same_as_cpu<double>(mean(dc.permute({2, 0, 1}), {2}), mean(c.permute({2, 0, 1}), {2})));
    CHECK(same_as_cpu<int64_t>(sum(dc > 30., {2}), sum(c > 30., {2})));
    CHECK(same_as_cpu<bool>(any(dc > 58., {0, 1}), any(c > 58., {0, 1})));
    CHECK(same_as_cpu<double>(sum(dc.slice(1, 0, 0), {1}), sum(c.slice(1, 0, 0), {1})));  // nothing to reduce: 0
    // 40000 terms of 0.1: the pairwise combination keeps the float sum close.
    const Tensor<float> tenths = full<float>({4, 10000}, 0.1f, tsr::cuda(0));
    const auto rows = sum(tenths, {0, 1}).item();
    CHECK(rows == doctest::Approx(4000.0).epsilon(1e-6));
    // Long reductions, cut into slices whose results are combined again:
    // runs of rows when the inner dim is kept, interleaved columns when it
    // is reduced, and a transposed input (small integers: exact sums).
    const auto [big, dbig] = on_both(Tensor<float>(remainder(arange<float>(0.f, 15000.f), 7.f)).view({3000, 5}));
    CHECK(same_as_cpu<float>(sum(dbig, {0}), sum(big, {0})));
    CHECK(same_as_cpu<float>(sum(dbig.t(), {1}), sum(big.t(), {1})));
    CHECK(same_as_cpu<float>(sum(dbig.view({5, 3000}), {1}), sum(big.view({5, 3000}), {1})));
    // A kept inner dim after reduced dims that do not merge (a slice of the
    // inner one): runs of positions that cross rows, with kept outer dims.
    const auto [wide, dwide] =
        on_both(Tensor<double>(remainder(arange<double>(0., 3. * 40 * 9 * 50), 11.)).view({3, 40, 9, 50}).slice(2, 1, 8));
    CHECK(same_as_cpu<double>(sum(dwide, {1, 2}), sum(wide, {1, 2})));
    CHECK(same_as_cpu<double>(amin(dwide * -1., {0, 1, 2}), amin(wide * -1., {0, 1, 2})));
    CHECK(same_as_cpu<float>(amax(dbig * 2.f - 1.f, {0}), amax(big * 2.f - 1.f, {0})));
    CHECK(same_as_cpu<int64_t>(sum(dbig > 3.f, {0}), sum(big > 3.f, {0})));
    CHECK(sum(dbig).item() == sum(big).item());
    CHECK(sum(dbig.t() * 2.f).item() == 2 * sum(big).item());
    Tensor<float> with_nan = big.clone();
    with_nan(1234, 2) = std::numeric_limits<float>::quiet_NaN();
    const Tensor<float> d_with_nan = with_nan.to(tsr::cuda(0));
    CHECK(std::isnan(amax(d_with_nan).item()));
    const std::vector<float> column_max = amax(d_with_nan, {0}).to_vector();
    CHECK(std::isnan(column_max[2]));
    CHECK(column_max[1] == 6.f);
  }
  SUBCASE("autograd: the fused backward runs on the device") {
    auto x = a.clone().requires_grad_();
    auto dx = da.clone().requires_grad_();
    (sin(x) * x + exp(x * 0.25f)).sum().backward();
    (sin(dx) * dx + exp(dx * 0.25f)).sum().backward();
    REQUIRE(dx.grad().defined());
    CHECK(dx.grad().device() == Device(tsr::cuda(0)));
    CHECK(same_as_cpu(dx.grad(), x.grad()));
    // Two leaves of one shape, and a second backward accumulating.
    auto y = b.clone().requires_grad_(), dy = db.clone().requires_grad_();
    auto z = b.clone().requires_grad_(), dz = db.clone().requires_grad_();
    for (int i = 0; i < 2; ++i) {
      (y * z - y / z).sum().backward();
      (dy * dz - dy / dz).sum().backward();
    }
    CHECK(same_as_cpu(dy.grad(), y.grad()));
    CHECK(same_as_cpu(dz.grad(), z.grad()));
    // A broadcast operand: its gradient is summed over the broadcast dims.
    auto m = a.clone().requires_grad_(), dm = da.clone().requires_grad_();
    auto v = b.clone().requires_grad_(), dv = db.clone().requires_grad_();
    (m * v + v).sum().backward();
    (dm * dv + dv).sum().backward();
    CHECK(same_as_cpu(dm.grad(), m.grad()));
    CHECK(same_as_cpu(dv.grad(), v.grad()));
    // Copies between devices are differentiable: the gradient goes back to
    // the source's device.
    auto h = a.clone().requires_grad_();
    const Tensor<float> moved = h.to(tsr::cuda(1));
    CHECK(moved.grad_fn_name() == "ToCopyBackward0");
    (moved * moved).sum().backward();
    CHECK(h.grad().device() == kCPU);
    CHECK(h.grad().to_vector() == Tensor<float>(a * 2.f).to_vector());
    // Reductions over dims in the graph.
    auto q = a.clone().requires_grad_(), dq = da.clone().requires_grad_();
    (sum(q * q, {1}) * b.slice(0, 0, 3)).sum().backward();
    (sum(dq * dq, {1}) * db.slice(0, 0, 3)).sum().backward();
    CHECK(same_as_cpu(dq.grad(), q.grad()));
  }
}

TEST_CASE("device tensors: matrix products through the device's GEMM (cuBLAS's definition, emulated)") {
  using namespace tsr;
  // Small integers: every product is exact, whatever the order of the sums.
  const auto [a, da] = on_both(arange<float>(-6.f, 6.f).view({3, 4}));
  const auto [b, db] = on_both(arange<float>(-7.f, 13.f).view({4, 5}));
  const auto [v, dv] = on_both(arange<float>(1.f, 5.f));
  const auto [t, dt] = on_both(arange<double>(0., 24.).view({2, 3, 4}));
  const auto [u, du] = on_both(arange<double>(-10., 10.).view({4, 5}));
  CHECK(same_as_cpu<float>(mm(da, db), mm(a, b)));
  CHECK(same_as_cpu<float>(mm(db.t(), da.t()), mm(b.t(), a.t())));            // transposed operands, read as they lie
  CHECK(same_as_cpu<float>(mm(da.slice(1, 0, 4, 2), db.slice(0, 0, 4, 2)),     // strided, copied first
                           mm(a.slice(1, 0, 4, 2), b.slice(0, 0, 4, 2))));
  CHECK(same_as_cpu<float>(matmul(da, dv), matmul(a, v)));
  CHECK(same_as_cpu<float>(matmul(dv, db), matmul(v, b)));
  CHECK(same_as_cpu<float>(matmul(dv, dv), matmul(v, v)));
  CHECK(same_as_cpu<double>(matmul(dt, du), matmul(t, u)));                  // batched times a matrix
  CHECK(same_as_cpu<double>(matmul(dt.unsqueeze(1), du.t().unsqueeze(0).expand({3, 5, 4}).transpose(1, 2)),
                            matmul(t.unsqueeze(1), u.t().unsqueeze(0).expand({3, 5, 4}).transpose(1, 2))));
  CHECK(same_as_cpu<double>(bmm(dt, dt.transpose(1, 2)), bmm(t, t.transpose(1, 2))));
  CHECK(same_as_cpu<float>(addmm(dv.slice(0, 0, 1), da, db.slice(1, 0, 4), 0.5, 2.0),
                           addmm(v.slice(0, 0, 1), a, b.slice(1, 0, 4), 0.5, 2.0)));
  CHECK(same_as_cpu<float>(linear(da, db.t().slice(0, 0, 3), dv.slice(0, 0, 3)),
                           linear(a, b.t().slice(0, 0, 3), v.slice(0, 0, 3))));
  Tensor<float> c = a.clone(), dc = da.clone();
  addmm_(c, a, b.slice(1, 0, 4), 1.0, -1.0);
  addmm_(dc, da, db.slice(1, 0, 4), 1.0, -1.0);
  CHECK(same_as_cpu(dc, c));
  CHECK(mm(empty<float>({0, 4}, tsr::cuda(0)), db).sizes() == Shape{0, 5});
  CHECK(same_as_cpu<float>(mm(empty<float>({3, 0}, tsr::cuda(0)), empty<float>({0, 2}, tsr::cuda(0))),
                           zeros<float>({3, 2})));
  CHECK_THROWS_WITH_AS(mm(arange<int64_t>(0, 4).view({2, 2}).to(tsr::cuda(0)), arange<int64_t>(0, 4).view({2, 2}).to(tsr::cuda(0))),
                       "matrix products of 'Long' tensors do not run on CUDA devices (as in PyTorch, whose addmm_cuda refuses them); copy them to the CPU first with .to(tsr::kCPU)", Error);
  SUBCASE("half: on the device only, accumulated in float") {
    // Small integers: the products and sums are exact in half.
    const auto h = [](const Tensor<float>& x) { return Tensor<tsr::half>(cast<tsr::half>(x)); };
    const auto hd = [&](const Tensor<float>& x) { return h(x).to(tsr::cuda(0)); };
    const auto back = [](const Tensor<tsr::half>& x) {
      CHECK(x.device() == Device(tsr::cuda(0)));
      return Tensor<float>(cast<float>(x.to(kCPU)));
    };
    const Tensor<float> tf = t.to<float>();
    CHECK(equal(back(mm(hd(a), hd(b))), mm(a, b)));
    CHECK(equal(back(mm(hd(b).t(), hd(a).t())), mm(b.t(), a.t())));
    CHECK(equal(back(matmul(hd(a), hd(v))), matmul(a, v)));
    CHECK(equal(back(matmul(hd(v), hd(v))), matmul(v, v)));
    CHECK(equal(back(bmm(hd(tf), hd(tf).transpose(1, 2))), bmm(tf, tf.transpose(1, 2))));
    CHECK(equal(back(addmm(hd(v.slice(0, 0, 1)), hd(a), hd(b.slice(1, 0, 4)), 0.5, 2.0)),
                addmm(v.slice(0, 0, 1), a, b.slice(1, 0, 4), 0.5, 2.0)));
    CHECK(equal(back(linear(hd(a), hd(b).t().slice(0, 0, 3), hd(v).slice(0, 0, 3))),
                linear(a, b.t().slice(0, 0, 3), v.slice(0, 0, 3))));
    // 2048 + 1 + ... + 1 (32 ones): 2048 when each partial sum is rounded
    // to half (2049 is not a half), 2080 accumulated in float.
    const Tensor<float> row = cat({full<float>({1}, 2048.f), ones<float>({32})}).view({1, 33});
    CHECK(back(mm(hd(row), hd(ones<float>({33, 1})))).item() == 2080.f);
    // PyTorch 1.13's CPU has no half products: refused, naming the kernel
    // that refuses them there.
    const auto refusal = [](const char* kernel) {
      return "matrix products of 'Half' tensors do not run on the CPU (as in PyTorch 1.13, whose " + std::string(kernel) +
             " refuses them); move them to a CUDA device, or compute in float with tsr::cast<float>";
    };
    const std::string by_addmm = refusal("addmm_impl_cpu_"), by_addmv = refusal("addmv_impl_cpu"),
                      by_dot = refusal("dot"), by_bmm = refusal("bmm");
    CHECK_THROWS_WITH_AS(mm(h(a), h(b)), by_addmm.c_str(), Error);
    CHECK_THROWS_WITH_AS(matmul(h(a), h(v)), by_addmv.c_str(), Error);
    CHECK_THROWS_WITH_AS(matmul(h(v), h(v)), by_dot.c_str(), Error);
    CHECK_THROWS_WITH_AS(bmm(h(tf), h(tf).transpose(1, 2)), by_bmm.c_str(), Error);
    CHECK_THROWS_WITH_AS(linear(h(a), h(b).t().slice(0, 0, 3), h(v).slice(0, 0, 3)), by_addmm.c_str(), Error);
  }
  CHECK_THROWS_WITH_AS(mm(da, b), "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!", Error);
  CHECK_THROWS_WITH_AS(mm(a, db), "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!", Error);

  SUBCASE("autograd: a linear layer's gradients on the device") {
    auto w = Tensor<float>(arange<float>(0.f, 12.f).view({3, 4}) * 0.1f).requires_grad_();
    auto bias = arange<float>(0.f, 3.f).requires_grad_();
    Tensor<float> dw, dbias;
    {
      const NoGradGuard no_grad;
      dw = w.to(tsr::cuda(0));
      dbias = bias.to(tsr::cuda(0));
    }
    dw.requires_grad_();
    dbias.requires_grad_();
    const Tensor<float> x = arange<float>(-4.f, 4.f).view({2, 4}) * 0.25f;
    tanh(linear(x, w, bias)).sum().backward();
    tanh(linear(x.to(tsr::cuda(0)), dw, dbias)).sum().backward();
    CHECK(dw.grad().device() == Device(tsr::cuda(0)));
    CHECK(allclose(dw.grad().to(kCPU), w.grad(), 1e-6, 1e-7));
    CHECK(allclose(dbias.grad().to(kCPU), bias.grad(), 1e-6, 1e-7));
  }
}

namespace {
// Two copies of one MLP (the same initial weights), the second on cuda:1.
std::pair<tsr::nn::Sequential, tsr::nn::Sequential> mlp_here_and_on_device() {
  using namespace tsr;
  const auto make = [] {
    manual_seed(7);
    nn::Sequential net;
    net->push_back(nn::Linear(4, 8));
    net->push_back(nn::ReLU());
    net->push_back(nn::Linear(8, 2));
    return net;
  };
  nn::Sequential cpu_net = make(), dev_net = make();
  dev_net->to(tsr::cuda(1));
  return {cpu_net, dev_net};
}

// `steps` steps of MSE training with an optimizer made by make_optimizer,
// on the CPU and on cuda:1, from the same weights: the same losses and
// parameters (within float rounding).
// The step takes a closure (as LBFGS needs; the others call it once), which
// clips the gradients' norm when `clip`.
template <class MakeOptimizer>
void check_trains_as_on_the_cpu(const MakeOptimizer& make_optimizer, int steps = 4, bool clip = false) {
  using namespace tsr;
  auto [cpu_net, dev_net] = mlp_here_and_on_device();
  for (auto& p : dev_net->parameters()) {
    CHECK(p.as<float>().device() == Device(tsr::cuda(1)));
    CHECK(p.as<float>().requires_grad());
    CHECK(p.as<float>().is_leaf());
  }
  auto cpu_opt = make_optimizer(cpu_net->parameters());
  auto dev_opt = make_optimizer(dev_net->parameters());
  const Tensor<float> x = arange<float>(-8.f, 8.f).view({4, 4}) * 0.125f;
  const Tensor<float> y = arange<float>(0.f, 8.f).view({4, 2}) * 0.25f;
  const Tensor<float> dx = x.to(tsr::cuda(1)), dy = y.to(tsr::cuda(1));
  const auto closure = [&](auto& opt, nn::Sequential& net, const Tensor<float>& in, const Tensor<float>& out) {
    return [&] {
      opt.zero_grad();
      Tensor<float> loss = nn::functional::mse_loss(net->forward(in), out);
      loss.backward();
      if (clip) nn::utils::clip_grad_norm_(net->parameters(), 0.05);
      return loss;
    };
  };
  for (int step = 0; step < steps; ++step) {
    const Tensor<float> cpu_loss = cpu_opt.step(closure(cpu_opt, cpu_net, x, y)).template as<float>();
    const Tensor<float> dev_loss = dev_opt.step(closure(dev_opt, dev_net, dx, dy)).template as<float>();
    CHECK(dev_loss.device() == Device(tsr::cuda(1)));
    CHECK(dev_loss.item() == doctest::Approx(cpu_loss.item()).epsilon(1e-5));
  }
  const auto cpu_params = cpu_net->parameters(), dev_params = dev_net->parameters();
  REQUIRE(cpu_params.size() == dev_params.size());
  for (std::size_t i = 0; i < cpu_params.size(); ++i) {
    CHECK(dev_params[i].as<float>().device() == Device(tsr::cuda(1)));
    CHECK(allclose(dev_params[i].as<float>().to(kCPU), cpu_params[i].as<float>(), 1e-5, 1e-6));
  }
}
}  // namespace

TEST_CASE("device tensors: a model moved with to(device) trains as on the CPU, with every optimizer") {
  using namespace tsr;
  using P = std::vector<AnyTensor>;
  SUBCASE("SGD, with momentum, Nesterov momentum and weight decay") {
    check_trains_as_on_the_cpu([](P p) { return optim::SGD(p, optim::SGDOptions(0.1)); });
    check_trains_as_on_the_cpu([](P p) { return optim::SGD(p, optim::SGDOptions(0.1).momentum(0.9).dampening(0.1)); });
    check_trains_as_on_the_cpu([](P p) {
      return optim::SGD(p, optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.01).maximize(false));
    });
  }
  SUBCASE("Adam (with amsgrad) and AdamW") {
    check_trains_as_on_the_cpu([](P p) { return optim::Adam(p, optim::AdamOptions(0.01)); });
    check_trains_as_on_the_cpu([](P p) { return optim::Adam(p, optim::AdamOptions(0.01).amsgrad(true).weight_decay(0.1)); });
    check_trains_as_on_the_cpu([](P p) { return optim::AdamW(p, optim::AdamWOptions(0.01)); });
  }
  SUBCASE("RMSprop: plain, centered, with momentum, both") {
    for (const bool centered : {false, true})
      for (const double momentum : {0.0, 0.5})
        check_trains_as_on_the_cpu(
            [&](P p) { return optim::RMSprop(p, optim::RMSpropOptions(0.01).centered(centered).momentum(momentum)); });
  }
  SUBCASE("LBFGS, with and without the strong-Wolfe line search") {
    check_trains_as_on_the_cpu([](P p) { return optim::LBFGS(p, optim::LBFGSOptions(0.5).max_iter(4)); }, 2);
    check_trains_as_on_the_cpu(
        [](P p) { return optim::LBFGS(p, optim::LBFGSOptions(1.0).max_iter(6).line_search_fn("strong_wolfe")); }, 2);
  }
  SUBCASE("gradients clipped by their norm") {
    check_trains_as_on_the_cpu([](P p) { return optim::SGD(p, optim::SGDOptions(0.1).momentum(0.5)); }, 4, true);
  }
  SUBCASE("Adagrad and Adadelta") {
    check_trains_as_on_the_cpu([](P p) { return optim::Adagrad(p, optim::AdagradOptions(0.1).lr_decay(0.01)); });
    check_trains_as_on_the_cpu([](P p) { return optim::Adadelta(p, optim::AdadeltaOptions(1.0).weight_decay(0.01)); });
  }
  SUBCASE("an optimizer's state lives on its parameter's device") {
    auto [cpu_net, dev_net] = mlp_here_and_on_device();
    optim::Adam adam(dev_net->parameters(), optim::AdamOptions(0.01));
    const Tensor<float> x = ones<float>({3, 4}).to(tsr::cuda(1));
    sum(dev_net->forward(x)).backward();
    adam.step();
    CHECK(adam.state(0, 0).tensor<float>("exp_avg").device() == Device(tsr::cuda(1)));
    CHECK(adam.state(0, 0).tensor<float>("exp_avg_sq").device() == Device(tsr::cuda(1)));
  }
  SUBCASE("a parameter and its gradient on different devices: PyTorch's error") {
    auto [cpu_net, dev_net] = mlp_here_and_on_device();
    auto params = dev_net->parameters();
    auto& w = params[0].as<float>();
    w.mutable_grad() = zeros_like(w).to(kCPU);
    optim::SGD sgd(dev_net->parameters(), optim::SGDOptions(0.1));
    CHECK_THROWS_WITH_AS(sgd.step(), "Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cpu!", Error);
  }
}

TEST_CASE("device tensors: copy_ across devices, and checkpoints of a model and its optimizer on a device") {
  using namespace tsr;
  const Device dev = tsr::cuda(1);
  // copy_ takes a tensor on another device, as PyTorch's, converting its type.
  const Tensor<float> values = arange<float>(0.f, 6.f).view({2, 3});
  Tensor<float> host = zeros<float>({2, 3});
  host.copy_(values.to(dev));
  CHECK(equal(host, values));
  Tensor<double> on_dev = zeros<double>({3, 2}, dev);
  on_dev.t().copy_(values);  // through a view
  CHECK(on_dev.device() == dev);
  CHECK(equal(on_dev.to(kCPU), Tensor<double>(cast<double>(values.t()))));
  // The gradient goes back to the source's device.
  Tensor<float> src = values.clone().requires_grad_();
  Tensor<float> dst = zeros<float>({2, 3}, dev);
  dst.copy_(src);
  sum(dst * 3.f).backward();
  CHECK(src.grad().device() == kCPU);
  CHECK(equal(src.grad(), full<float>({2, 3}, 3.f)));

  // A model trained a step on the device, saved in both formats with its
  // optimizer, loads into models on the device and on the CPU; the loaded
  // optimizer takes the same next step.
  nn::Sequential net = mlp_here_and_on_device().second;
  const Tensor<float> x = Tensor<float>(arange<float>(-8.f, 8.f).view({4, 4}) * 0.125f).to(dev);
  const auto step = [&](nn::Sequential& model, optim::SGD& opt) {
    opt.zero_grad();
    nn::functional::mse_loss(model->forward(x), zeros<float>({4, 2}, dev)).backward();
    opt.step();
  };
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  step(net, opt);
  const std::string base = "/tmp/tsr_test_cuda_" + std::to_string(::getpid());
  nn::save(net, base + ".pt");
  nn::save(net, base + ".safetensors");
  optim::save(opt, base + "_opt.pt");
  for (const char* ext : {".pt", ".safetensors"}) {
    CAPTURE(ext);
    auto [on_cpu, on_device] = mlp_here_and_on_device();
    nn::load(on_cpu, base + ext);
    nn::load(on_device, base + ext);
    const auto want = net->parameters(), got_cpu = on_cpu->parameters(), got_dev = on_device->parameters();
    for (std::size_t i = 0; i < want.size(); ++i) {
      CHECK(got_cpu[i].as<float>().device() == kCPU);
      CHECK(got_dev[i].as<float>().device() == dev);
      CHECK(equal(got_cpu[i].as<float>(), want[i].as<float>().to(kCPU)));
      CHECK(equal(got_dev[i].as<float>().to(kCPU), want[i].as<float>().to(kCPU)));
    }
  }
  nn::Sequential resumed = mlp_here_and_on_device().second;
  nn::load(resumed, base + ".pt");
  optim::SGD loaded(resumed->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::load(loaded, base + "_opt.pt");
  step(net, opt);
  step(resumed, loaded);
  const auto after = resumed->parameters(), expected = net->parameters();
  for (std::size_t i = 0; i < after.size(); ++i)
    CHECK(equal(after[i].as<float>().to(kCPU), expected[i].as<float>().to(kCPU)));
  for (const char* file : {".pt", ".safetensors", "_opt.pt"}) std::remove((base + file).c_str());
}

TEST_CASE("device tensors: cross-entropy and NLL of class indices give the CPU's losses and gradients") {
  using namespace tsr;
  namespace F = nn::functional;
  using R = nn::Reduction;
  const Tensor<float> logits = sin(arange<float>(0.f, 20.f).view({5, 4})) * 3.f;
  const Tensor<int64_t> target = remainder(arange<int64_t>(0, 5), int64_t(4));
  Tensor<int64_t> ignored = target.clone();
  ignored.select(0, 2).fill_(-100);
  const Tensor<float> weight = arange<float>(1.f, 5.f) * 0.5f;
  const Device dev = tsr::cuda(0);
  const Tensor<float> dev_weight = weight.to(dev);
  // The loss of logits and targets, its value and its gradient, on the CPU
  // and on the device: the same within float rounding.
  const auto check_both = [&](const Tensor<int64_t>& t, const auto& options_with_weight) {
    Tensor<float> cpu_x = logits.clone().requires_grad_();
    Tensor<float> dev_x = logits.to(dev).requires_grad_();
    const Tensor<float> cpu_loss = options_with_weight(cpu_x, t, weight);
    const Tensor<float> dev_loss = options_with_weight(dev_x, t.to(dev), dev_weight);
    CHECK(dev_loss.device() == dev);
    CHECK(allclose(dev_loss.to(kCPU), cpu_loss, 1e-5, 1e-6));
    sum(cpu_loss * cpu_loss).backward();
    sum(dev_loss * dev_loss).backward();
    CHECK(dev_x.grad().device() == dev);
    CHECK(allclose(dev_x.grad().to(kCPU), cpu_x.grad(), 1e-5, 1e-6));
  };
  for (const R r : {R::Mean, R::Sum, R::None}) {
    CAPTURE(static_cast<int>(r));
    check_both(target, [&](const Tensor<float>& x, const Tensor<int64_t>& t, const Tensor<float>&) {
      return F::cross_entropy(x, t, nn::CrossEntropyLossOptions().reduction(r));
    });
    check_both(ignored, [&](const Tensor<float>& x, const Tensor<int64_t>& t, const Tensor<float>& w) {
      return F::cross_entropy(x, t, nn::CrossEntropyLossOptions().weight(w).reduction(r));
    });
    check_both(ignored, [&](const Tensor<float>& x, const Tensor<int64_t>& t, const Tensor<float>& w) {
      return F::cross_entropy(x, t, nn::CrossEntropyLossOptions().weight(w).label_smoothing(0.2).reduction(r));
    });
    check_both(ignored, [&](const Tensor<float>& x, const Tensor<int64_t>& t, const Tensor<float>& w) {
      return F::nll_loss(log_softmax(x, 1), t, nn::NLLLossOptions().weight(w).reduction(r));
    });
  }
  // A bad target: PyTorch's error, whichever device holds it.
  Tensor<int64_t> bad = target.clone();
  bad.select(0, 1).fill_(4);
  CHECK_THROWS_WITH_AS(F::cross_entropy(logits.to(dev), bad.to(dev)), "Target 4 is out of bounds.", IndexError);
  CHECK_THROWS_WITH_AS(F::cross_entropy(logits.to(dev), target), doctest::Contains("Expected all tensors to be on the same device"), Error);
}

TEST_CASE("device tensors: max and min over a dim with indices, argmax and argmin, as on the CPU") {
  using namespace tsr;
  const Device dev = tsr::cuda(1);
  // Ties (the first one wins) and a NaN (which wins, the first one).
  Tensor<float> x = Tensor<float>(remainder(arange<float>(0.f, 60.f) * 7.f, 11.f)).view({3, 4, 5});
  x.select(1, 2).select(1, 3).fill_(std::numeric_limits<float>::quiet_NaN());
  const Tensor<float> dx = x.to(dev);
  // Equal, NaN where NaN.
  const auto same = [](const auto& device_result, const auto& cpu_result) {
    const auto back = device_result.to(kCPU);
    return device_result.device() != kCPU && back.sizes() == cpu_result.sizes() &&
           all(back == cpu_result || (back != back && cpu_result != cpu_result)).item();
  };
  for (int64_t dim = -3; dim < 3; ++dim) {
    CAPTURE(dim);
    for (const bool keepdim : {false, true}) {
      const auto [v, i] = max(x, dim, keepdim);
      const auto [dv, di] = max(dx, dim, keepdim);
      CHECK(same(dv, v));
      CHECK(same(di, i));
      const auto [w, j] = min(x.transpose(0, 2), dim, keepdim);  // a transposed input
      const auto [dw, dj] = min(dx.transpose(0, 2), dim, keepdim);
      CHECK(same(dw, w));
      CHECK(same(dj, j));
    }
    CHECK(same(argmax(dx * 2.f, dim), argmax(x * 2.f, dim)));
    CHECK(same(argmin(dx, dim, true), argmin(x, dim, true)));
  }
  CHECK(same(argmax(dx), argmax(x)));
  CHECK(same(argmin(dx.slice(0, 0, 2)), argmin(x.slice(0, 0, 2))));
  // The gradient goes to the chosen element, on the device.
  Tensor<float> cx = Tensor<float>(remainder(arange<float>(0.f, 24.f) * 5.f, 7.f)).view({4, 6}).requires_grad_();
  Tensor<float> gx = cx.detach().to(dev).requires_grad_();
  const auto [cv, ci] = max(cx, 1);
  const auto [gv, gi] = max(gx, 1);
  sum(cv * arange<float>(1.f, 5.f)).backward();
  sum(gv * arange<float>(1.f, 5.f).to(dev)).backward();
  CHECK(gx.grad().device() == dev);
  CHECK(equal(gx.grad().to(kCPU), cx.grad()));
  CHECK_THROWS_WITH_AS(max(zeros<float>({2, 0}, dev), 1), "max(): Expected reduction dim 1 to have non-zero size.", IndexError);
}

#include "cuda/device_op_cases.hpp"  // indexing, scans, sorting, convolutions and pooling on the device

TEST_CASE("device tensors: random draws, dropout, initialization and normalization layers as on the CPU") {
  using namespace tsr;
  const Device dev = tsr::cuda(0);
  SUBCASE("the same seed gives the same draws on the device as on the CPU") {
    manual_seed(3);
    const Tensor<float> cpu = rand<float>({5, 4});
    manual_seed(3);
    const Tensor<float> dev_draws = rand_like(zeros<float>({5, 4}, dev));
    CHECK(dev_draws.device() == dev);
    CHECK(equal(dev_draws.to(kCPU), cpu));
    Tensor<float> w = empty<float>({6, 3}), dw = empty<float>({6, 3}, dev);
    manual_seed(4);
    nn::init::kaiming_uniform_(w, std::sqrt(5.0));
    manual_seed(4);
    nn::init::kaiming_uniform_(dw, std::sqrt(5.0));
    CHECK(equal(dw.to(kCPU), w));
    Tensor<float> t = zeros<float>({4, 6}), dt = zeros<float>({4, 6}, dev);  // through a transposed view
    manual_seed(5);
    t.t().normal_(1.0, 2.0);
    manual_seed(5);
    dt.t().normal_(1.0, 2.0);
    CHECK(equal(dt.to(kCPU), t));
  }
  SUBCASE("dropout: the CPU's mask, and its backward") {
    const Tensor<float> x = arange<float>(1.f, 21.f).view({4, 5});
    Tensor<float> cx = x.clone().requires_grad_(), dx = x.to(dev).requires_grad_();
    manual_seed(6);
    const Tensor<float> cy = nn::functional::dropout(cx, 0.4, true);
    manual_seed(6);
    const Tensor<float> dy = nn::functional::dropout(dx, 0.4, true);
    CHECK(dy.device() == dev);
    CHECK(equal(dy.to(kCPU), cy));
    sum(cy * cy).backward();
    sum(dy * dy).backward();
    CHECK(allclose(dx.grad().to(kCPU), cx.grad()));
    nn::Dropout layer(0.5);
    layer->eval();
    CHECK(equal(layer->forward(dx.detach()).to(kCPU), x));
  }
  SUBCASE("var, std, LayerNorm and BatchNorm2d forward and backward") {
    const Tensor<float> x = sin(arange<float>(0.f, 96.f).view({2, 3, 4, 4})) * 2.f + 0.5f;
    CHECK(allclose(var(x.to(dev), {1, 3}).to(kCPU), var(x, {1, 3}), 1e-5, 1e-6));
    CHECK(allclose(tsr::std(x.to(dev), {0, 2}, 0, true).to(kCPU), tsr::std(x, {0, 2}, 0, true), 1e-5, 1e-6));
    nn::LayerNorm cpu_ln(nn::LayerNormOptions({4, 4})), dev_ln(nn::LayerNormOptions({4, 4}));
    nn::BatchNorm2d cpu_bn(3), dev_bn(3);
    dev_ln->to(dev);
    dev_bn->to(dev);
    Tensor<float> cx = x.clone().requires_grad_(), dx = x.to(dev).requires_grad_();
    const Tensor<float> cy = cpu_bn->forward(cpu_ln->forward(cx));
    const Tensor<float> dy = dev_bn->forward(dev_ln->forward(dx));
    CHECK(dy.device() == dev);
    CHECK(allclose(dy.to(kCPU), cy, 1e-4, 1e-5));
    sum(cy * cy * cx).backward();
    sum(dy * dy * dx).backward();
    CHECK(allclose(dx.grad().to(kCPU), cx.grad(), 1e-4, 1e-5));
    // The running statistics are updated on the device.
    const auto cpu_buffers = cpu_bn->buffers(), dev_buffers = dev_bn->buffers();
    REQUIRE(cpu_buffers.size() == dev_buffers.size());
    for (std::size_t i = 0; i < cpu_buffers.size(); ++i)
      if (cpu_buffers[i].is<float>()) {
        CHECK(dev_buffers[i].as<float>().device() == dev);
        CHECK(allclose(dev_buffers[i].as<float>().to(kCPU), cpu_buffers[i].as<float>(), 1e-5, 1e-6));
      }
  }
}

TEST_CASE("streams: each thread's current stream per device, guards, and work queued on them") {
  using namespace tsr;
  using S = tsr::cuda::Stream;
  const S default0 = tsr::cuda::default_stream(0);
  CHECK(default0.id() == 0);
  CHECK(tsr::cuda::current_stream(0) == default0);
  CHECK(tsr::cuda::current_stream(1) == tsr::cuda::default_stream(1));
  const S s(1), t(1);
  CHECK(s.device() == Device(tsr::cuda(1)));
  CHECK(s.id() != 0);
  CHECK(s != t);  // the pool hands out its streams in turn
  CHECK(s.query());
  {
    const tsr::cuda::StreamGuard guard(s);
    CHECK(tsr::cuda::current_stream(1) == s);
    CHECK(tsr::cuda::current_stream(0) == default0);  // another device's current stream is left alone
    CHECK(guard.original_stream() == tsr::cuda::default_stream(1));
    {
      const tsr::cuda::StreamGuard inner(t);
      CHECK(tsr::cuda::current_stream(1) == t);
    }
    CHECK(tsr::cuda::current_stream(1) == s);
    // The current stream is this thread's: another thread sees the default.
    S seen = s;
    std::thread([&] { seen = tsr::cuda::current_stream(1); }).join();
    CHECK(seen == tsr::cuda::default_stream(1));
    // Work on the stream: the same results.
    const Tensor<float> x = arange<float>(0.f, 6.f).to(tsr::cuda(1));
    const Tensor<float> y = exp(x) * 2.f + x;
    CHECK(allclose(y.to(kCPU), exp(arange<float>(0.f, 6.f)) * 2.f + arange<float>(0.f, 6.f)));
    CHECK(sum(y).item() == doctest::Approx(sum(y.to(kCPU)).item()));
    s.synchronize();
  }
  CHECK(tsr::cuda::current_stream(1) == tsr::cuda::default_stream(1));
  tsr::cuda::set_stream(t);
  CHECK(tsr::cuda::current_stream(1) == t);
  tsr::cuda::set_stream(tsr::cuda::default_stream(1));
  std::ostringstream os;
  os << default0;
  CHECK(os.str() == "<tsr::cuda::Stream device=cuda:0 cuda_stream=0x0>");
  CHECK_THROWS_WITH_AS(S(2), doctest::Contains("CUDA error: invalid device ordinal"), Error);
}

TEST_CASE("streams: the caching allocator's blocks follow the stream they were allocated on") {
  using namespace tsr;
  const tsr::cuda::Stream side(0);
  const auto address = [](const Tensor<float>& x) { return static_cast<const void*>(x.device_data_ptr()); };
  const void* freed = nullptr;
  {
    const Tensor<float> a = empty<float>({1000}, tsr::cuda(0));
    freed = address(a);
  }
  {
    // Freed on the default stream: not for another stream's use at once.
    const tsr::cuda::StreamGuard guard(side);
    const Tensor<float> b = empty<float>({1000}, tsr::cuda(0));
    CHECK(address(b) != freed);
  }
  // ... and the default stream takes it back.
  const Tensor<float> c = empty<float>({1000}, tsr::cuda(0));
  CHECK(address(c) == freed);
  // record_stream marks a tensor used by another stream's work too.
  const void* recorded = nullptr;
  {
    const Tensor<float> d = empty<float>({1000}, tsr::cuda(0));
    recorded = address(d);
    record_stream(d, side);
  }
  const Tensor<float> e = empty<float>({1000}, tsr::cuda(0));
  CHECK(address(e) == recorded);  // the emulated side stream's work is done: reused on its own stream
  CHECK_THROWS_WITH_AS(record_stream(arange<float>(0.f, 2.f), side),
                       "record_stream: the tensor is on cpu, not on a CUDA device", Error);
  CHECK_THROWS_WITH_AS(record_stream(e.to(tsr::cuda(1)), side),
                       "record_stream: the tensor is on cuda:1 and the stream on cuda:0", Error);
}

TEST_CASE("events: recorded on a stream, queried, waited for and timed") {
  using namespace tsr;
  tsr::cuda::Event start, end;
  CHECK_FALSE(start.is_recorded());
  CHECK(start.query());  // as PyTorch's: nothing recorded, nothing to wait for
  CHECK_THROWS_WITH_AS((void)start.elapsed_time(end), "Both events must be recorded before calculating elapsed time.", Error);
  const tsr::cuda::Stream s(0);
  start.record(s);
  const Tensor<float> x = ones<float>({1 << 16}, tsr::cuda(0));
  {
    const tsr::cuda::StreamGuard guard(s);
    const Tensor<float> y = x * 3.f;
    end.record();  // this thread's current stream: s
  }
  CHECK(start.is_recorded());
  end.synchronize();
  CHECK(end.query());
  CHECK(start.elapsed_time(end) >= 0.f);
  tsr::cuda::default_stream(0).wait_event(end);
  tsr::cuda::default_stream(0).wait_stream(s);
}

TEST_CASE("device tensors: PyTorch's errors for mixed devices, bad devices and exhausted memory") {
  using namespace tsr;
  const auto host = arange<float>(0.f, 6.f);
  const auto dev0 = host.to(tsr::cuda(0));
  const auto dev1 = host.to(tsr::cuda(1));
  CHECK_THROWS_WITH_AS(Tensor<float>(dev0 + host), "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!", Error);
  CHECK_THROWS_WITH_AS(Tensor<float>(dev0 * dev1), "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!", Error);
  Tensor<float> into_cpu = host.clone();
  CHECK_THROWS_WITH_AS(into_cpu.copy_(dev0 * 2.f), "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!", Error);
  CHECK_THROWS_WITH_AS(sum(dev0 - host), "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!", Error);
  CHECK_THROWS_WITH_AS(zeros<float>({2}, tsr::cuda(2)), doctest::Contains("CUDA error: invalid device ordinal"), Error);
  CHECK_THROWS_WITH_AS(tsr::cuda(-1), "Device index must not be negative", Error);
  // Operations without a device path yet refuse device tensors instead of
  // reading device memory on the host.
  CHECK_THROWS_WITH_AS(dev0.data_ptr(), "this operation (it reads the tensor's memory on the host, through data_ptr()) runs on the CPU only in tessera and cannot take tensors on cuda:0; copy them to the CPU first with .to(tsr::kCPU)", Error);
  CHECK(dev0.device_data_ptr() != nullptr);
  // 20 GiB on a 16 GiB device: the cache is emptied, the allocation retried
  // once, then torch.cuda.OutOfMemoryError's text.
  CHECK_THROWS_WITH_AS(empty<float>({int64_t(5) << 30}, tsr::cuda(1)),
                       doctest::Contains("CUDA out of memory. Tried to allocate 20.00 GiB (GPU 1; 16.00 GiB total capacity"),
                       OutOfMemoryError);
}

TEST_CASE("device tensors: memory statistics follow the tensors, through the caching allocator") {
  using namespace tsr;
  tsr::cuda::empty_cache();
  const std::size_t before = tsr::cuda::memory_allocated(1);
  const std::size_t before0 = tsr::cuda::memory_allocated(0);
  tsr::cuda::reset_peak_memory_stats(1);
  {
    const auto a = empty<float>({1000}, tsr::cuda(1));   // 4000 bytes: 4096 in 512-byte units
    const auto b = empty<double>({100}, tsr::cuda(1));   // 800 bytes: 1024
    CHECK(tsr::cuda::memory_allocated(1) == before + 4096 + 1024);
    CHECK(tsr::cuda::memory_reserved(1) >= std::size_t(2) << 20);  // one small-pool segment at least
    CHECK(tsr::cuda::memory_allocated(0) == before0);                // devices keep their own
  }
  CHECK(tsr::cuda::memory_allocated(1) == before);
  CHECK(tsr::cuda::max_memory_allocated(1) == before + 4096 + 1024);
  tsr::cuda::reset_peak_memory_stats(1);
  CHECK(tsr::cuda::max_memory_allocated(1) == before);
  tsr::cuda::empty_cache();
  if (before == 0) CHECK(tsr::cuda::memory_reserved(1) == 0);
  CHECK(tsr::cuda::memory_summary(1).find("tessera CUDA memory summary, device ID 1") != std::string::npos);
  tsr::cuda::synchronize();
}
// Defined in test/cuda/host_only_unit.cpp, compiled without the backend.
namespace host_only {
tsr::Tensor<double> scaled_cosh(const tsr::Tensor<double>& t);
double summed_cosh(const tsr::Tensor<double>& t);
}  // namespace host_only

TEST_CASE("device tensors in a translation unit compiled without CUDA: tessera's error, no device memory read") {
  const auto cpu = tsr::arange<double>(0., 4.);
  const auto dev = cpu.to(tsr::cuda(0));
  const char* message = "tessera was compiled without CUDA in this translation unit";
  CHECK_THROWS_WITH_AS(host_only::scaled_cosh(dev), doctest::Contains(message), tsr::Error);
  CHECK_THROWS_WITH_AS(host_only::summed_cosh(dev), doctest::Contains(message), tsr::Error);
  // The same unit computes on CPU tensors, and copies device tensors (no
  // device code needed).
  const auto host_result = host_only::scaled_cosh(cpu).to_vector();
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    CHECK(host_result[i] == doctest::Approx(std::cosh(double(i)) * 4.25).epsilon(1e-15));
    total += std::cosh(double(i)) * 4.25;
  }
  CHECK(host_only::summed_cosh(cpu) == doctest::Approx(total).epsilon(1e-15));
  CHECK(host_only::scaled_cosh(dev.to(tsr::kCPU)).to_vector() == host_result);
}
#else
TEST_CASE("device elementwise evaluation: not tested in this build") {
  MESSAGE("Thrust was not found (the CUDA Toolkit's CCCL headers): the emulated device evaluation is not built");
}
#endif
