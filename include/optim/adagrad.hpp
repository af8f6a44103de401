// Adagrad, as torch.optim.Adagrad (PyTorch 1.13):
//   clr = lr / (1 + (t - 1) * lr_decay)
//   sum += g * g,   p -= clr * g / (sqrt(sum) + eps)
// Its state starts at construction (sum = initial_accumulator_value), as
// PyTorch's does, so a state_dict taken before the first step lists it.
#pragma once
#include "sgd.hpp"  // detail::check_option

namespace tsr::optim {

struct AdagradOptions : OptimizerCloneableOptions<AdagradOptions> {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: as libtorch's
  AdagradOptions& lr(double v) { lr_ = v; return *this; }
  double lr() const { return lr_; }
  AdagradOptions& lr_decay(double v) { lr_decay_ = v; return *this; }
  double lr_decay() const { return lr_decay_; }
  AdagradOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  double weight_decay() const { return weight_decay_; }
  AdagradOptions& initial_accumulator_value(double v) { initial_accumulator_value_ = v; return *this; }
  double initial_accumulator_value() const { return initial_accumulator_value_; }
  AdagradOptions& eps(double v) { eps_ = v; return *this; }
  double eps() const { return eps_; }
  AdagradOptions& maximize(bool v) { maximize_ = v; return *this; }
  bool maximize() const { return maximize_; }

  static constexpr auto fields() {  // in PyTorch's order
    using O = AdagradOptions;
    return std::tuple{detail::field("lr", &O::lr_), detail::field("lr_decay", &O::lr_decay_),
                      detail::field("eps", &O::eps_), detail::field("weight_decay", &O::weight_decay_),
                      detail::field("initial_accumulator_value", &O::initial_accumulator_value_),
                      detail::field("maximize", &O::maximize_)};
  }

 private:
  double lr_;
  double lr_decay_ = 0;
  double weight_decay_ = 0;
  double initial_accumulator_value_ = 0;
  double eps_ = 1e-10;
  bool maximize_ = false;
};

namespace detail {
// The whole step for one element (or one SIMD batch): (param, sum, grad).
template <class T>
struct AdagradStep {
  RewrittenGradient<T> rewritten;
  T neg_clr, eps;  // neg_clr: -lr / (1 + (step - 1) * lr_decay)

  template <class B>
  TSR_HOST_DEVICE void operator()(B& param, B& sum, const B& grad) const {
    const B g = rewritten(grad, param);
    sum = sum + B(T(1)) * g * g;
    param = param + B(neg_clr) * g / (tsr::ops::Sqrt{}(sum) + B(eps));
  }
};
}  // namespace detail

class Adagrad : public PerParameterOptimizer<Adagrad, AdagradOptions> {
 public:
  Adagrad(std::vector<OptimizerParamGroup> groups, const AdagradOptions& defaults)
      : PerParameterOptimizer(std::move(groups), defaults) {
    for (std::size_t g = 0; g < param_groups_.size(); ++g) {
      const double initial = static_cast<const AdagradOptions&>(param_groups_[g].options()).initial_accumulator_value();
      for (std::size_t i = 0; i < param_groups_[g].params().size(); ++i) {
        param_groups_[g].params()[i].visit([&]<class T>(const Tensor<T>& p) {
          if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            state_[g][i].set("step", AnyTensor(full<float>(Shape{}, 0.0f)));
            state_[g][i].set("sum", AnyTensor(full_like(p, initial)));
          }
        });
      }
    }
  }
  Adagrad(std::vector<AnyTensor> params, const AdagradOptions& defaults = {})
      : Adagrad(one_group(std::move(params)), defaults) {}

 private:
  friend PerParameterOptimizer;
  static const AdagradOptions& checked(const AdagradOptions& o) {
    detail::check_option(o.lr(), "learning rate");
    detail::check_option(o.lr_decay(), "lr_decay value");
    detail::check_option(o.weight_decay(), "weight_decay value");
    detail::check_option(o.initial_accumulator_value(), "initial_accumulator_value value");
    detail::check_option(o.eps(), "epsilon value");
    return o;
  }

  template <class T>
  static void update(const AdagradOptions& o, Tensor<T>& p, ParamState& state) {
    const double step = detail::advance_float_step(state);
    const detail::RewrittenGradient<T> rewritten(o.maximize(), o.weight_decay());
    const T eps = T(o.eps());
    const T neg_clr = T(-(o.lr() / (1 + (step - 1) * o.lr_decay())));
    tsr::detail::fused_update<T>(detail::AdagradStep<T>{rewritten, neg_clr, eps}, p, state.tensor<T>("sum"), p.grad());
  }
};

}  // namespace tsr::optim
