// Reductions over dims, composite reductions, index reductions and scans,
// against PyTorch 1.13 (tools/make_golden.py: reductions_dims) on four
// layouts of one input: contiguous, transposed, sliced with a step, and
// expanded (broadcast strides); quantiles, integration, covariance and the
// other statistics (statistics_more).
#include <functional>
#include <map>

#include "common.hpp"

using namespace tsr;
using test::check_close;
using test::error_of;

namespace {


std::map<std::string, Tensor<float>> layouts() {
  const auto x = test::golden<float>("rd_x");
  const auto b = test::golden<float>("rd_b");
  return {{"c", x}, {"t", x.transpose(0, 2)}, {"s", x.slice(1, 0, 6, 2).slice(2, 1, 7)}, {"e", b.expand({5, 6, 7})}};
}

const std::map<std::string, Shape> kDims = {{"0", {0}},     {"1", {1}},     {"2", {2}}, {"02", {0, 2}},
                                            {"12", {1, 2}}, {"m1", {-1}}, {"all", {}}};

using Fn = std::function<Tensor<double>(const Tensor<float>&, const Shape&)>;
template <class F>
Fn as_double(F f) {
  return [f](const Tensor<float>& x, const Shape& d) { return Tensor<double>(cast<double>(f(x, d))); };
}

}  // namespace

TEST_CASE("reductions over dims match PyTorch on every layout and dims list") {
  struct Op {
    Fn f;
    double rtol, atol;
  };
  const std::map<std::string, Op> ops = {
      {"sum", {as_double([](auto& x, auto& d) { return sum(x, d); }), 1e-5, 1e-5}},
      {"mean", {as_double([](auto& x, auto& d) { return mean(x, d); }), 1e-5, 1e-6}},
      {"prod", {as_double([](auto& x, auto& d) { return prod(1.f + 0.1f * x, d); }), 1e-5, 1e-7}},
      {"amax", {as_double([](auto& x, auto& d) { return amax(x, d); }), 0, 0}},
      {"amin", {as_double([](auto& x, auto& d) { return amin(x, d); }), 0, 0}},
      {"var", {as_double([](auto& x, auto& d) { return var(x, d); }), 1e-5, 1e-6}},
      {"std0", {as_double([](auto& x, auto& d) { return tsr::std(x, d, 0); }), 1e-5, 1e-6}},
      {"norm2", {as_double([](auto& x, auto& d) { return norm(x, 2, d); }), 1e-5, 1e-6}},
      {"norm1", {as_double([](auto& x, auto& d) { return norm(x, 1, d); }), 1e-5, 1e-6}},
      {"norminf", {as_double([](auto& x, auto& d) { return norm(x, INFINITY, d); }), 0, 0}},
      {"norm3_5", {as_double([](auto& x, auto& d) { return norm(x, 3.5, d); }), 1e-5, 1e-6}},
      {"norm0", {as_double([](auto& x, auto& d) { return norm(where(x > 0.5f, x, 0.f), 0, d); }), 0, 0}},
      {"logsumexp", {as_double([](auto& x, auto& d) { return logsumexp(x, d); }), 1e-5, 1e-6}},
      {"count_nonzero", {as_double([](auto& x, auto& d) { return count_nonzero(where(x > 0.5f, x, 0.f), d); }), 0, 0}},
  };
  for (const auto& [lname, x] : layouts())
    for (const auto& [op, o] : ops)
      for (const auto& [dname, d] : kDims) {
        if (op == "prod" && d.size() > 1) continue;
        const std::string name = "rd_" + op + "_" + lname + "_" + dname;
        check_close(o.f(x, d), test::golden(name), o.rtol, o.atol, name);
      }
}

TEST_CASE("softmax, log_softmax, max/min with indices, argmax, cumsum, cumprod match PyTorch") {
  struct Op {
    std::function<Tensor<double>(const Tensor<float>&, int64_t)> f;
    double rtol, atol;
  };
  auto d = [](auto f) {
    return [f](const Tensor<float>& x, int64_t dim) { return Tensor<double>(cast<double>(f(x, dim))); };
  };
  const std::map<std::string, Op> ops = {
      {"softmax", {d([](auto& x, int64_t k) { return softmax(x, k); }), 1e-5, 1e-7}},
      {"log_softmax", {d([](auto& x, int64_t k) { return log_softmax(x, k); }), 1e-5, 1e-6}},
      {"maxv", {d([](auto& x, int64_t k) { return std::get<0>(max(x, k)); }), 0, 0}},
      {"maxi", {d([](auto& x, int64_t k) { return std::get<1>(max(x, k)); }), 0, 0}},
      {"minv", {d([](auto& x, int64_t k) { return std::get<0>(min(x, k)); }), 0, 0}},
      {"mini", {d([](auto& x, int64_t k) { return std::get<1>(min(x, k)); }), 0, 0}},
      {"argmax", {d([](auto& x, int64_t k) { return argmax(x, k); }), 0, 0}},
      {"cumsum", {d([](auto& x, int64_t k) { return cumsum(x, k); }), 1e-6, 1e-6}},
      {"cumprod", {d([](auto& x, int64_t k) { return cumprod(1.f + 0.1f * x, k); }), 1e-6, 1e-7}},
  };
  for (const auto& [lname, x] : layouts())
    for (const auto& [op, o] : ops)
      for (int64_t k = 0; k < 3; ++k) {
        const std::string name = "rd_" + op + "_" + lname + "_" + std::to_string(k);
        check_close(o.f(x, k), test::golden(name), o.rtol, o.atol, name);
      }
}

TEST_CASE("keepdim, negative dims, dtypes, method forms") {
  const auto x = test::golden<float>("rd_x");
  check_close(sum(x, {0, 2}, true), test::golden("rd_sum_keepdim"), 1e-5, 1e-5, "keepdim");
  CHECK(sum(x, {0, 2}, true).sizes() == Shape{1, 6, 1});
  CHECK(x.sum({-1, 0}).sizes() == Shape{6});
  CHECK(equal(x.sum({2}), sum(x, 2)));
  CHECK(equal(x.amax({1}, true), amax(x, {1}, true)));
  auto i = arange<int32_t>(0, 24).reshape({2, 3, 4});
  static_assert(std::is_same_v<decltype(sum(i, {1}))::value_type, int64_t>);
  static_assert(std::is_same_v<decltype(cumsum(i, 0))::value_type, int64_t>);
  static_assert(std::is_same_v<decltype(any(i, {0}))::value_type, bool>);
  check_close(sum(i, {1}), test::golden("rd_int_sum"), 0, 0, "int sum");
  // logsumexp of integers and bools is float (PyTorch 1.13: torch.logsumexp
  // of int32 [[1, 2], [3, 4]] over dim 0, and of [[True, False], [True, True]]
  // over dim 1), and records nothing.
  const auto li = logsumexp(tensor<int32_t>({1, 2, 3, 4}, {2, 2}), {0});
  static_assert(std::is_same_v<decltype(li)::value_type, float>);
  check_close(li, tensor<float>({3.1269280910491943f, 4.126927852630615f}), 1e-6, 0, "int logsumexp");
  CHECK_FALSE(li.requires_grad());
  check_close(logsumexp(tensor<bool>({true, false, true, true}, {2, 2}), {1}),
              tensor<float>({1.31326162815094f, 1.6931471824645996f}), 1e-6, 0, "bool logsumexp");
  CHECK(equal(all(i, {0}), tensor<bool>({false, true, true, true, true, true, true, true, true, true, true, true},
                                        {3, 4})));
  CHECK(equal(any(i > 22, {0, 1}), tensor<bool>({false, false, false, true}, {4})));
  // Reducing only size-1 dims, and a 0-d input.
  auto col = x.slice(2, 0, 1);
  CHECK(equal(sum(col, {2}), col.squeeze(2)));
  CHECK(sum(full({}, 3.f), {}).item() == 3.f);
  auto [v, at] = max(full({}, 2.f), 0);
  CHECK(v.item() == 2.f);
  CHECK(at.item() == 0);
  // var and std of every element (torch.var(x), torch.std(x)): of 1, 2, 4,
  // the mean is 7/3 and the squared deviations sum to 14/3, over N - 1 = 2.
  const auto small = tensor<double>({1, 2, 4});
  CHECK(var(small).item() == doctest::Approx(7.0 / 3).epsilon(1e-15));
  CHECK(tsr::std(small).item() == doctest::Approx(std::sqrt(7.0 / 3)).epsilon(1e-15));
  CHECK(var(small).dim() == 0);
  // Every element of a 3-d input, against the same values as one dim.
  CHECK(allclose(var(x), var(x.reshape({-1}), {0})));
}

// PyTorch 1.13, x = [[1, nan, 3], [nan, nan, nan]]: torch.nansum(x) = 4,
// over dim 1 [4, 0]; torch.nanmean(x, 1) = [2, nan], torch.nanmean(x) = 2,
// over dim 0 with keepdim [[1, nan, 3]]. Gradients: of nansum(x)
// [[1, 0, 1], [0, 0, 0]]; of nanmean(x, 1)[0] [[0.5, 0, 0.5], [nan, nan, nan]]
// (0 / 0 reaches the NaN row, and the mask multiplies it); of nanmean(x)
// [[0.5, 0, 0.5], [0, 0, 0]]. Integers: torch.nansum of int32 [[1, 2], [3, 4]]
// over dim 0 is int64 [4, 6]; of an empty float tensor 0, nanmean NaN.
TEST_CASE("nansum and nanmean leave NaN out, as PyTorch's, gradients included") {
  const float nan = NAN;
  const auto x = tensor<float>({1.f, nan, 3.f, nan, nan, nan}, {2, 3}).requires_grad_();
  CHECK(nansum(x).item() == 4.f);
  CHECK(equal(nansum(x, 1), tensor<float>({4.f, 0.f})));
  check_close(nanmean(x, 1), tensor<float>({2.f, nan}), 0, 0, "nanmean over dim 1");
  CHECK(nanmean(x).item() == 2.f);
  check_close(nanmean(x, Shape{0}, true), tensor<float>({1.f, nan, 3.f}, {1, 3}), 0, 0, "nanmean keepdim");
  CHECK(nansum(x, 1).grad_fn_name() == "NansumBackward0");
  const auto grad_of = [&](const Tensor<float>& loss) { return autograd::grad({loss}, {x})[0]; };
  check_close(grad_of(nansum(x)), tensor<float>({1.f, 0.f, 1.f, 0.f, 0.f, 0.f}, {2, 3}), 0, 0, "nansum grad");
  check_close(grad_of(nanmean(x, 1).select(0, 0)), tensor<float>({0.5f, 0.f, 0.5f, nan, nan, nan}, {2, 3}), 0, 0,
              "nanmean grad of a row");
  check_close(grad_of(nanmean(x)), tensor<float>({0.5f, 0.f, 0.5f, 0.f, 0.f, 0.f}, {2, 3}), 0, 0, "nanmean grad");
  const auto ni = nansum(tensor<int32_t>({1, 2, 3, 4}, {2, 2}), 0);
  static_assert(std::is_same_v<decltype(ni)::value_type, int64_t>);
  CHECK(equal(ni, tensor<int64_t>({4, 6})));
  CHECK(nansum(empty<float>({0})).item() == 0.f);
  CHECK(std::isnan(nanmean(empty<float>({0})).item()));
}

TEST_CASE("NaN, inf, ties and large inputs follow PyTorch") {
  const auto s = test::golden<float>("rd_special");
  check_close(std::get<0>(max(s, 1)), test::golden("rd_special_maxv"), 0, 0, "max values");
  check_close(std::get<1>(max(s, 1)), test::golden("rd_special_maxi"), 0, 0, "max indices (first NaN, first tie)");
  check_close(std::get<1>(min(s, 1)), test::golden("rd_special_mini"), 0, 0, "min indices");
  check_close(amax(s, {0}), test::golden("rd_special_amax0"), 0, 0, "amax");
  check_close(sum(s, {1}), test::golden("rd_special_sum1"), 0, 0, "sum with inf and nan");
  check_close(logsumexp(s, {1}), test::golden("rd_special_lse1"), 1e-6, 0, "logsumexp with inf and nan");
  const auto big = test::golden<float>("rd_big");
  check_close(softmax(big, 1), test::golden("rd_big_softmax"), 1e-6, 1e-7, "softmax of large values");
  check_close(log_softmax(big, 1), test::golden("rd_big_log_softmax"), 1e-6, 1e-6, "log_softmax of large values");
  check_close(logsumexp(big, {1}), test::golden("rd_big_lse"), 1e-6, 0, "logsumexp of large values");
  // Overflow-safe 2-norm (PyTorch gives inf here) and underflow-safe.
  CHECK(norm(tensor<float>({1e20f, 1e20f}, {2})).item() == doctest::Approx(1.41421356e20).epsilon(1e-6));
  CHECK(norm(tensor<float>({3e-30f, 4e-30f}, {2})).item() == doctest::Approx(5e-30).epsilon(1e-6));
}

TEST_CASE("empty inputs and bad dims give PyTorch's results and errors") {
  auto e = zeros({0, 3});
  CHECK(equal(sum(e, {0}), zeros({3})));
  CHECK(equal(prod(e, {0}), ones({3})));
  CHECK(sum(e, {1}).sizes() == Shape{0});
  CHECK(std::isnan(mean(e, {0}).to_vector()[0]));
  CHECK(logsumexp(e, {0}).to_vector()[0] == -INFINITY);
  CHECK(softmax(e, 0).sizes() == Shape{0, 3});
  CHECK(amax(e, {1}).sizes() == Shape{0});
  // IndexErrors in PyTorch; an empty list of dims is all of them.
  CHECK_THROWS_WITH_AS(amax(e, {0}), "amax(): Expected reduction dim 0 to have non-zero size.", IndexError);
  CHECK_THROWS_WITH_AS(amin(e, {0, 1}), "amin(): Expected reduction dim 0 to have non-zero size.", IndexError);
  CHECK_THROWS_WITH_AS(max(e, 0), "max(): Expected reduction dim 0 to have non-zero size.", IndexError);
  CHECK_THROWS_WITH_AS(argmax(e, 0), "argmax(): Expected reduction dim 0 to have non-zero size.", IndexError);
  CHECK_THROWS_WITH_AS(amax(e, {}),
                       "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                       "dim with the 'dim' argument.",
                       Error);
  CHECK(norm(e, 2, {0}).to_vector() == std::vector<float>{0.f, 0.f, 0.f});
  CHECK(norm(e, INFINITY, {1}).sizes() == Shape{0});
  CHECK_THROWS_WITH_AS(norm(e, INFINITY, {0}),
                       "linalg.vector_norm cannot compute the inf norm on the dimension 0because this dimension is "
                       "empty and the operation does not have an identity",
                       Error);
  CHECK_THROWS_WITH_AS(norm(e, -INFINITY, {0}),
                       "linalg.vector_norm cannot compute the -inf norm on the dimension 0because this dimension is "
                       "empty and the operation does not have an identity",
                       Error);
  auto x = zeros({2, 3});
  CHECK_THROWS_WITH_AS(sum(x, {1, 1}), "dim 1 appears multiple times in the list of dims", Error);
  CHECK_THROWS_WITH_AS(sum(x, {3}), "Dimension out of range (expected to be in range of [-2, 1], but got 3)",
                       IndexError);
  CHECK_THROWS_WITH_AS(max(x, 2), "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
                       IndexError);
  CHECK(std::isnan(tsr::std(ones({1}), {0}).item()));
}

TEST_CASE("column and row sums are accurate and bitwise identical for 1 and 2 threads") {
  // 4096 rows of 0.1f: a sequential column sum is off by ~1e-4; pairwise
  // runs keep it within a few float ulp of 409.6.
  auto m = full({4096, 300}, 0.1f);
  for (float v : sum(m, {0}).to_vector()) CHECK(std::abs(v - 409.6000061f) <= 2e-4f);
  for (float v : sum(m.t(), {1}).to_vector()) CHECK(std::abs(v - 409.6000061f) <= 2e-4f);
  manual_seed(3);
  auto r = randn({257, 1031});
  auto expr = r * 2.f - 1.f;
  Tensor<float> c1, c2, r1, r2, s1, s2;
  test::with_threads(1, [&] { c1 = sum(expr, {0}), r1 = sum(expr, {1}), s1 = softmax(r, 0); });
  test::with_threads(2, [&] { c2 = sum(expr, {0}), r2 = sum(expr, {1}), s2 = softmax(r, 0); });
  CHECK(equal(c1, c2));
  CHECK(equal(r1, r2));
  CHECK(equal(s1, s2));
  // The fused input gives the same result as its materialization.
  CHECK(equal(sum(expr, {0}), sum(Tensor<float>(expr), {0})));
}

TEST_CASE("aminmax, var_mean, std_mean, cummax and cummin") {
  const auto r = test::golden<float>("sm_r");
  const auto sp = test::golden<float>("sm_special");
  const auto ints = test::golden<int64_t>("sm_ints");
  auto pair = [](const auto& got, const std::string& name, const std::string& first, const std::string& second,
                 double tol) {
    check_close(std::get<0>(got), test::golden("sm_" + name + first), tol, tol, name + first);
    check_close(std::get<1>(got), test::golden("sm_" + name + second), tol, tol, name + second);
  };
  pair(aminmax(sp.narrow(0, 0, 3)), "aminmax_all", "_min", "_max", 0);
  pair(aminmax(sp, 1), "aminmax_d1", "_min", "_max", 0);
  pair(aminmax(r.transpose(0, 1), 0, true), "aminmax_t_keep", "_min", "_max", 0);
  pair(aminmax(ints, 0), "aminmax_int", "_min", "_max", 0);
  const auto [bmin, bmax] = aminmax(tensor<bool>({true, false}));
  CHECK((!bmin.item() && bmax.item()));
  CHECK(error_of([] { aminmax(zeros<float>({0})); }) ==
        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  CHECK(error_of([] { aminmax(zeros<float>({3, 0}), 1); }) ==
        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  CHECK(std::get<1>(aminmax(zeros<float>({0, 3}), 1)).sizes() == Shape{0});

  pair(var_mean(r, {0, 2}), "var_mean", "_0", "_1", 1e-6);
  pair(var_mean(r), "var_mean_all", "_0", "_1", 1e-6);
  pair(std_mean(r, {1}, 0, true), "std_mean_keep", "_0", "_1", 1e-6);
  pair(std_mean(r), "std_mean_all", "_0", "_1", 1e-6);

  const auto seq = test::golden<float>("sm_seq");
  for (bool is_max : {true, false}) {
    const std::string fn = is_max ? "cummax" : "cummin";
    auto scan = [&](const auto& x, int64_t dim) { return is_max ? cummax(x, dim) : cummin(x, dim); };
    pair(scan(seq, 1), fn + "_seq", "", "i", 0);
    pair(scan(seq, 0), fn + "_seq0", "", "i", 0);
    pair(scan(r.transpose(0, 2), 1), fn + "_r_t", "", "i", 0);
    pair(scan(ints, 1), fn + "_ints", "", "i", 0);
  }
  const auto [sv, si] = cummax(full<float>({}, 3.f), 0);
  CHECK((sv.item() == 3.f && si.item() == 0));
  CHECK(std::get<1>(cummin(zeros<float>({0}), 0)).sizes() == Shape{0});
  const auto [bv, bi] = cummax(tensor<bool>({true, false}), 0);  // PyTorch: [True, True], [0, 0]
  CHECK(bi.to_vector() == std::vector<int64_t>{0, 0});
  CHECK(bv.to_vector() == std::vector<bool>{true, true});
}

TEST_CASE("quantile, nanquantile and logcumsumexp match PyTorch") {
  const auto x = test::golden<float>("st_x");
  const auto q = test::golden<float>("st_q");
  check_close(quantile(x, 0.3), test::golden("st_quantile_all"), 1e-6, 1e-6, "quantile of all");
  check_close(quantile(x, q, 1), test::golden("st_quantile_q"), 1e-6, 1e-6, "quantiles along a dim");
  check_close(quantile(x, q, -1, true), test::golden("st_quantile_keep"), 1e-6, 1e-6, "keepdim");
  check_close(quantile(x, 0.7, std::nullopt, true), test::golden("st_quantile_all_keep"), 1e-6, 1e-6, "all, keepdim");
  check_close(quantile(x.transpose(0, 2), 0.35, 0), test::golden("st_quantile_t"), 1e-6, 1e-6, "transposed input");
  for (const std::string mode : {"lower", "higher", "midpoint", "nearest"})
    check_close(quantile(x, q, 1, false, mode), test::golden("st_quantile_" + mode), 1e-6, 1e-6, mode);
  const auto sp = test::golden<float>("st_sp");
  check_close(quantile(sp, q, 1), test::golden("st_quantile_sp"), 1e-6, 1e-6, "a line with NaN gives NaN");
  check_close(nanquantile(sp, q, 1), test::golden("st_nanquantile_sp"), 1e-6, 1e-6, "NaN left out");
  check_close(nanquantile(sp, 0.4), test::golden("st_nanquantile_all"), 1e-6, 1e-6, "nanquantile of all");
  check_close(nanquantile(sp, q, 1, false, "nearest"), test::golden("st_nanquantile_nearest"), 1e-6, 1e-6,
              "nanquantile, nearest");
  check_close(quantile(cast<double>(x), cast<double>(q), 0), test::golden("st_quantile_double"), 1e-12, 1e-12, "double");
  CHECK(quantile(full<float>({}, 2.f), 0.5, 0, true).dim() == 0);

  CHECK(error_of([&] { quantile(x, 1.5); }) == "quantile() q must be in the range [0, 1] but got 1.5");
  CHECK(error_of([&] { quantile(x, tensor<float>({0.5f, 2.f})); }) == "quantile() q values must be in the range [0, 1]");
  CHECK(error_of([&] { quantile(x, zeros<float>({1, 1})); }) == "quantile() q must be a scalar or 1D tensor");
  CHECK(error_of([&] { quantile(x, 0.5, 0, false, "foo"); }) ==
        "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got foo");
  CHECK(error_of([] { quantile(zeros<float>({0}), 0.5); }) == "quantile() input tensor must be non-empty");
  bool index_error = false;
  try {
    quantile(x, 0.5, 3);
  } catch (const IndexError&) {
    index_error = true;
  }
  CHECK(index_error);

  const auto lc = test::golden<float>("st_lc");
  check_close(logcumsumexp(lc, 1), test::golden("st_lcse"), 1e-6, 1e-6, "logcumsumexp with infinities and NaN");
  check_close(logcumsumexp(lc, 0), test::golden("st_lcse0"), 1e-6, 1e-6, "logcumsumexp along dim 0");
  check_close(logcumsumexp(x.transpose(0, 2), 1), test::golden("st_lcse_t"), 1e-6, 1e-6, "transposed input");
  check_close(logcumsumexp(cast<double>(x), 2), test::golden("st_lcse_double"), 1e-12, 1e-12, "double");
  CHECK(logcumsumexp(full<float>({}, 3.f), 0).item() == 3.f);
}

TEST_CASE("trapezoid, cumulative_trapezoid, cov, corrcoef, dist, renorm and ldexp match PyTorch") {
  const auto y = test::golden<float>("st_y"), xs = test::golden<float>("st_xs"), x2 = test::golden<float>("st_x2");
  check_close(trapezoid(y), test::golden("st_trap"), 1e-6, 1e-6, "trapezoid");
  check_close(trapezoid(y, 0.5, 0), test::golden("st_trap_dx0"), 1e-6, 1e-6, "trapezoid, dx, dim 0");
  check_close(trapezoid(y, xs), test::golden("st_trap_x"), 1e-6, 1e-6, "trapezoid at positions");
  check_close(trapezoid(y, x2, 1), test::golden("st_trap_x2"), 1e-6, 1e-6, "trapezoid at positions per row");
  const auto ti = trapezoid(tensor<int64_t>({1, 2, 4, 0, 1, 1}, {2, 3}));
  static_assert(std::is_same_v<decltype(ti), const Tensor<float>>, "integer samples integrate to float");
  check_close(ti, test::golden("st_trap_int"), 0, 0, "trapezoid of integers");
  check_close(cumulative_trapezoid(y), test::golden("st_ctrap"), 1e-6, 1e-6, "cumulative_trapezoid");
  check_close(cumulative_trapezoid(y, 0.25, 0), test::golden("st_ctrap_dx0"), 1e-6, 1e-6, "cumulative, dx, dim 0");
  check_close(cumulative_trapezoid(y, xs), test::golden("st_ctrap_x"), 1e-6, 1e-6, "cumulative at positions");
  check_close(cumulative_trapezoid(y.t(), x2.t(), 0), test::golden("st_ctrap_x2"), 1e-6, 1e-6,
              "cumulative at positions, transposed");
  CHECK(trapezoid(zeros<float>({2, 0})).to_vector() == std::vector<float>{0.f, 0.f});
  CHECK(cumulative_trapezoid(zeros<float>({2, 0})).sizes() == Shape{2, 0});
  CHECK(error_of([&] { trapezoid(y, xs.narrow(0, 0, 5)); }) == "trapezoid: There must be one `x` value for each sample point");

  const auto obs = test::golden<float>("st_obs"), aw = test::golden<float>("st_aw");
  const auto fw = test::golden<int64_t>("st_fw");
  check_close(cov(obs), test::golden("st_cov"), 1e-5, 1e-6, "cov");
  check_close(cov(obs, 0), test::golden("st_cov_c0"), 1e-5, 1e-6, "cov, correction 0");
  check_close(cov(obs, 1, fw), test::golden("st_cov_fw"), 1e-5, 1e-6, "cov, frequency weights");
  check_close(cov(obs, 1, {}, aw), test::golden("st_cov_aw"), 1e-5, 1e-6, "cov, observation weights");
  check_close(cov(obs, 2, fw, aw), test::golden("st_cov_both"), 1e-5, 1e-6, "cov, both weights");
  check_close(cov(obs.select(0, 0)), test::golden("st_cov_1d"), 1e-5, 1e-6, "cov of one variable: 0-d");
  check_close(cov(obs.t().narrow(0, 0, 4).t()), test::golden("st_cov_t"), 1e-5, 1e-6, "cov of a strided input");
  check_close(cov(tensor<int64_t>({1, 2, 4, 0, 1, 1}, {2, 3})), test::golden("st_cov_int"), 1e-6, 1e-6, "integer cov");
  check_close(corrcoef(obs), test::golden("st_corrcoef"), 1e-5, 1e-6, "corrcoef");
  check_close(corrcoef(tensor<float>({1.f, 1.f, 1.f, 0.f, 1.f, 1.f, 2.f, 0.5f, -1.f}, {3, 3})),
              test::golden("st_corrcoef_const"), 1e-5, 1e-6, "corrcoef with a constant row: NaN");
  check_close(corrcoef(obs.select(0, 1)), test::golden("st_corrcoef_1d"), 0, 0, "corrcoef of one variable");
  CHECK(error_of([] { cov(ones<float>({2, 3, 4})); }) ==
        "cov(): expected input to have two or fewer dimensions but got an input with 3 dimensions");
  CHECK(error_of([&] { cov(obs, 1, tensor<int64_t>({1, 2})); }) ==
        "cov(): expected fweights to have the same numel as there are observations in the input but got 2 != 7");
  CHECK(error_of([&] { cov(obs, 1, Tensor<int64_t>(fw - int64_t{4})); }) == "cov(): fweights cannot be negative");
  CHECK(error_of([&] { cov(obs, 1, {}, Tensor<float>(-aw)); }) == "cov(): aweights cannot be negative");
  CHECK(error_of([&] { cov(obs, 1, zeros<int64_t>({7})); }) == "cov(): weights sum to zero, can't be normalized");

  const auto a = test::golden<float>("st_a"), b = test::golden<float>("st_b");
  check_close(dist(a, b), test::golden("st_dist_2"), 1e-6, 0, "dist");
  check_close(dist(a, b, 1), test::golden("st_dist_1"), 1e-6, 0, "dist, p = 1");
  check_close(dist(a, b, 3.5), test::golden("st_dist_3_5"), 1e-6, 0, "dist, p = 3.5");
  check_close(dist(a, b, 0), test::golden("st_dist_0"), 0, 0, "dist, p = 0");
  check_close(dist(a, b, INFINITY), test::golden("st_dist_inf"), 0, 0, "dist, p = inf");
  check_close(renorm(a, 2, 0, 1.0), test::golden("st_renorm_2_0"), 1e-6, 1e-7, "renorm");
  check_close(renorm(a, 1, 1, 2.5), test::golden("st_renorm_1_1"), 1e-6, 1e-7, "renorm, p = 1");
  check_close(renorm(a, INFINITY, 0, 0.5), test::golden("st_renorm_inf_0"), 1e-6, 1e-7, "renorm, p = inf");
  check_close(renorm(a, 3, -1, 10.0), test::golden("st_renorm_3_m1"), 1e-6, 1e-7, "renorm, nothing to scale");
  CHECK(error_of([&] { renorm(a, -1, 1, 2); }) == "renorm: non-positive-norm not supported");
  CHECK(error_of([&] { renorm(a, 2, 1, -2); }) == "renorm: expected maxnorm to be >= 0 but got -2");
  CHECK(error_of([&] { renorm(b, 2, 0, 1); }) == "renorm: input needs at least 2 dimensions, got 1 dimensions");
  check_close(ldexp(a.narrow(0, 0, 2), test::golden<int64_t>("st_e")), test::golden("st_ldexp"), 0, 0, "ldexp");
  const auto li = ldexp(tensor<int64_t>({1, -2, 3}), tensor<int64_t>({3, -1, 0}));
  static_assert(std::is_same_v<typename decltype(li)::value_type, float>, "ldexp of integers is float");
  check_close(li, test::golden("st_ldexp_int"), 0, 0, "ldexp of integers");
}

TEST_CASE("cdist and pdist: p-norms between rows, with PyTorch's values and gradients") {
  using V = std::vector<Tensor<double>>;
  const std::vector<std::pair<std::string, double>> ps = {
      {"p1", 1}, {"p2", 2}, {"p3", 3}, {"pinf", std::numeric_limits<double>::infinity()}};
  for (const auto& [tag, p] : ps)
    test::check_forward_backward<double>("cd_" + tag, 2, [p = p](const V& v) { return cdist(v[0], v[1], p); }, 1e-12);
  // p = 0 counts differing elements: no gradient (PyTorch's is zeros; its norm(x, 0), as tessera's, gives none).
  auto a = test::golden<double>("cd_p0_in0").requires_grad_();
  const auto counts = cdist(a, test::golden<double>("cd_p0_in1"), 0);
  check_close(counts, test::golden("cd_p0_out"), 0, 0, "cdist p = 0");
  CHECK(equal(test::golden("cd_p0_grad0"), zeros<double>({2, 3, 4})));
  sum(counts).backward();
  CHECK_FALSE(a.grad().defined());  // tessera's: no gradient at all
  // More than 25 rows: PyTorch goes through a matrix product, within rounding of the direct sums.
  test::check_forward_backward<double>("cd_big", 2, [](const V& v) { return cdist(v[0], v[1]); }, 1e-9);
  // Equal rows: distance 0 and a zero gradient, not NaN.
  test::check_forward_backward<double>("cd_zero", 2, [](const V& v) { return cdist(v[0], v[1]); }, 1e-12);
  for (const auto& [tag, p] : std::vector<std::pair<std::string, double>>{
           {"p2", 2}, {"p1", 1}, {"pinf", std::numeric_limits<double>::infinity()}})
    test::check_forward_backward<double>("cd_pdist_" + tag, 1, [p = p](const V& v) { return pdist(v[0], p); }, 1e-12);
  CHECK(cdist(ones<float>({2, 0, 3}), ones<float>({2, 4, 3})).sizes() == Shape{2, 0, 4});
  CHECK(equal(cdist(ones<float>({2, 0}), ones<float>({4, 0})), zeros<float>({2, 4})));
  CHECK(pdist(ones<float>({1, 3})).sizes() == Shape{0});
  CHECK(test::error_of([] { (void)cdist(ones<float>({2, 3}), ones<float>({2, 4})); }) ==
        "X1 and X2 must have the same number of columns. X1: 3 X2: 4");
  CHECK(test::error_of([] { (void)cdist(ones<float>({3}), ones<float>({2, 3})); }) ==
        "cdist only supports at least 2D tensors, X1 got: 1D");
  CHECK(test::error_of([] { (void)cdist(ones<float>({2, 3}), ones<float>({2, 3}), -1); }) ==
        "cdist only supports non-negative p values");
  CHECK(test::error_of([] { (void)pdist(ones<float>({3})); }) == "pdist only supports 2D tensors, got: 1D");
}
