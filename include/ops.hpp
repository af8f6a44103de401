// The elementwise ops: one stateless (or small, trivially copyable) struct
// per op, with a name, a `simd` capability flag and one operator() that
// serves both scalars and xsimd batches (math functions are found by ADL:
// std:: for scalars, xsimd:: for batches). Under nvcc the scalar forms are
// __host__ __device__ through TSR_HOST_DEVICE. A later derivative rule is one
// more member of the same struct.
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "detail/float_exp.hpp"
#include "detail/float_tanh.hpp"
#include "detail/float_trig.hpp"
#include "detail/lanes_by_scalar.hpp"
#include "expr.hpp"

namespace tsr::ops {
namespace m {
// Scalar helpers whose batch forms xsimd provides under the same names.
template <class T>
TSR_HOST_DEVICE inline T select(bool c, T a, T b) { return c ? a : b; }
using std::abs, std::sqrt, std::exp, std::exp2, std::expm1, std::log, std::log2, std::log10, std::log1p;
using std::sin, std::cos, std::tan, std::asin, std::acos, std::atan, std::atan2, std::sinh, std::cosh;
using std::tanh, std::asinh, std::acosh, std::atanh, std::erf, std::erfc, std::floor, std::ceil;
using std::trunc, std::nearbyint, std::fmod, std::pow;
using xsimd::select;
}  // namespace m

using detail::BoolOp;
using detail::FloatOp;
using detail::SameTypeOp;

// NaN tests: `x != x` for scalars; xsimd's batch != is an ordered compare
// (false for NaN), so batches use xsimd::isnan.
template <class V>
TSR_HOST_DEVICE inline bool is_nan(const V& x) { return x != x; }
template <class T, class A>
inline auto is_nan(const xsimd::batch<T, A>& x) { return xsimd::isnan(x); }

namespace m {
// The element type of a scalar or a batch.
template <class V>
struct lane_type {
  using type = V;
};
template <class T, class A>
struct lane_type<xsimd::batch<T, A>> {
  using type = T;
};
template <class V>
using lane_t = typename lane_type<V>::type;

// Applies a scalar function lane by lane: the batch path of ops whose xsimd
// form is inaccurate on part of the domain.
template <class T, class A, class F>
inline xsimd::batch<T, A> per_lane(const xsimd::batch<T, A>& x, F&& f) {
  alignas(64) T v[xsimd::batch<T, A>::size];
  x.store_aligned(v);
  for (auto& e : v) e = f(e);
  return xsimd::batch<T, A>::load_aligned(v);
}
template <class T, class F>
TSR_HOST_DEVICE inline T per_lane(T x, F&& f) { return f(x); }
template <class T, class A, class F>
inline xsimd::batch<T, A> per_lane2(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& y, F&& f) {
  alignas(64) T u[xsimd::batch<T, A>::size], w[xsimd::batch<T, A>::size];
  x.store_aligned(u);
  y.store_aligned(w);
  for (std::size_t i = 0; i < xsimd::batch<T, A>::size; ++i) u[i] = f(u[i], w[i]);
  return xsimd::batch<T, A>::load_aligned(u);
}
template <class T, class F>
TSR_HOST_DEVICE inline T per_lane2(T x, T y, F&& f) { return f(x, y); }
template <class T, class A, class F>
inline xsimd::batch<T, A> per_lane3(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& y,
                                    const xsimd::batch<T, A>& z, F&& f) {
  alignas(64) T u[xsimd::batch<T, A>::size], v[xsimd::batch<T, A>::size], w[xsimd::batch<T, A>::size];
  x.store_aligned(u);
  y.store_aligned(v);
  z.store_aligned(w);
  for (std::size_t i = 0; i < xsimd::batch<T, A>::size; ++i) u[i] = f(u[i], v[i], w[i]);
  return xsimd::batch<T, A>::load_aligned(u);
}
template <class T, class F>
TSR_HOST_DEVICE inline T per_lane3(T x, T y, T z, F&& f) { return f(x, y, z); }

// r, with the lanes marked in `by_std` computed by the C library instead,
// one by one: the lanes where an xsimd form is wrong or would depend on its
// neighbours (see log_like, trig_by_lane and the exp family below).
template <class T, class A, class F>
inline xsimd::batch<T, A> lanes_from_std(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& r,
                                         const xsimd::batch_bool<T, A>& by_std, F&& scalar_form) {
  if (xsimd::any(by_std)) [[unlikely]] return detail::replace_lanes(x, r, by_std, scalar_form);
  return r;
}
// xsimd's exp and exp2 flush results below
// the smallest normal number to zero: lanes below these arguments, whose
// result is subnormal, go through the C library (float exp has its own
// range, detail/float_exp.hpp).
inline constexpr double kExpNormalMin = -708.3;
template <class T>
inline constexpr T kExp2NormalMin = std::is_same_v<T, float> ? T(-126) : T(-1022);

// fmod, exact: xsimd's a - b * trunc(a / b) overflows and mishandles
// infinite divisors, so lanes go through std::fmod.
template <class V>
TSR_HOST_DEVICE inline V fmod_(V a, V b) {
  return per_lane2(a, b, [](auto u, auto w) { return decltype(u)(std::fmod(u, w)); });
}

// xsimd's logarithms mishandle subnormal doubles: those lanes go through std::.
template <class T, class A, class G, class F>
inline xsimd::batch<T, A> log_like(const xsimd::batch<T, A>& x, G&& simd_form, F&& scalar_form) {
  return lanes_from_std(x, simd_form(x), (x < std::numeric_limits<T>::min()) & (x > T(0)), scalar_form);
}

// xsimd's sin, cos and tan choose one argument reduction for the whole
// batch from its largest lane, so a lane's result would depend on its
// neighbours (and a value would differ between a vector body and a tail).
// Up to 20 pi its reductions agree lane by lane; lanes beyond (and inf/nan)
// go through the C library in double, one by one.
template <class T, class A, class G, class F>
inline xsimd::batch<T, A> trig_by_lane(const xsimd::batch<T, A>& x, G&& simd_form, F&& scalar_form) {
  using B = xsimd::batch<T, A>;
  const auto far = !(xsimd::abs(x) <= B(T(62.83185307179586)));
  if (!xsimd::any(far)) [[likely]] return simd_form(x);
  return lanes_from_std(x, simd_form(xsimd::select(far, B(T(0)), x)), far, scalar_form);
}
template <class T, class G, class F>
TSR_HOST_DEVICE inline T log_like(T x, G&&, F&& scalar_form) { return scalar_form(x); }

// x clamped to [lo, hi] by selects, which let NaN through (xsimd's min and
// max would turn it into a bound).
template <class V>
TSR_HOST_DEVICE inline V clamp_keep_nan(V x, V lo, V hi) {
  return select(x < lo, lo, select(x > hi, hi, x));
}

// f on the lanes of a float batch, computed in double batches of the same
// architecture (twice as many of half the width).
template <class A, class F>
inline xsimd::batch<float, A> in_double(const xsimd::batch<float, A>& x, F&& f) {
  using BF = xsimd::batch<float, A>;
  using BD = xsimd::batch<double, A>;
  alignas(64) float v[BF::size];
  alignas(64) double d[BF::size];
  x.store_aligned(v);
  for (std::size_t i = 0; i < BF::size; ++i) d[i] = v[i];
  for (std::size_t i = 0; i < BF::size; i += BD::size) f(BD::load_aligned(d + i)).store_aligned(d + i);
  for (std::size_t i = 0; i < BF::size; ++i) v[i] = static_cast<float>(d[i]);
  return BF::load_aligned(v);
}
template <class A, class F>
inline xsimd::batch<float, A> in_double(const xsimd::batch<float, A>& x, const xsimd::batch<float, A>& y, F&& f) {
  using BF = xsimd::batch<float, A>;
  using BD = xsimd::batch<double, A>;
  alignas(64) float u[BF::size], w[BF::size];
  alignas(64) double d[BF::size], e[BF::size];
  x.store_aligned(u);
  y.store_aligned(w);
  for (std::size_t i = 0; i < BF::size; ++i) d[i] = u[i], e[i] = w[i];
  for (std::size_t i = 0; i < BF::size; i += BD::size)
    f(BD::load_aligned(d + i), BD::load_aligned(e + i)).store_aligned(d + i);
  for (std::size_t i = 0; i < BF::size; ++i) u[i] = static_cast<float>(d[i]);
  return BF::load_aligned(u);
}

// xsimd's double erf/erfc, clamped where they saturate: within 1e-8
// relative, ample for a float result (clamp_keep_nan lets NaN through).
template <class B>
inline B erf_for_float(B x) {
  return xsimd::erf(clamp_keep_nan(x, B(-6.0), B(6.0)));
}
template <class B>
inline B erfc_for_float(B x) {
  return xsimd::erfc(clamp_keep_nan(x, B(-10.0), B(27.0)));
}
// erf/erfc: xsimd's float erf is accurate once the argument is clamped where
// the result saturates (it returns NaN for huge arguments); its double forms
// lose up to 1e-8 relative in the tails, so doubles use std:: per lane.
template <class V>
TSR_HOST_DEVICE inline V erf_(V x) {
  if constexpr (std::is_same_v<lane_t<V>, double>) {
    return per_lane(x, [](auto v) { return decltype(v)(std::erf(v)); });
  } else {
    using std::erf;
    return erf(clamp_keep_nan(x, V(-6), V(6)));
  }
}
template <class V>
TSR_HOST_DEVICE inline V erfc_(V x) {
  if constexpr (std::is_same_v<lane_t<V>, double>) {
    return per_lane(x, [](auto v) { return decltype(v)(std::erfc(v)); });
  } else {
    // xsimd's float erfc is 5 to 70 ulps off (and flushes results below
    // 1.2e-38 to 0): float batches compute in double batches.
    if constexpr (std::is_arithmetic_v<V>) return std::erfc(x);
    else return in_double(x, [](auto d) { return erfc_for_float(d); });
  }
}

// Float batches: sin, cos, exp and tanh inlined for the common range
// (detail/float_trig.hpp, detail/float_exp.hpp, detail/float_tanh.hpp);
// more specialized than xsimd's templates, so overload resolution picks them.
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> sin(const xsimd::batch<float, A>& x) { return detail::fast_sin(x); }
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> cos(const xsimd::batch<float, A>& x) { return detail::fast_cos(x); }
// Double exp, and exp2: xsimd's, with the C library where the result leaves
// the normal range.
template <class A>
inline xsimd::batch<double, A> exp(const xsimd::batch<double, A>& x) {
  return lanes_from_std(x, xsimd::exp(x), x < kExpNormalMin, [](double v) { return std::exp(v); });
}
template <class A>
inline xsimd::batch<float, A> exp2(const xsimd::batch<float, A>& x) {
  return lanes_from_std(x, xsimd::exp2(x), x < kExp2NormalMin<float>, [](float v) { return std::exp2(v); });
}
template <class A>
inline xsimd::batch<double, A> exp2(const xsimd::batch<double, A>& x) {
  return lanes_from_std(x, xsimd::exp2(x), x < kExp2NormalMin<double>, [](double v) { return std::exp2(v); });
}

// Double sin and cos, and tan: xsimd's, lane by lane beyond 20 pi (trig_by_lane).
template <class A>
inline xsimd::batch<double, A> sin(const xsimd::batch<double, A>& x) {
  return trig_by_lane(x, [](const auto& v) { return xsimd::sin(v); }, [](double v) { return std::sin(v); });
}
template <class A>
inline xsimd::batch<double, A> cos(const xsimd::batch<double, A>& x) {
  return trig_by_lane(x, [](const auto& v) { return xsimd::cos(v); }, [](double v) { return std::cos(v); });
}
template <class A>
inline xsimd::batch<double, A> tan(const xsimd::batch<double, A>& x) {
  return trig_by_lane(x, [](const auto& v) { return xsimd::tan(v); }, [](double v) { return std::tan(v); });
}
template <class A>
inline xsimd::batch<float, A> tan(const xsimd::batch<float, A>& x) {
  return trig_by_lane(x, [](const auto& v) { return xsimd::tan(v); },
                      [](float v) { return static_cast<float>(std::tan(static_cast<double>(v))); });
}
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> exp(const xsimd::batch<float, A>& x) { return detail::fast_exp(x); }
template <class A>
[[gnu::always_inline]] inline xsimd::batch<float, A> tanh(const xsimd::batch<float, A>& x) { return detail::fast_tanh(x); }
}  // namespace m

// ----- arithmetic ------------------------------------------------------------
struct Add : SameTypeOp {
  static constexpr const char* name = "add";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const { return a + b; }
};
struct Sub : SameTypeOp {
  static constexpr const char* name = "sub";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const { return a - b; }
};
struct Mul : SameTypeOp {
  static constexpr const char* name = "mul";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    if constexpr (std::is_same_v<V, bool>) return a && b;
    else return a * b;
  }
};
// True division: integers divide as floats.
struct Div : FloatOp {
  static constexpr const char* name = "div";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const { return a / b; }
};
// Python's %: the result takes the divisor's sign. Integer x % 0 gives 0
// (PyTorch raises ZeroDivisionError; an evaluator may not throw).
struct Remainder : SameTypeOp {
  static constexpr const char* name = "remainder";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    static_assert(!std::is_same_v<V, bool>, "remainder: bool tensors are not supported, as in PyTorch");
    if constexpr (std::is_integral_v<V>) {
      if (b == 0) return V(0);
      if (b == -1) return V(0);  // avoids INT_MIN % -1 overflow
      V r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? V(r + b) : r;
    } else {
      using namespace m;
      V r = fmod_(a, b);
      // r and b of opposite signs, from comparisons joined by & and | only:
      // xsimd's != and ^ between masks are wrong on some targets (!= on SSE2
      // compares double masks as doubles, an all-ones mask being a NaN).
      const auto opposite = ((b < V(0)) & (r > V(0))) | ((b > V(0)) & (r < V(0)));
      return select(opposite, r + b, r);
    }
  }
};
// C's fmod: the result takes the dividend's sign.
struct Fmod : SameTypeOp {
  static constexpr const char* name = "fmod";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    static_assert(!std::is_same_v<V, bool>, "fmod: bool tensors are not supported, as in PyTorch");
    if constexpr (std::is_integral_v<V>) {
      return (b == 0 || b == -1) ? V(0) : V(a % b);
    } else {
      return m::fmod_(a, b);
    }
  }
};
// Division rounded toward negative infinity (PyTorch 1.13's floor_divide).
struct FloorDivide : SameTypeOp {
  static constexpr const char* name = "floor_divide";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    static_assert(!std::is_same_v<V, bool>, "floor_divide: bool tensors are not supported, as in PyTorch");
    if constexpr (std::is_integral_v<V>) {
      if (b == 0) return V(0);
      if (b == -1) return V(V(0) - a);
      V q = a / b, r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? V(q - 1) : q;
    } else {
      if (b == V(0)) return a / b;
      V mod = std::fmod(a, b);
      V div = (a - mod) / b;
      if (mod != V(0) && ((b < V(0)) != (mod < V(0)))) div -= V(1);
      if (div == V(0)) return std::copysign(V(0), a / b);
      V fl = std::floor(div);
      return div - fl > V(0.5) ? fl + V(1) : fl;
    }
  }
};
struct Neg : SameTypeOp {
  static constexpr const char* name = "neg";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a) const { return -a; }
};
struct Abs : SameTypeOp {
  static constexpr const char* name = "abs";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a) const {
    static_assert(!std::is_same_v<V, bool>, "abs: bool tensors are not supported, as in PyTorch");
    using namespace m;
    return abs(a);
  }
};
struct Sign : SameTypeOp {
  static constexpr const char* name = "sign";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a) const {
    if constexpr (std::is_same_v<V, bool>) return a;
    else {
      using namespace m;
      return select(a > V(0), V(1), select(a < V(0), V(-1), V(0)));
    }
  }
};
struct Square : SameTypeOp {
  static constexpr const char* name = "square";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a) const { return a * a; }
};
struct Reciprocal : FloatOp {
  static constexpr const char* name = "reciprocal";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a) const { return V(1) / a; }
};

// ----- math functions ---------------------------------------------------------
// Each computes in floating point (integers promote to float).
#define TSR_FLOAT_FN(Name, str, expr)                                         \
  struct Name : FloatOp {                                                     \
    static constexpr const char* name = str;                                  \
    static constexpr bool simd = true;                                        \
    template <class V> [[gnu::always_inline]] TSR_HOST_DEVICE V operator()(V x) const {\
      using namespace m;                                                      \
      return expr;                                                            \
    }                                                                         \
  };
// (One macro for ~30 one-line structs keeps the table readable; each line is
// the whole op.)
TSR_FLOAT_FN(Exp, "exp", exp(x))
TSR_FLOAT_FN(Exp2, "exp2", exp2(x))
TSR_FLOAT_FN(Expm1, "expm1", expm1(x))
TSR_FLOAT_FN(Log, "log", log_like(x, [](auto v) { return log(v); }, [](auto v) { return std::log(v); }))
TSR_FLOAT_FN(Log2, "log2", log_like(x, [](auto v) { return log2(v); }, [](auto v) { return std::log2(v); }))
TSR_FLOAT_FN(Log10, "log10", log_like(x, [](auto v) { return log10(v); }, [](auto v) { return std::log10(v); }))
TSR_FLOAT_FN(Log1p, "log1p", log1p(x))
TSR_FLOAT_FN(Sin, "sin", sin(x))
TSR_FLOAT_FN(Cos, "cos", cos(x))
TSR_FLOAT_FN(Tan, "tan", tan(x))
TSR_FLOAT_FN(Asin, "asin", asin(x))
TSR_FLOAT_FN(Acos, "acos", acos(x))
TSR_FLOAT_FN(Atan, "atan", atan(x))
TSR_FLOAT_FN(Sinh, "sinh", sinh(x))
TSR_FLOAT_FN(Cosh, "cosh", cosh(x))
TSR_FLOAT_FN(Tanh, "tanh", tanh(x))
TSR_FLOAT_FN(Asinh, "asinh", asinh(x))
TSR_FLOAT_FN(Acosh, "acosh", select(x < V(1), V(NAN), acosh(x)))
TSR_FLOAT_FN(Atanh, "atanh", atanh(x))
TSR_FLOAT_FN(Erf, "erf", erf_(x))
TSR_FLOAT_FN(Erfc, "erfc", erfc_(x))
TSR_FLOAT_FN(Sigmoid, "sigmoid", V(1) / (V(1) + exp(-x)))
TSR_FLOAT_FN(Silu, "silu", x / (V(1) + exp(-x)))
// softplus with beta = 1, threshold = 20, as torch.nn.functional.softplus.
TSR_FLOAT_FN(Softplus, "softplus", select(x > V(20), x, log1p(exp(x))))
#undef TSR_FLOAT_FN
// Correctly rounded in both forms.
struct Sqrt : FloatOp {
  static constexpr const char* name = "sqrt";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    using namespace m;
    return sqrt(x);
  }
};
struct Rsqrt : FloatOp {
  static constexpr const char* name = "rsqrt";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    using namespace m;
    return V(1) / sqrt(x);
  }
};

// gelu, exact or with the tanh approximation. Written without PyTorch's
// 1 + erf(...) and 1 + tanh(...), which cancel catastrophically for negative
// x: x/2 * erfc(-x/sqrt 2) and x * sigmoid(2y) are the same functions.
struct Gelu : FloatOp {
  static constexpr const char* name = "gelu";
  static constexpr bool simd = true;
  bool approximate = false;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    using namespace m;
    if (approximate) {
      const V y = V(0.79788456080286535588) * (x + V(0.044715) * x * x * x);
      return select(is_nan(x), x, x / (V(1) + exp(V(-2) * y)));
    }
    return x * V(0.5) * erfc_(x * V(-0.70710678118654752440));
  }
};

struct Atan2 : FloatOp {
  static constexpr const char* name = "atan2";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    // xsimd's atan2 gives NaN at (0, 0): std:: lane by lane.
    return m::per_lane2(a, b, [](auto u, auto w) { return decltype(u)(std::atan2(u, w)); });
  }
};
// sqrt(a^2 + b^2) without the overflow and underflow of the squares.
struct Hypot : FloatOp {
  static constexpr const char* name = "hypot";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    return m::per_lane2(a, b, [](auto u, auto w) { return decltype(u)(std::hypot(u, w)); });
  }
};

// ----- rounding (identity on integers) -----------------------------------------
#define TSR_ROUND_FN(Name, str, expr)                                         \
  struct Name : SameTypeOp {                                                  \
    static constexpr const char* name = str;                                  \
    static constexpr bool simd = true;                                        \
    static constexpr bool scalar_is_lane = true;                              \
    template <class V> TSR_HOST_DEVICE V operator()(V x) const {              \
      static_assert(!std::is_same_v<V, bool>,                                 \
                    str ": bool tensors are not supported, as in PyTorch");   \
      if constexpr (std::is_integral_v<V>) return x;                          \
      else {                                                                  \
        using namespace m;                                                    \
        return expr;                                                          \
      }                                                                       \
    }                                                                         \
  };
TSR_ROUND_FN(Floor, "floor", floor(x))
TSR_ROUND_FN(Ceil, "ceil", ceil(x))
TSR_ROUND_FN(Round, "round", nearbyint(x))  // half to even
TSR_ROUND_FN(Trunc, "trunc", trunc(x))
#undef TSR_ROUND_FN

struct Frac : SameTypeOp {
  static constexpr const char* name = "frac";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    static_assert(!std::is_integral_v<V>, "frac expects a floating-point tensor (PyTorch rejects integer tensors too)");
    using namespace m;
    return x - trunc(x);
  }
};

// ----- activations, extrema, clamping -----------------------------------------
struct Relu : SameTypeOp {
  static constexpr const char* name = "relu";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    static_assert(!std::is_same_v<V, bool>, "Boolean inputs not supported for relu");
    using namespace m;
    return select(x > V(0), x, select(is_nan(x), x, V(0)));
  }
};
// maximum/minimum propagate NaN from either side.
struct Maximum : SameTypeOp {
  static constexpr const char* name = "maximum";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    using namespace m;
    if constexpr (std::is_integral_v<V>) return a > b ? a : b;
    else return select(is_nan(a) | is_nan(b), a + b, select(a > b, a, b));
  }
};
struct Minimum : SameTypeOp {
  static constexpr const char* name = "minimum";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    using namespace m;
    if constexpr (std::is_integral_v<V>) return a < b ? a : b;
    else return select(is_nan(a) | is_nan(b), a + b, select(a < b, a, b));
  }
};
// fmax/fmin: NaN loses (the other operand is the result; NaN only when both
// are), ties give the first operand, as PyTorch.
struct Fmax : SameTypeOp {
  static constexpr const char* name = "fmax";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    using namespace m;
    if constexpr (std::is_integral_v<V>) return a < b ? b : a;
    else return select(is_nan(b) | (a >= b), a, b);
  }
};
struct Fmin : SameTypeOp {
  static constexpr const char* name = "fmin";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    using namespace m;
    if constexpr (std::is_integral_v<V>) return b < a ? b : a;
    else return select(is_nan(b) | (a <= b), a, b);
  }
};
// threshold(x, threshold, value): value where x <= threshold, else x (NaN
// stays NaN), as torch.nn.functional.threshold.
struct Threshold : SameTypeOp {
  static constexpr const char* name = "threshold";
  static constexpr bool simd = false;
  double threshold, value;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    static_assert(!std::is_same_v<V, bool>, "threshold: bool tensors are not supported, as in PyTorch");
    return x <= V(threshold) ? V(value) : x;
  }
};
// Operands of clamp and lerp compute in their common type.
struct Promote3 {
  template <int I, class A, class B, class C>
  using arg_t = promote_t<promote_t<A, B>, C>;
};
// clamp(x, lo, hi) = min(max(x, lo), hi), hi where lo > hi; a NaN in x,
// lo or hi propagates, as PyTorch's clamp with both bounds.
struct Clamp : Promote3 {
  static constexpr const char* name = "clamp";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V x, V lo, V hi) const {
    using namespace m;
    if constexpr (std::is_integral_v<V>) {
      V t = x < lo ? lo : x;
      return t > hi ? hi : t;
    } else {
      const V t = select(x < lo, lo, x);
      return select(is_nan(lo) | is_nan(hi), lo + hi, select(t > hi, hi, t));
    }
  }
};
// hardtanh(x, lo, hi) is clamp(x, lo, hi) (hi where lo > hi; NaN x stays
// NaN); an op of its own for its gradient, which is 0 on the bounds, where
// clamp's is not.
struct Hardtanh : SameTypeOp {
  static constexpr const char* name = "hardtanh";
  static constexpr bool simd = false;
  double lo, hi;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    static_assert(!std::is_same_v<V, bool>, "Bool inputs not supported for hardtanh");
    return Clamp{}(x, V(lo), V(hi));
  }
};
// Its operands are floating and of one type (tsr::lerp refuses others).
// input + value t1 t2. Floating types take PyTorch 1.13's multiply-add (its
// CPU kernel is contracted into one): fma(value t1, t2, input), so results
// match it bit for bit and a product beyond the type's range that input
// brings back stays finite. An integer computation truncates value.
struct Addcmul : Promote3 {
  static constexpr const char* name = "addcmul";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  double value;
  template <class V> TSR_HOST_DEVICE V operator()(V input, V t1, V t2) const {
    using L = m::lane_t<V>;
    if constexpr (std::is_integral_v<L>) {
      return input + V(L(static_cast<int64_t>(value))) * t1 * t2;
    } else {
      const auto fma = [](auto x, auto y, auto z) { return decltype(x)(std::fma(x, y, z)); };
      return m::per_lane3(V(L(value)) * t1, t2, input, fma);
    }
  }
};
struct Lerp : Promote3 {
  static constexpr const char* name = "lerp";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  // PyTorch 1.13's formula, with its fused multiply-adds, so results match it
  // bit for bit whatever the compiler's contraction setting: a + w d for
  // w < 0.5 (negative weights included: lerp(a, -inf, -inf) is +inf),
  // b - d (1 - w) otherwise.
  // (xsimd 8's AVX-512 fma is not fused, hence std::fma lane by lane.)
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b, V w) const {
    using namespace m;
    const auto fma = [](auto x, auto y, auto z) { return decltype(x)(std::fma(x, y, z)); };
    const V d = b - a;
    return select(w < V(0.5), per_lane3(w, d, a, fma), per_lane3(-d, V(1) - w, b, fma));
  }
};
struct Where {
  template <int I, class C, class A, class B>
  using arg_t = std::conditional_t<I == 0, bool, promote_t<A, B>>;
  static constexpr const char* name = "where";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE V operator()(bool c, V a, V b) const { return c ? a : b; }
};

// pow with a tensor exponent. Integer powers by squaring; a negative integer
// exponent gives 0 except for bases 1 and -1, as PyTorch's integer pow.
struct Pow : SameTypeOp {
  static constexpr const char* name = "pow";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {
    static_assert(!std::is_same_v<V, bool>, "pow: bool tensors are not supported, as in PyTorch");
    if constexpr (std::is_integral_v<V>) {
      if (b < 0) return a == 1 ? V(1) : a == -1 ? V((b & 1) ? -1 : 1) : V(0);
      V r = 1;
      using U = std::make_unsigned_t<V>;  // wrap-around like PyTorch, without signed overflow
      U base = U(a), acc = U(r);
      for (V e = b; e; e >>= 1, base *= base)
        if (e & 1) acc *= base;
      return V(acc);
    } else {
      return m::per_lane2(a, b, [](auto u, auto w) { return decltype(u)(std::pow(u, w)); });
    }
  }
};
// pow with a scalar exponent: the exponents PyTorch special-cases are
// computed the way it computes them (x*x for 2, sqrt for 0.5, ...).
struct PowScalar : FloatOp {
  static constexpr const char* name = "pow";
  static constexpr bool simd = true;
  static constexpr bool scalar_is_lane = true;
  double e;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    using namespace m;
    if (e == 2) return x * x;
    if (e == 3) return x * x * x;
    if (e == 0.5) return sqrt(x);
    if (e == -0.5) return V(1) / sqrt(x);
    if (e == -1) return V(1) / x;
    if (e == -2) return V(1) / (x * x);
    // Any other exponent: std::pow in double, lane by lane (xsimd's pow
    // mishandles negative infinite bases).
    const double ex = e;
    return per_lane(x, [ex](auto v) { return decltype(v)(std::pow(double(v), ex)); });
  }
};
// pow(int tensor, int scalar) stays integral.
struct PowIntScalar : SameTypeOp {
  static constexpr const char* name = "pow";
  static constexpr bool simd = false;
  int64_t e;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const { return Pow{}(x, V(e)); }
};

struct NanToNum : SameTypeOp {
  static constexpr const char* name = "nan_to_num";
  static constexpr bool simd = false;
  double nan, posinf, neginf;
  template <class V> TSR_HOST_DEVICE V operator()(V x) const {
    if constexpr (std::is_integral_v<V>) return x;
    else return x != x ? V(nan) : x == std::numeric_limits<V>::infinity() ? V(posinf)
                                : x == -std::numeric_limits<V>::infinity() ? V(neginf) : x;
  }
};

// ----- predicates and comparisons (results are bool) -------------------------------
struct IsNan : SameTypeOp {
  static constexpr const char* name = "isnan";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE bool operator()(V x) const { return x != x; }
};
struct IsInf : SameTypeOp {
  static constexpr const char* name = "isinf";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE bool operator()(V x) const {
    if constexpr (std::is_integral_v<V>) return false;
    else return x == std::numeric_limits<V>::infinity() || x == -std::numeric_limits<V>::infinity();
  }
};
// Whether the sign bit is set: true for -0.0 and a negative NaN too.
struct Signbit : SameTypeOp {
  static constexpr const char* name = "signbit";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE bool operator()(V x) const {
    if constexpr (std::is_floating_point_v<V>) return std::signbit(x);
    else if constexpr (std::is_signed_v<V>) return x < 0;
    else return false;
  }
};
struct IsFinite : SameTypeOp {
  static constexpr const char* name = "isfinite";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE bool operator()(V x) const {
    if constexpr (std::is_integral_v<V>) return true;
    else return x == x && x != std::numeric_limits<V>::infinity() && x != -std::numeric_limits<V>::infinity();
  }
};

#define TSR_COMPARE(Name, str, op)                                                      \
  struct Name : SameTypeOp {                                                            \
    static constexpr const char* name = str;                                            \
    static constexpr bool simd = false;                                                 \
    template <class V> TSR_HOST_DEVICE bool operator()(V a, V b) const { return a op b; } \
  };
TSR_COMPARE(Eq, "eq", ==)
TSR_COMPARE(Ne, "ne", !=)
TSR_COMPARE(Lt, "lt", <)
TSR_COMPARE(Le, "le", <=)
TSR_COMPARE(Gt, "gt", >)
TSR_COMPARE(Ge, "ge", >=)
#undef TSR_COMPARE

struct LogicalAnd : BoolOp {
  static constexpr const char* name = "logical_and";
  static constexpr bool simd = false;
  TSR_HOST_DEVICE bool operator()(bool a, bool b) const { return a && b; }
};
struct LogicalOr : BoolOp {
  static constexpr const char* name = "logical_or";
  static constexpr bool simd = false;
  TSR_HOST_DEVICE bool operator()(bool a, bool b) const { return a || b; }
};
struct LogicalNot : BoolOp {
  static constexpr const char* name = "logical_not";
  static constexpr bool simd = false;
  TSR_HOST_DEVICE bool operator()(bool a) const { return !a; }
};

// Bitwise ops: integers and bool only.
template <class V>
inline constexpr bool is_bitwise_v = std::is_integral_v<V>;
#define TSR_BITWISE(Name, str, expr)                                                        \
  struct Name : SameTypeOp {                                                                \
    static constexpr const char* name = str;                                                \
    static constexpr bool simd = false;                                                     \
    template <class V> TSR_HOST_DEVICE V operator()(V a, V b) const {                       \
      static_assert(is_bitwise_v<V>, "bitwise ops are only supported for integer and bool tensors"); \
      return V(expr);                                                                       \
    }                                                                                       \
  };
TSR_BITWISE(BitwiseAnd, "bitwise_and", a & b)
TSR_BITWISE(BitwiseOr, "bitwise_or", a | b)
TSR_BITWISE(BitwiseXor, "bitwise_xor", a ^ b)
#undef TSR_BITWISE
struct BitwiseNot : SameTypeOp {
  static constexpr const char* name = "bitwise_not";
  static constexpr bool simd = false;
  template <class V> TSR_HOST_DEVICE V operator()(V a) const {
    static_assert(is_bitwise_v<V>, "bitwise ops are only supported for integer and bool tensors");
    if constexpr (std::is_same_v<V, bool>) return !a;
    else return V(~a);
  }
};

}  // namespace tsr::ops
