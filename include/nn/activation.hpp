// Activations: functional forms (fused expressions, as every elementwise
// op in tessera: F::relu(linear(x, w, b)) + 1 is one pass after the
// product) and modules, whose forward materializes one.
#pragma once
#include <sstream>
#include <string>

#include "../detail/python_repr.hpp"
#include "fused_activation.hpp"
#include "holder.hpp"
#include "../sampling.hpp"

namespace tsr::nn {

namespace functional {
using tsr::gelu;
using tsr::hardtanh;
using tsr::log_softmax;
using tsr::relu;
using tsr::sigmoid;
using tsr::silu;
using tsr::softmax;
using tsr::tanh;
using tsr::threshold;

template <Expression E>
auto relu6(const E& x) {
  return tsr::hardtanh(x, 0.0, 6.0);
}
template <Expression E>
auto leaky_relu(const E& x, double negative_slope = 0.01) {
  using T = typename E::value_type;
  return where(x > T(0), x, x * T(negative_slope));
}
template <Expression E>
auto elu(const E& x, double alpha = 1.0) {
  using T = typename E::value_type;
  return where(x > T(0), x, expm1(x) * T(alpha));
}
// SELU's constants, as PyTorch's (Klambauer et al.).
inline constexpr double selu_alpha = 1.6732632423543772848170429916717;
inline constexpr double selu_scale = 1.0507009873554804934193349852946;
template <Expression E>
auto selu(const E& x) {
  using T = typename E::value_type;
  return where(x > T(0), x, expm1(x) * T(selu_alpha)) * T(selu_scale);
}
// softplus(x) = log(1 + exp(beta x)) / beta, x itself where beta x > threshold.
template <Expression E>
auto softplus(const E& x, double beta = 1.0, double threshold = 20.0) {
  using T = typename E::value_type;
  return where(x * T(beta) > T(threshold), x, log1p(exp(x * T(beta))) / T(beta));
}
template <Expression E>
auto mish(const E& x) {
  return x * tsr::tanh(tsr::softplus(x));
}
template <Expression E>
auto hardswish(const E& x) {
  using T = typename E::value_type;
  return x * tsr::hardtanh(x + T(3), 0.0, 6.0) / T(6);
}
template <Expression E>
auto hardsigmoid(const E& x) {
  using T = typename E::value_type;
  return tsr::hardtanh(x + T(3), 0.0, 6.0) / T(6);
}
// log(sigmoid(x)) = -softplus(-x), through softplus's stable form (its
// derivative at 0 is 1/2, as PyTorch's).
template <Expression E>
auto logsigmoid(const E& x) {
  return -tsr::softplus(-x);
}
template <Expression E>
auto softsign(const E& x) {
  using T = typename E::value_type;
  return x / (abs(x) + T(1));
}
template <Expression E>
auto tanhshrink(const E& x) {
  return x - tsr::tanh(x);
}
// max(0, x) + min(0, alpha (exp(x / alpha) - 1)), written as PyTorch's
// kernel computes it: x times the reciprocal, exp - 1 rather than expm1, so
// that the gradient is its exp(x / alpha) (expm1's derivative, expm1 + 1,
// loses digits where exp is small).
template <Expression E>
auto celu(const E& x, double alpha = 1.0) {
  using T = typename E::value_type;
  detail::check(alpha != 0, "ZeroDivisionError: alpha cannot be 0 for CELU");
  return where(x > T(0), x, (exp(x * T(1 / alpha)) - T(1)) * T(alpha));
}
// x moved towards 0 by lambda, 0 within [-lambda, lambda].
template <Expression E>
auto softshrink(const E& x, double lambda = 0.5) {
  using T = typename E::value_type;
  detail::check(lambda >= 0, "lambda must be greater or equal to 0, but found to be ", lambda, ".");
  return where(x > T(lambda), x - T(lambda), where(x < T(-lambda), x + T(lambda), T(0)));
}
// x outside [-lambda, lambda], 0 within.
template <Expression E>
auto hardshrink(const E& x, double lambda = 0.5) {
  using T = typename E::value_type;
  return where(abs(x) > T(lambda), x, T(0));
}
template <Expression E>
auto softmin(const E& x, int64_t dim) {
  return tsr::softmax(-x, dim);
}
// What F::gumbel_softmax takes besides its logits.
struct GumbelSoftmaxFuncOptions {
  GumbelSoftmaxFuncOptions& tau(double v) { tau_ = v; return *this; }
  GumbelSoftmaxFuncOptions& hard(bool v) { hard_ = v; return *this; }
  GumbelSoftmaxFuncOptions& dim(int64_t v) { dim_ = v; return *this; }
  double tau_ = 1.0;
  bool hard_ = false;
  int64_t dim_ = -1;
};
// A sample of the Gumbel-softmax distribution: softmax((logits + g) / tau)
// over dim, with g = -log(e) and e drawn as exponential_ draws it (so a
// seed gives PyTorch's sample). hard: the one-hot of the sample's largest
// value, whose gradient is the soft sample's (y_hard - y_soft.detach() +
// y_soft, as PyTorch computes it).
template <detail::FloatElement T>
Tensor<T> gumbel_softmax(const Tensor<T>& logits, const GumbelSoftmaxFuncOptions& o = {}) {
  const int64_t dim = detail::wrap_dim(o.dim_, logits.dim());
  Tensor<T> e = empty<T>(logits.sizes(), logits.device());
  e.exponential_();
  const Tensor<T> soft = softmax((logits - log(e)) / T(o.tau_), dim);
  if (!o.hard_) return soft;
  const Tensor<T> one_hot = scatter(zeros_like(soft), dim, argmax(soft, dim, true), T(1));
  return Tensor<T>(one_hot - soft.detach() + soft);
}

// The gated linear unit: a * sigmoid(b), a and b the halves of x along dim.
template <detail::FloatElement T>
auto glu(const Tensor<T>& x, int64_t dim = -1) {
  const int64_t d = detail::wrap_dim(dim, x.dim()), n = x.size(d);
  detail::check(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  return x.narrow(d, 0, n / 2) * tsr::sigmoid(x.narrow(d, n / 2, n / 2));
}
// x where x > 0, weight * x elsewhere: one weight, or one per channel
// (dim 1).
template <detail::FloatElement T>
auto prelu(const Tensor<T>& x, const Tensor<T>& weight) {
  const int64_t channels = x.dim() >= 2 ? x.size(1) : 1;
  detail::check(weight.numel() == 1 || weight.numel() == channels,
                "Mismatch of parameter numbers and input channel size. Found parameter numbers = ", weight.numel(),
                " and channel size = ", channels, ".");
  Shape shape(static_cast<std::size_t>(x.dim()), 1);
  if (weight.numel() > 1) shape[1] = channels;
  return where(x > T(0), x, weight.reshape(shape) * x);
}
// The randomized leaky ReLU: in training, each element that is not positive
// is multiplied by its own slope, drawn uniformly from [lower, upper] (its
// gradient is that slope); in evaluation, leaky_relu with the mean slope.
template <detail::FloatElement T>
Tensor<T> rrelu(const Tensor<T>& x, double lower = 1.0 / 8, double upper = 1.0 / 3, bool training = false) {
  detail::check(lower <= upper, "Lower bound should be less than or equal to the upper bound");
  if (!training) return leaky_relu(x, (lower + upper) / 2);
  // A slope drawn for each element that is not positive, in order, as
  // PyTorch's kernel draws them (a uniform double between the bounds rounded
  // to the compute type, then rounded to it), so a seed gives its slopes.
  const double lo = static_cast<double>(acc_t<T>(lower)), hi = static_cast<double>(acc_t<T>(upper));
  const Tensor<T> values = detail::host_contiguous(x);
  const T* v = values.data_ptr();
  const Tensor<T> slopes = detail::draw<T>(x.sizes(), x.device(), [&](detail::Generator& g, int64_t i) {
    return v[i] <= T(0) ? T(acc_t<T>(g.uniform_double() * (hi - lo) + lo)) : T(1);
  });
  return where(x > T(0), x, x * slopes);
}
}  // namespace functional
namespace F = functional;

// A module applying an elementwise function Fn (a stateless functor with
// the PyTorch class name as `name`).
template <class Fn>
class ElementwiseImpl : public Module {
 public:
  // The activation a Linear or Conv2d before this module computes in its
  // product's epilogue (none for most functions).
  static constexpr detail::Activation fused_activation = detail::fusable_activation<Fn>();
  std::string name() const override { return Fn::name; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return lazy(x);
  }
  // The function on an expression, unevaluated: nn::Static strings the
  // elementwise layers that follow one another into one expression, one
  // pass (and one fused backward).
  template <Expression E>
  auto lazy(const E& x) const {
    return Fn{}(x);
  }
};

namespace activation_fn {
struct ReLU {
  static constexpr const char* name = "ReLU";
  static constexpr detail::Activation fused_activation = detail::Activation::relu;
  template <class E> auto operator()(const E& x) const { return F::relu(x); }
};
struct ReLU6 {
  static constexpr const char* name = "ReLU6";
  template <class E> auto operator()(const E& x) const { return F::relu6(x); }
};
struct SELU {
  static constexpr const char* name = "SELU";
  template <class E> auto operator()(const E& x) const { return F::selu(x); }
};
struct SiLU {
  static constexpr const char* name = "SiLU";
  template <class E> auto operator()(const E& x) const { return F::silu(x); }
};
struct Mish {
  static constexpr const char* name = "Mish";
  template <class E> auto operator()(const E& x) const { return F::mish(x); }
};
struct Hardswish {
  static constexpr const char* name = "Hardswish";
  template <class E> auto operator()(const E& x) const { return F::hardswish(x); }
};
struct Hardsigmoid {
  static constexpr const char* name = "Hardsigmoid";
  template <class E> auto operator()(const E& x) const { return F::hardsigmoid(x); }
};
struct Tanh {
  static constexpr const char* name = "Tanh";
  static constexpr detail::Activation fused_activation = detail::Activation::tanh;
  template <class E> auto operator()(const E& x) const { return F::tanh(x); }
};
struct Sigmoid {
  static constexpr const char* name = "Sigmoid";
  static constexpr detail::Activation fused_activation = detail::Activation::sigmoid;
  template <class E> auto operator()(const E& x) const { return F::sigmoid(x); }
};
struct LogSigmoid {
  static constexpr const char* name = "LogSigmoid";
  template <class E> auto operator()(const E& x) const { return F::logsigmoid(x); }
};
struct Softsign {
  static constexpr const char* name = "Softsign";
  template <class E> auto operator()(const E& x) const { return F::softsign(x); }
};
struct Tanhshrink {
  static constexpr const char* name = "Tanhshrink";
  template <class E> auto operator()(const E& x) const { return F::tanhshrink(x); }
};
}  // namespace activation_fn

using ReLUImpl = ElementwiseImpl<activation_fn::ReLU>;
using ReLU = ModuleHolder<ReLUImpl>;
using ReLU6Impl = ElementwiseImpl<activation_fn::ReLU6>;
using ReLU6 = ModuleHolder<ReLU6Impl>;
using SELUImpl = ElementwiseImpl<activation_fn::SELU>;
using SELU = ModuleHolder<SELUImpl>;
using SiLUImpl = ElementwiseImpl<activation_fn::SiLU>;
using SiLU = ModuleHolder<SiLUImpl>;
using MishImpl = ElementwiseImpl<activation_fn::Mish>;
using Mish = ModuleHolder<MishImpl>;
using HardswishImpl = ElementwiseImpl<activation_fn::Hardswish>;
using Hardswish = ModuleHolder<HardswishImpl>;
using HardsigmoidImpl = ElementwiseImpl<activation_fn::Hardsigmoid>;
using Hardsigmoid = ModuleHolder<HardsigmoidImpl>;
using TanhImpl = ElementwiseImpl<activation_fn::Tanh>;
using Tanh = ModuleHolder<TanhImpl>;
using SigmoidImpl = ElementwiseImpl<activation_fn::Sigmoid>;
using Sigmoid = ModuleHolder<SigmoidImpl>;
using LogSigmoidImpl = ElementwiseImpl<activation_fn::LogSigmoid>;
using LogSigmoid = ModuleHolder<LogSigmoidImpl>;
using SoftsignImpl = ElementwiseImpl<activation_fn::Softsign>;
using Softsign = ModuleHolder<SoftsignImpl>;
using TanhshrinkImpl = ElementwiseImpl<activation_fn::Tanhshrink>;
using Tanhshrink = ModuleHolder<TanhshrinkImpl>;

// ----- activations with options ---------------------------------------------------
struct LeakyReLUOptions {
  LeakyReLUOptions& negative_slope(double v) { negative_slope_ = v; return *this; }
  double negative_slope() const { return negative_slope_; }
 private:
  double negative_slope_ = 0.01;
};
class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : options(options) {}
  std::string name() const override { return "LeakyReLU"; }
  std::string extra_repr() const override { return "negative_slope=" + detail::python_float_repr(options.negative_slope()); }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return lazy(x); }
  template <Expression E>
  auto lazy(const E& x) const { return F::leaky_relu(x, options.negative_slope()); }
  LeakyReLUOptions options;
};
using LeakyReLU = ModuleHolder<LeakyReLUImpl>;

struct RReLUOptions {
  RReLUOptions& lower(double v) { lower_ = v; return *this; }
  RReLUOptions& upper(double v) { upper_ = v; return *this; }
  double lower() const { return lower_; }
  double upper() const { return upper_; }
 private:
  double lower_ = 1.0 / 8, upper_ = 1.0 / 3;
};
class RReLUImpl : public Module {
 public:
  explicit RReLUImpl(const RReLUOptions& options = {}) : options(options) {}
  std::string name() const override { return "RReLU"; }
  std::string extra_repr() const override {
    return "lower=" + detail::python_float_repr(options.lower()) + ", upper=" + detail::python_float_repr(options.upper());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return F::rrelu(x, options.lower(), options.upper(), is_training()); }
  RReLUOptions options;
};
using RReLU = ModuleHolder<RReLUImpl>;

struct ELUOptions {
  ELUOptions& alpha(double v) { alpha_ = v; return *this; }
  double alpha() const { return alpha_; }
 private:
  double alpha_ = 1.0;
};
class ELUImpl : public Module {
 public:
  explicit ELUImpl(const ELUOptions& options = {}) : options(options) {}
  std::string name() const override { return "ELU"; }
  std::string extra_repr() const override { return "alpha=" + detail::python_float_repr(options.alpha()); }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return lazy(x); }
  template <Expression E>
  auto lazy(const E& x) const { return F::elu(x, options.alpha()); }
  ELUOptions options;
};
using ELU = ModuleHolder<ELUImpl>;

struct GELUOptions {
  // "none" (the exact erf form) or "tanh".
  GELUOptions& approximate(std::string v) {
    detail::check(v == "none" || v == "tanh", "approximate argument must be either none or tanh.");
    approximate_ = std::move(v);
    return *this;
  }
  const std::string& approximate() const { return approximate_; }
 private:
  std::string approximate_ = "none";
};
class GELUImpl : public Module {
 public:
  explicit GELUImpl(const GELUOptions& options = {}) : options(options) {}
  std::string name() const override { return "GELU"; }
  std::string extra_repr() const override { return "approximate='" + options.approximate() + "'"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return lazy(x); }
  template <Expression E>
  auto lazy(const E& x) const { return F::gelu(x, options.approximate() == "tanh"); }
  GELUOptions options;
};
using GELU = ModuleHolder<GELUImpl>;

struct SoftplusOptions {
  SoftplusOptions& beta(double v) { beta_ = v; return *this; }
  SoftplusOptions& threshold(double v) { threshold_ = v; return *this; }
  double beta() const { return beta_; }
  double threshold() const { return threshold_; }
 private:
  double beta_ = 1.0, threshold_ = 20.0;
};
class SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options = {}) : options(options) {}
  std::string name() const override { return "Softplus"; }
  std::string extra_repr() const override {
    return "beta=" + detail::python_float_repr(options.beta()) + ", threshold=" + detail::python_float_repr(options.threshold());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return lazy(x); }
  template <Expression E>
  auto lazy(const E& x) const { return F::softplus(x, options.beta(), options.threshold()); }
  SoftplusOptions options;
};
using Softplus = ModuleHolder<SoftplusImpl>;

struct HardtanhOptions {
  HardtanhOptions& min_val(double v) { min_val_ = v; return *this; }
  HardtanhOptions& max_val(double v) { max_val_ = v; return *this; }
  double min_val() const { return min_val_; }
  double max_val() const { return max_val_; }
 private:
  double min_val_ = -1.0, max_val_ = 1.0;
};
class HardtanhImpl : public Module {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {}) : options(options) {
    detail::check(options.max_val() >= options.min_val(), "max_val must be greater than or equal to min_val");
  }
  std::string name() const override { return "Hardtanh"; }
  std::string extra_repr() const override {
    return "min_val=" + detail::python_float_repr(options.min_val()) + ", max_val=" + detail::python_float_repr(options.max_val());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return lazy(x); }
  template <Expression E>
  auto lazy(const E& x) const { return F::hardtanh(x, options.min_val(), options.max_val()); }
  HardtanhOptions options;
};
using Hardtanh = ModuleHolder<HardtanhImpl>;

struct CELUOptions {
  CELUOptions& alpha(double v) { alpha_ = v; return *this; }
  double alpha() const { return alpha_; }
 private:
  double alpha_ = 1.0;
};
class CELUImpl : public Module {
 public:
  explicit CELUImpl(const CELUOptions& options = {}) : options(options) {}
  std::string name() const override { return "CELU"; }
  std::string extra_repr() const override { return "alpha=" + detail::python_float_repr(options.alpha()); }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return lazy(x); }
  template <Expression E>
  auto lazy(const E& x) const { return F::celu(x, options.alpha()); }
  CELUOptions options;
};
using CELU = ModuleHolder<CELUImpl>;

// Softshrink and Hardshrink (libtorch: SoftshrinkOptions(lambda)).
struct SoftshrinkOptions {
  SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT: implicit, nn::Softshrink(0.3)
  SoftshrinkOptions& lambda(double v) { lambda_ = v; return *this; }
  double lambda() const { return lambda_; }
 private:
  double lambda_;
};
using HardshrinkOptions = SoftshrinkOptions;
template <bool Soft>
class ShrinkImpl : public Module {
 public:
  explicit ShrinkImpl(const SoftshrinkOptions& options = {}) : options(options) {}
  std::string name() const override { return Soft ? "Softshrink" : "Hardshrink"; }
  std::string extra_repr() const override { return detail::python_float_repr(options.lambda()); }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return lazy(x); }
  template <Expression E>
  auto lazy(const E& x) const {
    if constexpr (Soft) return F::softshrink(x, options.lambda());
    else return F::hardshrink(x, options.lambda());
  }
  SoftshrinkOptions options;
};
using SoftshrinkImpl = ShrinkImpl<true>;
using Softshrink = ModuleHolder<SoftshrinkImpl>;
using HardshrinkImpl = ShrinkImpl<false>;
using Hardshrink = ModuleHolder<HardshrinkImpl>;

struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  double threshold() const { return threshold_; }
  double value() const { return value_; }
 private:
  double threshold_, value_;
};
class ThresholdImpl : public Module {
 public:
  explicit ThresholdImpl(const ThresholdOptions& options) : options(options) {}
  ThresholdImpl(double threshold, double value) : options(threshold, value) {}
  std::string name() const override { return "Threshold"; }
  std::string extra_repr() const override {
    return "threshold=" + detail::python_float_repr(options.threshold()) + ", value=" + detail::python_float_repr(options.value());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return lazy(x); }
  template <Expression E>
  auto lazy(const E& x) const { return F::threshold(x, options.threshold(), options.value()); }
  ThresholdOptions options;
};
using Threshold = ModuleHolder<ThresholdImpl>;

struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT: implicit, nn::GLU(1)
  int64_t dim() const { return dim_; }
 private:
  int64_t dim_;
};
class GLUImpl : public Module {
 public:
  explicit GLUImpl(const GLUOptions& options = {}) : options(options) {}
  std::string name() const override { return "GLU"; }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return F::glu(x, options.dim()); }
  GLUOptions options;
};
using GLU = ModuleHolder<GLUImpl>;

// Softmax and LogSoftmax over a dim (libtorch: SoftmaxOptions(dim)).
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, nn::Softmax(1)
  int64_t dim() const { return dim_; }
 private:
  int64_t dim_;
};
using LogSoftmaxOptions = SoftmaxOptions;
class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : options(options) {}
  std::string name() const override { return "Softmax"; }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return F::softmax(x, options.dim()); }
  SoftmaxOptions options;
};
using Softmax = ModuleHolder<SoftmaxImpl>;
class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : options(options) {}
  std::string name() const override { return "LogSoftmax"; }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return F::log_softmax(x, options.dim()); }
  LogSoftmaxOptions options;
};
using LogSoftmax = ModuleHolder<LogSoftmaxImpl>;
using SoftminOptions = SoftmaxOptions;
class SoftminImpl : public Module {
 public:
  explicit SoftminImpl(const SoftminOptions& options) : options(options) {}
  std::string name() const override { return "Softmin"; }
  std::string extra_repr() const override { return "dim=" + std::to_string(options.dim()); }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return F::softmin(x, options.dim()); }
  SoftminOptions options;
};
using Softmin = ModuleHolder<SoftminImpl>;

// PReLU: x where x > 0, weight * x elsewhere, with one learned weight or
// one per channel (num_parameters), initialized to `init`.
struct PReLUOptions {
  PReLUOptions& num_parameters(int64_t v) { num_parameters_ = v; return *this; }
  PReLUOptions& init(double v) { init_ = v; return *this; }
  int64_t num_parameters() const { return num_parameters_; }
  double init() const { return init_; }
 private:
  int64_t num_parameters_ = 1;
  double init_ = 0.25;
};
class PReLUImpl : public Module {
 public:
  explicit PReLUImpl(const PReLUOptions& options = {})
      : options(options), weight(register_parameter("weight", full<float>({options.num_parameters()}, float(options.init())))) {}
  std::string name() const override { return "PReLU"; }
  std::string extra_repr() const override { return "num_parameters=" + std::to_string(options.num_parameters()); }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const { return F::prelu(x, weight.as<T>()); }
  PReLUOptions options;
  AnyTensor& weight;
};
using PReLU = ModuleHolder<PReLUImpl>;

}  // namespace tsr::nn
