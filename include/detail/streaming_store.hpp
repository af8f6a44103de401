// Non-temporal ("streaming") stores for large outputs.
//
// A normal store to memory that is not in cache first reads the line it
// writes (the read for ownership): an evaluation that reads four arrays and
// writes one moves six arrays' worth of bytes, not five. A streaming store
// writes whole lines without reading them, and leaves them out of the cache.
// That pays only for outputs too large to be read again from cache, so
// evaluations store this way only when the output is at least
// streaming_threshold() bytes; smaller ones keep their results in cache for
// the next operation, which usually reads them.
//
// xsimd 8 has no streaming store, so this uses the x86 intrinsics directly
// (SSE2 at least, which every x86-64 CPU has); elsewhere no batch can be
// stored this way and evaluations store as usual.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace tsr::detail {

// The alignment, in bytes, of a streaming store of T's SIMD batches (their
// width); 0 where there is none: element types other than float and double
// (the ones evaluated on batches), or no x86 streaming store of the width.
template <class T>
constexpr std::size_t streaming_alignment() {
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    constexpr std::size_t width = sizeof(xsimd::batch<T>);
#if defined(__AVX512F__)
    if (width == 64) return width;
#endif
#if defined(__AVX__)
    if (width == 32) return width;
#endif
    if (width == 16) return width;
  }
#endif
  return 0;
}

// Whether a row of T starting at p can be stored around the cache: T has a
// streaming store and p is aligned for it.
template <class T>
[[gnu::always_inline]] inline bool aligned_for_streaming(const T* p) {
  constexpr std::size_t alignment = streaming_alignment<T>();
  if constexpr (alignment == 0) return false;
  else return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

// Stores x at p (aligned to streaming_alignment<T>()) around the cache.
template <class B>
[[gnu::always_inline]] inline void store_streaming(typename B::value_type* p, const B& x) {
  using T = typename B::value_type;
  static_assert(streaming_alignment<T>() == sizeof(B));
  constexpr bool is_float = std::is_same_v<T, float>;
#if defined(__AVX512F__)
  if constexpr (sizeof(B) == 64) {
    if constexpr (is_float) _mm512_stream_ps(p, x);
    else _mm512_stream_pd(p, x);
  }
#endif
#if defined(__AVX__)
  if constexpr (sizeof(B) == 32) {
    if constexpr (is_float) _mm256_stream_ps(p, x);
    else _mm256_stream_pd(p, x);
  }
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(B) == 16) {
    if constexpr (is_float) _mm_stream_ps(p, x);
    else _mm_stream_pd(p, x);
  }
#endif
}

// The output size, in bytes, from which evaluations store around the cache:
// 16 MiB, far more than any core's L2 and than the share of a last-level
// cache one core can count on when others are busy. On a 2-core Xeon (2 MiB
// L2), writing a * b + 0.5 * a and reading it back took as long either way
// at a 4 MiB output, 7-28% less time with streaming stores at 8 MiB, 25-40%
// less from 16 MiB on; at 0.5 MiB, in L2, 2.3 times as long. Settable for
// tests.
inline std::size_t& streaming_threshold() {
  static std::size_t bytes = std::size_t{16} << 20;
  return bytes;
}

// The loops that store around the cache also ask for their leaves' cache
// lines this many bytes ahead (1 to 4 KiB measured alike on a Xeon's
// transcendental chain, 2^24 floats on one thread; 0.5 KiB 3-5% slower).
inline constexpr int64_t kCacheLine = 64;
inline constexpr int64_t kPrefetchAhead = 1024;

// Orders this thread's streaming stores before its later stores (a thread
// pool's "done" signal): they are weakly ordered otherwise.
inline void streaming_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace tsr::detail
