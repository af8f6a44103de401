// Reductions on the device. Full reductions: every element of an expression
// combined by one of the CPU's reducers (sum, prod, amax, amin, all), read through the
// expression's evaluator as the elementwise kernels read it, and combined in
// a tree by thrust::transform_reduce (CUB's device reduction under nvcc:
// per-thread runs, then block and grid trees, so the rounding error grows
// like the CPU's pairwise sums, and a given launch gives the same result
// every time). Emulated on Thrust's CPP device system, the combination is a
// plain left fold: the tests compare exactly representable values.
#pragma once
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#include <type_traits>

#include "../detail/reduce_plan.hpp"
#include "../index_reduce.hpp"
#include "elementwise.hpp"

namespace tsr::detail::cuda {

// Element k of an expression along a plan, as the accumulation type.
template <class A, class Ev>
struct ReadElement {
  Ev ev;
  PlanIndex at;

  TSR_HOST_DEVICE A operator()(int64_t k) const {
    int64_t idx[tsr::detail::kMaxEvalDims];
    const int64_t col = at.place(k, idx);
    return tsr::detail::convert<A>(at.at_row(ev, idx)[col]);
  }
};

// The same for a one-row plan (at_only_row): element k is column k.
template <class A, class Ev>
struct ReadColumn {
  Ev ev;
  TSR_HOST_DEVICE A operator()(int64_t k) const { return tsr::detail::convert<A>(ev[k]); }
};

template <class R>
struct Combine {
  template <class A>
  TSR_HOST_DEVICE A operator()(const A& a, const A& b) const {
    return R::combine(a, b);
  }
};

// Every element of e combined by R in type A (R's identity when e is empty).
template <class R, class A, class E>
A reduce_elements(const E& e) {
  const int64_t n = e.numel();
  if (n == 0) return R::template identity<A>();
  tsr::detail::Plan plan = tsr::detail::make_plan(e.sizes(), e);
  plan.on_device = true;
  const auto ev = e.evaluator(plan);
  using Ev = std::remove_const_t<decltype(ev)>;
  static_assert(std::is_trivially_copyable_v<Ev>, "evaluators must be trivially copyable to run on the device");
  const Launch launch(tsr::detail::expr_device(e).index);
  const auto reduce = [&](const auto& read) {
    return launch.run("thrust::transform_reduce", [&](const auto& policy) {
      return thrust::transform_reduce(policy, thrust::counting_iterator<int64_t>(0),
                                      thrust::counting_iterator<int64_t>(n), read, R::template identity<A>(),
                                      Combine<R>{});
    });
  };
  if (plan.ndim == 1) return reduce(ReadColumn<A, Ev>{at_only_row(ev)});
  return reduce(ReadElement<A, Ev>{ev, PlanIndex(plan)});
}

// ----- reductions over dimensions -------------------------------------------
//
// One thread per output element, along the CPU's reduce plan (kept outer
// dims, reduced dims, maybe one kept inner dim). Each thread combines its
// values in blocks of 16, and the blocks pairwise (a binary counter of
// partial results), so the rounding error grows like the CPU's cascaded
// sums and the result does not depend on the launch. One thread per output
// is slow when there are few outputs and many values each; it is the
// simple, deterministic first form.

// Values pushed one by one, combined in blocks of kBlock, the blocks
// pairwise.
template <class R, class A>
struct PairwiseCombiner {
  static constexpr int kBlock = 16;
  A partial[64];  // partial[k]: a group of 2^k blocks, while bit k of blocks is set
  A block;
  int64_t blocks = 0;
  int in_block = 0;

  TSR_HOST_DEVICE void push(A x, int64_t /*position*/) {
    block = in_block == 0 ? x : R::combine(block, x);
    if (++in_block < kBlock) return;
    in_block = 0;
    int k = 0;
    for (; blocks >> k & 1; ++k) block = R::combine(partial[k], block);
    partial[k] = block;
    ++blocks;
  }
  // The combination of everything pushed (identity when nothing was).
  TSR_HOST_DEVICE A finish(A identity) const {
    bool any = in_block > 0;
    A result = any ? block : identity;
    for (int k = 0; k < 64; ++k)
      if (blocks >> k & 1) {
        result = any ? R::combine(partial[k], result) : partial[k];
        any = true;
      }
    return result;
  }
};

// Pushes every value reduced into output j to acc, in order, with its
// position along the reduced dims: acc.push(value, position).
template <class A, class Ev, class Acc>
TSR_HOST_DEVICE void push_reduced(const Ev& ev, const tsr::detail::ReducePlan& rp, int64_t j, Acc& acc) {
  const int nd = rp.plan.ndim;
  const int64_t inner = rp.inner_kept_size();
  int64_t idx[tsr::detail::kMaxEvalDims];
  rp.set_outer(j / inner, idx);
  if (rp.kept_inner) {  // one value per reduced position, in the kept inner column
    const int64_t col = j % inner;
    idx[nd - 1] = 0;
    for (int64_t r = 0; r < rp.count; ++r) {
      rp.set_reduced(r, rp.reduced, idx);
      Ev placed = ev;
      placed.set_row(idx, nd);
      acc.push(tsr::detail::convert<A>(placed[col]), r);
    }
  } else {  // rows of the inner reduced dim
    const int64_t row_len = rp.reduced_inner_size();
    const int64_t rows = row_len == 0 ? 0 : rp.count / row_len;
    for (int64_t r = 0; r < rows; ++r) {
      rp.set_reduced(r, rp.reduced - 1, idx);
      idx[nd - 1] = 0;
      Ev placed = ev;
      placed.set_row(idx, nd);
      for (int64_t c = 0; c < row_len; ++c) acc.push(tsr::detail::convert<A>(placed[c]), r * row_len + c);
    }
  }
}

template <class R, class A, class Ev>
struct ReduceOutput {
  Ev ev;
  tsr::detail::ReducePlan rp;
  A* out;
  A identity;

  TSR_HOST_DEVICE void operator()(int64_t j) const {
    PairwiseCombiner<R, A> acc;
    push_reduced<A>(ev, rp, j, acc);
    out[j] = acc.finish(identity);
  }
};

// out (contiguous, rp.outputs elements) = e reduced along rp, whose plan is
// marked for the device.
template <class R, class A, class E>
void reduce_dims_into(const Tensor<A>& out, const E& e, const tsr::detail::ReducePlan& rp) {
  if (rp.outputs == 0) return;
  const auto ev = e.evaluator(rp.plan);
  using Ev = std::remove_const_t<decltype(ev)>;
  static_assert(std::is_trivially_copyable_v<Ev>, "evaluators must be trivially copyable to run on the device");
  const ReduceOutput<R, A, Ev> reduce{ev, rp, out.device_data_ptr(), R::template identity<A>()};
  for_each_index(out.device().index, rp.outputs, reduce, "thrust::for_each_n (reduction over dims)");
}

// ----- max/min over a dimension, with indices ---------------------------------

// The first largest (Max) or smallest value pushed and its position; NaN
// wins, the first NaN (tsr::detail::better, as on the CPU).
template <bool Max, class A>
struct ExtremeWithPosition {
  A best{};
  int64_t at = 0;
  TSR_HOST_DEVICE void push(A v, int64_t position) {
    if (position == 0 || tsr::detail::better<Max>(v, best)) best = v, at = position;
  }
};

template <bool Max, class T, class A, class Ev>
struct IndexReduceOutput {
  Ev ev;
  tsr::detail::ReducePlan rp;
  T* values;
  int64_t* indices;

  TSR_HOST_DEVICE void operator()(int64_t j) const {
    ExtremeWithPosition<Max, A> acc;
    push_reduced<A>(ev, rp, j, acc);
    values[j] = tsr::detail::convert<T>(acc.best);
    indices[j] = acc.at;
  }
};

// values and indices (contiguous, rp.outputs elements each, on the device)
// = the extreme of e along rp's one reduced dim and its index there.
template <bool Max, class T, class E>
void index_reduce_into(const Tensor<T>& values, const Tensor<int64_t>& indices, const E& e,
                       const tsr::detail::ReducePlan& rp) {
  if (rp.outputs == 0) return;
  using A = tsr::acc_t<T>;
  const auto ev = e.evaluator(rp.plan);
  using Ev = std::remove_const_t<decltype(ev)>;
  static_assert(std::is_trivially_copyable_v<Ev>, "evaluators must be trivially copyable to run on the device");
  const IndexReduceOutput<Max, T, A, Ev> reduce{ev, rp, values.device_data_ptr(), indices.device_data_ptr()};
  for_each_index(values.device().index, rp.outputs, reduce, "thrust::for_each_n (max/min over a dim)");
}

}  // namespace tsr::detail::cuda
