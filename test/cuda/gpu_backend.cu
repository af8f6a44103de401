// The CUDA backend's calls into the CUDA runtime and cuBLAS, on a GPU: the
// caching allocator over real device memory (segments, reuse, streams and
// events, out of memory, empty_cache) and cuBLAS's products for every
// operand layout, in float, double, half and bfloat16, and with TF32 on and
// off. Built by nvcc for sm_80 and sm_90 wherever nvcc is installed; with no
// GPU it reports that it skipped (test/cuda/gpu_main.hpp).
#include <cuda/cublas.hpp>
#include <cuda/cuda_memory.hpp>

#include "gemm_cases.hpp"
#include "gpu_main.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace tsr::detail::cuda;

namespace {

constexpr std::size_t MiB = 1 << 20;

// Keeps a stream busy for `cycles` clock cycles.
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

template <class T>
struct DeviceVector {
  T* ptr = nullptr;
  std::size_t n = 0;
  explicit DeviceVector(const std::vector<T>& host) : n(host.size()) {
    check(cudaMalloc(&ptr, std::max<std::size_t>(n, 1) * sizeof(T)));
    check(cudaMemcpy(ptr, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  ~DeviceVector() { cudaFree(ptr); }
  std::vector<T> to_host() const {
    std::vector<T> host(n);
    check(cudaMemcpy(host.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
};

struct Cublas {
  cublasHandle_t handle = nullptr;
  Cublas() { check_cublas(cublasCreate(&handle), "cublasCreate"); }
  ~Cublas() { cublasDestroy(handle); }
};

}  // namespace

TEST_CASE("the caching allocator over device memory: shared segments, reuse, data that stays put") {
  CudaMemory device(0);
  CachingAllocator alloc(device, 0);
  const std::size_t free_before = device.memory_info().first;
  char* a = static_cast<char*>(alloc.allocate(1000, 0));
  char* b = static_cast<char*>(alloc.allocate(3000, 0));
  CHECK(b == a + 1024);  // one 2 MiB segment, split
  CHECK(alloc.stats().reserved_bytes[kAllPools].current == int64_t(2 * MiB));
  CHECK(device.memory_info().first <= free_before - 2 * MiB);
  check(cudaMemset(a, 0x5a, 1000));
  check(cudaMemset(b, 0x33, 3000));
  std::vector<unsigned char> back(1000);
  check(cudaMemcpy(back.data(), a, 1000, cudaMemcpyDeviceToHost));
  CHECK(std::count(back.begin(), back.end(), 0x5a) == 1000);
  alloc.deallocate(a);
  CHECK(alloc.allocate(900, 0) == a);  // reused from the cache, no cudaMalloc
  alloc.deallocate(a);
  alloc.deallocate(b);
  alloc.empty_cache();
  CHECK(alloc.stats().reserved_bytes[kAllPools].current == 0);
}

TEST_CASE("a block used on another stream is reused only once that stream's work is done") {
  CudaMemory device(0);
  CachingAllocator alloc(device, 0);
  cudaStream_t side = nullptr;
  check(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  int clock_khz = 0;
  check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  void* a = alloc.allocate(4096, 0);
  spin<<<1, 1, 0, side>>>(static_cast<long long>(clock_khz) * 200);  // about 200 ms of work on `side`
  check(cudaGetLastError());
  alloc.record_stream(a, reinterpret_cast<StreamId>(side));
  alloc.deallocate(a);
  void* b = alloc.allocate(4096, 0);
  CHECK(b != a);  // `side` may still be using a
  check(cudaStreamSynchronize(side));
  alloc.deallocate(b);
  CHECK(alloc.allocate(4096, 0) == a);  // the event has completed: a is free again
  check(cudaStreamDestroy(side));
}

TEST_CASE("out of memory on the device: the cache is freed, the allocation retried, then PyTorch's error") {
  CudaMemory device(0);
  CachingAllocator alloc(device, 0);
  alloc.deallocate(alloc.allocate(5 * MiB, 0));  // a cached segment
  const std::size_t total = device.memory_info().second;
  std::string message;
  try {
    alloc.allocate(total + 4096 * MiB, 0);
  } catch (const tsr::OutOfMemoryError& e) {
    message = e.what();
  }
  const std::string expected_start =
      "CUDA out of memory. Tried to allocate " + format_size(segment_size(round_size(total + 4096 * MiB))) +
      " (GPU 0; " + format_size(total) + " total capacity; 0 bytes already allocated; ";
  CHECK(message.substr(0, expected_start.size()) == expected_start);
  CHECK(message.find("0 bytes reserved in total by tessera)") != std::string::npos);
  CHECK(alloc.stats().num_alloc_retries == 1);
  CHECK(alloc.stats().num_ooms == 1);
  CHECK(alloc.stats().reserved_bytes[kAllPools].current == 0);  // the cached segment went back
  void* p = alloc.allocate(MiB, 0);  // and the device still works
  CHECK(p != nullptr);
  alloc.deallocate(p);
}

namespace {

// Every layout of gemm_cases, multiplied by cuBLAS in T, against the exact
// product (small integers: exact in every type).
template <class T>
void every_layout(cublasHandle_t handle) {
  using namespace gemm_cases;
  const int cases = for_each_case([&](int64_t batch, int64_t m, int64_t n, int64_t k, Layout la, Layout lb) {
    StridedMatrices<const T> a{}, b{};  // over the host copies, which the reference reads
    const std::vector<T> ha = fill(batch, m, k, la, a, 1), hb = fill(batch, k, n, lb, b, 2);
    const DeviceVector<T> da(ha), db(hb);
    const DeviceVector<T> dc(std::vector<T>(static_cast<std::size_t>(batch * m * (n + 1)), T(-1.f)));
    const StridedMatrices<T> c{dc.ptr, m * (n + 1), n + 1, 1};  // rows padded by one
    const auto g = column_major_gemm<T>(batch, m, n, k, {da.ptr, a.batch_stride, a.row_stride, a.col_stride},
                                        {db.ptr, b.batch_stride, b.row_stride, b.col_stride}, c);
    REQUIRE(g.has_value());
    gemm_strided_batched(handle, *g, T(1.f), T(0.f));
    const std::vector<T> got = dc.to_host();
    for (int64_t x = 0; x < batch; ++x)
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j)
          REQUIRE(static_cast<double>(got[static_cast<std::size_t>(x * c.batch_stride + i * c.row_stride + j)]) ==
                  product_element(a, b, k, x, i, j));
        // the padding column is left alone
        REQUIRE(static_cast<double>(got[static_cast<std::size_t>(x * c.batch_stride + i * c.row_stride + n)]) == -1.0);
      }
  });
  CHECK(cases == 125);
}

}  // namespace

TEST_CASE("cuBLAS computes the row-major product for every layout, without copies") {
  Cublas cublas;
  SUBCASE("float") { every_layout<float>(cublas.handle); }
  SUBCASE("double") { every_layout<double>(cublas.handle); }
  SUBCASE("half") { every_layout<tsr::half>(cublas.handle); }
  SUBCASE("bfloat16") { every_layout<tsr::bfloat16>(cublas.handle); }
}

TEST_CASE("float products are float products unless allow_tf32 is set, as in PyTorch") {
  Cublas cublas;
  constexpr int n = 512;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> ha(n * n), hb(n * n);
  for (float& v : ha) v = uniform(gen);
  for (float& v : hb) v = uniform(gen);
  std::vector<double> want(n * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int l = 0; l < n; ++l)
      for (int j = 0; j < n; ++j) want[i * n + j] += double(ha[i * n + l]) * double(hb[l * n + j]);
  const DeviceVector<float> da(ha), db(hb);
  const DeviceVector<float> dc(std::vector<float>(n * n));
  const auto g = column_major_gemm<float>(1, n, n, n, {da.ptr, 0, n, 1}, {db.ptr, 0, n, 1}, {dc.ptr, 0, n, 1});
  REQUIRE(g.has_value());
  const auto largest_error = [&] {
    gemm_strided_batched(cublas.handle, *g, 1.f, 0.f);
    const std::vector<float> got = dc.to_host();
    double worst = 0;
    for (int i = 0; i < n * n; ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    return worst;
  };
  REQUIRE(!tsr::backends::cuda::matmul::allow_tf32.load());
  const double fp32 = largest_error();
  tsr::backends::cuda::matmul::allow_tf32 = true;
  const double tf32 = largest_error();
  tsr::backends::cuda::matmul::allow_tf32 = false;
  MESSAGE("largest error of a 512^3 product: " << fp32 << " in float, " << tf32 << " with TF32");
  CHECK(fp32 < 1e-4);  // sums of 512 terms of size <= 1: float rounding
  CHECK(tf32 > 1e-3);  // TF32 keeps 10 bits of the operands' mantissas
}
