// Core types: Shape, half/bfloat16 conversions (bit-exact with PyTorch),
// type promotion (against torch.promote_types / result_type), storage and
// the caching allocator.
#include "common.hpp"

using namespace tsr;

TEST_CASE("SmallVector stays inline up to 8 and grows beyond") {
  Shape s{1, 2, 3};
  CHECK(s.size() == 3);
  for (int i = 0; i < 20; ++i) s.push_back(i);
  CHECK(s.size() == 23);
  CHECK(s[22] == 19);
  Shape copy = s;
  CHECK(copy == s);
  s.erase(0);
  CHECK(s[0] == 2);
  s.insert(0, 9);
  CHECK(s[0] == 9);
  CHECK(test::repr(Shape{2, 3}) == "[2, 3]");
}

TEST_CASE("half and bfloat16 conversions are bit-exact with PyTorch") {
  const auto x = test::golden<float>("unary_in_f32").to_vector();
  const auto h = test::golden<int32_t>("f16_from_f32").to_vector();
  const auto b = test::golden<int32_t>("bf16_from_f32").to_vector();
  REQUIRE(x.size() == h.size());
  int bad_h = 0, bad_b = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    bad_h += half(x[i]).bits != static_cast<uint16_t>(h[i]);
    bad_b += bfloat16(x[i]).bits != static_cast<uint16_t>(b[i]);
  }
  CHECK(bad_h == 0);
  CHECK(bad_b == 0);
  // Every 16-bit pattern back to float.
  const auto fh = test::golden<float>("f16_all_to_f32").to_vector();
  const auto fb = test::golden<float>("bf16_all_to_f32").to_vector();
  int bad_back = 0;
  for (uint32_t u = 0; u < 65536; ++u) {
    const float a = half::from_bits(uint16_t(u)), c = bfloat16::from_bits(uint16_t(u));
    bad_back += !(std::memcmp(&a, &fh[u], 4) == 0 || (std::isnan(a) && std::isnan(fh[u])));
    bad_back += !(std::memcmp(&c, &fb[u], 4) == 0 || (std::isnan(c) && std::isnan(fb[u])));
  }
  CHECK(bad_back == 0);
  // Arithmetic through float, rounded per op (half tensors).
  auto hv = tensor<float>({0.1f, 0.2f, 1.5f, -3.25f, 1000.f}).to<half>();
  auto rolled = tensor<float>({0.2f, 1.5f, -3.25f, 1000.f, 0.1f}).to<half>();
  Tensor<half> sum = hv + rolled, prod = hv * rolled;
  const auto want_add = test::golden<int32_t>("f16_arith_add").to_vector();
  const auto want_mul = test::golden<int32_t>("f16_arith_mul").to_vector();
  for (int i = 0; i < 5; ++i) {
    CHECK(sum(i).bits == uint16_t(want_add[i]));
    CHECK(prod(i).bits == uint16_t(want_mul[i]));
  }
}

namespace {
// Type codes in tools/make_golden.py's DTYPES order.
template <class T>
constexpr int code() {
  if constexpr (std::is_same_v<T, bool>) return 0;
  else if constexpr (std::is_same_v<T, int32_t>) return 1;
  else if constexpr (std::is_same_v<T, int64_t>) return 2;
  else if constexpr (std::is_same_v<T, half>) return 3;
  else if constexpr (std::is_same_v<T, bfloat16>) return 4;
  else if constexpr (std::is_same_v<T, float>) return 5;
  else return 6;
}
template <class A, class... Bs>
void check_row(const Tensor<int64_t>& tt, const Tensor<int64_t>& div, const Tensor<int64_t>& ts) {
  (
      [&] {
        CAPTURE(code<A>());
        CAPTURE(code<Bs>());
        CHECK(code<promote_t<A, Bs>>() == tt(code<A>(), code<Bs>()));
        using D = typename decltype(ones<A>({1}) / ones<Bs>({1}))::value_type;
        CHECK(code<D>() == div(code<A>(), code<Bs>()));
      }(),
      ...);
  CHECK(code<typename decltype(ones<A>({1}) + true)::value_type>() == ts(code<A>(), 0));
  CHECK(code<typename decltype(ones<A>({1}) + 2)::value_type>() == ts(code<A>(), 1));
  CHECK(code<typename decltype(ones<A>({1}) + 2.5)::value_type>() == ts(code<A>(), 2));
}
}  // namespace

TEST_CASE("type promotion matches torch.promote_types and result_type") {
  const auto tt = test::golden<int64_t>("promote_tensor_tensor");
  const auto div = test::golden<int64_t>("promote_div");
  const auto ts = test::golden<int64_t>("promote_tensor_scalar");
#define TSR_ALL_TYPES bool, int32_t, int64_t, half, bfloat16, float, double
  check_row<bool, TSR_ALL_TYPES>(tt, div, ts);
  check_row<int32_t, TSR_ALL_TYPES>(tt, div, ts);
  check_row<int64_t, TSR_ALL_TYPES>(tt, div, ts);
  check_row<half, TSR_ALL_TYPES>(tt, div, ts);
  check_row<bfloat16, TSR_ALL_TYPES>(tt, div, ts);
  check_row<float, TSR_ALL_TYPES>(tt, div, ts);
  check_row<double, TSR_ALL_TYPES>(tt, div, ts);
#undef TSR_ALL_TYPES
}

TEST_CASE("storage: alignment, resize_, from_blob, version") {
  auto t = empty({1000});
  CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64 == 0);
  auto big = empty({1 << 20});
  CHECK(reinterpret_cast<uintptr_t>(big.data_ptr()) % (2 << 20) == 0);
  auto s = big.storage();
  s->resize_(0);
  CHECK(s->nbytes() == 0);
  s->resize_(16);
  CHECK(s->nbytes() == 16);
  float buf[6] = {1, 2, 3, 4, 5, 6};
  auto blob = from_blob(buf, {2, 3});
  blob *= 2.f;
  CHECK(buf[5] == 12.f);
  CHECK_THROWS_AS(blob.storage()->resize_(0), Error);
  auto strided = from_blob(buf, {3}, {2});
  CHECK(strided.to_vector() == std::vector<float>{2, 6, 10});
}

TEST_CASE("set_: a tensor made a view of another storage, seen through every handle") {
  auto flat = arange<float>(0.f, 10.f);
  auto w = zeros<float>({2, 2});
  const auto same = w;  // another handle to the same tensor
  w.set_(flat.storage(), 3, {2, 2});
  CHECK(same.to_vector() == std::vector<float>{3, 4, 5, 6});
  w.set_(flat.storage(), 1, {2, 2}, {1, 4});
  CHECK(same.to_vector() == std::vector<float>{1, 5, 2, 6});
  CHECK(flat.storage()->version() == 0);  // metadata only: nothing was written
  auto leaf = zeros<float>({2}).requires_grad_();
  CHECK_THROWS_WITH_AS(leaf.set_(flat.storage(), 0, {2}),
                       "a leaf Variable that requires grad is being used in an in-place operation.", Error);
  {
    NoGradGuard guard;
    leaf.set_(flat.storage(), 8, {2});
  }
  CHECK(leaf.to_vector() == std::vector<float>{8, 9});
  CHECK_THROWS_AS(w.set_(flat.storage(), 0, {2, 2}, {1}), Error);
}

TEST_CASE("the caching allocator reuses large blocks and empty_cache releases them") {
  empty_cache();
  const void* first;
  {
    auto a = empty({4 << 20});
    first = a.data_ptr();
  }
  CHECK(detail::CpuAllocator::instance().cached_bytes() >= (16u << 20));
  auto b = empty({4 << 20});
  CHECK(b.data_ptr() == first);
  b = Tensor<float>();
  empty_cache();
  CHECK(detail::CpuAllocator::instance().cached_bytes() == 0);
}

TEST_CASE("CUDA tensors are refused with PyTorch's message in a CPU build") {
  CHECK_THROWS_WITH_AS(zeros({2}, cuda(0)), doctest::Contains("Torch not compiled with CUDA enabled"), Error);
  CHECK_THROWS_WITH_AS(ones({2}).to(cuda()), doctest::Contains("Torch not compiled with CUDA enabled"), Error);
  CHECK(ones({2}).device() == kCPU);
  CHECK(ones({2}).to(kCPU).device() == kCPU);
  // torch.cuda's answers in a CPU-only PyTorch.
  CHECK_FALSE(cuda::is_available());
  CHECK(cuda::device_count() == 0);
  cuda::empty_cache();
  CHECK_THROWS_WITH_AS(cuda::memory_allocated(), doctest::Contains("Torch not compiled with CUDA enabled"), Error);
  CHECK_THROWS_WITH_AS(cuda::synchronize(), doctest::Contains("Torch not compiled with CUDA enabled"), Error);
  // Pinned memory is the CUDA runtime's; the tensor is not pinned.
  CHECK_FALSE(ones({2}).is_pinned());
  CHECK_THROWS_WITH_AS(ones({2}).pin_memory(), doctest::Contains("Torch not compiled with CUDA enabled"), Error);
  CHECK(ones({2}).to(kCPU, true).device() == kCPU);
}
