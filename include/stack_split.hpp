// numpy-style joining and splitting: hstack, vstack (row_stack), dstack,
// column_stack; tensor_split, hsplit, vsplit, dsplit.
//
// The joins are cat after raising each tensor to the rank the direction
// needs (atleast_1d/2d/3d), so their gradients are cat's; the splits return
// views, as split does.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>
#include "shape_ops.hpp"

namespace tsr {

namespace detail {
template <class T, class Raise>
Tensor<T> join_raised(const std::vector<Tensor<T>>& tensors, std::string_view name, Raise raise, int64_t dim) {
  check(!tensors.empty(), name, " expects a non-empty TensorList");
  std::vector<Tensor<T>> raised;
  raised.reserve(tensors.size());
  for (const auto& t : tensors) raised.push_back(raise(t));
  return cat(raised, dim);
}
}  // namespace detail

// Joined along the first dim for 1-D tensors (0-D ones become 1-D), along
// the second otherwise (decided by the first tensor, as PyTorch).
template <class T>
Tensor<T> hstack(const std::vector<Tensor<T>>& tensors) {
  detail::check(!tensors.empty(), "hstack expects a non-empty TensorList");
  const int64_t dim = atleast_1d(tensors.front()).dim() == 1 ? 0 : 1;
  return detail::join_raised(tensors, "hstack", [](const Tensor<T>& t) { return atleast_1d(t); }, dim);
}
template <class T>
Tensor<T> hstack(std::initializer_list<Tensor<T>> tensors) {
  return hstack(std::vector<Tensor<T>>(tensors));
}

// Rows on top of each other: 0-D and 1-D tensors become rows.
template <class T>
Tensor<T> vstack(const std::vector<Tensor<T>>& tensors) {
  return detail::join_raised(tensors, "vstack", [](const Tensor<T>& t) { return atleast_2d(t); }, 0);
}
template <class T>
Tensor<T> vstack(std::initializer_list<Tensor<T>> tensors) {
  return vstack(std::vector<Tensor<T>>(tensors));
}
template <class T>
Tensor<T> row_stack(const std::vector<Tensor<T>>& tensors) {
  return vstack(tensors);
}
template <class T>
Tensor<T> row_stack(std::initializer_list<Tensor<T>> tensors) {
  return vstack(std::vector<Tensor<T>>(tensors));
}

// Joined along the third dim (depth): a 1-D [n] becomes [1, n, 1], a 2-D
// [m, n] becomes [m, n, 1].
template <class T>
Tensor<T> dstack(const std::vector<Tensor<T>>& tensors) {
  return detail::join_raised(tensors, "dstack", [](const Tensor<T>& t) { return atleast_3d(t); }, 2);
}
template <class T>
Tensor<T> dstack(std::initializer_list<Tensor<T>> tensors) {
  return dstack(std::vector<Tensor<T>>(tensors));
}

// Columns side by side: 0-D and 1-D tensors become [n, 1] columns, others
// join along their second dim.
template <class T>
Tensor<T> column_stack(const std::vector<Tensor<T>>& tensors) {
  return detail::join_raised(
      tensors, "column_stack",
      [](const Tensor<T>& t) { return t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t; }, 1);
}
template <class T>
Tensor<T> column_stack(std::initializer_list<Tensor<T>> tensors) {
  return column_stack(std::vector<Tensor<T>>(tensors));
}

// `sections` views along dim, as equal as possible: the first n % sections
// get one element more (unlike chunk, always `sections` pieces, some maybe
// empty).
template <class T>
std::vector<Tensor<T>> tensor_split(const Tensor<T>& x, int64_t sections, int64_t dim = 0) {
  detail::check(x.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  detail::check(sections > 0, "number of sections must be larger than 0, got ", sections);
  dim = detail::wrap_dim(dim, x.dim());
  const int64_t n = x.size(dim), base = n / sections, longer = n % sections;
  std::vector<Tensor<T>> pieces;
  pieces.reserve(static_cast<std::size_t>(sections));
  int64_t at = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t size = base + (i < longer ? 1 : 0);
    pieces.push_back(x.slice(dim, at, at + size));
    at += size;
  }
  return pieces;
}

// Views split before each of `indices` along dim: [0, i0), [i0, i1), ...,
// [ik, end), each bound clamped (and negative ones counted from the end) as
// Python's slices are.
template <class T>
std::vector<Tensor<T>> tensor_split(const Tensor<T>& x, const std::vector<int64_t>& indices, int64_t dim = 0) {
  detail::check(x.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  dim = detail::wrap_dim(dim, x.dim());
  std::vector<Tensor<T>> pieces;
  pieces.reserve(indices.size() + 1);
  int64_t start = 0;
  for (int64_t end : indices) {
    pieces.push_back(x.slice(dim, start, end));
    start = end;
  }
  pieces.push_back(x.slice(dim, start, x.size(dim)));
  return pieces;
}
template <class T>
std::vector<Tensor<T>> tensor_split(const Tensor<T>& x, std::initializer_list<int64_t> indices, int64_t dim = 0) {
  return tensor_split(x, std::vector<int64_t>(indices), dim);
}

namespace detail {
// hsplit, vsplit, dsplit: tensor_split along `dim`, for tensors of at least
// `min_dims` dims; a number of sections must divide the dim evenly.
template <class T>
void check_directional_split(const Tensor<T>& x, std::string_view name, int64_t min_dims) {
  // PyTorch's wording, "at least 2 dimension" included.
  check(x.dim() >= min_dims, "torch.", name, " requires a tensor with at least ", min_dims,
        " dimension, but got a tensor with ", x.dim(), " dimensions!");
}
template <class T>
std::vector<Tensor<T>> directional_split(const Tensor<T>& x, int64_t sections, std::string_view name, int64_t min_dims,
                                         int64_t dim) {
  check_directional_split(x, name, min_dims);
  check(sections != 0 && x.size(dim) % sections == 0, "torch.", name, " attempted to split along dimension ", dim,
        ", but the size of the dimension ", x.size(dim), " is not divisible by the split_size ", sections, "!");
  return tensor_split(x, sections, dim);
}
}  // namespace detail

// Split along the second dim (the first for 1-D tensors).
template <class T>
std::vector<Tensor<T>> hsplit(const Tensor<T>& x, int64_t sections) {
  return detail::directional_split(x, sections, "hsplit", 1, x.dim() == 1 ? 0 : 1);
}
template <class T>
std::vector<Tensor<T>> hsplit(const Tensor<T>& x, const std::vector<int64_t>& indices) {
  detail::check_directional_split(x, "hsplit", 1);
  return tensor_split(x, indices, x.dim() == 1 ? 0 : 1);
}
template <class T>
std::vector<Tensor<T>> hsplit(const Tensor<T>& x, std::initializer_list<int64_t> indices) {
  return hsplit(x, std::vector<int64_t>(indices));
}

// Split along the first dim, of a tensor with at least two.
template <class T>
std::vector<Tensor<T>> vsplit(const Tensor<T>& x, int64_t sections) {
  return detail::directional_split(x, sections, "vsplit", 2, 0);
}
template <class T>
std::vector<Tensor<T>> vsplit(const Tensor<T>& x, const std::vector<int64_t>& indices) {
  detail::check_directional_split(x, "vsplit", 2);
  return tensor_split(x, indices, 0);
}
template <class T>
std::vector<Tensor<T>> vsplit(const Tensor<T>& x, std::initializer_list<int64_t> indices) {
  return vsplit(x, std::vector<int64_t>(indices));
}

// Split along the third dim, of a tensor with at least three.
template <class T>
std::vector<Tensor<T>> dsplit(const Tensor<T>& x, int64_t sections) {
  return detail::directional_split(x, sections, "dsplit", 3, 2);
}
template <class T>
std::vector<Tensor<T>> dsplit(const Tensor<T>& x, const std::vector<int64_t>& indices) {
  detail::check_directional_split(x, "dsplit", 3);
  return tensor_split(x, indices, 2);
}
template <class T>
std::vector<Tensor<T>> dsplit(const Tensor<T>& x, std::initializer_list<int64_t> indices) {
  return dsplit(x, std::vector<int64_t>(indices));
}

}  // namespace tsr
