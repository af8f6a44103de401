// Stochastic gradient descent with momentum, dampening, Nesterov momentum,
// weight decay and maximize, as torch.optim.SGD (PyTorch 1.13):
//   g = ±grad + weight_decay * p
//   buf = g (first step), then buf = momentum * buf + (1 - dampening) * g
//   p -= lr * (nesterov ? g + momentum * buf : buf)
#pragma once
#include "../detail/python_repr.hpp"
#include "optimizer.hpp"

namespace tsr::optim {

struct SGDOptions : OptimizerCloneableOptions<SGDOptions> {
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT: as libtorch's
  SGDOptions& lr(double v) { lr_ = v; return *this; }
  double lr() const { return lr_; }
  SGDOptions& momentum(double v) { momentum_ = v; return *this; }
  double momentum() const { return momentum_; }
  SGDOptions& dampening(double v) { dampening_ = v; return *this; }
  double dampening() const { return dampening_; }
  SGDOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  double weight_decay() const { return weight_decay_; }
  SGDOptions& nesterov(bool v) { nesterov_ = v; return *this; }
  bool nesterov() const { return nesterov_; }
  SGDOptions& maximize(bool v) { maximize_ = v; return *this; }
  bool maximize() const { return maximize_; }

  static constexpr auto fields() {
    using O = SGDOptions;
    return std::tuple{detail::field("lr", &O::lr_), detail::field("momentum", &O::momentum_),
                      detail::field("dampening", &O::dampening_), detail::field("weight_decay", &O::weight_decay_),
                      detail::field("nesterov", &O::nesterov_), detail::field("maximize", &O::maximize_)};
  }

 private:
  double lr_;
  double momentum_ = 0;
  double dampening_ = 0;
  double weight_decay_ = 0;
  bool nesterov_ = false;
  bool maximize_ = false;
};

namespace detail {
// PyTorch's check of a non-negative option ("Invalid learning rate: -0.1").
inline void check_option(double value, const char* what, double least = 0.0) {
  tsr::detail::check(value >= least, "Invalid ", what, ": ", tsr::detail::python_float_repr(value));
}

// The whole step for one element (or one SIMD batch) of a parameter:
// without momentum (param, grad), with it (param, momentum_buffer, grad).
template <class T>
struct SGDStep {
  RewrittenGradient<T> direction;  // PyTorch's d_p
  T momentum, kept, neg_lr;        // kept: 1 - dampening
  bool nesterov, first;            // first: the buffer starts as d_p

  template <class B>
  TSR_HOST_DEVICE void operator()(B& param, const B& g) const {
    param = param + B(neg_lr) * direction(g, param);
  }
  template <class B>
  TSR_HOST_DEVICE void operator()(B& param, B& buf, const B& g) const {
    const B d = direction(g, param);
    buf = first ? d : buf * B(momentum) + B(kept) * d;
    param = param + B(neg_lr) * (nesterov ? d + B(momentum) * buf : buf);
  }
};
}  // namespace detail

class SGD : public PerParameterOptimizer<SGD, SGDOptions> {
 public:
  using PerParameterOptimizer::PerParameterOptimizer;

 private:
  friend PerParameterOptimizer;
  static const SGDOptions& checked(const SGDOptions& o) {
    detail::check_option(o.lr(), "learning rate");
    detail::check_option(o.momentum(), "momentum value");
    detail::check_option(o.weight_decay(), "weight_decay value");
    tsr::detail::check(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
                       "Nesterov momentum requires a momentum and zero dampening");
    return o;
  }

  template <class T>
  static void update(const SGDOptions& o, Tensor<T>& p, ParamState& state) {
    const Tensor<T> grad = p.grad();
    const detail::SGDStep<T> step{detail::RewrittenGradient<T>(o.maximize(), o.weight_decay()), T(o.momentum()),
                                  T(1 - o.dampening()), T(-o.lr()), o.nesterov(), !state.has("momentum_buffer")};
    if (o.momentum() == 0) {
      tsr::detail::fused_update<T>(step, p, grad);
      return;
    }
    if (step.first) state.set("momentum_buffer", AnyTensor(Tensor<T>(empty_like(p))));
    tsr::detail::fused_update<T>(step, p, state.tensor<T>("momentum_buffer"), grad);
  }
};

}  // namespace tsr::optim
