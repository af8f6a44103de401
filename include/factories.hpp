// Functions that create tensors: empty, zeros, ones, full, arange, linspace,
// eye, rand, randn, randint, tensor, from_blob and the *_like forms.
#pragma once
#include <cmath>
#include <limits>
#include <vector>

#include "eval.hpp"
#include "random.hpp"
#include "views.hpp"

namespace tsr {

template <class T = float>
Tensor<T> empty(Shape shape, Device device = kCPU) {
  return Tensor<T>::allocate(shape, device);
}
template <class T = float>
Tensor<T> full(Shape shape, T value, Device device = kCPU) {
  auto t = empty<T>(shape, device);
  detail::assign(t, ScalarLeaf<T>(value));  // a fresh tensor: version 0, as in PyTorch
  return t;
}
template <class T = float>
Tensor<T> zeros(Shape shape, Device device = kCPU) {
  return full<T>(shape, T(0), device);
}
template <class T = float>
Tensor<T> ones(Shape shape, Device device = kCPU) {
  return full<T>(shape, T(1), device);
}

// Values start, start + step, ... below end (above it for a negative step),
// computed as fma(i, step, start) in double, which reproduces PyTorch's CPU
// results (its vectorized kernel fuses the multiply-add).
template <class T = float>
Tensor<T> arange(T start, T end, T step = T(1)) {
  const double s = double(acc_t<T>(start)), e = double(acc_t<T>(end)), st = double(acc_t<T>(step));
  detail::check(st != 0, "step must be nonzero");
  detail::check(std::isfinite(s) && std::isfinite(e), "unsupported range: ", s, " -> ", e);
  detail::check((st > 0 && e >= s) || (st < 0 && e <= s), "upper bound and larger bound inconsistent with step sign");
  const auto n = static_cast<int64_t>(std::ceil((e - s) / st));
  auto t = empty<T>({n});
  T* p = t.data_ptr();
  for (int64_t i = 0; i < n; ++i) p[i] = detail::convert<T>(std::fma(double(i), st, s));
  return t;
}
template <class T = float>
Tensor<T> arange(T end) {
  return arange<T>(T(0), end, T(1));
}

// steps values from start to end inclusive; computed from both ends, in T,
// as PyTorch's CPU kernel does, so the last value is exactly end.
template <class T = float>
Tensor<T> linspace(T start, T end, int64_t steps) {
  detail::check(steps >= 0, "number of steps must be non-negative");
  auto t = empty<T>({steps});
  T* p = t.data_ptr();
  if (steps == 1) p[0] = start;
  if (steps <= 1) return t;
  if constexpr (is_floating_v<T>) {
    using A = acc_t<T>;
    const A a = A(start), b = A(end), step = (b - a) / A(steps - 1);
    const int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i) p[i] = T(i < half ? a + step * A(i) : b - step * A(steps - i - 1));
  } else {
    const double step = (double(end) - double(start)) / double(steps - 1);
    for (int64_t i = 0; i < steps; ++i) p[i] = static_cast<T>(double(start) + step * double(i));
  }
  return t;
}

// steps powers base^x for x evenly spaced from start to end, as PyTorch's
// CPU kernel: each exponent in double from the nearer end, pow in double,
// rounded to T once.
template <class T = float>
Tensor<T> logspace(T start, T end, int64_t steps, double base = 10.0) {
  detail::check(steps >= 0, "number of steps must be non-negative");
  auto t = empty<T>({steps});
  T* p = t.data_ptr();
  if (steps == 1) p[0] = detail::convert<T>(std::pow(base, double(start)));
  if (steps <= 1) return t;
  const double step = double(end - start) / double(steps - 1);
  const int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; ++i)
    p[i] = detail::convert<T>(std::pow(base, i < half ? double(start) + step * double(i)
                                                       : double(end) - step * double(steps - i - 1)));
  return t;
}

template <class T = float>
Tensor<T> eye(int64_t n, int64_t m = -1) {
  if (m < 0) m = n;
  detail::check(n >= 0, "n must be greater or equal to 0, got ", n);
  auto t = zeros<T>({n, m});
  for (int64_t i = 0; i < std::min(n, m); ++i) t(i, i) = T(1);
  return t;
}

// Copies values (row-major) into a new tensor of the given shape.
template <class T>
Tensor<T> tensor(std::vector<T> values, Shape shape) {
  detail::check(static_cast<int64_t>(values.size()) == detail::numel_of(shape), "tensor(): ", values.size(),
                " values cannot fill a tensor of shape ", shape);
  auto t = empty<T>(shape);
  std::copy(values.begin(), values.end(), t.data_ptr());
  return t;
}
// A 1-D tensor of the values.
template <class T>
Tensor<T> tensor(std::vector<T> values) {
  const auto n = static_cast<int64_t>(values.size());
  return tensor<T>(std::move(values), Shape{n});
}

namespace detail {
// The (row, column) pairs of a rows x cols matrix for which keep(i, j)
// holds, row by row: a 2 x count tensor.
template <class T, class Keep>
Tensor<T> matrix_positions(int64_t rows, int64_t cols, Keep keep) {
  check(rows >= 0, "row must be non-negative, got ", rows);
  check(cols >= 0, "col must be non-negative, got ", cols);
  std::vector<T> r, c;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      if (keep(i, j)) r.push_back(static_cast<T>(i)), c.push_back(static_cast<T>(j));
  const auto n = static_cast<int64_t>(r.size());
  r.insert(r.end(), c.begin(), c.end());
  return tensor<T>(std::move(r), Shape{2, n});
}
}  // namespace detail

// The positions of the lower triangle of a rows x cols matrix, on and below
// the offset-th diagonal (above the main one for offset > 0): row indices,
// then column indices, in row-major order.
template <class T = int64_t>
Tensor<T> tril_indices(int64_t rows, int64_t cols, int64_t offset = 0) {
  return detail::matrix_positions<T>(rows, cols, [offset](int64_t i, int64_t j) { return j - i <= offset; });
}
// The upper triangle's, on and above the offset-th diagonal.
template <class T = int64_t>
Tensor<T> triu_indices(int64_t rows, int64_t cols, int64_t offset = 0) {
  return detail::matrix_positions<T>(rows, cols, [offset](int64_t i, int64_t j) { return j - i >= offset; });
}

// A tensor over user memory: no copy, no ownership (the memory must outlive it).
template <class T>
Tensor<T> from_blob(T* data, Shape shape, Strides strides = {}) {
  return Tensor<T>::from_raw(data, std::move(shape), std::move(strides));
}

namespace detail {
// Fills t in row-major order with draws of `next` (one generator pass, in
// order, so results do not depend on layout or threads). In place (uniform_,
// normal_), the write follows PyTorch's in-place rules and bumps t's
// version; a factory's fresh tensor stays at version 0, as in PyTorch.
// A device tensor gets the same draws, made on the host and copied there
// (so a seed gives the same values on every device).
// fill(p, n, g) writes the n values in row-major order into the host
// buffer p, drawing on g.
template <class T, class F>
void fill_drawn(Tensor<T>& t, bool in_place, F&& fill) {
  if (in_place) check_in_place(t, ScalarLeaf<T>(T(0)));
  auto& g = current_generator();
  std::lock_guard lock(g.mutex());
  const bool on_cpu = t.device().is_cpu();
  auto tmp = t.is_contiguous() && on_cpu ? t : empty<T>(t.sizes());
  fill(tmp.data_ptr(), t.numel(), g);
  if (!on_cpu) assign(t, tmp.copy_to(t.device()));
  else if (!t.is_alias_of(tmp)) assign(t, tmp);
  if (in_place) t.storage()->bump_version();
}
template <class T, class F>
void fill_sequential(Tensor<T>& t, bool in_place, F&& next) {
  fill_drawn(t, in_place, [&](T* p, int64_t n, Generator& g) {
    for (int64_t i = 0; i < n; ++i) p[i] = next(g);
  });
}

// Integers in [from, to) as PyTorch's random_(from, to) draws them
// (Generator::below): randint and random_.
template <class T>
void fill_from_to(Tensor<T>& t, int64_t from, int64_t to, bool in_place) {
  check(from < to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", to);
  const auto range = static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
  fill_sequential(t, in_place, [&](Generator& g) { return static_cast<T>(from + static_cast<int64_t>(g.below(range))); });
}

// PyTorch's normal_fill, which its CPU kernel runs for 16 or more float or
// double values in a contiguous tensor (fewer, or a strided tensor, get its
// scalar sampler: Generator::normal): every value drawn as a uniform of T
// first, then turned into normals 16 at a time by Box-Muller, the first 8
// of a group giving the radii and the next 8 the angles, in T's
// arithmetic; where n is not a multiple of 16, the last 16 values are drawn
// again and transformed on their own. PyTorch's AVX2 build computes the
// float logarithms, sines and cosines with SLEEF's vector functions
// instead, which differ from the C library's in the last bit or two.
template <class T>
void normal_fill(T* d, int64_t n, Generator& g, T mean, T std) {
  const auto uniform = [&] {
    if constexpr (std::is_same_v<T, double>) return g.uniform_double();
    else return g.uniform_float();
  };
  const auto box_muller_16 = [&](T* v) {
    for (int j = 0; j < 8; ++j) {
      const T u1 = T(1) - v[j], u2 = v[j + 8];
      const T radius = std::sqrt(T(-2) * std::log(u1));
      const T theta = static_cast<T>(2.0 * 3.14159265358979323846 * static_cast<double>(u2));
      v[j] = radius * std::cos(theta) * std + mean;
      v[j + 8] = radius * std::sin(theta) * std + mean;
    }
  };
  for (int64_t i = 0; i < n; ++i) d[i] = uniform();
  for (int64_t i = 0; i + 16 <= n; i += 16) box_muller_16(d + i);
  if (n % 16 != 0) {
    for (int64_t i = n - 16; i < n; ++i) d[i] = uniform();
    box_muller_16(d + n - 16);
  }
}
// t on `device`: t itself when it is there already (a tensor made on the
// host, or one placed before), a copy otherwise.
template <class T>
Tensor<T> placed_on(Tensor<T> t, Device device) {
  return t.device() == device ? t : t.copy_to(device);
}
// t's elements for a host loop: t itself (contiguous) on the CPU, a copy
// from its device otherwise.
template <class T>
Tensor<T> host_contiguous(const Tensor<T>& t) {
  return t.device().is_cpu() ? t.contiguous() : t.copy_to(kCPU);
}
// The two fills are never inlined: with the precompiled core they are the
// library's copies (a factory's call would otherwise compile its generator
// loop into every translation unit that makes a random tensor).
template <class T>
[[gnu::noinline]] void fill_uniform(Tensor<T>& t, double from, double to, bool in_place) {
  static_assert(is_floating_v<T>, "uniform_ expects a floating point tensor");
  check(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  fill_sequential(t, in_place, [&](Generator& g) {
    if constexpr (std::is_same_v<T, double>) return g.uniform_double() * (to - from) + from;
    // As PyTorch's CPU kernel: the bounds rounded to T first, the affine
    // map in double (its accumulation type for float), then rounded to T.
    else {
      const double lo = static_cast<double>(static_cast<T>(from)), hi = static_cast<double>(static_cast<T>(to));
      return T(static_cast<double>(g.uniform_float()) * (hi - lo) + lo);
    }
  });
}
template <class T>
[[gnu::noinline]] void fill_normal(Tensor<T>& t, double mean, double std, bool in_place) {
  static_assert(is_floating_v<T>, "normal_ expects a floating point tensor");
  check(std >= 0, "normal expects std >= 0.0, but found std ", std);
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (t.numel() >= 16 && t.is_contiguous())
      return fill_drawn(t, in_place, [&](T* p, int64_t n, Generator& g) { normal_fill(p, n, g, T(mean), T(std)); });
  }
  fill_sequential(t, in_place, [&](Generator& g) { return convert<T>(g.normal() * std + mean); });
}
}  // namespace detail

template <class T>
template <class U>
Tensor<T>& Tensor<T>::uniform_(double from, double to) {
  detail::fill_uniform(*this, from, to, true);
  return *this;
}

template <class T>
template <class U>
Tensor<T>& Tensor<T>::normal_(double mean, double std) {
  detail::fill_normal(*this, mean, std, true);
  return *this;
}

template <class T>
template <class U>
Tensor<T>& Tensor<T>::exponential_(double lambd) {
  static_assert(is_floating_v<T>, "exponential_ expects a floating point tensor");
  detail::check(lambd >= 0, "exponential_ expects lambda >= 0.0, but found lambda=", lambd);
  detail::fill_sequential(*this, true, [&](detail::Generator& g) {
    return detail::convert<T>(-1.0 / lambd * std::log(1.0 - g.uniform_double()));
  });
  return *this;
}

template <class T>
template <class U>
Tensor<T>& Tensor<T>::geometric_(double p) {
  static_assert(!std::is_same_v<T, bool>, "geometric_ expects a numeric tensor");
  detail::check(p > 0 && p < 1, "geometric_ expects p to be in (0, 1), but got p=", p);
  const double log_q = std::log1p(-p);
  detail::fill_sequential(*this, true, [&](detail::Generator& g) {
    return detail::convert<T>(std::ceil(std::log(g.uniform_double()) / log_q));
  });
  return *this;
}

template <class T>
template <class U>
Tensor<T>& Tensor<T>::cauchy_(double median, double sigma) {
  static_assert(is_floating_v<T>, "cauchy_ expects a floating point tensor");
  detail::fill_sequential(*this, true, [&](detail::Generator& g) {
    return detail::convert<T>(median + sigma * std::tan(3.14159265358979323846 * (g.uniform_double() - 0.5)));
  });
  return *this;
}

template <class T>
template <class U>
Tensor<T>& Tensor<T>::log_normal_(double mean, double std) {
  static_assert(is_floating_v<T>, "log_normal_ expects a floating point tensor");
  detail::check(std > 0, "log_normal_ expects std > 0.0, but found std=", std);
  detail::fill_sequential(*this, true,
                          [&](detail::Generator& g) { return detail::convert<T>(std::exp(g.normal() * std + mean)); });
  return *this;
}

template <class T>
template <class U>
Tensor<T>& Tensor<T>::random_(int64_t from, int64_t to) {
  detail::fill_from_to(*this, from, to, true);
  return *this;
}

template <class T>
template <class U>
Tensor<T>& Tensor<T>::random_(int64_t to) {
  return random_(0, to);
}

template <class T>
template <class U>
Tensor<T>& Tensor<T>::random_() {
  detail::fill_sequential(*this, true, [](detail::Generator& g) -> T {
    // 64 random bits for the 8-byte types, 32 for the others, as PyTorch.
    if constexpr (std::is_same_v<T, bool>) {
      return (g.random() & 1) != 0;
    } else if constexpr (is_floating_v<T>) {
      constexpr uint64_t values = (uint64_t{1} << std::numeric_limits<T>::digits) + 1;
      return static_cast<T>(static_cast<double>((sizeof(T) == 8 ? g.random64() : g.random()) % values));
    } else {
      constexpr uint64_t values = static_cast<uint64_t>(std::numeric_limits<T>::max()) + 1;
      return static_cast<T>((sizeof(T) == 8 ? g.random64() : g.random()) % values);
    }
  });
  return *this;
}

template <class T = float>
Tensor<T> rand(Shape shape) {
  auto t = empty<T>(shape);
  detail::fill_uniform(t, 0, 1, false);
  return t;
}
template <class T = float>
Tensor<T> randn(Shape shape) {
  auto t = empty<T>(shape);
  detail::fill_normal(t, 0, 1, false);
  return t;
}
template <class T = int64_t>
Tensor<T> randint(int64_t low, int64_t high, Shape shape) {
  auto t = empty<T>(shape);
  detail::fill_from_to(t, low, high, false);
  return t;
}

// A random permutation of 0..n-1, as torch.randperm: Fisher-Yates with
// PyTorch's draw (32 random bits modulo the remaining count), so that the
// same seed gives PyTorch's permutation. From the global generator (this
// thread's: see ThreadGeneratorGuard) or from the one given.
template <class T = int64_t>
Tensor<T> randperm(int64_t n, detail::Generator& g) {
  detail::check(n >= 0, "Trying to create tensor with negative dimension ", n, ": [", n, "]");
  auto t = empty<T>({n});
  T* r = t.data_ptr();
  for (int64_t i = 0; i < n; ++i) r[i] = static_cast<T>(i);
  std::lock_guard lock(g.mutex());
  for (int64_t i = 0; i + 1 < n; ++i) {
    const auto z = static_cast<int64_t>(g.random() % static_cast<uint64_t>(n - i));
    std::swap(r[i], r[z + i]);
  }
  return t;
}
template <class T = int64_t>
Tensor<T> randperm(int64_t n, Generator generator) {
  return randperm<T>(n, generator.impl());
}
template <class T = int64_t>
Tensor<T> randperm(int64_t n) {
  return randperm<T>(n, detail::current_generator());
}

// ----- *_like: the shape, element type and device of e ---------------------------
template <Expression E>
auto empty_like(const E& e) {
  return empty<typename E::value_type>(e.sizes(), detail::expr_device(e));
}
template <Expression E>
auto zeros_like(const E& e) {
  return zeros<typename E::value_type>(e.sizes(), detail::expr_device(e));
}
template <Expression E>
auto ones_like(const E& e) {
  return ones<typename E::value_type>(e.sizes(), detail::expr_device(e));
}
template <Expression E, class S>
auto full_like(const E& e, S value) {
  using T = typename E::value_type;
  return full<T>(e.sizes(), detail::convert<T>(value), detail::expr_device(e));
}
template <Expression E>
auto rand_like(const E& e) {
  return detail::placed_on(rand<typename E::value_type>(e.sizes()), detail::expr_device(e));
}
template <Expression E>
auto randn_like(const E& e) {
  return detail::placed_on(randn<typename E::value_type>(e.sizes()), detail::expr_device(e));
}

}  // namespace tsr
