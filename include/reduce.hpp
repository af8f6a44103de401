// Full reductions to a scalar: sum, mean, prod, amax, amin, max, min, plus
// allclose and equal. A reduction is a materialization barrier that fuses
// its input: sum(a * b) reads a and b once and writes no temporary.
//
// Accuracy and determinism: the input is cut into blocks of kReduceBlock
// elements (at fixed positions that depend only on the shape); each block is
// reduced with several SIMD accumulators, and block results are combined in
// an exact pairwise tree, then group results in another. Threads only decide
// who computes which group, so results are bitwise identical for every
// thread count.
#pragma once
#include <functional>
#include <limits>

#include "eval.hpp"

namespace tsr {
namespace detail {

inline constexpr int64_t kReduceBlock = 4096;
inline constexpr int64_t kReduceGroup = 1 << 15;  // elements per parallel group (about)

using ops::is_nan;

// combine() is a host/device function: the device's reductions combine with
// it too (identity() is only ever called on the host).
struct SumReducer {
  static constexpr const char* name = "sum";
  template <class A> static A identity() { return A(0); }
  template <class V> TSR_HOST_DEVICE static V combine(const V& a, const V& b) { return a + b; }
};
struct ProdReducer {
  static constexpr const char* name = "prod";
  template <class A> static A identity() { return A(1); }
  template <class V> TSR_HOST_DEVICE static V combine(const V& a, const V& b) { return a * b; }
};
// max/min propagate NaN.
struct MaxReducer {
  static constexpr const char* name = "amax";
  template <class A> static A identity() {
    if constexpr (std::is_same_v<A, bool>) return false;
    else if constexpr (std::numeric_limits<A>::has_infinity) return -std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::lowest();
  }
  template <class V> TSR_HOST_DEVICE static V combine(const V& a, const V& b) {
    using ops::m::select;
    if constexpr (std::is_integral_v<V>) return a > b ? a : b;
    else return select(is_nan(a) | (a > b), a, b);
  }
};
struct MinReducer {
  static constexpr const char* name = "amin";
  template <class A> static A identity() {
    if constexpr (std::is_same_v<A, bool>) return true;
    else if constexpr (std::numeric_limits<A>::has_infinity) return std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::max();
  }
  template <class V> TSR_HOST_DEVICE static V combine(const V& a, const V& b) {
    using ops::m::select;
    if constexpr (std::is_integral_v<V>) return a < b ? a : b;
    else return select(is_nan(a) | (a < b), a, b);
  }
};
struct AllReducer {
  static constexpr const char* name = "all";
  template <class A> static A identity() { return true; }
  template <class V> TSR_HOST_DEVICE static V combine(const V& a, const V& b) { return a && b; }
};

// Exact pairwise combination of a stream of values: a binary counter of
// partial results, merged whenever two hold equally many leaves.
template <class R, class A>
struct PairwiseStack {
  A value[64];
  int64_t count[64];
  int n = 0;
  void push(A v) {
    value[n] = v;
    count[n++] = 1;
    while (n >= 2 && count[n - 1] == count[n - 2]) {
      value[n - 2] = R::combine(value[n - 2], value[n - 1]);
      count[n - 2] *= 2;
      --n;
    }
  }
  A finish() const {
    if (n == 0) return R::template identity<A>();
    A r = value[n - 1];
    for (int i = n - 2; i >= 0; --i) r = R::combine(value[i], r);
    return r;
  }
};

// Reduces n elements of one row segment to one value.
//
// Accuracy: a lane never adds more than kCascade values in a row. SIMD
// rows run four accumulators whose runs of kCascade batches are folded into
// four outer accumulators (a two-level cascade, as PyTorch's sum does);
// strided rows add runs of kCascade scalars and combine the runs pairwise.
// So the rounding error of a block grows like a few dozen additions
// whatever the SIMD width (2^24 values of 0.1f sum within 1e-7 of exact).
inline constexpr int64_t kCascade = 8;

// The SIMD body of reduce_block (n >= 4 W): Contig says every leaf has
// stride 1, so loads need no per-load choice between loading and broadcasting.
template <class R, class A, bool Contig, class Ev>
A reduce_block_simd(const Ev& ev, int64_t n) {
  using B = xsimd::batch<A>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  auto load = [&ev](int64_t i) {
    if constexpr (Contig) return ev.template batch_contig<B>(i);
    else return ev.template batch<B>(i);
  };
  const B id(R::template identity<A>());
  B out0 = id, out1 = id, out2 = id, out3 = id;
  int64_t i = 0;
  while (i + 4 * W <= n) {
    B acc0 = load(i), acc1 = load(i + W), acc2 = load(i + 2 * W), acc3 = load(i + 3 * W);
    i += 4 * W;
    for (int64_t k = 1; k < kCascade && i + 4 * W <= n; ++k, i += 4 * W) {
      acc0 = R::combine(acc0, load(i));
      acc1 = R::combine(acc1, load(i + W));
      acc2 = R::combine(acc2, load(i + 2 * W));
      acc3 = R::combine(acc3, load(i + 3 * W));
    }
    out0 = R::combine(out0, acc0);
    out1 = R::combine(out1, acc1);
    out2 = R::combine(out2, acc2);
    out3 = R::combine(out3, acc3);
  }
  for (; i + W <= n; i += W) out0 = R::combine(out0, load(i));
  const B acc = R::combine(R::combine(out0, out1), R::combine(out2, out3));
  alignas(64) A lanes[W];
  acc.store_aligned(lanes);
  for (int64_t w = W / 2; w >= 1; w /= 2)
    for (int64_t l = 0; l < w; ++l) lanes[l] = R::combine(lanes[l], lanes[l + w]);
  A r = lanes[0];
  for (; i < n; ++i) r = R::combine(r, ev[i]);
  return r;
}

template <class R, class A, class Ev>
A reduce_block(const Ev& ev, int64_t n) {
  if constexpr (Ev::simd && std::is_same_v<typename Ev::value_type, A>) {
    constexpr int64_t W = static_cast<int64_t>(xsimd::batch<A>::size);
    if (n >= 4 * W && ev.contiguous_inner()) return reduce_block_simd<R, A, true>(ev, n);
    if (n >= 4 * W && ev.unit_inner()) return reduce_block_simd<R, A, false>(ev, n);
  }
  PairwiseStack<R, A> runs;
  for (int64_t i = 0; i < n; i += kCascade) {
    A r = R::template identity<A>();
    for (int64_t j = i, e = std::min(n, i + kCascade); j < e; ++j) r = R::combine(r, convert<A>(ev[j]));
    runs.push(r);
  }
  return runs.finish();
}

// The device backend's full reduction (cuda/reduce.hpp), in translation
// units that have it: the value on the host, or a 0-d tensor on the device.
namespace cuda {
template <class R, class A, class E>
A reduce_elements(const E& e);
template <class R, class A, class E>
Tensor<A> reduce_elements_on_device(const E& e);
}  // namespace cuda

// Reduces every element of an expression to one value of type A.
template <class R, class A, Expression E>
A reduce_all(const E& e) {
  const Shape& out = e.sizes();
  const int64_t n = numel_of(out);
  if (const Device device = expr_device(e); !device.is_cpu()) {
    check_same_device(device, e);
    if constexpr (kCudaBackend) return cuda::reduce_elements<R, A>(e);
    else fail_compiled_without_cuda(device, "a reduction");
  }
  if (n == 0) return R::template identity<A>();
  const Plan plan = make_plan(out, e);
  const auto ev = e.evaluator(plan);

  const int64_t inner = plan.inner_size();
  const int64_t blocks_per_row = (inner + kReduceBlock - 1) / kReduceBlock;
  const int64_t units = plan.rows() * blocks_per_row;
  const int64_t unit_len = std::min(inner, kReduceBlock);
  const int64_t per_group = std::max<int64_t>(1, kReduceGroup / unit_len);
  const int64_t groups = (units + per_group - 1) / per_group;

  auto reduce_group = [&](int64_t g) {
    auto local = ev;
    PairwiseStack<R, A> stack;
    int64_t idx[kMaxEvalDims];
    for (int64_t u = g * per_group, ue = std::min(units, u + per_group); u < ue; ++u) {
      const int64_t row = u / blocks_per_row, col = (u % blocks_per_row) * kReduceBlock;
      plan.row_index(row, col, idx);
      local.set_row(idx, plan.ndim);
      stack.push(reduce_block<R, A>(local, std::min(kReduceBlock, inner - col)));
    }
    return stack.finish();
  };

  if (groups == 1) return reduce_group(0);
  // One slot per group, written by the thread that reduced it. Not
  // std::vector<bool> (all, any, equal): its slots are bits of shared words,
  // and two threads setting neighbouring bits would race, one losing its
  // write (equal() then answered false about equal tensors, now and then).
  using Slot = std::conditional_t<std::is_same_v<A, bool>, unsigned char, A>;
  std::vector<Slot> partial(static_cast<std::size_t>(groups));
  run_units(groups, n, [&](int64_t gb, int64_t ge) {
    for (int64_t g = gb; g < ge; ++g) partial[static_cast<std::size_t>(g)] = static_cast<Slot>(reduce_group(g));
  });
  PairwiseStack<R, A> stack;
  for (const Slot& p : partial) stack.push(static_cast<A>(p));
  return stack.finish();
}

// Result types: integer and bool sums and products are int64, as in PyTorch.
template <class T>
using sum_t = std::conditional_t<is_floating_v<T>, T, int64_t>;

template <class T>
Tensor<T> scalar_tensor(T v, Device device = kCPU) {
  auto t = Tensor<T>::allocate(Shape{});
  *t.data_ptr() = v;
  return device.is_cpu() ? t : t.to(device);
}

// Every element of e combined by R in type A, then finish(value) converted
// to Out, as a 0-d tensor on e's device. finish takes the value (on the
// CPU) or the 0-d tensor that holds it (on a device, as an expression). A
// device's result stays there: reading it to the host and copying it back
// would wait for the device, where PyTorch's reductions queue their work and
// return.
template <class Out, class R, class A, Expression E, class Finish = std::identity>
Tensor<Out> reduced_to_tensor(const E& e, Finish finish = {}) {
  const Device device = expr_device(e);
  if (device.is_cpu()) return scalar_tensor<Out>(Out(finish(reduce_all<R, A>(e))));
  check_same_device(device, e);
  if constexpr (kCudaBackend) {
    Tensor<A> value = cuda::reduce_elements_on_device<R, A>(e);
    if constexpr (std::is_same_v<Out, A> && std::is_same_v<Finish, std::identity>) {
      return value;
    } else {
      const Tensor<Out> out = Tensor<Out>::allocate(Shape{}, device);
      assign(out, cast<Out>(finish(value)));
      return out;
    }
  } else {
    fail_compiled_without_cuda(device, "a reduction");
  }
}

// PyTorch's errors for reducing all of an empty tensor to one extremum: max,
// min, amax and amin fail with a hint; argmax and argmin with an IndexError.
template <class E>
void check_nonempty(const E& e, const char* name) {
  check(e.numel() > 0, name,
        "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
        "'dim' argument.");
}
template <class E>
void check_nonempty_for_index(const E& e, const char* name) {
  check<IndexError>(e.numel() > 0, name, "(): Expected reduction dim to be specified for input.numel() == 0.");
}

}  // namespace detail

template <Expression E>
auto sum(const E& e) {
  using T = typename E::value_type;
  using R = detail::sum_t<T>;
  auto out = detail::reduced_to_tensor<R, detail::SumReducer, acc_t<R>>(e);
  detail::record_full_reduction(out, e, false);
  return out;
}
template <Expression E>
auto prod(const E& e) {
  using T = typename E::value_type;
  using R = detail::sum_t<T>;
  auto out = detail::reduced_to_tensor<R, detail::ProdReducer, acc_t<R>>(e);
  detail::record_op<autograd::tag::Prod>(out, e, Shape{}, "ProdBackward0");
  return out;
}
template <Expression E>
auto mean(const E& e) {
  using T = typename E::value_type;
  static_assert(is_floating_v<T>, "mean(): could not infer output dtype. Input dtype must be either a floating point "
                                  "or complex dtype. Use mean(cast<float>(x)) for integer tensors.");
  const auto n = acc_t<T>(e.numel());
  auto out = detail::reduced_to_tensor<T, detail::SumReducer, acc_t<T>>(e, [n](const auto& s) { return s / n; });
  detail::record_full_reduction(out, e, true);
  return out;
}
namespace detail {
template <class R, Expression E>
auto extremum(const E& e, const char* name, const char* backward_name, bool evenly) {
  using T = typename E::value_type;
  check_nonempty(e, name);
  auto out = reduced_to_tensor<T, R, acc_t<T>>(e);
  record_op<autograd::tag::Extremum>(out, e, Shape{}, backward_name, evenly);
  return out;
}
}  // namespace detail

template <Expression E>
auto amax(const E& e) { return detail::extremum<detail::MaxReducer>(e, "amax", "AmaxBackward0", false); }
template <Expression E>
auto amin(const E& e) { return detail::extremum<detail::MinReducer>(e, "amin", "AminBackward0", false); }
// max(e) / min(e) over all elements (the forms with a dim come with reductions over dims).
template <Expression E>
auto max(const E& e) { return detail::extremum<detail::MaxReducer>(e, "max", "MaxBackward1", true); }
template <Expression E>
auto min(const E& e) { return detail::extremum<detail::MinReducer>(e, "min", "MinBackward1", true); }

// True when every element of a and b (broadcast) satisfies
// |a - b| <= atol + rtol * |b|; NaNs are never close (equal_nan = false).
template <Expression A, Expression B>
bool allclose(const A& a, const B& b, double rtol = 1e-5, double atol = 1e-8) {
  using C = floating_t<promote_t<typename A::value_type, typename B::value_type>>;
  const auto x = cast<C>(a);
  const auto y = cast<C>(b);
  const auto close = (x == y) || (abs(x - y) <= C(atol) + C(rtol) * abs(y));
  return detail::reduce_all<detail::AllReducer, bool>(close);
}

// True when a and b have the same sizes and the same elements.
template <Expression A, Expression B>
bool equal(const A& a, const B& b) {
  if (!(a.sizes() == b.sizes())) return false;
  return detail::reduce_all<detail::AllReducer, bool>(a == b);
}

// ----- method forms ------------------------------------------------------------
template <class D> auto ExprBase<D>::sum() const { return tsr::sum(derived()); }
template <class D> auto ExprBase<D>::mean() const { return tsr::mean(derived()); }
template <class D> auto ExprBase<D>::prod() const { return tsr::prod(derived()); }
template <class D> auto ExprBase<D>::amax() const { return tsr::amax(derived()); }
template <class D> auto ExprBase<D>::amin() const { return tsr::amin(derived()); }
template <class D> auto ExprBase<D>::max() const { return tsr::max(derived()); }
template <class D> auto ExprBase<D>::min() const { return tsr::min(derived()); }

}  // namespace tsr
