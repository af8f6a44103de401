// Walks every float in [0, kFastTrigBound] through tessera's inlined float
// sin and cos (include/detail/float_trig.hpp) and reports the worst
// distance, in ulps, from std::sin/std::cos evaluated in double and rounded
// to float. (Beyond the bound the batch is xsimd's, whose float sin/cos are
// 2 ulps off for a few hundred values in (128, 256].)
// Not part of the build; about 15 seconds per function:
//   g++ -std=c++20 -O2 -march=native -Iinclude tools/check_float_trig.cpp -o /tmp/check_float_trig
//   /tmp/check_float_trig
// Last run (2026-11-23, AVX2): sin and cos both within 1 ulp; with the bound
// at 8192 instead of 128, some 4,300 values were 2 ulps off.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <detail/float_trig.hpp>

namespace {
int32_t ordered(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i < 0 ? INT32_MIN - i : i;  // adjacent floats map to adjacent integers
}

template <class Fast, class Ref>
void check(const char* name, Fast fast, Ref ref) {
  using B = xsimd::batch<float>;
  constexpr std::size_t W = B::size;
  const float bound = tsr::detail::kFastTrigBound;
  uint32_t top;
  std::memcpy(&top, &bound, sizeof top);
  alignas(64) float in[W], out[W];
  long long worst = 0, over_one = 0;
  float worst_x = 0;
  for (uint32_t u = 0; u + W - 1 <= top; u += W) {
    for (std::size_t k = 0; k < W; ++k) {
      const uint32_t v = u + static_cast<uint32_t>(k);
      std::memcpy(&in[k], &v, sizeof v);
    }
    fast(B::load_aligned(in)).store_aligned(out);
    for (std::size_t k = 0; k < W; ++k) {
      const long long d = std::llabs(static_cast<long long>(ordered(out[k])) - ordered(static_cast<float>(ref(in[k]))));
      if (d > worst) worst = d, worst_x = in[k];
      over_one += d > 1;
    }
  }
  std::printf("%s on [0, %g]: worst %lld ulp (at %a), %lld values over 1 ulp\n", name, bound, worst, worst_x, over_one);
}
}  // namespace

int main() {
  check("sin", [](auto x) { return tsr::detail::fast_sin(x); }, [](float x) { return std::sin(double(x)); });
  check("cos", [](auto x) { return tsr::detail::fast_cos(x); }, [](float x) { return std::cos(double(x)); });
}
