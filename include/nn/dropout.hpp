// Dropout: in training, each element is zeroed with probability p and the
// rest scaled by 1 / (1 - p); in evaluation, the identity. The mask is
// drawn as PyTorch draws it (bernoulli_(1 - p)), so a seed gives PyTorch's
// masks and outputs. Alpha dropout, for SELU networks, sets the dropped
// elements to SELU's saturation value instead and keeps the mean and
// variance.
#pragma once
#include <cmath>
#include <string>

#include "activation.hpp"  // python_float_repr
#include "holder.hpp"
#include "../sampling.hpp"

namespace tsr::detail {
inline void check_dropout_probability(double p) {
  check<ValueError>(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
}

// What dropout multiplies by, unevaluated: each element kept (scaled by
// 1 / (1 - p)) with probability 1 - p, as where(kept != 0, 1 / (1 - p), 0)
// over PyTorch's draws of kept (bernoulli_draws); where nothing is dropped
// (evaluation, p = 0) or everything is (p = 1), kept is a 0-d 1 or 0. One
// type whatever the case, so the multiply and the mask are one fused pass,
// and its backward multiplies by the same mask. The scale is PyTorch's
// noise.div_(1 - p), 1 / (1 - p) in T's arithmetic. (p is checked where it
// is given: DropoutOptions, F::dropout.)
//
// On a device, the draws are the CPU's (the same seed gives the same mask
// on every device), copied there.
template <FloatElement T>
auto dropout_mask(const Shape& sizes, double p, bool training, Device device) {
  const bool active = training && p != 0 && p != 1;
  const Tensor<T> kept =
      active ? bernoulli_draws<T>(sizes, 1 - p, device) : full<T>({}, T(training && p == 1 ? 0 : 1), device);
  const T scale = active ? T(1) / T(1 - p) : T(1);
  return where(kept != T(0), ScalarLeaf<T>(scale), T(0));  // two bare numbers beside a bool would be float
}
}  // namespace tsr::detail

namespace tsr::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) { detail::check_dropout_probability(p); }  // NOLINT: implicit, nn::Dropout(0.2)
  DropoutOptions& p(double v) { return *this = DropoutOptions(v); }
  double p() const { return p_; }

 private:
  double p_;
};

namespace functional {
// x times a mask over its first `mask_dims` dims, the same for all the
// elements each mask entry covers (all dims: dropout; (N, C): channel
// dropout).
template <detail::FloatElement T>
Tensor<T> dropout_over(const Tensor<T>& x, double p, bool training, std::size_t mask_dims) {
  detail::check_dropout_probability(p);
  if (!training || p == 0) return x;  // nothing dropped: x itself, as PyTorch
  Shape mask = x.sizes();
  for (std::size_t d = mask_dims; d < mask.size(); ++d) mask[d] = 1;
  return x * detail::dropout_mask<T>(mask, p, training, x.device());
}
template <detail::FloatElement T>
Tensor<T> dropout(const Tensor<T>& x, double p = 0.5, bool training = true) {
  return dropout_over(x, p, training, x.sizes().size());
}
// Channel dropout: each channel of each instance is zeroed whole with
// probability p (the mask is drawn per (N, C), or per C for an input
// without a batch dim) and the rest scaled by 1 / (1 - p).
// dropout1d takes (C, L) or (N, C, L); dropout2d any input of two or more
// dims as batched, (N, C, *), as PyTorch 1.13 does (a 3-d input is (N, C, L)
// there, with a warning); dropout3d (C, D, H, W) unbatched, else batched.
template <detail::FloatElement T>
Tensor<T> feature_dropout(const Tensor<T>& x, double p, bool training, bool batched) {
  return dropout_over(x, p, training, batched ? 2 : 1);
}
template <detail::FloatElement T>
Tensor<T> dropout1d(const Tensor<T>& x, double p = 0.5, bool training = true) {
  detail::check(x.dim() == 2 || x.dim() == 3, "dropout1d: Expected 2D or 3D input, but received a ", x.dim(),
                "D input. Note that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).");
  return feature_dropout(x, p, training, x.dim() == 3);
}
template <detail::FloatElement T>
Tensor<T> dropout2d(const Tensor<T>& x, double p = 0.5, bool training = true) {
  detail::check(x.dim() >= 2, "dropout2d: Expected an input of at least 2 dimensions (N, C, *), got ", x.sizes());
  return feature_dropout(x, p, training, true);
}
template <detail::FloatElement T>
Tensor<T> dropout3d(const Tensor<T>& x, double p = 0.5, bool training = true) {
  detail::check(x.dim() >= 2, "dropout3d: Expected an input of at least 2 dimensions (N, C, *), got ", x.sizes());
  return feature_dropout(x, p, training, x.dim() != 4);
}

// Alpha dropout, for SELU networks: in training each element (or, in
// feature_alpha_dropout, each channel of each instance, the input being
// (N, C, *)) is set with probability p to SELU's negative saturation
// -alpha' (alpha' = scale * alpha), and then everything is mapped by
// a x + b, with a = 1 / sqrt((alpha'^2 p + 1)(1 - p)) and b = a alpha' p,
// which keeps zero mean and unit variance. p = 1 gives zeros, as PyTorch.
template <detail::FloatElement T>
Tensor<T> alpha_dropout_over(const Tensor<T>& x, double p, bool training, std::size_t mask_dims) {
  detail::check_dropout_probability(p);
  if (!training || p == 0) return x;
  if (p == 1) return x * T(0);
  Shape mask = x.sizes();
  for (std::size_t d = mask_dims; d < mask.size(); ++d) mask[d] = 1;
  // selu_scale * selu_alpha, as PyTorch writes it (the product of the two constants rounds one ulp higher).
  constexpr double saturation = 1.7580993408473766;
  const double a = 1 / std::sqrt((saturation * saturation * p + 1) * (1 - p));
  const Tensor<bool> kept = detail::bernoulli_draws<T>(mask, 1 - p, x.device()) != T(0);
  // PyTorch's b = (noise - 1) * (alpha' a) + alpha' a p, in T's arithmetic.
  const T shift = T(saturation * a * p), dropped = -T(saturation * a) + shift;
  return x * where(kept, ScalarLeaf<T>(T(a)), T(0)) + where(kept, ScalarLeaf<T>(shift), dropped);
}
template <detail::FloatElement T>
Tensor<T> alpha_dropout(const Tensor<T>& x, double p = 0.5, bool training = false) {
  return alpha_dropout_over(x, p, training, x.sizes().size());
}
template <detail::FloatElement T>
Tensor<T> feature_alpha_dropout(const Tensor<T>& x, double p = 0.5, bool training = false) {
  detail::check(x.dim() >= 2, "Feature dropout requires at least 2 dimensions in the input");
  return alpha_dropout_over(x, p, training, 2);
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
  // x times the mask, unevaluated (nn::Static fuses it with the layers
  // before it).
  template <Expression E>
  auto lazy(const E& x) const {
    return x * detail::dropout_mask<typename E::value_type>(x.sizes(), options.p(), is_training(), detail::expr_device(x));
  }
  DropoutOptions options;
};
using Dropout = ModuleHolder<DropoutImpl>;

// Dropout1d, Dropout2d, Dropout3d: channel dropout (F::dropout1d, ...).
template <int D>
class FeatureDropoutImpl : public Module {
 public:
  explicit FeatureDropoutImpl(const DropoutOptions& options = {}) : options(options) {}
  std::string name() const override { return "Dropout" + std::to_string(D) + "d"; }
  std::string extra_repr() const override { return "p=" + detail::python_float_repr(options.p()) + ", inplace=False"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    if constexpr (D == 1) return F::dropout1d(x, options.p(), is_training());
    else if constexpr (D == 2) return F::dropout2d(x, options.p(), is_training());
    else return F::dropout3d(x, options.p(), is_training());
  }
  DropoutOptions options;
};
using Dropout1dImpl = FeatureDropoutImpl<1>;
using Dropout1d = ModuleHolder<Dropout1dImpl>;
using Dropout2dImpl = FeatureDropoutImpl<2>;
using Dropout2d = ModuleHolder<Dropout2dImpl>;
using Dropout3dImpl = FeatureDropoutImpl<3>;
using Dropout3d = ModuleHolder<Dropout3dImpl>;

// AlphaDropout and FeatureAlphaDropout (F::alpha_dropout, F::feature_alpha_dropout).
template <bool Feature>
class AlphaDropoutBaseImpl : public Module {
 public:
  explicit AlphaDropoutBaseImpl(const DropoutOptions& options = {}) : options(options) {}
  std::string name() const override { return Feature ? "FeatureAlphaDropout" : "AlphaDropout"; }
  std::string extra_repr() const override { return "p=" + detail::python_float_repr(options.p()) + ", inplace=False"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    if constexpr (Feature) return F::feature_alpha_dropout(x, options.p(), is_training());
    else return F::alpha_dropout(x, options.p(), is_training());
  }
  DropoutOptions options;
};
using AlphaDropoutImpl = AlphaDropoutBaseImpl<false>;
using AlphaDropout = ModuleHolder<AlphaDropoutImpl>;
using FeatureAlphaDropoutImpl = AlphaDropoutBaseImpl<true>;
using FeatureAlphaDropout = ModuleHolder<FeatureAlphaDropoutImpl>;
using Dropout1dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;

}  // namespace tsr::nn
