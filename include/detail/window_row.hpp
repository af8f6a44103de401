// The inner loop of the patch matrix's adjoint (col2im) for a stride-1
// window tap: each output row's entries summed back into part of an input
// row.
//
// With the small images of a CNN those parts are shorter than one AVX-512
// register (14 floats for a 14 x 14 map), so adding them piece by piece
// runs scalar code and pays a loop's overhead for every few elements. On
// AVX-512 a whole row is a few masked loads and stores instead: the mask
// selects the part inside the input. Other instruction sets add the pieces.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace tsr::detail {

#if defined(__AVX512F__)
// The 16 lanes k with lo <= k < hi.
[[gnu::always_inline]] inline __mmask16 lanes_between(int64_t lo, int64_t hi) {
  const auto below = [](int64_t n) { return n <= 0 ? 0u : n >= 16 ? 0xffffu : (1u << n) - 1u; };
  return static_cast<__mmask16>(below(hi) & ~below(lo));
}
#endif

// Over `planes` planes at once: for each row r and plane c,
// base[at + c plane + r step + k] += src[c src_plane + r n + k] for k in
// [lo, hi).
template <class T>
inline void add_window_rows(T* base, int64_t at, int64_t step, int64_t plane, const T* src, int64_t n,
                            int64_t src_plane, int64_t rows, int64_t planes, int64_t lo, int64_t hi) {
  const int64_t count = hi - lo;
  if (count <= 0) return;
  at += lo;  // at itself may lie before the buffer; at + lo does not
  src += lo;
  // A masked load reads whole 64-byte vectors, and when an earlier masked
  // store still on its way to the cache covered the same bytes (with lanes
  // masked off), the load waits for it instead of taking its data: 7 ns a
  // row when a plane's 14-float rows followed each other. So rows whose
  // vectors overlap go in separate passes (rows 0, 2, 4, ... then 1, 3, 5,
  // ...). Each element still gets one addition per call.
  const int64_t footprint = (count + 15) / 16 * 16;
  const int64_t passes = step >= footprint ? 1 : (footprint + step - 1) / step;
  for (int64_t pass = 0; pass < passes; ++pass)
    for (int64_t c = 0; c < planes; ++c)
      for (int64_t r = pass; r < rows; r += passes) {
        T* d = base + (at + c * plane + r * step);
        const T* v = src + (c * src_plane + r * n);
#if defined(__AVX512F__)
        if constexpr (std::is_same_v<T, float>) {
          for (int64_t k = 0; k < count; k += 16) {
            const __mmask16 m = lanes_between(0, count - k);
            _mm512_mask_storeu_ps(d + k, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, d + k), _mm512_maskz_loadu_ps(m, v + k)));
          }
          continue;
        }
#endif
        for (int64_t k = 0; k < count; ++k) d[k] += v[k];
      }
}

}  // namespace tsr::detail
