// TransformerEncoderLayer and TransformerEncoder, as PyTorch's.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention.hpp"
#include "container.hpp"
#include "dropout.hpp"
#include "linear.hpp"
#include "norm.hpp"

namespace tsr::nn {

struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerEncoderLayerOptions& dim_feedforward(int64_t v) { dim_feedforward_ = v; return *this; }
  TransformerEncoderLayerOptions& dropout(double v) { dropout_ = v; return *this; }
  // kReLU (the default) or kGELU.
  TransformerEncoderLayerOptions& activation(init::Nonlinearity v) {
    detail::check(v == init::Nonlinearity::ReLU || v == init::Nonlinearity::GELU,
                  "activation should be relu/gelu (kReLU or kGELU)");
    activation_ = v;
    return *this;
  }
  TransformerEncoderLayerOptions& layer_norm_eps(double v) { layer_norm_eps_ = v; return *this; }
  TransformerEncoderLayerOptions& batch_first(bool v) { batch_first_ = v; return *this; }
  TransformerEncoderLayerOptions& norm_first(bool v) { norm_first_ = v; return *this; }
  int64_t d_model() const { return d_model_; }
  int64_t nhead() const { return nhead_; }
  int64_t dim_feedforward() const { return dim_feedforward_; }
  double dropout() const { return dropout_; }
  init::Nonlinearity activation() const { return activation_; }
  double layer_norm_eps() const { return layer_norm_eps_; }
  bool batch_first() const { return batch_first_; }
  bool norm_first() const { return norm_first_; }

 private:
  int64_t d_model_, nhead_, dim_feedforward_ = 2048;
  double dropout_ = 0.1;
  init::Nonlinearity activation_ = init::Nonlinearity::ReLU;
  double layer_norm_eps_ = 1e-5;
  bool batch_first_ = false, norm_first_ = false;
};

// Self-attention and a feed-forward block, each with a residual connection
// and a LayerNorm: after each block (post-norm, the default) or before it
// (norm_first). Submodules and their order are PyTorch's (self_attn,
// linear1, dropout, linear2, norm1, norm2, dropout1, dropout2), so are the
// state_dict keys and the initial weights for a seed.
class TransformerEncoderLayerImpl : public Module {
 public:
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options)
      : options(options),
        self_attn(register_module("self_attn", MultiheadAttention(MultiheadAttentionOptions(options.d_model(), options.nhead())
                                                                      .dropout(options.dropout())
                                                                      .batch_first(options.batch_first())))),
        linear1(register_module("linear1", Linear(options.d_model(), options.dim_feedforward()))),
        dropout(register_module("dropout", Dropout(options.dropout()))),
        linear2(register_module("linear2", Linear(options.dim_feedforward(), options.d_model()))),
        norm1(register_module("norm1", LayerNorm(LayerNormOptions({options.d_model()}).eps(options.layer_norm_eps())))),
        norm2(register_module("norm2", LayerNorm(LayerNormOptions({options.d_model()}).eps(options.layer_norm_eps())))),
        dropout1(register_module("dropout1", Dropout(options.dropout()))),
        dropout2(register_module("dropout2", Dropout(options.dropout()))) {}
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  std::string name() const override { return "TransformerEncoderLayer"; }

  // src (S, N, E) ((N, S, E) with batch_first, or (S, E)); masks as
  // MultiheadAttention's attn_mask and key_padding_mask.
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& src, const AnyTensor& src_mask = {}, const AnyTensor& src_key_padding_mask = {}) const {
    auto self_attention = [&](const Tensor<T>& x) {
      return dropout1(std::get<0>(self_attn(x, x, x, src_key_padding_mask, false, src_mask)));
    };
    auto feed_forward = [&](const Tensor<T>& x) {
      const Tensor<T> h = linear1(x);
      const Tensor<T> a = options.activation() == init::Nonlinearity::GELU ? Tensor<T>(F::gelu(h)) : Tensor<T>(F::relu(h));
      return dropout2(linear2(dropout(a)));
    };
    if (options.norm_first()) {
      const Tensor<T> x = src + self_attention(norm1(src));
      return x + feed_forward(norm2(x));
    }
    const Tensor<T> x = norm1(src + self_attention(src));
    return norm2(x + feed_forward(x));
  }

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn;
  Linear linear1;
  Dropout dropout;
  Linear linear2;
  LayerNorm norm1, norm2;
  Dropout dropout1, dropout2;
};
using TransformerEncoderLayer = ModuleHolder<TransformerEncoderLayerImpl>;

struct TransformerEncoderOptions {
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  // A final normalization after the last layer.
  TransformerEncoderOptions& norm(LayerNorm v) { norm_ = std::move(v); return *this; }
  const TransformerEncoderLayer& encoder_layer() const { return encoder_layer_; }
  int64_t num_layers() const { return num_layers_; }
  const LayerNorm& norm() const { return norm_; }

 private:
  TransformerEncoderLayer encoder_layer_;
  int64_t num_layers_;
  LayerNorm norm_ = nullptr;
};

// num_layers copies of encoder_layer (each starting from its weights, as
// PyTorch's deep copies; building them does not move the random stream),
// then the optional norm. Keys: layers.0.self_attn.in_proj_weight, ...,
// norm.weight.
class TransformerEncoderImpl : public Module {
 public:
  explicit TransformerEncoderImpl(const TransformerEncoderOptions& options)
      : options(options), layers(register_module("layers", ModuleList())) {
    detail::check(options.num_layers() > 0, "num_layers must be positive");
    const TransformerEncoderLayer& proto = options.encoder_layer();
    for (int64_t i = 0; i < options.num_layers(); ++i) {
      TransformerEncoderLayer copy = [&] {
        const detail::GeneratorStateGuard keep_stream;
        return TransformerEncoderLayer(proto->options);
      }();
      if (proto->parameters().front().is<double>()) copy->to<double>();
      copy->load_state_dict(proto->state_dict());
      copy->train(proto->is_training());
      layers->push_back(copy);
      layers_.push_back(copy);
    }
    if (!options.norm().is_empty()) register_module("norm", options.norm());
  }
  TransformerEncoderImpl(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : TransformerEncoderImpl(TransformerEncoderOptions(std::move(encoder_layer), num_layers)) {}
  std::string name() const override { return "TransformerEncoder"; }

  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& src, const AnyTensor& mask = {}, const AnyTensor& src_key_padding_mask = {}) const {
    Tensor<T> x = src;
    for (const TransformerEncoderLayer& layer : layers_) x = layer(x, mask, src_key_padding_mask);
    return options.norm().is_empty() ? x : options.norm()(x);
  }

  TransformerEncoderOptions options;
  ModuleList layers;

 private:
  std::vector<TransformerEncoderLayer> layers_;  // the same modules as `layers`, typed
};
using TransformerEncoder = ModuleHolder<TransformerEncoderImpl>;

}  // namespace tsr::nn
