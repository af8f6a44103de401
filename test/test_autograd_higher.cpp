// Autograd, higher order: create_graph records the backward pass, so the
// gradients it returns can be differentiated again. Second derivatives are
// compared with PyTorch 1.13's (tools/make_golden.py:
// autograd_second_order) and with central differences of the first
// derivatives (autograd::gradgradcheck).
#include "common.hpp"

using namespace tsr;
using test::check_close;
using test::error_of;
using V = std::vector<Tensor<double>>;

namespace {

Tensor<double> golden(const std::string& name) { return test::golden<double>("ag2_" + name); }

void gradgradcheck_ok(const std::string& what, const std::function<Tensor<double>(const V&)>& f, V in) {
  INFO(what);
  CHECK(autograd::gradgradcheck(f, std::move(in)));
}

// Checks f's gradient and Hessian-vector product at case `name`'s inputs
// against PyTorch's.
void check_hvp(const std::string& name, int inputs, const std::function<Tensor<double>(const V&)>& f) {
  V xs, vs;
  for (int i = 0; i < inputs; ++i) {
    xs.push_back(golden(name + "_in" + std::to_string(i)).requires_grad_());
    vs.push_back(golden(name + "_v" + std::to_string(i)));
  }
  const Tensor<double> out = f(xs);
  const V grads = autograd::grad({out}, xs, {}, false, /*create_graph=*/true);
  Tensor<double> dot = zeros<double>({});
  for (int i = 0; i < inputs; ++i) {
    check_close(grads[static_cast<std::size_t>(i)], golden(name + "_grad" + std::to_string(i)), 1e-10, 1e-12,
                name + " grad " + std::to_string(i));
    dot = dot + sum(grads[static_cast<std::size_t>(i)] * vs[static_cast<std::size_t>(i)]);
  }
  const V hvp = autograd::grad({dot}, xs, {}, false, false, /*allow_unused=*/true);
  for (int i = 0; i < inputs; ++i) {
    const Tensor<double>& h = hvp[static_cast<std::size_t>(i)];
    check_close(h.defined() ? h : zeros_like(xs[static_cast<std::size_t>(i)]),
                golden(name + "_hvp" + std::to_string(i)), 1e-9, 1e-11, name + " hvp " + std::to_string(i));
  }
}

}  // namespace

TEST_CASE("create_graph: the gradient has a history, and .grad keeps it") {
  // y = sum(x^3): dy/dx = 3x^2, d/dx sum(3x^2) = 6x (by hand).
  auto x = tensor<double>({1.0, -2.0, 0.5}).requires_grad_();
  Tensor<double> y = sum(x * x * x);
  y.backward({}, false, /*create_graph=*/true);
  REQUIRE(x.grad().requires_grad());
  CHECK_FALSE(x.grad().grad_fn_name().empty());
  check_close(x.grad(), tensor<double>({3.0, 12.0, 0.75}), 0, 0, "first derivative");
  // A second backward adds the second derivative into .grad (PyTorch does the same).
  sum(x.grad()).backward();
  check_close(x.grad(), tensor<double>({3.0 + 6.0, 12.0 - 12.0, 0.75 + 3.0}), 0, 0, ".grad after the second backward");
  x.mutable_grad() = Tensor<double>();  // breaks the cycle through .grad's history (next case)

  // Third order through autograd::grad: d3/dx3 sin(x) = -cos(x).
  auto z = tensor<double>({0.3, 1.1}).requires_grad_();
  auto g1 = autograd::grad({sum(sin(z))}, {z}, {}, false, true)[0];
  auto g2 = autograd::grad({sum(g1)}, {z}, {}, false, true)[0];
  auto g3 = autograd::grad({sum(g2)}, {z})[0];
  check_close(g2, Tensor<double>(-sin(z.detach())), 1e-15, 0, "second derivative of sin");
  check_close(g3, Tensor<double>(-cos(z.detach())), 1e-15, 0, "third derivative of sin");
  CHECK_FALSE(g3.requires_grad());  // made without create_graph

  // Without create_graph nothing is recorded, as before.
  auto w = tensor<double>({2.0}).requires_grad_();
  CHECK_FALSE(autograd::grad({sum(w * w)}, {w})[0].requires_grad());
  // A linear function's gradient does not depend on x: no history, and
  // differentiating it again is PyTorch's error.
  auto lin = autograd::grad({sum(w * 3.0)}, {w}, {}, false, true)[0];
  CHECK_FALSE(lin.requires_grad());
  CHECK(error_of([&] { (void)autograd::grad({sum(lin)}, {w}); }) ==
        "element 0 of tensors does not require grad and does not have a grad_fn");
}

TEST_CASE("create_graph: resetting .grad breaks the leaf's reference cycle") {
  // As in PyTorch, the .grad of a create_graph backward has a history that
  // holds the leaf (its saved values and its accumulator), and the leaf
  // holds .grad. Resetting .grad, as PyTorch's warning advises, frees both.
  std::weak_ptr<TensorImpl> leaf;
  {
    auto x = tensor<double>({1.0, 2.0}).requires_grad_();
    leaf = x.impl_ptr();
    sum(x * x * x).backward({}, false, /*create_graph=*/true);
    REQUIRE(x.grad().requires_grad());
    x.mutable_grad() = Tensor<double>();
  }
  CHECK(leaf.expired());
}

TEST_CASE("create_graph: Hessian-vector products match PyTorch") {
  check_hvp("elementwise", 2, [](const V& v) {
    const auto &x = v[0], &y = v[1];
    return sum(sin(x) * y + tanh(x * y) + exp(-x * x) / y + sqrt(y) * sigmoid(x));
  });
  check_hvp("pow_where", 2, [](const V& v) {
    const auto &x = v[0], &y = v[1];
    return sum(where(x > 0.0, pow(x, 3), pow(y, x)) + square(maximum(x, y)) + abs(x) * y);
  });
  check_hvp("reductions", 1, [](const V& v) {
    const auto& x = v[0];
    return Tensor<double>(sum(var(x, {1}) * sum(tsr::std(x, {0}))) + sum(logsumexp(x, {1})) + prod(norm(x, 2, {1})) +
                          sum(square(amax(x, {1}))));
  });
  check_hvp("softmax", 1, [](const V& v) {
    const auto& x = v[0];
    return Tensor<double>(sum(softmax(x, 1) * log_softmax(x * 2.0, 0)) + sum(square(mean(x, {0}))));
  });
  check_hvp("matmul", 3, [](const V& v) {
    const auto &a = v[0], &b = v[1], &c = v[2];
    const Tensor<double> at_a = matmul(a.t(), a);
    return Tensor<double>(sum(square(tanh(matmul(a, b) + c))) + sum(diagonal(at_a)) * sum(matmul(b, c)));
  });
  check_hvp("views_and_shapes", 1, [](const V& v) {
    const auto& x = v[0];
    const Tensor<double> catted = cat({x.t(), Tensor<double>(x.slice(0, 1, 3).t() * 2.0)}, 1);
    const Tensor<double> weights = arange<double>(1.0, 7.0);
    return Tensor<double>(sum(sum(square(catted), {0}) * weights) + sum(cumsum(exp(x.reshape({2, 6})), 1)) +
                          sum(cumprod(x, 0)) + sum(pow(index_select(x, 0, tensor<int64_t>({2, 0, 2})), 3)) +
                          sum(square(gather(x, 1, tensor<int64_t>({0, 2, 1, 1, 2, 0, 0, 0}, {4, 2})))) +
                          sum(pow(std::get<0>(max(x, 1)), 3)) + sum(square(std::get<0>(sort(x, 1)).select(1, 0))) +
                          sum(square(x.unsqueeze(0).expand({2, 4, 3}))));
  });
  const Tensor<double> x = golden("mlp_x"), onehot = golden("mlp_onehot");
  check_hvp("mlp", 4, [&](const V& v) {
    const Tensor<double> h = tanh(linear(x, v[0], v[1]));
    return Tensor<double>(-mean(sum(log_softmax(linear(h, v[2], v[3]), 1) * onehot, {1})));
  });
}

TEST_CASE("create_graph: a gradient penalty trains like PyTorch's") {
  auto x = golden("gp_x").requires_grad_();
  auto w1 = golden("gp_w1").requires_grad_(), b1 = golden("gp_b1").requires_grad_(),
       w2 = golden("gp_w2").requires_grad_();
  const Tensor<double> d = sum(relu(linear(x, w1, b1)) * w2, {1});
  const Tensor<double> dx = autograd::grad({sum(d)}, {x}, {}, false, /*create_graph=*/true)[0];
  const Tensor<double> gp = mean(square(norm(dx, 2, {1}) - 1.0));
  check_close(gp, golden("gp_out"), 1e-12, 0, "penalty");
  gp.backward();
  check_close(x.grad(), golden("gp_grad_x"), 1e-10, 1e-12, "x");
  check_close(w1.grad(), golden("gp_grad_w1"), 1e-10, 1e-12, "w1");
  check_close(b1.grad(), golden("gp_grad_b1"), 1e-10, 1e-12, "b1");
  check_close(w2.grad(), golden("gp_grad_w2"), 1e-10, 1e-12, "w2");
}

TEST_CASE("gradgradcheck: second derivatives of the elementwise rules") {
  manual_seed(5);
  const Tensor<double> a = randn<double>({3, 4});
  const Tensor<double> b = abs(randn<double>({4})) + 0.5;
  const Tensor<double> u = tanh(a) * 0.9;  // inside (-1, 1)
  gradgradcheck_ok("arithmetic", [](const V& v) { return Tensor<double>(v[0] * v[1] - v[0] / v[1] + square(v[0])); },
                   {a, b});
  gradgradcheck_ok("exp, log, sqrt, rsqrt", [](const V& v) {
    return Tensor<double>(exp(v[0]) * log(v[1]) + sqrt(v[1]) * rsqrt(v[1]) + reciprocal(v[1]) + log1p(v[1]) + expm1(v[0]));
  }, {a, b});
  gradgradcheck_ok("trigonometric", [](const V& v) {
    return Tensor<double>(sin(v[0]) * cos(v[0]) + tan(v[0] * 0.5) + atan(v[0]) + sinh(v[0]) + cosh(v[0]));
  }, {a});
  gradgradcheck_ok("inverse trigonometric",
                   [](const V& v) { return Tensor<double>(asin(v[0]) + acos(v[0]) + atanh(v[0]) + asinh(v[0])); }, {u});
  gradgradcheck_ok("activations", [](const V& v) {
    return Tensor<double>(tanh(v[0]) * sigmoid(v[0]) + silu(v[0]) + softplus(v[0] * 3.0) + gelu(v[0]) + erf(v[0]));
  }, {a});
  gradgradcheck_ok("piecewise", [](const V& v) {
    return Tensor<double>(relu(v[0]) * v[0] + abs(v[0]) * v[1] + where(v[0] > 0.0, v[0] * v[1], exp(v[0])) +
                          clamp(v[0], -0.5, 0.5) * v[0]);
  }, {a, b});
  gradgradcheck_ok("pow", [](const V& v) {
    return Tensor<double>(pow(v[1], 2.5) + pow(v[0], 3) + pow(v[1], v[0]) + atan2(v[0], v[1]));
  }, {a, b});
  gradgradcheck_ok("maximum, minimum", [](const V& v) { return Tensor<double>(maximum(v[0], v[1]) * minimum(v[0], v[1])); },
                   {a, b});
}

TEST_CASE("gradgradcheck: reductions, products, views and indexing") {
  manual_seed(6);
  const Tensor<double> a = randn<double>({3, 4}), m = randn<double>({4, 2}), r = randn<double>({3});
  const Tensor<double> p = abs(randn<double>({2, 3})) + 0.5;
  gradgradcheck_ok("sum and mean of expressions",
                   [](const V& v) { return Tensor<double>(square(sum(sin(v[0]), {1})) + mean(v[0] * v[0])); }, {a});
  gradgradcheck_ok("var and std", [](const V& v) { return Tensor<double>(var(v[0], {1}) * tsr::std(v[0], {1})); }, {a});
  gradgradcheck_ok("norms", [](const V& v) { return Tensor<double>(norm(v[0], 2, {1}) + norm(v[0], 3, {1})); }, {a});
  gradgradcheck_ok("logsumexp", [](const V& v) { return logsumexp(v[0] * 2.0, {0}); }, {a});
  gradgradcheck_ok("softmax", [](const V& v) { return softmax(v[0], 1); }, {a});
  gradgradcheck_ok("log_softmax", [](const V& v) { return log_softmax(v[0], 0); }, {a});
  gradgradcheck_ok("amax and max along a dim", [](const V& v) {
    return Tensor<double>(square(amax(v[0], {1})) + square(std::get<0>(max(v[0], 1))));
  }, {a});
  gradgradcheck_ok("prod", [](const V& v) { return prod(v[0], {1}); }, {p});
  gradgradcheck_ok("cumsum and cumprod", [](const V& v) { return Tensor<double>(cumsum(v[0], 1) * cumprod(v[0], 1)); },
                   {p});
  gradgradcheck_ok("matmul", [](const V& v) { return matmul(tanh(v[0]), v[1]); }, {a, m});
  gradgradcheck_ok("matmul of a transposed view and a vector", [](const V& v) { return matmul(v[0].t(), v[1]); },
                   {a, r});
  gradgradcheck_ok("addmm", [](const V& v) { return addmm(v[2], square(v[0]), v[1], 0.5, 2.0); },
                   {a, m, randn<double>({1, 2})});
  gradgradcheck_ok("views", [](const V& v) {
    return Tensor<double>(square(v[0].t().slice(0, 1, 3)) * v[0].select(0, 1).slice(0, 0, 2).unsqueeze(1));
  }, {a});
  gradgradcheck_ok("a strided view's general backward", [](const V& v) {
    return Tensor<double>(square(v[0].slice(1, 0, 4, 2).expand({2, 3, 2})));
  }, {a});
  gradgradcheck_ok("cat, stack, flip, roll, repeat", [](const V& v) {
    const Tensor<double> s = square(v[0]);
    return Tensor<double>(cat({s, v[0]}, 0) * stack({flip(s, {1}), roll(s, {1}, {0})}, 0).reshape({6, 4}) +
                          repeat(v[0], {2, 1}));
  }, {a});
  gradgradcheck_ok("index_select, gather, sort, masked_select", [](const V& v) {
    const Tensor<double> s = square(v[0]);
    return Tensor<double>(sum(index_select(s, 1, tensor<int64_t>({3, 0, 3}))) +
                          sum(gather(s, 0, tensor<int64_t>({2, 1, 0, 0}, {1, 4}))) * sum(std::get<0>(sort(s, 1))) +
                          sum(masked_select(s, v[0] > 0.0)));
  }, {a});
  gradgradcheck_ok("an in-place write into a view (CopySlices)", [](const V& v) {
    Tensor<double> y = v[0] * 2.0;
    y.slice(0, 1, 3) *= v[0].slice(0, 0, 2);
    return Tensor<double>(square(y));
  }, {a});
}

TEST_CASE("create_graph: what stays out of reach is an error, not a wrong answer") {
  auto x = tensor<double>({1.0, 0.0, 2.0}).requires_grad_();
  // cumprod's recorded backward handles inputs without zeros only.
  CHECK(error_of([&] { (void)autograd::grad({sum(cumprod(x, 0))}, {x}, {}, false, true); }) ==
        "create_graph through cumprod is supported only for inputs without zeros");
  // The same without create_graph is fine (PyTorch's zero handling).
  check_close(autograd::grad({sum(cumprod(x, 0))}, {x})[0], tensor<double>({1.0, 3.0, 0.0}), 0, 0, "cumprod");
}
