// Writes at positions along one dim or at a mask's positions: index_add,
// index_copy, index_fill and masked_scatter, out of place and in place
// (the trailing underscore), with PyTorch 1.13's checks and error texts.
//
// The index_* functions are scatters (indexing.hpp) whose index is the 1-D
// index spread over the slices it selects: slice i of the source goes to
// slice index[i] of the target. So they share scatter's loops, device path
// and gradient rule: the target's gradient passes through (index_add) or is
// zero where written (index_copy, index_fill), the source's is the
// gradient's slices at index.
#pragma once
#include <cstdint>
#include <sstream>

#include "indexing.hpp"

namespace tsr {
namespace detail {

// index (1-D or 0-d) as a scatter's index into a target of `slices`' shape
// with one position per slice along dim (a view: the 1-D index expanded).
inline Tensor<int64_t> spread_index(const Tensor<int64_t>& index, int64_t dim, const Shape& slices) {
  if (slices.empty()) return index.reshape({});
  Shape line(slices.size(), 1);
  line[static_cast<std::size_t>(dim)] = index.numel();
  return index.reshape(line).expand(slices);
}

// self's shape with dim's size replaced by n: the shape of the slices an
// index of n positions selects.
template <class T>
Shape sliced_shape(const Tensor<T>& self, int64_t dim, int64_t n) {
  Shape s = self.sizes();
  if (!s.empty()) s[static_cast<std::size_t>(dim)] = n;
  return s;
}

// The sizes of t without dim, separated by spaces (index_copy's message).
template <class T>
std::string slice_sizes_text(const Tensor<T>& t, int64_t dim) {
  std::ostringstream os;
  for (int64_t d = 0, first = 1; d < t.dim(); ++d)
    if (d != dim) os << (first ? "" : " ") << t.size(d), first = 0;
  return os.str();
}

// index_add's checks; returns the source spread to the slices' shape (its
// slices broadcast to self's, as PyTorch's slice-by-slice add does) and
// multiplied by alpha, recorded where autograd records.
template <class T>
Tensor<T> index_add_source(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, const Tensor<T>& source,
                           T alpha) {
  check<IndexError>(index.dim() <= 1, "index_add_(): Index is supposed to be a vector, but got dim: ", index.dim(),
                    " with type: Long and size: ", index.sizes());
  const int64_t n = index.numel(), source_n = source.dim() == 0 ? 1 : source.size(dim);
  check(n == source_n, "index_add_(): Number of indices (", n, ") should be equal to source.size(dim): (", source_n,
        "), for dim: ", dim);
  const Tensor<int64_t> idx = host_indices(index, self.device());
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  for (int64_t i = 0; i < n; ++i)
    check<IndexError>(idx.data_ptr()[i] >= 0 && idx.data_ptr()[i] < size, "index out of range in self");
  const Tensor<T> scaled = alpha == T(1) ? source : Tensor<T>(source * alpha);
  return scaled.dim() == 0 ? scaled.reshape(sliced_shape(self, dim, 1)) : scaled.expand(sliced_shape(self, dim, n));
}

// index_copy's checks, with its texts.
template <class T>
void check_index_copy(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, const Tensor<T>& source) {
  check<IndexError>(index.dim() <= 1, "index_copy_(): Index should have dimension 1 or 0 (got ", index.dim(), ")");
  const int64_t n = index.numel(), source_n = source.dim() == 0 ? 1 : source.size(dim);
  check<IndexError>(n == source_n, "index_copy_(): Number of indices (", n, ") should be equal to source.size(dim) (",
                    source_n, ")");
  if (self.dim() > 0 && source.dim() > 0) {
    check<IndexError>(self.dim() == source.dim(), "index_copy_(): When source and destination are not scalars, their "
                      "dimensionality must match. Source dimensionality (", source.dim(), "), destination "
                      "dimensionality (", self.dim(), ")");
    for (int64_t d = 0; d < self.dim(); ++d)
      check(d == dim || self.size(d) == source.size(d), "index_copy_(): Source/destination tensor must have same "
            "slice shapes. Destination slice shape: ", slice_sizes_text(self, dim), " at dimension ", dim,
            " and source slice shape: ", slice_sizes_text(source, dim), " at dimension 0.");
  }
  const Tensor<int64_t> idx = host_indices(index, self.device());
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = idx.data_ptr()[i];
    check<IndexError>(v >= 0 && v < size, "index_copy_(): index ", v, " is out of bounds for dimension ", dim,
                      " with size ", size);
  }
}

// index_fill's checks; returns the index with negative positions counted
// from the end.
template <class T>
Tensor<int64_t> index_fill_positions(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index) {
  check(index.dim() <= 1, "Index has to be a vector/scalar");
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  const Tensor<int64_t> idx = host_contiguous(index);
  check_indices(idx, -size, size, dim);
  if (std::none_of(idx.data_ptr(), idx.data_ptr() + idx.numel(), [](int64_t v) { return v < 0; })) return index;
  auto wrapped = Tensor<int64_t>::allocate(idx.sizes());
  for (int64_t i = 0; i < idx.numel(); ++i) wrapped.data_ptr()[i] = idx.data_ptr()[i] + (idx.data_ptr()[i] < 0 ? size : 0);
  return placed_on(wrapped, index.device());
}

// A copy of self with src scattered along dim at spread (added with add),
// recorded as `name`.
template <class T>
Tensor<T> scattered_copy(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& spread, const Tensor<T>& src,
                         bool add, const char* name) {
  auto out = unrecorded([&] {
    Tensor<T> o = self.clone();
    const Tensor<T> s = src.detach();
    scatter_into(o, dim, spread, &s, T(0), add);
    return o;
  });
  record_op<autograd::tag::Scatter>(out, self, dim, spread, src, add, name);
  return out;
}

}  // namespace detail

// self with alpha * source[..., i, ...] added to its slice index[i] along
// dim (a repeated index adds each time); source's slices broadcast to
// self's, as in PyTorch.
template <class T, Scalar S = int>
Tensor<T> index_add(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index,
                    const std::type_identity_t<Tensor<T>>& source, S alpha = 1) {
  dim = detail::wrap_dim(dim, self.dim());
  const Tensor<T> src = detail::index_add_source(self, dim, index, source, detail::convert<T>(alpha));
  return detail::scattered_copy(self, dim, detail::spread_index(index, dim, src.sizes()), src, true,
                                "IndexAddBackward0");
}
template <class T, Scalar S = int>
Tensor<T>& index_add_(Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index,
                      const std::type_identity_t<Tensor<T>>& source, S alpha = 1) {
  dim = detail::wrap_dim(dim, self.dim());
  const Tensor<T> src = detail::index_add_source(self, dim, index, source, detail::convert<T>(alpha));
  return scatter_add_(self, dim, detail::spread_index(index, dim, src.sizes()), src);
}

// self with its slice index[i] along dim replaced by source's slice i
// (where an index repeats, the last one wins).
template <class T>
Tensor<T> index_copy(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index,
                     const std::type_identity_t<Tensor<T>>& source) {
  dim = detail::wrap_dim(dim, self.dim());
  detail::check_index_copy(self, dim, index, source);
  const Shape slices = detail::sliced_shape(self, dim, index.numel());
  return detail::scattered_copy(self, dim, detail::spread_index(index, dim, slices), source.reshape(slices), false,
                                "IndexCopyBackward0");
}
template <class T>
Tensor<T>& index_copy_(Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index,
                       const std::type_identity_t<Tensor<T>>& source) {
  dim = detail::wrap_dim(dim, self.dim());
  detail::check_index_copy(self, dim, index, source);
  const Shape slices = detail::sliced_shape(self, dim, index.numel());
  return scatter_(self, dim, detail::spread_index(index, dim, slices), source.reshape(slices));
}

// self with value in its slices index[i] along dim (negative indices count
// from the end).
template <class T, Scalar S>
Tensor<T> index_fill(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, S value) {
  dim = detail::wrap_dim(dim, self.dim());
  const Tensor<int64_t> positions = detail::index_fill_positions(self, dim, index);
  const Tensor<int64_t> spread = detail::spread_index(positions, dim, detail::sliced_shape(self, dim, index.numel()));
  auto out = detail::unrecorded([&] {
    Tensor<T> o = self.clone();
    detail::scatter_into<T>(o, dim, spread, nullptr, detail::convert<T>(value), false);
    return o;
  });
  detail::record_op<autograd::tag::Scatter>(out, self, dim, spread, "IndexFillBackward0");
  return out;
}
template <class T, Scalar S>
Tensor<T>& index_fill_(Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, S value) {
  dim = detail::wrap_dim(dim, self.dim());
  const Tensor<int64_t> positions = detail::index_fill_positions(self, dim, index);
  return scatter_(self, dim, detail::spread_index(positions, dim, detail::sliced_shape(self, dim, index.numel())),
                  value);
}

// self with source's elements, in order, at the positions where mask is
// true (self and mask broadcast); source must have at least as many
// elements as the mask has true ones. Recorded as a scatter into the
// flattened tensor.
template <class T, Expression M>
Tensor<T> masked_scatter(const Tensor<T>& self, const M& mask, const std::type_identity_t<Tensor<T>>& source) {
  static_assert(std::is_same_v<typename M::value_type, bool>, "masked_scatter: expected BoolTensor for mask");
  const Shape shape = detail::broadcast_shapes(self.sizes(), mask.sizes());
  const Tensor<bool> m = Tensor<bool>(Tensor<bool>(mask).expand(shape));
  if (m.device() != self.device()) [[unlikely]]  // as masked_select: the mask goes where self is
    detail::fail_mixed_devices(self.device(), m.device());
  Tensor<int64_t> positions = detail::true_positions(m);
  detail::check(source.numel() >= positions.numel(), "Number of elements of source < number of ones in mask");
  positions = detail::placed_on(positions, self.device());
  const Tensor<T> flat = self.expand(shape).reshape({-1});
  return scatter(flat, 0, positions, source.reshape({-1}).narrow(0, 0, positions.numel())).view(shape);
}
template <class T, Expression M>
Tensor<T>& masked_scatter_(Tensor<T>& self, const M& mask, const std::type_identity_t<Tensor<T>>& source) {
  static_assert(std::is_same_v<typename M::value_type, bool>, "masked_scatter_: expected BoolTensor for mask");
  return self.copy_(masked_scatter(self, Tensor<bool>(mask).expand(self.sizes()), source));
}

}  // namespace tsr
