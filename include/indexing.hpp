// Indexing with integer and bool tensors: index_select, index (integer
// tensor indexing along a dim, x[:, idx] in Python), gather, scatter,
// scatter_add, masked_fill, masked_select, nonzero, where(cond), one_hot.
//
// Indices are checked before anything is written, so a bad index leaves an
// in-place target untouched; the errors are tsr::IndexError with PyTorch's
// text (PyTorch raises some of them as RuntimeError; IndexError is an Error).
#pragma once
#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

#include "factories.hpp"
#include "math.hpp"
#include "shape_ops.hpp"

namespace tsr {
namespace detail {

// The indices for a host loop (host_contiguous) into a tensor on x_device,
// where they must be too (as in PyTorch).
inline Tensor<int64_t> host_indices(const Tensor<int64_t>& index, Device x_device) {
  if (index.device() != x_device) [[unlikely]]
    fail_mixed_devices(x_device, index.device());
  return host_contiguous(index);
}

// A scatter's moves on a device, worked out on the host: the distinct
// destinations in self (element offsets, increasing), where each one's
// values begin among the sources (destination s takes the values at
// sources[begins[s]] .. sources[begins[s + 1] - 1], in index order), and
// the sources (element offsets in src). One tensor on the device holds
// them all.
struct ScatterMoveView {
  const int64_t* destinations;
  const int64_t* begins;
  const int64_t* sources;
};
struct ScatterMoves {
  int64_t count = 0;       // distinct destinations
  Tensor<int64_t> packed;  // destinations, begins (count + 1), sources
  ScatterMoveView view() const {
    const int64_t* p = packed.device_data_ptr();
    return {p, p + count, p + 2 * count + 1};
  }
};
// The moves of dst[i] <- src[i] for every i, on `device`.
inline ScatterMoves scatter_moves(const std::vector<int64_t>& dst, const std::vector<int64_t>& src, Device device) {
  std::vector<std::size_t> order(dst.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return dst[a] < dst[b]; });
  std::vector<int64_t> destinations, begins, sources;
  for (const std::size_t i : order) {
    if (destinations.empty() || destinations.back() != dst[i]) {
      destinations.push_back(dst[i]);
      begins.push_back(static_cast<int64_t>(sources.size()));
    }
    sources.push_back(src[i]);
  }
  begins.push_back(static_cast<int64_t>(sources.size()));
  auto packed = Tensor<int64_t>::allocate({static_cast<int64_t>(destinations.size() + begins.size() + sources.size())});
  int64_t* p = packed.data_ptr();
  for (const auto* part : {&destinations, &begins, &sources}) p = std::copy(part->begin(), part->end(), p);
  return {static_cast<int64_t>(destinations.size()), packed.copy_to(device)};
}

// The device backend's forms (cuda/indexing.hpp), in translation units that have it.
namespace cuda {
template <class T>
void gather_elements(const Tensor<T>& out, const Tensor<T>& src, const Tensor<int64_t>& offsets);
template <class T>
void scatter(const Tensor<T>& self, const ScatterMoves& moves, const Tensor<T>* src, T value, bool add);
}  // namespace cuda

// out[k] = src's element at offsets[k] (in elements from src's first; the
// offsets on the host or already on out's device), for a contiguous out on
// src's device.
template <class T>
void gather_on_device(const Tensor<T>& out, const Tensor<T>& src, const Tensor<int64_t>& offsets) {
  if constexpr (kCudaBackend) cuda::gather_elements(out, src, placed_on(offsets, out.device()));
  else fail_compiled_without_cuda(out.device(), "indexing");
}

// Checks every index against [lo, size) with PyTorch's message for gather,
// scatter and integer indexing.
inline void check_indices(const Tensor<int64_t>& index, int64_t lo, int64_t size, int64_t dim) {
  const int64_t* p = index.data_ptr();
  for (int64_t i = 0; i < index.numel(); ++i)
    if (p[i] < lo || p[i] >= size)
      fail<IndexError>("index ", p[i], " is out of bounds for dimension ", dim, " with size ", size);
}

// Calls f(v, self_off, other_off) for every element of a contiguous index
// in row-major order: v is its value, self_off the offset (in strides
// self_st) of its coordinates with dim left out, other_off its offset in
// strides other_st. gather reads self at self_off + v * self_st[dim];
// scatter writes there.
template <class F>
void walk_index(const Tensor<int64_t>& index, int64_t dim, const Strides& self_st, const Strides& other_st, F f) {
  const int64_t nd = index.dim(), n = index.numel();
  if (n == 0) return;
  const int64_t* v = index.data_ptr();
  if (nd == 0) return f(v[0], int64_t{0}, int64_t{0});
  std::vector<int64_t> at(static_cast<std::size_t>(nd), 0);
  int64_t self_off = 0, other_off = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(v[i], self_off, other_off);
    for (int64_t d = nd - 1; d >= 0; --d) {  // odometer step
      const auto u = static_cast<std::size_t>(d);
      const int64_t ss = d == dim ? 0 : self_st[u];
      if (++at[u] < index.size(d)) {
        self_off += ss, other_off += other_st[u];
        break;
      }
      self_off -= ss * (at[u] - 1), other_off -= other_st[u] * (at[u] - 1);
      at[u] = 0;
    }
  }
}

// The shape checks shared by gather and scatter.
template <class T>
void check_index_shape(const Tensor<T>& self, const Tensor<int64_t>& index) {
  check(index.dim() == self.dim() || (index.dim() <= 1 && self.dim() <= 1),
        "Index tensor must have the same number of dimensions as input tensor");
}

template <class T, class U>
void check_scatter_shapes(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, const Tensor<U>* src) {
  check_index_shape(self, index);
  bool ok = true;
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (d != dim && index.size(d) > self.size(d)) ok = false;
    if (src && index.size(d) > src->size(d)) ok = false;
  }
  if (ok) return;
  if (src)
    fail<Error>("Expected index ", index.sizes(), " to be smaller than self ", self.sizes(), " apart from dimension ",
                dim, " and to be smaller size than src ", src->sizes());
  fail<Error>("Expected index ", index.sizes(), " to be smaller than self ", self.sizes(), " apart from dimension ",
              dim);
}

// self[... index[p] ...] = src[p], or += src[p] with add, for every
// position p of index, in index order (src read at its strides); = value
// when src is null. On the CPU each form is its own loop, with no test per
// element.
template <class T>
void scatter_into(Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, const Tensor<T>* src, T value,
                  bool add) {
  check_in_place(self, ScalarLeaf<T>(T(0)));
  if (src && src->device() != self.device()) [[unlikely]]
    fail_mixed_devices(self.device(), src->device());
  const Tensor<int64_t> idx = host_indices(index, self.device());
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  check_indices(idx, 0, size, dim);
  const int64_t step = self.dim() == 0 ? 0 : self.stride(dim);
  const Strides& src_st = src ? src->strides() : idx.strides();
  if (self.device().is_cpu()) {
    T* out = self.data_ptr();
    const auto each = [&](auto write) {
      walk_index(idx, dim, self.strides(), src_st,
                 [&](int64_t v, int64_t self_off, int64_t src_off) { write(out[self_off + v * step], src_off); });
    };
    const T* sp = src ? src->data_ptr() : nullptr;
    if (!sp) each([value](T& dst, int64_t) { dst = value; });
    else if (add) each([sp](T& dst, int64_t at) { dst = convert<T>(dst + sp[at]); });
    else each([sp](T& dst, int64_t at) { dst = sp[at]; });
  } else if constexpr (kCudaBackend) {
    std::vector<int64_t> dst, from;
    walk_index(idx, dim, self.strides(), src_st, [&](int64_t v, int64_t self_off, int64_t src_off) {
      dst.push_back(self_off + v * step);
      from.push_back(src_off);
    });
    cuda::scatter(self, scatter_moves(dst, from, self.device()), src, value, add);
  } else {
    fail_compiled_without_cuda(self.device(), "scatter");
  }
  self.storage()->bump_version();
}

// The flat positions (row-major) where mask is true, found on the host:
// masked_select reads them, masked_scatter writes them.
inline Tensor<int64_t> true_positions(const Tensor<bool>& mask) {
  const Tensor<bool> m = host_contiguous(mask);
  const bool* p = m.data_ptr();
  auto positions = Tensor<int64_t>::allocate({std::count(p, p + m.numel(), true)});
  int64_t* out = positions.data_ptr();
  for (int64_t i = 0; i < m.numel(); ++i)
    if (p[i]) *out++ = i;
  return positions;
}

}  // namespace detail

// The slices x.select(dim, index[i]) stacked along dim; index is 1-D (or 0-d).
template <class T>
Tensor<T> index_select(const Tensor<T>& x, int64_t dim, const Tensor<int64_t>& index) {
  detail::check<IndexError>(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  dim = detail::wrap_dim(dim, x.dim());
  const Tensor<int64_t> idx = detail::host_indices(index, x.device());
  const int64_t size = x.dim() == 0 ? 1 : x.size(dim);
  const int64_t* p = idx.data_ptr();
  for (int64_t i = 0; i < idx.numel(); ++i)
    detail::check<IndexError>(p[i] >= 0 && p[i] < size, "index out of range in self");
  // PyTorch returns the scalar itself for a 0-d x.
  auto out = detail::unrecorded(
      [&] { return x.dim() == 0 ? x.clone() : detail::take_along(x, dim, idx.numel(), [p](int64_t i) { return p[i]; }); });
  detail::record_op<autograd::tag::IndexSelect>(out, x, dim, index, "IndexSelectBackward0");
  return out;
}

// Integer-tensor indexing along one dim, x[:, index] in Python for dim 1:
// the result's dim is replaced by index's shape; negative indices count from
// the end.
template <class T>
Tensor<T> index(const Tensor<T>& x, int64_t dim, const Tensor<int64_t>& index) {
  detail::check<IndexError>(x.dim() > 0, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
  dim = detail::wrap_dim(dim, x.dim());
  const Tensor<int64_t> idx = detail::host_indices(index, x.device());
  const int64_t size = x.size(dim);
  detail::check_indices(idx, -size, size, dim);
  const int64_t* p = idx.data_ptr();
  auto out = detail::take_along(x, dim, idx.numel(), [p, size](int64_t i) { return p[i] < 0 ? p[i] + size : p[i]; });
  Shape shape(x.sizes().begin(), x.sizes().begin() + dim);
  for (int64_t s : idx.sizes()) shape.push_back(s);
  for (int64_t d = dim + 1; d < x.dim(); ++d) shape.push_back(x.size(d));
  out = out.view(shape);
  detail::record_op<autograd::tag::IndexSelect>(out, x, dim, index, "IndexBackward0");
  return out;
}

// out[i][j][k] = x[i][index[i][j][k]][k] for dim 1 (any rank): the result
// has index's shape, which may be smaller than x's apart from dim.
template <class T>
Tensor<T> gather(const Tensor<T>& x, int64_t dim, const Tensor<int64_t>& index) {
  dim = detail::wrap_dim(dim, x.dim());
  detail::check_index_shape(x, index);
  for (int64_t d = 0; d < index.dim(); ++d)
    detail::check(d == dim || index.size(d) <= x.size(d), "Size does not match at dimension ", d,
                  " expected index ", index.sizes(), " to be smaller than self ", x.sizes(), " apart from dimension ",
                  dim);
  const Tensor<int64_t> idx = detail::host_indices(index, x.device());
  const int64_t size = x.dim() == 0 ? 1 : x.size(dim), step = x.dim() == 0 ? 0 : x.stride(dim);
  detail::check_indices(idx, 0, size, dim);
  auto out = Tensor<T>::allocate(idx.sizes(), x.device());
  // put(k, at): out's element k (contiguous) is x's element at offset at.
  const auto each = [&](auto put) {
    detail::walk_index(idx, dim, x.strides(), out.strides(),
                       [&](int64_t v, int64_t x_off, int64_t out_off) { put(out_off, x_off + v * step); });
  };
  if (x.device().is_cpu()) {
    const T* src = x.data_ptr();
    T* dst = out.data_ptr();
    each([&](int64_t k, int64_t at) { dst[k] = src[at]; });
  } else {  // the offsets, worked out here, drive the device's copy
    auto offsets = Tensor<int64_t>::allocate(idx.sizes());
    int64_t* o = offsets.data_ptr();
    each([&](int64_t k, int64_t at) { o[k] = at; });
    detail::gather_on_device(out, x, offsets);
  }
  detail::record_op<autograd::tag::Gather>(out, x, dim, index);
  return out;
}

// The elements of x at `indices` along dim (torch.take_along_dim): gather,
// after x and indices broadcast against each other in every other dim;
// without a dim, the flattened x at the flattened indices.
template <class T>
Tensor<T> take_along_dim(const Tensor<T>& x, const Tensor<int64_t>& indices, std::optional<int64_t> dim = std::nullopt) {
  if (!dim) return gather(x.reshape({-1}), 0, indices.reshape({-1}));
  detail::check(x.dim() == indices.dim(),
                "torch.take_along_dim(): input and indices should have the same number of dimensions, but got ",
                x.dim(), " dimensions for input, and ", indices.dim(), " dimensions for indices");
  const int64_t d = detail::wrap_dim(*dim, x.dim());
  if (x.dim() == 0) return gather(x, d, indices);
  Shape picked = x.sizes();
  picked[static_cast<std::size_t>(d)] = indices.size(d);
  const Shape shape = detail::broadcast_shapes(picked, indices.sizes());
  Shape source = shape;
  source[static_cast<std::size_t>(d)] = x.size(d);
  return gather(x.expand(source), d, indices.expand(shape));
}

// In place: self[i][index[i][j][k]][k] = src[i][j][k] for dim 1 (any rank).
// Where an index repeats, the last write wins (PyTorch leaves it undefined).
template <class T>
Tensor<T>& scatter_(Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, const Tensor<T>& src) {
  detail::check_in_place(self, src);
  dim = detail::wrap_dim(dim, self.dim());
  detail::check_scatter_shapes(self, dim, index, &src);
  const Tensor<T> s = src.is_alias_of(self) ? src.clone() : src;
  detail::scatter_into(self, dim, index, &s, T(0), false);
  return self;
}
// In place: self[... index[p] ...] = value for every position p of index.
template <class T, Scalar S>
Tensor<T>& scatter_(Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, S value) {
  dim = detail::wrap_dim(dim, self.dim());
  detail::check_scatter_shapes<T, T>(self, dim, index, nullptr);
  detail::scatter_into<T>(self, dim, index, nullptr, detail::convert<T>(value), false);
  return self;
}
// In place: self[i][index[i][j][k]][k] += src[i][j][k] for dim 1, in index
// order (deterministic).
template <class T>
Tensor<T>& scatter_add_(Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, const Tensor<T>& src) {
  detail::check_in_place(self, src);
  dim = detail::wrap_dim(dim, self.dim());
  detail::check_scatter_shapes(self, dim, index, &src);
  const Tensor<T> s = src.is_alias_of(self) ? src.clone() : src;
  detail::scatter_into(self, dim, index, &s, T(0), true);
  return self;
}
// Out-of-place forms: a copy of self with the scatter applied.
template <class T, class Src>
Tensor<T> scatter(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, const Src& src) {
  auto out = detail::unrecorded([&] {
    Tensor<T> o = self.clone();
    if constexpr (Expression<Src>) return scatter_(o, dim, index, Tensor<T>(src).detach());
    else return scatter_(o, dim, index, src);
  });
  dim = detail::wrap_dim(dim, self.dim());
  if constexpr (Expression<Src>) detail::record_op<autograd::tag::Scatter>(out, self, dim, index, Tensor<T>(src), false);
  else detail::record_op<autograd::tag::Scatter>(out, self, dim, index);
  return out;
}
template <class T>
Tensor<T> scatter_add(const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index, const Tensor<T>& src) {
  auto out = detail::unrecorded([&] {
    Tensor<T> o = self.clone();
    return scatter_add_(o, dim, index, src.detach());
  });
  detail::record_op<autograd::tag::Scatter>(out, self, detail::wrap_dim(dim, self.dim()), index, src, true);
  return out;
}

// x with value wherever mask is true; mask broadcasts with x.
template <class T, Expression M, Scalar S>
Tensor<T> masked_fill(const Tensor<T>& x, const M& mask, S value) {
  return Tensor<T>(where(mask, detail::convert<T>(value), x));
}
// In place; mask must broadcast to x's shape.
template <class T, Expression M, Scalar S>
Tensor<T>& masked_fill_(Tensor<T>& x, const M& mask, S value) {
  x.copy_(where(mask, detail::convert<T>(value), x));
  return x;
}

// The elements of x where mask is true (both broadcast), as a 1-D tensor.
template <class T, Expression M>
Tensor<T> masked_select(const Tensor<T>& x, const M& mask) {
  static_assert(std::is_same_v<typename M::value_type, bool>, "masked_select: expected BoolTensor for mask");
  const Shape shape = detail::broadcast_shapes(x.sizes(), mask.sizes());
  const Tensor<T> xs = Tensor<T>(x.expand(shape)).contiguous();
  const Tensor<bool> ms = Tensor<bool>(Tensor<bool>(mask).expand(shape));
  if (ms.device() != x.device()) [[unlikely]]
    detail::fail_mixed_devices(x.device(), ms.device());
  Tensor<int64_t> positions = detail::true_positions(ms);
  auto out = Tensor<T>::allocate(positions.sizes(), x.device());
  if (x.device().is_cpu()) {
    const T* src = xs.data_ptr();
    T* dst = out.data_ptr();
    for (int64_t i = 0; i < positions.numel(); ++i) dst[i] = src[positions.data_ptr()[i]];
  } else {
    positions = detail::placed_on(positions, x.device());  // once, for the gather and the backward
    detail::gather_on_device(out, xs, positions);
  }
  detail::record_op<autograd::tag::MaskedSelect>(out, x, shape, positions);
  return out;
}

// The coordinates of every nonzero element, one row each, in row-major
// order: shape (count, x.dim()).
template <Expression E>
Tensor<int64_t> nonzero(const E& e) {
  using T = typename E::value_type;
  const Tensor<T> x = detail::host_contiguous(Tensor<T>(e));
  const T* p = x.data_ptr();
  const int64_t n = x.numel(), nd = x.dim();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += p[i] != T(0);
  auto out = Tensor<int64_t>::allocate({count, nd});
  int64_t* dst = out.data_ptr();
  std::vector<int64_t> at(static_cast<std::size_t>(nd), 0);
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] != T(0)) dst = std::copy(at.begin(), at.end(), dst);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++at[static_cast<std::size_t>(d)] < x.size(d)) break;
      at[static_cast<std::size_t>(d)] = 0;
    }
  }
  return detail::placed_on(out, detail::expr_device(e));
}

// numpy's name for nonzero: the coordinates of the nonzero elements, one row
// each (a 0-d input gives [1, 0] or [0, 0]).
template <Expression E>
Tensor<int64_t> argwhere(const E& e) {
  return nonzero(e);
}

// where(cond) with one argument: nonzero(cond) as one index tensor per dim
// (a 0-d cond counts as 1-d).
template <Expression C>
std::vector<Tensor<int64_t>> where(const C& cond) {
  const Tensor<int64_t> nz = nonzero(cond);
  std::vector<Tensor<int64_t>> out;
  if (cond.dim() == 0) out.push_back(zeros<int64_t>({nz.size(0)}, nz.device()));
  for (int64_t d = 0; d < nz.size(1); ++d) out.push_back(nz.select(1, d).contiguous());
  return out;
}

// One-hot encoding: shape index.sizes() + [num_classes]; num_classes = -1
// takes max(index) + 1.
inline Tensor<int64_t> one_hot(const Tensor<int64_t>& index, int64_t num_classes = -1) {
  const Tensor<int64_t> idx = detail::host_contiguous(index);
  const int64_t* p = idx.data_ptr();
  const int64_t n = idx.numel();
  if (num_classes == -1) {
    detail::check(n > 0, "Can not infer total number of classes from empty tensor.");
    num_classes = *std::max_element(p, p + n) + 1;
  }
  for (int64_t i = 0; i < n; ++i) {
    detail::check(p[i] >= 0, "Class values must be non-negative.");
    detail::check(p[i] < num_classes, "Class values must be smaller than num_classes.");
  }
  Shape shape = idx.sizes();
  shape.push_back(num_classes);
  auto out = zeros<int64_t>(shape);
  int64_t* dst = out.data_ptr();
  for (int64_t i = 0; i < n; ++i) dst[i * num_classes + p[i]] = 1;
  return detail::placed_on(out, index.device());
}

// The indices 0 .. n-1, each i repeated repeats[i] times (repeats: 1-D,
// not negative); output_size, when given, must be their sum.
inline Tensor<int64_t> repeat_interleave(const Tensor<int64_t>& repeats,
                                         std::optional<int64_t> output_size = std::nullopt) {
  detail::check(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  const Tensor<int64_t> r = detail::host_contiguous(repeats);
  const int64_t* p = r.data_ptr();
  int64_t total = 0;
  for (int64_t i = 0; i < r.numel(); ++i) {
    detail::check(p[i] >= 0, "repeats can not be negative");
    total += p[i];
  }
  detail::check(!output_size || *output_size == total, "allocated size does not match required size");
  auto out = Tensor<int64_t>::allocate({total});
  int64_t* dst = out.data_ptr();
  for (int64_t i = 0; i < r.numel(); ++i) dst = std::fill_n(dst, p[i], i);
  return detail::placed_on(out, repeats.device());
}

// Each slice of x along dim repeated repeats[i] times in place (repeats: 0-d
// or of one element for all slices, else one per slice); without dim, the
// flattened x. Differentiates as the index_select it is.
template <class T>
Tensor<T> repeat_interleave(const Tensor<T>& x, const Tensor<int64_t>& repeats,
                            std::optional<int64_t> dim = std::nullopt,
                            std::optional<int64_t> output_size = std::nullopt) {
  detail::check<IndexError>(!dim || x.dim() > 0, "Dimension specified as ", dim.value_or(0),
                            " but tensor has no dimensions");
  detail::check(repeats.dim() <= 1, "repeats must be 0-dim or 1-dim tensor");
  const Tensor<T> input = dim ? x : x.reshape({-1});
  const int64_t d = detail::wrap_dim(dim.value_or(0), input.dim());
  Tensor<int64_t> counts = repeats.reshape({-1});
  if (counts.numel() == 1) counts = counts.expand({input.size(d)});
  detail::check(counts.size(0) == input.size(d), "repeats must have the same size as input along dim");
  return index_select(input, d, repeat_interleave(counts, output_size));
}
template <class T>
Tensor<T> repeat_interleave(const Tensor<T>& x, int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                            std::optional<int64_t> output_size = std::nullopt) {
  detail::check(repeats >= 0, "repeats can not be negative");
  return repeat_interleave(x, full<int64_t>({}, repeats), dim, output_size);
}

// Every r-element combination of a 1-D x's elements (with_replacement:
// each element may repeat), in lexicographic order of positions: an
// [count, r] tensor; r = 0 gives an empty 1-D tensor, as PyTorch.
template <class T>
Tensor<T> combinations(const Tensor<T>& x, int64_t r = 2, bool with_replacement = false) {
  detail::check(x.dim() == 1, "Expect a 1D vector, but got shape ", x.sizes());
  detail::check(r >= 0, "Expect a non-negative number, but got ", r);
  if (r == 0) return empty<T>({0}, x.device());
  const int64_t n = x.size(0);
  // The position lists, column by column: pos[j] is the j-th element's.
  std::vector<std::vector<int64_t>> columns(static_cast<std::size_t>(r));
  std::vector<int64_t> pos(static_cast<std::size_t>(r));
  for (int64_t j = 0; j < r; ++j) pos[static_cast<std::size_t>(j)] = with_replacement ? 0 : j;
  const auto last_allowed = [&](int64_t j) { return with_replacement ? n - 1 : n - r + j; };
  bool more = r <= n || (with_replacement && n > 0);
  while (more) {
    for (int64_t j = 0; j < r; ++j) columns[static_cast<std::size_t>(j)].push_back(pos[static_cast<std::size_t>(j)]);
    // The rightmost position that can still move on moves; those after it
    // restart just after (or, with replacement, at) it.
    int64_t j = r - 1;
    while (j >= 0 && pos[static_cast<std::size_t>(j)] == last_allowed(j)) --j;
    more = j >= 0;
    if (!more) break;
    const int64_t from = ++pos[static_cast<std::size_t>(j)];
    for (int64_t k = j + 1; k < r; ++k)
      pos[static_cast<std::size_t>(k)] = with_replacement ? from : from + (k - j);
  }
  std::vector<Tensor<T>> picked;
  picked.reserve(columns.size());
  for (const auto& c : columns) picked.push_back(index_select(x, 0, tensor<int64_t>(c)));
  return stack(picked, 1);
}

}  // namespace tsr
