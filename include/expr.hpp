// Lazy expressions: the CRTP base, the Expression concept, and the node
// types (scalar leaf, unary, binary, ternary, cast). Nodes hold their
// operands by value (tensors by handle), so `auto e = a * b;` never dangles.
// Nothing is computed until an expression is materialized.
#pragma once
#include <type_traits>
#include <utility>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "detail/convert.hpp"
#include "detail/packet.hpp"
#include "detail/plan.hpp"
#include "dtype.hpp"
#include "shape.hpp"

namespace tsr {

template <class T>
class Tensor;

// The base of every expression. Derived classes provide value_type, sizes(),
// for_each_leaf(f) and evaluator(plan).
template <class Derived>
struct ExprBase {
  const Derived& derived() const { return static_cast<const Derived&>(*this); }

  int64_t dim() const { return static_cast<int64_t>(derived().sizes().size()); }
  int64_t numel() const { return detail::numel_of(derived().sizes()); }
  // Materializes the expression into a new contiguous tensor.
  auto eval() const;
  auto item() const;
  auto to_vector() const;

  // Method forms of the full reductions (defined in reduce.hpp).
  auto sum() const;
  auto mean() const;
  auto prod() const;
  auto amax() const;
  auto amin() const;
  auto max() const;
  auto min() const;
  // ... and of the reductions over dims (reduce_dims.hpp, statistics.hpp).
  auto sum(const Shape& dims, bool keepdim = false) const;
  auto mean(const Shape& dims, bool keepdim = false) const;
  auto prod(const Shape& dims, bool keepdim = false) const;
  auto amax(const Shape& dims, bool keepdim = false) const;
  auto amin(const Shape& dims, bool keepdim = false) const;
};

template <class E>
concept Expression = std::is_base_of_v<ExprBase<std::remove_cvref_t<E>>, std::remove_cvref_t<E>>;

// C++ numbers that may stand beside an expression (`x * 2.0`).
template <class S>
concept Scalar = std::is_arithmetic_v<S> || std::is_same_v<S, half> || std::is_same_v<S, bfloat16>;

namespace detail {

// ----- scalar leaf ---------------------------------------------------------

// Whether the CPU's evaluation may use SIMD batches. Not in nvcc's device
// pass: it compiles the host/device ops for the device as well, for every
// type the host code instantiates them with, and rejects a batch (a vector
// type) there. The host pass, which makes the host code, keeps them; the
// evaluators' types do not depend on it, only which loop the CPU runs.
#if defined(__CUDA_ARCH__)
inline constexpr bool kCpuSimd = false;
#else
inline constexpr bool kCpuSimd = true;
#endif

// Types xsimd can load and store (leaves); ops compute on batches only for
// float and double (is_simd_type_v below).
template <class T>
inline constexpr bool is_simd_storage_v = kCpuSimd && (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                                       std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>);

template <class T>
struct ScalarEval {
  using value_type = T;
  static constexpr bool simd = is_simd_storage_v<T>;
  T value;
  TSR_HOST_DEVICE void set_row(const int64_t*, int) {}
  TSR_HOST_DEVICE T operator[](int64_t) const { return value; }
  // W values from column i on (the CUDA backend's vectorized path, for rows
  // where every leaf is packet_ready).
  template <int W>
  TSR_HOST_DEVICE Packet<T, W> packet(int64_t) const { return packet_of<W>(value); }
  template <int W>
  bool packet_ready() const { return true; }
  template <class B>
  B batch(int64_t) const { return B(value); }
  template <class B>
  B batch_contig(int64_t) const { return B(value); }
  [[gnu::always_inline]] void prefetch(int64_t) const {}
  // at(x): the value when every tensor leaf of the tree holds x (OneLeaf).
  template <class X>
  TSR_HOST_DEVICE T at(X) const { return value; }
  template <class B, class X>
  B at_batch(X) const { return B(value); }
  bool unit_inner() const { return true; }
  bool contiguous_inner() const { return true; }
};

}  // namespace detail

// A C++ number inside an expression; 0-dimensional.
template <class T>
struct ScalarLeaf : ExprBase<ScalarLeaf<T>> {
  using value_type = T;
  T value;
  explicit ScalarLeaf(T v) : value(v) {}
  const Shape& sizes() const {
    static const Shape empty;
    return empty;
  }
  template <class F>
  [[gnu::always_inline]] void for_each_leaf(F&&) const {}
  template <class P>
  auto evaluator(const P&) const { return detail::ScalarEval<T>{value}; }
};

namespace detail {

template <class T>
inline constexpr bool is_simd_type_v = kCpuSimd && (std::is_same_v<T, float> || std::is_same_v<T, double>);

// How an op turns the promoted operand type into the type it computes in.
struct SameTypeOp {
  template <class T>
  using input_t = T;
};
struct FloatOp {
  template <class T>
  using input_t = floating_t<T>;
};
struct BoolOp {
  template <class T>
  using input_t = bool;
};

// Result element type of an op computing in `In`: ops return their compute
// type (for 16-bit floats, float) or something else (bool for comparisons).
template <class Op, class In, class... Args>
using op_result_t = std::conditional_t<
    std::is_same_v<std::invoke_result_t<const Op&, Args...>, acc_t<In>>, In,
    std::invoke_result_t<const Op&, Args...>>;

// ----- evaluators ----------------------------------------------------------

// op(x) as an opaque call the compiler knows to be pure: in the fused
// gradient of one tensor (OneLeaf), the same function of the same value
// appears in several terms (exp(sin(x)) in two of them), and xsimd's
// out-of-line helpers keep the compiler from merging them unless the whole
// call is marked so.
// (The batch travels as its register type: a vector value the compiler can
// compare, where a class object would be a memory argument.)
template <class Op, class B>
[[gnu::const, gnu::noinline]] typename B::register_type pure_apply_raw(Op op, typename B::register_type x) {
  return op(B(x)).data;
}
template <class Op, class B>
B pure_apply(Op op, B x) {
  return B(pure_apply_raw<Op, B>(op, x.data));
}

// An op on scalars gives exactly the bits it gives in a SIMD lane: an op
// with a batch form computes float and double scalars through that form (a
// broadcast batch, lane 0). So an element's value never depends on whether
// it fell in a vector body, a tail or a strided row, and a backward that
// recomputes a value gets the forward's bits (the gradient of max compares
// them with the saved result). Batch forms are lane-pure for the same
// reason: a lane's result depends on that lane's inputs only. nvcc's device
// pass has only the scalar form, and device code recomputes on the device.
//
// Ops whose scalar form is already bit for bit a lane of the batch form
// (IEEE arithmetic, selects, rounding, std:: calls lane by lane) say so with
// `static constexpr bool scalar_is_lane = true` and skip the detour, which
// costs compile time (every scalar path would instantiate the batch form).
template <class Op>
inline constexpr bool scalar_is_lane_v = requires { requires Op::scalar_is_lane; };

template <class Op, class V, class... Vs>
TSR_HOST_DEVICE inline auto apply_op(const Op& op, V x, Vs... xs) {
#if !defined(__CUDA_ARCH__)
  if constexpr (Op::simd && !scalar_is_lane_v<Op> && is_simd_type_v<V> && (std::is_same_v<V, Vs> && ...))
    return op(xsimd::batch<V>(x), xsimd::batch<V>(xs)...).get(0);
  else
#endif
    return op(x, xs...);
}

// Each evaluator holds its op (most are empty; some carry a parameter) as a
// [[no_unique_address]] member, except under nvcc: its device code
// miscompiles nested evaluators with such members (CUDA 13.0 on an H100: the
// inner leaves' reads came back as garbage), so there it is a plain member.
// The two layouts are different types: under nvcc the evaluators live in
// their own inline namespace, so that a program with both nvcc and g++
// translation units never sees two layouts under one name. (A plain member
// everywhere would cost the CPU's small ops a tenth of their time.)
#if defined(__CUDACC__)
#define TSR_OP_MEMBER
inline namespace nvcc_evaluators {
#else
#define TSR_OP_MEMBER [[no_unique_address]]
inline namespace evaluators {
#endif

// The batch methods of every evaluator (and the float functions' op
// structs) are always inlined: an expression's row loop must be one function
// holding the whole tree. Left to its heuristics, GCC outlined whichever
// level held the body of a float exp or sin, and the call passed batches
// through memory: those loops ran 1.4x slower on AVX-512.
template <class Op, class In, class Out, class A>
struct UnaryEval {
  using value_type = Out;
  static constexpr bool simd =
      Op::simd && A::simd && is_simd_type_v<In> && std::is_same_v<In, Out> && std::is_same_v<typename A::value_type, In>;
  A a;
  TSR_OP_MEMBER Op op;
  TSR_HOST_DEVICE void set_row(const int64_t* idx, int nd) { a.set_row(idx, nd); }
  // The op on one value of the operand (every scalar form below).
  TSR_HOST_DEVICE Out apply_to(typename A::value_type x) const { return convert<Out>(apply_op(op, convert<acc_t<In>>(x))); }
  TSR_HOST_DEVICE Out operator[](int64_t i) const { return apply_to(a[i]); }
  template <int W>
  TSR_HOST_DEVICE Packet<Out, W> packet(int64_t i) const {
    return map_packets<W>([this](typename A::value_type x) { return apply_to(x); }, a.template packet<W>(i));
  }
  template <int W>
  bool packet_ready() const { return a.template packet_ready<W>(); }
  template <class B>
  [[gnu::always_inline]] B batch(int64_t i) const { return op(a.template batch<B>(i)); }
  template <class B>
  [[gnu::always_inline]] B batch_contig(int64_t i) const { return op(a.template batch_contig<B>(i)); }
  [[gnu::always_inline]] void prefetch(int64_t i) const { a.prefetch(i); }
  template <class X>
  TSR_HOST_DEVICE Out at(X x) const { return apply_to(a.at(x)); }
  template <class B, class X>
  B at_batch(X x) const {
    if constexpr (std::is_base_of_v<FloatOp, Op>) return pure_apply(op, a.template at_batch<B>(x));
    else return op(a.template at_batch<B>(x));
  }
  bool unit_inner() const { return a.unit_inner(); }
  bool contiguous_inner() const { return a.contiguous_inner(); }
};

template <class Op, class In, class Out, class A, class B_>
struct BinaryEval {
  using value_type = Out;
  static constexpr bool simd = Op::simd && A::simd && B_::simd && is_simd_type_v<In> &&
                               std::is_same_v<In, Out> && std::is_same_v<typename A::value_type, In> &&
                               std::is_same_v<typename B_::value_type, In>;
  A a;
  B_ b;
  TSR_OP_MEMBER Op op;
  TSR_HOST_DEVICE void set_row(const int64_t* idx, int nd) {
    a.set_row(idx, nd);
    b.set_row(idx, nd);
  }
  TSR_HOST_DEVICE Out apply_to(typename A::value_type x, typename B_::value_type y) const {
    return convert<Out>(apply_op(op, convert<acc_t<In>>(x), convert<acc_t<In>>(y)));
  }
  TSR_HOST_DEVICE Out operator[](int64_t i) const { return apply_to(a[i], b[i]); }
  template <int W>
  TSR_HOST_DEVICE Packet<Out, W> packet(int64_t i) const {
    return map_packets<W>([this](typename A::value_type x, typename B_::value_type y) { return apply_to(x, y); },
                          a.template packet<W>(i), b.template packet<W>(i));
  }
  template <int W>
  bool packet_ready() const { return a.template packet_ready<W>() && b.template packet_ready<W>(); }
  template <class V>
  [[gnu::always_inline]] V batch(int64_t i) const { return op(a.template batch<V>(i), b.template batch<V>(i)); }
  template <class V>
  [[gnu::always_inline]] V batch_contig(int64_t i) const { return op(a.template batch_contig<V>(i), b.template batch_contig<V>(i)); }
  [[gnu::always_inline]] void prefetch(int64_t i) const {
    a.prefetch(i);
    b.prefetch(i);
  }
  template <class X>
  TSR_HOST_DEVICE Out at(X x) const { return apply_to(a.at(x), b.at(x)); }
  template <class V, class X>
  V at_batch(X x) const { return op(a.template at_batch<V>(x), b.template at_batch<V>(x)); }
  bool unit_inner() const { return a.unit_inner() && b.unit_inner(); }
  bool contiguous_inner() const { return a.contiguous_inner() && b.contiguous_inner(); }
};

// Ternary ops name the type each operand computes in: Op::arg_t<I, A, B, C>.
template <class Op, class Out, class A, class B_, class C>
struct TernaryEval {
  using value_type = Out;
  using TA = typename Op::template arg_t<0, typename A::value_type, typename B_::value_type, typename C::value_type>;
  using TB = typename Op::template arg_t<1, typename A::value_type, typename B_::value_type, typename C::value_type>;
  using TC = typename Op::template arg_t<2, typename A::value_type, typename B_::value_type, typename C::value_type>;
  static constexpr bool simd = Op::simd && A::simd && B_::simd && C::simd && is_simd_type_v<Out> &&
                               std::is_same_v<typename A::value_type, Out> &&
                               std::is_same_v<typename B_::value_type, Out> &&
                               std::is_same_v<typename C::value_type, Out>;
  A a;
  B_ b;
  C c;
  TSR_OP_MEMBER Op op;
  TSR_HOST_DEVICE void set_row(const int64_t* idx, int nd) {
    a.set_row(idx, nd);
    b.set_row(idx, nd);
    c.set_row(idx, nd);
  }
  TSR_HOST_DEVICE Out apply_to(typename A::value_type x, typename B_::value_type y, typename C::value_type z) const {
    return convert<Out>(apply_op(op, convert<acc_t<TA>>(x), convert<acc_t<TB>>(y), convert<acc_t<TC>>(z)));
  }
  TSR_HOST_DEVICE Out operator[](int64_t i) const { return apply_to(a[i], b[i], c[i]); }
  template <int W>
  TSR_HOST_DEVICE Packet<Out, W> packet(int64_t i) const {
    return map_packets<W>([this](typename A::value_type x, typename B_::value_type y,
                                 typename C::value_type z) { return apply_to(x, y, z); },
                          a.template packet<W>(i), b.template packet<W>(i), c.template packet<W>(i));
  }
  template <int W>
  bool packet_ready() const {
    return a.template packet_ready<W>() && b.template packet_ready<W>() && c.template packet_ready<W>();
  }
  template <class V>
  [[gnu::always_inline]] V batch(int64_t i) const {
    return op(a.template batch<V>(i), b.template batch<V>(i), c.template batch<V>(i));
  }
  template <class V>
  [[gnu::always_inline]] V batch_contig(int64_t i) const {
    return op(a.template batch_contig<V>(i), b.template batch_contig<V>(i), c.template batch_contig<V>(i));
  }
  [[gnu::always_inline]] void prefetch(int64_t i) const {
    a.prefetch(i);
    b.prefetch(i);
    c.prefetch(i);
  }
  template <class X>
  TSR_HOST_DEVICE Out at(X x) const { return apply_to(a.at(x), b.at(x), c.at(x)); }
  template <class V, class X>
  V at_batch(X x) const {
    return op(a.template at_batch<V>(x), b.template at_batch<V>(x), c.template at_batch<V>(x));
  }
  bool unit_inner() const { return a.unit_inner() && b.unit_inner() && c.unit_inner(); }
  bool contiguous_inner() const { return a.contiguous_inner() && b.contiguous_inner() && c.contiguous_inner(); }
};

}  // inline namespace (nvcc_)evaluators
#undef TSR_OP_MEMBER

template <class U, class A>
struct CastEval {
  using value_type = U;
  static constexpr bool simd = A::simd && std::is_same_v<typename A::value_type, U>;
  A a;
  TSR_HOST_DEVICE void set_row(const int64_t* idx, int nd) { a.set_row(idx, nd); }
  TSR_HOST_DEVICE U operator[](int64_t i) const { return convert<U>(a[i]); }
  template <int W>
  TSR_HOST_DEVICE Packet<U, W> packet(int64_t i) const {
    return map_packets<W>([](typename A::value_type x) { return convert<U>(x); }, a.template packet<W>(i));
  }
  template <int W>
  bool packet_ready() const { return a.template packet_ready<W>(); }
  template <class B>
  [[gnu::always_inline]] B batch(int64_t i) const { return a.template batch<B>(i); }
  template <class B>
  [[gnu::always_inline]] B batch_contig(int64_t i) const { return a.template batch_contig<B>(i); }
  [[gnu::always_inline]] void prefetch(int64_t i) const { a.prefetch(i); }
  template <class X>
  TSR_HOST_DEVICE U at(X x) const { return convert<U>(a.at(x)); }
  template <class B, class X>
  B at_batch(X x) const { return a.template at_batch<B>(x); }
  bool unit_inner() const { return a.unit_inner(); }
  bool contiguous_inner() const { return a.contiguous_inner(); }
};

}  // namespace detail

// ----- nodes ---------------------------------------------------------------

template <class Op, class A>
struct [[nodiscard]] Unary : ExprBase<Unary<Op, A>> {
  using in_type = typename Op::template input_t<typename A::value_type>;
  using value_type = detail::op_result_t<Op, in_type, acc_t<in_type>>;
  A a;
  Op op;
  // Operands are forwarded (copied from an lvalue, moved from an rvalue)
  // straight into the members: no intermediate copy to move and destroy.
  template <class A2>
    requires(!std::is_same_v<std::remove_cvref_t<A2>, Unary>)
  explicit Unary(A2&& a_, Op op_ = {}) : a(std::forward<A2>(a_)), op(op_) {}
  const Shape& sizes() const { return a.sizes(); }
  template <class F>
  [[gnu::always_inline]] void for_each_leaf(F&& f) const { a.for_each_leaf(f); }
  template <class P>
  auto evaluator(const P& p) const {
    using AE = decltype(a.evaluator(p));
    return detail::UnaryEval<Op, in_type, value_type, AE>{a.evaluator(p), op};
  }
};

template <class Op, class A, class B>
struct [[nodiscard]] Binary : ExprBase<Binary<Op, A, B>> {
  using in_type = typename Op::template input_t<promote_t<typename A::value_type, typename B::value_type>>;
  using value_type = detail::op_result_t<Op, in_type, acc_t<in_type>, acc_t<in_type>>;
  A a;
  B b;
  Op op;
  detail::NodeShape shape;
  template <class A2, class B2>  // forwarded, as in Unary
  Binary(A2&& a_, B2&& b_, Op op_ = {})
      : a(std::forward<A2>(a_)), b(std::forward<B2>(b_)), op(op_), shape(a.sizes(), b.sizes()) {}
  const Shape& sizes() const { return shape.get(a.sizes(), b.sizes()); }
  template <class F>
  [[gnu::always_inline]] void for_each_leaf(F&& f) const {
    a.for_each_leaf(f);
    b.for_each_leaf(f);
  }
  template <class P>
  auto evaluator(const P& p) const {
    using AE = decltype(a.evaluator(p));
    using BE = decltype(b.evaluator(p));
    return detail::BinaryEval<Op, in_type, value_type, AE, BE>{a.evaluator(p), b.evaluator(p), op};
  }
};

template <class Op, class A, class B, class C>
struct [[nodiscard]] Ternary : ExprBase<Ternary<Op, A, B, C>> {
  template <int I>
  using arg = typename Op::template arg_t<I, typename A::value_type, typename B::value_type, typename C::value_type>;
  using result = std::invoke_result_t<const Op&, acc_t<arg<0>>, acc_t<arg<1>>, acc_t<arg<2>>>;
  // Like op_result_t: a result in the compute type keeps the operands' type.
  using value_type = std::conditional_t<std::is_same_v<result, acc_t<arg<1>>>, arg<1>, result>;
  A a;
  B b;
  C c;
  Op op;
  detail::NodeShape shape;
  template <class A2, class B2, class C2>  // forwarded, as in Unary
  Ternary(A2&& a_, B2&& b_, C2&& c_, Op op_ = {})
      : a(std::forward<A2>(a_)),
        b(std::forward<B2>(b_)),
        c(std::forward<C2>(c_)),
        op(op_),
        shape(a.sizes(), b.sizes(), c.sizes()) {}
  const Shape& sizes() const { return shape.get(a.sizes(), b.sizes(), c.sizes()); }
  template <class F>
  [[gnu::always_inline]] void for_each_leaf(F&& f) const {
    a.for_each_leaf(f);
    b.for_each_leaf(f);
    c.for_each_leaf(f);
  }
  template <class P>
  auto evaluator(const P& p) const {
    using AE = decltype(a.evaluator(p));
    using BE = decltype(b.evaluator(p));
    using CE = decltype(c.evaluator(p));
    return detail::TernaryEval<Op, value_type, AE, BE, CE>{a.evaluator(p), b.evaluator(p), c.evaluator(p), op};
  }
};

// Element type conversion inside an expression: cast<double>(x).
template <class U, class A>
struct [[nodiscard]] Cast : ExprBase<Cast<U, A>> {
  static_assert(is_element_type_v<U>, "cast<U>: U must be a tessera element type");
  using value_type = U;
  A a;
  explicit Cast(A a_) : a(std::move(a_)) {}
  const Shape& sizes() const { return a.sizes(); }
  template <class F>
  [[gnu::always_inline]] void for_each_leaf(F&& f) const { a.for_each_leaf(f); }
  template <class P>
  auto evaluator(const P& p) const {
    using AE = decltype(a.evaluator(p));
    return detail::CastEval<U, AE>{a.evaluator(p)};
  }
};

template <class U, Expression E>
[[nodiscard]] auto cast(const E& e) {
  return Cast<U, E>(e);
}

namespace detail {
// e as an expression of element type U: e itself when it already is one.
// Library code converts to a compute type that is usually the input's own
// (acc_t<float> is float); without the Cast node the expression types, and
// everything instantiated for them, are shared with the user's own.
template <class U, Expression E>
auto as_type(const E& e) {
  if constexpr (std::is_same_v<typename E::value_type, U>) return e;
  else return Cast<U, E>(e);
}
}  // namespace detail

namespace detail {
// Turns an operand (expression or C++ number) into an expression node; a
// number takes the type `wrapped_scalar_t` gives it beside `Other`.
template <class Other, class X>
auto as_operand(const X& x) {
  if constexpr (Expression<X>) {
    return x;
  } else {
    using W = wrapped_scalar_t<X, typename Other::value_type>;
    return ScalarLeaf<W>(convert<W>(scalar_element_t<X>(x)));
  }
}
// as_operand without the copy of an expression: the expression itself
// (const X&), for a node's constructor to copy once into its member.
template <class Other, class X>
decltype(auto) operand_ref(const X& x) {
  if constexpr (Expression<X>) return (x);
  else return as_operand<Other>(x);
}
template <class X>
using value_of_t = typename X::value_type;
}  // namespace detail

// An operand pair where at least one side is an expression.
template <class A, class B>
concept Operands = (Expression<A> && (Expression<B> || Scalar<B>)) || (Scalar<A> && Expression<B>);

}  // namespace tsr
