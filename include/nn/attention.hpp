// Attention: F::scaled_dot_product_attention and MultiheadAttention, with
// PyTorch's shapes, masks, parameters and initialization.
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "dropout.hpp"
#include "holder.hpp"
#include "linear.hpp"

namespace tsr::detail {

// A mask in the additive form the scores take: a bool mask becomes -inf
// where it masks and 0 elsewhere (`true_masks` says which value masks: true
// for MultiheadAttention's masks, false for scaled_dot_product_attention's,
// whose true entries take part), a float mask is added as it is.
template <class T>
Tensor<T> additive_mask(const AnyTensor& mask, bool true_masks, const char* what) {
  if (!mask.defined()) return {};
  if (mask.is<bool>()) {
    const T inf = std::numeric_limits<T>::infinity();
    const Tensor<bool> m = mask.as<bool>();
    return true_masks ? Tensor<T>(where(m, -inf, T(0))) : Tensor<T>(where(m, T(0), -inf));
  }
  check(mask.is<T>(), "only bool and floating types of ", what, " are supported (and a float mask of the query's type), got ",
        mask.dtype_name());
  return mask.as<T>();
}

// softmax(q k^T + mask) v over the last two dims (batch dims broadcast), q
// already scaled; dropout on the weights in training. Returns the output and
// the weights (before dropout).
template <class T>
std::pair<Tensor<T>, Tensor<T>> attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const Tensor<T>& mask,
                                          double dropout_p, bool training) {
  Tensor<T> scores = matmul(q, k.transpose(-2, -1));
  if (mask.defined()) scores = scores + mask;
  const Tensor<T> weights = softmax(scores, -1);
  const Tensor<T> used = training && dropout_p > 0 ? nn::F::dropout(weights, dropout_p, true) : weights;
  return {matmul(used, v), weights};
}

}  // namespace tsr::detail

namespace tsr::nn {
namespace functional {

// softmax(q k^T / sqrt(E) + mask) v, as PyTorch 2's
// F.scaled_dot_product_attention: q (..., L, E), k (..., S, E), v (..., S, Ev),
// batch dims broadcast. attn_mask: bool (true: takes part) or additive float,
// broadcastable to (..., L, S); is_causal masks every key after the query's
// position. Dropout with dropout_p > 0 (the functional form always applies it).
template <detail::FloatElement T>
Tensor<T> scaled_dot_product_attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                                       const AnyTensor& attn_mask = {}, double dropout_p = 0, bool is_causal = false) {
  detail::check(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, "scaled_dot_product_attention: expected query, key and value "
                "of at least 2 dimensions, got ", q.sizes(), ", ", k.sizes(), " and ", v.sizes());
  detail::check(!(is_causal && attn_mask.defined()),
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  Tensor<T> mask = detail::additive_mask<T>(attn_mask, false, "attn_mask");
  if (is_causal) {
    const int64_t l = q.size(-2), s = k.size(-2);
    mask = zeros<T>({l, s});
    for (int64_t i = 0; i < l; ++i)
      for (int64_t j = i + 1; j < s; ++j) mask(i, j) = -std::numeric_limits<T>::infinity();
  }
  const Tensor<T> scaled = q / T(std::sqrt(static_cast<double>(q.size(-1))));
  return detail::attention(scaled, k, v, mask, dropout_p, true).first;
}

}  // namespace functional
namespace F = functional;

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  MultiheadAttentionOptions& dropout(double v) { dropout_ = v; return *this; }
  MultiheadAttentionOptions& bias(bool v) { bias_ = v; return *this; }
  MultiheadAttentionOptions& batch_first(bool v) { batch_first_ = v; return *this; }
  int64_t embed_dim() const { return embed_dim_; }
  int64_t num_heads() const { return num_heads_; }
  double dropout() const { return dropout_; }
  bool bias() const { return bias_; }
  bool batch_first() const { return batch_first_; }

 private:
  int64_t embed_dim_, num_heads_;
  double dropout_ = 0;
  bool bias_ = true, batch_first_ = false;
};

// PyTorch's name for MultiheadAttention's output projection (a Linear).
class NonDynamicallyQuantizableLinearImpl : public LinearImpl {
 public:
  using LinearImpl::LinearImpl;
  std::string name() const override { return "NonDynamicallyQuantizableLinear"; }
};

// Multi-head attention (Vaswani et al.), as torch.nn.MultiheadAttention with
// query, key and value of the same embedding size: in_proj_weight (3E, E)
// and in_proj_bias (3E) project all three, out_proj (E, E) the heads'
// concatenation. Initialized as PyTorch's: out_proj drawn as a Linear, then
// xavier_uniform_ on in_proj_weight, the biases zero.
//
// forward(query (L, N, E), key (S, N, E), value (S, N, E), key_padding_mask
// (N, S), need_weights, attn_mask (L, S) or (N heads, L, S),
// average_attn_weights): batch first with batch_first, or unbatched (L, E).
// Masks are bool (true: masked) or float (added). Returns the output and,
// with need_weights, the attention weights (N, L, S) (averaged over heads)
// or (N, heads, L, S); undefined otherwise.
class MultiheadAttentionImpl : public Module {
 public:
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options)
      : options(options),
        in_proj_weight(register_parameter("in_proj_weight", empty<float>({3 * checked(options).embed_dim(), options.embed_dim()}))),
        in_proj_bias(register_parameter("in_proj_bias",
                                        options.bias() ? AnyTensor(empty<float>({3 * options.embed_dim()})) : AnyTensor())),
        out_proj(register_module("out_proj", std::make_shared<NonDynamicallyQuantizableLinearImpl>(
                                                 LinearOptions(options.embed_dim(), options.embed_dim()).bias(options.bias())))) {
    reset_parameters();
  }
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  void reset_parameters() {
    init::xavier_uniform_(in_proj_weight);
    if (in_proj_bias.defined()) {
      init::zeros_(in_proj_bias);
      init::zeros_(out_proj->bias);
    }
  }
  std::string name() const override { return "MultiheadAttention"; }

  template <detail::FloatElement T>
  std::tuple<Tensor<T>, Tensor<T>> forward(const Tensor<T>& query, const Tensor<T>& key, const Tensor<T>& value,
                                           const AnyTensor& key_padding_mask = {}, bool need_weights = true,
                                           const AnyTensor& attn_mask = {}, bool average_attn_weights = true) const {
    detail::check(query.dim() == 2 || query.dim() == 3, "query should be unbatched 2D or batched 3D tensor but received ",
                  query.dim(), "-D query tensor");
    const bool batched = query.dim() == 3;
    detail::check(key.dim() == query.dim() && value.dim() == query.dim(), "For ", batched ? "batched (3-D)" : "unbatched (2-D)",
                  " `query`, expected `key` and `value` to be ", query.dim(), "-D but found ", key.dim(), "-D and ",
                  value.dim(), "-D tensors respectively");
    auto seq_first = [&](const Tensor<T>& t) {  // (L, N, E)
      return !batched ? t.unsqueeze(1) : options.batch_first() ? t.transpose(0, 1) : t;
    };
    const Tensor<T> q_in = seq_first(query), k_in = seq_first(key), v_in = seq_first(value);
    const int64_t e = options.embed_dim(), heads = options.num_heads(), hd = e / heads;
    const int64_t l = q_in.size(0), n = q_in.size(1), s = k_in.size(0);
    detail::check(q_in.size(2) == e, "was expecting embedding dimension of ", e, ", but got ", q_in.size(2));
    detail::check(k_in.sizes() == v_in.sizes(), "key shape ", k_in.sizes(), " does not match value shape ", v_in.sizes());
    detail::check(k_in.size(1) == n && k_in.size(2) == e, "key's batch and embedding sizes ", k_in.sizes(),
                  " do not match the query's ", q_in.sizes());

    // The projections: one product for all three in self-attention.
    const Tensor<T> w = in_proj_weight.as<T>(), b = in_proj_bias.defined() ? in_proj_bias.as<T>() : Tensor<T>();
    auto project = [&](const Tensor<T>& x, int64_t i, int64_t parts) {
      const Tensor<T> wi = w.narrow(0, i * e, parts * e), bi = b.defined() ? b.narrow(0, i * e, parts * e) : Tensor<T>();
      return F::linear(x.reshape({-1, e}), wi, bi);
    };
    Tensor<T> q, k, v;
    if (query.impl_ptr() == key.impl_ptr() && key.impl_ptr() == value.impl_ptr()) {
      const Tensor<T> qkv = project(q_in, 0, 3);
      q = qkv.narrow(1, 0, e), k = qkv.narrow(1, e, e), v = qkv.narrow(1, 2 * e, e);
    } else {
      q = project(q_in, 0, 1), k = project(k_in, 1, 1), v = project(v_in, 2, 1);
    }
    // (L N, E) -> (N heads, L, head_dim); q scaled by 1/sqrt(head_dim) first, as PyTorch 1.13.
    auto heads_first = [&](const Tensor<T>& t, int64_t len) { return t.reshape({len, n * heads, hd}).transpose(0, 1); };
    const Tensor<T> qh = heads_first(q / T(std::sqrt(static_cast<double>(hd))), l), kh = heads_first(k, s),
                    vh = heads_first(v, s);

    Tensor<T> mask = detail::additive_mask<T>(attn_mask, true, "attn_mask");
    if (mask.defined()) {
      if (mask.dim() == 2)
        detail::check(mask.sizes() == Shape{l, s}, "The shape of the 2D attn_mask is torch.Size(", mask.sizes(),
                      "), but should be (", l, ", ", s, ").");
      else
        detail::check(mask.dim() == 3 && mask.sizes() == Shape{n * heads, l, s}, "The shape of the 3D attn_mask is torch.Size(",
                      mask.sizes(), "), but should be (", n * heads, ", ", l, ", ", s, ").");
    }
    if (key_padding_mask.defined()) {
      Tensor<T> pad = detail::additive_mask<T>(key_padding_mask, true, "key_padding_mask");
      if (!batched) pad = pad.unsqueeze(0);
      detail::check(pad.sizes() == Shape{n, s}, "expecting key_padding_mask shape of (", n, ", ", s,
                    "), but got torch.Size(", pad.sizes(), ")");
      pad = pad.view({n, 1, 1, s}).expand({n, heads, 1, s}).reshape({n * heads, 1, s});
      mask = mask.defined() ? Tensor<T>(mask + pad) : pad;
    }
    auto [out, weights] = detail::attention(qh, kh, vh, mask, options.dropout(), is_training());
    // (N heads, L, hd) -> (L N, E) -> out_proj -> (L, N, E)
    const Tensor<T> projected = F::linear(out.transpose(0, 1).reshape({l * n, e}), out_proj->weight.as<T>(),
                                          out_proj->bias.defined() ? out_proj->bias.as<T>() : Tensor<T>());
    Tensor<T> result = projected.view({l, n, e});
    result = !batched ? result.squeeze(1) : options.batch_first() ? result.transpose(0, 1) : result;
    if (!need_weights) return {result, Tensor<T>()};
    Tensor<T> w_out = weights.view({n, heads, l, s});
    if (average_attn_weights) w_out = mean(w_out, 1);
    return {result, batched ? w_out : w_out.squeeze(0)};
  }

  MultiheadAttentionOptions options;
  AnyTensor& in_proj_weight;
  AnyTensor& in_proj_bias;
  std::shared_ptr<NonDynamicallyQuantizableLinearImpl> out_proj;

 private:
  static const MultiheadAttentionOptions& checked(const MultiheadAttentionOptions& o) {
    detail::check(o.embed_dim() > 0 && o.num_heads() > 0, "embed_dim and num_heads must be positive");
    detail::check(o.embed_dim() % o.num_heads() == 0, "embed_dim must be divisible by num_heads");
    return o;
  }
};
using MultiheadAttention = ModuleHolder<MultiheadAttentionImpl>;

}  // namespace tsr::nn
