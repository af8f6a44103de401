// EmbeddingBag (F::embedding_bag): the sum, mean or max of the embeddings
// of each bag of indices, without the (bags, bag size, dim) tensor of
// Embedding followed by a reduction.
#pragma once
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "embedding.hpp"
#include "loss.hpp"

namespace tsr::nn {

enum class EmbeddingBagMode { Sum, Mean, Max };

}  // namespace tsr::nn

namespace tsr {
// libtorch's spelling of the third mode (kSum and kMean are the losses' own).
inline constexpr auto kMax = nn::EmbeddingBagMode::Max;
}  // namespace tsr

namespace tsr::nn {

namespace detail_bag {
inline EmbeddingBagMode mode_of(Reduction r) {
  detail::check<ValueError>(r == Reduction::Sum || r == Reduction::Mean, "mode has to be one of sum, mean or max");
  return r == Reduction::Sum ? EmbeddingBagMode::Sum : EmbeddingBagMode::Mean;
}
inline const char* name_of(EmbeddingBagMode m) {
  return m == EmbeddingBagMode::Sum ? "sum" : m == EmbeddingBagMode::Mean ? "mean" : "max";
}
}  // namespace detail_bag

// libtorch: EmbeddingBagOptions(num_embeddings, embedding_dim).mode(kSum / kMean / kMax)
// .padding_idx(i).include_last_offset(b).
struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EmbeddingBagOptions& mode(EmbeddingBagMode v) { mode_ = v; return *this; }
  EmbeddingBagOptions& mode(Reduction v) { mode_ = detail_bag::mode_of(v); return *this; }
  EmbeddingBagOptions& padding_idx(std::optional<int64_t> v) { padding_idx_ = v; return *this; }
  EmbeddingBagOptions& include_last_offset(bool v) { include_last_offset_ = v; return *this; }
  int64_t num_embeddings() const { return num_embeddings_; }
  int64_t embedding_dim() const { return embedding_dim_; }
  EmbeddingBagMode mode() const { return mode_; }
  std::optional<int64_t> padding_idx() const { return padding_idx_; }
  bool include_last_offset() const { return include_last_offset_; }

 private:
  int64_t num_embeddings_, embedding_dim_;
  EmbeddingBagMode mode_ = EmbeddingBagMode::Mean;
  std::optional<int64_t> padding_idx_;
  bool include_last_offset_ = false;
};

namespace functional {

// What F::embedding_bag takes besides the indices and the weight.
template <class T>
struct EmbeddingBagFuncOptions {
  EmbeddingBagFuncOptions& offsets(Tensor<int64_t> v) { offsets_ = std::move(v); return *this; }
  EmbeddingBagFuncOptions& mode(EmbeddingBagMode v) { mode_ = v; return *this; }
  EmbeddingBagFuncOptions& mode(Reduction v) { mode_ = detail_bag::mode_of(v); return *this; }
  EmbeddingBagFuncOptions& per_sample_weights(Tensor<T> v) { per_sample_weights_ = std::move(v); return *this; }
  EmbeddingBagFuncOptions& include_last_offset(bool v) { include_last_offset_ = v; return *this; }
  EmbeddingBagFuncOptions& padding_idx(std::optional<int64_t> v) { padding_idx_ = v; return *this; }
  Tensor<int64_t> offsets_;
  EmbeddingBagMode mode_ = EmbeddingBagMode::Mean;
  Tensor<T> per_sample_weights_;
  bool include_last_offset_ = false;
  std::optional<int64_t> padding_idx_;
};

// One row per bag: the sum, mean or max of weight's rows at the bag's
// indices. input (B, N) is B bags of N; a 1-D input is cut into bags at
// offsets (bag b is input[offsets[b] : offsets[b + 1]], the last running to
// the end, or to the last offset with include_last_offset). Indices equal
// to padding_idx are left out (of the count of a mean too); an empty bag
// gives zeros. per_sample_weights (input's shape, mode sum only) scale each
// row first. Differentiable with respect to weight and per_sample_weights
// (in max mode the gradient goes to the rows that hold the maximum).
template <detail::FloatElement T>
Tensor<T> embedding_bag(const Tensor<int64_t>& input, const Tensor<T>& weight, const EmbeddingBagFuncOptions<T>& o = {}) {
  detail::check(weight.dim() == 2, "'weight' must be 2-D");
  detail::check<ValueError>(input.dim() == 1 || input.dim() == 2,
                            "input has to be 1D or 2D Tensor, but got Tensor of dimension ", input.dim());
  const Tensor<T>& psw = o.per_sample_weights_;
  if (psw.defined()) {
    detail::check(o.mode_ == EmbeddingBagMode::Sum,
                  "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
                  "mode='sum' (got mode='", detail_bag::name_of(o.mode_), "'). Please open a feature request on GitHub.");
    detail::check<ValueError>(psw.sizes() == input.sizes(), "embedding_bag: If per_sample_weights (", psw.sizes(),
                              ") is not None, then it must have the same shape as the input (", input.sizes(), ")");
  }
  const std::vector<int64_t> idx = input.contiguous().to_vector();
  const int64_t total = static_cast<int64_t>(idx.size());
  // starts[b]: the first position of bag b, and starts[bags] = total.
  std::vector<int64_t> starts;
  if (input.dim() == 2) {
    detail::check<ValueError>(!o.offsets_.defined(),
                              "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                              "fixed length sequences. However, found offsets of type Tensor");
    for (int64_t b = 0; b <= input.size(0); ++b) starts.push_back(b * input.size(1));
  } else {
    detail::check<ValueError>(o.offsets_.defined(), "offsets has to be a 1D Tensor but got None");
    detail::check<ValueError>(o.offsets_.dim() == 1, "offsets has to be a 1D Tensor");
    starts = o.offsets_.contiguous().to_vector();
    if (!starts.empty()) {
      detail::check(starts.front() == 0, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                                         "start from position 0. However, got ", starts.front());
      detail::check(starts.back() <= total, "offsets[-1] can not be greater than input's length ", total,
                    " but got offsets[-1] of ", starts.back());
      for (std::size_t b = 1; b < starts.size(); ++b)
        detail::check(starts[b] >= starts[b - 1], "offsets must be non-decreasing, but offsets[", b, "] = ", starts[b],
                      " is less than offsets[", b - 1, "] = ", starts[b - 1]);
    }
    if (!o.include_last_offset_) starts.push_back(total);
  }
  const int64_t bags = std::max<int64_t>(static_cast<int64_t>(starts.size()) - 1, 0), dim = weight.size(1);
  // The positions that count (not padding) and their bags.
  const std::optional<int64_t> pad =
      o.padding_idx_ && *o.padding_idx_ < 0 ? std::optional<int64_t>(*o.padding_idx_ + weight.size(0)) : o.padding_idx_;
  std::vector<int64_t> positions, bag_of, rows_of;
  std::vector<T> count(static_cast<std::size_t>(bags), T(0));
  for (int64_t b = 0; b < bags; ++b)
    for (int64_t p = starts[static_cast<std::size_t>(b)]; p < starts[static_cast<std::size_t>(b) + 1]; ++p) {
      if (pad && idx[static_cast<std::size_t>(p)] == *pad) continue;
      positions.push_back(p);
      bag_of.push_back(b);
      rows_of.push_back(idx[static_cast<std::size_t>(p)]);
      count[static_cast<std::size_t>(b)] += T(1);
    }
  const int64_t kept = static_cast<int64_t>(positions.size());
  Tensor<T> rows = index_select(weight, 0, tensor<int64_t>(rows_of, {kept}));  // (kept, dim)
  if (psw.defined()) rows = rows * index_select(psw.reshape({-1}), 0, tensor<int64_t>(positions, {kept})).unsqueeze(1);
  const Tensor<int64_t> bag_index = tensor<int64_t>(bag_of, {kept});
  const Tensor<T> empty_bags = zeros<T>({bags, dim});
  if (o.mode_ == EmbeddingBagMode::Max)
    return scatter_reduce(empty_bags, 0, Tensor<int64_t>(bag_index.unsqueeze(1).expand({kept, dim})), rows, "amax",
                          /*include_self=*/false);
  const Tensor<T> sums = index_add(empty_bags, 0, bag_index, rows);
  if (o.mode_ == EmbeddingBagMode::Sum) return sums;
  for (T& c : count) c = std::max(c, T(1));  // an empty bag's zeros stay zeros
  return sums / tensor<T>(count, {bags, 1});
}

}  // namespace functional

// Initialized from N(0, 1) as Embedding (not PyTorch's values), the
// padding row zeroed.
class EmbeddingBagImpl : public Module {
 public:
  explicit EmbeddingBagImpl(const EmbeddingBagOptions& options)
      : options(normalized(options)),
        weight(register_parameter("weight", empty<float>({options.num_embeddings(), options.embedding_dim()}))) {
    reset_parameters();
  }
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  void reset_parameters() { detail_embedding::init_table(weight, options.padding_idx()); }
  std::string name() const override { return "EmbeddingBag"; }
  std::string extra_repr() const override {
    std::string s = std::to_string(options.num_embeddings()) + ", " + std::to_string(options.embedding_dim()) +
                    ", mode=" + detail_bag::name_of(options.mode());
    if (options.padding_idx()) s += ", padding_idx=" + std::to_string(*options.padding_idx());
    return s;
  }
  // The bags' rows in the weight's element type (float unless the model was
  // converted): forward<double>(...) for a double model.
  template <detail::FloatElement T = float>
  Tensor<T> forward(const Tensor<int64_t>& input, const Tensor<int64_t>& offsets = {},
                    const Tensor<T>& per_sample_weights = {}) const {
    auto o = F::EmbeddingBagFuncOptions<T>()
                 .mode(options.mode())
                 .include_last_offset(options.include_last_offset())
                 .padding_idx(options.padding_idx());
    if (offsets.defined()) o.offsets(offsets);
    if (per_sample_weights.defined()) o.per_sample_weights(per_sample_weights);
    return F::embedding_bag(input, weight.as<T>(), o);
  }

  EmbeddingBagOptions options;
  AnyTensor& weight;

 private:
  static EmbeddingBagOptions normalized(EmbeddingBagOptions o) {
    return o.padding_idx(detail_embedding::wrapped_padding_idx(o.padding_idx(), o.num_embeddings(),
                                                               "padding_idx must be within num_embeddings"));
  }
};
using EmbeddingBag = ModuleHolder<EmbeddingBagImpl>;

}  // namespace tsr::nn
