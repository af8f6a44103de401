// Binning: searchsorted and bucketize (where values fall in a sorted
// sequence), bincount (how often each non-negative integer occurs) and histc
// (a histogram of equal-width bins).
//
// None of them has a gradient: positions and counts are integers, and
// PyTorch records histc and a weighted bincount only to refuse their
// backward. They compute on the host; a tensor on a device is copied there
// and the result copied back.
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <string_view>
#include <vector>

#include "sort.hpp"

namespace tsr {
namespace detail {

// The position of v in line[0, n), sorted ascending with NaN last (sort's
// order) and read through `order` when it is given: the first element not
// before v (left), or the first after v (right). NaN in the line is where
// sort puts it; PyTorch's search treats it as smaller than every value, so
// its answer depends on the search's path.
template <class C, class B>
int64_t bisect(const B* line, const int64_t* order, int64_t n, C v, bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const C m = convert<C>(line[order ? order[mid] : mid]);
    if (right ? !sorts_before(v, m) : sorts_before(m, v)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// searchsorted and bucketize: for every value, its position in the line of
// `boundaries` it belongs to (the one line of a 1-D boundaries, else the line
// with the value's leading indices).
template <class Index, class B, class V>
Tensor<Index> search_sorted(const Tensor<B>& boundaries, const Tensor<V>& values, bool right,
                            const Tensor<int64_t>& sorter) {
  static_assert(std::is_same_v<Index, int64_t> || std::is_same_v<Index, int32_t>,
                "searchsorted: positions are int64, or int32 (PyTorch's out_int32)");
  static_assert(!std::is_same_v<B, bool> && !std::is_same_v<V, bool>,
                "searchsorted: bool tensors are not supported, as in PyTorch");
  check(boundaries.dim() > 0, "torch.searchsorted(): boundaries tensor should have positive dimension, but got ",
        boundaries.dim(), " dimension");
  if (boundaries.dim() > 1) {
    check(values.dim() > 0,
          "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got "
          "boundaries tensor dim(",
          boundaries.dim(), ") and input value's dim(", values.dim(), ") numel(", values.numel(), ")");
    const Shape& bs = boundaries.sizes();
    const Shape& vs = values.sizes();
    check(bs.size() == vs.size() && std::equal(bs.begin(), bs.end() - 1, vs.begin()),
          "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
          "tensor and input value tensor must match, but we got boundaries tensor ",
          bs, " and input value tensor ", vs);
  }
  const int64_t n = boundaries.size(-1);
  const Tensor<B> line = host_contiguous(boundaries);
  Tensor<int64_t> order;
  if (sorter.defined()) {
    check(sorter.sizes() == boundaries.sizes(),
          "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor ",
          boundaries.sizes(), " and got sorter tensor ", sorter.sizes());
    order = host_contiguous(sorter);
    const int64_t* o = order.data_ptr();
    check(std::all_of(o, o + order.numel(), [n](int64_t i) { return i >= 0 && i < n; }),
          "torch.searchsorted(): sorter index out of range");
  }
  const Tensor<V> v = host_contiguous(values);
  auto out = Tensor<Index>::allocate(values.sizes());
  using C = acc_t<promote_t<B, V>>;
  const B* b = line.data_ptr();
  const V* in = v.data_ptr();
  const int64_t* o = order.defined() ? order.data_ptr() : nullptr;
  Index* dst = out.data_ptr();
  const int64_t per_line = boundaries.dim() == 1 ? v.numel() : std::max<int64_t>(values.size(-1), 1);
  const auto log_n = static_cast<int64_t>(std::bit_width(static_cast<uint64_t>(n)));
  run_units(v.numel(), v.numel() * (log_n + 1), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t start = boundaries.dim() == 1 ? 0 : i / per_line * n;
      dst[i] = static_cast<Index>(bisect(b + start, o ? o + start : nullptr, n, convert<C>(in[i]), right));
    }
  });
  return placed_on(std::move(out), values.device());
}

// A C++ number as the 0-d value tensor it stands for beside a tensor of T.
template <class T, Scalar S>
auto scalar_value(S s) {
  using W = wrapped_scalar_t<S, T>;
  return full<W>(Shape{}, convert<W>(s));
}

inline bool side_is_right(std::string_view side) {
  check(side == "left" || side == "right", "torch.searchsorted(): side can only be 'left' or 'right' but got ", side);
  return side == "right";
}

// The bin counts of a 1-D tensor of non-negative integers: each element adds
// its weight (1 without weights) to its bin. PyTorch's checks, in its order.
template <class Out, class T, class W>
Tensor<Out> bin_counts(const Tensor<T>& x, const Tensor<W>* weights, int64_t minlength) {
  static_assert(!std::is_same_v<T, bool>, "bincount: bool tensors are not supported, as in PyTorch");
  static_assert(is_integral_v<T>, "bincount only supports 1-d non-negative integral inputs.");
  check(minlength >= 0, "minlength should be >= 0");
  const Tensor<T> c = host_contiguous(x);
  const T* p = c.data_ptr();
  const int64_t n = c.numel();
  check(x.dim() == 1 && std::all_of(p, p + n, [](T v) { return v >= 0; }),
        "bincount only supports 1-d non-negative integral inputs.");
  Tensor<W> w;
  if (weights) {
    check(weights->dim() == 1 && weights->numel() == n, "weights should be 1-d and have the same length as input");
    w = host_contiguous(*weights);
  }
  const int64_t largest = n == 0 ? -1 : static_cast<int64_t>(*std::max_element(p, p + n));
  const int64_t bins = std::max(minlength, largest + 1);
  auto out = zeros<Out>({bins});
  Out* dst = out.data_ptr();
  const W* pw = weights ? w.data_ptr() : nullptr;
  for (int64_t i = 0; i < n; ++i) dst[p[i]] += pw ? convert<Out>(pw[i]) : Out(1);  // in order, as PyTorch adds
  return placed_on(std::move(out), x.device());
}

}  // namespace detail

// Where each value would be inserted into sorted_sequence to keep it sorted:
// the first position whose element is not less than the value (right: the
// first greater than it). A 1-D sequence serves every value; an N-D one
// holds one sequence per line, matching the values' leading dims. `sorter`,
// where given, holds the positions that sort an unsorted sequence (argsort's
// result). Positions are int64; searchsorted<int32_t>(...) gives int32, as
// PyTorch's out_int32.
template <class Index = int64_t, Expression S, Expression V>
Tensor<Index> searchsorted(const S& sorted_sequence, const V& values, bool right = false,
                           const Tensor<int64_t>& sorter = {}) {
  return detail::search_sorted<Index>(detail::unrecorded_tensor(sorted_sequence), detail::unrecorded_tensor(values), right,
                                      sorter);
}
// The same, with PyTorch's `side`: "left" or "right".
template <class Index = int64_t, Expression S, Expression V>
Tensor<Index> searchsorted(const S& sorted_sequence, const V& values, std::string_view side,
                           const Tensor<int64_t>& sorter = {}) {
  return searchsorted<Index>(sorted_sequence, values, detail::side_is_right(side), sorter);
}
template <class Index = int64_t, Expression S, Expression V>
Tensor<Index> searchsorted(const S& sorted_sequence, const V& values, const char* side,
                           const Tensor<int64_t>& sorter = {}) {  // (a literal would otherwise convert to bool)
  return searchsorted<Index>(sorted_sequence, values, std::string_view(side), sorter);
}
// One value: a 0-d result.
template <class Index = int64_t, Expression S, Scalar N>
Tensor<Index> searchsorted(const S& sorted_sequence, N value, bool right = false, const Tensor<int64_t>& sorter = {}) {
  return searchsorted<Index>(sorted_sequence, detail::scalar_value<typename S::value_type>(value), right, sorter);
}

// The bucket of each value among 1-D sorted boundaries: i such that
// boundaries[i - 1] < x <= boundaries[i] (right: boundaries[i - 1] <= x <
// boundaries[i]); searchsorted with its arguments swapped.
template <class Index = int64_t, Expression V, Expression B>
Tensor<Index> bucketize(const V& values, const B& boundaries, bool right = false) {
  const auto b = detail::unrecorded_tensor(boundaries);
  detail::check(b.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", b.dim(), ")");
  return detail::search_sorted<Index>(b, detail::unrecorded_tensor(values), right, Tensor<int64_t>{});
}
template <class Index = int64_t, Scalar N, Expression B>
Tensor<Index> bucketize(N value, const B& boundaries, bool right = false) {
  return bucketize<Index>(detail::scalar_value<typename B::value_type>(value), boundaries, right);
}

// How often each value 0, 1, ..., max(x) occurs in a 1-D integer tensor, in
// at least `minlength` bins.
template <Expression E>
Tensor<int64_t> bincount(const E& x, int64_t minlength = 0) {
  const Tensor<int64_t>* no_weights = nullptr;
  return detail::bin_counts<int64_t>(detail::unrecorded_tensor(x), no_weights, minlength);
}
// The sum of weights[i] over the i with x[i] = bin: float for float weights,
// double for any other type, as in PyTorch.
template <Expression E, Expression W>
auto bincount(const E& x, const W& weights, int64_t minlength = 0) {
  using Out = std::conditional_t<std::is_same_v<typename W::value_type, float>, float, double>;
  const auto w = detail::unrecorded_tensor(weights);
  return detail::bin_counts<Out>(detail::unrecorded_tensor(x), &w, minlength);
}

// A histogram of all elements in `bins` equal-width bins over [min, max]
// (min = max: the data's own range, widened by 1 each way where that is one
// value). Elements outside the range and NaN are left out; the last bin
// includes its right edge.
template <Expression E>
auto histc(const E& e, int64_t bins = 100, double min = 0, double max = 0) {
  using T = typename E::value_type;
  static_assert(is_floating_v<T>, "histc: integer and bool tensors are not supported, as in PyTorch");
  using A = acc_t<T>;
  detail::check(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  const Tensor<T> t = detail::unrecorded_tensor(e);
  const Tensor<T> x = detail::host_contiguous(t);
  const T* p = x.data_ptr();
  const int64_t n = x.numel();
  double lo = min, hi = max;
  if (lo == hi && n > 0) {  // the data's range, as PyTorch takes it (NaN where the data holds NaN)
    const auto [smallest, largest] = aminmax(t);
    lo = static_cast<double>(detail::convert<A>(smallest.item()));
    hi = static_cast<double>(detail::convert<A>(largest.item()));
  }
  if (lo == hi) lo -= 1, hi += 1;
  detail::check(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  detail::check(lo < hi, "torch.histc: max must be larger than min");
  // The outer edges in T, as PyTorch's linspace of bins + 1 edges holds them;
  // an element's bin is its offset scaled in T, truncated (PyTorch's
  // arithmetic, which can differ from a search of the inner edges by one
  // bin for an element right at an edge).
  const A left = detail::convert<A>(detail::convert<T>(lo)), right = detail::convert<A>(detail::convert<T>(hi));
  std::vector<A> counts(static_cast<std::size_t>(bins));
  for (int64_t i = 0; i < n; ++i) {
    const A v = detail::convert<A>(p[i]);
    if (!(v >= left && v <= right)) continue;
    const auto bin = static_cast<int64_t>((v - left) * static_cast<A>(bins) / (right - left));
    counts[static_cast<std::size_t>(std::min(bin, bins - 1))] += A(1);
  }
  auto out = Tensor<T>::allocate({bins});
  std::transform(counts.begin(), counts.end(), out.data_ptr(), [](A c) { return detail::convert<T>(c); });
  return detail::placed_on(std::move(out), t.device());
}

}  // namespace tsr
