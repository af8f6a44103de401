// An activation fused into the layer before it: Linear or Conv2d followed by
// ReLU, Tanh or Sigmoid (in a Sequential or nn::Static) computes the
// activation in the matrix product's epilogue, on each register tile as
// soon as the tile is done, while it is in L1: the pre-activation is never
// written to memory and never read back.
//
// The backward needs the activation's derivative, which for these three is
// a function of the output (relu: y > 0, tanh: 1 - y^2, sigmoid: y (1 - y);
// PyTorch's own backward formulas read the output too), so nothing else is
// kept. It is one node whose gradient, g times the derivative, is one fused
// pass that the layer's product rules then read three times (input, weight
// and bias gradients): folding it into each of those products' packing
// would compute it three times over.
#pragma once
#include <type_traits>

#include "../autograd/function_node.hpp"
#include "../linalg.hpp"

namespace tsr::autograd::tag {
struct FusedActivation;
}  // namespace tsr::autograd::tag

namespace tsr::detail {

enum class Activation { none, relu, tanh, sigmoid };

// PyTorch's node name for each activation's backward.
inline const char* activation_backward_name(Activation act) {
  switch (act) {
    case Activation::relu: return "ReluBackward0";
    case Activation::tanh: return "TanhBackward0";
    case Activation::sigmoid: return "SigmoidBackward0";
    case Activation::none: break;
  }
  return "";
}

// What an epilogue does to C: add bias[i] to row i (bias may be null), then
// apply the activation.
template <class T>
struct BiasActivation {
  const T* row_bias;
  Activation act;
};

// op(x + add) over count elements of stride cs, in full batches: a short
// run goes through a padded batch, so every element is computed the way
// the engine's vector path computes it.
//
// A host function: nvcc's device pass (where kCpuSimd is false, expr.hpp)
// compiles no SIMD batch and never runs it, and the ops applied to batches
// there drew nvcc's "calling a __host__ function from a __host__ __device__
// function" warnings, so there its body is empty.
template <class T, class Op>
void activate_run(T* p, int64_t cs, int64_t count, const T* add) {
  if constexpr (kCpuSimd) {
    using B = xsimd::batch<T>;
    constexpr int64_t W = static_cast<int64_t>(B::size);
    const Op op{};
    int64_t j = 0;
    if (cs == 1)
      for (; j + W <= count; j += W) {
        B v = B::load_unaligned(p + j);
        if (add) v = v + B(*add);
        op(v).store_unaligned(p + j);
      }
    for (; j < count; j += W) {
      alignas(64) T lane[W] = {};
      const int64_t n = std::min(W, count - j);
      for (int64_t q = 0; q < n; ++q) lane[q] = add ? p[(j + q) * cs] + *add : p[(j + q) * cs];
      op(B::load_aligned(lane)).store_aligned(lane);
      for (int64_t q = 0; q < n; ++q) p[(j + q) * cs] = lane[q];
    }
  }
}

template <class T>
void bias_activation_epilogue(const void* state, T* p, int64_t cs, int64_t i, int64_t, int64_t count) {
  const auto& w = *static_cast<const BiasActivation<T>*>(state);
  const T* add = w.row_bias ? w.row_bias + i : nullptr;
  switch (w.act) {
    case Activation::relu: return activate_run<T, ops::Relu>(p, cs, count, add);
    case Activation::tanh: return activate_run<T, ops::Tanh>(p, cs, count, add);
    case Activation::sigmoid: return activate_run<T, ops::Sigmoid>(p, cs, count, add);
    case Activation::none:
      if (add)
        for (int64_t j = 0; j < count; ++j) p[j * cs] += *add;
      return;
  }
}

// The epilogue doing `work` (which must outlive the product), or none when
// there is nothing to do.
template <class T>
Epilogue<T> epilogue_of(const BiasActivation<T>& work) {
  if (!work.row_bias && work.act == Activation::none) return {};
  return {&bias_activation_epilogue<T>, &work};
}

// The activation applied to a tensor, as the engine's expression (the paths
// that cannot fuse it into a product).
template <class T>
Tensor<T> activate(const Tensor<T>& x, Activation act) {
  switch (act) {
    case Activation::relu: return relu(x);
    case Activation::tanh: return tsr::tanh(x);
    case Activation::sigmoid: return sigmoid(x);
    case Activation::none: break;
  }
  return x;
}

// The gradient through the activation, from its output y.
template <class T>
Tensor<T> activation_grad(const Tensor<T>& g, const Tensor<T>& y, Activation act) {
  switch (act) {
    case Activation::relu: return backward_eval<T>(where(y > 0, g, 0));
    case Activation::tanh: return backward_eval<T>(g * (1 - square(y)));
    case Activation::sigmoid: return backward_eval<T>(g * (1 - y) * y);
    case Activation::none: break;
  }
  return g;
}

// The activation, when the module type (or the function an elementwise
// module applies) is one that can be fused into the product before it (an
// nn::ReLU, nn::Tanh or nn::Sigmoid).
template <class Impl>
constexpr Activation fusable_activation() {
  if constexpr (requires { Impl::fused_activation; }) return Impl::fused_activation;
  else return Activation::none;
}

// The tensor a product's autograd node is recorded on when `act` was
// computed in its epilogue: a handle on out's storage, standing for the
// pre-activation whose values the epilogue replaced (the product's rule
// reads only its operands); out itself without an activation.
template <class T>
Tensor<T> pre_activation(const Tensor<T>& out, Activation act) {
  return act == Activation::none ? out : out.detach();
}
// Records out = act(pre) for autograd (nothing without an activation).
template <class T>
void record_activation(const Tensor<T>& out, const Tensor<T>& pre, Activation act) {
  if (act != Activation::none) record_op<autograd::tag::FusedActivation>(out, pre, act);
}

}  // namespace tsr::detail

namespace tsr::autograd {
template <>
struct OpRule<tag::FusedActivation> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& pre, detail::Activation act) {
    struct Rule {
      SavedTensor<T> y;
      detail::Activation act;
      std::vector<GradRef> backward(const Tensor<T>& g) const { return {detail::activation_grad(g, y.get(), act).impl_ptr()}; }
    };
    set_rule(out, detail::activation_backward_name(act), Rule{SavedTensor<T>::output(out), act},
             {detail::gradient_edge(pre)});
  }
};
}  // namespace tsr::autograd
