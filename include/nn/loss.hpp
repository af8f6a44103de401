// Losses: functional forms (nn::functional) and modules, with PyTorch's
// reductions ("none", "mean", "sum") and formulas. Each elementwise loss is
// one fused expression before its reduction; cross-entropy goes through one
// log_softmax (never log(softmax)), binary cross-entropy with logits
// through PyTorch's overflow-free log-sum-exp form.
#pragma once
#include <functional>
#include <string>

#include "holder.hpp"

namespace tsr::nn {

// BatchMean (the sum divided by the batch size) is KLDivLoss's own.
enum class Reduction { None, Mean, Sum, BatchMean };

}  // namespace tsr::nn

namespace tsr {
// libtorch's spellings: torch::kMean, ...
inline constexpr auto kNone = nn::Reduction::None;
inline constexpr auto kMean = nn::Reduction::Mean;
inline constexpr auto kSum = nn::Reduction::Sum;
inline constexpr auto kBatchMean = nn::Reduction::BatchMean;
}  // namespace tsr

namespace tsr::detail {
// An elementwise loss reduced as asked.
template <class T, class E>
Tensor<T> reduce_loss(const E& loss, nn::Reduction reduction) {
  switch (reduction) {
    case nn::Reduction::Mean: return mean(loss);
    case nn::Reduction::Sum: return sum(loss);
    case nn::Reduction::None: return Tensor<T>(loss);
    default: fail<ValueError>("batchmean is not a valid value for reduction (it is kl_div's only)");
  }
}
// The triplet losses' common part: max(d(a, p) - d(a, n) + margin, 0) for
// the distance d, with min(d(a, n), d(p, n)) for d(a, n) under swap.
template <class T, class Distance, class Options>
Tensor<T> triplet_loss(const Tensor<T>& anchor, const Tensor<T>& positive, const Tensor<T>& negative,
                       const Distance& distance, const Options& o) {
  const Tensor<T> d_ap = distance(anchor, positive);
  Tensor<T> d_an = distance(anchor, negative);
  if (o.swap()) d_an = minimum(d_an, distance(positive, negative));
  return reduce_loss<T>(clamp_min(d_ap - d_an + T(o.margin()), T(0)), o.reduction());
}

// (N, C, d1, ...) as (N d1 ..., C), and its targets (N, d1, ...) as (N d1 ...).
template <class T>
Tensor<T> classes_last(const Tensor<T>& x) {
  if (x.dim() == 2) return x;
  Shape perm{0};
  for (int64_t d = 2; d < x.dim(); ++d) perm.push_back(d);
  perm.push_back(1);
  return x.permute(perm).reshape({-1, x.size(1)});
}

// On a device, gather and index_select (host loops) become a one-hot mask
// over the classes and a sum over them: fused expressions and one
// reduction; where, not a product, so that a -inf elsewhere in a row does
// not make NaN. The mask of (N) class indices over `classes` columns:
inline Tensor<bool> one_hot_mask(const Tensor<int64_t>& index, int64_t classes, Device device) {
  return index.unsqueeze(1) == arange<int64_t>(0, classes).to(device).unsqueeze(0);
}
// Row i's entry at column index[i] of a (N, C) table.
template <class T>
Tensor<T> pick_classes(const Tensor<T>& table, const Tensor<int64_t>& index) {
  if (table.device().is_cpu()) return gather(table, 1, index.unsqueeze(1)).squeeze(1);
  return sum(where(one_hot_mask(index, table.size(1), table.device()), table, T(0)), Shape{1});
}
// The weight of each class index, from a (C) table of class weights.
template <class T>
Tensor<T> class_weights(const Tensor<T>& weight, const Tensor<int64_t>& index) {
  if (weight.device().is_cpu()) return index_select(weight, 0, index);
  return sum(where(one_hot_mask(index, weight.numel(), weight.device()), weight.unsqueeze(0), T(0)), Shape{1});
}
}  // namespace tsr::detail

namespace tsr::nn {

// ----- options ------------------------------------------------------------------
// What every loss takes: the reduction.
template <class Derived>
struct LossOptionsBase {
  Derived& reduction(Reduction r) {
    reduction_ = r;
    return static_cast<Derived&>(*this);
  }
  Reduction reduction() const { return reduction_; }

 private:
  Reduction reduction_ = Reduction::Mean;
};
struct MSELossOptions : LossOptionsBase<MSELossOptions> {};
struct L1LossOptions : LossOptionsBase<L1LossOptions> {};
struct SmoothL1LossOptions : LossOptionsBase<SmoothL1LossOptions> {
  SmoothL1LossOptions& beta(double v) {
    beta_ = v;
    return *this;
  }
  double beta() const { return beta_; }

 private:
  double beta_ = 1.0;
};
struct HuberLossOptions : LossOptionsBase<HuberLossOptions> {
  HuberLossOptions& delta(double v) {
    delta_ = v;
    return *this;
  }
  double delta() const { return delta_; }

 private:
  double delta_ = 1.0;
};
// Class weights (C), ignore_index, and for cross-entropy label_smoothing.
struct NLLLossOptions : LossOptionsBase<NLLLossOptions> {
  NLLLossOptions& weight(AnyTensor w) {
    weight_ = std::move(w);
    return *this;
  }
  NLLLossOptions& ignore_index(int64_t i) {
    ignore_index_ = i;
    return *this;
  }
  const AnyTensor& weight() const { return weight_; }
  int64_t ignore_index() const { return ignore_index_; }

 private:
  AnyTensor weight_;
  int64_t ignore_index_ = -100;
};
struct CrossEntropyLossOptions : LossOptionsBase<CrossEntropyLossOptions> {
  CrossEntropyLossOptions& weight(AnyTensor w) {
    weight_ = std::move(w);
    return *this;
  }
  CrossEntropyLossOptions& ignore_index(int64_t i) {
    ignore_index_ = i;
    return *this;
  }
  CrossEntropyLossOptions& label_smoothing(double s) {
    detail::check(s >= 0 && s <= 1, "label_smoothing must be between 0.0 and 1.0. Got: ", s);
    label_smoothing_ = s;
    return *this;
  }
  const AnyTensor& weight() const { return weight_; }
  int64_t ignore_index() const { return ignore_index_; }
  double label_smoothing() const { return label_smoothing_; }

 private:
  AnyTensor weight_;
  int64_t ignore_index_ = -100;
  double label_smoothing_ = 0;
};
struct BCELossOptions : LossOptionsBase<BCELossOptions> {
  BCELossOptions& weight(AnyTensor w) {
    weight_ = std::move(w);
    return *this;
  }
  const AnyTensor& weight() const { return weight_; }

 private:
  AnyTensor weight_;
};
struct BCEWithLogitsLossOptions : LossOptionsBase<BCEWithLogitsLossOptions> {
  BCEWithLogitsLossOptions& weight(AnyTensor w) {
    weight_ = std::move(w);
    return *this;
  }
  BCEWithLogitsLossOptions& pos_weight(AnyTensor w) {
    pos_weight_ = std::move(w);
    return *this;
  }
  const AnyTensor& weight() const { return weight_; }
  const AnyTensor& pos_weight() const { return pos_weight_; }

 private:
  AnyTensor weight_, pos_weight_;
};

struct KLDivLossOptions : LossOptionsBase<KLDivLossOptions> {
  KLDivLossOptions& log_target(bool v) {
    log_target_ = v;
    return *this;
  }
  bool log_target() const { return log_target_; }

 private:
  bool log_target_ = false;
};
// A margin (CosineEmbeddingLoss: 0, MarginRankingLoss: 0).
template <class Derived>
struct MarginOptions : LossOptionsBase<Derived> {
  Derived& margin(double v) {
    margin_ = v;
    return static_cast<Derived&>(*this);
  }
  double margin() const { return margin_; }

 private:
  double margin_ = 0;
};
// The distances (libtorch: PairwiseDistanceOptions, CosineSimilarityOptions,
// NormalizeFuncOptions).
struct PairwiseDistanceOptions {
  PairwiseDistanceOptions& p(double v) { p_ = v; return *this; }
  PairwiseDistanceOptions& eps(double v) { eps_ = v; return *this; }
  PairwiseDistanceOptions& keepdim(bool v) { keepdim_ = v; return *this; }
  double p() const { return p_; }
  double eps() const { return eps_; }
  bool keepdim() const { return keepdim_; }
 private:
  double p_ = 2, eps_ = 1e-6;
  bool keepdim_ = false;
};
struct CosineSimilarityOptions {
  CosineSimilarityOptions& dim(int64_t v) { dim_ = v; return *this; }
  CosineSimilarityOptions& eps(double v) { eps_ = v; return *this; }
  int64_t dim() const { return dim_; }
  double eps() const { return eps_; }
 private:
  int64_t dim_ = 1;
  double eps_ = 1e-8;
};
struct NormalizeFuncOptions {
  NormalizeFuncOptions& p(double v) { p_ = v; return *this; }
  NormalizeFuncOptions& dim(int64_t v) { dim_ = v; return *this; }
  NormalizeFuncOptions& eps(double v) { eps_ = v; return *this; }
  double p() const { return p_; }
  int64_t dim() const { return dim_; }
  double eps() const { return eps_; }
 private:
  double p_ = 2;
  int64_t dim_ = 1;
  double eps_ = 1e-12;
};
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;
using CosineSimilarityFuncOptions = CosineSimilarityOptions;
struct CosineEmbeddingLossOptions : MarginOptions<CosineEmbeddingLossOptions> {};
struct MarginRankingLossOptions : MarginOptions<MarginRankingLossOptions> {};
struct TripletMarginLossOptions : LossOptionsBase<TripletMarginLossOptions> {
  TripletMarginLossOptions& margin(double v) { margin_ = v; return *this; }
  TripletMarginLossOptions& p(double v) { p_ = v; return *this; }
  TripletMarginLossOptions& eps(double v) { eps_ = v; return *this; }
  TripletMarginLossOptions& swap(bool v) { swap_ = v; return *this; }
  double margin() const { return margin_; }
  double p() const { return p_; }
  double eps() const { return eps_; }
  bool swap() const { return swap_; }

 private:
  double margin_ = 1, p_ = 2, eps_ = 1e-6;
  bool swap_ = false;
};
// TripletMarginWithDistanceLoss's options: the distance between two batches
// of vectors (PyTorch's pairwise_distance where none is given), set from a
// callable of two tensors that is kept for float and double tensors where
// it takes them (a generic lambda, [](const auto& a, const auto& b) {...},
// serves both), the margin, swap and the reduction.
struct TripletMarginWithDistanceLossOptions : LossOptionsBase<TripletMarginWithDistanceLossOptions> {
  template <class T>
  using Distance = std::function<Tensor<T>(const Tensor<T>&, const Tensor<T>&)>;
  template <class F>
  TripletMarginWithDistanceLossOptions& distance_function(F f) {
    static_assert(std::is_invocable_v<const F&, const Tensor<float>&, const Tensor<float>&> ||
                      std::is_invocable_v<const F&, const Tensor<double>&, const Tensor<double>&>,
                  "distance_function takes a callable of two float or double tensors");
    set<float>(f);
    set<double>(f);
    has_distance_ = true;
    return *this;
  }
  TripletMarginWithDistanceLossOptions& margin(double v) { margin_ = v; return *this; }
  TripletMarginWithDistanceLossOptions& swap(bool v) { swap_ = v; return *this; }
  double margin() const { return margin_; }
  bool swap() const { return swap_; }
  bool has_distance_function() const { return has_distance_; }
  // The distance for T, empty where the callable does not take T.
  template <class T>
  const Distance<T>& distance_function() const {
    if constexpr (std::is_same_v<T, float>) return float_distance_;
    else return double_distance_;
  }

 private:
  template <class T>
  Distance<T>& slot() {
    if constexpr (std::is_same_v<T, float>) return float_distance_;
    else return double_distance_;
  }
  template <class T, class F>
  void set(const F& f) {
    if constexpr (std::is_invocable_v<const F&, const Tensor<T>&, const Tensor<T>&>)
      slot<T>() = [f](const Tensor<T>& a, const Tensor<T>& b) { return Tensor<T>(f(a, b)); };
    else
      slot<T>() = nullptr;
  }
  Distance<float> float_distance_;
  Distance<double> double_distance_;
  double margin_ = 1;
  bool swap_ = false, has_distance_ = false;
};

// ----- functional ------------------------------------------------------------------
namespace functional {

// libtorch's names for the functional forms' options (F::CrossEntropyFuncOptions).
using nn::CosineSimilarityFuncOptions;
using nn::NormalizeFuncOptions;
using nn::PairwiseDistanceFuncOptions;
using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;

template <detail::FloatElement T>
Tensor<T> mse_loss(const Tensor<T>& input, const Tensor<T>& target, const MSELossOptions& o = {}) {
  return detail::reduce_loss<T>(square(input - target), o.reduction());
}
template <detail::FloatElement T>
Tensor<T> l1_loss(const Tensor<T>& input, const Tensor<T>& target, const L1LossOptions& o = {}) {
  return detail::reduce_loss<T>(abs(input - target), o.reduction());
}
// 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (beta = 0: L1).
template <detail::FloatElement T>
Tensor<T> smooth_l1_loss(const Tensor<T>& input, const Tensor<T>& target, const SmoothL1LossOptions& o = {}) {
  detail::check(o.beta() >= 0, "smooth_l1_loss does not support negative values for beta.");
  if (o.beta() == 0) return detail::reduce_loss<T>(abs(input - target), o.reduction());
  const Tensor<T> d = input - target;
  const T beta = T(o.beta());
  return detail::reduce_loss<T>(where(abs(d) < beta, square(d) * T(0.5) / beta, abs(d) - T(0.5) * beta),
                                o.reduction());
}
// 0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere.
template <detail::FloatElement T>
Tensor<T> huber_loss(const Tensor<T>& input, const Tensor<T>& target, const HuberLossOptions& o = {}) {
  detail::check(o.delta() > 0, "huber_loss does not support non-positive values for delta.");
  const Tensor<T> d = input - target;
  const T delta = T(o.delta());
  return detail::reduce_loss<T>(where(abs(d) < delta, square(d) * T(0.5), (abs(d) - T(0.5) * delta) * delta),
                                o.reduction());
}

// The negative log-likelihood of class indices: input (N, C) or
// (N, C, d1, ...) holds log-probabilities, target (N) or (N, d1, ...) the
// classes; a target equal to ignore_index contributes nothing, and the mean
// divides by the summed weights of the targets that count.
template <detail::FloatElement T>
Tensor<T> nll_loss(const Tensor<T>& input, const Tensor<int64_t>& target, const NLLLossOptions& o = {}) {
  detail::check(input.dim() >= 1, "input tensor should be 1D or 2D");
  if (input.dim() == 1) {  // one sample: (C) with a 0-d target
    detail::check(target.dim() == 0, "0D or 1D target tensor expected, multi-target not supported");
    auto out = nll_loss(input.unsqueeze(0), target.unsqueeze(0), o);
    return o.reduction() == Reduction::None ? out.squeeze(0) : out;
  }
  const int64_t n = input.size(0), classes = input.size(1);
  detail::check(target.dim() == input.dim() - 1, input.dim() == 2 ? "0D or 1D target tensor expected, multi-target not supported"
                                                                  : "only batches of spatial targets supported (3D tensors)");
  detail::check(target.size(0) == n, "Expected input batch_size (", n, ") to match target batch_size (", target.size(0), ").");
  for (int64_t d = 2; d < input.dim(); ++d)
    detail::check(target.size(d - 1) == input.size(d), "size mismatch (got input: ", input.sizes(), ", target: ", target.sizes(), ")");
  const Tensor<T> lp = detail::classes_last(input);
  const Tensor<int64_t> t = target.reshape({-1});
  const int64_t ignore = o.ignore_index();
  {
    // Checked on the host: device targets are copied (as PyTorch's CUDA
    // kernels report a bad target only at the next synchronization, the
    // copy is the price of the same error everywhere).
    const Tensor<int64_t> host_t = t.device().is_cpu() ? t.contiguous() : t.to(kCPU);
    const int64_t* p = host_t.data_ptr();
    for (int64_t i = 0; i < t.numel(); ++i)
      detail::check<IndexError>(p[i] == ignore || (p[i] >= 0 && p[i] < classes), "Target ", p[i], " is out of bounds.");
  }
  const Tensor<int64_t> safe = where(t == ignore, int64_t(0), t);
  const Tensor<bool> counts = t != ignore;
  const Tensor<T>* class_weight = nullptr;
  if (o.weight().defined()) {
    class_weight = &o.weight().as<T>();
    detail::check(class_weight->dim() == 1 && class_weight->numel() == classes,
                  "weight tensor should be defined either for all ", classes,
                  " classes or no classes but got weight tensor of shape: ", class_weight->sizes());
  }
  // Per sample: the target's log-probability; its class weight, 0 where ignored.
  const Tensor<T> picked = detail::pick_classes(lp, safe);
  Tensor<T> w = class_weight ? Tensor<T>(where(counts, detail::class_weights(class_weight->detach(), safe), T(0)))
                             : Tensor<T>();
  if (!class_weight) w = cast<T>(counts);
  Shape out_shape = target.sizes();
  switch (o.reduction()) {
    case Reduction::None: return Tensor<T>(-picked * w).reshape(out_shape);
    case Reduction::Sum: return sum(-picked * w);
    default: return sum(-picked * w) / sum(w);
  }
}

// Cross-entropy of logits, in one log_softmax. A target of class indices
// (int64) takes weight, ignore_index and label_smoothing; a target of class
// probabilities (the input's shape and type) takes weight and
// label_smoothing.
template <detail::FloatElement T>
Tensor<T> cross_entropy(const Tensor<T>& input, const Tensor<int64_t>& target, const CrossEntropyLossOptions& o = {}) {
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const Tensor<T> lp = log_softmax(input, class_dim);
  const auto nll_options = NLLLossOptions().weight(o.weight()).ignore_index(o.ignore_index()).reduction(o.reduction());
  const Tensor<T> nll = nll_loss(lp, target, nll_options);
  const double eps = o.label_smoothing();
  if (eps == 0) return nll;
  // PyTorch's smoothing term: -sum over classes of w_c log p_c per sample
  // (0 where the target is ignored); its mean divides by the same weights
  // or count that the NLL term's does.
  const int64_t classes = input.size(class_dim);
  Tensor<T> per_class = lp;
  if (o.weight().defined()) {
    Shape wshape(static_cast<std::size_t>(input.dim()), 1);
    wshape[static_cast<std::size_t>(class_dim)] = classes;
    per_class = lp * o.weight().as<T>().detach().view(wshape);
  }
  const Tensor<bool> counts = target != o.ignore_index();
  const Tensor<T> smooth = where(counts, -sum(per_class, class_dim), T(0));
  Tensor<T> smooth_reduced;
  switch (o.reduction()) {
    case Reduction::None: smooth_reduced = smooth; break;
    case Reduction::Sum: smooth_reduced = sum(smooth); break;
    default:
      if (o.weight().defined()) {
        const Tensor<int64_t> safe = Tensor<int64_t>(where(counts, target, int64_t(0))).reshape({-1});
        const Tensor<T> w = where(counts.reshape({-1}), detail::class_weights(o.weight().as<T>().detach(), safe), T(0));
        smooth_reduced = sum(smooth) / sum(w);
      } else {
        smooth_reduced = sum(smooth) / T(sum(cast<int64_t>(counts)).item());
      }
  }
  return (1 - T(eps)) * nll + smooth_reduced * T(eps / static_cast<double>(classes));
}
template <detail::FloatElement T>
Tensor<T> cross_entropy(const Tensor<T>& input, const Tensor<T>& target, const CrossEntropyLossOptions& o = {}) {
  detail::check(input.sizes() == target.sizes(), "Expected input and target to have the same shape for class probabilities, got ",
                input.sizes(), " and ", target.sizes());
  detail::check(o.ignore_index() == -100, "ignore_index is not supported for floating point target");
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t classes = input.size(class_dim);
  const T eps = T(o.label_smoothing());
  Tensor<T> per_class = log_softmax(input, class_dim) * (target * (1 - eps) + eps / T(classes));
  if (o.weight().defined()) {
    Shape wshape(static_cast<std::size_t>(input.dim()), 1);
    wshape[static_cast<std::size_t>(class_dim)] = classes;
    per_class = per_class * o.weight().as<T>().detach().view(wshape);
  }
  const Tensor<T> loss = -sum(per_class, class_dim);
  switch (o.reduction()) {
    case Reduction::None: return loss;
    case Reduction::Sum: return sum(loss);
    default: return sum(loss) / T(input.numel() / classes);
  }
}

// Binary cross-entropy of probabilities; each log is clamped at -100, as
// PyTorch does, so that a 0 or 1 input gives a finite loss.
template <detail::FloatElement T>
Tensor<T> binary_cross_entropy(const Tensor<T>& input, const Tensor<T>& target, const BCELossOptions& o = {}) {
  detail::check<ValueError>(input.sizes() == target.sizes(), "Using a target size (", target.sizes(),
                            ") that is different to the input size (", input.sizes(), ") is deprecated. Please ensure they have the same size.");
  const auto loss = -(target * clamp_min(log(input), T(-100)) + (1 - target) * clamp_min(log(1 - input), T(-100)));
  if (o.weight().defined()) return detail::reduce_loss<T>(loss * o.weight().as<T>().detach(), o.reduction());
  return detail::reduce_loss<T>(loss, o.reduction());
}
// Binary cross-entropy of logits: (1 - t) x + l (log(exp(-m) + exp(-x - m)) + m)
// with m = max(-x, 0) and l = 1 + (pos_weight - 1) t, PyTorch's form.
template <detail::FloatElement T>
Tensor<T> binary_cross_entropy_with_logits(const Tensor<T>& input, const Tensor<T>& target,
                                           const BCEWithLogitsLossOptions& o = {}) {
  detail::check<ValueError>(input.sizes() == target.sizes(), "Target size (", target.sizes(),
                            ") must be the same as input size (", input.sizes(), ")");
  const auto m = clamp_min(-input, T(0));
  const auto softplus_neg = log(exp(-m) + exp(-input - m)) + m;
  Tensor<T> loss;
  if (o.pos_weight().defined()) loss = (1 - target) * input + (1 + (o.pos_weight().as<T>().detach() - 1) * target) * softplus_neg;
  else loss = (1 - target) * input + softplus_neg;
  if (o.weight().defined()) return detail::reduce_loss<T>(loss * o.weight().as<T>().detach(), o.reduction());
  return detail::reduce_loss<T>(loss, o.reduction());
}

// Kullback-Leibler divergence of target from input, both over the same
// points, input as log-probabilities (target too with log_target):
// target (log target - input), 0 where target is 0. kBatchMean divides the
// sum by the batch size (the mathematically right mean); kMean, PyTorch's
// default, by the number of elements.
template <detail::FloatElement T>
Tensor<T> kl_div(const Tensor<T>& input, const Tensor<T>& target, const KLDivLossOptions& o = {}) {
  Tensor<T> loss;
  if (o.log_target()) loss = exp(target) * (target - input);
  else loss = special::xlogy(target, target) - target * input;
  if (o.reduction() == Reduction::BatchMean) return input.dim() == 0 ? sum(loss) : sum(loss) / T(input.size(0));
  return detail::reduce_loss<T>(loss, o.reduction());
}

// The p-norm of x1 - x2 + eps over the last dim (broadcast together).
template <detail::FloatElement T>
Tensor<T> pairwise_distance(const Tensor<T>& x1, const Tensor<T>& x2, const PairwiseDistanceFuncOptions& o = {}) {
  const int64_t d = std::max(x1.dim(), x2.dim()) - 1;
  return norm(x1 - x2 + T(o.eps()), o.p(), Shape{std::max<int64_t>(d, 0)}, o.keepdim());
}
// The cosine of the angle between x1 and x2 along dim: each divided by its
// norm (at least eps) first, then the sum of their product, as PyTorch 1.13
// computes it.
template <detail::FloatElement T>
Tensor<T> cosine_similarity(const Tensor<T>& x1, const Tensor<T>& x2, const CosineSimilarityFuncOptions& o = {}) {
  const int64_t d = detail::wrap_dim(o.dim(), std::max(x1.dim(), x2.dim()));
  const Tensor<T> n1 = clamp_min(norm(x1, 2, Shape{d}, true), T(o.eps())), n2 = clamp_min(norm(x2, 2, Shape{d}, true), T(o.eps()));
  return sum((x1 / n1) * (x2 / n2), d);
}
// x divided by its p-norm along dim (at least eps).
template <detail::FloatElement T>
Tensor<T> normalize(const Tensor<T>& x, const NormalizeFuncOptions& o = {}) {
  return x / clamp_min(norm(x, o.p(), Shape{detail::wrap_dim(o.dim(), x.dim())}, true), T(o.eps()));
}

// 1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1,
// the cosine over the last dim (PyTorch's 1e-12 added to each squared norm).
template <detail::FloatElement T>
Tensor<T> cosine_embedding_loss(const Tensor<T>& x1, const Tensor<T>& x2, const Tensor<T>& y,
                                const CosineEmbeddingLossOptions& o = {}) {
  detail::check(x1.sizes() == x2.sizes(), "cosine_embedding_loss: the inputs' shapes differ, ", x1.sizes(), " and ", x2.sizes());
  detail::check(x1.dim() == 1 || x1.dim() == 2, "1D target tensor expects 2D input tensors, but found inputs with sizes ",
                x1.sizes(), " and ", x2.sizes(), ".");
  const int64_t d = x1.dim() - 1;
  const Tensor<T> prod = sum(x1 * x2, d), m1 = sum(square(x1), d), m2 = sum(square(x2), d);
  const Tensor<T> cos = prod / sqrt((m1 + T(1e-12)) * (m2 + T(1e-12)));
  const auto loss = where(y == T(1), 1 - cos, T(0)) + where(y == T(-1), clamp_min(cos - T(o.margin()), T(0)), T(0));
  return detail::reduce_loss<T>(loss, o.reduction());
}

// max(0, -y (x1 - x2) + margin).
template <detail::FloatElement T>
Tensor<T> margin_ranking_loss(const Tensor<T>& x1, const Tensor<T>& x2, const Tensor<T>& y,
                              const MarginRankingLossOptions& o = {}) {
  return detail::reduce_loss<T>(clamp_min(-y * (x1 - x2) + T(o.margin()), T(0)), o.reduction());
}

// max(d(a, p) - d(a, n) + margin, 0) with d the p-norm of the difference
// plus eps over the last dim (PyTorch's pairwise_distance); swap uses
// min(d(a, n), d(p, n)).
template <detail::FloatElement T>
Tensor<T> triplet_margin_loss(const Tensor<T>& anchor, const Tensor<T>& positive, const Tensor<T>& negative,
                              const TripletMarginLossOptions& o = {}) {
  detail::check(anchor.dim() == positive.dim() && anchor.dim() == negative.dim(),
                "The anchor, positive, and negative tensors are expected to have the same number of dimensions");
  const auto by = PairwiseDistanceFuncOptions().p(o.p()).eps(o.eps());
  auto distance = [&](const Tensor<T>& a, const Tensor<T>& b) { return pairwise_distance(a, b, by); };
  return detail::triplet_loss(anchor, positive, negative, distance, o);
}

// max(d(a, p) - d(a, n) + margin, 0) with the options' distance d
// (pairwise_distance where none is set); swap uses min(d(a, n), d(p, n)).
template <detail::FloatElement T>
Tensor<T> triplet_margin_with_distance_loss(const Tensor<T>& anchor, const Tensor<T>& positive,
                                            const Tensor<T>& negative, const TripletMarginWithDistanceLossOptions& o = {}) {
  auto distance = [&](const Tensor<T>& a, const Tensor<T>& b) -> Tensor<T> {
    if (!o.has_distance_function()) return pairwise_distance(a, b);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const auto& d = o.template distance_function<T>();
      detail::check(static_cast<bool>(d), "triplet_margin_with_distance_loss: the distance function takes no '",
                    detail::scalar_type_name<T>(), "' tensors");
      return d(a, b);
    } else {
      detail::fail<Error>("triplet_margin_with_distance_loss: a distance function is kept for float and double "
                          "tensors, and these are '", detail::scalar_type_name<T>(), "'");
    }
  };
  return detail::triplet_loss(anchor, positive, negative, distance, o);
}

}  // namespace functional
namespace F = functional;

// The distances as modules of two inputs.
class PairwiseDistanceImpl : public Module {
 public:
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options = {}) : options(options) {}
  std::string name() const override { return "PairwiseDistance"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x1, const Tensor<T>& x2) const { return F::pairwise_distance(x1, x2, options); }
  PairwiseDistanceOptions options;
};
using PairwiseDistance = ModuleHolder<PairwiseDistanceImpl>;
class CosineSimilarityImpl : public Module {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {}) : options(options) {}
  std::string name() const override { return "CosineSimilarity"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x1, const Tensor<T>& x2) const { return F::cosine_similarity(x1, x2, options); }
  CosineSimilarityOptions options;
};
using CosineSimilarity = ModuleHolder<CosineSimilarityImpl>;

// ----- modules ---------------------------------------------------------------------
// A loss module: its options, PyTorch's name, and F's function as forward.
// Class weights are registered as the buffer "weight" (and "pos_weight"),
// as PyTorch's loss modules do.
template <class Options>
class LossImpl : public Module {
 public:
  explicit LossImpl(const Options& options = {}) : options(options) {
    if constexpr (requires { options.weight(); })
      if (options.weight().defined()) register_buffer("weight", options.weight());
    if constexpr (requires { options.pos_weight(); })
      if (options.pos_weight().defined()) register_buffer("pos_weight", options.pos_weight());
  }
  Options options;
};

class MSELossImpl : public LossImpl<MSELossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "MSELoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target) const { return F::mse_loss(input, target, options); }
};
using MSELoss = ModuleHolder<MSELossImpl>;
class L1LossImpl : public LossImpl<L1LossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "L1Loss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target) const { return F::l1_loss(input, target, options); }
};
using L1Loss = ModuleHolder<L1LossImpl>;
class SmoothL1LossImpl : public LossImpl<SmoothL1LossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "SmoothL1Loss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target) const { return F::smooth_l1_loss(input, target, options); }
};
using SmoothL1Loss = ModuleHolder<SmoothL1LossImpl>;
class HuberLossImpl : public LossImpl<HuberLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "HuberLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target) const { return F::huber_loss(input, target, options); }
};
using HuberLoss = ModuleHolder<HuberLossImpl>;
class NLLLossImpl : public LossImpl<NLLLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "NLLLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<int64_t>& target) const { return F::nll_loss(input, target, options); }
};
using NLLLoss = ModuleHolder<NLLLossImpl>;
class CrossEntropyLossImpl : public LossImpl<CrossEntropyLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "CrossEntropyLoss"; }
  template <detail::FloatElement T, class Target>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<Target>& target) const { return F::cross_entropy(input, target, options); }
};
using CrossEntropyLoss = ModuleHolder<CrossEntropyLossImpl>;
class BCELossImpl : public LossImpl<BCELossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "BCELoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target) const { return F::binary_cross_entropy(input, target, options); }
};
using BCELoss = ModuleHolder<BCELossImpl>;
class BCEWithLogitsLossImpl : public LossImpl<BCEWithLogitsLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "BCEWithLogitsLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target) const {
    return F::binary_cross_entropy_with_logits(input, target, options);
  }
};
using BCEWithLogitsLoss = ModuleHolder<BCEWithLogitsLossImpl>;

class KLDivLossImpl : public LossImpl<KLDivLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "KLDivLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& target) const { return F::kl_div(input, target, options); }
};
using KLDivLoss = ModuleHolder<KLDivLossImpl>;
class CosineEmbeddingLossImpl : public LossImpl<CosineEmbeddingLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "CosineEmbeddingLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x1, const Tensor<T>& x2, const Tensor<T>& y) const {
    return F::cosine_embedding_loss(x1, x2, y, options);
  }
};
using CosineEmbeddingLoss = ModuleHolder<CosineEmbeddingLossImpl>;
class MarginRankingLossImpl : public LossImpl<MarginRankingLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "MarginRankingLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x1, const Tensor<T>& x2, const Tensor<T>& y) const {
    return F::margin_ranking_loss(x1, x2, y, options);
  }
};
using MarginRankingLoss = ModuleHolder<MarginRankingLossImpl>;
class TripletMarginLossImpl : public LossImpl<TripletMarginLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "TripletMarginLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& anchor, const Tensor<T>& positive, const Tensor<T>& negative) const {
    return F::triplet_margin_loss(anchor, positive, negative, options);
  }
};
using TripletMarginLoss = ModuleHolder<TripletMarginLossImpl>;
// Its default distance is a child module, PairwiseDistance(), as in PyTorch
// (and in its repr).
class TripletMarginWithDistanceLossImpl : public LossImpl<TripletMarginWithDistanceLossOptions> {
 public:
  explicit TripletMarginWithDistanceLossImpl(const TripletMarginWithDistanceLossOptions& options = {})
      : LossImpl(options) {
    if (!options.has_distance_function()) register_module("distance_function", PairwiseDistance());
  }
  std::string name() const override { return "TripletMarginWithDistanceLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& anchor, const Tensor<T>& positive, const Tensor<T>& negative) const {
    return F::triplet_margin_with_distance_loss(anchor, positive, negative, options);
  }
};
using TripletMarginWithDistanceLoss = ModuleHolder<TripletMarginWithDistanceLossImpl>;

}  // namespace tsr::nn
