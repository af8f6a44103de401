// Device evaluation over the CPU's evaluator trees, on a GPU: elementwise
// expressions (broadcasting, transposed and strided operands and outputs,
// transcendental functions, comparisons, where, casts, integer ops) written
// by Thrust kernels, and full reductions (sums, products, extrema with NaN,
// counts, all), each against the CPU's evaluation of the same expression.
// With no GPU it reports that it skipped (gpu_main.hpp). nvcc is slow on a
// translation unit that includes tessera.hpp (minutes on a 2-core machine),
// so the test suite does not build it; docs/cuda.md gives the command.
#include <tessera.hpp>  // with the backend: cuda/elementwise.hpp and cuda/reduce.hpp

#include "gpu_main.hpp"

#include <cmath>
#include <limits>
#include <vector>

using tsr::Tensor;

namespace {

// Tensors whose elements live in device memory (from_blob over cudaMalloc),
// freed with the arena. Only their sizes and strides are read on the host.
class DeviceArena {
 public:
  DeviceArena() = default;
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;
  ~DeviceArena() {
    for (void* p : blocks_) cudaFree(p);
  }

  // A contiguous device copy of a host tensor.
  template <class T>
  Tensor<T> copy(const Tensor<T>& host) {
    const Tensor<T> c = host.contiguous();
    T* p = allocate<T>(c.numel());
    check(cudaMemcpy(p, c.data_ptr(), c.numel() * sizeof(T), cudaMemcpyHostToDevice));
    return tsr::from_blob(p, c.sizes());
  }
  // A contiguous device tensor of `shape`, every byte 0xff (so that an
  // element left unwritten shows).
  template <class T>
  Tensor<T> empty(tsr::Shape shape) {
    int64_t n = 1;
    for (const int64_t s : shape) n *= s;
    T* p = allocate<T>(n);
    check(cudaMemset(p, 0xff, static_cast<std::size_t>(n) * sizeof(T)));
    return tsr::from_blob(p, std::move(shape));
  }
  // A host copy of a contiguous device tensor.
  template <class T>
  static Tensor<T> to_host(const Tensor<T>& device) {
    Tensor<T> host = tsr::empty<T>(device.sizes());
    check(cudaMemcpy(host.data_ptr(), device.data_ptr(), device.numel() * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  template <class T>
  T* allocate(int64_t n) {
    void* p = nullptr;
    check(cudaMalloc(&p, static_cast<std::size_t>(std::max<int64_t>(n, 1)) * sizeof(T)));
    blocks_.push_back(p);
    return static_cast<T*>(p);
  }
  std::vector<void*> blocks_;
};

// out = e on the device (a Thrust kernel), along the plan the CPU would use.
template <class T, class E>
void evaluate(const Tensor<T>& out, const E& e) {
  tsr::detail::cuda::write_elements(out, e, tsr::detail::strided_plan(out.sizes(), out, e));
  check(cudaDeviceSynchronize());
}

}  // namespace

TEST_CASE("device elementwise evaluation gives the CPU's results") {
  using namespace tsr;
  DeviceArena dev;
  const auto a = arange<float>(-6.f, 6.f).view({3, 4});
  const auto b = arange<float>(1.f, 5.f);
  const auto col = arange<float>(0.f, 3.f).view({3, 1});
  const auto da = dev.copy(a), db = dev.copy(b), dcol = dev.copy(col);
  SUBCASE("broadcast operands, contiguous output") {
    const auto out = dev.empty<float>({3, 4});
    evaluate(out, da * db + dcol - 2.f);
    CHECK(equal(DeviceArena::to_host(out), a * b + col - 2.f));
  }
  SUBCASE("a transposed operand into a transposed output") {
    const auto out = dev.empty<float>({4, 3});
    evaluate(out.t(), da.t().t() / db.view({1, 4}) + da);
    const Tensor<float> want = a / b.view({1, 4}) + a;
    CHECK(equal(DeviceArena::to_host(out), want.t().contiguous()));
  }
  SUBCASE("strided slices and a 3-d broadcast, in double") {
    const auto big = arange<double>(0., 60.).view({3, 4, 5});
    const auto row = arange<double>(0., 3.).view({1, 1, 3});
    const auto dbig = dev.copy(big), drow = dev.copy(row);
    const auto out = dev.empty<double>({3, 4, 3});
    evaluate(out, dbig.slice(2, 0, 5, 2) * drow - dbig.slice(2, 0, 5, 2));
    CHECK(equal(DeviceArena::to_host(out), big.slice(2, 0, 5, 2) * row - big.slice(2, 0, 5, 2)));
  }
  SUBCASE("transcendental functions (within float rounding: the device's libm is not the CPU's)") {
    const auto out = dev.empty<float>({3, 4});
    evaluate(out, exp(sin(da) * 0.5f) + tanh(db) * log1p(abs(da)));
    CHECK(allclose(DeviceArena::to_host(out), exp(sin(a) * 0.5f) + tanh(b) * log1p(abs(a)), 1e-6, 1e-6));
  }
  SUBCASE("comparisons, where, casts and integer ops") {
    const auto out = dev.empty<float>({3, 4});
    evaluate(out, where(da > 0.f, da, -da * 2.f));
    CHECK(equal(DeviceArena::to_host(out), where(a > 0.f, a, -a * 2.f)));
    const auto out_i = dev.empty<int32_t>({3, 4});
    evaluate(out_i, cast<int32_t>(da * 3.f) % 4);
    CHECK(equal(DeviceArena::to_host(out_i), cast<int32_t>(a * 3.f) % 4));
    const auto out_b = dev.empty<bool>({3, 4});
    evaluate(out_b, da >= db);
    CHECK(equal(DeviceArena::to_host(out_b), a >= b));
  }
  SUBCASE("a large contiguous expression: every thread's element") {
    const auto x = arange<float>(0.f, float(1 << 20)).view({1024, 1024});
    const auto dx = dev.copy(x);
    const auto out = dev.empty<float>({1024, 1024});
    evaluate(out, dx * 0.5f - dx.t());
    CHECK(equal(DeviceArena::to_host(out), x * 0.5f - x.t()));
  }
  SUBCASE("an empty output launches nothing") {
    const auto out = dev.empty<float>({0, 4});
    evaluate(out, out + 1.f);
    CHECK(cudaGetLastError() == cudaSuccess);
  }
}

// (Device tensors here, not the arena's: a reduction keeps its partial
// results on the expression's device.)
TEST_CASE("device full reductions give the CPU's") {
  using namespace tsr;
  namespace cuda = tsr::detail::cuda;
  using tsr::detail::AllReducer, tsr::detail::MaxReducer, tsr::detail::MinReducer, tsr::detail::ProdReducer,
      tsr::detail::SumReducer;
  const Device device = tsr::cuda(0);
  const auto a = arange<float>(-6.f, 6.f).view({3, 4});
  const auto b = arange<float>(1.f, 5.f);
  const auto da = a.to(device), db = b.to(device);
  // Small integers: every partial sum is exact, whatever the order.
  CHECK(cuda::reduce_elements<SumReducer, float>(da * db + 1.f) == sum(a * b + 1.f).item());
  CHECK(cuda::reduce_elements<SumReducer, double>(da.t() * 2.f) == -12.0);
  CHECK(cuda::reduce_elements<ProdReducer, float>(db * db) == 576.f);
  CHECK(cuda::reduce_elements<MaxReducer, float>(da - db) == amax(a - b).item());
  CHECK(cuda::reduce_elements<MinReducer, float>(da.t() * db.view({4, 1})) == amin(a.t() * b.view({4, 1})).item());
  CHECK(cuda::reduce_elements<SumReducer, int64_t>(da > 0.f) == 5);
  CHECK(cuda::reduce_elements<AllReducer, bool>(db > 0.f));
  CHECK_FALSE(cuda::reduce_elements<AllReducer, bool>(da > -6.f));
  // NaN propagates through max and min, as on the CPU.
  const Tensor<float> nan_at_2 = where(a == 2.f, full<float>({}, std::numeric_limits<float>::quiet_NaN()), a);
  const auto with_nan = nan_at_2.to(device);
  CHECK(std::isnan(cuda::reduce_elements<MaxReducer, float>(with_nan * 1.f)));
  CHECK(std::isnan(cuda::reduce_elements<MinReducer, float>(with_nan * 1.f)));
  // A million elements: the tree of partial sums against the CPU's pairwise sum.
  const auto x = sin(arange<double>(0., double(1 << 20)));
  const Tensor<double> xs = x;
  const auto dx = xs.to(device);
  const double gpu = cuda::reduce_elements<SumReducer, double>(dx * 1.0);
  const double cpu = sum(xs).item();
  MESSAGE("sum of sin(0 .. 2^20 - 1): " << gpu << " on the device, " << cpu << " on the CPU");
  CHECK(std::abs(gpu - cpu) < 1e-9);
  const float gpu_f = cuda::reduce_elements<SumReducer, float>(tsr::cast<float>(dx));
  CHECK(std::abs(gpu_f - cpu) < 1e-2);
  // Empty: the identity, with no launch.
  CHECK(cuda::reduce_elements<SumReducer, float>(tsr::empty<float>({0, 3}, device) * 2.f) == 0.f);
}
