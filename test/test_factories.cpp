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

TEST_CASE("logspace and the window functions match PyTorch") {
  CHECK(test::worst_ulp<float>(logspace<float>(-1.5f, 2.25f, 7), test::golden("iw_logspace")) <= 1);
  CHECK(test::worst_ulp<double>(logspace<double>(0, 10, 11, 2.0), test::golden("iw_logspace_base")) <= 1);
  CHECK(equal(logspace<int64_t>(0, 3, 4), test::golden<int64_t>("iw_logspace_int")));
  CHECK(test::worst_ulp<float>(logspace<float>(1.5f, 9.f, 1), test::golden("iw_logspace_one")) <= 1);
  CHECK(test::error_of([] { logspace<float>(0, 1, -1); }) == "number of steps must be non-negative");

  // Each window computes in float with PyTorch's operations; cos and i0 may
  // round an ulp apart from PyTorch's (values near 0 come from cancellation:
  // an absolute tolerance of a few float ulps of 1).
  for (int64_t n : {0, 1, 2, 7, 10}) {
    for (bool periodic : {true, false}) {
      const std::string tag = std::to_string(n) + "_" + std::to_string(int(periodic));
      INFO("n = " << n << ", periodic = " << periodic);
      test::check_close(hann_window(n, periodic), test::golden("iw_hann_" + tag), 1e-6, 3e-7, "hann_window");
      test::check_close(hamming_window(n, periodic), test::golden("iw_hamming_" + tag), 1e-6, 3e-7, "hamming_window");
      test::check_close(bartlett_window(n, periodic), test::golden("iw_bartlett_" + tag), 0, 0, "bartlett_window");
      test::check_close(blackman_window(n, periodic), test::golden("iw_blackman_" + tag), 1e-6, 3e-7,
                        "blackman_window");
      test::check_close(kaiser_window(n, periodic), test::golden("iw_kaiser_" + tag), 2e-6, 3e-7, "kaiser_window");
    }
  }
  test::check_close(hamming_window<double>(9, false, 0.6, 0.3), test::golden("iw_hamming_ab"), 1e-15, 1e-16,
                    "hamming_window in double with alpha and beta");
  test::check_close(kaiser_window<double>(9, true, 4.5), test::golden("iw_kaiser_beta"), 1e-14, 1e-16,
                    "kaiser_window in double with beta");
  CHECK(test::error_of([] { hann_window(-1); }) ==
        "hann_window requires non-negative window_length, got window_length=-1");
  CHECK(test::error_of([] { kaiser_window(-2); }) ==
        "kaiser_window requires non-negative window_length, got window_length=-2");
}
