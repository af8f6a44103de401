// Indexing with several integer tensors or bool masks at once, Python's
// x[i, :, j], x[mask] and x[i, :, j] = v: torch.index and index_put. A mask
// stands for the coordinates of its true elements; the index tensors
// broadcast together; the dims they index become one flattened dim, so both
// reduce to the one-dim index and index_add/index_copy (and differentiate as
// those do).
#pragma once
#include <numeric>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

#include "index_writes.hpp"

namespace tsr {

// One tensor of an advanced index: int64 positions along one dim (negative
// ones count from the end), or a bool mask over as many dims as it has,
// which stands for the coordinates of its true elements (Python's x[mask]).
// An expression is evaluated once, here.
class IndexTensor {
 public:
  template <Expression E>
  IndexTensor(const E& e) : held_(evaluated(e)) {}  // NOLINT(google-explicit-constructor): as Python's x[i]

  const Tensor<int64_t>* positions() const { return std::get_if<Tensor<int64_t>>(&held_); }
  const Tensor<bool>* mask() const { return std::get_if<Tensor<bool>>(&held_); }

 private:
  using Held = std::variant<Tensor<int64_t>, Tensor<bool>>;
  template <class E>
  static Held evaluated(const E& e) {
    using V = typename E::value_type;
    static_assert(std::is_same_v<V, int64_t> || std::is_same_v<V, bool>,
                  "tensors used as indices must be long or bool tensors");
    return Tensor<V>(e);
  }
  Held held_;
};

// The entries of an advanced index, from the first dim on: an index tensor
// (a mask covers as many dims as it has), or std::nullopt for a whole dim
// (Python's `:`); dims past the list are whole too.
using Indices = std::vector<std::optional<IndexTensor>>;

namespace detail {

// Where an advanced index reads: the dims it indexes, the others, the
// index tensors' broadcast shape, and for each of its elements the position
// in the indexed dims flattened (row-major).
struct AdvancedIndex {
  Shape indexed, rest;
  Shape broadcast;
  // The indexed dims are consecutive: the result keeps them in their place
  // (else, as in NumPy and PyTorch, the broadcast dims come first).
  bool adjacent = true;
  Tensor<int64_t> positions;  // 1-D, on the host
};

// The index with each mask replaced by the coordinates of its true elements,
// one int64 index tensor per dim it covers (mask.nonzero()'s columns), as
// PyTorch expands them; every tensor on the host.
template <class T>
std::vector<std::optional<Tensor<int64_t>>> expanded_indices(const Tensor<T>& x, const Indices& indices) {
  std::vector<std::optional<Tensor<int64_t>>> out;
  for (const auto& entry : indices) {
    if (!entry) {
      out.emplace_back();
    } else if (const Tensor<int64_t>* positions = entry->positions()) {
      out.emplace_back(host_indices(*positions, x.device()));
    } else {
      const Tensor<bool>& mask = *entry->mask();
      // PyTorch's Python indexing reads a 0-dim mask as a new dim; its index op fails an internal assert.
      check<IndexError>(mask.dim() > 0, "a 0-dim bool mask cannot index a tensor (Python reads x[True] as "
                                         "x.unsqueeze(0), and x[False] as x.unsqueeze(0).narrow(0, 0, 0))");
      if (mask.device() != x.device()) [[unlikely]]
        fail_mixed_devices(x.device(), mask.device());
      const int64_t first = static_cast<int64_t>(out.size());
      for (int64_t j = 0; j < mask.dim(); ++j) {
        const int64_t d = first + j;
        check<IndexError>(d < x.dim(), "Dimension out of range (expected to be in range of [", -x.dim(), ", ",
                          x.dim() - 1, "], but got ", d, ")");
        check<IndexError>(mask.size(j) == x.size(d), "The shape of the mask ", mask.sizes(), " at index ", j,
                          " does not match the shape of the indexed tensor ", x.sizes(), " at index ", d);
      }
      const Tensor<int64_t> coordinates = nonzero(host_contiguous(mask));  // (true elements, mask.dim())
      for (int64_t j = 0; j < mask.dim(); ++j) out.emplace_back(coordinates.select(1, j));
    }
  }
  return out;
}

template <class T>
AdvancedIndex advanced_index(const Tensor<T>& x, const Indices& entries) {
  const int64_t entry_count = static_cast<int64_t>(entries.size());
  check<IndexError>(x.dim() > 0 || entry_count == 0,
                    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                    "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
  check<IndexError>(entry_count <= x.dim(), "too many indices for tensor of dimension ", x.dim(), " (got ",
                    entry_count, ")");
  const auto indices = expanded_indices(x, entries);
  const int64_t n = static_cast<int64_t>(indices.size());
  AdvancedIndex a;
  std::vector<Tensor<int64_t>> used;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < n && indices[static_cast<std::size_t>(d)]) {
      a.indexed.push_back(d);
      used.push_back(*indices[static_cast<std::size_t>(d)]);
    } else {
      a.rest.push_back(d);
    }
  }
  for (std::size_t k = 1; k < a.indexed.size(); ++k) a.adjacent = a.adjacent && a.indexed[k] == a.indexed[k - 1] + 1;
  bool broadcastable = true;
  for (const auto& u : used) {
    try {
      a.broadcast = broadcast_shapes(a.broadcast, u.sizes());
    } catch (const Error&) {
      broadcastable = false;
    }
  }
  if (!broadcastable) {
    std::ostringstream shapes;
    for (std::size_t k = 0; k < used.size(); ++k) shapes << (k ? ", " : "") << used[k].sizes();
    fail<IndexError>("shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes.str());
  }
  a.positions = zeros<int64_t>({numel_of(a.broadcast)});
  int64_t* pos = a.positions.data_ptr();
  for (std::size_t k = 0; k < used.size(); ++k) {
    const int64_t dim = a.indexed[k], size = x.size(dim);
    const Tensor<int64_t> v = used[k].expand(a.broadcast).contiguous();
    check_indices(v, -size, size, dim);
    const int64_t* p = v.data_ptr();
    for (int64_t i = 0; i < v.numel(); ++i) pos[i] = pos[i] * size + (p[i] < 0 ? p[i] + size : p[i]);
  }
  return a;
}

// The result's dims from the order (broadcast dims, then the rest): where
// the indexed dims were consecutive, the broadcast dims move to their place.
inline Shape result_order(const AdvancedIndex& a) {
  const int64_t nb = static_cast<int64_t>(a.broadcast.size()), nr = static_cast<int64_t>(a.rest.size());
  Shape order;
  const int64_t before = a.adjacent ? a.indexed[0] : 0;
  for (int64_t d = 0; d < before; ++d) order.push_back(nb + d);
  for (int64_t d = 0; d < nb; ++d) order.push_back(d);
  for (int64_t d = before; d < nr; ++d) order.push_back(nb + d);
  return order;
}

inline Shape inverse_permutation(const Shape& p) {
  Shape inv(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) inv[static_cast<std::size_t>(p[i])] = static_cast<int64_t>(i);
  return inv;
}

// The order that brings x's indexed dims first (indexed_dims_first's permutation).
inline Shape indexed_first_order(const AdvancedIndex& a) {
  Shape order = a.indexed;
  for (int64_t d : a.rest) order.push_back(d);
  return order;
}

// x with its indexed dims first, merged into one: (flattened, rest...).
template <class T>
Tensor<T> indexed_dims_first(const Tensor<T>& x, const AdvancedIndex& a) {
  Shape flat{1};
  for (int64_t d : a.indexed) flat[0] *= x.size(d);
  for (int64_t d : a.rest) flat.push_back(x.size(d));
  return x.permute(indexed_first_order(a)).reshape(flat);
}

}  // namespace detail

// x[indices...] as in Python: x's elements at the index tensors' positions
// (they broadcast together; negative indices count from the end), with the
// whole dims (std::nullopt, and those past the list) kept. A new tensor.
template <class T>
Tensor<T> index(const Tensor<T>& x, const Indices& indices) {
  const detail::AdvancedIndex a = detail::advanced_index(x, indices);
  if (a.indexed.empty()) return x;
  const Tensor<T> taken = index(detail::indexed_dims_first(x, a), 0,
                                detail::placed_on(a.positions.view(a.broadcast), x.device()));
  return taken.permute(detail::result_order(a));
}

namespace detail {

// index_put's operands in the one-dim form: x's indexed dims merged into
// dim 0 (indexed_dims_first), the positions there, and values broadcast to
// x[indices...]'s shape and laid out as (positions, rest...).
template <class T>
struct IndexPut {
  AdvancedIndex a;
  Tensor<int64_t> at;
  Tensor<T> source;
};

template <class T>
IndexPut<T> index_put_operands(const Tensor<T>& x, const Indices& indices, const Tensor<T>& values) {
  IndexPut<T> p{advanced_index(x, indices), {}, {}};
  const AdvancedIndex& a = p.a;
  check(!a.indexed.empty(), "index_put: at least one index must be a tensor");
  Shape natural = a.broadcast, flat{numel_of(a.broadcast)};
  for (int64_t d : a.rest) natural.push_back(x.size(d)), flat.push_back(x.size(d));
  const Shape order = result_order(a);
  Shape result(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) result[i] = natural[static_cast<std::size_t>(order[i])];
  bool fits = true;
  try {
    fits = broadcast_shapes(values.sizes(), result) == result;
  } catch (const Error&) {
    fits = false;
  }
  check(fits, "shape mismatch: value tensor of shape ", values.sizes(),
        " cannot be broadcast to indexing result of shape ", result);
  p.source = values.expand(result).permute(inverse_permutation(order)).reshape(flat);
  p.at = placed_on(a.positions, x.device());
  return p;
}

}  // namespace detail

// A copy of x with values written at x[indices...] (or added there, with
// accumulate: repeated positions add up, in index order; without it the
// last write wins). values broadcast to the shape x[indices...] has; at
// least one index is a tensor.
template <class T>
Tensor<T> index_put(const Tensor<T>& x, const Indices& indices, const Tensor<T>& values, bool accumulate = false) {
  const auto p = detail::index_put_operands(x, indices, values);
  const Tensor<T> flat = detail::indexed_dims_first(x, p.a);
  const Tensor<T> written = accumulate ? index_add(flat, 0, p.at, p.source) : index_copy(flat, 0, p.at, p.source);
  // Back to x's layout: unflatten the indexed dims, undo the permutation.
  const Shape order = detail::indexed_first_order(p.a);
  Shape unflat;
  for (int64_t d : order) unflat.push_back(x.size(d));
  return written.view(unflat).permute(detail::inverse_permutation(order)).contiguous();
}

// In place: x[indices...] = values (or += with accumulate). Where autograd
// does not record it, only the indexed elements are written; where it
// does, x takes index_put's result as an in-place write.
template <class T>
Tensor<T>& index_put_(Tensor<T>& x, const Indices& indices, const Tensor<T>& values, bool accumulate = false) {
  if (!detail::grad_mode_flag() || !(x.requires_grad() || values.requires_grad())) {
    const auto p = detail::index_put_operands(x, indices, values);
    const Tensor<T> permuted = x.permute(detail::indexed_first_order(p.a));
    Shape flat = p.source.sizes();
    flat[0] = 1;
    for (int64_t d : p.a.indexed) flat[0] *= x.size(d);
    if (auto st = detail::view_strides(permuted.sizes(), permuted.strides(), flat)) {
      Tensor<T> target = permuted.as_strided(flat, *st, permuted.storage_offset());
      const Tensor<T> source = p.source.is_alias_of(x) ? p.source.clone() : p.source;  // x[i] = x[j]
      if (accumulate) index_add_(target, 0, p.at, source);
      else index_copy_(target, 0, p.at, source);
      return x;
    }
  }
  return x.copy_(index_put(x, indices, values, accumulate));
}

// x[indices...] = value (Python's x[mask] = 0.5), or += with accumulate.
template <class T, Scalar S>
Tensor<T> index_put(const Tensor<T>& x, const Indices& indices, S value, bool accumulate = false) {
  return index_put(x, indices, full<T>({}, static_cast<T>(value), x.device()), accumulate);
}

template <class T, Scalar S>
Tensor<T>& index_put_(Tensor<T>& x, const Indices& indices, S value, bool accumulate = false) {
  return index_put_(x, indices, full<T>({}, static_cast<T>(value), x.device()), accumulate);
}

}  // namespace tsr
