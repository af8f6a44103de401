// Embedding: a lookup table of num_embeddings vectors of embedding_dim.
#pragma once
#include <optional>
#include <string>

#include "holder.hpp"
#include "init.hpp"

namespace tsr::nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim) : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EmbeddingOptions& padding_idx(std::optional<int64_t> v) { padding_idx_ = v; return *this; }
  int64_t num_embeddings() const { return num_embeddings_; }
  int64_t embedding_dim() const { return embedding_dim_; }
  std::optional<int64_t> padding_idx() const { return padding_idx_; }

 private:
  int64_t num_embeddings_, embedding_dim_;
  std::optional<int64_t> padding_idx_;
};

namespace functional {
// weight's rows at `indices`: the result has indices' shape plus
// (embedding_dim). The row at padding_idx gets no gradient.
template <detail::FloatElement T>
Tensor<T> embedding(const Tensor<int64_t>& indices, const Tensor<T>& weight, std::optional<int64_t> padding_idx = std::nullopt) {
  detail::check(weight.dim() == 2, "'weight' must be 2-D");
  Shape out_shape = indices.sizes();
  out_shape.push_back(weight.size(1));
  const Tensor<int64_t> flat = indices.reshape({-1});
  Tensor<T> rows = index_select(weight, 0, flat);
  if (padding_idx && weight.requires_grad()) {
    // The same values, with the padding rows read from a detached weight.
    const Tensor<T> fixed = index_select(weight.detach(), 0, flat);
    rows = where(Tensor<bool>(flat == *padding_idx).unsqueeze(1), fixed, rows);
  }
  return rows.view(out_shape);
}
}  // namespace functional
namespace F = functional;

namespace detail_embedding {
// padding_idx, checked to lie in [-num_embeddings, num_embeddings) (the
// module's message) and wrapped to a row index.
inline std::optional<int64_t> wrapped_padding_idx(std::optional<int64_t> p, int64_t num_embeddings,
                                                  const char* message) {
  if (!p) return p;
  detail::check(*p < num_embeddings && *p >= -num_embeddings, message);
  return *p < 0 ? *p + num_embeddings : *p;
}
// The table's initialization: N(0, 1), the padding row zeroed.
inline void init_table(AnyTensor& weight, std::optional<int64_t> padding_idx) {
  init::normal_(weight);
  if (padding_idx) {
    const NoGradGuard no_grad;
    weight.as<float>().detach().select(0, *padding_idx).zero_();
  }
}
}  // namespace detail_embedding

// Initialized from N(0, 1) (not PyTorch's values: see docs/nn.md), the
// padding row zeroed.
class EmbeddingImpl : public Module {
 public:
  explicit EmbeddingImpl(const EmbeddingOptions& options)
      : options(normalized(options)),
        weight(register_parameter("weight", empty<float>({options.num_embeddings(), options.embedding_dim()}))) {
    reset_parameters();
  }
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim) : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  void reset_parameters() { detail_embedding::init_table(weight, options.padding_idx()); }
  std::string name() const override { return "Embedding"; }
  std::string extra_repr() const override {
    std::string s = std::to_string(options.num_embeddings()) + ", " + std::to_string(options.embedding_dim());
    if (options.padding_idx()) s += ", padding_idx=" + std::to_string(*options.padding_idx());
    return s;
  }
  // The rows in the weight's element type (float unless the model was
  // converted): forward<double>(indices) for a double model.
  template <detail::FloatElement T = float>
  Tensor<T> forward(const Tensor<int64_t>& indices) const {
    return F::embedding(indices, weight.as<T>(), options.padding_idx());
  }
  // For Sequential: the weight's own type. A template, so that only a
  // translation unit that calls it compiles it: as a plain member it
  // compiled the embedding's forward and fused backward for float and double
  // in every translation unit that includes nn (docs/design.md).
  template <class = void>
  AnyTensor forward_any(const AnyTensor& indices) const {
    const auto& idx = indices.as<int64_t>();
    if (weight.is<double>()) return forward<double>(idx);
    return forward<float>(idx);
  }

  EmbeddingOptions options;
  AnyTensor& weight;

 private:
  static EmbeddingOptions normalized(EmbeddingOptions o) {
    return o.padding_idx(detail_embedding::wrapped_padding_idx(o.padding_idx(), o.num_embeddings(),
                                                               "Padding_idx must be within num_embeddings"));
  }
};
using Embedding = ModuleHolder<EmbeddingImpl>;

}  // namespace tsr::nn
