// Random samples whose parameters are tensors: bernoulli, multinomial,
// poisson, normal with tensor means and deviations, and randint_like. Drawn
// from this thread's generator (manual_seed makes them reproducible), on
// the host, in element order; bernoulli and randint_like give PyTorch's
// numbers, the others are distributed as its but drawn otherwise.
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
// >= 0, positive sum). Without replacement a category is drawn once at most
// (by the largest weight / Exp(1) keys, as PyTorch 1.13; categories of
// weight 0 come last); with it, independently. int64, (rows, num_samples).
template <class T>
Tensor<int64_t> multinomial(const Tensor<T>& probs, int64_t num_samples, bool replacement = false) {
  static_assert(is_floating_v<T>, "multinomial only supports floating-point dtypes for input");
  detail::check(probs.dim() == 1 || probs.dim() == 2, "prob_dist must be 1 or 2 dim");
  detail::check(num_samples > 0, "cannot sample n_sample <= 0 samples");
  const int64_t categories = probs.size(-1), rows = probs.dim() == 2 ? probs.size(0) : 1;
  detail::check(replacement || num_samples <= categories,
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  const Tensor<double> w = detail::host_contiguous(Tensor<double>(cast<double>(probs)));
  const double* wp = w.data_ptr();
  for (int64_t i = 0; i < w.numel(); ++i)
    detail::check(std::isfinite(wp[i]) && wp[i] >= 0, "probability tensor contains either `inf`, `nan` or element < 0");
  for (int64_t r = 0; r < rows; ++r)
    detail::check(std::accumulate(wp + r * categories, wp + (r + 1) * categories, 0.0) > 0,
                  "invalid multinomial distribution (sum of probabilities <= 0)");
  auto out = Tensor<int64_t>::allocate({rows, num_samples});
  int64_t* o = out.data_ptr();
  auto& g = detail::current_generator();
  {
    std::lock_guard lock(g.mutex());
    std::vector<double> cumulative(static_cast<std::size_t>(categories)), keys(static_cast<std::size_t>(categories));
    std::vector<int64_t> order(static_cast<std::size_t>(categories));
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = wp + r * categories;
      int64_t* picks = o + r * num_samples;
      if (replacement) {
        std::partial_sum(row, row + categories, cumulative.begin());
        const double total = cumulative.back();
        for (int64_t s = 0; s < num_samples; ++s) {
          // The first category whose cumulative weight passes u: a weight of 0 is never passed into.
          const double u = g.uniform_double() * total;
          const auto at = std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin();
          picks[s] = std::min<int64_t>(at, categories - 1);
        }
      } else {
        for (int64_t c = 0; c < categories; ++c) keys[static_cast<std::size_t>(c)] = row[c] / -std::log1p(-g.uniform_double());
        std::iota(order.begin(), order.end(), int64_t{0});
        std::partial_sort(order.begin(), order.begin() + num_samples, order.end(), [&](int64_t a, int64_t b) {
          const double ka = keys[static_cast<std::size_t>(a)], kb = keys[static_cast<std::size_t>(b)];
          return ka > kb || (ka == kb && a < b);
        });
        std::copy(order.begin(), order.begin() + num_samples, picks);
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
// broadcast together, or a number for either).
template <class T>
Tensor<T> normal(const Tensor<T>& mean, const Tensor<T>& std) {
  static_assert(is_floating_v<T>, "normal expects floating point tensors");
  const Shape shape = detail::broadcast_shapes(mean.sizes(), std.sizes());
  const Tensor<double> m = detail::host_contiguous(Tensor<double>(cast<double>(mean.expand(shape))));
  const Tensor<double> s = detail::host_contiguous(Tensor<double>(cast<double>(std.expand(shape))));
  const double *mp = m.data_ptr(), *sp = s.data_ptr();
  for (int64_t i = 0; i < s.numel(); ++i) detail::check(sp[i] >= 0, "normal expects all elements of std >= 0.0");
  return detail::draw<T>(shape, mean.device(),
                         [mp, sp](detail::Generator& g, int64_t i) { return detail::convert<T>(mp[i] + sp[i] * g.normal()); });
}
template <class T>
Tensor<T> normal(const Tensor<T>& mean, double std = 1) {
  return normal(mean, full<T>({}, detail::convert<T>(std), mean.device()));
}
template <class T>
Tensor<T> normal(double mean, const Tensor<T>& std) {
  return normal(full<T>({}, detail::convert<T>(mean), std.device()), std);
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
