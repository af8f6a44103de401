// The node of an expression linear in its tensors: sums, differences and
// negations of tensors, and their products and quotients by numbers (a
// stencil's weighted sum of views, an optimizer's running average,
// `y += x`). Each tensor's gradient is the incoming gradient times a number
// that is known when the expression is recorded, so one node type per
// element type serves every such expression, compiled once (the precompiled
// core holds it), where a fused node compiles its own backward kernels for
// each expression type. It reads the same gradients: the incoming gradient
// times the path's product of numbers, divided by the product of its
// divisors (with one factor on the path, as the fused rules, bit for bit).
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

template <class T>
class LinearNode final : public TypedNode<T> {
 public:
  // `ops`: the expression's op names, in static storage (detail::op_names).
  explicit LinearNode(const char* ops) : ops_(ops) {}
  std::string name() const override { return fused_node_name("FusedBackward", ops_); }
  std::vector<GradRef> apply(const GradRef& grad) override;
  void release_saved() override { released_ = saves_numbers_; }

  // Adds the next tensor of the expression (in leaf order), whose gradient
  // is the incoming one times `multiplier`, divided by `divisor`.
  void add_term(const Tensor<T>& leaf, T multiplier, T divisor);
  // The expression multiplies or divides by a number.
  void set_saves_numbers() { saves_numbers_ = true; }

 private:
  struct Term {
    T multiplier;
    T divisor;
    Shape sizes;
  };
  const char* ops_;
  std::vector<Term> terms_;
  bool saves_numbers_ = false;
  bool released_ = false;
};

}  // namespace tsr::autograd

namespace tsr::detail {

template <class T>
Tensor<T> sum_to(const Tensor<T>& g, const Shape& shape);

// What E is as a function of its tensors of type T: a number (a scalar
// leaf), linear (see above), or neither (another op, a cast, another
// element type: those get a fused node).
template <class E, class T>
struct Linearity {
  static constexpr bool number = false, linear = false;
};
template <class T>
struct Linearity<ScalarLeaf<T>, T> {
  static constexpr bool number = true, linear = false;
};
template <class T>
struct Linearity<Tensor<T>, T> {
  static constexpr bool number = false, linear = true;
};
template <class A, class T>
struct Linearity<Unary<ops::Neg, A>, T> {
  static constexpr bool number = false, linear = Linearity<A, T>::linear;
};
template <class A, class B, class T>
struct LinearSum {
  using LA = Linearity<A, T>;
  using LB = Linearity<B, T>;
  static constexpr bool number = false,
                        linear = (LA::linear || LB::linear) && (LA::linear || LA::number) && (LB::linear || LB::number);
};
template <class A, class B, class T>
struct Linearity<Binary<ops::Add, A, B>, T> : LinearSum<A, B, T> {};
template <class A, class B, class T>
struct Linearity<Binary<ops::Sub, A, B>, T> : LinearSum<A, B, T> {};
template <class A, class B, class T>
struct Linearity<Binary<ops::Mul, A, B>, T> {
  static constexpr bool number = false, linear = (Linearity<A, T>::linear && Linearity<B, T>::number) ||
                                                 (Linearity<A, T>::number && Linearity<B, T>::linear);
};
template <class A, class B, class T>
struct Linearity<Binary<ops::Div, A, B>, T> {
  static constexpr bool number = false, linear = Linearity<A, T>::linear && Linearity<B, T>::number;
};

// Whether a recorded E gets a LinearNode: a float or double expression
// linear in its tensors, and not a bare tensor (a clone keeps its own node).
template <class E>
constexpr bool linear_in_tensors() {
  using T = typename E::value_type;
  return (std::is_same_v<T, float> || std::is_same_v<T, double>) && !std::is_same_v<E, Tensor<T>> &&
         Linearity<E, T>::linear;
}

// Calls node.add_term(tensor, multiplier, divisor) for each tensor of a
// linear expression, in leaf order: the product of the numbers it is
// multiplied by on the way to the root (signs included), and of those it
// is divided by.
template <class T, class E>
void add_linear_terms(autograd::LinearNode<T>& node, const E& e, T multiplier, T divisor) {
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
    node.set_saves_numbers();
    if constexpr (Linearity<decltype(e.a), T>::number) add_linear_terms(node, e.b, multiplier * e.a.value, divisor);
    else add_linear_terms(node, e.a, multiplier * e.b.value, divisor);
  } else {
    static_assert(std::is_same_v<decltype(e.op), ops::Div>);
    node.set_saves_numbers();
    add_linear_terms(node, e.a, multiplier, divisor * e.b.value);
  }
}

}  // namespace tsr::detail

namespace tsr::autograd {

template <class T>
void LinearNode<T>::add_term(const Tensor<T>& leaf, T multiplier, T divisor) {
  terms_.push_back({multiplier, divisor, leaf.sizes()});
  this->next.push_back(detail::gradient_edge(leaf));
}

template <class T>
std::vector<GradRef> LinearNode<T>::apply(const GradRef& grad) {
  if (released_) fail_released();
  const Tensor<T> g(grad);
  std::vector<GradRef> out(this->next.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (!this->next[k]) continue;
    const Term& term = terms_[k];
    // Always a new buffer (a gradient passed on must not be shared), and
    // recorded op by op under create_graph.
    const Tensor<T> scaled = term.divisor == T(1) ? detail::backward_eval<T>(g * term.multiplier)
                                                  : detail::backward_eval<T>(g * term.multiplier / term.divisor);
    out[k] = detail::sum_to(scaled, term.sizes).impl_ptr();
  }
  return out;
}

}  // namespace tsr::autograd
