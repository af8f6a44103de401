// Backward of the reductions over dims and of the composite reductions
// (var, std, norm, logsumexp, softmax, log_softmax), of prod, cumsum, and
// of max/min with indices. Each formula is PyTorch's (FunctionsManual.cpp),
// edge cases included: ties of amax share the gradient, prod with zeros
// gives the product of the others, std and the norms give 0 where the
// result is 0.
//
// The input may be an expression: its value is recomputed when a formula
// needs it, and the gradient goes through the expression's fused backward.
#pragma once
#include <cmath>
#include <limits>

#include "../scan.hpp"
#include "../shape_ops.hpp"
#include "../statistics.hpp"
#include "scatter_grad.hpp"

namespace tsr::autograd {
namespace detail_rules {


// g (shaped like the result) with the reduced dims back as dims of size 1,
// so that it broadcasts against the input.
template <class T>
Tensor<T> unreduce(const Tensor<T>& g, const Shape& in, const Shape& dims) {
  const auto rank = static_cast<int64_t>(in.size());
  return g.reshape(tsr::detail::reduced_shape(in, tsr::detail::reduce_mask(dims, rank), true));
}

// g summed along dim from the end (cumsum's backward).
template <class T>
Tensor<T> cumsum_from_end(const Tensor<T>& g, int64_t dim) {
  const Shape d{dim};
  return flip(cumsum(flip(g, d), dim), d);
}

}  // namespace detail_rules

// sum and mean over dims: the gradient broadcast back (divided by the count).
template <>
struct OpRule<tag::Sum> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const E& e, const Shape& dims, bool mean, const char* name) {
    struct Rule {
      Input<E> in;
      Shape dims;
      bool mean;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        Tensor<T> k = detail_rules::unreduce(g, in.sizes(), dims);
        if (mean) {
          const auto n = static_cast<T>(numel_of(in.sizes()) / std::max<int64_t>(numel_of(k.sizes()), 1));
          k = tsr::detail::backward_eval<T>(k / n);
        }
        return in.send(tsr::detail::broadcast_gradient(k, in.sizes()));
      }
    };
    Input<E> in(e, false);
    auto edges = in.edges();
    set_rule(out, name, Rule{std::move(in), dims, mean}, std::move(edges));
  }
};

// amax/amin (over dims or all) and max()/min() over all elements: the
// gradient is shared evenly by the elements equal to the result. Over all
// elements a NaN result takes the gradient to the NaNs (PyTorch's
// evenly_distribute_backward); over dims it is (g / count) * mask, as in
// PyTorch.
template <>
struct OpRule<tag::Extremum> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const E& e, const Shape& dims, const char* name, bool all) {
    struct Rule {
      Input<E> in;
      SavedTensor<T> result;
      Shape dims;
      bool all;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        const Tensor<T> x = in.value();
        const Tensor<T> m = detail_rules::unreduce(result.get(), in.sizes(), dims);
        const Tensor<T> gk = detail_rules::unreduce(g, in.sizes(), dims);
        Tensor<bool> mask = x == m;
        if (all) mask = Tensor<bool>(mask || (isnan(x) && isnan(m)));
        const Tensor<T> count = sum(cast<T>(mask), dims, true);
        if (all) return in.send(tsr::detail::backward_eval<T>(where(mask, gk / count, T(0))));
        return in.send(tsr::detail::backward_eval<T>(gk / count * cast<T>(mask)));
      }
    };
    Input<E> in(e, true);
    auto edges = in.edges();
    set_rule(out, name, Rule{std::move(in), SavedTensor<T>::output(out), dims, all}, std::move(edges));
  }
};

// prod: g * prod / x where a slice has no zero; with one zero, the zero gets
// the product of the others and the rest 0; with more, all 0.
template <>
struct OpRule<tag::Prod> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const E& e, const Shape& dims, const char* name) {
    struct Rule {
      Input<E> in;
      SavedTensor<T> result;
      Shape dims;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        const Tensor<T> x = in.value();
        const Tensor<T> p = detail_rules::unreduce(result.get(), in.sizes(), dims);
        const Tensor<T> gk = detail_rules::unreduce(g, in.sizes(), dims);
        const Tensor<T> zeros_in = sum(cast<T>(x == T(0)), dims, true);
        const Tensor<T> others = prod(tsr::detail::backward_eval<T>(where(x == T(0), T(1), x)), dims, true);
        return in.send(tsr::detail::backward_eval<T>(
            where(zeros_in == T(0), gk * p / x, where(zeros_in == T(1) && x == T(0), gk * others, T(0)))));
      }
    };
    Input<E> in(e, true);
    auto edges = in.edges();
    set_rule(out, name, Rule{std::move(in), SavedTensor<T>::output(out), dims}, std::move(edges));
  }
};

// var: 2 (x - mean) / (N - correction) * g; std: var's with g / (2 std), 0
// where std is 0.
template <>
struct OpRule<tag::Var> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const E& e, const Shape& dims, int64_t correction, bool is_std) {
    struct Rule {
      Input<E> in;
      SavedTensor<T> result;
      Shape dims;
      int64_t correction;
      bool is_std;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        const Tensor<T> x = in.value();
        Tensor<T> gk = detail_rules::unreduce(g, in.sizes(), dims);
        if (is_std) {
          const Tensor<T> s = detail_rules::unreduce(result.get(), in.sizes(), dims);
          gk = tsr::detail::backward_eval<T>(where(s == T(0), T(0), gk / (s * T(2))));
        }
        const int64_t n = numel_of(in.sizes()) / std::max<int64_t>(numel_of(gk.sizes()), 1);
        const T scale = static_cast<T>(2.0 / static_cast<double>(n - correction));
        const Tensor<T> m = mean(x, dims, true);
        return in.send(tsr::detail::backward_eval<T>(gk * (x - m) * scale));
      }
    };
    Input<E> in(e, true);
    auto edges = in.edges();
    set_rule(out, is_std ? "StdBackward0" : "VarBackward0",
             Rule{std::move(in), SavedTensor<T>::output(out), dims, correction, is_std}, std::move(edges));
  }
};

// The p-norms (PyTorch's norm_backward): 0 where the norm is 0, no
// gradient at all for p = 0.
template <>
struct OpRule<tag::Norm> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const E& e, double p, const Shape& dims) {
    struct Rule {
      Input<E> in;
      SavedTensor<T> result;
      double p;
      Shape dims;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        if (p == 0) return std::vector<GradRef>(in.edges().size());
        const Tensor<T> x = in.value();
        const Tensor<T> n = detail_rules::unreduce(result.get(), in.sizes(), dims);
        const Tensor<T> gk = detail_rules::unreduce(g, in.sizes(), dims);
        Tensor<T> gx;
        if (p == 1) {
          gx = tsr::detail::backward_eval<T>(gk * sign(x));
        } else if (p == 2) {
          gx = tsr::detail::backward_eval<T>(x * where(n == T(0), T(0), gk / n));
        } else if (std::isinf(p)) {
          const Tensor<bool> mask = abs(x) == n;
          const Tensor<T> count = sum(cast<T>(mask), dims, true);
          gx = tsr::detail::backward_eval<T>(sign(x) * (gk / count * cast<T>(mask)));
        } else {
          const T q = static_cast<T>(p);
          const Tensor<T> scaled = p < 2 ? tsr::detail::backward_eval<T>(where(x == T(0), T(0), sign(x) * pow(abs(x), q - 1)))
                                         : tsr::detail::backward_eval<T>(x * pow(abs(x), q - 2));
          gx = tsr::detail::backward_eval<T>(scaled * where(n == T(0), T(0), gk / pow(n, q - 1)));
        }
        return in.send(gx);
      }
    };
    Input<E> in(e, p != 0);
    auto edges = in.edges();
    set_rule(out, "LinalgVectorNormBackward0", Rule{std::move(in), SavedTensor<T>::output(out), p, dims},
             std::move(edges));
  }
};

// nansum: g times the mask of the elements that are not NaN.
template <>
struct OpRule<tag::Nansum> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const E& e, const Shape& dims) {
    struct Rule {
      Input<E> in;
      Shape dims;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        const Tensor<T> gk = detail_rules::unreduce(g, in.sizes(), dims);
        return in.send(tsr::detail::backward_eval<T>(gk * cast<T>(!isnan(in.value()))));
      }
    };
    Input<E> in(e, true);
    auto edges = in.edges();
    set_rule(out, "NansumBackward0", Rule{std::move(in), dims}, std::move(edges));
  }
};

// logsumexp: g * exp(x - result).
template <>
struct OpRule<tag::Logsumexp> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const E& e, const Shape& dims) {
    struct Rule {
      Input<E> in;
      SavedTensor<T> result;
      Shape dims;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        const Tensor<T> r = detail_rules::unreduce(result.get(), in.sizes(), dims);
        const Tensor<T> gk = detail_rules::unreduce(g, in.sizes(), dims);
        return in.send(tsr::detail::backward_eval<T>(gk * exp(in.value() - r)));
      }
    };
    Input<E> in(e, true);
    auto edges = in.edges();
    set_rule(out, "LogsumexpBackward0", Rule{std::move(in), SavedTensor<T>::output(out), dims}, std::move(edges));
  }
};

// softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g). Only the
// result is kept.
template <>
struct OpRule<tag::Softmax> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const E& e, int64_t dim, bool log) {
    struct Rule {
      Input<E> in;
      SavedTensor<T> result;
      int64_t dim;
      bool log;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        const Tensor<T>& y = result.get();
        if (log) {
          const Tensor<T> s = sum(g, Shape{dim}, true);
          return in.send(tsr::detail::backward_eval<T>(g - exp(y) * s));
        }
        const Tensor<T> s = sum(g * y, Shape{dim}, true);
        return in.send(tsr::detail::backward_eval<T>(y * (g - s)));
      }
    };
    Input<E> in(e, false);
    auto edges = in.edges();
    set_rule(out, log ? "LogSoftmaxBackward0" : "SoftmaxBackward0",
             Rule{std::move(in), SavedTensor<T>::output(out), dim, log}, std::move(edges));
  }
};

// cumsum: the gradient summed from the end.
template <>
struct OpRule<tag::Cumsum> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const E& e, int64_t dim) {
    struct Rule {
      Input<E> in;
      int64_t dim;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        if (g.dim() == 0) return in.send(g);
        return in.send(detail_rules::cumsum_from_end(g, dim));
      }
    };
    Input<E> in(e, false);
    auto edges = in.edges();
    set_rule(out, "CumsumBackward0", Rule{std::move(in), dim}, std::move(edges));
  }
};

// cumprod (PyTorch's cumprod_backward): along each line, with k the first
// zero of x (n if none), element i < k gets sum_{i <= j < k} g_j y_j / x_i;
// element k gets sum_{j >= k} g_j prod_{m <= j, m != k} x_m; later elements
// get 0 (their products all contain x_k). Lines run in double.
template <>
struct OpRule<tag::Cumprod> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const E& e, int64_t dim) {
    struct Rule {
      Input<E> in;
      int64_t dim;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        if (g.dim() == 0) return in.send(g);
        if (tsr::detail::grad_mode_flag()) return recorded(g);
        // Lines along the last dim, contiguous, on the host (a device's are
        // copied there and the result back).
        const int64_t last = g.dim() - 1;
        const Tensor<T> x = tsr::detail::host_contiguous(in.value().transpose(dim, last));
        const Tensor<T> gl = tsr::detail::host_contiguous(g.transpose(dim, last));
        Tensor<T> gx = Tensor<T>::allocate(x.sizes());
        const int64_t n = x.size(last), lines = n == 0 ? 0 : x.numel() / n;
        const T *px = x.data_ptr(), *pg = gl.data_ptr();
        T* out = gx.data_ptr();
        std::vector<double> prefix(static_cast<std::size_t>(n));
        for (int64_t l = 0; l < lines; ++l) {
          const T* xl = px + l * n;
          const T* gline = pg + l * n;
          T* o = out + l * n;
          int64_t k = 0;
          double p = 1;
          for (; k < n && double(xl[k]) != 0; ++k) prefix[static_cast<std::size_t>(k)] = p *= double(xl[k]);
          // i < k: the sum of g_j y_j over i <= j < k, from the end, divided by x_i.
          double tail = 0;
          for (int64_t i = k - 1; i >= 0; --i) {
            tail += double(gline[i]) * prefix[static_cast<std::size_t>(i)];
            o[i] = T(tail / double(xl[i]));
          }
          if (k < n) {
            // i = k: sum_{j >= k} g_j (y_(k-1) prod_{k < m <= j} x_m).
            double running = k > 0 ? prefix[static_cast<std::size_t>(k - 1)] : 1.0, acc = double(gline[k]) * running;
            for (int64_t j = k + 1; j < n; ++j) {
              running *= double(xl[j]);
              acc += double(gline[j]) * running;
            }
            o[k] = T(acc);
            for (int64_t i = k + 1; i < n; ++i) o[i] = T(0);
          }
        }
        return in.send(tsr::detail::placed_on(gx, g.device()).transpose(dim, last));
      }
      // A recorded backward (create_graph): the formula for an input without
      // zeros, sum_{j >= i} g_j y_j / x_i, from recorded ops. (With zeros, the
      // formula above, written with masks, has the right value but not the
      // right derivative in the zeros.)
      std::vector<GradRef> recorded(const Tensor<T>& g) const {
        const Tensor<T> x = in.value();
        tsr::detail::check(tsr::sum(cast<int64_t>(x == T(0))).item() == 0,
                           "create_graph through cumprod is supported only for inputs without zeros");
        const Tensor<T> gy = tsr::detail::backward_eval<T>(g * cumprod(x, dim));
        return in.send(tsr::detail::backward_eval<T>(detail_rules::cumsum_from_end(gy, dim) / x));
      }
    };
    Input<E> in(e, true);
    auto edges = in.edges();
    set_rule(out, "CumprodBackward0", Rule{std::move(in), dim}, std::move(edges));
  }
};

// logcumsumexp (PyTorch's logcumsumexp_backward): the gradient's positive
// and negative parts, each summed from the end in log space so that no term
// overflows: exp(lcse_end(log g+ - y) + x) - exp(lcse_end(log g- - y) + x),
// lcse_end the logcumsumexp from the end, y the result.
template <>
struct OpRule<tag::Logcumsumexp> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const E& e, int64_t dim) {
    struct Rule {
      Input<E> in;
      SavedTensor<T> result;
      int64_t dim;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        if (g.dim() == 0 || g.numel() == 0) return in.send(g);
        const Shape d{dim};
        const auto from_end = [&](const Tensor<T>& t) { return flip(logcumsumexp(flip(t, d), dim), d); };
        const T lowest = std::numeric_limits<T>::lowest();
        const Tensor<T> log_abs = log(abs(g));
        const Tensor<T>& y = result.get();
        const Tensor<T> x = in.value();
        const Tensor<T> pos = from_end(tsr::detail::backward_eval<T>(where(g > T(0), log_abs, lowest) - y));
        const Tensor<T> neg = from_end(tsr::detail::backward_eval<T>(where(g < T(0), log_abs, lowest) - y));
        return in.send(tsr::detail::backward_eval<T>(exp(pos + x) - exp(neg + x)));
      }
    };
    Input<E> in(e, true);
    auto edges = in.edges();
    set_rule(out, "LogcumsumexpBackward0", Rule{std::move(in), SavedTensor<T>::output(out), dim}, std::move(edges));
  }
};

// max/min along a dim with indices: the gradient goes to the chosen element.
template <>
struct OpRule<tag::IndexReduce> {
  template <class T, class E> [[gnu::noinline]]
  static void record(const Tensor<T>& values, const E& e, int64_t dim, const Tensor<int64_t>& indices,
                     const char* name) {
    struct Rule {
      Input<E> in;
      Tensor<int64_t> indices;
      int64_t dim;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        if (in.sizes().empty()) return in.send(g);
        const Shape d{dim};
        const Tensor<int64_t> chosen = detail_rules::unreduce(indices, in.sizes(), d);
        if (!g.device().is_cpu()) {
          // On a device (where scatter is a host loop): g where the
          // position along dim is the chosen one, one fused pass.
          Shape along(in.sizes().size(), 1);
          along[static_cast<std::size_t>(dim)] = in.sizes()[static_cast<std::size_t>(dim)];
          const Tensor<int64_t> positions =
              tsr::detail::placed_on(arange<int64_t>(0, along[static_cast<std::size_t>(dim)]).view(along), g.device());
          return in.send(Tensor<T>(where(positions == chosen, detail_rules::unreduce(g, in.sizes(), d), T(0))));
        }
        return in.send(detail_rules::scattered(in.sizes(), dim, chosen, detail_rules::unreduce(g, in.sizes(), d), false));
      }
    };
    Input<E> in(e, false);
    auto edges = in.edges();
    set_rule(values, name, Rule{std::move(in), indices, dim}, std::move(edges));
  }
};

}  // namespace tsr::autograd
