// A few values of one type that a device thread loads, computes on and
// stores together: what the evaluators' packet<W>(i) gives, the CUDA
// backend's vectorized path over contiguous rows (cuda/elementwise.hpp).
// Aligned to its size (at most 16 bytes), so that loading or storing one
// at an address so aligned is one vector access, or two for 32 bytes.
#pragma once
#include <cstddef>
#include <cstdint>

#include "config.hpp"

namespace tsr::detail {

template <class T, int W>
inline constexpr std::size_t kPacketAlignment = sizeof(T) * W < 16 ? sizeof(T) * W : 16;

template <class T, int W>
struct alignas(kPacketAlignment<T, W>) Packet {
  T v[W];
};

// How many values of T a thread handles at once: 16 bytes of them.
template <class T>
inline constexpr int kPacketWidth = sizeof(T) >= 16 ? 1 : int(16 / sizeof(T));

// Whether p may be read and written as Packet<T, W>s.
template <class T, int W>
bool packet_aligned(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % kPacketAlignment<T, W> == 0;
}

// W copies of one value.
template <int W, class T>
TSR_HOST_DEVICE Packet<T, W> packet_of(T value) {
  Packet<T, W> r;
  TSR_DEVICE_UNROLL for (int l = 0; l < W; ++l) r.v[l] = value;
  return r;
}

// fn applied to each value of the packets (W of them, the loop unrolled on
// the device, so the values stay in registers).
template <int W, class F, class... P>
TSR_HOST_DEVICE auto map_packets(F fn, const P&... p) {
  Packet<decltype(fn(p.v[0]...)), W> r;
  TSR_DEVICE_UNROLL for (int l = 0; l < W; ++l) r.v[l] = fn(p.v[l]...);
  return r;
}

}  // namespace tsr::detail
