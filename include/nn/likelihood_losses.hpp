// Negative log-likelihood losses of count and real-valued targets:
// poisson_nll_loss and gaussian_nll_loss, functional and as modules, with
// PyTorch 1.13's formulas, reductions and errors.
#pragma once
#include <numbers>
#include <string>

#include "loss.hpp"

namespace tsr::nn {

struct PoissonNLLLossOptions : LossOptionsBase<PoissonNLLLossOptions> {
  PoissonNLLLossOptions& log_input(bool v) {
    log_input_ = v;
    return *this;
  }
  PoissonNLLLossOptions& full(bool v) {
    full_ = v;
    return *this;
  }
  PoissonNLLLossOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  bool log_input() const { return log_input_; }
  bool full() const { return full_; }
  double eps() const { return eps_; }

 private:
  bool log_input_ = true, full_ = false;
  double eps_ = 1e-8;
};
struct GaussianNLLLossOptions : LossOptionsBase<GaussianNLLLossOptions> {
  GaussianNLLLossOptions& full(bool v) {
    full_ = v;
    return *this;
  }
  GaussianNLLLossOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  bool full() const { return full_; }
  double eps() const { return eps_; }

 private:
  bool full_ = false;
  double eps_ = 1e-6;
};

namespace functional {
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
using GaussianNLLLossFuncOptions = GaussianNLLLossOptions;

// exp(input) - target * input (log_input), or input - target * log(input +
// eps); with full, Stirling's term target log target - target +
// log(2 pi target) / 2 where target > 1.
template <detail::FloatElement T>
Tensor<T> poisson_nll_loss(const Tensor<T>& input, const Tensor<T>& target, const PoissonNLLLossOptions& o = {}) {
  Tensor<T> loss = o.log_input() ? Tensor<T>(exp(input) - target * input)
                                 : Tensor<T>(input - target * log(input + T(o.eps())));
  if (o.full()) {
    const auto stirling = target * log(target) - target + T(0.5) * log(T(2 * std::numbers::pi) * target);
    loss = loss + where(target > T(1), stirling, T(0));
  }
  return detail::reduce_loss<T>(loss, o.reduction());
}

// (log var + (input - target)^2 / var) / 2 (plus log(2 pi) / 2 with full)
// for predicted means and variances; var has input's shape, or one dim
// fewer, or 1 in the last (one variance for the row). Variances below eps
// count as eps, with the gradient passing as if they did not (PyTorch's
// clamp under no_grad).
template <detail::FloatElement T>
Tensor<T> gaussian_nll_loss(const Tensor<T>& input, const Tensor<T>& target, const Tensor<T>& var,
                            const GaussianNLLLossOptions& o = {}) {
  Tensor<T> v = var;
  if (var.sizes() != input.sizes()) {
    const Shape leading(input.sizes().begin(), input.sizes().end() - (input.dim() > 0 ? 1 : 0));
    if (input.dim() > 0 && var.sizes() == leading) {
      v = var.unsqueeze(-1);  // one variance per row (homoscedastic)
    } else {
      const bool per_row = input.dim() > 0 && var.dim() == input.dim() && var.size(-1) == 1 &&
                           Shape(var.sizes().begin(), var.sizes().end() - 1) == leading;
      detail::check<ValueError>(per_row, "var is of incorrect size");
    }
  }
  detail::check<ValueError>(!any(v.detach() < T(0)).item(), "var has negative entry/entries");
  v = v.clone();
  {
    NoGradGuard no_grad;
    v.clamp_(T(o.eps()), std::numeric_limits<T>::infinity());
  }
  Tensor<T> loss = T(0.5) * (log(v) + square(input - target) / v);
  if (o.full()) loss = loss + T(0.5 * std::log(2 * std::numbers::pi));
  return detail::reduce_loss<T>(loss, o.reduction());
}

}  // namespace functional

class PoissonNLLLossImpl : public LossImpl<PoissonNLLLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "PoissonNLLLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target) const {
    return F::poisson_nll_loss(input, target, options);
  }
};
using PoissonNLLLoss = ModuleHolder<PoissonNLLLossImpl>;
class GaussianNLLLossImpl : public LossImpl<GaussianNLLLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "GaussianNLLLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target, const Tensor<T>& var) const {
    return F::gaussian_nll_loss(input, target, var, options);
  }
};
using GaussianNLLLoss = ModuleHolder<GaussianNLLLossImpl>;

}  // namespace tsr::nn
