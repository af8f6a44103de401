// The lanes of a batch that a vector formula does not cover (arguments out
// of its range, inf, nan), computed one by one by a scalar function.
#pragma once
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace tsr::detail {

// r, with the lanes marked in `by_scalar` replaced by scalar(x) of that lane.
// Out of line and taking its batches by value: the hot loops call it only
// under an unlikely branch, and with reference parameters GCC stored the
// argument and the result to the stack on every iteration (a float sin loop
// over 2^24 elements: 7.7-8.4 ms that way, 6.5-6.8 ms without).
template <class T, class A, class F>
[[gnu::noinline]] xsimd::batch<T, A> replace_lanes(xsimd::batch<T, A> x, xsimd::batch<T, A> r,
                                                   xsimd::batch_bool<T, A> by_scalar, F scalar) {
  using B = xsimd::batch<T, A>;
  alignas(64) T v[B::size], out[B::size], marked[B::size];
  x.store_aligned(v);
  r.store_aligned(out);
  xsimd::select(by_scalar, B(T(1)), B(T(0))).store_aligned(marked);
  for (std::size_t i = 0; i < B::size; ++i)
    if (marked[i] != T(0)) out[i] = static_cast<T>(scalar(v[i]));
  return B::load_aligned(out);
}

}  // namespace tsr::detail
