// autograd::gradcheck: compares the Jacobian autograd computes with central
// differences, in double, element by element (PyTorch's gradcheck).
#pragma once
#include <cmath>
#include <sstream>
#include <vector>

#include "../factories.hpp"
#include "../shape_ops.hpp"
#include "tensor_autograd.hpp"

namespace tsr::autograd {

// f maps the inputs to one tensor; each input gets requires_grad. Returns
// true when every Jacobian entry agrees within atol + rtol * |numerical|;
// otherwise throws tsr::Error naming the first entry that does not.
template <class F>
bool gradcheck(F f, std::vector<Tensor<double>> inputs, double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3) {
  for (auto& x : inputs) x = x.detach().clone().requires_grad_();
  const Tensor<double> out = f(inputs);
  const int64_t m = out.numel();
  // Analytic: row r of every input's Jacobian from a backward of the one-hot gradient e_r.
  std::vector<std::vector<double>> analytic(inputs.size());
  for (int64_t r = 0; r < m; ++r) {
    for (auto& x : inputs) x.mutable_grad() = Tensor<double>();
    auto onehot = zeros<double>(out.sizes());
    onehot.data_ptr()[r] = 1;
    if (out.requires_grad()) out.backward(onehot, /*retain_graph=*/true);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const Tensor<double> g = inputs[i].grad();
      for (int64_t j = 0; j < inputs[i].numel(); ++j) analytic[i].push_back(g.defined() ? g.contiguous().data_ptr()[j] : 0.0);
    }
  }
  // Numerical: column j from (f(x + eps e_j) - f(x - eps e_j)) / 2 eps, without recording.
  NoGradGuard no_grad;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    double* p = inputs[i].data_ptr();
    const int64_t n = inputs[i].numel();
    for (int64_t j = 0; j < n; ++j) {
      const double saved = p[j];
      p[j] = saved + eps;
      const Tensor<double> plus = f(inputs).contiguous();
      p[j] = saved - eps;
      const Tensor<double> minus = f(inputs).contiguous();
      p[j] = saved;
      for (int64_t r = 0; r < m; ++r) {
        const double num = (plus.data_ptr()[r] - minus.data_ptr()[r]) / (2 * eps);
        const double ana = analytic[i][static_cast<std::size_t>(r * n + j)];
        if (!(std::abs(num - ana) <= atol + rtol * std::abs(num))) {
          std::ostringstream os;
          os << "Jacobian mismatch for output 0 with respect to input " << i << ", element (" << r << ", " << j
             << "): numerical " << num << ", analytical " << ana;
          throw Error(os.str());
        }
      }
    }
  }
  return true;
}

// The second derivatives (PyTorch's gradgradcheck): gradcheck of the map
// (inputs, v) -> the gradients of <f(inputs), v> with respect to the inputs,
// computed with create_graph, for a fixed random v of f's output shape
// (itself an input, so the gradients' dependence on v is checked too).
template <class F>
bool gradgradcheck(F f, std::vector<Tensor<double>> inputs, double eps = 1e-6, double atol = 1e-5,
                   double rtol = 1e-3) {
  Shape out_shape;
  {
    NoGradGuard no_grad;
    out_shape = f(inputs).sizes();
  }
  inputs.push_back(randn<double>(out_shape));
  auto first_derivatives = [&f](const std::vector<Tensor<double>>& xv) {
    const tsr::detail::GradModeGuard grad_mode(true);  // gradcheck evaluates it under no_grad too
    std::vector<Tensor<double>> xs(xv.begin(), xv.end() - 1);
    const Tensor<double> y = f(xs);
    std::vector<Tensor<double>> gs = grad({y}, xs, {xv.back()}, /*retain_graph=*/true, /*create_graph=*/true,
                                          /*allow_unused=*/true);
    for (std::size_t i = 0; i < gs.size(); ++i)
      gs[i] = gs[i].defined() ? gs[i].reshape({-1}) : zeros<double>({xs[i].numel()});
    return cat(gs, 0);
  };
  return gradcheck(first_derivatives, std::move(inputs), eps, atol, rtol);
}

}  // namespace tsr::autograd
