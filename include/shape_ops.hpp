// Shape operations that rearrange whole tensors: cat, stack, split, chunk,
// unbind, flip, roll, repeat, tile, movedim, tril, triu, diagonal, diag,
// trace, diff, meshgrid, cartesian_prod, block_diag, rot90 and atleast_1d,
// _2d and _3d.
//
// Where a result is a view (split, chunk, unbind, movedim, diagonal,
// meshgrid, atleast_*d) it
// shares storage as in
// PyTorch; everything else writes a new contiguous tensor, through the
// evaluation engine wherever the copy is a strided view (cat, stack, repeat)
// and through take_along (below) where it permutes one dim (flip, roll).
#pragma once
#include <algorithm>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "detail/assign.hpp"
#include "factories.hpp"
#include "reduce.hpp"
#include "views.hpp"

namespace tsr {
namespace detail {

// A contiguous shape seen as [outer, len, inner] around one dim.
struct DimSplit {
  int64_t outer = 1, len = 1, inner = 1;
};
inline DimSplit split_at(const Shape& s, int64_t dim) {
  DimSplit r;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    const int64_t n = s[static_cast<std::size_t>(d)];
    (d < dim ? r.outer : d == dim ? r.len : r.inner) *= n;
  }
  return r;
}

// The device backend's form (cuda/indexing.hpp), in translation units that have it.
namespace cuda {
template <class T>
void take_along(const Tensor<T>& out, const Tensor<T>& src, const Tensor<int64_t>& from, const DimSplit& s);
}  // namespace cuda

// out[o, i, :] = x[o, from(i), :] for i in [0, count) along dim: the one
// kernel behind flip, roll, index_select and integer indexing. `from` must
// return valid positions (callers check indices first); on a device, the
// host lists them and the device copies the slices.
template <class T, class From>
Tensor<T> take_along(const Tensor<T>& x, int64_t dim, int64_t count, From from) {
  const Tensor<T> c = x.contiguous();
  Shape shape = c.sizes();
  if (!shape.empty()) shape[static_cast<std::size_t>(dim)] = count;
  auto out = Tensor<T>::allocate(shape, x.device());
  const DimSplit s = split_at(c.sizes(), dim);
  if (out.numel() == 0) return out;
  if (!x.device().is_cpu()) {
    if constexpr (kCudaBackend) {
      auto positions = Tensor<int64_t>::allocate({count});
      for (int64_t i = 0; i < count; ++i) positions.data_ptr()[i] = from(i);
      cuda::take_along(out, c, positions.copy_to(x.device()), s);
    } else {
      fail_compiled_without_cuda(x.device(), "indexing");
    }
    return out;
  }
  const T* src = c.data_ptr();
  T* dst = out.data_ptr();
  run_units(s.outer * count, out.numel(), [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t o = u / count, i = u % count;
      std::copy_n(src + (o * s.len + from(i)) * s.inner, s.inner, dst + u * s.inner);
    }
  });
  return out;
}

// The dims of a list, wrapped, with PyTorch's error for repeats.
inline std::vector<int64_t> unique_dims(const Shape& dims, int64_t ndim) {
  std::vector<int64_t> out;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim);
    check(std::find(out.begin(), out.end(), w) == out.end(), "dim ", w, " appears multiple times in the list of dims");
    out.push_back(w);
  }
  return out;
}

// A (0,)-shaped tensor: cat skips these whatever the others' shapes (PyTorch's legacy rule).
template <class T>
bool skipped_in_cat(const Tensor<T>& t) {
  return t.dim() == 1 && t.size(0) == 0;
}

}  // namespace detail

// Concatenates tensors along an existing dim.
namespace detail {
template <class T>
Tensor<T> cat_impl(const std::vector<Tensor<T>>& tensors, int64_t& dim) {
  check(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const Tensor<T>* ref = nullptr;
  for (const auto& t : tensors)
    if (!detail::skipped_in_cat(t)) {
      ref = &t;
      break;
    }
  if (!ref) return Tensor<T>::allocate({0}, tensors.front().device());
  dim = detail::wrap_dim(dim, ref->dim());
  Shape shape = ref->sizes();
  int64_t total = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    if (t.device() != ref->device()) [[unlikely]]
      fail_mixed_devices(ref->device(), t.device());
    if (detail::skipped_in_cat(t)) continue;
    detail::check(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ", ref->dim(), " and ",
                  t.dim());
    for (int64_t d = 0; d < t.dim(); ++d)
      detail::check(d == dim || t.size(d) == ref->size(d), "Sizes of tensors must match except in dimension ", dim,
                    ". Expected size ", ref->size(d), " but got size ", t.size(d), " for tensor number ", i,
                    " in the list.");
    total += t.size(dim);
  }
  shape[static_cast<std::size_t>(dim)] = total;
  // On the tensors' device: each piece is one copy there.
  auto out = Tensor<T>::allocate(shape, ref->device());
  int64_t at = 0;
  for (const auto& t : tensors) {
    if (detail::skipped_in_cat(t)) continue;
    out.narrow(dim, at, t.size(dim)).copy_(t);
    at += t.size(dim);
  }
  return out;
}
}  // namespace detail

template <class T>
Tensor<T> cat(const std::vector<Tensor<T>>& tensors, int64_t dim = 0) {
  auto out = detail::unrecorded([&] { return detail::cat_impl(tensors, dim); });
  detail::record_op<autograd::tag::Cat>(out, tensors, dim, "CatBackward0", false);
  return out;
}
template <class T>
Tensor<T> cat(std::initializer_list<Tensor<T>> tensors, int64_t dim = 0) {
  return cat(std::vector<Tensor<T>>(tensors), dim);
}

// Joins equally shaped tensors along a new dim.
template <class T>
Tensor<T> stack(const std::vector<Tensor<T>>& tensors, int64_t dim = 0) {
  detail::check(!tensors.empty(), "stack expects a non-empty TensorList");
  for (std::size_t i = 1; i < tensors.size(); ++i)
    detail::check(tensors[i].sizes() == tensors[0].sizes(), "stack expects each tensor to be equal size, but got ",
                  tensors[0].sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  dim = detail::wrap_dim(dim, tensors[0].dim() + 1);
  auto out = detail::unrecorded([&] {
    std::vector<Tensor<T>> parts;
    parts.reserve(tensors.size());
    for (const auto& t : tensors) parts.push_back(t.unsqueeze(dim));
    return detail::cat_impl(parts, dim);
  });
  detail::record_op<autograd::tag::Cat>(out, tensors, dim, "StackBackward0", true);
  return out;
}
template <class T>
Tensor<T> stack(std::initializer_list<Tensor<T>> tensors, int64_t dim = 0) {
  return stack(std::vector<Tensor<T>>(tensors), dim);
}

// Views of consecutive pieces of the given sizes along dim.
template <class T>
std::vector<Tensor<T>> split(const Tensor<T>& x, const std::vector<int64_t>& sizes, int64_t dim = 0) {
  dim = detail::wrap_dim(dim, x.dim());
  const int64_t n = x.size(dim);
  int64_t sum = 0;
  for (int64_t s : sizes) sum += s;
  if (sum != n) {
    std::ostringstream os;
    os << "split_with_sizes expects split_sizes to sum exactly to " << n << " (input tensor's size at dimension "
       << dim << "), but got split_sizes=[";
    for (std::size_t i = 0; i < sizes.size(); ++i) os << (i ? ", " : "") << sizes[i];
    os << "]";
    throw Error(os.str());
  }
  std::vector<Tensor<T>> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    detail::check(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=",
                  s);
    out.push_back(x.narrow(dim, at, s));
    at += s;
  }
  return out;
}

// Views of pieces of split_size along dim (the last may be smaller).
template <class T>
std::vector<Tensor<T>> split(const Tensor<T>& x, int64_t split_size, int64_t dim = 0) {
  dim = detail::wrap_dim(dim, x.dim());
  const int64_t n = x.size(dim);
  detail::check(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  detail::check(split_size > 0 || n == 0, "split_size can only be 0 if dimension size is 0, but got dimension size of ",
                n);
  const int64_t pieces = split_size == 0 ? 1 : std::max<int64_t>((n + split_size - 1) / split_size, 1);
  std::vector<int64_t> sizes(static_cast<std::size_t>(pieces), split_size);
  sizes.back() = n - split_size * (pieces - 1);
  return split(x, sizes, dim);
}

// At most `chunks` views of equal size along dim (PyTorch's chunk: the size
// is ceil(n / chunks), so fewer pieces may come back).
template <class T>
std::vector<Tensor<T>> chunk(const Tensor<T>& x, int64_t chunks, int64_t dim = 0) {
  detail::check(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  const int64_t n = x.size(dim);
  return split(x, (n + chunks - 1) / chunks, dim);
}

namespace detail {
template <class T>
Tensor<T> flip_impl(const Tensor<T>& x, const Shape& dims) {
  const auto wrapped = detail::unique_dims(dims, x.dim());
  if (x.dim() == 0) return x.clone();
  Tensor<T> out = x.contiguous();
  bool copied = false;
  for (int64_t d : wrapped) {
    const int64_t n = out.size(d);
    out = detail::take_along(out, d, n, [n](int64_t i) { return n - 1 - i; });
    copied = true;
  }
  return copied || !out.is_alias_of(x) ? out : out.clone();
}
}  // namespace detail

// Reverses the order of elements along each of `dims`.
template <class T>
Tensor<T> flip(const Tensor<T>& x, const Shape& dims) {
  auto out = detail::unrecorded([&] { return detail::flip_impl(x, dims); });
  detail::record_op<autograd::tag::Flip>(out, x, dims);
  return out;
}

// Left-right (the second dim) and up-down (the first) reversals.
template <class T>
Tensor<T> fliplr(const Tensor<T>& x) {
  detail::check(x.dim() >= 2, "Input must be >= 2-d.");
  return flip(x, {1});
}
template <class T>
Tensor<T> flipud(const Tensor<T>& x) {
  detail::check(x.dim() >= 1, "Input must be >= 1-d.");
  return flip(x, {0});
}

namespace detail {
template <class T>
Tensor<T> roll_impl(const Tensor<T>& x, const Shape& shifts, const Shape& dims) {
  if (dims.empty()) {
    detail::check(shifts.size() == 1, "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:", 0);
    return roll_impl(x.flatten(), shifts, Shape{0}).view(x.sizes());
  }
  detail::check(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
                ", dims:", dims.size());
  Tensor<T> out = x.clone();
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const int64_t d = detail::wrap_dim(dims[k], x.dim());
    if (x.dim() == 0) continue;
    const int64_t n = out.size(d);
    if (n == 0) continue;
    const int64_t s = ((shifts[k] % n) + n) % n;
    out = detail::take_along(out, d, n, [n, s](int64_t i) { return (i - s + n) % n; });
  }
  return out;
}
}  // namespace detail

// Rotates elements along dims by shifts (element i moves to i + shift);
// with no dims, the flattened tensor rotates and keeps its shape.
template <class T>
Tensor<T> roll(const Tensor<T>& x, const Shape& shifts, const Shape& dims = {}) {
  auto out = detail::unrecorded([&] { return detail::roll_impl(x, shifts, dims); });
  detail::record_op<autograd::tag::Roll>(out, x, shifts, dims);
  return out;
}
template <class T>
Tensor<T> roll(const Tensor<T>& x, int64_t shift, int64_t dim) {
  return roll(x, Shape{shift}, Shape{dim});
}
// One shift and no dim: rolls the flattened tensor, as torch::roll(x, 2).
template <class T>
Tensor<T> roll(const Tensor<T>& x, int64_t shift) {
  return roll(x, Shape{shift});
}

namespace detail {
template <class T>
Tensor<T> repeat_impl(const Tensor<T>& x, const Shape& reps) {
  const int64_t n = static_cast<int64_t>(reps.size());
  detail::check(n >= x.dim(),
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  Shape out_shape(reps.size()), pairs, pair_strides;
  for (int64_t d = 0; d < n; ++d) {
    const int64_t xd = d - (n - x.dim());
    const int64_t size = xd >= 0 ? x.size(xd) : 1, stride = xd >= 0 ? x.stride(xd) : 0;
    out_shape[static_cast<std::size_t>(d)] = reps[static_cast<std::size_t>(d)] * size;
    pairs.push_back(reps[static_cast<std::size_t>(d)]), pairs.push_back(size);
    pair_strides.push_back(0), pair_strides.push_back(stride);
  }
  auto out = Tensor<T>::allocate(out_shape);
  if (out.numel() == 0) return out;
  // out viewed as (r0, s0, r1, s1, ...) is x broadcast along every r.
  out.view(pairs).copy_(x.as_strided(pairs, pair_strides, x.storage_offset()));
  return out;
}
}  // namespace detail

// Repeats the whole tensor reps[d] times along each dim (PyTorch's
// Tensor.repeat); reps may add leading dims.
template <class T>
Tensor<T> repeat(const Tensor<T>& x, const Shape& reps) {
  auto out = detail::unrecorded([&] { return detail::repeat_impl(x, reps); });
  detail::record_op<autograd::tag::Repeat>(out, x, reps);
  return out;
}

// numpy.tile: like repeat, but reps shorter than the rank count from the last dim.
template <class T>
Tensor<T> tile(const Tensor<T>& x, Shape reps) {
  while (static_cast<int64_t>(reps.size()) < x.dim()) reps.insert(0, 1);
  return repeat(x, reps);
}

namespace detail {
// Zeroes, in each matrix of the last two dims, the elements above (Lower)
// or below the k-th diagonal.
template <bool Lower, class T>
Tensor<T> triangle(const Tensor<T>& x, int64_t k) {
  const int64_t rows_dim = wrap_dim(-2, x.dim());  // PyTorch's error for fewer than 2 dims
  Tensor<T> out = unrecorded([&] { return x.clone(); });
  const int64_t rows = out.size(rows_dim), cols = out.size(-1);
  const int64_t count = rows * cols == 0 ? 0 : out.numel() / (rows * cols);
  T* p = out.data_ptr();
  for (int64_t b = 0; b < count; ++b)
    for (int64_t i = 0; i < rows; ++i) {
      T* row = p + (b * rows + i) * cols;
      const int64_t edge = std::clamp<int64_t>(Lower ? i + k + 1 : i + k, 0, cols);
      if (Lower) std::fill(row + edge, row + cols, T(0));
      else std::fill(row, row + edge, T(0));
    }
  record_op<autograd::tag::Triangle>(out, x, k, Lower);
  return out;
}
}  // namespace detail

// The lower triangle (j <= i + k) of each matrix in the last two dims.
template <class T>
Tensor<T> tril(const Tensor<T>& x, int64_t k = 0) {
  return detail::triangle<true>(x, k);
}
// The upper triangle (j >= i + k) of each matrix in the last two dims.
template <class T>
Tensor<T> triu(const Tensor<T>& x, int64_t k = 0) {
  return detail::triangle<false>(x, k);
}

// A view of the diagonal with the given offset of the (dim1, dim2) planes,
// appended as the last dim (writes go through to x, as in PyTorch).
template <class T>
Tensor<T> diagonal(const Tensor<T>& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) {
  const int64_t d1 = detail::wrap_dim(dim1, x.dim()), d2 = detail::wrap_dim(dim2, x.dim());
  detail::check(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t s1 = x.size(d1), s2 = x.size(d2);
  const int64_t len = std::max<int64_t>(0, offset >= 0 ? std::min(s1, s2 - offset) : std::min(s1 + offset, s2));
  int64_t start = x.storage_offset();
  if (len > 0) start += offset >= 0 ? offset * x.stride(d2) : -offset * x.stride(d1);
  Shape sizes;
  Strides strides;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != d1 && d != d2) sizes.push_back(x.size(d)), strides.push_back(x.stride(d));
  sizes.push_back(len), strides.push_back(x.stride(d1) + x.stride(d2));
  return x.as_strided(sizes, strides, start);
}

// The slices along dim, as views (torch.unbind).
template <class T>
std::vector<Tensor<T>> unbind(const Tensor<T>& x, int64_t dim = 0) {
  detail::check<IndexError>(x.dim() > 0, "Dimension specified as ", dim, " but tensor has no dimensions");
  dim = detail::wrap_dim(dim, x.dim());
  std::vector<Tensor<T>> out;
  out.reserve(static_cast<std::size_t>(x.size(dim)));
  for (int64_t i = 0; i < x.size(dim); ++i) out.push_back(x.select(dim, i));
  return out;
}

// A view with the dims `source` moved to the positions `destination`, the
// other dims keeping their order (torch.movedim, numpy.moveaxis).
template <class T>
Tensor<T> movedim(const Tensor<T>& x, const Shape& source, const Shape& destination) {
  detail::check(source.size() == destination.size(), "movedim: Invalid source or destination dims: source (", source,
                " dims) should contain the same number of dims as destination (", destination, " dims)");
  const int64_t n = x.dim();
  std::vector<int64_t> src, dst;
  for (std::size_t i = 0; i < source.size(); ++i) {
    src.push_back(detail::wrap_dim(source[i], n));
    dst.push_back(detail::wrap_dim(destination[i], n));
  }
  auto repeated = [](std::vector<int64_t> dims) {
    std::sort(dims.begin(), dims.end());
    return std::adjacent_find(dims.begin(), dims.end()) != dims.end();
  };
  detail::check(!repeated(src), "movedim: repeated dim in `source` (", source, ")");
  detail::check(!repeated(dst), "movedim: repeated dim in `destination` (", destination, ")");
  if (n == 0) return x.view(x.sizes());
  // order[d] is the input dim that lands at d: the moved dims where they
  // go, the others in their order in the free positions.
  Shape order(static_cast<std::size_t>(n), -1);
  std::vector<bool> moved(static_cast<std::size_t>(n), false);
  for (std::size_t i = 0; i < src.size(); ++i) {
    order[static_cast<std::size_t>(dst[i])] = src[i];
    moved[static_cast<std::size_t>(src[i])] = true;
  }
  int64_t next = 0;
  for (auto& d : order) {
    if (d >= 0) continue;
    while (moved[static_cast<std::size_t>(next)]) ++next;
    d = next++;
  }
  return x.permute(order);
}
template <class T>
Tensor<T> movedim(const Tensor<T>& x, int64_t source, int64_t destination) {
  return movedim(x, Shape{source}, Shape{destination});
}
// numpy's names for movedim and transpose.
template <class T>
Tensor<T> moveaxis(const Tensor<T>& x, const Shape& source, const Shape& destination) {
  return movedim(x, source, destination);
}
template <class T>
Tensor<T> moveaxis(const Tensor<T>& x, int64_t source, int64_t destination) {
  return movedim(x, source, destination);
}
template <class T>
Tensor<T> swapaxes(const Tensor<T>& x, int64_t axis0, int64_t axis1) {
  return x.transpose(axis0, axis1);
}
template <class T>
Tensor<T> swapdims(const Tensor<T>& x, int64_t dim0, int64_t dim1) {
  return x.transpose(dim0, dim1);
}

// The sum of a matrix's main diagonal (integers sum to int64, as sum does).
template <class T>
auto trace(const Tensor<T>& x) {
  static_assert(!std::is_same_v<T, bool>, "trace: bool tensors are not supported, as in PyTorch");
  detail::check(x.dim() == 2, "trace: expected a matrix, but got tensor with dim ", x.dim());
  return sum(diagonal(x));
}

// torch.diag: of a vector, the square matrix with it on the k-th diagonal;
// of a matrix, its k-th diagonal as a new vector.
template <class T>
Tensor<T> diag(const Tensor<T>& x, int64_t k = 0) {
  detail::check(x.dim() == 1 || x.dim() == 2, "matrix or a vector expected");
  if (x.dim() == 2) return diagonal(x, k).clone();
  const int64_t n = x.size(0) + (k < 0 ? -k : k);
  Tensor<T> out = zeros<T>({n, n}, x.device());
  diagonal(out, k).copy_(x);
  return out;
}

// The n-th forward difference along dim (torch.diff), of x with `prepend`
// and `append` (undefined: none) joined before and after it along dim; for
// bool tensors a difference is "not equal", as in PyTorch.
template <class T>
Tensor<T> diff(const Tensor<T>& x, int64_t n = 1, int64_t dim = -1, const Tensor<T>& prepend = {},
               const Tensor<T>& append = {}) {
  detail::check(x.dim() >= 1, "diff expects input to be at least one-dimensional");
  dim = detail::wrap_dim(dim, x.dim());
  std::vector<Tensor<T>> parts;
  for (const Tensor<T>* side : {&prepend, &x, &append}) {
    if (!side->defined()) continue;
    if (side != &x) {
      detail::check(side->dim() == x.dim(), "diff expects prepend or append to be the same dimension as input");
      for (int64_t d = 0; d < x.dim(); ++d)
        detail::check(d == dim || side->size(d) == x.size(d),
                      "diff expects the shape of tensor to prepend or append to match that of input except along "
                      "the differencing dimension; input.size(", d, ") = ", x.size(d), ", but got tensor.size(", d,
                      ") = ", side->size(d));
    }
    parts.push_back(*side);
  }
  Tensor<T> out = parts.size() == 1 ? x : cat(parts, dim);
  for (int64_t i = 0; i < n && out.size(dim) > 0; ++i) {
    const int64_t len = out.size(dim) - 1;
    const Tensor<T> later = out.narrow(dim, 1, len), earlier = out.narrow(dim, 0, len);
    if constexpr (std::is_same_v<T, bool>) out = later != earlier;
    else out = later - earlier;
  }
  return out;
}

// Grids of coordinates: for tensors t_0 .. t_{n-1} (each 0-D or 1-D), n
// views of one shape, the i-th repeating t_i along its own dim. "ij"
// indexing gives dim i to t_i; "xy" (Cartesian, as numpy's default) swaps
// the first two dims.
template <class T>
std::vector<Tensor<T>> meshgrid(const std::vector<Tensor<T>>& tensors, std::string_view indexing = "ij") {
  detail::check(!tensors.empty(), "meshgrid expects a non-empty TensorList");
  detail::check(indexing == "ij" || indexing == "xy",
                "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ", indexing);
  Shape shape;
  for (const auto& t : tensors) {
    detail::check(t.dim() <= 1, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of shape ",
                  t.sizes());
    detail::check(t.device() == tensors[0].device(), "meshgrid expects all tensors to have the same device");
    shape.push_back(t.numel());
  }
  const bool xy = indexing == "xy" && tensors.size() >= 2;
  if (xy) std::swap(shape[0], shape[1]);
  std::vector<Tensor<T>> grids;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::size_t at = xy && i < 2 ? 1 - i : i;
    Shape along;
    for (std::size_t d = 0; d < tensors.size(); ++d) along.push_back(d == at ? tensors[i].numel() : 1);
    grids.push_back(tensors[i].reshape(along).expand(shape));
  }
  return grids;
}
template <class T>
std::vector<Tensor<T>> meshgrid(std::initializer_list<Tensor<T>> tensors, std::string_view indexing = "ij") {
  return meshgrid(std::vector<Tensor<T>>(tensors), indexing);
}

// Every combination of one element from each 1-D tensor, in row-major
// order: a [combinations, tensors] matrix (one tensor: itself).
template <class T>
Tensor<T> cartesian_prod(const std::vector<Tensor<T>>& tensors) {
  for (const auto& t : tensors) detail::check(t.dim() == 1, "Expect a 1D vector, but got shape ", t.sizes());
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor<T>> columns = meshgrid(tensors, "ij");
  for (auto& c : columns) c = c.reshape({-1});
  return stack(columns, 1);
}
template <class T>
Tensor<T> cartesian_prod(std::initializer_list<Tensor<T>> tensors) {
  return cartesian_prod(std::vector<Tensor<T>>(tensors));
}

// The tensors placed along the diagonal of a new matrix, zeros elsewhere: a
// 2-D tensor is a block as it stands, a 1-D one a row, a 0-D one a 1 x 1
// block. No tensors give a 1 x 0 matrix, as in PyTorch.
template <class T>
Tensor<T> block_diag(const std::vector<Tensor<T>>& tensors) {
  std::vector<Tensor<T>> blocks;
  int64_t cols = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor<T>& t = tensors[i];
    detail::check(t.dim() <= 2, "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input ", i, " has ",
                  t.dim(), " dimensions");
    blocks.push_back(t.dim() == 2 ? t : t.reshape({1, t.numel()}));
    cols += blocks.back().size(1);
  }
  if (blocks.empty()) return zeros<T>({1, 0});
  // Each block's rows, padded with zeros on both sides: one cat of rows,
  // which differentiates into each block.
  std::vector<Tensor<T>> rows;
  int64_t left = 0;
  for (const auto& b : blocks) {
    const int64_t r = b.size(0), c = b.size(1);
    rows.push_back(cat({zeros<T>({r, left}, b.device()), b, zeros<T>({r, cols - left - c}, b.device())}, 1));
    left += c;
  }
  return cat(rows, 0);
}
template <class T>
Tensor<T> block_diag(std::initializer_list<Tensor<T>> tensors) {
  return block_diag(std::vector<Tensor<T>>(tensors));
}

// x turned k quarter turns in the plane of dims (from dims[0] towards
// dims[1]); a negative k turns the other way.
template <class T>
Tensor<T> rot90(const Tensor<T>& x, int64_t k = 1, const Shape& dims = {0, 1}) {
  detail::check(dims.size() == 2, "expected total rotation dims == 2, but got dims = ", dims.size());
  detail::check(x.dim() >= 2, "expected total dims >= 2, but got total dims = ", x.dim());
  const int64_t d0 = detail::wrap_dim(dims[0], x.dim()), d1 = detail::wrap_dim(dims[1], x.dim());
  detail::check(d0 != d1, "expected rotation dims to be different, but got dim0 = ", dims[0], " and dim1 = ", dims[1]);
  switch (((k % 4) + 4) % 4) {
    case 1: return flip(x, {d1}).transpose(d0, d1);
    case 2: return flip(x, {d0, d1});
    case 3: return flip(x, {d0}).transpose(d0, d1);
    default: return x.clone();
  }
}

// x with at least 1, 2 or 3 dims, as a view: a 0-D x becomes [1] ([1, 1],
// [1, 1, 1]), a 1-D [n] becomes [1, n] (atleast_3d: [1, n, 1]) and a 2-D
// [m, n] becomes [m, n, 1] for atleast_3d.
template <class T>
Tensor<T> atleast_1d(const Tensor<T>& x) {
  return x.dim() >= 1 ? x : x.reshape({1});
}
template <class T>
Tensor<T> atleast_2d(const Tensor<T>& x) {
  return x.dim() >= 2 ? x : x.reshape({1, x.numel()});
}
template <class T>
Tensor<T> atleast_3d(const Tensor<T>& x) {
  if (x.dim() >= 3) return x;
  if (x.dim() == 2) return x.unsqueeze(2);
  return x.reshape({1, x.numel(), 1});
}

}  // namespace tsr
