// Full reductions on the device: every element of an expression combined by
// one of the CPU's reducers (sum, prod, amax, amin, all), read through the
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
  const tsr::detail::Plan plan = tsr::detail::make_plan(e.sizes(), e);
  const auto ev = e.evaluator(plan);
  using Ev = std::remove_const_t<decltype(ev)>;
  static_assert(std::is_trivially_copyable_v<Ev>, "evaluators must be trivially copyable to run on the device");
  return thrust::transform_reduce(thrust::device, thrust::counting_iterator<int64_t>(0),
                                  thrust::counting_iterator<int64_t>(n), ReadElement<A, Ev>{ev, PlanIndex(plan)},
                                  R::template identity<A>(), Combine<R>{});
}

}  // namespace tsr::detail::cuda
