// Adam and AdamW, as torch.optim.Adam / AdamW (PyTorch 1.13), amsgrad and
// maximize included. They differ only in weight decay: Adam adds
// weight_decay * p to the gradient (L2), AdamW shrinks p by
// (1 - lr * weight_decay) before the step (decoupled):
//   m = beta1 * m + (1 - beta1) * g,   v = beta2 * v + (1 - beta2) * g * g
//   v_max = max(v_max, v) (amsgrad)
//   p -= lr / (1 - beta1^t) * m / (sqrt(v or v_max) / sqrt(1 - beta2^t) + eps)
#pragma once
#include <cmath>

#include "sgd.hpp"  // detail::check_option

namespace tsr::optim {

namespace detail {
// The options Adam and AdamW share; only weight decay's default differs.
template <class Derived>
struct AdamOptionsBase : OptimizerCloneableOptions<Derived> {
  explicit AdamOptionsBase(double lr, double weight_decay) : lr_(lr), weight_decay_(weight_decay) {}
  Derived& lr(double v) { lr_ = v; return self(); }
  double lr() const { return lr_; }
  Derived& betas(const std::tuple<double, double>& v) { betas_ = v; return self(); }
  const std::tuple<double, double>& betas() const { return betas_; }
  Derived& eps(double v) { eps_ = v; return self(); }
  double eps() const { return eps_; }
  Derived& weight_decay(double v) { weight_decay_ = v; return self(); }
  double weight_decay() const { return weight_decay_; }
  Derived& amsgrad(bool v) { amsgrad_ = v; return self(); }
  bool amsgrad() const { return amsgrad_; }
  Derived& maximize(bool v) { maximize_ = v; return self(); }
  bool maximize() const { return maximize_; }

  static constexpr auto fields() {
    using O = AdamOptionsBase;
    return std::tuple{field("lr", &O::lr_), field("betas", &O::betas_), field("eps", &O::eps_),
                      field("weight_decay", &O::weight_decay_), field("amsgrad", &O::amsgrad_),
                      field("maximize", &O::maximize_)};
  }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8;
  double weight_decay_;
  bool amsgrad_ = false;
  bool maximize_ = false;
};
}  // namespace detail

struct AdamOptions : detail::AdamOptionsBase<AdamOptions> {
  AdamOptions(double lr = 1e-3) : AdamOptionsBase(lr, 0.0) {}  // NOLINT: as libtorch's
};
struct AdamWOptions : detail::AdamOptionsBase<AdamWOptions> {
  AdamWOptions(double lr = 1e-3) : AdamOptionsBase(lr, 1e-2) {}  // NOLINT: as libtorch's
};

namespace detail {
// The whole step for one element (or one SIMD batch): (param, exp_avg,
// exp_avg_sq, grad), or with amsgrad (param, exp_avg, exp_avg_sq,
// max_exp_avg_sq, grad).
template <class T>
struct AdamStep {
  RewrittenGradient<T> rewritten;
  T shrink;  // AdamW's decoupled decay; 1 for Adam
  T b1, b2, one_minus_b1, one_minus_b2, bc2_sqrt, eps, neg_step_size;

  template <class B>
  TSR_HOST_DEVICE void operator()(B& param, B& m, B& v, const B& grad) const {
    moments(param, m, v, grad);
    apply(param, m, v);
  }
  template <class B>
  TSR_HOST_DEVICE void operator()(B& param, B& m, B& v, B& v_max, const B& grad) const {
    moments(param, m, v, grad);
    v_max = tsr::ops::Maximum{}(v_max, v);
    apply(param, m, v_max);
  }

 private:
  // Everything of the step but the denominator's second moment.
  template <class B>
  TSR_HOST_DEVICE void moments(B& param, B& m, B& v, const B& grad) const {
    if (shrink != T(1)) param = param * B(shrink);
    const B g = rewritten(grad, param);
    m = m * B(b1) + B(one_minus_b1) * g;
    v = v * B(b2) + B(one_minus_b2) * g * g;
  }
  template <class B>
  TSR_HOST_DEVICE void apply(B& param, const B& m, const B& second) const {
    const B denom = tsr::ops::Sqrt{}(second) / B(bc2_sqrt) + B(eps);
    param = param + B(neg_step_size) * m / denom;
  }
};

template <class Options, bool Decoupled>
class AdamFamily : public PerParameterOptimizer<AdamFamily<Options, Decoupled>, Options> {
 public:
  using PerParameterOptimizer<AdamFamily, Options>::PerParameterOptimizer;

 private:
  friend PerParameterOptimizer<AdamFamily, Options>;
  static const Options& checked(const Options& o) {
    check_option(o.lr(), "learning rate");
    check_option(o.eps(), "epsilon value");
    const auto [beta1, beta2] = o.betas();
    tsr::detail::check(beta1 >= 0 && beta1 < 1, "Invalid beta parameter at index 0: ", tsr::detail::python_float_repr(beta1));
    tsr::detail::check(beta2 >= 0 && beta2 < 1, "Invalid beta parameter at index 1: ", tsr::detail::python_float_repr(beta2));
    check_option(o.weight_decay(), "weight_decay value");
    return o;
  }

  template <class T>
  static void update(const Options& o, Tensor<T>& p, ParamState& state) {
    if (state.empty()) {  // PyTorch's order: step, exp_avg, exp_avg_sq[, max_exp_avg_sq]
      state.set("step", AnyTensor(full<float>(Shape{}, 0.0f)));
      state.set("exp_avg", AnyTensor(zeros_like(p)));
      state.set("exp_avg_sq", AnyTensor(zeros_like(p)));
      if (o.amsgrad()) state.set("max_exp_avg_sq", AnyTensor(zeros_like(p)));
    }
    const double step = advance_float_step(state);  // a float, as PyTorch's step tensor
    const auto [beta1, beta2] = o.betas();
    const double bias_correction1 = 1 - std::pow(beta1, step), bias_correction2 = 1 - std::pow(beta2, step);

    const AdamStep<T> adam{RewrittenGradient<T>(o.maximize(), Decoupled ? 0.0 : o.weight_decay()),  // L2 for Adam only
                           T(1 - o.lr() * (Decoupled ? o.weight_decay() : 0.0)),
                           T(beta1), T(beta2), T(1 - beta1), T(1 - beta2), T(std::sqrt(bias_correction2)), T(o.eps()),
                           T(-(o.lr() / bias_correction1))};
    auto& m = state.tensor<T>("exp_avg");
    auto& v = state.tensor<T>("exp_avg_sq");
    if (o.amsgrad()) tsr::detail::fused_update<T>(adam, p, m, v, state.tensor<T>("max_exp_avg_sq"), p.grad());
    else tsr::detail::fused_update<T>(adam, p, m, v, p.grad());
  }
};
}  // namespace detail

class Adam : public detail::AdamFamily<AdamOptions, false> {
 public:
  using AdamFamily::AdamFamily;
};
class AdamW : public detail::AdamFamily<AdamWOptions, true> {
 public:
  using AdamFamily::AdamFamily;
};

}  // namespace tsr::optim
