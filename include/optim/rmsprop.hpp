// RMSprop, as torch.optim.RMSprop (PyTorch 1.13), centered and with momentum:
//   sq = alpha * sq + (1 - alpha) * g * g
//   avg = sqrt(sq - g_avg^2) + eps (centered, g_avg = alpha * g_avg + (1 - alpha) * g)
//         or sqrt(sq) + eps
//   buf = momentum * buf + g / avg,  p -= lr * buf   (momentum > 0)
//   p -= lr * g / avg                                 (otherwise)
#pragma once
#include "sgd.hpp"  // detail::check_option

namespace tsr::optim {

struct RMSpropOptions : OptimizerCloneableOptions<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: as libtorch's
  RMSpropOptions& lr(double v) { lr_ = v; return *this; }
  double lr() const { return lr_; }
  RMSpropOptions& alpha(double v) { alpha_ = v; return *this; }
  double alpha() const { return alpha_; }
  RMSpropOptions& eps(double v) { eps_ = v; return *this; }
  double eps() const { return eps_; }
  RMSpropOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  double weight_decay() const { return weight_decay_; }
  RMSpropOptions& momentum(double v) { momentum_ = v; return *this; }
  double momentum() const { return momentum_; }
  RMSpropOptions& centered(bool v) { centered_ = v; return *this; }
  bool centered() const { return centered_; }
  RMSpropOptions& maximize(bool v) { maximize_ = v; return *this; }
  bool maximize() const { return maximize_; }

  static constexpr auto fields() {  // in PyTorch's order
    using O = RMSpropOptions;
    return std::tuple{detail::field("lr", &O::lr_), detail::field("momentum", &O::momentum_),
                      detail::field("alpha", &O::alpha_), detail::field("eps", &O::eps_),
                      detail::field("centered", &O::centered_), detail::field("weight_decay", &O::weight_decay_),
                      detail::field("maximize", &O::maximize_)};
  }

 private:
  double lr_;
  double alpha_ = 0.99;
  double eps_ = 1e-8;
  double weight_decay_ = 0;
  double momentum_ = 0;
  bool centered_ = false;
  bool maximize_ = false;
};

namespace detail {
// The whole step for one element (or one SIMD batch): (param, square_avg,
// [grad_avg,] [momentum_buffer,] grad), the optional ones as enabled.
template <class T, bool Centered, bool Momentum>
struct RMSpropStep {
  RewrittenGradient<T> rewritten;
  T alpha, one_minus_alpha, eps, momentum, neg_lr;

  template <class B>
  TSR_HOST_DEVICE void operator()(B& param, B& sq, const B& grad) const
    requires(!Centered && !Momentum)
  {
    step(param, sq, static_cast<B*>(nullptr), static_cast<B*>(nullptr), grad);
  }
  // The one optional operand: grad_avg (centered) or momentum_buffer.
  template <class B>
  TSR_HOST_DEVICE void operator()(B& param, B& sq, B& extra, const B& grad) const
    requires(Centered != Momentum)
  {
    step(param, sq, Centered ? &extra : nullptr, Momentum ? &extra : nullptr, grad);
  }
  template <class B>
  TSR_HOST_DEVICE void operator()(B& param, B& sq, B& g_avg, B& buf, const B& grad) const
    requires(Centered && Momentum)
  {
    step(param, sq, &g_avg, &buf, grad);
  }

 private:
  template <class B>
  TSR_HOST_DEVICE void step(B& param, B& sq, B* g_avg, B* buf, const B& grad) const {
    const B g = rewritten(grad, param);
    sq = sq * B(alpha) + B(one_minus_alpha) * g * g;
    B avg;
    if constexpr (Centered) {
      *g_avg = *g_avg * B(alpha) + B(one_minus_alpha) * g;
      avg = tsr::ops::Sqrt{}(sq + B(T(-1)) * *g_avg * *g_avg);
    } else {
      avg = tsr::ops::Sqrt{}(sq);
    }
    avg = avg + B(eps);
    if constexpr (Momentum) {
      *buf = *buf * B(momentum) + g / avg;
      param = param + B(neg_lr) * *buf;
    } else {
      param = param + B(neg_lr) * g / avg;
    }
  }
};
}  // namespace detail

class RMSprop : public PerParameterOptimizer<RMSprop, RMSpropOptions> {
 public:
  using PerParameterOptimizer::PerParameterOptimizer;

 private:
  friend PerParameterOptimizer;
  template <class T>
  static void update(const RMSpropOptions& o, Tensor<T>& p, ParamState& state) {
    const bool momentum = o.momentum() > 0;
    if (o.centered() && momentum) update<true, true>(o, p, state);
    else if (o.centered()) update<true, false>(o, p, state);
    else if (momentum) update<false, true>(o, p, state);
    else update<false, false>(o, p, state);
  }
  static const RMSpropOptions& checked(const RMSpropOptions& o) {
    detail::check_option(o.lr(), "learning rate");
    detail::check_option(o.eps(), "epsilon value");
    detail::check_option(o.momentum(), "momentum value");
    detail::check_option(o.weight_decay(), "weight_decay value");
    detail::check_option(o.alpha(), "alpha value");
    return o;
  }

  template <bool Centered, bool Momentum, class T>
  static void update(const RMSpropOptions& o, Tensor<T>& p, ParamState& state) {
    if (state.empty()) {  // PyTorch's order: step, square_avg[, momentum_buffer][, grad_avg]
      state.set("step", int64_t{0});
      state.set("square_avg", AnyTensor(zeros_like(p)));
      if (Momentum) state.set("momentum_buffer", AnyTensor(zeros_like(p)));
      if (Centered) state.set("grad_avg", AnyTensor(zeros_like(p)));
    }
    ++state.integer("step");
    const detail::RMSpropStep<T, Centered, Momentum> step{
        detail::RewrittenGradient<T>(o.maximize(), o.weight_decay()), T(o.alpha()), T(1 - o.alpha()), T(o.eps()),
        T(o.momentum()), T(-o.lr())};
    auto& sq = state.tensor<T>("square_avg");
    if constexpr (Centered && Momentum) {
      tsr::detail::fused_update<T>(step, p, sq, state.tensor<T>("grad_avg"), state.tensor<T>("momentum_buffer"),
                                   p.grad());
    } else if constexpr (Centered) {
      tsr::detail::fused_update<T>(step, p, sq, state.tensor<T>("grad_avg"), p.grad());
    } else if constexpr (Momentum) {
      tsr::detail::fused_update<T>(step, p, sq, state.tensor<T>("momentum_buffer"), p.grad());
    } else {
      tsr::detail::fused_update<T>(step, p, sq, p.grad());
    }
  }
};

}  // namespace tsr::optim
