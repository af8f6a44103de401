// Linear, Identity and Flatten: modules and functional forms.
#pragma once
#include <cmath>
#include <string>

#include "fused_activation.hpp"
#include "holder.hpp"
#include "init.hpp"

namespace tsr::detail {
// act(x W^T + b) with the activation in the product's epilogue (the bias is
// the product's starting value, as in addmm). x is (..., in), its leading
// dims folded into the rows of one product. (On a device: the product, then
// the activation.)
template <class T>
Tensor<T> linear_activated(const Tensor<T>& x, const Tensor<T>& w, const Tensor<T>& b, Activation act) {
  const bool fusable = act != Activation::none && w.dim() == 2 && x.dim() >= 2 && x.size(-1) == w.size(1) &&
                       (!b.defined() || b.dim() <= 1) && x.device().is_cpu() && w.device().is_cpu();
  if (!fusable) return activate(b.defined() ? tsr::linear(x, w, b) : tsr::linear(x, w), act);
  const Tensor<T> rows = x.dim() == 2 ? x : x.reshape({-1, x.size(-1)}), wt = w.t();
  auto out = Tensor<T>::allocate({rows.size(0), w.size(0)});
  if (b.defined()) unrecorded([&] { out.copy_(b.expand(out.sizes())); });
  const BiasActivation<T> work{nullptr, act};
  matmul_into(rows.size(0), w.size(0), w.size(1), T(1), mat_view(rows), mat_view(wt), b.defined() ? T(1) : T(0),
              mat_span(out), true, epilogue_of(work));
  const Tensor<T> pre = pre_activation(out, act);
  if (b.defined()) record_op<autograd::tag::Addmm>(pre, b, rows, wt, T(1), T(1));
  else record_op<autograd::tag::Matmul>(pre, rows, wt, kMmBackward);
  record_activation(out, pre, act);
  if (x.dim() == 2) return out;
  Shape shape(x.sizes().begin(), x.sizes().end() - 1);
  shape.push_back(w.size(0));
  return out.view(shape);
}
}  // namespace tsr::detail

namespace tsr::nn {

namespace functional {
// x W^T + b (b may be undefined): the product with the bias as its
// starting value, one pass.
template <class T>
Tensor<T> linear(const Tensor<T>& x, const Tensor<T>& weight, const Tensor<T>& bias = {}) {
  if (bias.defined()) return tsr::linear(x, weight, bias);
  return tsr::linear(x, weight);
}
}  // namespace functional
namespace F = functional;

// ----- Identity ---------------------------------------------------------------
class IdentityImpl : public Module {
 public:
  std::string name() const override { return "Identity"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return x;
  }
};
using Identity = ModuleHolder<IdentityImpl>;

// ----- Linear -------------------------------------------------------------------
struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  LinearOptions& bias(bool on) {
    bias_ = on;
    return *this;
  }
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_features_, out_features_;
  bool bias_ = true;
};

// y = x W^T + b, W of shape (out_features, in_features). Initialized as
// PyTorch's: W ~ kaiming_uniform_(a = sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in))
// up to rounding, then b ~ U(-1/sqrt(in), 1/sqrt(in)).
class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options)
      : options(options),
        weight(register_parameter("weight", empty<float>({checked(options.out_features()), checked(options.in_features())}))),
        bias(register_parameter("bias", options.bias() ? AnyTensor(empty<float>({options.out_features()})) : AnyTensor())) {
    reset_parameters();
  }
  void reset_parameters() { detail::init_affine(weight, bias); }

  std::string name() const override { return "Linear"; }
  std::string extra_repr() const override {
    return "in_features=" + std::to_string(options.in_features()) + ", out_features=" +
           std::to_string(options.out_features()) + ", bias=" + (bias.defined() ? "True" : "False");
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return F::linear(x, weight.as<T>(), bias.defined() ? bias.as<T>() : Tensor<T>());
  }
  // act(forward(x)), the activation computed in the product's epilogue
  // (Sequential and nn::Static call this for a Linear followed by ReLU,
  // Tanh or Sigmoid).
  template <detail::FloatElement T>
  Tensor<T> forward_activated(const Tensor<T>& x, detail::Activation act) const {
    return detail::linear_activated(x, weight.as<T>(), bias.defined() ? bias.as<T>() : Tensor<T>(), act);
  }

  LinearOptions options;
  AnyTensor& weight;
  AnyTensor& bias;  // undefined without a bias

 private:
  static int64_t checked(int64_t n) {
    detail::check(n >= 0, "Trying to create tensor with negative dimension ", n);
    return n;
  }
};
using Linear = ModuleHolder<LinearImpl>;

// ----- Flatten --------------------------------------------------------------------
struct FlattenOptions {
  FlattenOptions& start_dim(int64_t d) {
    start_dim_ = d;
    return *this;
  }
  FlattenOptions& end_dim(int64_t d) {
    end_dim_ = d;
    return *this;
  }
  int64_t start_dim() const { return start_dim_; }
  int64_t end_dim() const { return end_dim_; }

 private:
  int64_t start_dim_ = 1, end_dim_ = -1;
};
class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : options(options) {}
  std::string name() const override { return "Flatten"; }
  std::string extra_repr() const override {
    return "start_dim=" + std::to_string(options.start_dim()) + ", end_dim=" + std::to_string(options.end_dim());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return x.flatten(options.start_dim(), options.end_dim());
  }
  FlattenOptions options;
};
using Flatten = ModuleHolder<FlattenImpl>;

// ----- Unflatten -------------------------------------------------------------------
// Splits dim into unflattened_size (one entry may be -1).
struct UnflattenOptions {
  UnflattenOptions(int64_t dim, Shape sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  int64_t dim() const { return dim_; }
  const Shape& sizes() const { return sizes_; }

 private:
  int64_t dim_;
  Shape sizes_;
};
class UnflattenImpl : public Module {
 public:
  explicit UnflattenImpl(const UnflattenOptions& options) : options(options) {}
  UnflattenImpl(int64_t dim, Shape sizes) : options(dim, std::move(sizes)) {}
  std::string name() const override { return "Unflatten"; }
  std::string extra_repr() const override {
    std::string s = "dim=" + std::to_string(options.dim()) + ", unflattened_size=(";
    for (std::size_t i = 0; i < options.sizes().size(); ++i) s += (i ? ", " : "") + std::to_string(options.sizes()[i]);
    return s + (options.sizes().size() == 1 ? ",)" : ")");
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    const int64_t d = detail::wrap_dim(options.dim(), x.dim());
    Shape shape;
    for (int64_t i = 0; i < x.dim(); ++i) {
      if (i != d) {
        shape.push_back(x.size(i));
        continue;
      }
      for (int64_t s : options.sizes()) shape.push_back(s);
    }
    return x.view(shape);
  }
  UnflattenOptions options;
};
using Unflatten = ModuleHolder<UnflattenImpl>;

}  // namespace tsr::nn
