// Reductions over dimensions: sum, mean, prod, amax, amin, all, any and
// count_nonzero with a list of dims (empty: all) and keepdim.
//
// Each is one pass over its input expression, which is fused (sum(a * b, {1})
// reads a and b once and allocates only the result). The layout comes from
// detail::ReducePlan: an inner reduction reduces contiguous rows with the
// blocked, cascaded SIMD kernel of the full reductions; an outer reduction
// (column sums) walks rows and vectorizes across the kept inner dimension.
// Both combine partial results pairwise in an order fixed by the shape, and
// threads only split the outputs, so results are bitwise identical for every
// thread count.
#pragma once
#include <bit>
#include <concepts>
#include <memory>

#include "detail/reduce_plan.hpp"
#include "reduce.hpp"

namespace tsr {
namespace detail {

struct AnyReducer {
  static constexpr const char* name = "any";
  template <class A> static A identity() { return false; }
  template <class V> static V combine(const V& a, const V& b) { return a || b; }
};

// The width of the kept-inner chunks an outer reduction (column sums) is
// split into: whole rows when there are enough outer positions for every
// thread, else a share of a row per thread (a multiple of 64, at least 256
// elements), so that memory streams row after row. The width never changes
// a result: every column is combined in the same order.
inline int64_t column_chunk(const ReducePlan& rp) {
  const int64_t inner = rp.inner_kept_size();
  const int64_t threads = rp.outputs * rp.count < kParallelGrain ? 1 : get_num_threads();
  if (rp.outer_outputs() >= threads) return inner;
  const int64_t share = (inner + threads - 1) / threads;
  return std::min(inner, std::max<int64_t>(256, (share + 63) / 64 * 64));
}

// Pairwise combination of runs of column partials, `width` values each
// (PairwiseStack for a vector of columns).
template <class R, class A>
class PairwiseColumns {
 public:
  // Room for the partials of `pushes` runs: a binary counter holds at most
  // bit_width(pushes) + 1 of them at once.
  PairwiseColumns(int64_t width, int64_t pushes)
      : width_(width),
        values_(new A[static_cast<std::size_t>((std::bit_width(uint64_t(pushes)) + 1) * width)]) {}
  void push(const A* run) {
    std::copy(run, run + width_, slot(n_));
    count_[n_++] = 1;
    while (n_ >= 2 && count_[n_ - 1] == count_[n_ - 2]) {
      A* lo = slot(n_ - 2);
      const A* hi = slot(n_ - 1);
      for (int64_t j = 0; j < width_; ++j) lo[j] = R::combine(lo[j], hi[j]);
      count_[n_ - 2] *= 2;
      --n_;
    }
  }
  void finish(A* out) {
    if (n_ == 0) return std::fill(out, out + width_, R::template identity<A>());
    std::copy(slot(n_ - 1), slot(n_ - 1) + width_, out);
    for (int i = n_ - 2; i >= 0; --i)
      for (int64_t j = 0; j < width_; ++j) out[j] = R::combine(slot(i)[j], out[j]);
  }

 private:
  A* slot(int i) { return values_.get() + i * width_; }
  int64_t width_;
  std::unique_ptr<A[]> values_;  // not std::vector: A may be bool
  int64_t count_[64];
  int n_ = 0;
};

// acc[j] = combine(acc[j], ev[j]) for j < width: one row of an outer reduction.
template <class R, class A, class Ev>
void combine_row(A* acc, const Ev& ev, int64_t width) {
  int64_t j = 0;
  if constexpr (Ev::simd && std::is_same_v<typename Ev::value_type, A>) {
    if (ev.unit_inner()) {
      using B = xsimd::batch<A>;
      constexpr int64_t W = static_cast<int64_t>(B::size);
      for (; j + W <= width; j += W)
        R::combine(B::load_unaligned(acc + j), ev.template batch<B>(j)).store_unaligned(acc + j);
    }
  }
  for (; j < width; ++j) acc[j] = R::combine(acc[j], convert<A>(ev[j]));
}

// Calls body(local, idx, at, width) for every work unit of an outer
// reduction: the chunk [c0, c0 + width) of the kept inner dim at one
// kept-outer position, whose outputs start at out + at. idx holds the unit's
// kept dims (rp.set_row fills in a reduced row); local is this thread's copy
// of the evaluator.
template <class Ev, class F>
void for_each_column_unit(const ReducePlan& rp, const Ev& ev, const F& body) {
  const int64_t inner = rp.inner_kept_size();
  const int64_t chunk = column_chunk(rp);
  const int64_t chunks = (inner + chunk - 1) / chunk;
  run_units(rp.outer_outputs() * chunks, rp.outputs * rp.count, [&](int64_t ub, int64_t ue) {
    auto local = ev;
    int64_t idx[kMaxEvalDims];
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t o = u / chunks, c0 = (u % chunks) * chunk;
      rp.set_outer(o, idx);
      idx[rp.plan.ndim - 1] = c0;
      body(local, idx, o * inner + c0, std::min(chunk, inner - c0));
    }
  });
}

// Reduces e over the plan's reduced dims into out[0, rp.outputs), in the
// order of the kept dims (the result's contiguous layout).
template <class R, class A, Expression E>
void reduce_into(A* out, const E& e, const ReducePlan& rp) {
  if (rp.outputs == 0) return;
  if (rp.count == 0) return std::fill(out, out + rp.outputs, R::template identity<A>());
  const Plan& p = rp.plan;
  const auto ev = e.evaluator(p);

  if (!rp.kept_inner) {  // inner reduction: each output reduces rows of the inner reduced dim
    const int64_t len = rp.reduced_inner_size();
    const int64_t rows = rp.count / len;
    run_units(rp.outputs, rp.outputs * rp.count, [&](int64_t ob, int64_t oe) {
      auto local = ev;
      int64_t idx[kMaxEvalDims];
      for (int64_t o = ob; o < oe; ++o) {
        rp.set_outer(o, idx);
        PairwiseStack<R, A> stack;
        for (int64_t r = 0; r < rows; ++r) {
          rp.set_reduced(r, rp.reduced - 1, idx);
          for (int64_t c = 0; c < len; c += kReduceBlock) {
            idx[p.ndim - 1] = c;
            local.set_row(idx, p.ndim);
            stack.push(reduce_block<R, A>(local, std::min(kReduceBlock, len - c)));
          }
        }
        out[o] = stack.finish();
      }
    });
    return;
  }

  // Outer reduction: rows of each unit are combined in runs of kCascade,
  // the runs pairwise.
  for_each_column_unit(rp, ev, [&](auto& local, int64_t* idx, int64_t at, int64_t width) {
    std::unique_ptr<A[]> run(new A[static_cast<std::size_t>(width)]);
    PairwiseColumns<R, A> columns(width, (rp.count + kCascade - 1) / kCascade);
    for (int64_t r = 0; r < rp.count; r += kCascade) {
      std::fill(run.get(), run.get() + width, R::template identity<A>());
      for (int64_t k = r, ke = std::min(rp.count, r + kCascade); k < ke; ++k) {
        rp.set_row(k, idx, local);
        combine_row<R>(run.get(), local, width);
      }
      columns.push(run.get());
    }
    columns.finish(out + at);
  });
}

// The reduction of e over `dims` as a new tensor of type Out, accumulating
// in A (and through a temporary of A when the two differ: 16-bit floats).
template <class Out, class R, class A, Expression E>
Tensor<Out> reduce_dims(const E& e, const Shape& dims, bool keepdim) {
  const uint64_t mask = reduce_mask(dims, e.dim());
  const ReducePlan rp = make_reduce_plan(e, mask);
  auto out = Tensor<Out>::allocate(reduced_shape(e.sizes(), mask, keepdim));
  if constexpr (std::is_same_v<Out, A>) {
    reduce_into<R, A>(out.data_ptr(), e, rp);
  } else {
    auto acc = Tensor<A>::allocate(out.sizes());
    reduce_into<R, A>(acc.data_ptr(), e, rp);
    out.copy_(cast<Out>(acc));
  }
  return out;
}

// The number of elements reduced into each output.
template <class E>
int64_t reduced_count(const E& e, const Shape& dims) {
  const uint64_t mask = reduce_mask(dims, e.dim());
  int64_t n = 1;
  for (int64_t d = 0; d < e.dim(); ++d)
    if (mask >> d & 1) n *= e.sizes()[static_cast<std::size_t>(d)];
  return n;
}

// The first reduced dim of size 0, or -1: reductions without an identity
// (amax, amin, the inf-norms) fail there, naming it as PyTorch does.
template <class E>
int64_t first_empty_reduced_dim(const E& e, const Shape& dims) {
  const uint64_t mask = reduce_mask(dims, e.dim());
  for (int64_t d = 0; d < e.dim(); ++d)
    if ((mask >> d & 1) && e.sizes()[static_cast<std::size_t>(d)] == 0) return d;
  return -1;
}
template <class E>
void check_nonempty_dims(const E& e, const Shape& dims, const char* name) {
  const int64_t d = first_empty_reduced_dim(e, dims);
  check(d < 0, name, "(): Expected reduction dim ", d, " to have non-zero size.");
}

}  // namespace detail

// sum(e, dims, keepdim): integer and bool inputs sum to int64, as in PyTorch.
template <Expression E>
auto sum(const E& e, const Shape& dims, bool keepdim = false) {
  using R = detail::sum_t<typename E::value_type>;
  return detail::reduce_dims<R, detail::SumReducer, acc_t<R>>(e, dims, keepdim);
}
template <Expression E>
auto prod(const E& e, const Shape& dims, bool keepdim = false) {
  using R = detail::sum_t<typename E::value_type>;
  return detail::reduce_dims<R, detail::ProdReducer, acc_t<R>>(e, dims, keepdim);
}
template <Expression E>
auto mean(const E& e, const Shape& dims, bool keepdim = false) {
  using T = typename E::value_type;
  static_assert(is_floating_v<T>, "mean(): could not infer output dtype. Input dtype must be either a floating point "
                                  "or complex dtype. Use mean(cast<float>(x)) for integer tensors.");
  const auto count = static_cast<double>(detail::reduced_count(e, dims));
  auto s = detail::reduce_dims<acc_t<T>, detail::SumReducer, acc_t<T>>(e, dims, keepdim);
  return Tensor<T>(cast<T>(s / acc_t<T>(count)));
}
template <Expression E>
auto amax(const E& e, const Shape& dims, bool keepdim = false) {
  using T = typename E::value_type;
  detail::check_nonempty_dims(e, dims, "amax");
  return detail::reduce_dims<T, detail::MaxReducer, acc_t<T>>(e, dims, keepdim);
}
template <Expression E>
auto amin(const E& e, const Shape& dims, bool keepdim = false) {
  using T = typename E::value_type;
  detail::check_nonempty_dims(e, dims, "amin");
  return detail::reduce_dims<T, detail::MinReducer, acc_t<T>>(e, dims, keepdim);
}
// all / any: true where every / some element is nonzero; bool results.
template <Expression E>
auto all(const E& e, const Shape& dims = {}, bool keepdim = false) {
  return detail::reduce_dims<bool, detail::AllReducer, bool>(cast<bool>(e), dims, keepdim);
}
template <Expression E>
auto any(const E& e, const Shape& dims = {}, bool keepdim = false) {
  return detail::reduce_dims<bool, detail::AnyReducer, bool>(cast<bool>(e), dims, keepdim);
}
// The number of nonzero elements over dims (int64).
template <Expression E>
auto count_nonzero(const E& e, const Shape& dims = {}) {
  return detail::reduce_dims<int64_t, detail::SumReducer, int64_t>(cast<int64_t>(cast<bool>(e)), dims, false);
}

// An integer dim in place of a list: sum(x, 1) as x.sum(1) in PyTorch.
template <Expression E, std::integral I>
auto sum(const E& e, I dim, bool keepdim = false) { return sum(e, Shape{int64_t(dim)}, keepdim); }
template <Expression E, std::integral I>
auto mean(const E& e, I dim, bool keepdim = false) { return mean(e, Shape{int64_t(dim)}, keepdim); }
template <Expression E, std::integral I>
auto prod(const E& e, I dim, bool keepdim = false) { return prod(e, Shape{int64_t(dim)}, keepdim); }
template <Expression E, std::integral I>
auto amax(const E& e, I dim, bool keepdim = false) { return amax(e, Shape{int64_t(dim)}, keepdim); }
template <Expression E, std::integral I>
auto amin(const E& e, I dim, bool keepdim = false) { return amin(e, Shape{int64_t(dim)}, keepdim); }

// ----- method forms ------------------------------------------------------------
template <class D> auto ExprBase<D>::sum(const Shape& dims, bool keepdim) const { return tsr::sum(derived(), dims, keepdim); }
template <class D> auto ExprBase<D>::mean(const Shape& dims, bool keepdim) const { return tsr::mean(derived(), dims, keepdim); }
template <class D> auto ExprBase<D>::prod(const Shape& dims, bool keepdim) const { return tsr::prod(derived(), dims, keepdim); }
template <class D> auto ExprBase<D>::amax(const Shape& dims, bool keepdim) const { return tsr::amax(derived(), dims, keepdim); }
template <class D> auto ExprBase<D>::amin(const Shape& dims, bool keepdim) const { return tsr::amin(derived(), dims, keepdim); }

}  // namespace tsr
