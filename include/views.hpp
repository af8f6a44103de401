// View operations: new sizes, strides and offset over the same storage.
#pragma once
#include <algorithm>
#include <optional>

#include "tensor.hpp"

namespace tsr {
namespace detail {

// Resolves a single -1 in `shape` against numel (PyTorch's infer_size).
inline Shape infer_size(Shape shape, int64_t numel) {
  int64_t known = 1;
  int infer = -1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      check(infer < 0, "only one dimension can be inferred");
      infer = static_cast<int>(d);
    } else {
      check(shape[d] >= 0, "invalid shape dimension ", shape[d]);
      known *= shape[d];
    }
  }
  const bool ok = infer >= 0 ? known > 0 && numel % known == 0 : known == numel;
  if (!ok) {
    std::ostringstream os;
    os << "shape '[";
    for (std::size_t d = 0; d < shape.size(); ++d) os << (d ? ", " : "") << shape[d];
    os << "]' is invalid for input of size " << numel;
    throw Error(os.str());
  }
  if (infer >= 0) shape[infer] = numel / known;
  return shape;
}

// Strides that view (sizes, strides) as `shape` without copying, if any
// exist (PyTorch's computeStride).
inline std::optional<Strides> view_strides(const Shape& old_sizes, const Strides& old_strides, const Shape& shape) {
  if (old_sizes.empty()) return Strides(shape.size(), 1);
  const int64_t numel = numel_of(old_sizes);
  if (numel == 0 && old_sizes == shape) return old_strides;
  Strides st(shape.size());
  if (numel == 0) return contiguous_strides(shape);
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        st[view_d] = view_numel * chunk_base;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base = old_strides[d - 1];
        tensor_numel = view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return st;
}

}  // namespace detail

template <class T>
Tensor<T> Tensor<T>::view(Shape shape) const {
  shape = detail::infer_size(std::move(shape), numel());
  auto st = detail::view_strides(sizes(), strides(), shape);
  detail::check(st.has_value(),
                "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
                "two contiguous subspaces). Use .reshape(...) instead.");
  return with_geometry(std::move(shape), std::move(*st), storage_offset());
}

template <class T>
Tensor<T> Tensor<T>::reshape(Shape shape) const {
  shape = detail::infer_size(std::move(shape), numel());
  if (auto st = detail::view_strides(sizes(), strides(), shape)) return with_geometry(shape, *st, storage_offset());
  return clone().view(shape);
}

template <class T>
Tensor<T> Tensor<T>::flatten(int64_t start, int64_t end) const {
  if (dim() == 0) return reshape({1});
  start = detail::wrap_dim(start, dim());
  end = detail::wrap_dim(end, dim());
  detail::check(start <= end, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (start == end) return *this;
  Shape shape;
  for (int64_t d = 0; d < start; ++d) shape.push_back(sizes()[d]);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= sizes()[d];
  shape.push_back(merged);
  for (int64_t d = end + 1; d < dim(); ++d) shape.push_back(sizes()[d]);
  return reshape(shape);
}

template <class T>
Tensor<T> Tensor<T>::transpose(int64_t d0, int64_t d1) const {
  d0 = detail::wrap_dim(d0, dim());
  d1 = detail::wrap_dim(d1, dim());
  if (dim() == 0) return *this;
  Shape sz = sizes();
  Strides st = strides();
  std::swap(sz[d0], sz[d1]);
  std::swap(st[d0], st[d1]);
  return with_geometry(std::move(sz), std::move(st), storage_offset());
}

template <class T>
Tensor<T> Tensor<T>::t() const {
  detail::check(dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", dim(), "D");
  return dim() < 2 ? *this : transpose(0, 1);
}

template <class T>
Tensor<T> Tensor<T>::permute(Shape dims) const {
  detail::check(static_cast<int64_t>(dims.size()) == dim(),
                "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
                "desired ordering of dimensions i.e. input.dim() = ",
                dim(), " is not equal to len(dims) = ", dims.size());
  Shape sz(dims.size());
  Strides st(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = detail::wrap_dim(dims[i], dim());
    detail::check(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sz[i] = sizes()[d];
    st[i] = strides()[d];
  }
  return with_geometry(std::move(sz), std::move(st), storage_offset());
}

template <class T>
Tensor<T> Tensor<T>::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  detail::check(dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  d = detail::wrap_dim(d, dim());
  detail::check<ValueError>(step != 0, "slice step cannot be zero");
  detail::check(step > 0, "slice step must be positive");
  const int64_t n = sizes()[d];
  // Python's clamping of slice bounds.
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape sz = sizes();
  Strides st = strides();
  sz[d] = (end - start + step - 1) / step;
  st[d] = strides()[d] * step;
  return with_geometry(std::move(sz), std::move(st), storage_offset() + start * strides()[d]);
}

template <class T>
Tensor<T> Tensor<T>::narrow(int64_t d, int64_t start, int64_t length) const {
  detail::check(dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  d = detail::wrap_dim(d, dim());
  const int64_t n = sizes()[d];
  detail::check<IndexError>(start >= -n && start <= n, "start out of range (expected to be in range of [", -n, ", ",
                            n, "], but got ", start, ")");
  if (start < 0) start += n;
  detail::check(length >= 0, "narrow(): length must be non-negative.");
  detail::check(start + length <= n, "start (", start, ") + length (", length, ") exceeds dimension size (", n,
                ").");
  return slice(d, start, start + length);
}

template <class T>
Tensor<T> Tensor<T>::select(int64_t d, int64_t index) const {
  detail::check<IndexError>(dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  d = detail::wrap_dim(d, dim());
  const int64_t n = sizes()[d];
  detail::check<IndexError>(index >= -n && index < n, "select(): index ", index, " out of range for tensor of size ",
                            sizes(), " at dimension ", d);
  if (index < 0) index += n;
  Shape sz = sizes();
  Strides st = strides();
  sz.erase(static_cast<std::size_t>(d));
  st.erase(static_cast<std::size_t>(d));
  return with_geometry(std::move(sz), std::move(st), storage_offset() + index * strides()[d]);
}

template <class T>
Tensor<T> Tensor<T>::unsqueeze(int64_t d) const {
  d = detail::wrap_dim(d, dim() + 1);
  Shape sz = sizes();
  Strides st = strides();
  const int64_t stride = d < dim() ? strides()[d] * sizes()[d] : 1;
  sz.insert(static_cast<std::size_t>(d), 1);
  st.insert(static_cast<std::size_t>(d), stride);
  return with_geometry(std::move(sz), std::move(st), storage_offset());
}

template <class T>
Tensor<T> Tensor<T>::squeeze() const {
  Shape sz;
  Strides st;
  for (int64_t d = 0; d < dim(); ++d)
    if (sizes()[d] != 1) {
      sz.push_back(sizes()[d]);
      st.push_back(strides()[d]);
    }
  return with_geometry(std::move(sz), std::move(st), storage_offset());
}

template <class T>
Tensor<T> Tensor<T>::squeeze(int64_t d) const {
  d = detail::wrap_dim(d, dim());
  if (dim() == 0 || sizes()[d] != 1) return *this;
  Shape sz = sizes();
  Strides st = strides();
  sz.erase(static_cast<std::size_t>(d));
  st.erase(static_cast<std::size_t>(d));
  return with_geometry(std::move(sz), std::move(st), storage_offset());
}

template <class T>
Tensor<T> Tensor<T>::expand(Shape shape) const {
  const int64_t n = static_cast<int64_t>(shape.size());
  if (n < dim()) {
    std::ostringstream os;
    os << "expand(torch." << (std::is_same_v<T, float> ? "FloatTensor" : "Tensor") << "{" << sizes() << "}, size=" << shape
       << "): the number of sizes provided (" << n
       << ") must be greater or equal to the number of dimensions in the tensor (" << dim() << ")";
    throw Error(os.str());
  }
  Strides st(shape.size());
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t d = i - (n - dim());
    if (d < 0) {
      detail::check(shape[i] >= 0, "The expanded size of the tensor (", shape[i],
                    ") isn't allowed in a leading, non-existing dimension ", i);
      st[i] = 0;
      continue;
    }
    if (shape[i] == -1) shape[i] = sizes()[d];
    if (sizes()[d] == shape[i]) {
      st[i] = strides()[d];
    } else {
      detail::check(sizes()[d] == 1, "The expanded size of the tensor (", shape[i],
                    ") must match the existing size (", sizes()[d], ") at non-singleton dimension ", i,
                    ".  Target sizes: ", shape, ".  Tensor sizes: ", sizes());
      st[i] = 0;
    }
  }
  return with_geometry(std::move(shape), std::move(st), storage_offset());
}

template <class T>
Tensor<T> Tensor<T>::unfold(int64_t dim, int64_t size, int64_t step) const {
  const int64_t n = this->dim();
  const int64_t d = detail::wrap_dim(dim, std::max<int64_t>(n, 1));  // a 0-d tensor unfolds as one element
  const int64_t length = n == 0 ? 1 : sizes()[d];
  detail::check(size <= length, "maximum size for tensor at dimension ", d, " is ", length, " but size is ", size);
  detail::check(step > 0, "step is ", step, " but must be > 0");
  detail::check(size >= 0, "size is ", size, " but must be >= 0");
  if (n == 0) return with_geometry({size}, {1}, storage_offset());
  Shape sz = sizes();
  Strides st = strides();
  sz[d] = (length - size) / step + 1;
  sz.push_back(size);
  st.push_back(st[d]);
  st[d] *= step;
  return with_geometry(std::move(sz), std::move(st), storage_offset());
}

template <class T>
Tensor<T> Tensor<T>::as_strided(Shape sz, Strides st, int64_t offset) const {
  detail::check(sz.size() == st.size(), "mismatch in length of strides and shape");
  for (auto s : st) detail::check(s >= 0, "as_strided: Negative strides are not supported at the moment, got strides: ", st);
  return with_geometry(std::move(sz), std::move(st), offset);
}

}  // namespace tsr
