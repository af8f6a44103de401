// Order statistics along a dim: kthvalue, median and nanmedian, each with
// the position of the element it chose (int64), and median and nanmedian
// over all elements; quantile and nanquantile.
//
// NaN orders above +inf, as in sort. median returns NaN, at the first NaN's
// position, for a line that holds one; nanmedian leaves NaN out and returns
// NaN only for a line of NaNs. Of an even count both take the lower of the
// two middle elements. Among equal elements the position returned is the
// one a stable sort puts there (PyTorch's depends on its selection
// algorithm). The gradient goes to the chosen position; over all elements
// it is shared by the elements equal to the result, as PyTorch does.
#pragma once
#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "indexing.hpp"
#include "reduce_dims.hpp"
#include "sort.hpp"

namespace tsr {
namespace detail {

enum class OrderStatistic { Kth, Median, NanMedian };

// The position in `line` of the element `which` chooses (the k-th smallest
// for Kth); `order` holds the positions 0 .. len - 1, to be permuted.
template <class A>
int64_t choose_in_line(const std::vector<A>& line, std::vector<int64_t>& order, OrderStatistic which, int64_t k) {
  int64_t rank = k - 1;
  if (which != OrderStatistic::Kth) {
    auto valid = static_cast<int64_t>(line.size());
    if constexpr (is_floating_v<A>) {
      const auto is_nan = [](A v) { return v != v; };
      const auto first_nan = std::find_if(line.begin(), line.end(), is_nan);
      if (first_nan != line.end()) {
        if (which == OrderStatistic::Median) return first_nan - line.begin();
        valid -= std::count_if(first_nan, line.end(), is_nan);
        if (valid == 0) return 0;
      }
    }
    rank = (valid - 1) / 2;  // NaNs order last, so this rank is not one of them
  }
  std::nth_element(order.begin(), order.begin() + rank, order.end(), [&](int64_t a, int64_t b) {
    const A va = line[static_cast<std::size_t>(a)], vb = line[static_cast<std::size_t>(b)];
    if (sorts_before(va, vb)) return true;
    if (sorts_before(vb, va)) return false;
    return a < b;  // a total order: the stable sort's position
  });
  return order[static_cast<std::size_t>(rank)];
}

// The chosen element of every line along dim, and its position.
template <class T>
std::tuple<Tensor<T>, Tensor<int64_t>> order_statistic(const Tensor<T>& x, int64_t dim, bool keepdim,
                                                        OrderStatistic which, int64_t k, const char* name) {
  static_assert(!std::is_same_v<T, bool>, "kthvalue, median, nanmedian: bool tensors are not supported, as in PyTorch");
  dim = wrap_dim(dim, x.dim());
  const int64_t len = x.dim() == 0 ? 1 : x.size(dim);
  check<IndexError>(len != 0, name, "(): Expected reduction dim ", dim, " to have non-zero size.");
  if (which == OrderStatistic::Kth)
    check(k >= 1 && k <= len, "kthvalue(): selected number k out of range for dimension ", dim);
  const Tensor<T> c = x.device().is_cpu() ? x.contiguous() : x.copy_to(kCPU).contiguous();
  const Shape shape = reduced_shape(x.sizes(), x.dim() == 0 ? 0 : uint64_t{1} << dim, keepdim);
  auto values = Tensor<T>::allocate(shape);
  auto indices = Tensor<int64_t>::allocate(shape);
  const int64_t inner = split_at(c.sizes(), dim).inner;
  T* vout = values.data_ptr();
  int64_t* iout = indices.data_ptr();
  for_each_line(c, dim, c.numel() * 4, [&](int64_t o, int64_t j, const T* in, const auto& line, auto& order) {
    const int64_t at = choose_in_line(line, order, which, k);
    vout[o * inner + j] = in[at * inner];
    iout[o * inner + j] = at;
  });
  if (x.device().is_cpu()) return {std::move(values), std::move(indices)};
  return {values.copy_to(x.device()), indices.copy_to(x.device())};
}

template <class T>
auto order_statistic_along(const Tensor<T>& x, int64_t dim, bool keepdim, OrderStatistic which, int64_t k,
                           const char* name, const char* backward_name) {
  auto r = order_statistic(x, dim, keepdim, which, k, name);
  record_op<autograd::tag::IndexReduce>(std::get<0>(r), x, wrap_dim(dim, x.dim()), std::get<1>(r), backward_name);
  return r;
}

template <class T>
Tensor<T> order_statistic_of_all(const Tensor<T>& x, OrderStatistic which, const char* backward_name) {
  Tensor<T> out;
  if (x.numel() == 0) {
    if constexpr (is_floating_v<T>) out = full<T>(Shape{}, convert<T>(std::numeric_limits<double>::quiet_NaN()), x.device());
    else fail<Error>("median() of an empty integer tensor: it has no value (PyTorch returns an arbitrary one)");
  } else {
    out = unrecorded([&] { return std::get<0>(order_statistic(x.reshape({-1}), 0, false, which, 0, "median")); });
  }
  record_op<autograd::tag::Extremum>(out, x, Shape{}, backward_name, true);
  return out;
}

}  // namespace detail

// The k-th smallest element along dim (k from 1) and its position:
// auto [v, i] = kthvalue(x, 2, 1);
template <Expression E>
auto kthvalue(const E& e, int64_t k, int64_t dim = -1, bool keepdim = false) {
  return detail::order_statistic_along(Tensor<typename E::value_type>(e), dim, keepdim, detail::OrderStatistic::Kth, k, "kthvalue",
                                       "KthvalueBackward0");
}

// The median along dim (the lower middle element of an even count; NaN
// where a line holds NaN) and its position.
template <Expression E>
auto median(const E& e, int64_t dim, bool keepdim = false) {
  return detail::order_statistic_along(Tensor<typename E::value_type>(e), dim, keepdim, detail::OrderStatistic::Median, 0, "median",
                                       "MedianBackward1");
}
// The median along dim of the elements that are not NaN, and its position.
template <Expression E>
auto nanmedian(const E& e, int64_t dim, bool keepdim = false) {
  return detail::order_statistic_along(Tensor<typename E::value_type>(e), dim, keepdim, detail::OrderStatistic::NanMedian, 0, "median",
                                       "NanmedianBackward1");
}

// The median of all elements, as a 0-d tensor (NaN for an empty tensor).
template <Expression E>
auto median(const E& e) {
  return detail::order_statistic_of_all(Tensor<typename E::value_type>(e), detail::OrderStatistic::Median, "MedianBackward0");
}
template <Expression E>
auto nanmedian(const E& e) {
  return detail::order_statistic_of_all(Tensor<typename E::value_type>(e), detail::OrderStatistic::NanMedian, "NanmedianBackward0");
}

namespace detail {

// quantile and nanquantile, PyTorch's computation step by step (so results
// match it to the last bit): sort each line, turn q into a fractional rank
// q (n - 1) (n the line's count of non-NaN elements for nanquantile; a line
// with NaN takes the last rank, NaN, for quantile), and interpolate between
// the elements at the ranks below and above. Sorting, gathering and lerp are
// recorded, so the gradient flows to the elements chosen.
template <class T>
Tensor<T> quantile_of(const Tensor<T>& x, const Tensor<T>& q, std::optional<int64_t> dim, bool keepdim,
                      std::string_view interpolation, bool ignore_nan) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "quantile() input tensor must be either float or double dtype");
  check(x.numel() > 0, "quantile() input tensor must be non-empty");
  check(q.dim() <= 1, "quantile() q must be a scalar or 1D tensor");
  check(interpolation == "linear" || interpolation == "lower" || interpolation == "higher" ||
            interpolation == "midpoint" || interpolation == "nearest",
        "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got ", interpolation);
  const std::vector<T> qs = q.to_vector();
  check(std::all_of(qs.begin(), qs.end(), [](T v) { return v >= T(0) && v <= T(1); }),
        "quantile() q values must be in the range [0, 1]");
  // The result's shape without q's dim, and the lines: that shape with the
  // reduced dim (size 1 where kept) last.
  Shape shape;
  Tensor<T> lines;
  if (dim && x.dim() > 0) {
    const int64_t d = wrap_dim(*dim, x.dim());
    for (int64_t i = 0; i < x.dim(); ++i)
      if (i != d || keepdim) shape.push_back(i == d ? 1 : x.size(i));
    lines = x.unsqueeze(-1).transpose(d, -1);
  } else {
    if (dim) wrap_dim(*dim, x.dim());
    if (keepdim) shape = Shape(static_cast<std::size_t>(x.dim()), 1);
    lines = x.reshape({-1});
  }
  const int64_t n = lines.size(-1);
  Shape line_shape = shape;
  line_shape.push_back(n);
  const Tensor<T> sorted = std::get<0>(sort(lines)).reshape(line_shape);
  // The fractional ranks, one per q along the last dim; no gradient.
  Tensor<T> ranks = unrecorded([&] {
    const Tensor<T> q1 = q.reshape({-1});
    const Tensor<T>& s = sorted;
    if (ignore_nan) {
      const Tensor<T> last = cast<T>(sum(!isnan(s), {-1}, true) - int64_t{1});
      const Tensor<T> r = q1 * last;
      return Tensor<T>(where(r < T(0), T(0), r));
    }
    return Tensor<T>(where(any(isnan(s), {-1}, true), static_cast<T>(n - 1), q1 * static_cast<T>(n - 1)));
  });
  if (interpolation == "lower") ranks = floor(ranks);
  else if (interpolation == "higher") ranks = ceil(ranks);
  else if (interpolation == "nearest") ranks = round(ranks);  // half to even, as PyTorch
  const Tensor<int64_t> below = cast<int64_t>(ranks);
  Tensor<T> values = gather(sorted, -1, below);
  if (interpolation == "linear" || interpolation == "midpoint") {
    const Tensor<T> weights =
        interpolation == "midpoint" ? full_like(ranks, T(0.5)) : Tensor<T>(ranks - cast<T>(below));
    values = lerp(values, gather(sorted, -1, Tensor<int64_t>(cast<int64_t>(ceil(ranks)))), weights);
  }
  return q.dim() == 0 ? values.squeeze(-1) : movedim(values, int64_t{-1}, int64_t{0});
}

// quantile_of for q a number (checked here, with PyTorch's text for one) or
// a tensor, which must have e's element type already.
template <Expression E, class Q>
auto quantile_of_any(const E& e, const Q& q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation,
                     bool ignore_nan) {
  using T = typename E::value_type;
  Tensor<T> qs;
  if constexpr (Scalar<Q>) {
    const auto v = static_cast<double>(q);
    check(v >= 0 && v <= 1, "quantile() q must be in the range [0, 1] but got ", v);
    qs = full<T>(Shape{}, static_cast<T>(v));
  } else {
    static_assert(std::is_same_v<typename Q::value_type, T>,
                  "quantile() q tensor must be same dtype as the input tensor");
    qs = Tensor<T>(q);
  }
  return quantile_of(Tensor<T>(e), qs, dim, keepdim, interpolation, ignore_nan);
}

}  // namespace detail

// The q-th quantiles of the elements along dim (of all elements without a
// dim): q a number in [0, 1] (the result has the reduced shape) or a 1-D
// tensor of them (the quantiles along a new first dim). Between two
// elements, `interpolation` is "linear", "lower", "higher", "midpoint" or
// "nearest"; a line holding NaN gives NaN.
template <Expression E, class Q>
  requires(Scalar<Q> || Expression<Q>)
auto quantile(const E& e, const Q& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
              std::string_view interpolation = "linear") {
  return detail::quantile_of_any(e, q, dim, keepdim, interpolation, false);
}
// The same with NaN left out of each line (NaN only for a line of NaNs).
template <Expression E, class Q>
  requires(Scalar<Q> || Expression<Q>)
auto nanquantile(const E& e, const Q& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                 std::string_view interpolation = "linear") {
  return detail::quantile_of_any(e, q, dim, keepdim, interpolation, true);
}

}  // namespace tsr
