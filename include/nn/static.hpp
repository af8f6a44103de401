// Models defined at compile time:
//
//   nn::Static<nn::sized::Linear<784, 256>, nn::ReLU, nn::sized::Dropout<0.2>,
//              nn::sized::Linear<256, 10>> model;
//
// reads as the Sequential it is equivalent to, and is one type: feature
// sizes are checked when the program compiles, the forward is a chain of
// direct calls (no virtual dispatch, no type-erased tensors), a ReLU, Tanh
// or Sigmoid after a Linear is computed in the product's epilogue, and
// elementwise layers that follow one another (activations, dropout) are one
// expression, evaluated in one pass with one fused backward. The layers are the same
// LinearImpl, ReLUImpl, ... as the dynamic form's, registered as "0", "1",
// ..., and the model prints as "Sequential": named_parameters(), state_dict()
// keys, printing and initialization (same seed, same weights) are those of
// the equivalent nn::Sequential and of PyTorch's nn.Sequential, so
// checkpoints move between the forms.
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "activation.hpp"
#include "dropout.hpp"
#include "linear.hpp"
#include "norm.hpp"

namespace tsr::nn::sized {

// A Linear with its sizes in the type: y = x W^T + b, W (Out x In).
template <int64_t In, int64_t Out, bool Bias = true>
struct Linear {
  static_assert(In >= 0 && Out >= 0, "nn::sized::Linear: sizes must be non-negative");
  static constexpr int64_t in_features = In, out_features = Out;
  static std::shared_ptr<LinearImpl> make() { return std::make_shared<LinearImpl>(LinearOptions(In, Out).bias(Bias)); }
};

// LayerNorm over a last dimension of N features (which it keeps).
template <int64_t N>
struct LayerNorm {
  static_assert(N > 0, "nn::sized::LayerNorm: the normalized size must be positive");
  static constexpr int64_t in_features = N, out_features = N;
  static std::shared_ptr<LayerNormImpl> make() { return std::make_shared<LayerNormImpl>(LayerNormOptions({N})); }
};

// Dropout with its probability in the type (nn::Dropout is p = 0.5).
template <double P = 0.5>
struct Dropout {
  static_assert(P >= 0 && P <= 1, "nn::sized::Dropout: dropout probability has to be between 0 and 1");
  static std::shared_ptr<DropoutImpl> make() { return std::make_shared<DropoutImpl>(P); }
};

}  // namespace tsr::nn::sized

namespace tsr::detail {

// A layer of nn::Static is a sized layer (with a make()) or a module type
// whose module needs no options (nn::ReLU, nn::Tanh, nn::Flatten, ...).
template <class L>
auto make_static_layer() {
  if constexpr (requires { L::make(); }) {
    return L::make();
  } else {
    static_assert(requires { typename L::ImplType; },
                  "nn::Static takes module types (nn::ReLU) and sized layers (nn::sized::Linear<784, 256>)");
    using Impl = typename L::ImplType;
    static_assert(std::is_default_constructible_v<Impl>,
                  "nn::Static: this module needs options; use its sized form (nn::sized::...) or nn::Sequential");
    return std::make_shared<Impl>();
  }
}
template <class L>
using static_layer_t = typename decltype(make_static_layer<L>())::element_type;

// The feature sizes a layer takes and gives, where its type says (-1: any,
// the layer keeps what it is given).
template <class L>
constexpr int64_t static_in_features() {
  if constexpr (requires { L::in_features; }) return L::in_features;
  else return -1;
}
template <class L>
constexpr int64_t static_out_features() {
  if constexpr (requires { L::out_features; }) return L::out_features;
  else return -1;
}

// The first two layers whose sizes disagree: the position of the layer that
// gave the features and of the one that takes a different number; (n, n)
// where all agree.
template <class... L>
constexpr std::pair<std::size_t, std::size_t> first_feature_mismatch() {
  constexpr std::size_t n = sizeof...(L);
  constexpr std::array<int64_t, n> in{static_in_features<L>()...}, out{static_out_features<L>()...};
  std::size_t giver = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (giver < n && in[i] >= 0 && in[i] != out[giver]) return {giver, i};
    if (out[i] >= 0) giver = i;
  }
  return {n, n};
}
struct NoLayer {
  static constexpr int64_t in_features = 0, out_features = 0;
};
template <std::size_t I, class... L>
using static_layer_or_none = std::tuple_element_t<I, std::tuple<L..., NoLayer>>;

// False for two layers of which the second takes a different number of
// features than the first gives: the compiler's note on the failed
// assertion in StaticImpl names both, with their sizes.
template <class Giver, class Taker>
inline constexpr bool layer_sizes_agree = Giver::out_features == Taker::in_features;

}  // namespace tsr::detail

namespace tsr::nn {

template <class... Layers>
class StaticImpl : public Module {
  static_assert(sizeof...(Layers) > 0, "nn::Static needs at least one layer");
  static constexpr auto mismatch = detail::first_feature_mismatch<Layers...>();
  static_assert(detail::layer_sizes_agree<detail::static_layer_or_none<mismatch.first, Layers...>,
                                          detail::static_layer_or_none<mismatch.second, Layers...>>,
                "nn::Static: a layer takes a different number of features than the layer before it gives "
                "(the note below names the two layers and their sizes)");
  static constexpr std::size_t kSize = sizeof...(Layers);

 public:
  // The layers, built in order (so that they draw their initial weights as
  // the equivalent Sequential does) and registered as "0", "1", ...
  StaticImpl() : layers_{detail::make_static_layer<Layers>()...} { register_layers(std::make_index_sequence<kSize>{}); }

  std::string name() const override { return "Sequential"; }
  static constexpr std::size_t size() { return kSize; }
  // The I-th layer as its own type: model->at<0>().weight.
  template <std::size_t I>
  auto& at() const {
    return *std::get<I>(layers_);
  }

  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return run<0>(x);
  }

 private:
  template <std::size_t I, class T>
  static constexpr bool fusable() {
    if constexpr (I >= kSize) return false;
    else return requires(const detail::static_layer_t<std::tuple_element_t<I, std::tuple<Layers...>>>& m, const Tensor<T>& x) { m.lazy(x); };
  }
  // The activation layer I is, where a product before it can compute it.
  template <std::size_t I>
  static constexpr detail::Activation activation() {
    if constexpr (I >= kSize) return detail::Activation::none;
    else return detail::fusable_activation<detail::static_layer_t<std::tuple_element_t<I, std::tuple<Layers...>>>>();
  }
  // Whether layer I is a product (Linear) that computes layer I + 1, an
  // activation, in its epilogue.
  template <std::size_t I, class T>
  static constexpr bool activated() {
    if constexpr (activation<I + 1>() == detail::Activation::none) return false;
    else return requires(const detail::static_layer_t<std::tuple_element_t<I, std::tuple<Layers...>>>& m, const Tensor<T>& x) {
      m.forward_activated(x, detail::Activation::relu);
    };
  }
  // Layer I on, from its input x.
  template <std::size_t I, class T>
  Tensor<T> run(const Tensor<T>& x) const {
    if constexpr (I == kSize) return x;
    else if constexpr (fusable<I, T>()) return fuse<I, T>(x);
    else if constexpr (activated<I, T>()) return run<I + 2>(std::get<I>(layers_)->forward_activated(x, activation<I + 1>()));
    else return run<I + 1>(std::get<I>(layers_)->forward(x));
  }
  // Elementwise layers I, I + 1, ... on the expression e, then materialized
  // once before the next layer that is not elementwise.
  template <std::size_t I, class T, class E>
  Tensor<T> fuse(const E& e) const {
    if constexpr (fusable<I, T>()) return fuse<I + 1, T>(std::get<I>(layers_)->lazy(e));
    else return run<I>(Tensor<T>(e));
  }
  template <std::size_t... I>
  void register_layers(std::index_sequence<I...>) {
    (register_module(std::to_string(I), std::get<I>(layers_)), ...);
  }

  std::tuple<std::shared_ptr<detail::static_layer_t<Layers>>...> layers_;
};
template <class... Layers>
using Static = ModuleHolder<StaticImpl<Layers...>>;

}  // namespace tsr::nn
