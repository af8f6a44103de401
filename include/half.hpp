// 16-bit floating-point value types: IEEE half and bfloat16.
// Storage is 16 bits; arithmetic goes through float; conversions from float
// round to nearest even, bit-exact with PyTorch's c10::Half and c10::BFloat16.
#pragma once
#include <cstdint>
#include <cstring>
#include <ostream>

#include "detail/config.hpp"

namespace tsr {
namespace detail {

TSR_HOST_DEVICE inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
TSR_HOST_DEVICE inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// float -> binary16, round to nearest even (the fp16 library's algorithm
// that PyTorch uses: the rounding is done by a float addition).
TSR_HOST_DEVICE inline uint16_t half_from_float(float f) {
  const float scale_to_inf = bits_float(0x77800000u);   // 2^112
  const float scale_to_zero = bits_float(0x08800000u);  // 2^-110
  const uint32_t w = float_bits(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  float base = (f < 0 ? -f : f) * scale_to_inf * scale_to_zero;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = bits_float((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = float_bits(base);
  const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
  const uint32_t mantissa_bits = bits & 0x00000FFFu;
  const uint32_t nonsign = exp_bits + mantissa_bits;
  return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

// binary16 -> float, exact.
TSR_HOST_DEVICE inline float half_to_float(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const uint32_t exp_offset = 0xE0u << 23;
  const float exp_scale = bits_float(0x7800000u);  // 2^-112
  const float normalized = bits_float((two_w >> 4) + exp_offset) * exp_scale;
  const uint32_t magic_mask = 126u << 23;
  const float magic_bias = 0.5f;
  const float denormalized = bits_float((two_w >> 17) | magic_mask) - magic_bias;
  const uint32_t denormalized_cutoff = 1u << 27;
  const uint32_t result =
      sign | (two_w < denormalized_cutoff ? float_bits(denormalized) : float_bits(normalized));
  return bits_float(result);
}

// float -> bfloat16, round to nearest even; NaN becomes 0xFFFF, as in
// PyTorch's tensor conversion (.to(torch.bfloat16)).
TSR_HOST_DEVICE inline uint16_t bf16_from_float(float f) {
  if (f != f) return 0xFFFFu;
  const uint32_t u = float_bits(f);
  const uint32_t rounding_bias = ((u >> 16) & 1u) + 0x7FFFu;
  return static_cast<uint16_t>((u + rounding_bias) >> 16);
}
TSR_HOST_DEVICE inline float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

// The shared arithmetic of the two 16-bit types: everything through float.
template <class Derived>
struct Float16Base {
  TSR_HOST_DEVICE friend Derived operator+(Derived a, Derived b) { return Derived(float(a) + float(b)); }
  TSR_HOST_DEVICE friend Derived operator-(Derived a, Derived b) { return Derived(float(a) - float(b)); }
  TSR_HOST_DEVICE friend Derived operator*(Derived a, Derived b) { return Derived(float(a) * float(b)); }
  TSR_HOST_DEVICE friend Derived operator/(Derived a, Derived b) { return Derived(float(a) / float(b)); }
  TSR_HOST_DEVICE friend Derived operator-(Derived a) { return Derived(-float(a)); }
  TSR_HOST_DEVICE friend bool operator==(Derived a, Derived b) { return float(a) == float(b); }
  TSR_HOST_DEVICE friend bool operator<(Derived a, Derived b) { return float(a) < float(b); }
  TSR_HOST_DEVICE friend bool operator<=(Derived a, Derived b) { return float(a) <= float(b); }
  TSR_HOST_DEVICE friend bool operator>(Derived a, Derived b) { return float(a) > float(b); }
  TSR_HOST_DEVICE friend bool operator>=(Derived a, Derived b) { return float(a) >= float(b); }
  friend std::ostream& operator<<(std::ostream& os, Derived a) { return os << float(a); }
};

}  // namespace detail

// IEEE 754 binary16.
struct half : detail::Float16Base<half> {
  uint16_t bits = 0;
  half() = default;
  TSR_HOST_DEVICE half(float f) : bits(detail::half_from_float(f)) {}  // NOLINT: implicit like c10::Half
  TSR_HOST_DEVICE operator float() const { return detail::half_to_float(bits); }
  TSR_HOST_DEVICE static half from_bits(uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }
};

// Brain floating point: float's exponent, 8 bits of mantissa.
struct bfloat16 : detail::Float16Base<bfloat16> {
  uint16_t bits = 0;
  bfloat16() = default;
  TSR_HOST_DEVICE bfloat16(float f) : bits(detail::bf16_from_float(f)) {}  // NOLINT: implicit like c10::BFloat16
  TSR_HOST_DEVICE operator float() const { return detail::bf16_to_float(bits); }
  TSR_HOST_DEVICE static bfloat16 from_bits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

}  // namespace tsr
