// Order statistics along a dim: kthvalue, median and nanmedian, each with
// the position of the element it chose (int64), and median and nanmedian
// over all elements.
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
#include <tuple>
#include <vector>

#include "reduce.hpp"
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

}  // namespace tsr
