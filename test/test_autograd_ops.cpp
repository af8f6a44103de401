// Autograd of the ops with their own backward: reductions over dims (and
// the composite ones), matrix products, shape and indexing ops. Gradients
// are compared with PyTorch 1.13's (tools/make_golden.py: autograd_ops) and
// with central differences (autograd::gradcheck) on random shapes,
// broadcast and non-contiguous inputs.
#include <cmath>
#include <functional>
#include <limits>

#include "common.hpp"

using namespace tsr;
using test::check_close;
using test::error_of;
using V = std::vector<Tensor<double>>;

namespace {

Tensor<float> input(const std::string& name, int i) {
  return test::golden<float>("ago_" + name + "_in" + std::to_string(i)).requires_grad_();
}

// Runs case `name`: f over the golden inputs, backward with the golden
// gradient, and compares the output and every input's gradient.
template <class F>
void golden_case(const std::string& name, int inputs, F f, double rtol = 1e-5, double atol = 1e-6) {
  CAPTURE(name);
  std::vector<Tensor<float>> in;
  for (int i = 0; i < inputs; ++i) in.push_back(input(name, i));
  const Tensor<float> out = f(in);
  check_close(out, test::golden("ago_" + name + "_out"), rtol, atol, name + " forward");
  out.backward(test::golden<float>("ago_" + name + "_gradout"));
  for (int i = 0; i < inputs; ++i) {
    const Tensor<float> g = in[static_cast<std::size_t>(i)].grad();
    REQUIRE(g.defined());
    check_close(g, test::golden("ago_" + name + "_grad" + std::to_string(i)), rtol, atol,
                name + " grad " + std::to_string(i));
  }
}

using Fs = std::vector<Tensor<float>>;

void gradcheck_ok(const std::string& what, std::function<Tensor<double>(const V&)> f, V in) {
  CAPTURE(what);
  CHECK(autograd::gradcheck(f, std::move(in)));
}

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("reductions: gradients match PyTorch, ties, zeros and zero rows included") {
  golden_case("sum_dims", 1, [](const Fs& x) { return sum(sin(x[0]) * 2.f, {0, 2}); });
  golden_case("mean_keep", 1, [](const Fs& x) { return mean(x[0], {1}, true); });
  golden_case("amax_ties", 1, [](const Fs& x) { return amax(x[0], {1}); });
  golden_case("amin_full", 1, [](const Fs& x) { return amin(x[0]).reshape({1}); });
  golden_case("max_full_ties", 1, [](const Fs& x) { return max(x[0]).reshape({1}); });
  golden_case("max_dim", 1, [](const Fs& x) { return std::get<0>(max(x[0], 0)); });
  golden_case("min_dim_keep", 1, [](const Fs& x) { return std::get<0>(min(x[0], 1, true)); });
  golden_case("prod_zeros", 1, [](const Fs& x) { return prod(x[0], {1}); });
  golden_case("prod_full", 1, [](const Fs& x) { return prod(x[0]).reshape({1}); });
  golden_case("var", 1, [](const Fs& x) { return var(x[0], {1}); }, 1e-4);
  golden_case("std_const_row", 1, [](const Fs& x) { return tsr::std(x[0], {1}); }, 1e-4);
  golden_case("var_c0", 1, [](const Fs& x) { return var(x[0], {0}, 0); }, 1e-4);
  golden_case("norm2", 1, [](const Fs& x) { return norm(x[0], 2, {1}); });
  golden_case("norm1", 1, [](const Fs& x) { return norm(x[0], 1, {1}); });
  golden_case("norminf", 1, [](const Fs& x) { return norm(x[0], kInf, {1}); });
  golden_case("norm3", 1, [](const Fs& x) { return norm(x[0], 3, {1}); }, 1e-4);
  golden_case("logsumexp", 1, [](const Fs& x) { return logsumexp(x[0] * 3.f, {1}); });
  golden_case("softmax", 1, [](const Fs& x) { return softmax(x[0], 1); });
  golden_case("log_softmax", 1, [](const Fs& x) { return log_softmax(x[0], 0); });
  golden_case("cumsum", 1, [](const Fs& x) { return cumsum(x[0], 1); });
  golden_case("cumprod", 1, [](const Fs& x) { return cumprod(x[0], 1); });
  golden_case("cumprod_dim0", 1, [](const Fs& x) { return cumprod(x[0] * 1.5f, 0); });
  golden_case("masked_select", 1, [](const Fs& x) {
    return masked_select(x[0], tensor<bool>({true, false, true, true}));
  });
}

TEST_CASE("matrix products: gradients match PyTorch") {
  golden_case("matmul_bcast", 2, [](const Fs& x) { return matmul(x[0], x[1]); }, 1e-4);
  golden_case("matmul_vec_mat", 2, [](const Fs& x) { return matmul(x[0], x[1]); }, 1e-4);
  golden_case("mm", 2, [](const Fs& x) { return mm(x[0], x[1]); }, 1e-4);
  golden_case("mv", 2, [](const Fs& x) { return mv(x[0], x[1]); }, 1e-4);
  golden_case("dot", 2, [](const Fs& x) { return dot(x[0], x[1]).reshape({1}); }, 1e-4);
  golden_case("addmm", 3, [](const Fs& x) { return addmm(x[0], x[1], x[2], 0.5, 2.0); }, 1e-4);
  golden_case("linear3d", 3, [](const Fs& x) { return linear(x[0], x[1], x[2]); }, 1e-4);
}

TEST_CASE("shape and indexing ops: gradients match PyTorch") {
  golden_case("cat", 2, [](const Fs& x) { return cat({x[0], x[1], x[0]}, 1); });
  golden_case("stack", 2, [](const Fs& x) { return stack({x[0], x[1]}, 2); });
  golden_case("index_select", 1, [](const Fs& x) { return index_select(x[0], 1, tensor<int64_t>({3, 0, 3, 1})); });
  golden_case("index_neg", 1, [](const Fs& x) { return index(x[0], 1, tensor<int64_t>({-1, 0, 0, 2}).view({2, 2})); });
  const auto gi = tensor<int64_t>({0, 2, 1, 1, 2, 2, 0, 0}).view({2, 4});
  golden_case("gather", 1, [&](const Fs& x) { return gather(x[0], 0, gi); });
  const auto si = tensor<int64_t>({0, 2, 1, 1, 2, 1, 0, 0}).view({2, 4});
  golden_case("scatter", 2, [&](const Fs& x) { return scatter(x[0], 0, si, x[1]); });
  const auto ai = tensor<int64_t>({0, 2, 1, 1, 0, 2, 0, 0}).view({2, 4});
  golden_case("scatter_add", 2, [&](const Fs& x) { return scatter_add(x[0], 0, ai, x[1]); });
  golden_case("sort", 1, [](const Fs& x) { return std::get<0>(sort(x[0], 1, true)); });
  golden_case("topk", 1, [](const Fs& x) { return std::get<0>(topk(x[0], 2, 0)); });
  golden_case("flip", 1, [](const Fs& x) { return flip(x[0], {0, 1}); });
  golden_case("roll", 1, [](const Fs& x) { return roll(x[0], {1, -1}, {0, 1}); });
  golden_case("repeat", 1, [](const Fs& x) { return repeat(x[0], {2, 1, 3}); });
  golden_case("tril", 1, [](const Fs& x) { return tril(x[0], -1); });
}

TEST_CASE("gradcheck: reductions over dims, on expressions and strided inputs") {
  manual_seed(5);
  const Tensor<double> a = randn<double>({3, 4, 2});
  const Tensor<double> t = randn<double>({4, 3}).t();  // non-contiguous
  const Tensor<double> row = randn<double>({4, 1});
  gradcheck_ok("sum of an expression with a broadcast leaf",
               [](const V& v) { return sum(sin(v[0]) * v[1], {1}); }, {t, row.t()});
  gradcheck_ok("mean", [](const V& v) { return mean(v[0] * v[0], {0, 2}, true); }, {a});
  gradcheck_ok("amax", [](const V& v) { return amax(v[0] + v[1], {0}); }, {t, row.t()});
  gradcheck_ok("amin", [](const V& v) { return amin(v[0], {1, 2}); }, {a});
  gradcheck_ok("max over all", [](const V& v) { return max(exp(v[0])); }, {a});
  gradcheck_ok("max along a dim", [](const V& v) { return std::get<0>(max(v[0] * 2.0, 1, true)); }, {a});
  gradcheck_ok("min along a dim", [](const V& v) { return std::get<0>(min(v[0], -1)); }, {t});
  gradcheck_ok("prod", [](const V& v) { return prod(v[0], {2}); }, {a});
  gradcheck_ok("prod of an expression", [](const V& v) { return prod(v[0] + 1.0); }, {t});
  gradcheck_ok("var", [](const V& v) { return var(v[0], {1}); }, {a});
  gradcheck_ok("std of an expression", [](const V& v) { return tsr::std(v[0] * v[1], {0}, 0); }, {t, row.t()});
  for (double p : {1.0, 2.0, 3.0, 0.5, -1.0, kInf, -kInf})
    gradcheck_ok("norm " + std::to_string(p), [p](const V& v) { return norm(v[0], p, {1}); }, {a});
  gradcheck_ok("norm of all", [](const V& v) { return norm(v[0]); }, {t});
  gradcheck_ok("logsumexp", [](const V& v) { return logsumexp(v[0] * 2.0, {0, 1}); }, {a});
  gradcheck_ok("softmax", [](const V& v) { return softmax(v[0], 0); }, {t});
  gradcheck_ok("log_softmax of an expression", [](const V& v) { return log_softmax(v[0] * v[1], 1); }, {t, row.t()});
  gradcheck_ok("cumsum", [](const V& v) { return cumsum(v[0], 1); }, {a});
  gradcheck_ok("cumprod of an expression", [](const V& v) { return cumprod(v[0] * 2.0, 0); }, {a});
  // A zero inside a line (the gradient of later elements is 0, the zero's own is not).
  gradcheck_ok("cumprod with a zero", [](const V& v) { return cumprod(v[0], 1); },
               {tensor<double>({1.5, 0.0, -2.0, 0.5, 2.0, 1.0, 0.0, 3.0}).view({2, 4})});
}

TEST_CASE("gradcheck: matrix products, every rank combination") {
  manual_seed(6);
  auto r = [](Shape s) { return randn<double>(s); };
  auto mat = [](const V& v) { return matmul(v[0], v[1]); };
  gradcheck_ok("1x1", mat, {r({4}), r({4})});
  gradcheck_ok("2x1", mat, {r({3, 4}), r({4})});
  gradcheck_ok("1x2", mat, {r({3}), r({3, 4})});
  gradcheck_ok("2x2 transposed", mat, {r({4, 3}).t(), r({4, 2})});
  gradcheck_ok("3x2 (rows folded)", mat, {r({2, 3, 4}), r({4, 2})});
  gradcheck_ok("3x1", mat, {r({2, 3, 4}), r({4})});
  gradcheck_ok("1x3", mat, {r({4}), r({2, 4, 3})});
  gradcheck_ok("broadcast batch", mat, {r({2, 1, 3, 4}), r({5, 4, 2})});
  gradcheck_ok("bmm", [](const V& v) { return bmm(v[0], v[1]); }, {r({2, 3, 4}), r({2, 4, 2})});
  gradcheck_ok("addmm", [](const V& v) { return addmm(v[0], v[1], v[2], 0.5, 2.0); }, {r({3, 1}), r({3, 4}), r({4, 2})});
  gradcheck_ok("linear", [](const V& v) { return linear(v[0], v[1], v[2]); }, {r({3, 4}), r({2, 4}), r({2})});
  gradcheck_ok("linear without bias", [](const V& v) { return linear(v[0], v[1]); }, {r({2, 3, 4}), r({2, 4})});
  gradcheck_ok("of expressions", [](const V& v) { return mm(sin(v[0]), v[1] * v[1]); }, {r({3, 4}), r({4, 2})});
}

TEST_CASE("gradcheck: shape and indexing ops") {
  manual_seed(7);
  const Tensor<double> x = randn<double>({3, 4});
  const Tensor<double> xt = randn<double>({4, 3}).t();
  const auto gi = tensor<int64_t>({0, 2, 1, 1, 0, 0}).view({2, 3});
  gradcheck_ok("cat with a skipped empty", [](const V& v) { return cat({v[0], empty<double>({0}), v[1]}, 1); },
               {x, randn<double>({3, 2})});
  gradcheck_ok("stack", [](const V& v) { return stack({v[0], Tensor<double>(v[1] * 2.0)}, 0); }, {x, xt});
  gradcheck_ok("index_select, repeated", [](const V& v) { return index_select(v[0], 1, tensor<int64_t>({2, 0, 2})); },
               {xt});
  gradcheck_ok("index", [](const V& v) { return index(v[0], 0, tensor<int64_t>({-1, 0, -1})); }, {x});
  gradcheck_ok("gather", [&](const V& v) { return gather(v[0], 0, gi); }, {xt});
  gradcheck_ok("scatter, src larger than index", [&](const V& v) { return scatter(v[0], 0, gi, v[1]); },
               {x, randn<double>({3, 4})});
  gradcheck_ok("scatter of a value", [&](const V& v) { return scatter(v[0], 0, gi, 2.0); }, {x});
  gradcheck_ok("scatter_add", [&](const V& v) { return scatter_add(v[0], 1, gi, v[1]); }, {x, randn<double>({2, 3})});
  gradcheck_ok("sort", [](const V& v) { return std::get<0>(sort(v[0], 0)); }, {xt});
  gradcheck_ok("topk", [](const V& v) { return std::get<0>(topk(v[0] * 3.0, 2, 1, false)); }, {x});
  gradcheck_ok("flip", [](const V& v) { return flip(v[0], {1}); }, {xt});
  gradcheck_ok("roll flattened", [](const V& v) { return roll(v[0], {5}); }, {xt});
  gradcheck_ok("repeat", [](const V& v) { return repeat(v[0], {2, 1, 2}); }, {xt});
  gradcheck_ok("tile", [](const V& v) { return tile(v[0], {3}); }, {x});
  gradcheck_ok("masked_select, broadcast mask", [](const V& v) {
    return masked_select(v[0], tensor<bool>({true, false, true, false}).view({1, 4}));
  }, {xt});
  gradcheck_ok("triu", [](const V& v) { return triu(v[0], 1); }, {xt});
}

TEST_CASE("node names, and what stays unrecorded") {
  auto x = randn<float>({3, 4}).requires_grad_();
  CHECK(sum(x, {1}).grad_fn_name() == "SumBackward1");
  CHECK(mean(x, {1}).grad_fn_name() == "MeanBackward1");
  CHECK(sum(x * 2.f, {1}).grad_fn_name() == "SumBackward1");
  CHECK(amax(x, {0}).grad_fn_name() == "AmaxBackward0");
  CHECK(max(x).grad_fn_name() == "MaxBackward1");
  CHECK(std::get<0>(max(x, 1)).grad_fn_name() == "MaxBackward0");
  CHECK(prod(x, {1}).grad_fn_name() == "ProdBackward1");
  CHECK(var(x, {1}).grad_fn_name() == "VarBackward0");
  CHECK(tsr::std(x, {1}).grad_fn_name() == "StdBackward0");
  CHECK(norm(x).grad_fn_name() == "LinalgVectorNormBackward0");
  CHECK(softmax(x, 1).grad_fn_name() == "SoftmaxBackward0");
  CHECK(log_softmax(x, 1).grad_fn_name() == "LogSoftmaxBackward0");
  CHECK(logsumexp(x, {1}).grad_fn_name() == "LogsumexpBackward0");
  CHECK(cumsum(x, 1).grad_fn_name() == "CumsumBackward0");
  CHECK(mm(x, x.t()).grad_fn_name() == "MmBackward0");
  CHECK(matmul(x, x.select(0, 0)).grad_fn_name() == "MvBackward0");
  CHECK(linear(x, x, ones<float>({3})).grad_fn_name() == "AddmmBackward0");
  CHECK(cat({x, x}).grad_fn_name() == "CatBackward0");
  CHECK(stack({x, x}).grad_fn_name() == "StackBackward0");
  CHECK(std::get<0>(sort(x)).grad_fn_name() == "SortBackward0");
  CHECK(tile(x, {2}).grad_fn_name() == "RepeatBackward0");
  // Integer results and index outputs never require grad.
  CHECK(!argmax(x).requires_grad());
  CHECK(!std::get<1>(max(x, 1)).requires_grad());
  CHECK(!argsort(x).requires_grad());
  CHECK(!count_nonzero(x).requires_grad());
  // Under NoGradGuard nothing is recorded.
  NoGradGuard guard;
  CHECK(!sum(x, {1}).requires_grad());
  CHECK(!mm(x, x.t()).requires_grad());
  CHECK(!cat({x, x}).requires_grad());
}

TEST_CASE("p = 0 norm has no gradient, as in PyTorch") {
  auto x = tensor<float>({1.f, 0.f, 2.f}).requires_grad_();
  auto n = norm(x, 0.0);
  CHECK(n.item() == 2.f);
  n.backward();
  CHECK(!x.grad().defined());
  // In-place scatter into a leaf that requires grad is PyTorch's error.
  CHECK(error_of([&] { scatter_(x, 0, tensor<int64_t>({0}), 1.f); }) ==
        "a leaf Variable that requires grad is being used in an in-place operation.");
}

TEST_CASE("a saved input modified in place fails at backward") {
  auto a = randn<float>({2, 3}).requires_grad_();
  auto b = randn<float>({3, 2});
  auto y = sum(mm(a, b));
  {
    NoGradGuard guard;
    b.mul_(2.f);
  }
  CHECK(error_of([&] { y.backward(); }).rfind("one of the variables needed for gradient computation has been modified "
                                              "by an inplace operation: [torch.FloatTensor [3, 2]] is at version 1",
                                              0) == 0);
}

TEST_CASE("the remaining elementwise rules match PyTorch at their edges") {
  constexpr double tight = 1e-5;
  golden_case("clamp_edges", 3, [](const Fs& x) { return Tensor<float>(clamp(x[0], x[1], x[2])); }, tight);
  golden_case("clamp_scalars", 1, [](const Fs& x) { return Tensor<float>(clamp(x[0], -1.f, 1.f)); }, tight);
  golden_case("pow_edges", 2, [](const Fs& x) { return Tensor<float>(pow(x[0], x[1])); }, tight);
  golden_case("gelu", 1, [](const Fs& x) { return Tensor<float>(gelu(x[0])); }, tight);
  golden_case("gelu_tanh", 1, [](const Fs& x) { return Tensor<float>(gelu(x[0], true)); }, tight);
  golden_case("acosh_edges", 1, [](const Fs& x) { return Tensor<float>(acosh(x[0])); }, tight);
  golden_case("nan_to_num", 1, [](const Fs& x) { return Tensor<float>(nan_to_num(x[0])); }, tight);
  golden_case("atan2", 2, [](const Fs& x) { return Tensor<float>(atan2(x[0], x[1])); }, tight);
  golden_case("lerp", 3, [](const Fs& x) { return Tensor<float>(lerp(x[0], x[1], x[2])); }, tight);
  golden_case("logaddexp", 2, [](const Fs& x) {
    return Tensor<float>(logaddexp(x[0], x[1]) + logaddexp2(x[0] * 0.5f, x[1]));
  }, tight);
  golden_case("hypot", 2, [](const Fs& x) { return Tensor<float>(hypot(x[0], x[1])); }, tight);
  golden_case("addcmul_addcdiv", 3, [](const Fs& x) {
    return Tensor<float>(addcmul(x[0], x[1], x[2], 0.5) + addcdiv(x[0], x[1], exp(x[2]), -2));
  }, tight);
  golden_case("rem_fmod", 2, [](const Fs& x) { return Tensor<float>(remainder(x[0], x[1]) + fmod(x[0], x[1])); }, tight);
  golden_case("rounding", 1, [](const Fs& x) {
    return Tensor<float>(floor(x[0]) + ceil(x[0]) + round(x[0]) + trunc(x[0]) + sign(x[0]) + frac(x[0]));
  }, tight);
}

TEST_CASE("shape functions and order statistics: gradients match PyTorch") {
  golden_case("movedim", 1, [](const Fs& x) { return Tensor<float>(movedim(x[0], {0, 2}, {1, 0}) * 1.f); });
  golden_case("trace", 1, [](const Fs& x) { return trace(x[0]).reshape({1}); });
  golden_case("diag_vec", 1, [](const Fs& x) { return diag(x[0], -1); });
  golden_case("diag_mat", 1, [](const Fs& x) { return diag(x[0], 1); });
  golden_case("diff", 2, [](const Fs& x) { return diff(x[0], 2, 1, x[1]); });
  golden_case("kthvalue", 1, [](const Fs& x) { return std::get<0>(kthvalue(x[0], 2, 1)); });
  golden_case("median_dim", 1, [](const Fs& x) { return std::get<0>(median(x[0], 0, true)); });
  golden_case("median_all_ties", 1, [](const Fs& x) { return median(x[0]).reshape({1}); });
  golden_case("nanmedian", 1, [](const Fs& x) { return std::get<0>(nanmedian(x[0], 1)); });
  golden_case("nanmedian_all", 1, [](const Fs& x) { return nanmedian(x[0]).reshape({1}); });
  golden_case("cummax", 1, [](const Fs& x) { return std::get<0>(cummax(x[0], 1)); });
  golden_case("cummin", 1, [](const Fs& x) { return std::get<0>(cummin(x[0], 0)); });
  auto x = randn<float>({3, 4}).requires_grad_();
  CHECK(std::get<0>(kthvalue(x, 2)).grad_fn_name() == "KthvalueBackward0");
  CHECK(median(x).grad_fn_name() == "MedianBackward0");
  CHECK(std::get<0>(median(x, 1)).grad_fn_name() == "MedianBackward1");
  CHECK(nanmedian(x).grad_fn_name() == "NanmedianBackward0");
  CHECK(std::get<0>(nanmedian(x, 0)).grad_fn_name() == "NanmedianBackward1");
  CHECK(std::get<0>(cummax(x, 1)).grad_fn_name() == "CummaxBackward0");
  CHECK(std::get<0>(cummin(x, 1)).grad_fn_name() == "CumminBackward0");
  CHECK(!std::get<1>(cummax(x, 1)).requires_grad());
  CHECK(!std::get<1>(median(x, 1)).requires_grad());
}

TEST_CASE("gradcheck: shape functions and order statistics") {
  manual_seed(9);
  const Tensor<double> x = randn<double>({3, 4});
  gradcheck_ok("movedim, swapaxes", [](const V& v) { return Tensor<double>(movedim(v[0], 0, 1) * swapaxes(v[0], 1, 0)); },
               {x});
  gradcheck_ok("trace, diag", [](const V& v) { return Tensor<double>(trace(v[0].narrow(1, 0, 3)) * diag(v[1], 1)); },
               {x, randn<double>({3})});
  gradcheck_ok("diff with prepend and append", [](const V& v) { return diff(v[0], 2, 0, v[1], v[0].narrow(0, 0, 1)); },
               {x, randn<double>({2, 4})});
  gradcheck_ok("kthvalue, median, nanmedian over a dim", [](const V& v) {
    return Tensor<double>(std::get<0>(kthvalue(v[0], 3, 1)) + std::get<0>(median(v[0], 1)) +
                          std::get<0>(nanmedian(v[0].t(), 0)));
  }, {x});
  gradcheck_ok("median of all", [](const V& v) { return median(v[0]); }, {x});
  gradcheck_ok("cummax, cummin", [](const V& v) {
    return Tensor<double>(std::get<0>(cummax(v[0], 1)) * std::get<0>(cummin(v[0], 0)));
  }, {x});
  gradcheck_ok("aminmax, var_mean, std_mean", [](const V& v) {
    const auto [lo, hi] = aminmax(v[0], 1);
    const auto [var0, mean0] = var_mean(v[0], {0});
    const auto [std1, mean1] = std_mean(v[0], {1}, 0, true);
    return Tensor<double>(sum(lo * hi) + sum(var0 * mean0) + sum(std1 * mean1));
  }, {x});
}

TEST_CASE("gradcheck: products, block_diag, rot90, take_along_dim, vander, meshgrid and cartesian_prod") {
  manual_seed(10);
  const Tensor<double> m = randn<double>({3, 4}), v = randn<double>({4}), c = randn<double>({3});
  gradcheck_ok("addmv", [](const V& x) { return addmv(x[0], x[1], x[2], 0.5, -2); }, {c, m, v});
  gradcheck_ok("addr", [](const V& x) { return addr(x[0], x[1], x[2], 2, 0.5); }, {m, c, v});
  const Tensor<double> b1 = randn<double>({2, 3, 4}), b2 = randn<double>({2, 4, 2}), c2 = randn<double>({3, 2});
  gradcheck_ok("addbmm", [](const V& x) { return addbmm(x[0], x[1], x[2], 0.5, 1.5); }, {c2, b1, b2});
  gradcheck_ok("baddbmm", [](const V& x) { return baddbmm(x[0], x[1], x[2], -1, 0.25); }, {c2, b1, b2});
  gradcheck_ok("tensordot", [](const V& x) { return tensordot(x[0], x[1], {1, 2}, {1, 0}); },
               {randn<double>({2, 3, 4}), randn<double>({4, 3, 2})});
  gradcheck_ok("kron", [](const V& x) { return kron(x[0], x[1]); }, {m, randn<double>({2, 1, 2})});
  gradcheck_ok("block_diag", [](const V& x) { return block_diag({x[0], x[1], x[2].select(0, 0)}); }, {m, v, c});
  gradcheck_ok("rot90", [](const V& x) {
    return Tensor<double>(rot90(x[0], 1) * rot90(x[0], 3) + rot90(x[0], 2).t());
  }, {m});
  gradcheck_ok("take_along_dim", [](const V& x) {
    return take_along_dim(x[0], tensor<int64_t>({3, 0, 0, 2}, {1, 4}), 0);
  }, {randn<double>({4, 1})});
  gradcheck_ok("vander", [](const V& x) { return vander(x[0], 4); }, {c});
  gradcheck_ok("meshgrid, cartesian_prod", [](const V& x) {
    const auto grids = meshgrid({x[0], x[1]}, "xy");
    return Tensor<double>(sum(grids[0] * grids[1]) + sum(cartesian_prod({x[0], x[1]})));
  }, {c, v});
}

TEST_CASE("gradcheck: joining, splitting, repeating and scattering into views") {
  manual_seed(12);
  const Tensor<double> m = randn<double>({2, 3}), v = randn<double>({3}), c = randn<double>({2});
  gradcheck_ok("hstack, vstack, dstack, column_stack", [](const V& x) {
    return Tensor<double>(sum(hstack({x[0], x[0]}) * 2.0) + sum(square(vstack({x[1], x[0]}))) +
                          sum(dstack({x[0], Tensor<double>(x[0] * x[0])})) + sum(exp(column_stack({x[2], x[0]}))));
  }, {m, v, c});
  gradcheck_ok("tensor_split, hsplit", [](const V& x) {
    const auto pieces = tensor_split(x[0], {1, 2}, 1);
    const auto halves = hsplit(x[1], 3);
    return Tensor<double>(sum(pieces[0] * 3.0) + sum(square(pieces[2])) + sum(halves[1] * halves[2]));
  }, {m, v});
  gradcheck_ok("broadcast_to, broadcast_tensors", [](const V& x) {
    const auto both = broadcast_tensors({x[0], x[1].reshape({2, 1})});
    return Tensor<double>(broadcast_to(x[1].reshape({2, 1}), {4, 2, 3}) * x[0] + both[0] * both[1]);
  }, {m, c});
  gradcheck_ok("repeat_interleave", [](const V& x) {
    return Tensor<double>(sum(square(repeat_interleave(x[0], tensor<int64_t>({2, 0, 3}), 1))) +
                          sum(repeat_interleave(x[0], 2) * repeat_interleave(x[0], 2)));
  }, {m});
  gradcheck_ok("fliplr, flipud", [](const V& x) { return Tensor<double>(fliplr(x[0]) * flipud(x[0])); }, {m});
  gradcheck_ok("diag_embed, diagflat", [](const V& x) {
    return Tensor<double>(sum(square(diag_embed(x[0], 1, 0, 2))) + sum(diagflat(x[0], -1) * 2.0));
  }, {m});
  gradcheck_ok("combinations", [](const V& x) {
    return Tensor<double>(sum(prod(combinations(x[0]), {1})) + sum(square(combinations(x[0], 3, true))));
  }, {v});
  gradcheck_ok("select_scatter, slice_scatter, diagonal_scatter", [](const V& x) {
    return Tensor<double>(square(select_scatter(x[0], x[1], 0, 1)) + slice_scatter(x[0], x[2].reshape({2, 1}), 1, 2) +
                          exp(diagonal_scatter(Tensor<double>(x[0] * 2.0), x[2])));
  }, {m, v, c});
  // Gradients flow to src alone where x does not require them, and to x
  // alone where src does not.
  gradcheck_ok("slice_scatter into a constant", [](const V& x) {
    return slice_scatter(zeros<double>({2, 4}), x[0], 1, 1, 4);
  }, {m});
  gradcheck_ok("select_scatter of a constant", [](const V& x) {
    return select_scatter(x[0], ones<double>({3}), 0, 0);
  }, {m});
}

TEST_CASE("gradcheck: quantile, logcumsumexp, trapezoid, cov, corrcoef, dist, renorm and ldexp") {
  manual_seed(11);
  const Tensor<double> x = randn<double>({3, 5}), q = tensor<double>({0.2, 0.5, 0.9});
  gradcheck_ok("quantile", [&](const V& v) { return quantile(v[0], q, 1); }, {x});
  gradcheck_ok("quantile of all, midpoint", [](const V& v) { return quantile(v[0], 0.4, std::nullopt, false, "midpoint"); },
               {x});
  gradcheck_ok("nanquantile", [&](const V& v) { return nanquantile(v[0].t(), q, 0, true); }, {x});
  gradcheck_ok("logcumsumexp", [](const V& v) { return logcumsumexp(v[0], 1); }, {x});
  gradcheck_ok("logcumsumexp of a gradient of both signs", [](const V& v) {
    return Tensor<double>(logcumsumexp(v[0], 0) * tensor<double>({1.0, -2.0, 0.5, 3.0, -1.0}));
  }, {x});
  CHECK(autograd::gradgradcheck([](const V& v) { return logcumsumexp(v[0], 1); }, {x}));
  const Tensor<double> pos = tensor<double>({0.0, 0.3, 1.1, 1.2, 2.0});
  gradcheck_ok("trapezoid", [](const V& v) { return trapezoid(v[0], 0.5); }, {x});
  gradcheck_ok("trapezoid at positions", [](const V& v) { return trapezoid(v[0], v[1]); }, {x, pos});
  gradcheck_ok("cumulative_trapezoid", [](const V& v) { return cumulative_trapezoid(v[0], v[1]); }, {x, pos});
  const Tensor<double> aw = tensor<double>({0.5, 1.0, 2.0, 0.25, 1.5});
  gradcheck_ok("cov", [](const V& v) { return cov(v[0]); }, {x});
  gradcheck_ok("cov with weights", [](const V& v) { return cov(v[0], 1, tensor<int64_t>({1, 2, 1, 3, 1}), v[1]); },
               {x, aw});
  gradcheck_ok("corrcoef", [](const V& v) { return corrcoef(v[0]); }, {x});
  gradcheck_ok("dist", [](const V& v) { return dist(v[0], v[1], 3); }, {x, randn<double>({5})});
  gradcheck_ok("renorm", [](const V& v) { return renorm(v[0], 2, 0, 1.0); }, {x});
  gradcheck_ok("ldexp", [](const V& v) { return Tensor<double>(ldexp(v[0], tensor<int64_t>({2, -1, 0, 3, 1}))); }, {x});
}

TEST_CASE("gradcheck: the remaining elementwise rules") {
  manual_seed(8);
  const Tensor<double> x = randn<double>({3, 4});
  const Tensor<double> pos = abs(randn<double>({3, 4})) + 1.5;
  gradcheck_ok("acosh", [](const V& v) { return Tensor<double>(acosh(v[0])); }, {pos});
  gradcheck_ok("gelu", [](const V& v) { return Tensor<double>(gelu(v[0]) + gelu(v[0] * 2.0, true)); }, {x});
  gradcheck_ok("atan2, broadcast", [](const V& v) { return Tensor<double>(atan2(v[0], v[1])); }, {x, randn<double>({4})});
  gradcheck_ok("pow with a tensor exponent", [](const V& v) { return Tensor<double>(pow(v[0], v[1])); },
               {pos, randn<double>({3, 4}).t().t()});
  gradcheck_ok("clamp with tensor bounds", [](const V& v) { return Tensor<double>(clamp(v[0], v[1], v[2])); },
               {x, Tensor<double>(randn<double>({4}) * 0.1 - 0.5), full<double>({3, 1}, 0.5)});
  gradcheck_ok("lerp", [](const V& v) { return Tensor<double>(lerp(v[0], v[1], v[2])); },
               {x, randn<double>({3, 4}), rand<double>({4})});
  gradcheck_ok("logaddexp, logaddexp2, hypot", [](const V& v) {
    return Tensor<double>(logaddexp(v[0], v[1]) * logaddexp2(v[1], v[0]) + hypot(v[0], v[1]));
  }, {x, randn<double>({4})});
  gradcheck_ok("addcmul, addcdiv", [](const V& v) {
    return Tensor<double>(addcmul(v[0], v[1], v[2], 1.5) - addcdiv(v[0], v[2], v[1] + 3.0, 0.5));
  }, {x, pos, randn<double>({4})});
  gradcheck_ok("remainder and fmod", [](const V& v) { return Tensor<double>(remainder(v[0], v[1]) - fmod(v[0], v[1])); },
               {Tensor<double>(x * 5.0), pos});
  gradcheck_ok("nan_to_num", [](const V& v) { return Tensor<double>(nan_to_num(v[0] * 2.0)); }, {x});
}

// Rules that compare a recomputed value with a saved or separately computed
// one (extrema over all and over dims, maximum/minimum and clamp at ties,
// relu at 0, topk) must see the forward's bits whichever path computes an
// element: vector body, tail, strided row or scalar reduction. The sizes
// cross every batch width (4, 8, 16 lanes), the 4-batch reduction body and
// the 4096-element block; the expected gradients follow from calculus and
// PyTorch's tie rules (an extremum's gradient goes to the elements equal to
// it, maximum/minimum split ties in half, clamp passes its bounds, relu'(0)
// is 0), not from tessera.
TEST_CASE_TEMPLATE("rules that compare recomputed values agree with the forward on every path", T, float, double) {
  const int64_t sizes[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 257, 1025, 4095, 4096, 4097};
  struct Fn {
    const char* name;
    std::function<Tensor<T>(const Tensor<T>&)> f;  // increasing
    double (*df)(double);
  };
  const Fn fns[] = {
      {"exp", [](const Tensor<T>& x) { return Tensor<T>(exp(x)); }, [](double v) { return std::exp(v); }},
      {"tanh", [](const Tensor<T>& x) { return Tensor<T>(tanh(x)); }, [](double v) { return 1 - std::tanh(v) * std::tanh(v); }},
  };
  for (const auto& fn : fns)
    for (int64_t n : sizes)
      for (uint64_t seed : {1, 2, 3}) {
        CAPTURE(fn.name);
        CAPTURE(n);
        CAPTURE(seed);
        manual_seed(seed);
        const Tensor<T> base = randn<T>({n});
        const auto xs = base.to_vector();
        const auto hi = std::max_element(xs.begin(), xs.end()) - xs.begin();
        const auto lo = std::min_element(xs.begin(), xs.end()) - xs.begin();
        const auto check_extremum = [&](auto reduce, int64_t at) {
          Tensor<T> x = base.clone().requires_grad_();
          reduce(x).backward();
          const auto g = x.grad().to_vector();
          CHECK(g[static_cast<std::size_t>(at)] > 0);  // never the all-zero gradient
          double total = 0;
          for (T v : g) total += static_cast<double>(v);
          CHECK(total == doctest::Approx(fn.df(static_cast<double>(xs[static_cast<std::size_t>(at)]))).epsilon(1e-3));
        };
        // exp and tanh are written inline so that the reduction fuses them.
        if (fn.name[0] == 'e') {
          check_extremum([](const Tensor<T>& x) { return max(exp(x)); }, hi);
          check_extremum([](const Tensor<T>& x) { return amax(exp(x)); }, hi);
          check_extremum([](const Tensor<T>& x) { return min(exp(x)); }, lo);
          check_extremum([](const Tensor<T>& x) { return amin(exp(x)); }, lo);
          check_extremum([](const Tensor<T>& x) { return amax(exp(x.reshape({1, -1})), {1}).sum(); }, hi);
          check_extremum([](const Tensor<T>& x) { return std::get<0>(topk(exp(x), 1)).sum(); }, hi);
        } else {
          check_extremum([](const Tensor<T>& x) { return max(tanh(x)); }, hi);
          check_extremum([](const Tensor<T>& x) { return min(tanh(x)); }, lo);
          check_extremum([](const Tensor<T>& x) { return amin(tanh(x.reshape({1, -1})), {1}).sum(); }, lo);
        }
        // The same values computed in reverse order: each element lands in
        // another position (a tail element in a vector body and back) than
        // in the fused backward's recomputation.
        const Tensor<T> x2 = base;
        const Tensor<T> other = flip(fn.f(flip(base, {0})), {0});
        Tensor<T> slope = zeros<T>({n});
        for (int64_t i = 0; i < n; ++i) slope(i) = static_cast<T>(fn.df(static_cast<double>(xs[static_cast<std::size_t>(i)])));
        const auto check_grad = [&](auto build, double scale) {
          Tensor<T> x = x2.clone().requires_grad_();
          build(x).sum().backward();
          // (1 - tanh^2 in T loses relative accuracy near saturation: an
          // absolute floor of a few ulps; a wrong tie is off by half or more.)
          test::check_close(x.grad(), slope * T(scale), 1e-5, 16 * std::numeric_limits<T>::epsilon(), "tie gradient");
        };
        const T inf = std::numeric_limits<T>::infinity();
        if (fn.name[0] == 'e') {
          check_grad([&](const Tensor<T>& x) { return Tensor<T>(maximum(exp(x), other)); }, 0.5);
          check_grad([&](const Tensor<T>& x) { return Tensor<T>(minimum(exp(x), other)); }, 0.5);
          check_grad([&](const Tensor<T>& x) { return Tensor<T>(clamp(exp(x), other, inf)); }, 1.0);
          check_grad([&](const Tensor<T>& x) { return Tensor<T>(clamp(exp(x), -inf, other)); }, 1.0);
          check_grad([&](const Tensor<T>& x) { return Tensor<T>(relu(exp(x) - other) + x * T(0)); }, 0.0);
        } else {
          check_grad([&](const Tensor<T>& x) { return Tensor<T>(maximum(tanh(x), other)); }, 0.5);
          check_grad([&](const Tensor<T>& x) { return Tensor<T>(relu(tanh(x) - other) + x * T(0)); }, 0.0);
        }
      }
}

TEST_CASE("gradcheck: index_add, index_copy, index_fill, masked_scatter, cross, copysign and inner") {
  manual_seed(14);
  const Tensor<double> m = randn<double>({3, 4}), s = randn<double>({2, 4}), a = randn<double>({2, 3}),
                       b = randn<double>({1, 3}), w = randn<double>({10});
  const auto i = tensor<int64_t>({2, 0});
  gradcheck_ok("index_add with alpha and a repeated index", [&](const V& x) {
    return Tensor<double>(square(index_add(x[0], 0, i, x[1], -1.5)) +
                          index_add(x[0], 1, tensor<int64_t>({1, 1}), x[1].slice(0, 0, 1).slice(1, 0, 2)));
  }, {m, s});
  gradcheck_ok("index_copy, index_fill", [&](const V& x) {
    return Tensor<double>(exp(index_copy(x[0], 0, i, x[1])) * index_fill(x[0], 1, tensor<int64_t>({-1}), 2.0));
  }, {m, s});
  gradcheck_ok("masked_scatter: self, mask and source broadcast", [&](const V& x) {
    const auto mask = tensor<bool>({true, false, false, true});
    return Tensor<double>(sum(square(masked_scatter(x[0], mask, x[1]))) +
                          sum(masked_scatter(x[0].select(0, 1), x[0].slice(0, 0, 2) > 0.0, x[1]) * 2.0));
  }, {m, w});
  gradcheck_ok("cross, linalg::cross", [](const V& x) {
    return Tensor<double>(square(cross(x[0], x[1])) + linalg::cross(x[0].t(), x[1].t(), 0).t());
  }, {a, b});
  gradcheck_ok("copysign, inner", [](const V& x) {
    return Tensor<double>(copysign(x[0], x[1]) * 3.0 + inner(x[0], x[1]));
  }, {a, b});
  // The node names PyTorch gives these.
  Tensor<double> leaf = m.clone().requires_grad_();
  CHECK(index_add(leaf, 0, i, s).grad_fn_name() == "IndexAddBackward0");
  CHECK(index_copy(leaf, 0, i, s).grad_fn_name() == "IndexCopyBackward0");
  CHECK(index_fill(leaf, 0, i, 1.0).grad_fn_name() == "IndexFillBackward0");
}
