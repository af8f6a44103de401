// Random samples whose parameters are tensors: bernoulli, multinomial,
// poisson, normal with tensor means and deviations, and randint_like. Drawn
// from this thread's generator (manual_seed makes them reproducible), on
// the host, in element order, as PyTorch's CPU kernels draw them: its
// numbers for a seed.
#pragma once
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "broadcasting.hpp"
#include "factories.hpp"

namespace tsr {
namespace detail {

// A Poisson count of mean `rate`: Knuth's product of uniforms below 10,
// above it Hörmann's transformed rejection with squeeze (PTRS, 1993), the
// two methods PyTorch's CPU sampler uses.
inline double poisson_sample(Generator& g, double rate) {
  if (rate == 0) return 0;
  if (rate < 10) {
    const double limit = std::exp(-rate);
    double product = g.uniform_double();
    int64_t count = 0;
    while (product > limit) {
      product *= g.uniform_double();
      ++count;
    }
    return static_cast<double>(count);
  }
  const double log_rate = std::log(rate), b = 0.931 + 2.53 * std::sqrt(rate), a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), v_r = 0.9277 - 3.6224 / (b - 2);
  while (true) {
    const double u = g.uniform_double() - 0.5, v = g.uniform_double();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + rate + 0.43);
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <= -rate + k * log_rate - std::lgamma(k + 1))
      return k;
  }
}

// out's elements, drawn in order on the host from f(generator, i), then
// placed on `device`.
template <class T, class F>
Tensor<T> draw(const Shape& shape, Device device, F&& f) {
  auto out = empty<T>(shape);
  auto& g = current_generator();
  {
    std::lock_guard lock(g.mutex());
    T* p = out.data_ptr();
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = f(g, i);
  }
  return placed_on(out, device);
}

}  // namespace detail

// 1 with probability probs[i] (each in [0, 1]), else 0: probs' shape and
// type. As PyTorch's CPU kernel draws it (a uniform double below a double
// probability, a uniform float below any other in float), so that a seed
// gives its numbers.
template <class T>
Tensor<T> bernoulli(const Tensor<T>& probs) {
  static_assert(is_floating_v<T>, "bernoulli: expected a floating point tensor of probabilities");
  using P = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Tensor<P> p = detail::host_contiguous(Tensor<P>(cast<P>(probs)));
  const P* pp = p.data_ptr();
  for (int64_t i = 0; i < p.numel(); ++i)
    detail::check(pp[i] >= 0 && pp[i] <= 1, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  return detail::draw<T>(probs.sizes(), probs.device(), [pp](detail::Generator& g, int64_t i) {
    if constexpr (std::is_same_v<P, double>) return T(g.uniform_double() < pp[i] ? 1 : 0);
    else return T(g.uniform_float() < pp[i] ? 1 : 0);
  });
}
namespace detail {
// `sizes` of 1 with probability p, else 0, as PyTorch's bernoulli_(p) draws
// them (a uniform double below p): its numbers for a seed, and dropout's
// masks.
template <class T>
Tensor<T> bernoulli_draws(const Shape& sizes, double p, Device device) {
  check(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return draw<T>(sizes, device, [p](Generator& g, int64_t) { return T(g.uniform_double() < p ? 1 : 0); });
}
}  // namespace detail
// x's shape and type, each element 1 with probability p.
template <class T>
Tensor<T> bernoulli(const Tensor<T>& x, double p) {
  return detail::bernoulli_draws<T>(x.sizes(), p, x.device());
}
// In place: each element of x becomes 1 with probability p, else 0.
template <class T>
Tensor<T>& bernoulli_(Tensor<T>& x, double p = 0.5) {
  return x.copy_(bernoulli(x, p));
}

// num_samples category indices per row of probs (1-D, or 2-D: one row per
// draw), each drawn with probability proportional to its weight (finite,
// >= 0, positive sum); int64, (rows, num_samples). Drawn as PyTorch 1.13's
// CPU kernel draws them, so that a seed gives its indices, and refused with
// its messages, which differ between the two ways. Without replacement a
// category is drawn once at most: the largest weight / Exp(1) keys, the
// Exp(1) values drawn as exponential_ draws them into a tensor like probs
// and the keys divided in T (ties go to the first category; a weight of 0
// comes last). With replacement: a uniform double per sample, located by
// binary search in the row's cumulative weights, summed and normalized in T
// (float for 16-bit types), the last set to 1.
template <class T>
Tensor<int64_t> multinomial(const Tensor<T>& probs, int64_t num_samples, bool replacement = false) {
  static_assert(is_floating_v<T>, "multinomial only supports floating-point dtypes for input");
  detail::check(probs.dim() == 1 || probs.dim() == 2, "prob_dist must be 1 or 2 dim");
  detail::check(num_samples > 0, "cannot sample n_sample <= 0 samples");
  const int64_t categories = probs.size(-1), rows = probs.dim() == 2 ? probs.size(0) : 1;
  detail::check(replacement || num_samples <= categories,
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  const Tensor<T> w = detail::host_contiguous(probs);
  const T* wp = w.data_ptr();
  for (int64_t i = 0; i < w.numel(); ++i) {
    const double v = static_cast<double>(wp[i]);
    if (!replacement) {
      detail::check(std::isfinite(v) && v >= 0, "probability tensor contains either `inf`, `nan` or element < 0");
    } else {
      detail::check(v >= 0, "invalid multinomial distribution (encountering probability entry < 0)");
      detail::check(std::isfinite(v), "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < categories; ++c) sum += static_cast<double>(wp[r * categories + c]);
    detail::check(sum > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
  }
  auto out = Tensor<int64_t>::allocate({rows, num_samples});
  int64_t* o = out.data_ptr();
  if (!replacement) {
    Tensor<T> keys = empty<T>(w.sizes());
    keys.exponential_(1);
    T* k = keys.data_ptr();
    for (int64_t i = 0; i < keys.numel(); ++i) k[i] = wp[i] / k[i];
    std::vector<int64_t> order(static_cast<std::size_t>(categories));
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = k + r * categories;
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + num_samples, order.end(), [&](int64_t a, int64_t b) {
        return row[a] > row[b] || (row[a] == row[b] && a < b);
      });
      std::copy(order.begin(), order.begin() + num_samples, o + r * num_samples);
    }
  } else {
    using A = acc_t<T>;
    auto& g = detail::current_generator();
    std::lock_guard lock(g.mutex());
    std::vector<A> cumulative(static_cast<std::size_t>(categories));
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = wp + r * categories;
      A sum = 0;
      for (int64_t c = 0; c < categories; ++c) cumulative[static_cast<std::size_t>(c)] = sum += static_cast<A>(row[c]);
      for (A& c : cumulative) c /= sum;
      cumulative.back() = 1;
      for (int64_t s = 0; s < num_samples; ++s) {
        const double u = g.uniform_double();
        // The first category whose cumulative weight reaches u.
        const auto at = std::lower_bound(cumulative.begin(), cumulative.end(), u,
                                         [](A c, double v) { return static_cast<double>(c) < v; });
        o[r * num_samples + s] = at - cumulative.begin();
      }
    }
  }
  if (probs.dim() == 1) out = out.view({num_samples});
  return detail::placed_on(out, probs.device());
}

// A Poisson count for each rate (>= 0), in rates' shape and type.
template <class T>
Tensor<T> poisson(const Tensor<T>& rates) {
  static_assert(is_floating_v<T>, "poisson: expected a floating point tensor of rates");
  const Tensor<double> r = detail::host_contiguous(Tensor<double>(cast<double>(rates)));
  const double* rp = r.data_ptr();
  for (int64_t i = 0; i < r.numel(); ++i)
    detail::check(rp[i] >= 0, "invalid Poisson rate, expected rate to be non-negative");
  return detail::draw<T>(rates.sizes(), rates.device(),
                         [rp](detail::Generator& g, int64_t i) { return T(detail::poisson_sample(g, rp[i])); });
}

// Normal samples with the given means and standard deviations (tensors,
// broadcast together, or a number for either), as PyTorch computes them:
// N(0, 1) draws of the result's shape (randn's), times std, plus mean, in
// T (with a number for std, N(0, std) draws plus mean). Not differentiated
// (a new tensor, as a factory's).
template <class T>
Tensor<T> normal(const Tensor<T>& mean, const Tensor<T>& std) {
  static_assert(is_floating_v<T>, "normal expects floating point tensors");
  const Shape shape = detail::broadcast_shapes(mean.sizes(), std.sizes());
  const Tensor<T> s = std.detach();
  detail::check(s.numel() == 0 || amin(s).item() >= T(0), "normal expects all elements of std >= 0.0");
  const Tensor<T> z = detail::placed_on(randn<T>(shape), mean.device());
  return detail::unrecorded([&] { return Tensor<T>(z * s + mean.detach()); });
}
template <class T>
Tensor<T> normal(const Tensor<T>& mean, double std = 1) {
  // PyTorch's normal_(0, std) of the result, plus mean.
  Tensor<T> z = empty<T>(mean.sizes());
  z.normal_(0, std);
  z = detail::placed_on(z, mean.device());
  return detail::unrecorded([&] { return Tensor<T>(z + mean.detach()); });
}
template <class T>
Tensor<T> normal(double mean, const Tensor<T>& std) {
  const Tensor<T> s = std.detach();
  detail::check(s.numel() == 0 || amin(s).item() >= T(0), "normal expects all elements of std >= 0.0");
  const Tensor<T> z = detail::placed_on(randn<T>(std.sizes()), std.device());
  return detail::unrecorded([&] { return Tensor<T>(z * s + detail::convert<T>(mean)); });
}

// Random integers in [low, high) with e's shape and element type.
template <Expression E>
auto randint_like(const E& e, int64_t low, int64_t high) {
  using T = typename E::value_type;
  Tensor<T> out = randint<T>(low, high, e.sizes());
  return detail::placed_on(out, detail::expr_device(e));
}
template <Expression E>
auto randint_like(const E& e, int64_t high) {
  return randint_like(e, 0, high);
}

}  // namespace tsr
