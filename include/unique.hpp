// unique and unique_consecutive: the distinct elements of a tensor (or the
// distinct slices along a dim), with where each input element went (inverse)
// and how many each kept one stands for (counts).
//
// unique always sorts, as PyTorch does on the CPU whatever `sorted` says;
// NaN orders last, and as NaN != NaN every NaN is its own value (PyTorch
// 1.13 merges them into a wrong count; later versions do as here). Results
// have no gradient. As in libtorch, the three-result forms return an empty
// inverse or counts where they were not asked for.
#pragma once
#include <algorithm>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

#include "sort.hpp"

namespace tsr {
namespace detail {

// The runs of equal slices of a contiguous [n, m] host tensor (its rows),
// read in sorted order (sort) or as they stand: the first row of each run,
// each row's run, and each run's length.
struct Runs {
  std::vector<int64_t> first, run_of, length;
};

template <class T>
Runs runs_of_rows(const Tensor<T>& rows, int64_t n, int64_t m, bool sort) {
  const T* p = rows.data_ptr();
  using A = acc_t<T>;
  auto row = [&](int64_t r, int64_t j) { return convert<A>(p[r * m + j]); };
  std::vector<int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (sort) {
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      for (int64_t j = 0; j < m; ++j) {
        if (sorts_before(row(a, j), row(b, j))) return true;
        if (sorts_before(row(b, j), row(a, j))) return false;
      }
      return false;
    });
  }
  auto same = [&](int64_t a, int64_t b) {
    for (int64_t j = 0; j < m; ++j)
      if (!(row(a, j) == row(b, j))) return false;  // NaN equals nothing
    return true;
  };
  Runs r;
  r.run_of.resize(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = order[static_cast<std::size_t>(i)];
    if (i == 0 || !same(r.first.back(), at)) {
      r.first.push_back(at);
      r.length.push_back(0);
    }
    r.run_of[static_cast<std::size_t>(at)] = static_cast<int64_t>(r.first.size()) - 1;
    ++r.length.back();
  }
  return r;
}

// v as an int64 tensor of the given shape on `device`, or an empty one where
// the result was not asked for (libtorch's convention).
inline Tensor<int64_t> tensor_of(std::vector<int64_t> v, const Shape& shape, Device device, bool wanted) {
  if (!wanted) return empty<int64_t>({0}, device);
  return placed_on(tensor<int64_t>(std::move(v), shape), device);
}

// unique (sort) or unique_consecutive of the elements, or of the slices
// along dim where it is given: the runs of equal rows of the input seen as
// [n, m], n elements or slices of m elements each.
template <class T>
std::tuple<Tensor<T>, Tensor<int64_t>, Tensor<int64_t>> distinct(const Tensor<T>& x, std::optional<int64_t> dim,
                                                                 bool sort, bool return_inverse, bool return_counts) {
  const NoGradGuard no_grad;  // no gradient, as in PyTorch
  if (dim) check<IndexError>(x.dim() > 0, "Dimension specified as ", *dim, " but tensor has no dimensions");
  const Tensor<T> source = dim ? x : x.reshape({-1});
  const int64_t d = dim ? wrap_dim(*dim, x.dim()) : 0;
  const int64_t n = source.size(d);
  check(n == 0 || x.numel() > 0, "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
  // Slices compare element by element in the order of x.transpose(0, dim),
  // as PyTorch's do (which sorts them differently from movedim's order).
  Runs r = runs_of_rows(host_contiguous(source.transpose(0, d)), n, n == 0 ? 0 : x.numel() / n, sort);
  const auto k = static_cast<int64_t>(r.first.size());
  Tensor<T> values = take_along(source, d, k, [&](int64_t i) { return r.first[static_cast<std::size_t>(i)]; });
  const Shape inverse_shape = dim ? Shape{n} : x.sizes();
  return {std::move(values), tensor_of(std::move(r.run_of), inverse_shape, x.device(), return_inverse),
          tensor_of(std::move(r.length), {k}, x.device(), return_counts)};
}

}  // namespace detail

// The distinct elements, sorted: a 1-D tensor.
template <Expression E>
auto unique(const E& e) {
  return std::get<0>(detail::distinct(detail::unrecorded_tensor(e), std::nullopt, true, false, false));
}
// {values, inverse, counts}: the distinct elements, sorted; for each input
// element the position of its value (inverse, in the input's shape); how
// often each value occurs (counts). `sorted` is accepted for PyTorch's
// signature: the values are always sorted.
template <Expression E>
auto unique(const E& e, bool sorted, bool return_inverse, bool return_counts = false) {
  (void)sorted;
  return detail::distinct(detail::unrecorded_tensor(e), std::nullopt, true, return_inverse, return_counts);
}
// The distinct slices along dim, sorted (compared element by element, in
// the order of x.transpose(0, dim), as PyTorch); inverse gives each input
// slice's position.
template <Expression E>
auto unique_dim(const E& e, int64_t dim, bool sorted = true, bool return_inverse = false, bool return_counts = false) {
  (void)sorted;
  return detail::distinct(detail::unrecorded_tensor(e), dim, true, return_inverse, return_counts);
}
// Each run of equal consecutive elements (or slices along dim) reduced to
// one, in the input's order: {values, inverse, counts}.
template <Expression E>
auto unique_consecutive(const E& e, bool return_inverse = false, bool return_counts = false,
                        std::optional<int64_t> dim = std::nullopt) {
  return detail::distinct(detail::unrecorded_tensor(e), dim, false, return_inverse, return_counts);
}

// Whether each element of `elements` is among `test_elements` (compared in
// their common type; NaN is never found, as NaN != NaN), or is not, with
// invert. The result has elements' shape and no gradient. assume_unique is
// accepted for PyTorch's signature; the search does not need it.
template <class T, class U>
Tensor<bool> isin(const Tensor<T>& elements, const Tensor<U>& test_elements, bool assume_unique = false,
                  bool invert = false) {
  (void)assume_unique;
  static_assert(!std::is_same_v<T, bool> && !std::is_same_v<U, bool>,
                "Unsupported input type encountered for isin(): Bool");
  using C = promote_t<T, U>;
  const Tensor<C> test = detail::host_contiguous(Tensor<C>(cast<C>(test_elements)));
  std::vector<C> sorted;
  sorted.reserve(static_cast<std::size_t>(test.numel()));
  for (int64_t i = 0; i < test.numel(); ++i)
    if (const C v = test.data_ptr()[i]; v == v) sorted.push_back(v);  // NaN is never found
  std::sort(sorted.begin(), sorted.end());
  const Tensor<C> x = detail::host_contiguous(Tensor<C>(cast<C>(elements)));
  auto out = Tensor<bool>::allocate(x.sizes());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const C v = x.data_ptr()[i];  // a NaN compares neither less nor greater: binary_search would find it
    out.data_ptr()[i] = (v == v && std::binary_search(sorted.begin(), sorted.end(), v)) != invert;
  }
  return detail::placed_on(out, elements.device());
}
// One test element: elements == test_element, compared as `==` compares
// (an integer tensor against 2.5 in float).
template <class T, Scalar S>
Tensor<bool> isin(const Tensor<T>& elements, S test_element, bool assume_unique = false, bool invert = false) {
  (void)assume_unique;
  static_assert(!std::is_same_v<T, bool>, "Unsupported input type encountered for isin(): Bool");
  if (invert) return elements != test_element;
  return elements == test_element;
}
// One element: a 0-d result (a floating number against integers compares
// in float, as PyTorch's wrapped number does).
template <Scalar S, class U>
Tensor<bool> isin(S element, const Tensor<U>& test_elements, bool assume_unique = false, bool invert = false) {
  using E = std::conditional_t<std::is_floating_point_v<S> && !is_floating_v<U>, float, U>;
  return isin(full<E>({}, detail::convert<E>(element)), test_elements, assume_unique, invert);
}

}  // namespace tsr
