// Dropout: in training, each element is zeroed with probability p and the
// rest scaled by 1 / (1 - p); in evaluation, the identity. The mask comes
// from the seeded generator (manual_seed makes it repeatable); PyTorch draws
// its mask with bernoulli_, a different stream, so the masks differ.
#pragma once
#include <string>

#include "activation.hpp"  // python_float_repr
#include "holder.hpp"

namespace tsr::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {  // NOLINT: implicit, nn::Dropout(0.2)
    detail::check<ValueError>(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  }
  DropoutOptions& p(double v) { return *this = DropoutOptions(v); }
  double p() const { return p_; }

 private:
  double p_;
};

namespace functional {
template <detail::FloatElement T>
Tensor<T> dropout(const Tensor<T>& x, double p = 0.5, bool training = true) {
  detail::check<ValueError>(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (!training || p == 0) return x;
  if (p == 1) return x * T(0);
  // The scaled mask, then one fused multiply (its backward multiplies by
  // the same mask).
  const Tensor<T> mask = where(rand<T>(x.sizes()) < T(1 - p), T(1 / (1 - p)), T(0));
  return x * mask;
}
}  // namespace functional
namespace F = functional;

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {}) : options(options) {}
  std::string name() const override { return "Dropout"; }
  std::string extra_repr() const override { return "p=" + detail::python_float_repr(options.p()) + ", inplace=False"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return F::dropout(x, options.p(), is_training());
  }
  DropoutOptions options;
};
using Dropout = ModuleHolder<DropoutImpl>;

}  // namespace tsr::nn
