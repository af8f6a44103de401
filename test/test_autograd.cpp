// Autograd, first part: fused backward of elementwise expressions, full
// sum/mean, views, the engine's rules and errors. Gradients are compared with
// PyTorch 1.13's (tools/make_golden.py: autograd_cases) and with central
// differences (autograd::gradcheck).
#include "common.hpp"

using namespace tsr;
using test::check_close;
using test::error_of;

namespace {

template <class T = float>
Tensor<T> leaf(const std::string& name) {
  return test::golden<T>(name).requires_grad_();
}

// Checks the output and every input's gradient of case `name` against PyTorch.
template <class... T>
void check_case(const std::string& name, const Tensor<float>& out, const std::tuple<Tensor<T>...>& inputs,
                double rtol = 1e-5) {
  check_close(out, test::golden("ag_" + name + "_out"), rtol, 1e-6, name + " forward");
  int i = 0;
  std::apply([&](const auto&... x) {
    ((check_close(x.grad(), test::golden("ag_" + name + "_grad" + std::to_string(i)), rtol, 1e-6,
                  name + " grad " + std::to_string(i)),
      ++i),
     ...);
  }, inputs);
}

// A user-defined elementwise op without a derivative rule.
struct Cube : detail::FloatOp {
  static constexpr const char* name = "cube";
  static constexpr bool simd = true;
  template <class V> V operator()(V x) const { return x * x * x; }
};

}  // namespace

TEST_CASE("one node per materialized expression, named after its ops") {
  auto x = leaf("ag_basic_in0"), y = leaf("ag_basic_in1");
  Tensor<float> z = x * y + sin(x);
  // With per-op autograd (TSR_PER_OP_AUTOGRAD), one node per op instead: z's is the addition's.
  CHECK(z.grad_fn_name() == (detail::kFusedAutograd ? "FusedBackward(mul,sin,add)" : "FusedBackward(add)"));
  CHECK(z.requires_grad());
  CHECK(!z.is_leaf());
  CHECK(x.is_leaf());
  CHECK(x.grad_fn_name().empty());
  CHECK(!x.grad().defined());
  // Integer and bool results never require grad; without a leaf that does, nothing is recorded.
  Tensor<bool> positive = x > 0.f;
  CHECK(!positive.requires_grad());
  Tensor<float> plain = ones<float>({3}) * 2.f;
  CHECK(!plain.requires_grad());
  CHECK(plain.is_leaf());
}

TEST_CASE("gradients match PyTorch") {
  {
    auto x = leaf("ag_basic_in0"), y = leaf("ag_basic_in1");
    auto out = sum((x * y + sin(x)) * exp(-y) / (1.f + x * x));
    out.backward();
    check_case("basic", out, std::tuple{x, y});
  }
  {
    auto x = leaf("ag_twice_in0");
    auto out = sum(x * x * x - tanh(x));
    out.backward();
    check_case("twice", out, std::tuple{x});
  }
  {
    auto x = leaf("ag_edges_in0");  // x[0] == 0: relu'(0) = abs'(0) = 0
    auto out = sum(2.5f * x - x / 3.f + sqrt(abs(x) + 1.f) + relu(x) + abs(x));
    out.backward();
    check_case("edges", out, std::tuple{x});
  }
  {
    auto x = leaf("ag_mean_in0"), y = leaf("ag_mean_in1");
    auto out = mean(sigmoid(x) * log(y) - cos(x));
    out.backward();
    check_case("mean", out, std::tuple{x, y});
  }
  {
    auto x = leaf("ag_chain_in0");
    Tensor<float> e = exp(x);  // three recorded nodes
    Tensor<float> p = e * x;
    auto out = mean(p - e);
    out.backward();
    check_case("chain", out, std::tuple{x});
  }
  {
    auto x = leaf<double>("ag_cast_in0");
    auto y = leaf("ag_cast_in1");
    auto out = sum(x * cast<double>(y));
    out.backward();
    check_close(out, test::golden("ag_cast_out"), 1e-12, 0, "cast forward");
    check_close(x.grad(), test::golden("ag_cast_grad0"), 1e-12, 0, "double leaf");
    check_close(y.grad(), test::golden("ag_cast_grad1"), 1e-6, 0, "float leaf through a cast");
  }
  {
    auto x = leaf("ag_where_in0");
    auto out = sum(where(x > 0.f, x * x, -x));
    out.backward();
    check_case("where", out, std::tuple{x});
  }
  {
    auto x = leaf("ag_pow_in0");
    auto out = sum(pow(x, 3) + pow(x, 0) + pow(x * x + 1.f, 0.5));
    out.backward();
    check_case("pow", out, std::tuple{x});
  }
  {
    auto x = leaf("ag_gradout_in0"), y = leaf("ag_gradout_in1");
    Tensor<float> out = x * y;  // y broadcasts: its gradient is summed over dim 0
    out.backward(test::golden<float>("ag_gradout_gradout"));
    check_case("gradout", out, std::tuple{x, y});
  }
}

TEST_CASE("views: gradients flow into the base") {
  auto x = leaf("ag_views_in0"), w = leaf("ag_views_in1"), z = leaf("ag_views_in2");
  auto out = sum(x.t() * w);
  auto b = sum(square(x.slice(1, 1, 3)));
  auto c = sum(x.reshape({12}).slice(0, 0, 12, 2));
  auto d = sum(x.select(0, 1).expand({2, 4}) * z);
  Tensor<float> total = out + b + c + d;
  CHECK(x.t().grad_fn_name() == "ViewBackward0");
  total.backward();
  check_case("views", total, std::tuple{x, w, z});
}

TEST_CASE("a tensor that requires grad through a cast to another type: its type's autograd runtime is on") {
  // The autograd runtime of a type is switched on by requires_grad_() and
  // by a recorded cast to that type (autograd/runtime.hpp). No tensor in
  // this program is made to require grad as bfloat16: the broadcast sum and
  // the view recording below reach bfloat16's runtime through the cast.
  auto x = tensor<double>({1.0, 2.0, 3.0}).requires_grad_();
  const Tensor<bfloat16> h = x.to<bfloat16>();
  CHECK(detail::autograd_runtime_of<bfloat16>.load() != nullptr);
  const Tensor<bfloat16> rows = h.unsqueeze(0) * ones<bfloat16>({2, 3});  // h's gradient is summed over rows
  const Tensor<bfloat16> part = h.slice(0, 1, 3) * bfloat16(3.f);         // a view of h
  const Tensor<bfloat16> loss = sum(rows) + sum(part);
  loss.backward();
  // d/dx of sum over 2 rows of x, plus 3 * (x1 + x2): exact in bfloat16.
  check_close(x.grad(), tensor<double>({2.0, 5.0, 5.0}), 0, 0, "gradient through the cast");
}

TEST_CASE("views of an expanded tensor are differentiable: the broadcast dims are summed") {
  // loss = sum(w.expand({3, 4}).t() * x) = sum_i w_i * (x_i0 + x_i1 + x_i2)
  auto w = tensor<double>({1.0, 2.0, 3.0, 4.0}).requires_grad_();
  const auto x = arange<double>(12).reshape({4, 3});
  sum(w.expand({3, 4}).t() * x).backward();
  CHECK(equal(w.grad(), tensor<double>({3.0, 12.0, 21.0, 30.0})));
  // Row 2 of a (4, 5) broadcast, narrowed: three reads of w_2 = 3, d(sum s^2)/dw_2 = 3 * 2 * 3.
  auto v = tensor<double>({1.0, 2.0, 3.0, 4.0}).requires_grad_();
  auto s = v.reshape({4, 1}).expand({4, 5}).narrow(1, 1, 3).select(0, 2);
  sum(s * s).backward();
  CHECK(equal(v.grad(), tensor<double>({0.0, 0.0, 18.0, 0.0})));
  // Against central differences: a bias broadcast, then transposed, sliced and permuted.
  manual_seed(5);
  using V = std::vector<Tensor<double>>;
  const Tensor<double> b = randn<double>({4}), m = randn<double>({2, 1, 3});
  CHECK(autograd::gradcheck([](const V& in) { return Tensor<double>(square(in[0].expand({3, 4}).t().slice(0, 1, 4, 2))); },
                            {b}));
  CHECK(autograd::gradcheck(
      [](const V& in) { return Tensor<double>(diagonal(in[0].expand({2, 5, 3}).permute({2, 0, 1}), 0, 1, 2) * 2.0); },
      {m}));
}

TEST_CASE("an op on a mask inside a recorded expression: the mask takes no gradient, and its rule is not built") {
  // erfc of a bool tensor is float; erfc's derivative would not compile for bool.
  const auto mask = tensor<bool>({true, false, true});
  auto w = tensor<float>({1.f, 2.f, 3.f}).requires_grad_();
  sum(erfc(mask) * w + square(cast<float>(mask)) * w).backward();
  const float e1 = 0.157299207050285130658f;  // erfc(1)
  CHECK(allclose(w.grad(), tensor<float>({e1 + 1, 1.f, e1 + 1})));
  CHECK(mean(erfc(mask)).item() == doctest::Approx((2 * e1 + 1) / 3));
}

TEST_CASE("gradcheck: every derivative rule against central differences") {
  manual_seed(2);
  const Tensor<double> a = randn<double>({3, 4});
  const Tensor<double> b = abs(randn<double>({4})) + 0.5;
  using V = std::vector<Tensor<double>>;
  auto check = [](auto f, V in) { CHECK(autograd::gradcheck(f, std::move(in))); };
  check([](const V& v) { return Tensor<double>(v[0] + v[1] - v[0] * v[1] / v[1]); }, {a, b});
  check([](const V& v) { return Tensor<double>(-square(v[0]) + exp(v[0]) * sin(v[0]) - cos(v[1])); }, {a, b});
  check([](const V& v) { return Tensor<double>(tanh(v[0]) * sigmoid(v[0]) + log(v[1]) * sqrt(v[1])); }, {a, b});
  check([](const V& v) { return Tensor<double>(relu(v[0]) + abs(v[0]) + pow(v[1], 2.5) + pow(v[0], 3)); }, {a, b});
  check([](const V& v) { return Tensor<double>(where(v[0] > 0.0, v[0] * v[1], v[1] - v[0])); }, {a, b});
  check([](const V& v) { return sum(v[0].t().slice(0, 1, 3) * 2.0); }, {a});
  const Tensor<double> u = tanh(a) * 0.9;  // inside (-1, 1) for asin, acos, atanh
  check([](const V& v) { return Tensor<double>(rsqrt(v[1]) + reciprocal(v[1]) + log2(v[1]) + log10(v[1]) + log1p(v[1])); },
        {a, b});
  check([](const V& v) { return Tensor<double>(exp2(v[0]) + expm1(v[0]) + tan(v[0] * 0.5) + atan(v[0])); }, {a});
  check([](const V& v) { return Tensor<double>(asin(v[0]) + acos(v[0]) + atanh(v[0]) + asinh(v[0])); }, {u});
  check([](const V& v) { return Tensor<double>(sinh(v[0]) + cosh(v[0]) + erf(v[0]) + erfc(v[0])); }, {a});
  check([](const V& v) { return Tensor<double>(silu(v[0]) + softplus(v[0] * 10.0)); }, {a});
  check([](const V& v) { return Tensor<double>(maximum(v[0], v[1]) * 2.0 + minimum(v[0], v[1])); }, {a, b});
  check([](const V& v) { return mean(v[0] * v[1].unsqueeze(0).expand({3, 4})); }, {a, b});
  // A wrong rule is caught: gradcheck of a function whose backward is not its derivative.
  CHECK(error_of([] {
          autograd::gradcheck([](const V& v) { return Tensor<double>(v[0] * 2.0 + v[0].detach()); }, {ones<double>({2})});
        }).rfind("Jacobian mismatch for output 0 with respect to input 0", 0) == 0);
}

TEST_CASE("accumulation, retain_graph and the engine's errors") {
  auto x = tensor<float>({1.f, -2.f, 3.f}).requires_grad_();
  auto y = sum(x * x);
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  CHECK(equal(x.grad(), tensor<float>({4.f, -8.f, 12.f})));  // 2 * 2x, accumulated
  CHECK(error_of([&] { y.backward(); }).rfind("Trying to backward through the graph a second time", 0) == 0);
  Tensor<float> v = x * 2.f;
  CHECK(error_of([&] { v.backward(); }) == "grad can be implicitly created only for scalar outputs");
  CHECK(error_of([] { sum(ones<float>({3})).backward(); }) ==
        "element 0 of tensors does not require grad and does not have a grad_fn");
  CHECK(error_of([&] { x.add_(1.f); }) == "a leaf Variable that requires grad is being used in an in-place operation.");
  CHECK(error_of([] { ones<int64_t>({2}).requires_grad_(); }) ==
        "only Tensors of floating point dtype can require gradients");
  CHECK(error_of([&] { v.requires_grad_(false); }).rfind("you can only change requires_grad flags of leaf variables.", 0) ==
        0);
  // A saved tensor modified in place (here under NoGradGuard, which allows it) is PyTorch's error at backward.
  auto w = tensor<float>({1.f, 2.f, 3.f}).requires_grad_();
  auto u = sum(w * w);
  {
    NoGradGuard guard;
    w.mul_(2.f);
  }
  CHECK(error_of([&] { u.backward(); }) ==
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[torch.FloatTensor [3]] is at version 1; expected version 0 instead. Hint: enable anomaly detection to find "
        "the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).");
}

TEST_CASE("an expression of one tensor: its summed derivative for every layout of x, of the gradient and of .grad") {
  // d/dx (x * x + sin(x)) = 2 x + cos(x), computed here by the forward path.
  const auto values = arange<double>(-2.0, 2.0, 1.0 / 3.0).reshape({3, 4});
  const auto derivative = [](const Tensor<double>& x) { return Tensor<double>(2.0 * x + cos(x)); };
  auto x = values.clone().requires_grad_();
  auto y = sum(x * x + sin(x));  // a reduction's gradient: one element, broadcast
  y.backward({}, /*retain_graph=*/true);
  check_close(x.grad(), derivative(values), 1e-15, 0, "new .grad");
  y.backward();  // added straight into the existing .grad
  check_close(x.grad(), 2.0 * derivative(values), 1e-15, 0, "accumulated .grad");

  auto base = values.clone().requires_grad_();
  auto xt = base.t();  // every leaf is one strided view
  sum(xt * xt + sin(xt)).backward();
  check_close(base.grad(), derivative(values), 1e-15, 0, "through a transposed view");

  auto z = values.clone().requires_grad_();
  const auto g = arange<double>(1.0, 13.0).reshape({4, 3}).t();  // a strided incoming gradient
  Tensor<double> w = z * z + sin(z);
  w.backward(g);
  check_close(z.grad(), g * derivative(values), 1e-15, 0, "strided gradient");
  // The incoming gradient is the .grad being accumulated into.
  const Tensor<double> before = z.grad().clone();
  Tensor<double> w2 = z * z + sin(z);
  w2.backward(z.grad());
  check_close(z.grad(), before + before * derivative(values), 1e-15, 0, "gradient aliasing .grad");
  // ... read transposed: evaluated in place as it is, element (i, j) would read (j, i) after it changed.
  const auto square = arange<double>(-2.0, 2.0, 0.25).reshape({4, 4});
  auto q = square.clone().requires_grad_();
  Tensor<double> s1 = q * q + sin(q);
  s1.backward(arange<double>(1.0, 17.0).reshape({4, 4}));
  const Tensor<double> q_grad = q.grad().clone();
  Tensor<double> s2 = q * q + sin(q);
  s2.backward(q.grad().t());
  check_close(q.grad(), q_grad + q_grad.t() * derivative(square), 1e-15, 0, "gradient aliasing .grad, transposed");
}

TEST_CASE("an expression linear in one tensor used several times: one gradient per use, added") {
  // d/dx (2.5 x - x / 4 + x) = 3.25 for every element (exactly representable).
  const auto values = arange<float>(-1.f, 1.f, 0.25f).reshape({2, 4});
  auto x = values.clone().requires_grad_();
  Tensor<float> y = 2.5f * x - x / 4.f + x;
  const auto g = arange<float>(1.f, 9.f).reshape({2, 4});
  y.backward(g, /*retain_graph=*/true);
  check_close(x.grad(), g * 3.25f, 0, 0, "new .grad");
  y.backward(g);
  check_close(x.grad(), g * 6.5f, 0, 0, "accumulated .grad");
  // The same through a view of x read at two offsets (a stencil): distinct leaves.
  auto row = arange<float>(0.f, 6.f).requires_grad_();
  Tensor<float> d = row.slice(0, 1, 6) - row.slice(0, 0, 5);
  d.backward(ones({5}));
  check_close(row.grad(), tensor<float>({-1.f, 0.f, 0.f, 0.f, 0.f, 1.f}), 0, 0, "differences of two views");
}

TEST_CASE("expressions linear in their tensors: numbers times the gradient, no tensor saved (as PyTorch)") {
  // By hand: d/dx per row 2 + 1/4 - 1 - 1 - 4 = -3.75, over 2 rows -7.5; d/drow 4 per row, 8.
  auto x = tensor<float>({1.f, 2.f, 3.f}).requires_grad_();
  auto row = tensor<float>({1.f, 2.f, 3.f}).requires_grad_();
  Tensor<float> y = x * 2.f + x / 4.f - x + (-x) + 1.f - 4.f * (x - row.unsqueeze(0).expand({2, 3}));
  CHECK(y.grad_fn_name() == "FusedBackward(mul,div,add,sub,neg,add,add,sub,mul,sub)");
  sum(y).backward();
  CHECK(equal(x.grad(), full<float>({3}, -7.5f)));
  CHECK(equal(row.grad(), full<float>({3}, 8.f)));
  // PyTorch 1.13 (checked by hand in it): sums and negations save nothing, so a second backward works;
  // a product by a number saves the number, so a second backward is the usual error.
  x.mutable_grad() = Tensor<float>();
  Tensor<float> w = x - (-row);
  sum(w).backward();
  sum(w).backward();
  CHECK(equal(x.grad(), full<float>({3}, 2.f)));
  Tensor<float> z = x * 3.f + row;
  sum(z).backward();
  CHECK(error_of([&] { sum(z).backward(); }).rfind("Trying to backward through the graph a second time", 0) == 0);
  // No input is saved: one modified in place before backward is no error (unlike sum(w * w) in
  // "accumulation, retain_graph and the engine's errors").
  x.mutable_grad() = Tensor<float>();
  Tensor<float> v = x * 3.f + row;
  {
    NoGradGuard guard;
    row.mul_(2.f);
  }
  sum(v).backward();
  CHECK(equal(x.grad(), full<float>({3}, 3.f)));
  // A clone saves nothing either (PyTorch 1.13: its source written in place, and a second backward, pass).
  x.mutable_grad() = Tensor<float>();
  Tensor<float> source = x + 0.f;  // saves nothing (x * 1.f would save the 1)
  const Tensor<float> copy = source.clone();
  CHECK(copy.grad_fn_name() == "CloneBackward0");
  {
    NoGradGuard guard;
    source.mul_(2.f);
  }
  const auto total = sum(copy);
  total.backward({}, /*retain_graph=*/false);
  CHECK_NOTHROW(sum(copy).backward());
  CHECK(equal(x.grad(), full<float>({3}, 2.f)));
  // A float tensor made from a double expression: its node is the cast's (by hand: d/da = 1 + 1, d/db = 2).
  auto da = tensor<double>({1.0, 2.0}).requires_grad_();
  auto db = tensor<double>({3.0, 4.0}).requires_grad_();
  Tensor<float> narrowed = da + db * 2.0;
  Tensor<float> narrowed_leaf = da;
  sum(narrowed + narrowed_leaf).backward();
  CHECK(equal(da.grad(), full<double>({2}, 2.0)));
  CHECK(equal(db.grad(), full<double>({2}, 2.0)));
  // Differentiated twice: u = x^2 (a fused node), s = 2u + u / 4 = 2.25 x^2, ds/dx = 4.5 x, d2s/dx2 = 4.5.
  auto p = tensor<double>({1.0, -2.0}).requires_grad_();
  Tensor<double> u = p * p;
  Tensor<double> s = 2.0 * u + u / 4.0;
  const auto first = autograd::grad({sum(s)}, {p}, {}, /*retain_graph=*/true, /*create_graph=*/true);
  CHECK(equal(first[0].detach(), tensor<double>({4.5, -9.0})));
  REQUIRE(first[0].requires_grad());
  const auto second = autograd::grad({sum(first[0])}, {p});
  CHECK(equal(second[0], full<double>({2}, 4.5)));
}

TEST_CASE("NoGradGuard, detach, and operations without a backward yet") {
  auto x = tensor<float>({1.f, 2.f}).requires_grad_();
  {
    NoGradGuard guard;
    CHECK(!is_grad_enabled());
    Tensor<float> y = x * 2.f;
    CHECK(!y.requires_grad());
  }
  CHECK(is_grad_enabled());
  const auto d = x.detach();
  CHECK(!d.requires_grad());
  CHECK(d.is_alias_of(x));
  Tensor<float> z = d * 3.f;
  CHECK(!z.requires_grad());
  // Refused rather than silently detached: addmm_ has no backward yet.
  auto acc = zeros<float>({2, 2});
  CHECK(error_of([&] { addmm_(acc, x.view({2, 1}), x.view({1, 2})); })
            .rfind("autograd does not record addmm_, and an input requires grad", 0) == 0);
  // Backward through an op without a derivative rule (every library op has
  // one; this one is the user's) fails, but only when a leaf below it needs a gradient.
  const auto c = tensor<float>({0.5f, 1.f});
  auto cube = [](const auto& e) { return Unary<Cube, std::remove_cvref_t<decltype(e)>>(e); };
  CHECK(error_of([&] { sum(cube(x) * 2.f).backward(); }).rfind("autograd has no derivative rule for 'cube'", 0) == 0);
  auto through_constant = sum(cube(c) * x);
  through_constant.backward();
  CHECK(x.grad().defined());
  // The same operations under NoGradGuard are fine.
  NoGradGuard guard;
  CHECK(addmm_(acc, x.view({2, 1}), x.view({1, 2})).sizes() == Shape{2, 2});
}

TEST_CASE("post-accumulate-grad hooks run once per backward, with .grad already accumulated") {
  auto w1 = tensor<float>({1.f, 2.f}).requires_grad_();
  auto w2 = tensor<float>({3.f, 4.f}).requires_grad_();
  auto x = tensor<float>({5.f, 6.f});
  std::vector<std::pair<int, Tensor<float>>> seen;  // (which, .grad when it ran)
  w1.register_post_accumulate_grad_hook([&](Tensor<float>& p) { seen.emplace_back(1, p.grad().clone()); });
  w2.register_post_accumulate_grad_hook([&](Tensor<float>& p) { seen.emplace_back(2, p.grad().clone()); });
  // w1 is used twice: its hook sees the sum of both contributions, once.
  // d/dw1 sum(w1 x + w1 * 3) = x + 3; d/dw2 sum(w2 x * 2) = 2x (by hand).
  Tensor<float> a = w1 * x;
  Tensor<float> b = w1 * 3.f + w2 * x * 2.f;
  sum(a + b).backward();
  REQUIRE(seen.size() == 2);
  for (const auto& [which, grad] : seen) {
    if (which == 1) CHECK(equal(grad, tensor<float>({8.f, 9.f})));
    else CHECK(equal(grad, tensor<float>({10.f, 12.f})));
  }
  // A second backward accumulates, and the hooks run again on the sum.
  seen.clear();
  sum(w2 * 1.f).backward();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].first == 2);
  CHECK(equal(seen[0].second, tensor<float>({11.f, 13.f})));
  CHECK(error_of([&] { a.register_post_accumulate_grad_hook([](Tensor<float>&) {}); }) ==
        "post accumulate grad hooks cannot be registered on non-leaf tensors");
  CHECK(error_of([&] { x.register_post_accumulate_grad_hook([](Tensor<float>&) {}); }) ==
        "cannot register a hook on a tensor that doesn't require gradient");
}

TEST_CASE("maximum and minimum split the gradient of ties in half, as PyTorch") {
  auto a = tensor<float>({1.f, 2.f, 3.f}).requires_grad_(), b = tensor<float>({2.f, 2.f, 1.f}).requires_grad_();
  sum(maximum(a, b)).backward();
  CHECK(equal(a.grad(), tensor<float>({0.f, 0.5f, 1.f})));
  CHECK(equal(b.grad(), tensor<float>({1.f, 0.5f, 0.f})));
  // Without create_graph the gradients have no history (the comparisons
  // inside the rule record nothing, with per-op autograd too).
  CHECK(!a.grad().requires_grad());
  CHECK(!b.grad().requires_grad());
}

TEST_CASE("a chain of 100k nodes: backward and destruction do not recurse") {
  auto x = tensor<float>({1.f}).requires_grad_();
  {
    Tensor<float> y = x * 1.f;
    for (int i = 0; i < 100000; ++i) y = y * 1.f;
    sum(y).backward();
  }  // the whole chain is freed here
  CHECK(x.grad().item() == 1.f);
}

TEST_CASE("memory: a 10-op chain on 2^22 floats keeps only x for backward" *
          doctest::skip(!detail::kFusedAutograd)) {  // per-op autograd keeps intermediates, as PyTorch does
  // PyTorch saves intermediates here (sin's input, exp's result, tanh's
  // result, ...); the fused node keeps the expression, whose only tensor is x.
  const std::size_t mib16 = std::size_t{16} << 20;
  const std::size_t base = cpu_large_bytes_in_use();
  auto x = randn<float>({int64_t{1} << 22}).requires_grad_();
  REQUIRE(cpu_large_bytes_in_use() - base == mib16);
  {
    Tensor<float> y = exp(sin(x) * 0.5f + 1.f) / (1.f + square(tanh(x))) - sqrt(abs(x) + 1.f) * x;
    CHECK(y.grad_fn_name() == "FusedBackward(sin,mul,add,exp,tanh,square,add,div,abs,add,sqrt,mul,sub)");
    CHECK(cpu_large_bytes_in_use() - base == 2 * mib16);  // x and y: nothing saved beside them
    y.backward(ones_like(y));
    CHECK(cpu_large_bytes_in_use() - base == 3 * mib16);  // and x.grad
  }
  CHECK(cpu_large_bytes_in_use() - base == 2 * mib16);  // y and its graph are gone
  // sum(chain) never materializes the chain at all.
  auto loss = sum(exp(sin(x) * 0.5f + 1.f) / (1.f + square(tanh(x))) - sqrt(abs(x) + 1.f) * x);
  CHECK(cpu_large_bytes_in_use() - base == 2 * mib16);
  loss.backward();
  CHECK(cpu_large_bytes_in_use() - base == 2 * mib16);  // the gradient accumulated into x.grad in place
}

TEST_CASE("hooks replace gradients; autograd::grad returns them without touching .grad") {
  auto x = tensor<float>({1.f, 2.f, 3.f}).requires_grad_();
  auto y = tensor<float>({4.f, 5.f, 6.f}).requires_grad_();
  // d/dx sum(x * y) = y, d/dy = x (by hand).
  const auto g = autograd::grad({sum(x * y)}, {x, y});
  CHECK(equal(g[0], y.detach()));
  CHECK(equal(g[1], x.detach()));
  CHECK(!x.grad().defined());
  CHECK(!y.grad().defined());
  // A hook on a non-leaf scales the gradient flowing through it; one on a leaf sees the result.
  Tensor<float> h = x * 2.f;
  h.register_hook([](const Tensor<float>& grad) { return Tensor<float>(grad * 10.f); });
  Tensor<float> seen;
  x.register_hook([&](const Tensor<float>& grad) {
    seen = grad.clone();
    return Tensor<float>();  // keep it
  });
  sum(h * h).backward();  // d/dh = 2h = 4x, times 10, times dh/dx = 2: 80x
  CHECK(equal(x.grad(), tensor<float>({80.f, 160.f, 240.f})));
  CHECK(equal(seen, x.grad()));
  CHECK(error_of([&] { h.register_hook([](const Tensor<float>&) { return zeros<float>({2}); }); sum(h).backward(); }) ==
        "hook changed the size of the gradient from [3] to [2]");
  CHECK(error_of([] { ones<float>({2}).register_hook([](const Tensor<float>& t) { return t; }); }) ==
        "cannot register a hook on a tensor that doesn't require gradient");
  // mutable_grad clears or replaces .grad.
  x.mutable_grad() = Tensor<float>();
  CHECK(!x.grad().defined());
  // Unused inputs: PyTorch's error, or an undefined gradient with allow_unused.
  auto w = tensor<float>({1.f}).requires_grad_();
  CHECK(error_of([&] { autograd::grad({sum(y * 1.f)}, {w}); }) ==
        "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this "
        "is the desired behavior.");
  const auto r = autograd::grad({sum(y * 3.f)}, {w, y}, {}, false, false, true);
  CHECK(!r[0].defined());
  CHECK(equal(r[1], full<float>({3}, 3.f)));
  // Several outputs with given gradients sum their contributions.
  const auto two = autograd::grad({Tensor<float>(y * 2.f), sum(y)}, {y}, {ones<float>({3}), ones<float>({})});
  CHECK(equal(two[0], full<float>({3}, 3.f)));
  CHECK(error_of([&] { autograd::grad({sum(y)}, {ones<float>({1})}); }) ==
        "One of the differentiated Tensors does not require grad");
}

TEST_CASE("versions: new tensors start at 0, every in-place write adds 1 (as in PyTorch)") {
  auto x = randn<float>({3});
  CHECK(x.storage()->version() == 0);
  CHECK(zeros<float>({2}).storage()->version() == 0);
  CHECK(Tensor<float>(x * 2.f).storage()->version() == 0);
  x.copy_(ones<float>({3}));
  CHECK(x.storage()->version() == 1);
  x += 1.f;
  x.uniform_(0, 1);
  CHECK(x.storage()->version() == 3);
}

TEST_CASE("a saved tensor whose storage is freed and refilled (sharded training's protocol)") {
  // w is saved by x * w; between forward and backward its storage is
  // resized to 0, as sharded data parallelism frees a block's parameters.
  auto x = tensor<float>({4.f, 5.f, 6.f}).requires_grad_();
  auto w = tensor<float>({1.f, 2.f, 3.f}).requires_grad_();
  const auto values = w.detach().clone();
  const std::size_t bytes = w.storage()->nbytes();
  auto y = sum(x * w);
  const auto refill = [&] {
    w.storage()->resize_(bytes);
    CHECK(w.storage()->awaiting_fill());
    NoGradGuard guard;
    w.copy_(values);
  };
  const std::string modified =
      "one of the variables needed for gradient computation has been modified by an inplace operation: "
      "[torch.FloatTensor [3]] is at version 1; expected version 0 instead. Hint: enable anomaly detection to find "
      "the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).";

  SUBCASE("resized down inside the step: backward cannot read it") {
    w.storage()->resize_(0);
    CHECK(error_of([&] { y.backward(); }) ==
          "setStorage: sizes [3], strides [1], storage offset 0, and itemsize 4 requiring a storage size of 12 are out "
          "of bounds for storage of size 0");
    CHECK_THROWS_AS(w.to_vector(), Error);  // reading it outside the protocol
  }
  SUBCASE("resized up and filled: not a modification, backward uses the restored values") {
    w.storage()->resize_(0);
    refill();
    CHECK(!w.storage()->awaiting_fill());
    CHECK(w.storage()->version() == 0);
    y.backward();
    CHECK(equal(x.grad(), values));
    CHECK(equal(w.grad(), tensor<float>({4.f, 5.f, 6.f})));
  }
  SUBCASE("resized up, used, resized down and up again: only a genuine write after the fill trips the check") {
    w.storage()->resize_(0);
    refill();
    y.backward({}, /*retain_graph=*/true);
    w.storage()->resize_(0);
    refill();
    y.backward({}, /*retain_graph=*/true);
    CHECK(equal(w.grad(), tensor<float>({8.f, 10.f, 12.f})));
    {
      NoGradGuard guard;
      w.mul_(2.f);  // a write after the fill is a modification
    }
    CHECK(error_of([&] { y.backward(); }) == modified);
  }
}

TEST_CASE("in-place writes into results are recorded (history rebased), as in PyTorch") {
  auto x = tensor<float>({1.f, -2.f, 3.f}).requires_grad_();
  // y = 2x; y += x (3x); y *= y (9x^2): d/dx sum = 18x (by hand).
  Tensor<float> y = x * 2.f;
  y += x;
  y *= y;
  CHECK(y.grad_fn_name() == "FusedBackward(mul)");
  sum(y).backward();
  CHECK(equal(x.grad(), tensor<float>({18.f, -36.f, 54.f})));
  // masked_fill_ on a result: the filled elements get no gradient.
  x.mutable_grad() = Tensor<float>();
  Tensor<float> z = x * 3.f;
  masked_fill_(z, x > 0.f, 0.f);
  sum(z).backward();
  CHECK(equal(x.grad(), tensor<float>({0.f, 3.f, 0.f})));
  // Writing an expression that requires grad into a plain tensor gives it history.
  x.mutable_grad() = Tensor<float>();
  auto buffer = zeros<float>({3});
  buffer.copy_(x * 2.f);
  CHECK(buffer.requires_grad());
  CHECK(!buffer.is_leaf());
  sum(buffer).backward();
  CHECK(equal(x.grad(), full<float>({3}, 2.f)));
  // A broadcast source: every row's gradient reaches the row vector.
  auto row = tensor<float>({1.f, 2.f}).requires_grad_();
  auto grid = zeros<float>({3, 2});
  grid.copy_(row * 1.f);
  sum(grid).backward();
  CHECK(equal(row.grad(), full<float>({2}, 3.f)));
  // A value saved for backward and then modified in place: PyTorch's error.
  Tensor<float> w = x * 2.f;
  auto saved = sum(w * w);
  w += 1.f;
  CHECK(error_of([&] { saved.backward(); }).rfind("one of the variables needed for gradient computation has been "
                                                  "modified by an inplace operation", 0) == 0);
  // Leaves that require grad: PyTorch's error.
  CHECK(error_of([&] { x += 1.f; }) == "a leaf Variable that requires grad is being used in an in-place operation.");
}

TEST_CASE("in-place writes into views rebase the base's history (CopySlices), as in PyTorch") {
  // Each case against PyTorch 1.13's gradients (tools/make_golden.py: autograd_inplace_views).
  const auto in = [](const std::string& name, int i) {
    return test::golden<float>("agv_" + name + "_in" + std::to_string(i)).requires_grad_();
  };
  const auto check = [](const std::string& name, const Tensor<float>& out, std::vector<Tensor<float>> inputs) {
    CAPTURE(name);
    out.backward();
    check_close(out, test::golden("agv_" + name + "_out"), 1e-5, 1e-6, name + " forward");
    for (std::size_t i = 0; i < inputs.size(); ++i)
      check_close(inputs[i].grad(), test::golden("agv_" + name + "_grad" + std::to_string(i)), 1e-5, 1e-6,
                  name + " grad " + std::to_string(i));
  };
  {  // a slice of a result, added into
    auto x = in("slice_add", 0), w = in("slice_add", 1);
    Tensor<float> y = x * 2.f;
    y.slice(0, 1, 3) += w * 3.f;
    CHECK(y.grad_fn_name() == "CopySlices");
    check("slice_add", sum(y * y), {x, w});
  }
  {  // a buffer that needs no grad, written with values that do
    auto x = in("into_plain", 0);
    auto buf = zeros<float>({6});
    buf.slice(0, 0, 3).copy_(x);
    buf.slice(0, 3, 6) = x * x;
    CHECK(buf.requires_grad());
    check("into_plain", sum(buf * arange<float>(0, 6)), {x});
  }
  {  // a sibling view read after another one was written
    auto x = in("siblings", 0);
    Tensor<float> y = x.clone();
    Tensor<float> a = y.select(0, 0), b = y.slice(0, 1, 3);
    b.mul_(2.f);
    check("siblings", Tensor<float>(sum(a * 3.f)) + sum(y * y), {x});
  }
  {  // select of a transposed view, filled with a constant
    auto x = in("transposed_select", 0);
    Tensor<float> y = x * 1.f;
    y.t().select(0, 1).fill_(0.f);
    check("transposed_select", sum(exp(y)), {x});
  }
  {  // the base written while a view of it lives: the view sees the new history
    auto x = in("base_with_views", 0);
    Tensor<float> y = x * 2.f;
    Tensor<float> v = y.slice(0, 0, 2);
    y += x * x;
    check("base_with_views", Tensor<float>(sum(v * v)) + sum(y), {x});
  }
  {  // a view of a view
    auto x = in("nested", 0), w = in("nested", 1);
    Tensor<float> y = sin(x);
    y.slice(0, 1, 4).slice(0, 0, 2).mul_(w);
    check("nested", sum(y * arange<float>(1, 5)), {x, w});
  }
  {
    auto x = in("masked", 0);
    Tensor<float> y = x * 3.f;
    Tensor<float> column = y.select(1, 0);
    masked_fill_(column, column > 0.f, 0.5f);
    check("masked", sum(y * y), {x});
  }
  {  // the written value reads the view itself and an overlapping sibling (old values)
    auto x = in("reads_itself", 0);
    Tensor<float> y = x + 1.f;
    y.slice(0, 1, 3) = y.slice(0, 1, 3) * 2.f + y.slice(0, 0, 2);
    check("reads_itself", sum(y * arange<float>(1, 5)), {x});
  }
  // A view of a leaf that requires grad: PyTorch's error.
  auto leaf = tensor<float>({1.f, 2.f}).requires_grad_();
  CHECK(error_of([&] { leaf.slice(0, 0, 1) += 1.f; }) ==
        "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  // A view made under NoGradGuard and written with grad mode on: PyTorch's error.
  auto plain = zeros<float>({4});
  Tensor<float> quiet_view = [&] {
    NoGradGuard no_grad;
    return plain.slice(0, 0, 2);
  }();
  CHECK(error_of([&] { quiet_view.copy_(leaf * 2.f); }).rfind("A view was created in no_grad mode", 0) == 0);
  // gradcheck through a write into a view (double).
  CHECK(autograd::gradcheck(
      [](const std::vector<Tensor<double>>& v) {
        Tensor<double> y = v[0] * v[0];
        y.slice(1, 1, 3) *= v[1];
        y.select(0, 0).slice(0, 0, 2) += sin(v[1].select(0, 1));
        // Reads the overwritten view and an overlapping sibling (PyTorch fails at backward here).
        y.slice(1, 1, 3) = y.slice(1, 1, 3) * y.slice(1, 0, 2);
        return Tensor<double>(y * 1.0);
      },
      {rand<double>({3, 4}), rand<double>({3, 2})}));
}

TEST_CASE("overlapping views add their elements' gradients; sum_to_size sums a broadcast back") {
  using V = std::vector<Tensor<double>>;
  const std::vector<std::pair<std::string, std::function<Tensor<double>(const V&)>>> cases = {
      {"unfold_step1", [](const V& v) { return v[0].unfold(1, 2, 1); }},
      {"unfold_dim0", [](const V& v) { return v[0].unfold(0, 2, 1); }},
      {"unfold_gap", [](const V& v) { return v[0].unfold(-1, 2, 3); }},
      {"unfold_whole", [](const V& v) { return v[0].unfold(1, 5, 1); }},
      {"strided_overlap", [](const V& v) { return v[0].as_strided({4, 3}, {1, 1}, 2); }},
      {"strided_two_dims", [](const V& v) { return v[0].as_strided({2, 3, 3}, {3, 2, 1}, 1); }},
      {"sum_to_size", [](const V& v) { return v[0].reshape({3, 1, 5}).expand({2, 3, 4, 5}).sum_to_size({3, 1, 5}); }},
      {"sum_to_size_lead", [](const V& v) { return v[0].sum_to_size({1, 5}); }},
  };
  for (const auto& [name, f] : cases) test::check_forward_backward<double>("vo_" + name, 1, f, 1e-12);
  // Second order through an overlapping view: d/dx of sum(g * g), g = x's
  // first gradient = 2 * (number of windows holding each element) * x,
  // counts 1 2 2 1 for windows of 2 over 4 elements (by hand).
  auto x = tensor<double>({1, 2, 3, 4}).requires_grad_();
  Tensor<double> w = x.unfold(0, 2, 1);
  const auto g = autograd::grad({sum(w * w)}, {x}, {}, false, /*create_graph=*/true);
  CHECK(equal(g[0], tensor<double>({2, 8, 12, 8})));
  const auto gg = autograd::grad({sum(g[0] * g[0])}, {x});
  CHECK(equal(gg[0], tensor<double>({8, 64, 96, 32})));  // 2 * g * dg/dx = 2 * (2cx) * 2c
}

TEST_CASE("retain_grad keeps a non-leaf's gradient, as hooks before it leave it") {
  auto a = test::golden<double>("vo_rg_a").requires_grad_();
  Tensor<double> b = a * 2.;
  b.register_hook([](const Tensor<double>& t) { return Tensor<double>(t * 10.); });
  b.retain_grad();
  CHECK(b.retains_grad());
  Tensor<double> c = sin(b);
  c.retain_grad();
  c.retain_grad();  // once is enough: the gradient is not kept twice
  c.register_hook([](const Tensor<double>& t) { return Tensor<double>(t * 3.); });
  sum(c * c).backward();
  check_close(b.grad(), test::golden("vo_rg_b_grad"), 1e-12, 1e-12, "b.grad");
  check_close(c.grad(), test::golden("vo_rg_c_grad"), 1e-12, 1e-12, "c.grad");
  check_close(a.grad(), test::golden("vo_rg_a_grad"), 1e-12, 1e-12, "a.grad");
  CHECK_FALSE(a.retains_grad());
  a.retain_grad();  // a leaf keeps its gradient anyway
  CHECK_FALSE(a.retains_grad());
  CHECK(error_of([] { ones<float>({2}).retain_grad(); }) == "can't retain_grad on Tensor that has requires_grad=False");

  // Written in place after retain_grad: the gradient kept is the new value's.
  a.mutable_grad() = Tensor<double>();
  Tensor<double> d = a * 2.;
  d.retain_grad();
  d.add_(a * a);
  CHECK(d.retains_grad());
  sum(d * a).backward();
  check_close(d.grad(), test::golden("vo_rg_inplace_grad"), 1e-12, 1e-12, "in-place d.grad");
  check_close(a.grad(), test::golden("vo_rg_inplace_a_grad"), 1e-12, 1e-12, "in-place a.grad");

  // Two backwards accumulate, as into a leaf's .grad.
  Tensor<double> e = exp(a);
  e.retain_grad();
  const auto f = sum(e * e);
  f.backward({}, /*retain_graph=*/true);
  f.backward();
  check_close(e.grad(), test::golden("vo_rg_twice_grad"), 1e-12, 1e-12, "accumulated e.grad");
}
