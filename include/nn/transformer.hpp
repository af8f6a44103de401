// TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer,
// TransformerDecoder and Transformer, as PyTorch's.
#pragma once
#include <limits>
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

// The options of a decoder layer are an encoder layer's (libtorch's have
// the same fields).
using TransformerDecoderLayerOptions = TransformerEncoderLayerOptions;

namespace detail_transformer {
// The feed-forward block of either layer: dropout(linear2(dropout(act(linear1(x))))),
// the last dropout the layer's own.
template <class T>
Tensor<T> feed_forward(const Tensor<T>& x, const Linear& linear1, const Dropout& dropout, const Linear& linear2,
                       const Dropout& last, init::Nonlinearity activation) {
  const Tensor<T> h = linear1(x);
  const Tensor<T> a = activation == init::Nonlinearity::GELU ? Tensor<T>(F::gelu(h)) : Tensor<T>(F::relu(h));
  return last(linear2(dropout(a)));
}

// num_layers copies of `proto` (each starting from its weights, as
// PyTorch's deep copies; building them does not move the random stream),
// pushed onto `list` and returned typed.
template <class Layer>
std::vector<Layer> clones(const Layer& proto, int64_t num_layers, ModuleList& list) {
  detail::check(num_layers > 0, "num_layers must be positive");
  std::vector<Layer> out;
  for (int64_t i = 0; i < num_layers; ++i) {
    Layer copy = [&] {
      const detail::GeneratorStateGuard keep_stream;
      return Layer(proto->options);
    }();
    if (proto->parameters().front().template is<double>()) copy->template to<double>();
    copy->load_state_dict(proto->state_dict());
    copy->train(proto->is_training());
    list->push_back(copy);
    out.push_back(copy);
  }
  return out;
}
}  // namespace detail_transformer

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
      return detail_transformer::feed_forward(x, linear1, dropout, linear2, dropout2, options.activation());
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

// num_layers copies of encoder_layer (detail_transformer::clones), then the
// optional norm. Keys: layers.0.self_attn.in_proj_weight, ...,
// norm.weight.
class TransformerEncoderImpl : public Module {
 public:
  explicit TransformerEncoderImpl(const TransformerEncoderOptions& options)
      : options(options), layers(register_module("layers", ModuleList())) {
    layers_ = detail_transformer::clones(options.encoder_layer(), options.num_layers(), layers);
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

// Self-attention, attention over the encoder's output (memory) and a
// feed-forward block, each with a residual connection and a LayerNorm:
// after each block (post-norm, the default) or before it (norm_first).
// Submodules and their order are PyTorch's (self_attn, multihead_attn,
// linear1, dropout, linear2, norm1, norm2, norm3, dropout1, dropout2,
// dropout3), so are the state_dict keys and the initial weights for a seed.
class TransformerDecoderLayerImpl : public Module {
 public:
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options)
      : options(options),
        self_attn(register_module("self_attn", attention(options))),
        multihead_attn(register_module("multihead_attn", attention(options))),
        linear1(register_module("linear1", Linear(options.d_model(), options.dim_feedforward()))),
        dropout(register_module("dropout", Dropout(options.dropout()))),
        linear2(register_module("linear2", Linear(options.dim_feedforward(), options.d_model()))),
        norm1(register_module("norm1", norm(options))),
        norm2(register_module("norm2", norm(options))),
        norm3(register_module("norm3", norm(options))),
        dropout1(register_module("dropout1", Dropout(options.dropout()))),
        dropout2(register_module("dropout2", Dropout(options.dropout()))),
        dropout3(register_module("dropout3", Dropout(options.dropout()))) {}
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  std::string name() const override { return "TransformerDecoderLayer"; }

  // tgt (T, N, E) and memory (S, N, E) ((N, T, E), (N, S, E) with
  // batch_first; or unbatched (T, E), (S, E)); the masks as
  // MultiheadAttention's attn_mask and key_padding_mask, tgt's for the
  // self-attention and memory's for the attention over memory.
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& tgt, const Tensor<T>& memory, const AnyTensor& tgt_mask = {},
                    const AnyTensor& memory_mask = {}, const AnyTensor& tgt_key_padding_mask = {},
                    const AnyTensor& memory_key_padding_mask = {}) const {
    auto self_attention = [&](const Tensor<T>& x) {
      return dropout1(std::get<0>(self_attn(x, x, x, tgt_key_padding_mask, false, tgt_mask)));
    };
    auto memory_attention = [&](const Tensor<T>& x) {
      return dropout2(std::get<0>(multihead_attn(x, memory, memory, memory_key_padding_mask, false, memory_mask)));
    };
    auto feed_forward = [&](const Tensor<T>& x) {
      return detail_transformer::feed_forward(x, linear1, dropout, linear2, dropout3, options.activation());
    };
    if (options.norm_first()) {
      const Tensor<T> x = tgt + self_attention(norm1(tgt));
      const Tensor<T> y = x + memory_attention(norm2(x));
      return y + feed_forward(norm3(y));
    }
    const Tensor<T> x = norm1(tgt + self_attention(tgt));
    const Tensor<T> y = norm2(x + memory_attention(x));
    return norm3(y + feed_forward(y));
  }

  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn, multihead_attn;
  Linear linear1;
  Dropout dropout;
  Linear linear2;
  LayerNorm norm1, norm2, norm3;
  Dropout dropout1, dropout2, dropout3;

 private:
  static MultiheadAttention attention(const TransformerDecoderLayerOptions& o) {
    return MultiheadAttention(MultiheadAttentionOptions(o.d_model(), o.nhead()).dropout(o.dropout()).batch_first(o.batch_first()));
  }
  static LayerNorm norm(const TransformerDecoderLayerOptions& o) {
    return LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps()));
  }
};
using TransformerDecoderLayer = ModuleHolder<TransformerDecoderLayerImpl>;

struct TransformerDecoderOptions {
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  // A final normalization after the last layer.
  TransformerDecoderOptions& norm(LayerNorm v) { norm_ = std::move(v); return *this; }
  const TransformerDecoderLayer& decoder_layer() const { return decoder_layer_; }
  int64_t num_layers() const { return num_layers_; }
  const LayerNorm& norm() const { return norm_; }

 private:
  TransformerDecoderLayer decoder_layer_;
  int64_t num_layers_;
  LayerNorm norm_ = nullptr;
};

// num_layers copies of decoder_layer (detail_transformer::clones), then the
// optional norm; every layer attends to the same memory.
class TransformerDecoderImpl : public Module {
 public:
  explicit TransformerDecoderImpl(const TransformerDecoderOptions& options)
      : options(options), layers(register_module("layers", ModuleList())) {
    layers_ = detail_transformer::clones(options.decoder_layer(), options.num_layers(), layers);
    if (!options.norm().is_empty()) register_module("norm", options.norm());
  }
  TransformerDecoderImpl(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : TransformerDecoderImpl(TransformerDecoderOptions(std::move(decoder_layer), num_layers)) {}
  std::string name() const override { return "TransformerDecoder"; }

  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& tgt, const Tensor<T>& memory, const AnyTensor& tgt_mask = {},
                    const AnyTensor& memory_mask = {}, const AnyTensor& tgt_key_padding_mask = {},
                    const AnyTensor& memory_key_padding_mask = {}) const {
    Tensor<T> x = tgt;
    for (const TransformerDecoderLayer& layer : layers_)
      x = layer(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
    return options.norm().is_empty() ? x : options.norm()(x);
  }

  TransformerDecoderOptions options;
  ModuleList layers;

 private:
  std::vector<TransformerDecoderLayer> layers_;  // the same modules as `layers`, typed
};
using TransformerDecoder = ModuleHolder<TransformerDecoderImpl>;

// libtorch: TransformerOptions(d_model = 512, nhead = 8, num_encoder_layers = 6,
// num_decoder_layers = 6), with the layers' options as setters.
struct TransformerOptions {
  TransformerOptions(int64_t d_model = 512, int64_t nhead = 8, int64_t num_encoder_layers = 6,
                     int64_t num_decoder_layers = 6)
      : layer_(d_model, nhead), num_encoder_layers_(num_encoder_layers), num_decoder_layers_(num_decoder_layers) {}
  TransformerOptions& dim_feedforward(int64_t v) { layer_.dim_feedforward(v); return *this; }
  TransformerOptions& dropout(double v) { layer_.dropout(v); return *this; }
  TransformerOptions& activation(init::Nonlinearity v) { layer_.activation(v); return *this; }
  TransformerOptions& layer_norm_eps(double v) { layer_.layer_norm_eps(v); return *this; }
  TransformerOptions& batch_first(bool v) { layer_.batch_first(v); return *this; }
  TransformerOptions& norm_first(bool v) { layer_.norm_first(v); return *this; }
  int64_t d_model() const { return layer_.d_model(); }
  int64_t nhead() const { return layer_.nhead(); }
  int64_t num_encoder_layers() const { return num_encoder_layers_; }
  int64_t num_decoder_layers() const { return num_decoder_layers_; }
  // The options every encoder and decoder layer is built with.
  const TransformerEncoderLayerOptions& layer() const { return layer_; }

 private:
  TransformerEncoderLayerOptions layer_;
  int64_t num_encoder_layers_, num_decoder_layers_;
};

// An encoder and a decoder, each ending in a LayerNorm, with every weight
// matrix then drawn again from xavier_uniform_ in parameter order, as
// PyTorch's nn.Transformer does (so the weights for a seed are its).
class TransformerImpl : public Module {
 public:
  explicit TransformerImpl(const TransformerOptions& options = {})
      : options(options),
        encoder(register_module("encoder", TransformerEncoder(TransformerEncoderOptions(
                                               TransformerEncoderLayer(options.layer()), options.num_encoder_layers())
                                               .norm(final_norm(options))))),
        decoder(register_module("decoder", TransformerDecoder(TransformerDecoderOptions(
                                               TransformerDecoderLayer(options.layer()), options.num_decoder_layers())
                                               .norm(final_norm(options))))) {
    for (AnyTensor& p : parameters())
      if (p.dim() > 1) init::xavier_uniform_(p);
  }
  std::string name() const override { return "Transformer"; }

  // src (S, N, E), tgt (T, N, E) ((N, S, E), (N, T, E) with batch_first;
  // or unbatched); src_mask, tgt_mask and memory_mask (the decoder's
  // attention over the encoder's output) as attn_mask, the padding masks
  // as key_padding_mask. Returns (T, N, E).
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& src, const Tensor<T>& tgt, const AnyTensor& src_mask = {},
                    const AnyTensor& tgt_mask = {}, const AnyTensor& memory_mask = {},
                    const AnyTensor& src_key_padding_mask = {}, const AnyTensor& tgt_key_padding_mask = {},
                    const AnyTensor& memory_key_padding_mask = {}) const {
    const bool batched = src.dim() == 3;
    detail::check(batched || tgt.dim() == 2, "the batch number of src and tgt must be equal");
    if (batched) {
      const int64_t batch_dim = options.layer().batch_first() ? 0 : 1;
      detail::check(tgt.dim() == 3 && src.size(batch_dim) == tgt.size(batch_dim),
                    "the batch number of src and tgt must be equal");
    }
    detail::check(src.size(-1) == options.d_model() && tgt.size(-1) == options.d_model(),
                  "the feature number of src and tgt must be equal to d_model");
    const Tensor<T> memory = encoder(src, src_mask, src_key_padding_mask);
    return decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
  }

  // The (sz, sz) causal mask: 0 on and below the diagonal, -inf above it.
  template <class T = float>
  static Tensor<T> generate_square_subsequent_mask(int64_t sz) {
    return triu(full<T>({sz, sz}, -std::numeric_limits<T>::infinity()), 1);
  }

  TransformerOptions options;
  TransformerEncoder encoder;
  TransformerDecoder decoder;

 private:
  static LayerNorm final_norm(const TransformerOptions& o) {
    return LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer().layer_norm_eps()));
  }
};
using Transformer = ModuleHolder<TransformerImpl>;

}  // namespace tsr::nn
