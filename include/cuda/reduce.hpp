// Reductions on the device: every element of an expression combined by one
// of the CPU's reducers (sum, prod, amax, amin, all), and the same over some
// dimensions, read through the expression's evaluator as the elementwise
// kernels read it.
//
// Each output's values are cut into slices, enough of them that about 2^18
// threads run (each slice at least 32 values): one thread per slice combines
// its values in blocks of 16 and the blocks pairwise, then the slices'
// partial results are combined in slice order by the same reduction (cut
// again while they are many). So the rounding error grows like the CPU's
// cascaded sums, and the slicing, which depends on the shape alone, gives
// the same result every run on every GPU.
//
// A thread reads its values along rows of the inner reduced dim, placing
// the evaluator once per row. When the input's innermost dim is reduced, a
// slice is every slices-th column of the reduced rows, and neighbouring
// threads read neighbouring columns. When it is kept, the kept inner dim is
// moved before the reduced dims (a column reduction becomes a row reduction
// over a transposed plan): a slice is then a run of the reduced positions,
// and neighbouring threads are neighbouring outputs, reading neighbouring
// addresses at each step. Either way a warp's loads are coalesced. A full
// reduction is a reduction over every dim into one element, a 0-d tensor
// that stays on the device.
#pragma once
#include <algorithm>
#include <type_traits>

#include "../detail/reduce_plan.hpp"
#include "../index_reduce.hpp"
#include "elementwise.hpp"

namespace tsr::detail::cuda {

// Values pushed one by one, combined in blocks of kBlock, the blocks
// pairwise up to groups of 2^(kLevels - 1) blocks, and those groups in
// order. Every level is named at compile time (the loops over them are
// unrolled), so the levels stay in registers: an array indexed at run time
// lives in the thread's local memory, which the profile of the previous
// version (64 levels, indexed by a loop) showed as a 1.5 KB stack per
// thread and most of its stalls.
template <class R, class A>
struct PairwiseCombiner {
  static constexpr int kBlock = 16;
  static constexpr int kLevels = 8;  // pairwise over the first 16 * 2^7 = 2048 values
  // partial[k], k < kLevels - 1: a group of 2^k blocks while bit k of blocks
  // is set; the last: the groups of 2^(kLevels - 1) blocks so far, combined.
  A partial[kLevels];
  A block;
  int64_t blocks = 0;
  int in_block = 0;

  TSR_HOST_DEVICE void push(A x, int64_t /*position*/) {
    block = in_block == 0 ? x : R::combine(block, x);
    if (++in_block < kBlock) return;
    in_block = 0;
    bool carrying = true;  // a binary counter's carry over the levels
    TSR_DEVICE_UNROLL for (int k = 0; k < kLevels - 1; ++k) {
      if (!carrying) continue;
      if (blocks >> k & 1) {
        block = R::combine(partial[k], block);
      } else {
        partial[k] = block;
        carrying = false;
      }
    }
    constexpr int top = kLevels - 1;
    if (carrying) partial[top] = blocks >> top ? R::combine(partial[top], block) : block;
    ++blocks;
  }
  // The combination of everything pushed (identity when nothing was).
  TSR_HOST_DEVICE A finish(A identity) const {
    bool any = in_block > 0;
    A result = any ? block : identity;
    TSR_DEVICE_UNROLL for (int k = 0; k < kLevels; ++k) {
      const bool held = k < kLevels - 1 ? (blocks >> k & 1) != 0 : (blocks >> k) != 0;
      if (!held) continue;
      result = any ? R::combine(partial[k], result) : partial[k];
      any = true;
    }
    return result;
  }
};

// A reduction laid out as a row reduction (kept_inner false): when the
// input's innermost dim is kept, it becomes the innermost kept-outer dim,
// so that the rows of the inner reduced dim run along the reduced values.
// The flat index of an output and of a reduced position are unchanged.
inline tsr::detail::ReducePlan as_row_reduction(tsr::detail::ReducePlan rp) {
  if (!rp.kept_inner) return rp;
  tsr::detail::Plan& p = rp.plan;
  std::rotate(p.sizes + rp.kept_outer, p.sizes + p.ndim - 1, p.sizes + p.ndim);
  std::rotate(p.src + rp.kept_outer, p.src + p.ndim - 1, p.src + p.ndim);
  ++rp.kept_outer;
  rp.kept_inner = false;
  return rp;
}

// Pushes the values of slice s (of `slices`) reduced into output j to acc,
// in order, with their flat positions over the reduced dims:
// acc.push(value, position). rp is a row reduction (as_row_reduction). A
// slice is a run of positions (runs) or every slices-th column of each row;
// with one slice, every value of output j.
//
// Values are read kLoadBatch at a time before any is combined, so that a
// thread has that many loads in flight: combining each value as it arrives
// left one, and the reductions latency-bound at a tenth of the bandwidth.
// (The batch stays in registers only if its loops are unrolled.)
inline constexpr int kLoadBatch = 16;
template <class A, class Ev, class Acc>
TSR_HOST_DEVICE void push_reduced(const Ev& ev, const tsr::detail::ReducePlan& rp, int64_t j, Acc& acc,
                                  int64_t s = 0, int64_t slices = 1, bool runs = false) {
  const int nd = rp.plan.ndim;
  const int64_t row_len = rp.reduced_inner_size();
  if (row_len == 0) return;
  // Output j's kept dims, then each row's outer reduced dims; the column
  // entry stays 0, as set_row takes it.
  int64_t idx[tsr::detail::kMaxEvalDims];
  TSR_DEVICE_UNROLL for (int d = 0; d < tsr::detail::kMaxEvalDims; ++d) idx[d] = 0;
  rp.set_outer(j, idx);
  int64_t first = s, stop = rp.count, step = slices;  // positions [first, stop) of the slice
  if (runs) {
    const int64_t per_slice = rp.count / slices, longer = rp.count % slices;
    first = s * per_slice + (s < longer ? s : longer);
    stop = first + per_slice + (s < longer ? 1 : 0);
    step = 1;
  }
  A batch[kLoadBatch];
  for (int64_t row = first / row_len; row * row_len < stop; ++row) {
    rp.set_reduced(row, rp.reduced - 1, idx);
    Ev placed = ev;
    placed.set_row(idx, nd);
    const int64_t at = row * row_len;
    int64_t c = runs ? (first > at ? first - at : 0) : s;
    const int64_t end = stop - at < row_len ? stop - at : row_len;
    for (; c + (kLoadBatch - 1) * step < end; c += kLoadBatch * step) {
      TSR_DEVICE_UNROLL for (int i = 0; i < kLoadBatch; ++i) batch[i] = tsr::detail::convert<A>(placed[c + i * step]);
      TSR_DEVICE_UNROLL for (int i = 0; i < kLoadBatch; ++i) acc.push(batch[i], at + c + i * step);
    }
    for (; c < end; c += step) acc.push(tsr::detail::convert<A>(placed[c]), at + c);
  }
}

// How many slices each output's values are cut into: enough for about
// kReduceThreads threads, each slice at least kMinSliceValues values, and,
// when slices interleave the columns of a row, no more of them than its
// columns. From the shape alone, so that results do not depend on the GPU.
inline constexpr int64_t kReduceThreads = int64_t(1) << 18;
inline constexpr int64_t kMinSliceValues = 32;
inline int64_t reduce_slices(const tsr::detail::ReducePlan& rp, bool runs) {
  int64_t slices = std::min((kReduceThreads + rp.outputs - 1) / rp.outputs, rp.count / kMinSliceValues);
  if (!runs) slices = std::min(slices, rp.reduced_inner_size());
  return std::max<int64_t>(slices, 1);
}

// Combines slice t's values, written to out[t]: t = s * outputs + j for
// runs (neighbouring threads read neighbouring outputs), j * slices + s
// otherwise (neighbouring threads read neighbouring columns).
template <class R, class A, class Ev>
struct ReduceSlice {
  Ev ev;
  tsr::detail::ReducePlan rp;
  A* out;
  A identity;
  int64_t slices;
  bool runs;

  TSR_HOST_DEVICE void operator()(int64_t t) const {
    PairwiseCombiner<R, A> acc;
    if (runs) push_reduced<A>(ev, rp, t % rp.outputs, acc, t / rp.outputs, slices, true);
    else push_reduced<A>(ev, rp, t / slices, acc, t % slices, slices, false);
    out[t] = acc.finish(identity);
  }
};

// out (contiguous, rp.outputs elements) = e reduced along rp, whose plan is
// marked for the device.
template <class R, class A, class E>
void reduce_dims_into(const Tensor<A>& out, const E& e, const tsr::detail::ReducePlan& rp) {
  if (rp.outputs == 0) return;
  const bool runs = rp.kept_inner;
  const tsr::detail::ReducePlan rows = as_row_reduction(rp);
  const auto ev = e.evaluator(rows.plan);
  using Ev = std::remove_const_t<decltype(ev)>;
  static_assert(std::is_trivially_copyable_v<Ev>, "evaluators must be trivially copyable to run on the device");
  const int64_t slices = reduce_slices(rows, runs);
  const int device = out.device().index;
  if (slices == 1) {
    const ReduceSlice<R, A, Ev> reduce{ev, rows, out.device_data_ptr(), R::template identity<A>(), 1, false};
    return for_each_index(device, rp.outputs, reduce, "thrust::for_each_n (reduction over dims)");
  }
  // The slices' results, slice-major for runs, then combined over the
  // slices' dim in order.
  const Shape partial_shape = runs ? Shape{slices, rp.outputs} : Shape{rp.outputs, slices};
  const Tensor<A> partial = Tensor<A>::allocate(partial_shape, out.device());
  const ReduceSlice<R, A, Ev> reduce{ev, rows, partial.device_data_ptr(), R::template identity<A>(), slices, runs};
  for_each_index(device, rp.outputs * slices, reduce, "thrust::for_each_n (reduction over dims, slices)");
  tsr::detail::ReducePlan over_slices = tsr::detail::make_reduce_plan(partial, runs ? 1u : 2u);
  over_slices.plan.on_device = true;
  reduce_dims_into<R, A>(out, partial, over_slices);
}

// Every element of e combined by R in type A (R's identity when e is
// empty), as a 0-d tensor on e's device.
template <class R, class A, class E>
Tensor<A> reduce_elements_on_device(const E& e) {
  Tensor<A> out = Tensor<A>::allocate(Shape{}, tsr::detail::expr_device(e));
  if (e.numel() == 0) {
    out.fill_(R::template identity<A>());
    return out;
  }
  tsr::detail::ReducePlan rp = tsr::detail::make_reduce_plan(e, tsr::detail::reduce_mask({}, e.dim()));
  rp.plan.on_device = true;
  reduce_dims_into<R, A>(out, e, rp);
  return out;
}

// The same value on the host.
template <class R, class A, class E>
A reduce_elements(const E& e) {
  if (e.numel() == 0) return R::template identity<A>();
  return reduce_elements_on_device<R, A>(e).item();
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
  const tsr::detail::ReducePlan rows = as_row_reduction(rp);
  const auto ev = e.evaluator(rows.plan);
  using Ev = std::remove_const_t<decltype(ev)>;
  static_assert(std::is_trivially_copyable_v<Ev>, "evaluators must be trivially copyable to run on the device");
  const IndexReduceOutput<Max, T, A, Ev> reduce{ev, rows, values.device_data_ptr(), indices.device_data_ptr()};
  for_each_index(values.device().index, rp.outputs, reduce, "thrust::for_each_n (max/min over a dim)");
}

}  // namespace tsr::detail::cuda

