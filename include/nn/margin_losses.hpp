// The margin losses of classification beside the ones in loss.hpp:
// soft_margin_loss, multilabel_soft_margin_loss, hinge_embedding_loss,
// multi_margin_loss and multilabel_margin_loss, functional and as modules,
// with PyTorch 1.13's formulas, reductions and errors.
#pragma once
#include <string>

#include "activation.hpp"
#include "loss.hpp"

namespace tsr::nn {

struct SoftMarginLossOptions : LossOptionsBase<SoftMarginLossOptions> {};
struct MultiLabelSoftMarginLossOptions : LossOptionsBase<MultiLabelSoftMarginLossOptions> {
  MultiLabelSoftMarginLossOptions& weight(AnyTensor w) {
    weight_ = std::move(w);
    return *this;
  }
  const AnyTensor& weight() const { return weight_; }

 private:
  AnyTensor weight_;
};
struct HingeEmbeddingLossOptions : LossOptionsBase<HingeEmbeddingLossOptions> {
  HingeEmbeddingLossOptions& margin(double v) {
    margin_ = v;
    return *this;
  }
  double margin() const { return margin_; }

 private:
  double margin_ = 1;
};
struct MultiMarginLossOptions : LossOptionsBase<MultiMarginLossOptions> {
  MultiMarginLossOptions& p(int64_t v) {
    p_ = v;
    return *this;
  }
  MultiMarginLossOptions& margin(double v) {
    margin_ = v;
    return *this;
  }
  MultiMarginLossOptions& weight(AnyTensor w) {
    weight_ = std::move(w);
    return *this;
  }
  int64_t p() const { return p_; }
  double margin() const { return margin_; }
  const AnyTensor& weight() const { return weight_; }

 private:
  int64_t p_ = 1;
  double margin_ = 1;
  AnyTensor weight_;
};

struct MultiLabelMarginLossOptions : LossOptionsBase<MultiLabelMarginLossOptions> {};

namespace functional {
using MultiLabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using MultiLabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using MultiMarginLossFuncOptions = MultiMarginLossOptions;

// log(1 + exp(-y x)) for labels y of 1 or -1 (computed without overflow
// for large -y x, where PyTorch's log1p(exp(.)) gives inf).
template <detail::FloatElement T>
Tensor<T> soft_margin_loss(const Tensor<T>& input, const Tensor<T>& target, const SoftMarginLossOptions& o = {}) {
  detail::check(input.numel() == target.numel(), "soft_margin_loss: input and target must have the same number of "
                                                  "elements, got ", input.sizes(), " and ", target.sizes());
  const auto z = -target * input;
  return detail::reduce_loss<T>(clamp_min(z, T(0)) + log1p(exp(-abs(z))), o.reduction());
}

// -(y log sigmoid(x) + (1 - y) log sigmoid(-x)) for multi-hot targets y,
// times the class weights if given, averaged over the classes (the last
// dim), then reduced over the samples.
template <detail::FloatElement T>
Tensor<T> multilabel_soft_margin_loss(const Tensor<T>& input, const Tensor<T>& target,
                                      const MultiLabelSoftMarginLossOptions& o = {}) {
  detail::check(input.sizes() == target.sizes(), "multilabel_soft_margin_loss: input and target must have the same "
                                                 "shape, got ", input.sizes(), " and ", target.sizes());
  Tensor<T> loss = -(target * logsigmoid(input) + (T(1) - target) * logsigmoid(-input));
  if (o.weight().defined()) loss = loss * o.weight().as<T>();
  const int64_t classes = input.dim() == 0 ? 1 : input.size(-1);
  const Tensor<T> per_sample = sum(loss, Shape{std::max<int64_t>(input.dim() - 1, 0)}) / T(classes);
  return detail::reduce_loss<T>(per_sample, o.reduction());
}

// x where y is 1, max(0, margin - x) where y is -1.
template <detail::FloatElement T>
Tensor<T> hinge_embedding_loss(const Tensor<T>& input, const Tensor<T>& target, const HingeEmbeddingLossOptions& o = {}) {
  const auto from_margin = where(target != T(1), clamp_min(T(o.margin()) - input, T(0)), T(0));
  const auto from_input = where(target != T(-1), input, T(0));
  return detail::reduce_loss<T>(from_margin + from_input, o.reduction());
}

// For each sample i with class y_i: the sum over the other classes j of
// max(0, margin - x[y_i] + x[j])^p (times weight[y_i] if given), over the
// number of classes. input (N, C) or (C); target (N) or () int64.
template <detail::FloatElement T>
Tensor<T> multi_margin_loss(const Tensor<T>& input, const Tensor<int64_t>& target, const MultiMarginLossOptions& o = {}) {
  detail::check(o.p() == 1 || o.p() == 2, "only p == 1 and p == 2 supported");
  detail::check(input.dim() <= 2 && input.numel() > 0,
                "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", input.sizes());
  const Tensor<T> x = input.dim() < 2 ? input.reshape({1, -1}) : input;
  const Tensor<int64_t> y = target.reshape({-1});
  detail::check(y.numel() == x.size(0), "inconsistent target size, got: ", target.sizes());
  const int64_t classes = x.size(1);
  const Tensor<int64_t> host_y = detail::host_contiguous(y);
  for (int64_t i = 0; i < host_y.numel(); ++i)
    detail::check<IndexError>(host_y.data_ptr()[i] >= 0 && host_y.data_ptr()[i] < classes, "target out of range");
  const Tensor<T> own = gather(x, 1, y.unsqueeze(1));  // x[i][y_i], (N, 1)
  Tensor<T> margins = clamp_min(T(o.margin()) - own + x, T(0));
  if (o.p() == 2) margins = square(margins);
  if (o.weight().defined()) margins = margins * index_select(o.weight().as<T>(), 0, y).unsqueeze(1);
  // The class itself takes no part.
  const Tensor<bool> own_class = y.unsqueeze(1) == arange<int64_t>(0, classes).to(x.device()).unsqueeze(0);
  Tensor<T> per_sample = sum(where(own_class, T(0), margins), Shape{1}) / T(classes);
  if (input.dim() < 2) per_sample = per_sample.reshape({});
  return detail::reduce_loss<T>(per_sample, o.reduction());
}


// For each sample: its target classes are target's entries up to the first
// -1; the loss is the sum over target classes j and non-target classes i of
// max(0, 1 - (x[j] - x[i])), over the number of classes (a class listed
// twice counts twice). input (N, C), (C) or (); target int64 of its shape.
template <detail::FloatElement T>
Tensor<T> multilabel_margin_loss(const Tensor<T>& input, const Tensor<int64_t>& target,
                                 const MultiLabelMarginLossOptions& o = {}) {
  detail::check(input.dim() == 0 || (input.dim() <= 2 && input.size(-1) != 0),
                "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", input.sizes());
  const int64_t classes = input.dim() == 0 ? 1 : input.size(-1);
  const bool batched = input.dim() == 2;
  detail::check(batched ? target.sizes() == input.sizes() : target.dim() <= 1 && target.numel() == classes,
                "inconsistent size ", target.sizes(), " for argument #2 'target'");
  const Tensor<T> x = input.reshape({-1, classes});
  const Tensor<int64_t> y = detail::host_contiguous(target.reshape({-1, classes}));
  // On the host: which target slots count, which classes are targets, and
  // each counted slot's class (0 for the others, which are masked out).
  auto counted_slot = zeros<bool>(x.sizes()), is_target = zeros<bool>(x.sizes());
  auto slot_class = zeros<int64_t>(x.sizes());
  for (int64_t i = 0; i < y.numel(); ++i)
    detail::check(y.data_ptr()[i] >= -1 && y.data_ptr()[i] < classes, "argument #2 'target' is out of range");
  for (int64_t n = 0; n < x.size(0); ++n) {
    for (int64_t j = 0; j < classes && y.data_ptr()[n * classes + j] >= 0; ++j) {
      const int64_t c = y.data_ptr()[n * classes + j];
      counted_slot.data_ptr()[n * classes + j] = true;
      is_target.data_ptr()[n * classes + c] = true;
      slot_class.data_ptr()[n * classes + j] = c;
    }
  }
  const Device device = x.device();
  const Tensor<T> of_target = gather(x, 1, detail::placed_on(slot_class, device)).unsqueeze(2);  // (N, slots, 1)
  const auto margins = clamp_min(T(1) - of_target + x.unsqueeze(1), T(0));                       // (N, slots, classes)
  const Tensor<bool> pairs = detail::placed_on(counted_slot, device).unsqueeze(2) &
                             !detail::placed_on(is_target, device).unsqueeze(1);
  Tensor<T> per_sample = sum(where(pairs, margins, T(0)), Shape{1, 2}) / T(classes);
  if (!batched) per_sample = per_sample.reshape({});
  return detail::reduce_loss<T>(per_sample, o.reduction());
}

}  // namespace functional

class MultiLabelMarginLossImpl : public LossImpl<MultiLabelMarginLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "MultiLabelMarginLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<int64_t>& target) const {
    return F::multilabel_margin_loss(input, target, options);
  }
};
using MultiLabelMarginLoss = ModuleHolder<MultiLabelMarginLossImpl>;

class SoftMarginLossImpl : public LossImpl<SoftMarginLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "SoftMarginLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target) const {
    return F::soft_margin_loss(input, target, options);
  }
};
using SoftMarginLoss = ModuleHolder<SoftMarginLossImpl>;
class MultiLabelSoftMarginLossImpl : public LossImpl<MultiLabelSoftMarginLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "MultiLabelSoftMarginLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target) const {
    return F::multilabel_soft_margin_loss(input, target, options);
  }
};
using MultiLabelSoftMarginLoss = ModuleHolder<MultiLabelSoftMarginLossImpl>;
class HingeEmbeddingLossImpl : public LossImpl<HingeEmbeddingLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "HingeEmbeddingLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target) const {
    return F::hinge_embedding_loss(input, target, options);
  }
};
using HingeEmbeddingLoss = ModuleHolder<HingeEmbeddingLossImpl>;
class MultiMarginLossImpl : public LossImpl<MultiMarginLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "MultiMarginLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<int64_t>& target) const {
    return F::multi_margin_loss(input, target, options);
  }
};
using MultiMarginLoss = ModuleHolder<MultiMarginLossImpl>;

}  // namespace tsr::nn
