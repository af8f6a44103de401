// Window functions of signal processing, as PyTorch's factories:
// hann_window, hamming_window, bartlett_window, blackman_window and
// kaiser_window. Each is computed in T with PyTorch 1.13's sequence of
// operations (an arange scaled, then cos or the triangle), so float windows
// round as PyTorch's do. periodic = true gives the first N of N + 1 points
// (for spectral analysis); false, the symmetric window.
#pragma once
#include <cstdint>
#include <numbers>

#include "factories.hpp"
#include "math.hpp"
#include "special.hpp"

namespace tsr {
namespace detail {
// The window's size checks; returns the number of points to compute, or 0
// where the window is empty or a single 1.
template <class T>
int64_t window_points(const char* fn, int64_t window_length, bool periodic) {
  static_assert(is_floating_v<T>, "window functions expect floating point dtypes, as in PyTorch");
  check(window_length >= 0, fn, " requires non-negative window_length, got window_length=", window_length);
  if (window_length <= 1) return 0;
  return periodic ? window_length + 1 : window_length;
}
// The empty window or the single 1 of a window of length 0 or 1.
template <class T>
Tensor<T> trivial_window(int64_t window_length) { return window_length == 0 ? empty<T>({0}) : ones<T>({1}); }
// The first window_length of the n points computed.
template <class T>
Tensor<T> window_of(const Tensor<T>& points, int64_t window_length) {
  return points.size(0) == window_length ? points : points.narrow(0, 0, window_length).contiguous();
}
}  // namespace detail

// alpha - beta cos(2 pi n / (N - 1)).
template <class T = float>
Tensor<T> hamming_window(int64_t window_length, bool periodic = true, double alpha = 0.54, double beta = 0.46) {
  const int64_t n = detail::window_points<T>("hamming_window", window_length, periodic);
  if (n == 0) return detail::trivial_window<T>(window_length);
  const Tensor<T> w = cos(arange<T>(T(n)) * T(2 * std::numbers::pi / double(n - 1))) * T(-beta) + T(alpha);
  return detail::window_of(w, window_length);
}
// The Hamming window with alpha = beta = 1/2.
template <class T = float>
Tensor<T> hann_window(int64_t window_length, bool periodic = true) {
  detail::window_points<T>("hann_window", window_length, periodic);
  return hamming_window<T>(window_length, periodic, 0.5, 0.5);
}
// The triangle 2n / (N - 1), reflected as 2 - 2n / (N - 1) past its middle.
template <class T = float>
Tensor<T> bartlett_window(int64_t window_length, bool periodic = true) {
  const int64_t n = detail::window_points<T>("bartlett_window", window_length, periodic);
  if (n == 0) return detail::trivial_window<T>(window_length);
  Tensor<T> w = arange<T>(T(n)) * T(2.0 / double(n - 1));
  const int64_t first_half = ((n - 1) >> 1) + 1;
  Tensor<T> second_half = w.narrow(0, first_half, n - first_half);
  second_half.copy_(second_half * T(-1) + T(2));
  return detail::window_of(w, window_length);
}
// 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1)).
template <class T = float>
Tensor<T> blackman_window(int64_t window_length, bool periodic = true) {
  const int64_t n = detail::window_points<T>("blackman_window", window_length, periodic);
  if (n == 0) return detail::trivial_window<T>(window_length);
  const Tensor<T> x = arange<T>(T(n)) * T(std::numbers::pi / double(n - 1));
  const Tensor<T> w = cos(x * T(4)) * T(0.08) - cos(x * T(2)) * T(0.5) + T(0.42);
  return detail::window_of(w, window_length);
}
// I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta), a = (N - 1) / 2.
template <class T = float>
Tensor<T> kaiser_window(int64_t window_length, bool periodic = true, double beta = 12.0) {
  const int64_t n = detail::window_points<T>("kaiser_window", window_length, periodic);
  if (n == 0) return detail::trivial_window<T>(window_length);
  const T a = T(double(n - 1) / 2.0), b = T(beta);
  const Tensor<T> w = special::i0(b * sqrt(T(1) - square((arange<T>(T(n)) - a) / a))) / special::i0(full<T>({}, b));
  return detail::window_of(w, window_length);
}

}  // namespace tsr
