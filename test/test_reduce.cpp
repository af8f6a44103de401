// Full reductions: values against PyTorch, result dtypes, fusion of the
// input, accuracy of float sums, and determinism across thread counts.
#include "common.hpp"

using namespace tsr;

TEST_CASE("sum, mean, prod, amax, amin match PyTorch") {
  const auto x = test::golden<float>("reduce_in");
  // Sums in a different order than PyTorch's: both must be within 1e-6 of the
  // exact sum relative to sum |x| (the condition of the problem).
  double exact = 0, scale = 0;
  for (float v : x.to_vector()) exact += v, scale += std::abs(v);
  CHECK(std::abs(sum(x).item() - exact) <= 1e-6 * scale);
  CHECK(std::abs(test::golden<double>("reduce_sum").item() - exact) <= 1e-6 * scale);
  CHECK(std::abs(mean(x).item() - exact / 3000) <= 1e-6 * scale / 3000);
  CHECK(test::worst_ulp<float>(prod(x.slice(1, 0, 50) * 0.5f + 1.f), test::golden<double>("reduce_prod")) <= 64);
  CHECK(amax(x).item() == test::golden<float>("reduce_amax").item());
  CHECK(amin(x).item() == test::golden<float>("reduce_amin").item());
  CHECK(x.max().item() == amax(x).item());
  // The transposed walk sums in another order: the same bound applies.
  CHECK(std::abs(x.t().sum().item() - exact) <= 1e-6 * scale);
}

TEST_CASE("sum of 2^24 values of 0.1f is accurate (pairwise), like PyTorch's") {
  auto x = full({1 << 24}, 0.1f);
  const double exact = double(0.1f) * (1 << 24);  // 1677721.625: the float 0.1f is not 0.1
  const double got = sum(x).item();
  // At least as accurate as PyTorch's (whose result is 1.5 off), whatever
  // the vector width: the blocks' order of summation depends on it.
  const double torch_error = std::abs(test::golden<double>("reduce_sum_tiny_pairs").item() - exact);
  CAPTURE(got);
  CHECK(std::abs(got - exact) <= std::max(torch_error, 1e-7 * exact));
  CHECK(std::abs(got - exact) / exact < 1e-6);
}

TEST_CASE("reductions fuse their input expression") {
  auto a = arange<float>(1.f, 5.f);
  auto b = full({4}, 2.f);
  CHECK(sum(a * b).item() == 20.f);
  CHECK(sum(a * b.expand({3, 4})).item() == 60.f);
  CHECK(prod(a).item() == 24.f);
  CHECK(mean(a + 1.f).item() == 3.5f);
  CHECK((a * b).sum().item() == 20.f);
}

TEST_CASE("result dtypes and empty inputs follow PyTorch") {
  auto i = arange<int32_t>(1, 5);
  static_assert(std::is_same_v<decltype(sum(i))::value_type, int64_t>);
  static_assert(std::is_same_v<decltype(prod(i))::value_type, int64_t>);
  static_assert(std::is_same_v<decltype(sum(i > 2))::value_type, int64_t>);
  static_assert(std::is_same_v<decltype(amax(i))::value_type, int32_t>);
  static_assert(std::is_same_v<decltype(sum(ones<half>({2})))::value_type, half>);
  CHECK(sum(i).item() == 10);
  CHECK(sum(i > 2).item() == 2);
  CHECK(amax(i).item() == 4);
  auto e = zeros({0});
  CHECK(sum(e).item() == 0.f);
  CHECK(prod(e).item() == 1.f);
  CHECK(std::isnan(mean(e).item()));
  CHECK_THROWS_WITH_AS(amax(e),
                       "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                       "dim with the 'dim' argument.",
                       Error);
  CHECK_THROWS_WITH_AS(argmin(e), "argmin(): Expected reduction dim to be specified for input.numel() == 0.",
                       IndexError);
  CHECK_THROWS_WITH_AS(max(e),
                       "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                       "dim with the 'dim' argument.",
                       Error);
}

TEST_CASE("NaN propagates through amax/amin; sum of inf") {
  auto x = tensor<float>({1, NAN, 3});
  CHECK(std::isnan(amax(x).item()));
  CHECK(std::isnan(amin(x).item()));
  auto big = full({100000}, 1.f);
  big(77777) = NAN;
  CHECK(std::isnan(amax(big).item()));
  CHECK(std::isnan(amin(big).item()));
  CHECK(std::isinf(sum(tensor<float>({INFINITY, 1})).item()));
}

TEST_CASE("reductions are bitwise identical for 1 and 2 threads") {
  manual_seed(11);
  auto a = randn({3, 1000003});
  auto b = randn({1000003});
  auto c = randn({2048, 700}).t();
  float s1 = 0, s2 = 0, m1 = 0, m2 = 0, t1 = 0, t2 = 0;
  test::with_threads(1, [&] {
    s1 = sum(a * b).item();
    m1 = amax(a - b).item();
    t1 = sum(c).item();
  });
  test::with_threads(2, [&] {
    s2 = sum(a * b).item();
    m2 = amax(a - b).item();
    t2 = sum(c).item();
  });
  CHECK(std::memcmp(&s1, &s2, 4) == 0);
  CHECK(std::memcmp(&m1, &m2, 4) == 0);
  CHECK(std::memcmp(&t1, &t2, 4) == 0);
}

TEST_CASE("allclose and equal") {
  auto a = tensor<float>({1, 2, 3});
  CHECK(allclose(a, a + 1e-7f));
  CHECK_FALSE(allclose(a, a + 1e-3f));
  CHECK(allclose(a, a + 1e-3f, 1e-2, 0));
  CHECK_FALSE(allclose(tensor<float>({NAN}), tensor<float>({NAN})));
  CHECK(allclose(tensor<float>({INFINITY}), tensor<float>({INFINITY})));
  CHECK(allclose(a, a.unsqueeze(0).expand({4, 3})));
  CHECK(equal(a, a.clone()));
  CHECK_FALSE(equal(a, a.unsqueeze(0)));
  CHECK_FALSE(equal(a, a + 1.f));
  CHECK(equal(arange<int64_t>(0, 3), tensor<int64_t>({0, 1, 2})));
}

TEST_CASE("equal, all and any on two threads never lose a group's answer") {
  // Each thread writes its groups' answers into one array; stored as the
  // bits of a std::vector<bool>, two threads' neighbouring answers raced and
  // equal() returned false about equal tensors a few times in a thousand.
  const int threads = get_num_threads();
  set_num_threads(2);
  const auto a = arange<float>(0.f, float(1 << 19));
  const Tensor<float> b = a.clone();
  int wrong = 0;
  for (int i = 0; i < 400; ++i) wrong += !equal(a, b) + !all(a == b).item() + any(a != b).item();
  CHECK(wrong == 0);
  set_num_threads(threads);
}
