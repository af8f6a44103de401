// Adadelta, as torch.optim.Adadelta (PyTorch 1.13):
//   sq = rho * sq + (1 - rho) * g * g
//   delta = sqrt(acc + eps) / sqrt(sq + eps) * g
//   acc = rho * acc + (1 - rho) * delta * delta,   p -= lr * delta
#pragma once
#include "sgd.hpp"  // detail::check_option

namespace tsr::optim {

struct AdadeltaOptions : OptimizerCloneableOptions<AdadeltaOptions> {
  AdadeltaOptions(double lr = 1.0) : lr_(lr) {}  // NOLINT: as libtorch's
  AdadeltaOptions& lr(double v) { lr_ = v; return *this; }
  double lr() const { return lr_; }
  AdadeltaOptions& rho(double v) { rho_ = v; return *this; }
  double rho() const { return rho_; }
  AdadeltaOptions& eps(double v) { eps_ = v; return *this; }
  double eps() const { return eps_; }
  AdadeltaOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  double weight_decay() const { return weight_decay_; }
  AdadeltaOptions& maximize(bool v) { maximize_ = v; return *this; }
  bool maximize() const { return maximize_; }

  static constexpr auto fields() {  // in PyTorch's order
    using O = AdadeltaOptions;
    return std::tuple{detail::field("lr", &O::lr_), detail::field("rho", &O::rho_), detail::field("eps", &O::eps_),
                      detail::field("weight_decay", &O::weight_decay_), detail::field("maximize", &O::maximize_)};
  }

 private:
  double lr_;
  double rho_ = 0.9;
  double eps_ = 1e-6;
  double weight_decay_ = 0;
  bool maximize_ = false;
};

namespace detail {
// The whole step for one element (or one SIMD batch): (param, square_avg,
// acc_delta, grad).
template <class T>
struct AdadeltaStep {
  RewrittenGradient<T> rewritten;
  T rho, one_minus_rho, neg_lr, eps;

  template <class B>
  TSR_HOST_DEVICE void operator()(B& param, B& sq, B& acc, const B& grad) const {
    const B g = rewritten(grad, param);
    sq = sq * B(rho) + B(one_minus_rho) * g * g;
    const B std_dev = tsr::ops::Sqrt{}(sq + B(eps));
    const B delta = tsr::ops::Sqrt{}(acc + B(eps)) / std_dev * g;
    acc = acc * B(rho) + B(one_minus_rho) * delta * delta;
    param = param + B(neg_lr) * delta;
  }
};
}  // namespace detail

class Adadelta : public PerParameterOptimizer<Adadelta, AdadeltaOptions> {
 public:
  using PerParameterOptimizer::PerParameterOptimizer;

 private:
  friend PerParameterOptimizer;
  static const AdadeltaOptions& checked(const AdadeltaOptions& o) {
    detail::check_option(o.lr(), "learning rate");
    tsr::detail::check(o.rho() >= 0 && o.rho() <= 1, "Invalid rho value: ", tsr::detail::python_float_repr(o.rho()));
    detail::check_option(o.eps(), "epsilon value");
    detail::check_option(o.weight_decay(), "weight_decay value");
    return o;
  }

  template <class T>
  static void update(const AdadeltaOptions& o, Tensor<T>& p, ParamState& state) {
    if (state.empty()) {  // PyTorch's order: step, square_avg, acc_delta
      state.set("step", int64_t{0});
      state.set("square_avg", AnyTensor(zeros_like(p)));
      state.set("acc_delta", AnyTensor(zeros_like(p)));
    }
    ++state.integer("step");
    const detail::RewrittenGradient<T> rewritten(o.maximize(), o.weight_decay());
    const T eps = T(o.eps());
    const T rho = T(o.rho()), one_minus_rho = T(1 - o.rho()), neg_lr = T(-o.lr());
    tsr::detail::fused_update<T>(detail::AdadeltaStep<T>{rewritten, rho, one_minus_rho, neg_lr, eps}, p,
                                 state.tensor<T>("square_avg"), state.tensor<T>("acc_delta"), p.grad());
  }
};

}  // namespace tsr::optim
