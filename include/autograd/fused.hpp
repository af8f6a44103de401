// Fused symbolic backward of elementwise expressions.
//
// Materializing an expression with a leaf that requires grad records ONE
// node for the whole expression (FusedNode), which keeps the expression: its
// leaves are the saved tensors. Backward walks the expression tree at compile
// time with the chain rule: every leaf gets a gradient *expression* over the
// leaves and the incoming gradient, evaluated as one fused kernel (and summed
// down to the leaf's shape where it was broadcast; the sum fuses too).
// Nothing intermediate is stored: exp(x) in a derivative is recomputed.
//
// The rules live in Derivative<Op> (autograd/derivatives.hpp), not in the op
// structs: they build host-side expression trees, and the op structs must
// stay plain device-capable functors.
#pragma once
#include <array>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../reduce_dims.hpp"
#include "derivatives.hpp"
#include "engine.hpp"
#include "linear_node.hpp"
#include "node.hpp"

namespace tsr::detail {

template <class E>
struct is_tensor : std::false_type {};
template <class T>
struct is_tensor<Tensor<T>> : std::true_type {};
template <class E>
struct is_scalar_leaf : std::false_type {};
template <class T>
struct is_scalar_leaf<ScalarLeaf<T>> : std::true_type {};

// The names of an expression type's ops in evaluation order, "mul,sin,add",
// computed at compile time from the type alone (a node's name() only copies
// it: building it at run time compiled a string routine per expression).
// `out` null counts the characters instead of writing them.
template <class E>
constexpr std::size_t write_op_names(char* out, std::size_t at) {
  if constexpr (is_tensor<E>::value || is_scalar_leaf<E>::value) {
    return at;
  } else {
    at = write_op_names<std::remove_cvref_t<decltype(std::declval<const E&>().a)>>(out, at);
    if constexpr (requires(const E& e) { e.b; })
      at = write_op_names<std::remove_cvref_t<decltype(std::declval<const E&>().b)>>(out, at);
    if constexpr (requires(const E& e) { e.c; })
      at = write_op_names<std::remove_cvref_t<decltype(std::declval<const E&>().c)>>(out, at);
    const char* name = "cast";
    if constexpr (requires(const E& e) { e.op; }) name = std::remove_cvref_t<decltype(std::declval<const E&>().op)>::name;
    if (at > 0) {
      if (out) out[at] = ',';
      ++at;
    }
    for (; *name; ++name, ++at)
      if (out) out[at] = *name;
    return at;
  }
}
template <class E>
constexpr auto op_names_of() {
  std::array<char, write_op_names<E>(nullptr, 0) + 1> names{};
  write_op_names<E>(names.data(), 0);
  return names;
}
template <class E>
inline constexpr auto op_names = op_names_of<E>();

// The number of tensor leaves of an expression.
template <class E>
int leaf_count(const E& e) {
  int n = 0;
  e.for_each_leaf([&](const auto&) { ++n; });
  return n;
}

// The chain rule over the tree: calls f(leaf, k, grad) for every tensor leaf
// (k counts leaves in for_each_leaf order) with the expression of its
// gradient. need(k, n) says whether any of leaves k .. k + n - 1 needs a
// gradient; subtrees that need none, and subtrees that are not floating
// (integer and bool results never require grad), are skipped, but still
// count their leaves.
template <class E, class G, class F, class Need>
void backprop(const E& e, const G& g, int& k, F& f, const Need& need);

// Recurses into one operand, building its gradient expression (make_g())
// only when a leaf below needs it: a rule may refuse to build one (igamma's
// a), and that must fail only when that gradient is asked for.
template <class E, class MakeG, class F, class Need>
void backprop_into(const E& e, const MakeG& make_g, int& k, F& f, const Need& need) {
  using V = typename E::value_type;
  if constexpr (!is_floating_v<V> || is_scalar_leaf<E>::value) {
    k += leaf_count(e);
  } else {
    if (need(k, leaf_count(e))) backprop(e, make_g(), k, f, need);
    else k += leaf_count(e);
  }
}

template <class E, class G, class F, class Need>
void backprop(const E& e, const G& g, int& k, F& f, const Need& need) {
  using V = typename E::value_type;
  const int n = leaf_count(e);
  if constexpr (!is_floating_v<V>) {
    k += n;
  } else if constexpr (is_scalar_leaf<E>::value) {
    (void)g;
  } else if (!need(k, n)) {
    k += n;
  } else if constexpr (is_tensor<E>::value) {
    f(e, k++, g);
  } else if constexpr (requires { e.c; }) {
    using D = autograd::Derivative<std::remove_cvref_t<decltype(e.op)>>;
    backprop_into(e.a, [&] { return D::grad_a(g, e); }, k, f, need);
    backprop_into(e.b, [&] { return D::grad_b(g, e); }, k, f, need);
    backprop_into(e.c, [&] { return D::grad_c(g, e); }, k, f, need);
  } else if constexpr (requires { e.b; }) {
    using D = autograd::Derivative<std::remove_cvref_t<decltype(e.op)>>;
    backprop_into(e.a, [&] { return D::grad_a(g, e); }, k, f, need);
    backprop_into(e.b, [&] { return D::grad_b(g, e); }, k, f, need);
  } else if constexpr (requires { e.op; }) {
    // An integer or bool operand (erfc of a mask) takes no gradient, and its
    // rule is never instantiated: it need not compile for that type.
    using D = autograd::Derivative<std::remove_cvref_t<decltype(e.op)>>;
    if constexpr (is_floating_v<typename std::remove_cvref_t<decltype(e.a)>::value_type>)
      backprop(e.a, D::grad(g, e), k, f, need);
    else
      k += n;
  } else {  // Cast<U, A>: the gradient casts back
    using A = std::remove_cvref_t<decltype(e.a)>;
    if constexpr (is_floating_v<typename A::value_type>) backprop(e.a, cast<typename A::value_type>(g), k, f, need);
    else k += n;
  }
}

// The value types of an expression's tensor leaves, in leaf order, as a
// tuple type (compile time only).
template <class E>
auto leaf_types() {
  if constexpr (is_tensor<E>::value) {
    return std::tuple<typename E::value_type>{};
  } else if constexpr (is_scalar_leaf<E>::value) {
    return std::tuple<>{};
  } else {
    using A = std::remove_cvref_t<decltype(std::declval<const E&>().a)>;
    if constexpr (requires(const E& e) { e.c; }) {
      using B = std::remove_cvref_t<decltype(std::declval<const E&>().b)>;
      using C = std::remove_cvref_t<decltype(std::declval<const E&>().c)>;
      return std::tuple_cat(leaf_types<A>(), leaf_types<B>(), leaf_types<C>());
    } else if constexpr (requires(const E& e) { e.b; }) {
      using B = std::remove_cvref_t<decltype(std::declval<const E&>().b)>;
      return std::tuple_cat(leaf_types<A>(), leaf_types<B>());
    } else {
      return leaf_types<A>();
    }
  }
}

// Whether pred(std::type_identity<V>{}) holds for the value type V of any
// tensor leaf of E (at compile time).
template <class E, class Pred>
constexpr bool any_leaf_type(Pred pred) {
  using Types = decltype(leaf_types<E>());
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return (pred(std::type_identity<std::tuple_element_t<I, Types>>{}) || ...);
  }(std::make_index_sequence<std::tuple_size_v<Types>>{});
}

// Whether an expression has a floating tensor leaf of another type than
// its value (a cast inside it): its result may require grad while no
// tensor of its type was made to (autograd/runtime.hpp's invariant).
template <class E>
constexpr bool casts_floating_leaf() {
  return any_leaf_type<E>([]<class V>(std::type_identity<V>) {
    return is_floating_v<V> && !std::is_same_v<V, typename E::value_type>;
  });
}

// Whether any tensor leaf of an expression is floating: one with none (a
// cast of a comparison of integer tensors) can never require grad, and
// compiles no node.
template <class E>
constexpr bool has_floating_leaf() {
  return any_leaf_type<E>([]<class V>(std::type_identity<V>) { return is_floating_v<V>; });
}

// The number of tensor leaves the chain rule reaches with a gradient: all
// but those under a non-floating operand (a comparison: relu's x > 0).
template <class E>
constexpr int differentiable_leaves() {
  if constexpr (!is_floating_v<typename E::value_type> || is_scalar_leaf<E>::value) {
    return 0;
  } else if constexpr (is_tensor<E>::value) {
    return 1;
  } else {
    int n = differentiable_leaves<std::remove_cvref_t<decltype(std::declval<const E&>().a)>>();
    if constexpr (requires(const E& e) { e.b; })
      n += differentiable_leaves<std::remove_cvref_t<decltype(std::declval<const E&>().b)>>();
    if constexpr (requires(const E& e) { e.c; })
      n += differentiable_leaves<std::remove_cvref_t<decltype(std::declval<const E&>().c)>>();
    return n;
  }
}

// The gradient expression of the I-th of those leaves (in leaf order), for
// an incoming gradient g: the chain rule along the path to that leaf alone.
// Each leaf's is built on its own, by value, so that a sum of them is a
// flat list of terms. (Built by continuations instead, sharing the path,
// each continuation's type named the one before it twice, in its template
// arguments and in its signature: names of 2^depth length, 250 MB of debug
// strings for a sum of nine activations.)
template <int I, class E, class G>
auto leaf_gradient(const E& e, const G& g) {
  if constexpr (is_tensor<E>::value) {
    return g;
  } else if constexpr (requires { e.op; }) {
    using D = autograd::Derivative<std::remove_cvref_t<decltype(e.op)>>;
    constexpr int na = differentiable_leaves<std::remove_cvref_t<decltype(e.a)>>();
    if constexpr (requires { e.c; }) {
      constexpr int nb = differentiable_leaves<std::remove_cvref_t<decltype(e.b)>>();
      if constexpr (I < na) return leaf_gradient<I>(e.a, D::grad_a(g, e));
      else if constexpr (I < na + nb) return leaf_gradient<I - na>(e.b, D::grad_b(g, e));
      else return leaf_gradient<I - na - nb>(e.c, D::grad_c(g, e));
    } else if constexpr (requires { e.b; }) {
      if constexpr (I < na) return leaf_gradient<I>(e.a, D::grad_a(g, e));
      else return leaf_gradient<I - na>(e.b, D::grad_b(g, e));
    } else {
      return leaf_gradient<I>(e.a, D::grad(g, e));
    }
  } else {  // Cast<U, A>: the gradient casts back
    return leaf_gradient<I>(e.a, cast<typename std::remove_cvref_t<decltype(e.a)>::value_type>(g));
  }
}

// Whether some leaf's derivative reads a tensor: false for an expression
// linear in its leaves (sums, differences and multiples of them), whose
// derivatives are numbers, and for one without differentiable leaves (every
// leaf read through a comparison: backprop finds no gradient).
template <class E, class L>
constexpr bool derivative_reads_leaves() {
  return []<int... I>(std::integer_sequence<int, I...>) {
    return ((std::tuple_size_v<decltype(leaf_types<decltype(leaf_gradient<I>(
                 std::declval<const E&>(), std::declval<const ScalarLeaf<L>&>()))>())> > 0) ||
            ...);
  }(std::make_integer_sequence<int, differentiable_leaves<E>()>{});
}

// Whether an expression has several tensor leaves, all of one floating
// type: then, when they are all the same tensor at run time (x * x, or a
// chain of functions of x), their gradients can be summed in one kernel,
// which reads x once and lets the compiler share what the terms recompute.
// Not for an expression linear in its leaves (a stencil's weighted sum of
// views, an optimizer's running average): the kernel would only scale g,
// and compiling it cost such an expression about 15% of its code. The rare
// x + x gets one gradient per use, which the engine adds.
template <class E>
constexpr bool repeated_leaf_candidate() {
  using Types = decltype(leaf_types<E>());
  if constexpr (std::tuple_size_v<Types> < 2) {
    return false;
  } else {
    using First = std::tuple_element_t<0, Types>;
    if constexpr (!is_floating_v<First> ||
                  any_leaf_type<E>([]<class V>(std::type_identity<V>) { return !std::is_same_v<V, First>; }))
      return false;
    else
      return derivative_reads_leaves<E, First>();
  }
}

// fn(x) for an expression fn whose every tensor leaf is the tensor x: x is
// loaded once per element and fn is evaluated on that value (the at()
// methods of the evaluators). The repeated subexpressions of a summed
// gradient (exp(sin(x)) in two terms) are then the same computation on the
// same value, which the compiler computes once.
template <class Fn, class L>
struct OneLeafEval {
  using value_type = typename Fn::value_type;
  static constexpr bool simd = Fn::simd && TensorEval<L>::simd;
  TensorEval<L> leaf;
  Fn fn;
  TSR_HOST_DEVICE void set_row(const int64_t* idx, int nd) { leaf.set_row(idx, nd); }
  TSR_HOST_DEVICE value_type operator[](int64_t i) const { return fn.at(leaf[i]); }
  template <int W>
  TSR_HOST_DEVICE Packet<value_type, W> packet(int64_t i) const {
    return map_packets<W>([this](L x) { return fn.at(x); }, leaf.template packet<W>(i));
  }
  template <int W>
  bool packet_ready() const { return leaf.template packet_ready<W>(); }
  template <class B>
  [[gnu::always_inline]] B batch(int64_t i) const { return fn.template at_batch<B>(leaf.template batch<B>(i)); }
  template <class B>
  [[gnu::always_inline]] B batch_contig(int64_t i) const { return fn.template at_batch<B>(leaf.template batch_contig<B>(i)); }
  [[gnu::always_inline]] void prefetch(int64_t i) const { leaf.prefetch(i); }
  bool unit_inner() const { return leaf.unit_inner(); }
  bool contiguous_inner() const { return leaf.contiguous_inner(); }
};
template <class Fn, class L>
struct OneLeaf : ExprBase<OneLeaf<Fn, L>> {
  using value_type = typename Fn::value_type;
  const Fn& fn;  // the caller's, alive while this is evaluated
  Tensor<L> leaf;
  OneLeaf(const Fn& f, Tensor<L> x) : fn(f), leaf(std::move(x)) {}
  const Shape& sizes() const { return fn.sizes(); }
  template <class F>
  [[gnu::always_inline]] void for_each_leaf(F&& f) const { f(leaf); }
  template <class P>
  auto evaluator(const P& p) const {
    return OneLeafEval<decltype(fn.evaluator(p)), L>{leaf.evaluator(p), fn.evaluator(p)};
  }
};

// The sum of the derivative terms of one tensor, d0 + d1 + ... (in that
// order, as the fold of + would add them), for OneLeaf: evaluated only
// through at(). The expression holds the terms, its evaluator theirs, both
// by value and flat: one indexed base per term, not a recursive chain (nor
// a std::tuple, which is one in libstdc++ and which device code cannot
// call). A chain whose levels were built from evaluators passed by value
// copied each one once per level before it: for 30 terms a 41 KB function.
template <class T0, class... Ts>
struct promote_all {
  using type = T0;
};
template <class T0, class T1, class... Ts>
struct promote_all<T0, T1, Ts...> {
  using type = typename promote_all<promote_t<T0, T1>, Ts...>::type;
};
// Term I of a sum: its expression or its evaluator.
template <int I, class D>
struct Term {
  D term;
};
template <class V, class Indices, class... Ds>
struct SumOfTermsEval;
template <class V, int... I, class... Ds>
struct SumOfTermsEval<V, std::integer_sequence<int, I...>, Ds...> : Term<I, Ds>... {
  using value_type = V;
  static constexpr bool simd = ((Ds::simd && std::is_same_v<typename Ds::value_type, V>) && ...);
  template <int J, class D, class X>
  TSR_HOST_DEVICE static V add_term(const Term<J, D>& t, V sum, X x) {
    if constexpr (J == 0) return convert<V>(t.term.at(x));
    else return convert<V>(apply_op(ops::Add{}, convert<acc_t<V>>(sum), convert<acc_t<V>>(t.term.at(x))));
  }
  template <class B, int J, class D, class X>
  [[gnu::always_inline]] static B add_term_batch(const Term<J, D>& t, B sum, X x) {
    if constexpr (J == 0) return t.term.template at_batch<B>(x);
    else return ops::Add{}(sum, t.term.template at_batch<B>(x));
  }
  template <class X>
  TSR_HOST_DEVICE V at(X x) const {
    V sum{};
    ((sum = add_term(static_cast<const Term<I, Ds>&>(*this), sum, x)), ...);
    return sum;
  }
  template <class B, class X>
  [[gnu::always_inline]] B at_batch(X x) const {
    B sum{};
    ((sum = add_term_batch<B>(static_cast<const Term<I, Ds>&>(*this), sum, x)), ...);
    return sum;
  }
};
template <class Indices, class... D>
struct SumOfTerms;
template <int... I, class... D>
struct SumOfTerms<std::integer_sequence<int, I...>, D...> : Term<I, D>... {
  using value_type = typename promote_all<typename D::value_type...>::type;
  const Shape& sizes() const { return static_cast<const Term<0, std::tuple_element_t<0, std::tuple<D...>>>&>(*this).term.sizes(); }
  // Each term's evaluator built in its place (prvalues: nothing copied).
  template <class P>
  auto evaluator(const P& p) const {
    using R = SumOfTermsEval<value_type, std::integer_sequence<int, I...>, decltype(std::declval<const D&>().evaluator(p))...>;
    return R{Term<I, decltype(std::declval<const D&>().evaluator(p))>{static_cast<const Term<I, D>&>(*this).term.evaluator(p)}...};
  }
};
// The sum of the gradients of e's differentiable leaves for the incoming
// gradient g, each term built in its place.
template <class E, class G, int... I>
auto sum_of_leaf_gradients(const E& e, const G& g, std::integer_sequence<int, I...>) {
  return SumOfTerms<std::integer_sequence<int, I...>, decltype(leaf_gradient<I>(e, g))...>{
      Term<I, decltype(leaf_gradient<I>(e, g))>{leaf_gradient<I>(e, g)}...};
}

// t as a dense tensor: its one element as a 0-d tensor when every element
// is that one (a reduction's gradient, expanded), else t or a dense copy.
template <class T>
Tensor<T> dense_or_single(const Tensor<T>& t) {
  if (t.is_contiguous()) return t;  // one element included: it reads as a broadcast
  bool single = t.numel() > 0;
  for (std::size_t d = 0; d < t.sizes().size(); ++d) single = single && (t.strides()[d] == 0 || t.sizes()[d] == 1);
  if (!single) return materialize<T>(t);
  // (On a device: a 0-d view of that element, read where it lies.)
  return t.device().is_cpu() ? scalar_tensor<T>(*t.data_ptr()) : t.as_strided(Shape{}, Strides{}, t.storage_offset());
}

// dst = (dst or -0.0) + g * dfdx(x): the summed derivative of an expression
// whose every tensor leaf is x (x * x, a chain of functions of x), for g and
// dst of x's shape. Evaluated on one dense row: x and g are made dense (each
// stays one element when it is one broadcast: a reduction's gradient), so
// one row loop serves. Every repeated_leaf_candidate expression compiles
// this kernel, needed or not (whether the leaves are one tensor is known
// only at run time), and one loop costs a fifth of the build time of
// a general evaluation's plans and loops. -0.0, the identity of IEEE
// addition (signed zeros included), stands for a missing .grad, so that
// both destinations run one kernel.
template <class L, class T, class Fn>
void write_summed_gradient(const Tensor<L>& dst, bool accumulate, const Tensor<T>& g, const Fn& dfdx,
                           const Tensor<L>& x) {
  const Tensor<L> base = accumulate ? dst : scalar_tensor<L>(-L(0), dst.device());
  const auto total = base + as_type<L>(dense_or_single(g) * OneLeaf<Fn, L>(dfdx, dense_or_single(x)));
  check_same_device(dst.device(), total);
  write_along<RowLoops::unit_only>(dst, total, Plan::linear(static_cast<int>(dst.sizes().size()), dst.numel()),
                                   /*reads_dst=*/accumulate);
}

// ----- create_graph: expressions recorded one op at a time ----------------------
//
// A recorded backward cannot record a gradient expression as one fused
// node: that node's own backward would build a new expression type, whose
// node would build another, and the compiler would never finish. Instead
// expressions are evaluated one op at a time: each op is materialized on
// its own (evaluate_op), its operands first, and recorded as a
// FusedNode<op over tensors and scalars, false>. Those node types are a
// finite set, closed under differentiation (the rules of those ops build
// expressions of the same ops again), so derivatives of any order work.
template <class E>
auto recorded_per_op(const E& e);
template <class E>
[[gnu::always_inline]] inline bool records(const E& e);
}  // namespace tsr::detail
namespace tsr::autograd {
template <class E, bool Fused>
class FusedNode;
}  // namespace tsr::autograd
namespace tsr::detail {

template <class Op, class A>
auto with_recorded_operands(const Unary<Op, A>& e) {
  auto a = recorded_per_op(e.a);
  return Unary<Op, decltype(a)>(std::move(a), e.op);
}
template <class Op, class A, class B>
auto with_recorded_operands(const Binary<Op, A, B>& e) {
  auto a = recorded_per_op(e.a);
  auto b = recorded_per_op(e.b);
  return Binary<Op, decltype(a), decltype(b)>(std::move(a), std::move(b), e.op);
}
template <class Op, class A, class B, class C>
auto with_recorded_operands(const Ternary<Op, A, B, C>& e) {
  auto a = recorded_per_op(e.a);
  auto b = recorded_per_op(e.b);
  auto c = recorded_per_op(e.c);
  return Ternary<Op, decltype(a), decltype(b), decltype(c)>(std::move(a), std::move(b), std::move(c), e.op);
}
template <class U, class A>
auto with_recorded_operands(const Cast<U, A>& e) {
  auto a = recorded_per_op(e.a);
  return Cast<U, decltype(a)>(std::move(a));
}

}  // namespace tsr::detail

namespace tsr::autograd {
// The node of a recorded gradient op that also read tensors through a
// comparison (relu's x > 0, clamp's bounds): it passes the gradient on to
// the op's own node and sends zeros to those tensors. PyTorch's formulas
// (threshold_backward, clamp_backward) take them as inputs the same way, so
// that the Hessian of a ReLU network is zeros rather than no gradient.
// A tensor read through a comparison: its edge, and zeros of its shape and type.
struct ComparedTensor {
  std::shared_ptr<Node> edge;
  Shape sizes;
  GradRef (*zeros)(const Shape&);
};
template <class T>
class ZerosThroughComparisons final : public TypedNode<T> {
 public:
  using Read = ComparedTensor;
  // next[0] is the op's own node (null when no operand needs a gradient),
  // then one edge per compared tensor.
  ZerosThroughComparisons(std::shared_ptr<Node> op_node, std::vector<Read> reads) : reads_(std::move(reads)) {
    this->next.push_back(std::move(op_node));
    for (const Read& r : reads_) this->next.push_back(r.edge);
  }
  std::string name() const override { return this->next[0] ? this->next[0]->name() : "ZerosBackward0"; }
  std::vector<GradRef> apply(const GradRef& grad) override {
    std::vector<GradRef> out{grad};
    for (const Read& r : reads_) out.push_back(r.zeros(r.sizes));
    return out;
  }

 private:
  std::vector<Read> reads_;
};
}  // namespace tsr::autograd

namespace tsr::detail {

// The floating tensors that require grad among the leaves of a non-floating
// operand (a comparison).
// Whether an operand is non-floating with tensors under it (a comparison:
// relu's x > 0, clamp's bounds): those tensors get zeros as gradients.
template <class A>
constexpr bool compares_tensors() {
  return !is_floating_v<typename A::value_type> && !is_scalar_leaf<A>::value && !is_tensor<A>::value;
}
template <class A>
void add_compared_tensors(const A& operand, std::vector<autograd::ComparedTensor>& reads) {
  if constexpr (compares_tensors<A>()) {
    operand.for_each_leaf([&](const auto& leaf) {
      using L = typename std::remove_cvref_t<decltype(leaf)>::value_type;
      if constexpr (is_floating_v<L>) {
        if (auto edge = gradient_edge(leaf))
          reads.push_back({std::move(edge), leaf.sizes(), [](const Shape& s) { return zeros<L>(s).impl_ptr(); }});
      }
    });
  }
}

// A tensor operand as a dense tensor of `shape` (broadcast and strided
// operands copied, by the plain copy: expand() and contiguous() would
// compile the recording of views for every operand type).
template <class A>
A dense_of_shape(const A& operand, const Shape& shape) {
  if constexpr (is_tensor<A>::value) {
    if (operand.sizes() == shape && operand.is_contiguous()) return operand;
    A dense = A::allocate(shape);
    assign(dense, operand);
    return dense;
  } else {
    return operand;
  }
}

// One op over tensors and scalars, evaluated by a plain loop over dense
// operands rather than the general kernel (assign): a recorded backward
// makes many such small ops, and the general kernel's plans, tiles, threads
// and SIMD forms for each cost far more build time than they save run time.
template <class Op>
Tensor<typename Op::value_type> evaluate_op(const Op& op) {
  using V = typename Op::value_type;
  const Shape& shape = op.sizes();
  auto out = Tensor<V>::allocate(shape);
  const NoGradGuard no_grad;  // the copies are not part of the graph
  Op dense = op;
  dense.a = dense_of_shape(op.a, shape);
  if constexpr (requires { op.b; }) dense.b = dense_of_shape(op.b, shape);
  if constexpr (requires { op.c; }) dense.c = dense_of_shape(op.c, shape);
  const int64_t n = out.numel();
  const auto ev = dense.evaluator(Plan::linear(static_cast<int>(shape.size()), n));
  V* o = out.data_ptr();
  for (int64_t i = 0; i < n; ++i) o[i] = convert<V>(ev[i]);
  return out;
}

// One op over tensors and scalars (an expression's op once its operands
// are tensors), evaluated and recorded. Out of line: every subexpression
// that comes to the same op over the same operand types shares it, and the
// precompiled core holds the common ones (detail/precompiled.hpp), so that
// what each expression adds for create_graph is only its walk below.
template <class Op>
[[gnu::noinline]] Tensor<typename Op::value_type> record_single_op(const Op& op) {
  using V = typename Op::value_type;
  Tensor<V> out = evaluate_op(op);
  if constexpr (is_floating_v<V>) {
    if (records(op)) set_history(out, std::make_shared<autograd::FusedNode<Op, false>>(op, "FusedBackward"));
  }
  return out;
}

template <class E>
constexpr bool reads_through_comparison() {
  if constexpr (!is_floating_v<typename E::value_type> || !requires { std::declval<const E&>().op; }) {
    return false;
  } else {
    bool any = compares_tensors<decltype(std::declval<const E&>().a)>();
    if constexpr (requires { std::declval<const E&>().b; }) any = any || compares_tensors<decltype(std::declval<const E&>().b)>();
    if constexpr (requires { std::declval<const E&>().c; }) any = any || compares_tensors<decltype(std::declval<const E&>().c)>();
    return any;
  }
}

// e as a tensor (a scalar stays a scalar), each op recorded on its own.
template <class E>
auto recorded_per_op(const E& e) {
  if constexpr (is_tensor<E>::value || is_scalar_leaf<E>::value) {
    return e;
  } else {
    using V = typename E::value_type;
    Tensor<V> out = record_single_op(with_recorded_operands(e));
    // Only when recording, as the op's own node: unrecorded (a backward of
    // these nodes without create_graph), a history here would give the
    // gradient a graph, and a leaf's .grad would keep the leaf alive.
    if constexpr (reads_through_comparison<E>()) {
      if (!grad_mode_flag()) return out;
      std::vector<autograd::ComparedTensor> reads;
      add_compared_tensors(e.a, reads);
      if constexpr (requires { e.b; }) add_compared_tensors(e.b, reads);
      if constexpr (requires { e.c; }) add_compared_tensors(e.c, reads);
      if (!reads.empty()) {
        const auto& meta = out.impl_ptr()->autograd;
        set_history(out, std::make_shared<autograd::ZerosThroughComparisons<V>>(meta ? meta->grad_fn : nullptr, std::move(reads)));
      }
    }
    return out;
  }
}

// An expression a backward computes, as a tensor of type T: one fused
// kernel, unrecorded; or, when the backward is recorded (create_graph), one
// recorded op at a time (recording it whole would make a node type of every
// such expression, whose own fused backward would cost build time).
template <class T, class E>
Tensor<T> backward_eval(const E& e) {
  if (!grad_mode_flag()) return materialize_gradient<T>(e);
  if constexpr (std::is_same_v<typename E::value_type, T>) return recorded_per_op(e);
  else return recorded_per_op(cast<T>(e));
}

// A reduction's gradient g broadcast back to its input's `shape`: a view,
// or a dense copy when the backward is recorded (create_graph) and g has a
// history, since autograd records no views of an expanded tensor that
// requires grad and the gradient's consumers may take views of it.
template <class T>
Tensor<T> broadcast_gradient(const Tensor<T>& g, const Shape& shape) {
  Tensor<T> expanded = g.expand(shape);
  if (grad_mode_flag() && g.requires_grad()) return expanded.contiguous();
  return expanded;
}

// g summed down to `shape` over the dims it was broadcast along (g itself
// when the shapes agree). The sum is part of the autograd runtime
// (autograd/runtime.hpp): a node of an expression that calls it directly
// would compile the reductions, views and their nodes wherever it is made.
template <class T>
Tensor<T> sum_to(const Tensor<T>& g, const Shape& shape) {
  if (g.sizes() == shape) return g;
  return autograd_runtime<T>().sum_to(g, shape);
}
template <class T>
Tensor<T> sum_over_broadcast_dims(const Tensor<T>& g, const Shape& shape) {
  Shape dims;
  const std::size_t lead = g.sizes().size() - shape.size();
  for (std::size_t d = 0; d < g.sizes().size(); ++d)
    if (d < lead || (shape[d - lead] == 1 && g.sizes()[d] != 1)) dims.push_back(static_cast<int64_t>(d));
  if (dims.empty()) return g.view(shape);
  return sum(g, dims, true).view(shape);
}

// grad (of the output's shape) summed down to `shape` where it was broadcast,
// as a new tensor of type L.
template <class L, class G>
Tensor<L> reduce_to_shape(const G& grad, const Shape& shape) {
  // Always a new buffer: a pass-through gradient must not be shared. The
  // sum runs over the materialized gradient rather than fusing the gradient
  // expression into it: fused, every gradient expression type instantiated
  // the whole reduction machinery again, which doubled the build time of
  // the test suite. One extra pass, for broadcast leaves only.
  return sum_to(materialize_gradient<L>(as_type<L>(grad)), shape);
}

// PyTorch's error when a tensor saved for backward at version `then` was
// modified in place since.
template <class L>
void check_saved_version(const Tensor<L>& t, uint64_t then) {
  const uint64_t now = t.storage()->version();
  if (now == then) return;
  std::ostringstream os;
  os << "one of the variables needed for gradient computation has been modified by an inplace operation: [torch."
     << (std::is_same_v<L, double> ? "DoubleTensor" : "FloatTensor") << " " << t.sizes() << "]";
  const auto& meta = t.impl_ptr()->autograd;
  if (meta && meta->grad_fn) os << ", which is output 0 of " << meta->grad_fn->name() << ",";
  os << " is at version " << now << "; expected version " << then
     << " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
        "with torch.autograd.set_detect_anomaly(True).";
  throw Error(os.str());
}

// The versions of the saved leaves' storage when they were saved.
struct SavedVersions {
  SmallVector<uint64_t, 4> at_save;

  template <class E>
  void check(const E& e) const {
    std::size_t i = 0;
    e.for_each_leaf([&](const auto& leaf) { check_saved_version(leaf, at_save[i++]); });
  }
};

// Saves one leaf of a recorded expression: its storage's version, and the
// edge its gradient goes to. Out of line, once per leaf type: a node's
// constructor calls it per leaf instead of inlining both appends for each.
template <class L>
[[gnu::noinline]] void save_leaf(const Tensor<L>& leaf, SavedVersions& saved,
                                 std::vector<std::shared_ptr<autograd::Node>>& edges) {
  saved.at_save.push_back(leaf.storage()->version());
  edges.push_back(gradient_edge(leaf));
}

}  // namespace tsr::detail

namespace tsr::autograd {

// The node of a materialized expression: one for the whole tree. Fused:
// its backward evaluates each leaf's gradient as one kernel (one op at a
// time only when the backward is recorded). Not fused: always one op at a
// time; the nodes of a recorded backward's single ops, whose fused kernels
// would only cost build time.
template <class E, bool Fused>
class FusedNode final : public TypedNode<typename E::value_type> {
  using T = typename E::value_type;

 public:
  FusedNode(const E& e, const char* kind) : expr_(e), kind_(kind) {
    if constexpr (detail::casts_floating_leaf<E>()) detail::enable_autograd_runtime<T>();
    e.for_each_leaf([&](const auto& leaf) { detail::save_leaf(leaf, saved_, this->next); });
  }
  std::string name() const override { return fused_node_name(kind_, detail::op_names<E>.data()); }

  std::vector<GradRef> apply(const GradRef& grad) override { return apply_with(Tensor<T>(grad)); }
  void release_saved() override { expr_.reset(); }

  // The expression's value, evaluated again (for a reduction's backward
  // that needs its input).
  Tensor<T> value() const {
    if (!expr_) fail_released();
    saved_.check(*expr_);
    return Tensor<T>(*expr_);  // recorded under create_graph
  }

  // The leaves' gradients for an incoming gradient expression g of the
  // expression's shape (a reduction node passes its gradient broadcast).
  template <class G>
  std::vector<GradRef> apply_with(const G& g) const {
    if (!expr_) fail_released();
    saved_.check(*expr_);
    std::vector<GradRef> out(this->next.size());
    auto need = [&](int k, int n) {
      for (int i = k; i < k + n; ++i)
        if (this->next[static_cast<std::size_t>(i)]) return true;
      return false;
    };
    if constexpr (!Fused) {
      return per_op_gradients(Tensor<T>(g), std::move(out), need);
    } else {
      if (detail::grad_mode_flag()) return recorded_gradients(Tensor<T>(g), std::move(out));
      auto f = [&](const auto& leaf, int index, const auto& leaf_grad) {
        using L = typename std::remove_cvref_t<decltype(leaf)>::value_type;
        out[static_cast<std::size_t>(index)] = detail::reduce_to_shape<L>(leaf_grad, leaf.sizes()).impl_ptr();
      };
      if constexpr (detail::repeated_leaf_candidate<E>()) {
        // One tensor everywhere (x * x, a chain of functions of x): the sum of
        // its gradients as one kernel, which reads x once, writes once, and
        // lets the compiler share the subexpressions the terms recompute.
        using L = std::tuple_element_t<0, decltype(detail::leaf_types<E>())>;
        Tensor<L> x;
        bool same = true;
        expr_->for_each_leaf([&](const auto& leaf) {
          if (!x.defined()) x = leaf;
          same = same && leaf.impl_ptr() == x.impl_ptr();
        });
        // Every rule is linear in the incoming gradient: the derivative is
        // the chain rule run with gradient 1, times g.
        if (same && this->next[0] && g.sizes() == x.sizes()) {
          const auto dfdx = detail::sum_of_leaf_gradients(
              *expr_, ScalarLeaf<L>(L(1)), std::make_integer_sequence<int, detail::differentiable_leaves<E>()>{});
          // Straight into an existing .grad (one kernel instead of a new
          // buffer and an add) when nothing else shares its memory;
          // otherwise into a new buffer. (Sharing would be safe too: the
          // kernel reads x and g dense, as copies unless they map element i
          // to .grad's element i. But without this test GCC inlined the
          // chain benchmark's derivative differently: 7% slower.)
          Tensor<L>* grad = direct_grad_slot<L>(this->next[0], x.sizes());
          const bool direct = grad && !grad->is_alias_of(x) && !grad->is_alias_of(g);
          const Tensor<L> dst = direct ? *grad : Tensor<L>::allocate(x.sizes(), x.device());
          detail::write_summed_gradient(dst, direct, g, dfdx, x);
          if (direct) grad->storage()->bump_version();
          else out[0] = dst.impl_ptr();
          return out;
        }
      }
      int k = 0;
      detail::backprop(*expr_, g, k, f, need);
      return out;
    }
  }

 private:
  // A recorded backward (create_graph): the expression is evaluated again
  // one recorded op at a time, and the gradient runs back through those
  // ops' nodes up to the expression's inputs, where it is collected. (The
  // ops' nodes are a finite set of types, shared by every expression: only
  // this forward walk is compiled per expression type.)
  [[gnu::noinline, gnu::cold]] std::vector<GradRef> recorded_gradients(const Tensor<T>& g, std::vector<GradRef> out) const {
    const Tensor<T> y = detail::recorded_per_op(*expr_);
    if (!y.requires_grad()) return out;
    Capture inputs;
    inputs.stop = true;
    for (const auto& edge : this->next) inputs.nodes.push_back(edge.get());
    inputs.grads.resize(inputs.nodes.size());
    detail::run_backward_fn()({{detail::gradient_edge(y), g.impl_ptr()}}, /*retain_graph=*/true, &inputs,
                              /*create_graph=*/true);
    // An input used several times got the sum once: it goes to its first edge.
    for (std::size_t k = 0; k < out.size(); ++k) {
      bool first = true;
      for (std::size_t j = 0; j < k && first; ++j) first = this->next[j] != this->next[k];
      if (this->next[k] && first) out[k] = std::move(inputs.grads[k]);
    }
    return out;
  }

  // Each leaf's gradient expression one op at a time (recorded when grad
  // mode is on: create_graph), summed over broadcast dims the same way.
  template <class Need>
  std::vector<GradRef> per_op_gradients(const Tensor<T>& g, std::vector<GradRef> out, const Need& need) const {
    auto f = [&](const auto& leaf, int index, const auto& leaf_grad) {
      using L = typename std::remove_cvref_t<decltype(leaf)>::value_type;
      using V = typename std::remove_cvref_t<decltype(leaf_grad)>::value_type;
      Tensor<L> gl;
      if constexpr (std::is_same_v<V, L>) gl = detail::recorded_per_op(leaf_grad);
      else gl = detail::recorded_per_op(cast<L>(leaf_grad));
      out[static_cast<std::size_t>(index)] = detail::sum_to(gl, leaf.sizes()).impl_ptr();
    };
    int k = 0;
    detail::backprop(*expr_, g, k, f, need);
    return out;
  }

 protected:
  std::optional<E> expr_;
  detail::SavedVersions saved_;
  const char* kind_;
};

// sum(e) and mean(e) of an expression: the incoming 0-d gradient is
// broadcast (and scaled for mean) into the expression's fused gradients.
template <class E, class Out>
class FullReductionNode final : public TypedNode<Out> {
 public:
  FullReductionNode(const E& e, const char* kind, bool mean)
      : fused_(e, kind), mean_(mean), shape_(e.sizes()) {
    this->next = fused_.next;
  }
  std::string name() const override { return fused_.name(); }
  std::vector<GradRef> apply(const GradRef& grad) override {
    Tensor<Out> g(grad);
    if (mean_) g = detail::backward_eval<Out>(g / static_cast<Out>(std::max<int64_t>(numel_of(shape_), 1)));
    return fused_.apply_with(detail::broadcast_gradient(g, shape_));
  }
  void release_saved() override { fused_.release_saved(); }

 private:
  FusedNode<E, true> fused_;
  bool mean_;
  Shape shape_;
};

}  // namespace tsr::autograd

namespace tsr::detail {

// The leaf visitor of records(): a named type, not a lambda, so that it can
// be marked always_inline (GCC left a lambda here as a call per leaf).
struct AnyLeafRequiresGrad {
  bool any = false;
  template <class L>
  [[gnu::always_inline]] void operator()(const L& leaf) {
    any = any || requires_grad(leaf);
  }
};

// True when materializing e must record a node. Always inlined: every
// evaluation asks, and the usual answer takes a few loads per leaf.
template <class E>
[[gnu::always_inline]] inline bool records(const E& e) {
  if (!grad_mode_flag()) return false;
  AnyLeafRequiresGrad visit;
  e.for_each_leaf(visit);
  return visit.any;
}

// Per-op autograd (TSR_PER_OP_AUTOGRAD, detail/config.hpp): whether e, when
// it records as a tensor of type T, is evaluated and recorded one op at a
// time (recorded_per_op). A bare tensor of type T has no op; one of another
// type is its cast. Expressions on a device keep their fused node: the
// per-op evaluation is a loop on the host.
template <class E, class T = typename E::value_type>
bool records_op_by_op([[maybe_unused]] const E& e) {
  if constexpr (kFusedAutograd || (is_tensor<E>::value && std::is_same_v<typename E::value_type, T>)) return false;
  else if constexpr (kCudaBackend) return expr_device(e).is_cpu();
  else return true;
}
// Whether a fused node may be built for E: never in per-op mode, where
// compiling it for every differentiated expression is what the mode saves
// (but for a device expression, in a translation unit that computes on one).
template <class E>
constexpr bool fuses_backward() {
  return kFusedAutograd || is_tensor<E>::value || kCudaBackend;
}

// Tensor(e) in per-op mode: when e records, out becomes e evaluated and
// recorded one op at a time, and true is returned; otherwise out is left
// for the fused evaluation.
template <class T, class E>
bool materialized_op_by_op(Tensor<T>& out, const E& e) {
  if constexpr (!kFusedAutograd && is_floating_v<T> && has_floating_leaf<E>() && !records_linear_node<T, E>()) {
    if (!records(e) || !records_op_by_op<E, T>(e)) return false;
    out = recorded_per_op(as_type<T>(e));
    return true;
  } else {
    return false;
  }
}

// The node of a materialized expression that records: a LinearNode for
// an expression linear in its tensors (one node type for all of them, no
// kernels of its own), else the expression's fused node.
template <class T, class E>
void record_expression(const Tensor<T>& out, const E& e) {
  if constexpr (is_floating_v<T> && !std::is_same_v<typename E::value_type, T>) {
    // Tensor<float> from a double expression: the node is the cast's, whose
    // gradient is of out's type (a node of e's type would read it as e's).
    record_expression(out, cast<T>(e));
  } else if constexpr (is_floating_v<T> && has_floating_leaf<E>() && (fuses_backward<E>() || linear_in_tensors<E>())) {
    if (!records(e)) return;
    if constexpr (linear_in_tensors<E>()) {
      auto node = std::make_shared<autograd::LinearNode<T, Linearity<E, T>::scales>>(op_names<E>.data());
      add_linear_terms(*node, e, T(1), T(1));
      set_history(out, std::move(node));
    } else {
      set_history(out, std::make_shared<autograd::FusedNode<E, true>>(e, "FusedBackward"));
    }
  }
}

}  // namespace tsr::detail
