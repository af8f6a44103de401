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
// the same result every run on every GPU. A slice is a run of the reduced
// positions when the innermost dim is kept (neighbouring threads then read
// neighbouring outputs' columns), or every slices-th column of the reduced
// rows otherwise (neighbouring threads read neighbouring columns): either
// way a warp's loads are coalesced. A full reduction is a reduction over
// every dim into one element, a 0-d tensor that stays on the device.
#pragma once
#include <algorithm>
#include <type_traits>

#include "../detail/reduce_plan.hpp"
#include "../index_reduce.hpp"
#include "elementwise.hpp"

namespace tsr::detail::cuda {

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

// Pushes the values of slice s (of `slices`) reduced into output j to acc,
// in order, with their positions along the reduced dims:
// acc.push(value, position). With one slice, every value of output j.
//
// Values are read kLoadBatch at a time before any is combined, so that a
// thread has that many loads in flight: combining each value as it arrives
// left one, and the reductions latency-bound at a tenth of the bandwidth.
// (The batch stays in registers only if its loops are unrolled.)
inline constexpr int kLoadBatch = 16;
#if defined(__CUDACC__)
#define TSR_UNROLL _Pragma("unroll")
#else
#define TSR_UNROLL
#endif
template <class A, class Ev, class Acc>
TSR_HOST_DEVICE void push_reduced(const Ev& ev, const tsr::detail::ReducePlan& rp, int64_t j, Acc& acc,
                                  int64_t s = 0, int64_t slices = 1) {
  const int nd = rp.plan.ndim;
  const int64_t inner = rp.inner_kept_size();
  int64_t idx[tsr::detail::kMaxEvalDims];
  rp.set_outer(j / inner, idx);
  A batch[kLoadBatch];
  if (rp.kept_inner) {  // one value per reduced position, in the kept inner column; a run of them
    const int64_t col = j % inner;
    const int64_t per_slice = rp.count / slices, longer = rp.count % slices;
    const int64_t begin = s * per_slice + (s < longer ? s : longer);
    const int64_t end = begin + per_slice + (s < longer ? 1 : 0);
    idx[nd - 1] = 0;
    if (begin < end) rp.set_reduced(begin, rp.reduced, idx);  // (a reduced dim may have size 0)
    // The value at idx, then idx moved to the next reduced position (an
    // odometer over the reduced dims: no division per value).
    const auto read = [&] {
      Ev placed = ev;
      placed.set_row(idx, nd);
      for (int k = rp.kept_outer + rp.reduced - 1; k >= rp.kept_outer && ++idx[k] == rp.plan.sizes[k]; --k) idx[k] = 0;
      return tsr::detail::convert<A>(placed[col]);
    };
    int64_t r = begin;
    for (; r + kLoadBatch <= end; r += kLoadBatch) {
      TSR_UNROLL for (int i = 0; i < kLoadBatch; ++i) batch[i] = read();
      TSR_UNROLL for (int i = 0; i < kLoadBatch; ++i) acc.push(batch[i], r + i);
    }
    for (; r < end; ++r) acc.push(read(), r);
  } else {  // rows of the inner reduced dim; every slices-th column of each
    const int64_t row_len = rp.reduced_inner_size();
    const int64_t rows = row_len == 0 ? 0 : rp.count / row_len;
    for (int64_t r = 0; r < rows; ++r) {
      rp.set_reduced(r, rp.reduced - 1, idx);
      idx[nd - 1] = 0;
      Ev placed = ev;
      placed.set_row(idx, nd);
      const int64_t at = r * row_len;
      int64_t c = s;
      for (; c + (kLoadBatch - 1) * slices < row_len; c += kLoadBatch * slices) {
        TSR_UNROLL for (int i = 0; i < kLoadBatch; ++i) batch[i] = tsr::detail::convert<A>(placed[c + i * slices]);
        TSR_UNROLL for (int i = 0; i < kLoadBatch; ++i) acc.push(batch[i], at + c + i * slices);
      }
      for (; c < row_len; c += slices) acc.push(tsr::detail::convert<A>(placed[c]), at + c);
    }
  }
}

// How many slices each output's values are cut into: enough for about
// kReduceThreads threads, each slice at least kMinSliceValues values, and
// no more slices than the columns of a reduced row (slices of rows
// interleave columns). From the shape alone, so that results do not
// depend on the GPU.
inline constexpr int64_t kReduceThreads = int64_t(1) << 18;
inline constexpr int64_t kMinSliceValues = 32;
inline int64_t reduce_slices(const tsr::detail::ReducePlan& rp) {
  int64_t slices = std::min((kReduceThreads + rp.outputs - 1) / rp.outputs, rp.count / kMinSliceValues);
  if (!rp.kept_inner) slices = std::min(slices, rp.reduced_inner_size());
  return std::max<int64_t>(slices, 1);
}

// Combines slice t's values: t = s * outputs + j when the innermost dim is
// kept, j * slices + s otherwise (neighbouring threads read neighbouring
// columns), written to out[t].
template <class R, class A, class Ev>
struct ReduceSlice {
  Ev ev;
  tsr::detail::ReducePlan rp;
  A* out;
  A identity;
  int64_t slices;

  TSR_HOST_DEVICE void operator()(int64_t t) const {
    PairwiseCombiner<R, A> acc;
    if (rp.kept_inner) push_reduced<A>(ev, rp, t % rp.outputs, acc, t / rp.outputs, slices);
    else push_reduced<A>(ev, rp, t / slices, acc, t % slices, slices);
    out[t] = acc.finish(identity);
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
  const int64_t slices = reduce_slices(rp);
  const int device = out.device().index;
  if (slices == 1) {
    const ReduceSlice<R, A, Ev> reduce{ev, rp, out.device_data_ptr(), R::template identity<A>(), 1};
    return for_each_index(device, rp.outputs, reduce, "thrust::for_each_n (reduction over dims)");
  }
  // The slices' results, slice-major when the innermost dim is kept, then
  // combined over the slices' dim in order.
  const Shape partial_shape = rp.kept_inner ? Shape{slices, rp.outputs} : Shape{rp.outputs, slices};
  const Tensor<A> partial = Tensor<A>::allocate(partial_shape, out.device());
  const ReduceSlice<R, A, Ev> reduce{ev, rp, partial.device_data_ptr(), R::template identity<A>(), slices};
  for_each_index(device, rp.outputs * slices, reduce, "thrust::for_each_n (reduction over dims, slices)");
  tsr::detail::ReducePlan over_slices = tsr::detail::make_reduce_plan(partial, rp.kept_inner ? 1u : 2u);
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
  const auto ev = e.evaluator(rp.plan);
  using Ev = std::remove_const_t<decltype(ev)>;
  static_assert(std::is_trivially_copyable_v<Ev>, "evaluators must be trivially copyable to run on the device");
  const IndexReduceOutput<Max, T, A, Ev> reduce{ev, rp, values.device_data_ptr(), indices.device_data_ptr()};
  for_each_index(values.device().index, rp.outputs, reduce, "thrust::for_each_n (max/min over a dim)");
}

}  // namespace tsr::detail::cuda

#undef TSR_UNROLL
