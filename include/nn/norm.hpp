// Normalization layers: BatchNorm1d/2d/3d, LayerNorm, GroupNorm,
// InstanceNorm1d/2d/3d, LocalResponseNorm.
//
// Each normalizes with the mean and biased variance of its statistics'
// dims, written with the differentiable reductions (mean, var): their
// backward passes give the normalization's, and derivatives of any order
// follow.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "activation.hpp"  // python_float_repr
#include "holder.hpp"

namespace tsr::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit
  BatchNormOptions& eps(double v) { eps_ = v; return *this; }
  // None (std::nullopt): a cumulative average of the batches seen.
  BatchNormOptions& momentum(std::optional<double> v) { momentum_ = v; return *this; }
  BatchNormOptions& affine(bool v) { affine_ = v; return *this; }
  BatchNormOptions& track_running_stats(bool v) { track_running_stats_ = v; return *this; }
  int64_t num_features() const { return num_features_; }
  double eps() const { return eps_; }
  std::optional<double> momentum() const { return momentum_; }
  bool affine() const { return affine_; }
  bool track_running_stats() const { return track_running_stats_; }

 private:
  int64_t num_features_;
  double eps_ = 1e-5;
  std::optional<double> momentum_ = 0.1;
  bool affine_ = true, track_running_stats_ = true;
};

namespace functional {

// Batch normalization over dim 1. Training: the batch's statistics, and
// the running ones (when given) moved toward them by `momentum`, the
// variance unbiased; otherwise the running statistics.
template <detail::FloatElement T>
Tensor<T> batch_norm(const Tensor<T>& x, Tensor<T> running_mean, Tensor<T> running_var, const Tensor<T>& weight,
                     const Tensor<T>& bias, bool training, double momentum, double eps) {
  detail::check(x.dim() >= 2, "batch_norm: expected an input of at least 2 dimensions, got ", x.sizes());
  const int64_t c = x.size(1);
  Shape dims{0}, per_channel(static_cast<std::size_t>(x.dim()), 1);
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  per_channel[1] = c;
  Tensor<T> y;
  if (training) {
    const int64_t count = x.numel() / std::max<int64_t>(c, 1);
    detail::check(count > 1, "Expected more than 1 value per channel when training, got input size ", detail::torch_size(x.sizes()));
    const Tensor<T> mu = mean(x, dims, true), var = tsr::var(x, dims, 0, true);
    y = (x - mu) / sqrt(var + T(eps));
    if (running_mean.defined()) {
      const NoGradGuard no_grad;
      const T m = T(momentum);
      running_mean.copy_(running_mean * (1 - m) + mu.detach().reshape({c}) * m);
      running_var.copy_(running_var * (1 - m) + var.detach().reshape({c}) * (m * T(count) / T(count - 1)));
    }
  } else {
    detail::check(running_mean.defined() && running_var.defined(),
                  "batch_norm: running_mean and running_var must be defined in evaluation mode");
    y = (x - running_mean.view(per_channel)) / sqrt(running_var.view(per_channel) + T(eps));
  }
  if (weight.defined()) y = y * weight.view(per_channel);
  if (bias.defined()) y = y + bias.view(per_channel);
  return y;
}

// Normalization over the last normalized_shape.size() dims, which must be
// normalized_shape.
template <detail::FloatElement T>
Tensor<T> layer_norm(const Tensor<T>& x, const Shape& normalized_shape, const Tensor<T>& weight = {},
                     const Tensor<T>& bias = {}, double eps = 1e-5) {
  const auto k = static_cast<int64_t>(normalized_shape.size());
  bool fits = k >= 1 && x.dim() >= k;
  for (int64_t i = 0; fits && i < k; ++i) fits = x.size(x.dim() - k + i) == normalized_shape[static_cast<std::size_t>(i)];
  if (!fits) {
    std::ostringstream os;
    os << "Given normalized_shape=" << normalized_shape << ", expected input with shape [*";
    for (int64_t s : normalized_shape) os << ", " << s;
    os << "], but got input of size" << x.sizes();
    throw Error(os.str());
  }
  Shape dims;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  const Tensor<T> mu = mean(x, dims, true), var = tsr::var(x, dims, 0, true);
  Tensor<T> y = (x - mu) / sqrt(var + T(eps));
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

// Normalization of each instance's channels over their own spatial dims:
// x (N, C, *) as a batch norm over a batch of one with N C channels.
// With running statistics, those are updated (use_input_stats) by the
// mean of the instances' statistics, or used instead of them.
template <detail::FloatElement T>
Tensor<T> instance_norm(const Tensor<T>& x, Tensor<T> running_mean = {}, Tensor<T> running_var = {},
                        const Tensor<T>& weight = {}, const Tensor<T>& bias = {}, bool use_input_stats = true, double momentum = 0.1,
                        double eps = 1e-5) {
  detail::check(x.dim() >= 3, "instance_norm: expected an input of at least 3 dimensions (N, C, *), got ", x.sizes());
  const int64_t n = x.size(0), c = x.size(1);
  detail::check(!use_input_stats || x.numel() / std::max<int64_t>(n * c, 1) > 1,
                "Expected more than 1 spatial element when training, got input size ", detail::torch_size(x.sizes()));
  Shape folded = x.sizes();
  folded[0] = 1;
  folded[1] = n * c;
  // Each channel's statistics and affine parameters, once per instance (as PyTorch's).
  auto per_instance = [n](const Tensor<T>& t) { return t.defined() ? repeat(t, {n}) : Tensor<T>(); };
  const bool running = running_mean.defined() && running_var.defined();
  const Tensor<T> mean_n = running ? per_instance(running_mean.detach()) : Tensor<T>();
  const Tensor<T> var_n = running ? per_instance(running_var.detach()) : Tensor<T>();
  Tensor<T> y = batch_norm(x.reshape(folded), mean_n, var_n, per_instance(weight), per_instance(bias), use_input_stats, momentum, eps);
  if (running && use_input_stats) {
    const NoGradGuard no_grad;
    running_mean.copy_(mean(mean_n.view({n, c}), Shape{0}));
    running_var.copy_(mean(var_n.view({n, c}), Shape{0}));
  }
  return y.view(x.sizes());
}

// Normalization over groups of channels: x (N, C, *) seen as (N, G, C/G *).
template <detail::FloatElement T>
Tensor<T> group_norm(const Tensor<T>& x, int64_t num_groups, const Tensor<T>& weight = {}, const Tensor<T>& bias = {},
                     double eps = 1e-5) {
  detail::check(x.dim() >= 2, "group_norm: expected an input of at least 2 dimensions, got ", x.sizes());
  const int64_t n = x.size(0), c = x.size(1);
  detail::check(num_groups > 0 && c % num_groups == 0, "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
                x.sizes(), " and num_groups=", num_groups);
  const Tensor<T> grouped = x.reshape({n, num_groups, -1});
  const Tensor<T> mu = mean(grouped, 2, true), var = tsr::var(grouped, Shape{2}, 0, true);
  Tensor<T> y = Tensor<T>((grouped - mu) / sqrt(var + T(eps))).view(x.sizes());
  Shape per_channel(static_cast<std::size_t>(x.dim()), 1);
  per_channel[1] = c;
  if (weight.defined()) y = y * weight.view(per_channel);
  if (bias.defined()) y = y + bias.view(per_channel);
  return y;
}

}  // namespace functional
namespace F = functional;

// What BatchNorm and InstanceNorm hold, under PyTorch's names: the affine
// weight and bias (when affine), the running statistics and the count of
// training calls (when tracked).
class NormStateModule : public Module {
 public:
  AnyTensor& weight;
  AnyTensor& bias;
  AnyTensor& running_mean;
  AnyTensor& running_var;
  AnyTensor& num_batches_tracked;

 protected:
  NormStateModule(int64_t features, bool affine, bool track)
      : weight(register_parameter("weight", affine ? AnyTensor(ones<float>({features})) : AnyTensor())),
        bias(register_parameter("bias", affine ? AnyTensor(zeros<float>({features})) : AnyTensor())),
        running_mean(register_buffer("running_mean", track ? AnyTensor(zeros<float>({features})) : AnyTensor())),
        running_var(register_buffer("running_var", track ? AnyTensor(ones<float>({features})) : AnyTensor())),
        num_batches_tracked(register_buffer("num_batches_tracked", track ? AnyTensor(zeros<int64_t>({})) : AnyTensor())) {}
  // Counts a training call; returns the new count.
  int64_t count_batch() const {
    auto& count = num_batches_tracked.as<int64_t>();
    count.fill_(count.item() + 1);
    return count.item();
  }
  // A parameter or buffer as T, undefined where it is not held.
  template <class T>
  static Tensor<T> typed(const AnyTensor& t) {
    return t.defined() ? t.as<T>() : Tensor<T>();
  }
};

// BatchNorm1d (input (N, C) or (N, C, L)), BatchNorm2d ((N, C, H, W)) and
// BatchNorm3d ((N, C, D, H, W)).
template <std::size_t D>
class BatchNormImpl : public NormStateModule {
 public:
  explicit BatchNormImpl(const BatchNormOptions& options)
      : NormStateModule(options.num_features(), options.affine(), options.track_running_stats()), options(options) {}
  std::string name() const override { return "BatchNorm" + std::to_string(D) + "d"; }
  std::string extra_repr() const override {
    return std::to_string(options.num_features()) + ", eps=" + detail::python_float_repr(options.eps()) + ", momentum=" +
           (options.momentum() ? detail::python_float_repr(*options.momentum()) : "None") +
           ", affine=" + (options.affine() ? "True" : "False") +
           ", track_running_stats=" + (options.track_running_stats() ? "True" : "False");
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    if constexpr (D == 1) {
      detail::check(x.dim() == 2 || x.dim() == 3, "expected 2D or 3D input (got ", x.dim(), "D input)");
    } else {
      detail::check(x.dim() == D + 2, "expected ", D + 2, "D input (got ", x.dim(), "D input)");
    }
    detail::check(x.size(1) == options.num_features(), "running_mean should contain ", x.size(1),
                  " elements not ", options.num_features());
    double factor = options.momentum().value_or(0.0);
    if (is_training() && options.track_running_stats()) {
      const int64_t count = count_batch();
      if (!options.momentum()) factor = 1.0 / static_cast<double>(count);
    }
    const bool batch_stats = is_training() || !options.track_running_stats();
    const bool update = is_training() && options.track_running_stats();
    return F::batch_norm(x, update || !batch_stats ? typed<T>(running_mean) : Tensor<T>(),
                         update || !batch_stats ? typed<T>(running_var) : Tensor<T>(), typed<T>(weight), typed<T>(bias),
                         batch_stats, factor, options.eps());
  }

  BatchNormOptions options;
};
using BatchNorm1dImpl = BatchNormImpl<1>;
using BatchNorm2dImpl = BatchNormImpl<2>;
using BatchNorm1d = ModuleHolder<BatchNorm1dImpl>;
using BatchNorm2d = ModuleHolder<BatchNorm2dImpl>;
using BatchNorm3dImpl = BatchNormImpl<3>;
using BatchNorm3d = ModuleHolder<BatchNorm3dImpl>;
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;
using BatchNorm3dOptions = BatchNormOptions;

struct LayerNormOptions {
  LayerNormOptions(Shape normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT: implicit
  LayerNormOptions& eps(double v) { eps_ = v; return *this; }
  LayerNormOptions& elementwise_affine(bool v) { elementwise_affine_ = v; return *this; }
  const Shape& normalized_shape() const { return normalized_shape_; }
  double eps() const { return eps_; }
  bool elementwise_affine() const { return elementwise_affine_; }

 private:
  Shape normalized_shape_;
  double eps_ = 1e-5;
  bool elementwise_affine_ = true;
};
class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options)
      : options(options),
        weight(register_parameter("weight", options.elementwise_affine() ? AnyTensor(ones<float>(options.normalized_shape())) : AnyTensor())),
        bias(register_parameter("bias", options.elementwise_affine() ? AnyTensor(zeros<float>(options.normalized_shape())) : AnyTensor())) {}
  std::string name() const override { return "LayerNorm"; }
  std::string extra_repr() const override {
    std::string s = "(";
    const Shape& ns = options.normalized_shape();
    for (std::size_t i = 0; i < ns.size(); ++i) s += (i ? ", " : "") + std::to_string(ns[i]);
    s += ns.size() == 1 ? ",)" : ")";
    return s + ", eps=" + detail::python_float_repr(options.eps()) +
           ", elementwise_affine=" + (options.elementwise_affine() ? "True" : "False");
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return F::layer_norm(x, options.normalized_shape(), weight.defined() ? weight.as<T>() : Tensor<T>(),
                         bias.defined() ? bias.as<T>() : Tensor<T>(), options.eps());
  }
  LayerNormOptions options;
  AnyTensor& weight;
  AnyTensor& bias;
};
using LayerNorm = ModuleHolder<LayerNormImpl>;

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  GroupNormOptions& eps(double v) { eps_ = v; return *this; }
  GroupNormOptions& affine(bool v) { affine_ = v; return *this; }
  int64_t num_groups() const { return num_groups_; }
  int64_t num_channels() const { return num_channels_; }
  double eps() const { return eps_; }
  bool affine() const { return affine_; }

 private:
  int64_t num_groups_, num_channels_;
  double eps_ = 1e-5;
  bool affine_ = true;
};
class GroupNormImpl : public Module {
 public:
  explicit GroupNormImpl(const GroupNormOptions& options)
      : options(options),
        weight(register_parameter("weight", options.affine() ? AnyTensor(ones<float>({options.num_channels()})) : AnyTensor())),
        bias(register_parameter("bias", options.affine() ? AnyTensor(zeros<float>({options.num_channels()})) : AnyTensor())) {
    detail::check<ValueError>(options.num_groups() > 0 && options.num_channels() % options.num_groups() == 0,
                              "num_channels must be divisible by num_groups");
  }
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  std::string name() const override { return "GroupNorm"; }
  std::string extra_repr() const override {
    return std::to_string(options.num_groups()) + ", " + std::to_string(options.num_channels()) +
           ", eps=" + detail::python_float_repr(options.eps()) + ", affine=" + (options.affine() ? "True" : "False");
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return F::group_norm(x, options.num_groups(), weight.defined() ? weight.as<T>() : Tensor<T>(),
                         bias.defined() ? bias.as<T>() : Tensor<T>(), options.eps());
  }
  GroupNormOptions options;
  AnyTensor& weight;
  AnyTensor& bias;
};
using GroupNorm = ModuleHolder<GroupNormImpl>;

// InstanceNorm1d and InstanceNorm2d (libtorch: InstanceNormOptions): no
// affine parameters and no running statistics unless asked for.
struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit
  InstanceNormOptions& eps(double v) { eps_ = v; return *this; }
  InstanceNormOptions& momentum(double v) { momentum_ = v; return *this; }
  InstanceNormOptions& affine(bool v) { affine_ = v; return *this; }
  InstanceNormOptions& track_running_stats(bool v) { track_running_stats_ = v; return *this; }
  int64_t num_features() const { return num_features_; }
  double eps() const { return eps_; }
  double momentum() const { return momentum_; }
  bool affine() const { return affine_; }
  bool track_running_stats() const { return track_running_stats_; }

 private:
  int64_t num_features_;
  double eps_ = 1e-5, momentum_ = 0.1;
  bool affine_ = false, track_running_stats_ = false;
};
template <int D>
class InstanceNormImpl : public NormStateModule {
 public:
  explicit InstanceNormImpl(const InstanceNormOptions& options)
      : NormStateModule(options.num_features(), options.affine(), options.track_running_stats()), options(options) {}
  std::string name() const override { return "InstanceNorm" + std::to_string(D) + "d"; }
  std::string extra_repr() const override {
    return std::to_string(options.num_features()) + ", eps=" + detail::python_float_repr(options.eps()) +
           ", momentum=" + detail::python_float_repr(options.momentum()) + ", affine=" + (options.affine() ? "True" : "False") +
           ", track_running_stats=" + (options.track_running_stats() ? "True" : "False");
  }
  // (C, *) without a batch dim too, as PyTorch's.
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    detail::check(x.dim() == D + 1 || x.dim() == D + 2, "expected ", D + 1, "D or ", D + 2, "D input (got ", x.dim(), "D input)");
    if (x.dim() == D + 1) return forward(x.unsqueeze(0)).squeeze(0);
    const bool use_input_stats = is_training() || !options.track_running_stats();
    if (is_training() && options.track_running_stats()) count_batch();
    return F::instance_norm(x, typed<T>(running_mean), typed<T>(running_var), typed<T>(weight), typed<T>(bias), use_input_stats,
                            options.momentum(), options.eps());
  }
  InstanceNormOptions options;
};
using InstanceNorm1dImpl = InstanceNormImpl<1>;
using InstanceNorm2dImpl = InstanceNormImpl<2>;
using InstanceNorm1d = ModuleHolder<InstanceNorm1dImpl>;
using InstanceNorm2d = ModuleHolder<InstanceNorm2dImpl>;
using InstanceNorm3dImpl = InstanceNormImpl<3>;
using InstanceNorm3d = ModuleHolder<InstanceNorm3dImpl>;
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

// ----- LocalResponseNorm ----------------------------------------------------------
// libtorch: LocalResponseNormOptions(size).alpha(1e-4).beta(0.75).k(1).
struct LocalResponseNormOptions {
  LocalResponseNormOptions(int64_t size) : size_(size) {}  // NOLINT: implicit, nn::LocalResponseNorm(2)
  LocalResponseNormOptions& alpha(double v) { alpha_ = v; return *this; }
  LocalResponseNormOptions& beta(double v) { beta_ = v; return *this; }
  LocalResponseNormOptions& k(double v) { k_ = v; return *this; }
  int64_t size() const { return size_; }
  double alpha() const { return alpha_; }
  double beta() const { return beta_; }
  double k() const { return k_; }

 private:
  int64_t size_;
  double alpha_ = 1e-4, beta_ = 0.75, k_ = 1;
};

namespace functional {
using LocalResponseNormFuncOptions = LocalResponseNormOptions;

// x / (k + alpha / size * sum of x^2 over the `size` channels around each
// one)^beta, for x (N, C, *): the window over channels c - size / 2 to
// c + (size - 1) / 2, zero past the ends (PyTorch's average pool over a
// zero-padded channel axis).
template <detail::FloatElement T>
Tensor<T> local_response_norm(const Tensor<T>& x, const LocalResponseNormFuncOptions& o) {
  detail::check(x.dim() >= 3, "Expected 3D or higher dimensionality input (got ", x.dim(), " dimensions)");
  detail::check(o.size() > 0, "local_response_norm: size must be positive, got ", o.size());
  if (x.numel() == 0) return x;
  const int64_t channels = x.size(1), before = o.size() / 2, after = (o.size() - 1) / 2;
  const Tensor<T> squares = square(x);
  Shape pad_before = x.sizes(), pad_after = x.sizes();
  pad_before[1] = before;
  pad_after[1] = after;
  const Tensor<T> padded = cat({zeros<T>(pad_before, x.device()), squares, zeros<T>(pad_after, x.device())}, 1);
  Tensor<T> window = padded.narrow(1, 0, channels);
  for (int64_t j = 1; j < o.size(); ++j) window = window + padded.narrow(1, j, channels);
  const Tensor<T> denominator = pow(window * T(o.alpha() / double(o.size())) + T(o.k()), T(o.beta()));
  return x / denominator;
}
}  // namespace functional

class LocalResponseNormImpl : public Module {
 public:
  explicit LocalResponseNormImpl(const LocalResponseNormOptions& options) : options(options) {}
  std::string name() const override { return "LocalResponseNorm"; }
  std::string extra_repr() const override {
    return std::to_string(options.size()) + ", alpha=" + detail::python_float_repr(options.alpha()) +
           ", beta=" + detail::python_float_repr(options.beta()) + ", k=" + detail::python_float_repr(options.k());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return F::local_response_norm(x, options);
  }
  LocalResponseNormOptions options;
};
using LocalResponseNorm = ModuleHolder<LocalResponseNormImpl>;

}  // namespace tsr::nn
