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

TEST_CASE_TEMPLATE("exponential_, geometric_, cauchy_, log_normal_ and small normal_ / randn give PyTorch's numbers", T,
                   float, double) {
  const std::string tag = std::is_same_v<T, float> ? "f32" : "f64";
  const auto want = [&](const std::string& name) { return test::golden<T>("rip_" + name + "_" + tag); };
  // 1-ulp differences of libm's log, tan and exp between this build and PyTorch's are allowed.
  const auto check = [&](const Tensor<T>& got, const std::string& name) {
    INFO(name);
    CHECK(test::worst_ulp<T>(got, want(name)) <= 1);
  };
  manual_seed(11);
  check(empty<T>({6, 7}).exponential_(2.0), "exponential");
  manual_seed(11);
  check(empty<T>({6, 7}).exponential_(), "exponential_1");
  manual_seed(11);
  check(empty<T>({6, 7}).geometric_(0.3), "geometric");
  manual_seed(11);
  check(empty<T>({6, 7}).cauchy_(1.0, 2.0), "cauchy");
  manual_seed(11);
  check(empty<T>({6, 7}).log_normal_(1.0, 0.5), "log_normal");
  manual_seed(11);
  check(empty<T>({15}).normal_(3.0, 2.0), "normal_small");
  manual_seed(12);
  check(randn<T>({3, 5}), "randn_small");
  // 16 values or more: PyTorch's normal_fill, to the bit in double. Its AVX2
  // build computes the float one with SLEEF's log, sin and cos, whose last
  // bits differ from the C library's: within 2e-6 here.
  const double tol = std::is_same_v<T, float> ? 2e-6 : 0;
  manual_seed(14);
  test::check_close(randn<T>({16}), want("randn_16"), tol, tol, "randn of 16");
  manual_seed(15);
  test::check_close(randn<T>({5, 201}), want("randn_1005"), tol, tol, "randn of 1005");
  manual_seed(16);
  test::check_close(empty<T>({40}).normal_(-2.0, 0.5), want("normal_40"), tol, tol, "normal_ of 40");
  CHECK(test::error_of([] { empty<T>({2}).geometric_(1.0); }) == "geometric_ expects p to be in (0, 1), but got p=1");
  CHECK(test::error_of([] { empty<T>({2}).log_normal_(0.0, 0.0); }) == "log_normal_ expects std > 0.0, but found std=0");
  CHECK(test::error_of([] { empty<T>({2}).exponential_(-1.0); }) ==
        "exponential_ expects lambda >= 0.0, but found lambda=-1");
}

TEST_CASE("geometric_ on an integer tensor, random_ and randint give PyTorch's numbers") {
  manual_seed(13);
  CHECK(equal(empty<int64_t>({5, 8}).geometric_(0.2), test::golden<int64_t>("rip_geometric_i64")));
  manual_seed(19);
  CHECK(equal(empty<float>({12}).random_(), test::golden<float>("rip_random_f32")));
  manual_seed(19);
  CHECK(equal(empty<double>({12}).random_(), test::golden<double>("rip_random_f64")));
  manual_seed(19);
  CHECK(equal(empty<int64_t>({12}).random_(), test::golden<int64_t>("rip_random_i64")));
  manual_seed(19);
  CHECK(equal(cast<double>(empty<int32_t>({12}).random_()), test::golden<double>("rip_random_i32")));
  manual_seed(19);
  CHECK(equal(cast<double>(empty<bool>({12}).random_()), test::golden<double>("rip_random_b")));
  manual_seed(20);
  CHECK(equal(empty<float>({12}).random_(7), test::golden<float>("rip_random_to_f32")));
  manual_seed(20);
  CHECK(equal(empty<int32_t>({12}).random_(-50, 50), test::golden<int32_t>("rip_random_from_to_i32")));
  CHECK(test::error_of([] { empty<float>({2}).random_(3, 3); }) ==
        "random_ expects 'from' to be less than 'to', but got from=3 >= to=3");
  manual_seed(17);
  CHECK(equal(randint(-3, 7, {6, 9}), test::golden<int64_t>("rip_randint")));
  manual_seed(18);
  CHECK(equal(randint(-(int64_t{1} << 40), int64_t{1} << 41, {20}), test::golden<int64_t>("rip_randint_wide")));
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

namespace {
// The mean of a tensor's elements, in double.
template <class T>
double mean_of(const Tensor<T>& t) {
  return mean(cast<double>(t)).item();
}
}  // namespace

TEST_CASE_TEMPLATE("multinomial, poisson and normal with tensor parameters give PyTorch's numbers for a seed", T, float,
                   double) {
  const std::string tag = std::is_same_v<T, float> ? "f32" : "f64";
  const auto want = [&](const std::string& name) { return test::golden<T>("rl_" + name + "_" + tag); };
  const Tensor<T> w = tensor<T>({0.1, 0.0, 2.0, 0.7, 0.7, 1.3, 0.05, 0.0, 3.0, 0.4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 1e-3, 0.0, 0.0, 2.0})
                          .reshape({3, 10});
  manual_seed(23);
  CHECK(equal(multinomial(w, 3), test::golden<int64_t>("rl_multinomial_" + tag)));
  manual_seed(24);
  CHECK(equal(multinomial(w, 40, true), test::golden<int64_t>("rl_multinomial_replacement_" + tag)));
  manual_seed(25);
  CHECK(equal(multinomial(Tensor<T>(w.select(0, 0)), 1, true), test::golden<int64_t>("rl_multinomial_one_" + tag)));
  manual_seed(26);
  const std::vector<T> rates = {T(0.0), T(0.5), T(3.0), T(9.9), T(10.0), T(25.0), T(200.0)};
  std::vector<T> thrice;
  for (int i = 0; i < 3; ++i) thrice.insert(thrice.end(), rates.begin(), rates.end());
  CHECK(equal(poisson(tensor<T>(thrice)), want("poisson")));
  const Tensor<T> mean = want("normal_mean"), std = want("normal_std");
  // Through randn: to the bit in double, within SLEEF's last bits in float (see randn).
  const double tol = std::is_same_v<T, float> ? 1e-5 : 0;
  manual_seed(27);
  test::check_close(normal(mean, std), want("normal_tt"), tol, tol, "normal(tensor, tensor)");
  manual_seed(28);
  test::check_close(normal(mean, 0.7), want("normal_td"), tol, tol, "normal(tensor, number)");
  manual_seed(29);
  test::check_close(normal(1.5, std), want("normal_dt"), tol, tol, "normal(number, tensor)");
  manual_seed(30);
  test::check_close(normal(Tensor<T>(mean.slice(0, 0, 5)), 0.7), want("normal_small"), 0, 0, "normal of 5");
}

TEST_CASE("bernoulli, multinomial, poisson and normal draw with the parameters they are given") {
  // Each check allows about 5 standard errors of the sample mean: a wrong
  // distribution fails, a right one passes for any seed (and this seed is fixed).
  manual_seed(5);
  const int64_t n = 200000;
  const auto p = full<float>({n}, 0.3f);
  const auto coins = bernoulli(p);
  CHECK(equal(coins * (1.f - coins), zeros<float>({n})));  // only 0 and 1
  CHECK(std::abs(mean_of(coins) - 0.3) < 5 * std::sqrt(0.3 * 0.7 / n));
  CHECK(equal(bernoulli(tensor<double>({0, 1, 0, 1})), tensor<double>({0, 1, 0, 1})));
  auto x = zeros<double>({n});
  bernoulli_(x, 0.75);
  CHECK(std::abs(mean_of(x) - 0.75) < 5 * std::sqrt(0.75 * 0.25 / n));
  CHECK(test::error_of([] { (void)bernoulli(tensor<float>({1.5f})); }) ==
        "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  CHECK(test::error_of([] { (void)bernoulli(ones<float>({3}), 1.5); }) == "bernoulli_ expects p to be in [0, 1], but got p=1.5");

  // With replacement: frequencies proportional to the weights; a weight of 0 is never drawn.
  const auto weights = tensor<float>({1.f, 0.f, 3.f});
  const auto draws = multinomial(weights, n, true);
  CHECK(draws.sizes() == Shape{n});
  CHECK(equal(sum(Tensor<int64_t>(draws == int64_t{1})), full<int64_t>({}, 0)));
  CHECK(std::abs(mean_of(Tensor<bool>(draws == int64_t{2})) - 0.75) < 5 * std::sqrt(0.75 * 0.25 / n));
  // Without replacement: distinct categories per row, the weight-0 one last.
  const auto rows = multinomial(tensor<double>({1, 0, 1, 0, 2, 5}).reshape({2, 3}), 3);
  CHECK(rows.sizes() == Shape{2, 3});
  CHECK(rows(0, 2) == 1);
  CHECK(equal(std::get<0>(sort(rows, 1)), tensor<int64_t>({0, 1, 2, 0, 1, 2}).reshape({2, 3})));
  // The first of two draws without replacement from weights 1 : 3 is the second category 3/4 of the time.
  int64_t second_first = 0;
  const int64_t trials = 20000;
  for (int64_t t = 0; t < trials; ++t) second_first += multinomial(tensor<float>({1.f, 3.f}), 2)(0) == 1;
  CHECK(std::abs(static_cast<double>(second_first) / trials - 0.75) < 5 * std::sqrt(0.75 * 0.25 / trials));
  CHECK(test::error_of([] { (void)multinomial(ones<float>({3}), 4); }) ==
        "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  CHECK(test::error_of([] { (void)multinomial(zeros<float>({2}), 1); }) ==
        "invalid multinomial distribution (sum of probabilities <= 0)");
  CHECK(test::error_of([] { (void)multinomial(tensor<float>({1.f, -1.f}), 1); }) ==
        "probability tensor contains either `inf`, `nan` or element < 0");
  // With replacement, PyTorch's kernel says it otherwise.
  CHECK(test::error_of([] { (void)multinomial(tensor<float>({1.f, -1.f}), 1, true); }) ==
        "invalid multinomial distribution (encountering probability entry < 0)");
  CHECK(test::error_of([] { (void)multinomial(tensor<float>({1.f, INFINITY}), 3, true); }) ==
        "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
  CHECK(test::error_of([] { (void)multinomial(ones<float>({2, 2, 2}), 1); }) == "prob_dist must be 1 or 2 dim");
  CHECK(test::error_of([] { (void)multinomial(ones<float>({3}), 0); }) == "cannot sample n_sample <= 0 samples");

  // Poisson: mean and variance both the rate, below 10 (products of uniforms) and above (rejection).
  for (const double rate : {3.0, 40.0}) {
    CAPTURE(rate);
    const auto counts = poisson(full<double>({n}, rate));
    CHECK(equal(counts, floor(counts)));
    CHECK(std::abs(mean_of(counts) - rate) < 5 * std::sqrt(rate / n));
    CHECK(std::abs(var(counts).item() - rate) < 5 * rate * std::sqrt(2.0 / n) + 0.01 * rate);
  }
  CHECK(equal(poisson(zeros<float>({4})), zeros<float>({4})));
  CHECK(test::error_of([] { (void)poisson(tensor<float>({-1.f})); }) ==
        "invalid Poisson rate, expected rate to be non-negative");

  // normal with tensor parameters: each element its own mean and deviation.
  const auto both = normal(tensor<double>({-5, 10}).reshape({2, 1}), full<double>({n}, 2.0));
  CHECK(both.sizes() == Shape{2, n});
  CHECK(std::abs(mean_of(Tensor<double>(both.select(0, 0))) + 5) < 5 * 2 / std::sqrt(n));
  CHECK(std::abs(std::sqrt(var(both.select(0, 1)).item()) - 2) < 0.05);
  CHECK(equal(normal(tensor<float>({1.f, 2.f}), 0.0), tensor<float>({1.f, 2.f})));
  CHECK(test::error_of([] { (void)normal(zeros<float>({2}), tensor<float>({1.f, -1.f})); }) ==
        "normal expects all elements of std >= 0.0");

  // randint_like: the expression's shape and type; the same seed, the same numbers.
  manual_seed(9);
  const auto r1 = randint_like(zeros<float>({3, 4}), 2, 6);
  manual_seed(9);
  const auto r2 = randint_like(zeros<float>({3, 4}), 2, 6);
  CHECK(equal(r1, r2));
  CHECK(equal(Tensor<bool>((r1 >= 2.f) && (r1 < 6.f)), ones<bool>({3, 4})));
}
