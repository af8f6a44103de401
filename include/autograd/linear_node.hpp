// The node of an expression linear in its tensors: sums, differences and
// negations of tensors, and their products and quotients by numbers (a
// stencil's weighted sum of views, an optimizer's running average,
// `y += x`). Each tensor's gradient is the incoming gradient times a number
// that is known when the expression is recorded, so one node type per
// element type serves every such expression, compiled once (the precompiled
// core holds it), where a fused node compiles its own backward kernels for
// each expression type. It computes the same gradients: the incoming
// gradient times the product of the numbers on the tensor's path, divided
// by the product of its divisors (bit for bit as the fused rules when the
// path has one number at most; with more, within a rounding or two).
//
// Like PyTorch's add, sub, neg and products by a number, whose backward
// reads no tensor, it saves none: it keeps no input alive, and an input
// modified in place afterwards is no error. A second backward without
// retain_graph is PyTorch's error when the expression multiplies or divides
// by a number (PyTorch saves that number as a tensor), and works otherwise.
#pragma once
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "node.hpp"

namespace tsr::autograd {

// "FusedBackward(mul,sin)"; over a bare tensor, PyTorch's names: a clone
// is CloneBackward0, sum(x) SumBackward0.
#if TSR_CORE_DEFINITIONS
TSR_CORE_INLINE std::string fused_node_name(const std::string& kind, const char* ops) {
  if (*ops) return kind + "(" + ops + ")";
  return (kind == "FusedBackward" ? std::string("CloneBackward") : kind) + "0";
}
#else
std::string fused_node_name(const std::string& kind, const char* ops);
#endif

// Scales: whether the expression multiplies or divides by a number (else
// each gradient is g or -g, and no scaling kernel is compiled for it).
template <class T, bool Scales>
class LinearNode final : public TypedNode<T> {
 public:
  // `ops`: the expression's op names, in static storage (detail::op_names).
  explicit LinearNode(const char* ops) : ops_(ops) {}
  std::string name() const override { return fused_node_name("FusedBackward", ops_); }
  std::vector<GradRef> apply(const GradRef& grad) override;
  // PyTorch saves the numbers of products and quotients, and frees them.
  void release_saved() override { released_ = Scales; }

  // Adds the next tensor of the expression (in leaf order), whose gradient
  // is the incoming one times `multiplier`, divided by `divisor`.
  void add_term(const Tensor<T>& leaf, T multiplier, T divisor);

 private:
  struct Term {
    T multiplier;
    T divisor;
    Shape sizes;
  };
  const char* ops_;
  std::vector<Term> terms_;
  bool released_ = false;
};

}  // namespace tsr::autograd

namespace tsr::detail {

template <class T>
Tensor<T> sum_to(const Tensor<T>& g, const Shape& shape);

// What E is as a function of its tensors of type T: a number (a scalar
// leaf), linear (see above), or neither (another op, a cast, another
// element type: those get a fused node); and for a linear E, whether it
// multiplies or divides by a number (`scales`).
template <class E, class T>
struct Linearity {
  static constexpr bool number = false, linear = false, scales = false;
};
template <class T>
struct Linearity<ScalarLeaf<T>, T> {
  static constexpr bool number = true, linear = false, scales = false;
};
template <class T>
struct Linearity<Tensor<T>, T> {
  static constexpr bool number = false, linear = true, scales = false;
};
template <class A, class T>
struct Linearity<Unary<ops::Neg, A>, T> {
  static constexpr bool number = false, linear = Linearity<A, T>::linear, scales = Linearity<A, T>::scales;
};
template <class A, class B, class T>
struct LinearSum {
  using LA = Linearity<A, T>;
  using LB = Linearity<B, T>;
  static constexpr bool number = false,
                        linear = (LA::linear || LB::linear) && (LA::linear || LA::number) && (LB::linear || LB::number),
                        scales = LA::scales || LB::scales;
};
template <class A, class B, class T>
struct Linearity<Binary<ops::Add, A, B>, T> : LinearSum<A, B, T> {};
template <class A, class B, class T>
struct Linearity<Binary<ops::Sub, A, B>, T> : LinearSum<A, B, T> {};
template <class A, class B, class T>
struct Linearity<Binary<ops::Mul, A, B>, T> {
  static constexpr bool number = false, linear = (Linearity<A, T>::linear && Linearity<B, T>::number) ||
                                                 (Linearity<A, T>::number && Linearity<B, T>::linear),
                        scales = true;
};
template <class A, class B, class T>
struct Linearity<Binary<ops::Div, A, B>, T> {
  static constexpr bool number = false, linear = Linearity<A, T>::linear && Linearity<B, T>::number, scales = true;
};

// Whether a recorded E gets a LinearNode: a float or double expression
// linear in its tensors, a bare tensor included (a clone: PyTorch's
// CloneBackward0 saves nothing either).
template <class E>
constexpr bool linear_in_tensors() {
  using T = typename E::value_type;
  return (std::is_same_v<T, float> || std::is_same_v<T, double>) && Linearity<E, T>::linear;
}

// Whether a Tensor<T> made from E records a LinearNode: E is linear and
// of type T (a conversion, Tensor<float> from a double expression, casts:
// its node is the fused one).
template <class T, class E>
constexpr bool records_linear_node() {
  return std::is_same_v<typename E::value_type, T> && linear_in_tensors<E>();
}

// Calls node.add_term(tensor, multiplier, divisor) for each tensor of a
// linear expression, in leaf order: the product of the numbers it is
// multiplied by on the way to the root (signs included), and of those it
// is divided by.
template <class Node, class E, class T>
void add_linear_terms(Node& node, const E& e, T multiplier, T divisor) {
  if constexpr (std::is_same_v<E, Tensor<T>>) {
    node.add_term(e, multiplier, divisor);
  } else if constexpr (Linearity<E, T>::number) {
    // a number added: no gradient
  } else if constexpr (std::is_same_v<decltype(e.op), ops::Neg>) {
    add_linear_terms(node, e.a, -multiplier, divisor);
  } else if constexpr (std::is_same_v<decltype(e.op), ops::Add>) {
    add_linear_terms(node, e.a, multiplier, divisor);
    add_linear_terms(node, e.b, multiplier, divisor);
  } else if constexpr (std::is_same_v<decltype(e.op), ops::Sub>) {
    add_linear_terms(node, e.a, multiplier, divisor);
    add_linear_terms(node, e.b, -multiplier, divisor);
  } else if constexpr (std::is_same_v<decltype(e.op), ops::Mul>) {
    if constexpr (Linearity<decltype(e.a), T>::number) add_linear_terms(node, e.b, multiplier * e.a.value, divisor);
    else add_linear_terms(node, e.a, multiplier * e.b.value, divisor);
  } else {
    static_assert(std::is_same_v<decltype(e.op), ops::Div>);
    add_linear_terms(node, e.a, multiplier, divisor * e.b.value);
  }
}

}  // namespace tsr::detail

namespace tsr::autograd {

template <class T, bool Scales>
void LinearNode<T, Scales>::add_term(const Tensor<T>& leaf, T multiplier, T divisor) {
  terms_.push_back({multiplier, divisor, leaf.sizes()});
  this->next.push_back(detail::gradient_edge(leaf));
}

template <class T, bool Scales>
std::vector<GradRef> LinearNode<T, Scales>::apply(const GradRef& grad) {
  if (released_) fail_released();
  const Tensor<T> g(grad);
  std::vector<GradRef> out(this->next.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (!this->next[k]) continue;
    const Term& term = terms_[k];
    // Always a new buffer (a gradient passed on must not be shared), and
    // recorded op by op under create_graph. A divisor takes a second pass:
    // the kernels of g * s and g / s are the ones every fused gradient of a
    // product or quotient by a number uses, where one of (g * m) / d
    // would be compiled for this node alone.
    Tensor<T> scaled;
    if constexpr (Scales) {
      scaled = detail::backward_eval<T>(g * term.multiplier);
      if (term.divisor != T(1)) scaled = detail::backward_eval<T>(scaled / term.divisor);
    } else {
      scaled = term.multiplier == T(1) ? detail::backward_eval<T>(g) : detail::backward_eval<T>(-g);
    }
    out[k] = detail::sum_to(scaled, term.sizes).impl_ptr();
  }
  return out;
}

}  // namespace tsr::autograd
