// Factories: values against PyTorch (arange, linspace, rand with a seed),
// seeding, distributions, and errors.
#include <random>

#include "common.hpp"

using namespace tsr;

TEST_CASE("arange and linspace match PyTorch") {
  CHECK(equal(arange<float>(-1.5f, 2.7f, 0.25f), test::golden<float>("arange_f32")));
  CHECK(equal(arange<double>(-1.5, 2.7, 0.3), test::golden<double>("arange_f64_fine")));
  CHECK(equal(arange<double>(0, 1, 0.1), test::golden<double>("arange_f64")));
  CHECK(equal(arange<int64_t>(-5, 17, 3), test::golden<int64_t>("arange_i64")));
  CHECK(equal(linspace<float>(-1, 1, 9), test::golden<float>("linspace_f32")));
  CHECK(equal(linspace<float>(0, 10, 7), test::golden<float>("linspace_f32_b")));
  // PyTorch's vectorized double kernel rounds some middle values differently.
  CHECK(test::worst_ulp<double>(linspace<double>(-3, 7, 13), test::golden<double>("linspace_f64")) <= 1);
  CHECK(arange<float>(5.f).to_vector() == std::vector<float>{0, 1, 2, 3, 4});
  CHECK(linspace<float>(2, 3, 1).to_vector() == std::vector<float>{2});
  CHECK(linspace<float>(2, 3, 0).numel() == 0);
}

TEST_CASE("the generator's engine is the standard's mt19937, word for word") {
  for (uint32_t seed : {5489u, 0u, 1u, uint32_t(67280421310721ull), 0xffffffffu}) {
    std::mt19937 reference(seed);
    detail::MersenneTwister engine(seed);
    bool same = true;
    for (int i = 0; i < 5000 && same; ++i) same = engine() == reference();  // crosses 8 regenerations
    CHECK_MESSAGE(same, "seed ", seed);
  }
  detail::MersenneTwister standard;  // the standard's check: the 10000th output of the default seed
  uint32_t x = 0;
  for (int i = 0; i < 10000; ++i) x = standard();
  CHECK(x == 4123659995u);
}

TEST_CASE("rand after manual_seed gives PyTorch's numbers") {
  manual_seed(0);
  CHECK(equal(rand({1000}), test::golden<float>("rand_seed0_f32")));
  manual_seed(42);
  CHECK(equal(rand<double>({100}), test::golden<double>("rand_seed42_f64")));
  manual_seed(0);
  auto m = rand({10, 100});
  CHECK(equal(m.flatten(), test::golden<float>("rand_seed0_f32")));
}

TEST_CASE("the same seed gives the same randn and randint; values are in range") {
  manual_seed(5);
  auto a = randn({10000});
  auto i = randint(-3, 7, {10000});
  manual_seed(5);
  CHECK(equal(a, randn({10000})));
  CHECK(equal(i, randint(-3, 7, {10000})));
  CHECK(std::abs(mean(a).item()) < 0.05);
  CHECK(std::abs(mean(a * a).item() - 1) < 0.05);
  CHECK(amin(i).item() == -3);
  CHECK(amax(i).item() == 6);
  auto u = empty({1000}).uniform_(2, 3);
  CHECK(amin(u).item() >= 2.f);
  CHECK(amax(u).item() < 3.f);
  auto t = zeros({4, 5}).t();
  t.normal_(1, 0);  // a non-contiguous tensor is filled in logical order
  CHECK(equal(t, ones({5, 4})));
}

TEST_CASE("constant factories and *_like") {
  CHECK(zeros({2, 3}).to_vector() == std::vector<float>(6, 0.f));
  CHECK(ones<int32_t>({2}).to_vector() == std::vector<int32_t>{1, 1});
  CHECK(full({2}, 2.5).to_vector() == std::vector<double>{2.5, 2.5});
  CHECK(equal(eye(3), tensor<float>({1, 0, 0, 0, 1, 0, 0, 0, 1}, {3, 3})));
  auto x = arange<float>(0.f, 4.f).reshape({2, 2});
  CHECK(equal(zeros_like(x * 2.f), zeros({2, 2})));
  CHECK(equal(ones_like(x), ones({2, 2})));
  CHECK(equal(full_like(x, 7), full({2, 2}, 7.f)));
  CHECK(empty_like(cast<int64_t>(x)).sizes() == Shape{2, 2});
  // *_like draw from the same generator as rand/randn (checked against torch above).
  manual_seed(9);
  const auto r = rand_like(x), n = randn_like(x);
  manual_seed(9);
  CHECK(equal(r, rand({2, 2})));
  CHECK(equal(n, randn({2, 2})));
}

TEST_CASE("bad factory arguments raise PyTorch's errors") {
  CHECK_THROWS_WITH_AS(arange<float>(0, 10, 0), "step must be nonzero", Error);
  CHECK_THROWS_WITH_AS(arange<float>(10, 0, 1), "upper bound and larger bound inconsistent with step sign", Error);
  CHECK_THROWS_WITH_AS(linspace<float>(0, 1, -1), "number of steps must be non-negative", Error);
  CHECK_THROWS_WITH_AS(randint(5, 5, {3}), "random_ expects 'from' to be less than 'to', but got from=5 >= to=5", Error);
  CHECK_THROWS_WITH_AS(zeros({-1}), "Trying to create tensor with negative dimension -1: [-1]", Error);
  CHECK_THROWS_AS(tensor<float>({1, 2, 3}, {2, 2}), Error);
}
