// Tensor<T>: a shared handle to storage, offset, sizes and strides.
// Views share storage; copies are explicit (clone, contiguous, to).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autograd/grad_mode.hpp"
#include "autograd/meta.hpp"
#include "autograd/tags.hpp"
#include "expr.hpp"
#include "storage.hpp"

namespace tsr {

namespace detail {
template <class T, class E>
void assign(const Tensor<T>& dst, const E& src, bool in_place = false);
// The device of an expression's first tensor (the CPU for scalars alone),
// where its result is made; evaluation checks that the others agree.
template <class E>
Device expr_device(const E& e) {
  Device device = kCPU;
  bool found = false;
  e.for_each_leaf([&](const auto& leaf) {
    if (!found) device = leaf.device();
    found = true;
  });
  return device;
}
// Autograd hooks (autograd/fused.hpp): recording a materialized expression,
// and refusing in-place writes autograd cannot follow yet.
template <class T, class E>
void record_expression(const Tensor<T>& out, const E& e);
template <class T, class E>
bool materialized_op_by_op(Tensor<T>& out, const E& e);
template <class T, class E>
void check_in_place(const Tensor<T>& dst, const E& src);
// In-place writes with autograd (autograd/in_place.hpp): whether dst = src
// must be recorded, and the recorded write.
template <class T, class E>
bool in_place_records(const Tensor<T>& dst, const E& src);
template <class T, class E>
Tensor<T>& copy_with_history(Tensor<T>& dst, const E& src);
template <class T, class E>
void record_full_reduction(const Tensor<T>& out, const E& e, bool mean);
template <class T>
void record_view(const Tensor<T>& base, const Tensor<T>& view);
template <class T>
void sync_view(const std::shared_ptr<TensorImpl>& view);
// Records out as the result of the op Tag over args when one of them
// requires grad (autograd/function_node.hpp; the rules in autograd/*_rules.hpp).
template <class Tag, class T, class... Args>
void record_op(const Tensor<T>& out, const Args&... args);
// Refuses inputs that require grad in operations without a backward yet.
template <class... E>
void check_no_autograd(const char* op, const E&... inputs);

// The leaf evaluator: a raw pointer and strides aligned to the plan.
template <class T>
struct TensorEval {
  using value_type = T;
  static constexpr bool simd = is_simd_storage_v<T>;
  const T* base;
  const T* ptr;
  int64_t inner;
  int ndim;
  int64_t st[kMaxEvalDims];
  TSR_HOST_DEVICE void set_row(const int64_t* idx, int nd) {
    int64_t off = 0;
#if defined(__CUDA_ARCH__)
    // Every dim named at compile time (config.hpp, TSR_DEVICE_UNROLL).
    TSR_DEVICE_UNROLL for (int k = 0; k < kMaxEvalDims; ++k) {
      if (k >= nd) continue;
      off += idx[k] * st[k];
      inner = st[k];  // the last dim's, in the end
    }
#else
    for (int k = 0; k < nd; ++k) off += idx[k] * st[k];
    inner = st[nd - 1];
#endif
    ptr = base + off;
  }
  TSR_HOST_DEVICE T operator[](int64_t i) const { return ptr[i * inner]; }
  // W values from column i (a multiple of W) on: one vector load of the
  // row when it is contiguous, the one value when it is broadcast.
  template <int W>
  TSR_HOST_DEVICE Packet<T, W> packet(int64_t i) const {
    if (inner == 0) return packet_of<W>(*ptr);
    return *reinterpret_cast<const Packet<T, W>*>(ptr + i);
  }
  // Whether packet<W> may read this row.
  template <int W>
  bool packet_ready() const { return inner == 0 || (inner == 1 && packet_aligned<T, W>(ptr)); }
  // A batch along the row: stride 1 loads, stride 0 broadcasts.
  template <class B>
  B batch(int64_t i) const {
    return inner ? B::load_unaligned(ptr + i) : B(*ptr);
  }
  // The same, for rows where every leaf has stride 1 (no branch).
  template <class B>
  B batch_contig(int64_t i) const {
    return B::load_unaligned(ptr + i);
  }
  // Asks for the cache line of column i of a row of stride 0 or 1 (the
  // loops of large outputs, which run ahead of the hardware's prefetcher).
  [[gnu::always_inline]] void prefetch(int64_t i) const { __builtin_prefetch(ptr + i * inner); }
  // at(x): every tensor leaf of the tree is x (OneLeaf): the leaf is x.
  template <class X>
  TSR_HOST_DEVICE T at(X x) const { return static_cast<T>(x); }
  template <class B, class X>
  B at_batch(X x) const { return x; }
  bool unit_inner() const { return st[ndim - 1] == 0 || st[ndim - 1] == 1; }
  bool contiguous_inner() const { return st[ndim - 1] == 1; }
  // The one-row layout of a contiguous leaf, or of a single element
  // (stride 0: broadcast along the row).
  void set_linear(const T* data, bool single) {
    base = ptr = data;
    ndim = 1;
    st[0] = inner = single ? 0 : 1;
  }
};
}  // namespace detail

// What a tensor handle points at.
// numel and contiguity are derived from sizes and strides once, when the
// geometry is set (every evaluation asks for them).
struct TensorImpl {
  // User-provided, so that make_shared's value-initialization does not zero
  // the whole object first (the members below initialize themselves, and
  // the shapes' inline buffers need nothing): every new tensor pays it.
  TensorImpl() {}  // NOLINT(modernize-use-equals-default)

  Storage storage;
  int64_t offset = 0;
  Shape sizes;
  Strides strides;
  int64_t numel = 1;
  bool contiguous = true;
  std::unique_ptr<detail::AutogradMeta> autograd;  // null unless autograd ever touched this tensor
  // For a view made with grad mode on: the tensor it views (the first
  // non-view one, as PyTorch's _base), and the storage version its autograd
  // state was last derived at. An in-place write through any view rebases
  // the base's history; the other views derive theirs again when they see
  // the version move. Views made with grad mode off (backward's own, or
  // under NoGradGuard) keep no base: they only carry the flag below, and a
  // recorded in-place write into one is PyTorch's error.
  std::shared_ptr<TensorImpl> view_base;
  uint64_t view_version = 0;
  // Set with view_base: brings this view's autograd state up to date
  // (autograd/view_node.hpp). A pointer, set where the view is made (which
  // compiles the view's recording anyway), so that code that only asks
  // whether a tensor requires grad compiles none of it.
  void (*sync_view)(const std::shared_ptr<TensorImpl>& self) = nullptr;
  bool view_without_grad_mode = false;

  void set_geometry(Shape sz, Strides st, int64_t off) {
    sizes = std::move(sz);
    strides = std::move(st);
    offset = off;
    numel = detail::numel_of(sizes);
    contiguous = true;
    int64_t expected = 1;
    for (std::size_t d = sizes.size(); d-- > 0;) {
      if (sizes[d] == 1) continue;
      if (strides[d] != expected) {
        contiguous = numel == 0;
        break;
      }
      expected *= sizes[d];
    }
  }

  // set_geometry for a new contiguous tensor, with no temporaries.
  void set_contiguous_geometry(const Shape& sz) {
    sizes = sz;
    detail::set_contiguous_strides(sz, strides);
    numel = detail::numel_of(sz);
    offset = 0;
    contiguous = true;
  }

  // Elements spanned from the first addressed one to the last, inclusive
  // (0 for an empty tensor): what the storage must hold past `offset`.
  int64_t extent() const {
    if (numel == 0) return 0;
    return contiguous ? numel : strided_extent();
  }

 private:
  // Out of line: every evaluation asks for extents, nearly always of
  // contiguous tensors, and the loop would bloat each caller.
  [[gnu::noinline]] int64_t strided_extent() const {
    int64_t e = 1;
    for (std::size_t d = 0; d < sizes.size(); ++d) e += (sizes[d] - 1) * strides[d];
    return e;
  }
};

class IndexTensor;  // an advanced index's tensor (advanced_indexing.hpp)

namespace detail {
template <class E>
inline constexpr bool is_tensor_v = false;
template <class U>
inline constexpr bool is_tensor_v<Tensor<U>> = true;
}  // namespace detail

template <class T = float>
class Tensor : public ExprBase<Tensor<T>> {
  static_assert(is_element_type_v<T>,
                "Tensor<T>: T must be float, double, int32_t, int64_t, bool, half or bfloat16");

 public:
  using value_type = T;

  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  // Materializes an expression into a new contiguous tensor. The expression's
  // type must cast to T by PyTorch's can_cast (no float into an integer
  // tensor, nothing into bool); cast<T>(e) converts explicitly.
  template <Expression E>
  Tensor(const E& e) {  // NOLINT: implicit, `Tensor y = a + b;`
    static_assert(can_cast_v<typename E::value_type, T>,
                  "result type can't be cast to the desired output type (a floating expression into an integer "
                  "tensor, or a non-bool one into bool): write tsr::cast<T>(expr) to convert explicitly");
    if constexpr (!detail::kFusedAutograd)
      if (detail::materialized_op_by_op(*this, e)) return;
    *this = allocate(e.sizes(), detail::expr_device(e));
    detail::assign(*this, e);
    detail::record_expression(*this, e);
  }

  // Assignment to a named tensor rebinds it (libtorch semantics) ...
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & noexcept = default;
  template <Expression E>
  Tensor& operator=(const E& e) & {
    return *this = Tensor(e);
  }
  // ... assignment to a temporary (a view) writes through into its storage.
  Tensor& operator=(const Tensor& src) && { return copy_(src); }
  template <Expression E>
  Tensor& operator=(const E& e) && {
    return copy_(e);
  }
  Tensor& operator=(T value) && { return fill_(value); }

  // A tensor over memory it does not own (from_blob); strides default to
  // contiguous.
  static Tensor from_raw(T* data, Shape sizes, Strides strides = {}) {
    if (strides.empty()) strides = detail::contiguous_strides(sizes);
    detail::check(strides.size() == sizes.size(), "from_blob: got ", sizes.size(), " sizes and ", strides.size(),
                  " strides");
    auto impl = detail::make_handle<TensorImpl>();
    impl->set_geometry(std::move(sizes), std::move(strides), 0);
    impl->storage = detail::make_handle<StorageImpl>(static_cast<void*>(data),
                                                  static_cast<std::size_t>(impl->extent()) * sizeof(T), kCPU);
    return Tensor(std::move(impl));
  }

  // A new contiguous, uninitialized tensor.
  static Tensor allocate(const Shape& sizes, Device device = kCPU) { return allocate_in(sizes, device); }
  // The same in page-locked host memory (pin_memory).
  static Tensor allocate_pinned(const Shape& sizes) { return allocate_in(sizes, StorageImpl::PinnedHost{}); }

  // ----- metadata ---------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }
  const Shape& sizes() const { return impl().sizes; }
  const Strides& strides() const { return impl().strides; }
  int64_t size(int64_t d) const { return sizes()[detail::wrap_dim(d, dim())]; }
  int64_t stride(int64_t d) const { return strides()[detail::wrap_dim(d, dim())]; }
  int64_t dim() const { return static_cast<int64_t>(sizes().size()); }
  int64_t numel() const { return impl().numel; }
  int64_t storage_offset() const { return impl().offset; }
  Device device() const { return impl().storage->device(); }
  const Storage& storage() const { return impl().storage; }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_contiguous() const { return impl().contiguous; }
  // PyTorch's other names for numel() and dim().
  int64_t nelement() const { return numel(); }
  int64_t ndimension() const { return dim(); }
  template <class U>
  bool is_same_size(const Tensor<U>& other) const { return sizes() == other.sizes(); }
  // Whether a one-element tensor is not zero (NaN is not), as `if tensor:` in Python.
  bool is_nonzero() const;
  // Elements spanned in storage from storage_offset() (see TensorImpl::extent).
  int64_t extent() const { return impl().extent(); }
  // True when the two tensors view the same storage.
  bool is_alias_of(const Tensor& o) const { return defined() && o.defined() && storage() == o.storage(); }

  // The first element's address, for the host to read and write: a tensor
  // on a device is an error here (host code reading device memory would
  // crash the program); device_data_ptr() gives its address on the device.
  [[gnu::always_inline]] T* data_ptr() const {
    if (!device().is_cpu()) [[unlikely]]
      detail::fail_host_only(device(), "this operation (it reads the tensor's memory on the host, through data_ptr())");
    return device_data_ptr();
  }
  // The first element's address on the tensor's own device (PyTorch's
  // data_ptr()): for the CPU the same as data_ptr(), for a CUDA tensor a
  // device pointer, to be passed to kernels or the CUDA runtime.
  [[gnu::always_inline]] T* device_data_ptr() const {
    check_storage();
    return static_cast<T*>(storage()->data()) + storage_offset();
  }
  T item() const {
    detail::check(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
    if (!device().is_cpu()) return copy_to(kCPU).item();
    return *data_ptr();
  }
  std::vector<T> to_vector() const;

  // Element reference; negative indices count from the end.
  template <class... I>
    requires(std::is_integral_v<I> && ...)
  T& operator()(I... indices) const {
    constexpr int64_t n = sizeof...(I);
    detail::check<IndexError>(n == dim(), "too many indices for tensor of dimension ", dim(),
                              " (got ", n, ")");
    const int64_t idx[] = {static_cast<int64_t>(indices)..., 0};
    int64_t off = 0;
    for (int64_t d = 0; d < n; ++d) {
      const int64_t size = sizes()[d];
      int64_t i = idx[d];
      detail::check<IndexError>(i >= -size && i < size, "index ", i, " is out of bounds for dimension ", d,
                                " with size ", size);
      off += (i < 0 ? i + size : i) * strides()[d];
    }
    return data_ptr()[off];
  }

  // ----- views (share storage) ---------------------------------------------
  Tensor view(Shape shape) const;
  Tensor reshape(Shape shape) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;
  Tensor permute(Shape dims) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor expand(Shape shape) const;
  Tensor as_strided(Shape sizes, Strides strides, int64_t offset) const;
  // The windows of `size` elements along dim, `step` apart, in a new last
  // dim (Tensor.unfold): a view, whose windows overlap when step < size.
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;
  // The views with another tensor's shape (its element type may differ).
  template <class U>
  Tensor expand_as(const Tensor<U>& other) const { return expand(other.sizes()); }
  template <class U>
  Tensor reshape_as(const Tensor<U>& other) const { return reshape(other.sizes()); }
  template <class U>
  Tensor view_as(const Tensor<U>& other) const { return view(other.sizes()); }
  // Makes this tensor a view of `source` (offset, sizes and strides in
  // elements; strides default to contiguous), as PyTorch's set_: every
  // handle to this tensor sees the new storage, its autograd state stays.
  // A leaf that requires grad can be set under NoGradGuard only.
  Tensor& set_(Storage source, int64_t storage_offset, Shape sizes, Strides strides = {});

  // ----- copies ------------------------------------------------------------
  Tensor contiguous() const { return is_contiguous() ? *this : clone(); }
  Tensor clone() const { return Tensor(*this, CloneTag{}); }
  template <class U>
  Tensor<U> to() const {
    if constexpr (std::is_same_v<U, T>) return *this;
    else return Tensor<U>(cast<U>(*this));
  }
  // This tensor on device d: itself when it is there already, else a
  // contiguous copy (any device pair, from any translation unit of a
  // program with the CUDA backend), recorded by autograd (ToCopyBackward0).
  Tensor to(Device d) const { return to(d, false); }
  // With non_blocking, as PyTorch's: a copy from pinned host memory to a
  // device, or from a device to the host (into a new pinned tensor), is
  // queued on the current stream and not waited for. Synchronize (the
  // stream, an event recorded after it, or cuda::synchronize()) before the
  // host reads the result or writes the source. Other copies wait.
  Tensor to(Device d, bool non_blocking) const;
  // The copy to(d) makes for another device, with no autograd: the values
  // only.
  Tensor copy_to(Device d, bool non_blocking = false) const;
  // A copy in page-locked host memory, which copies to and from devices
  // read and write directly (non_blocking), or the tensor itself when it is
  // pinned already; a CPU tensor's only. Needs the CUDA backend in the
  // program.
  Tensor pin_memory() const;
  bool is_pinned() const { return storage()->pinned(); }
  // This tensor with other's element type and on other's device.
  template <class U>
  Tensor<U> type_as(const Tensor<U>& other) const { return to<U>().to(other.device()); }
  // New tensors with this one's element type and device (PyTorch's new_*
  // methods): uninitialized, filled with value, zeros, ones.
  Tensor new_empty(const Shape& sizes) const { return allocate(sizes, device()); }
  Tensor new_full(const Shape& sizes, T value) const {
    Tensor out = new_empty(sizes);
    out.fill_(value);
    return out;
  }
  Tensor new_zeros(const Shape& sizes) const { return new_full(sizes, T(0)); }
  Tensor new_ones(const Shape& sizes) const { return new_full(sizes, T(1)); }
  // The sum of this tensor down to `size`, which must expand to its shape:
  // the leading dims it lacks, and those where it has 1, are summed (the
  // gradient of a broadcast). Sums of integers are int64, as sum's.
  template <class U = T>
  auto sum_to_size(const Shape& size) const;

  // ----- in place (each returns *this) --------------------------------------
  template <class E>
  Tensor& copy_(const E& src) {
    if constexpr (Expression<E>) {
      // A tensor on another device comes over first, as PyTorch's copy_
      // takes one (the gradient goes back to its device).
      if constexpr (detail::is_tensor_v<E>)
        if (src.defined() && src.device() != device()) [[unlikely]]
          return copy_(src.to(device()));
      // With autograd involved, the write is recorded (autograd/in_place.hpp).
      if (detail::in_place_records(*this, src)) return detail::copy_with_history(*this, src);
      // Every in-place write bumps the version (a new tensor starts at 0).
      detail::assign(*this, src, /*in_place=*/true);
      return *this;
    } else {
      return copy_(ScalarLeaf<T>(detail::convert<T>(src)));
    }
  }
  Tensor& fill_(T value) { return copy_(ScalarLeaf<T>(value)); }
  Tensor& zero_() { return fill_(T(0)); }
  template <class E> Tensor& add_(const E& e) { return update(*this + e); }
  template <class E> Tensor& sub_(const E& e) { return update(*this - e); }
  template <class E> Tensor& mul_(const E& e) { return update(*this * e); }
  template <class E> Tensor& div_(const E& e) { return update(*this / e); }
  template <class E> Tensor& operator+=(const E& e) { return add_(e); }
  template <class E> Tensor& operator-=(const E& e) { return sub_(e); }
  template <class E> Tensor& operator*=(const E& e) { return mul_(e); }
  template <class E> Tensor& operator/=(const E& e) { return div_(e); }
  template <class L, class H> Tensor& clamp_(const L& lo, const H& hi);
  // add_ and sub_ of alpha times e (PyTorch's x.add_(y, alpha=-lr)).
  template <class E, class S> Tensor& add_(const E& e, S alpha);
  template <class E, class S> Tensor& sub_(const E& e, S alpha);

  // In-place forms of the elementwise functions, as PyTorch's x.exp_() or
  // x.addcdiv_(t1, t2, value): each writes the function of this tensor back
  // through copy_, so autograd records it as any in-place write, and the
  // result type must cast to T (an integer tensor's sqrt_ does not compile,
  // where PyTorch raises). Defined in in_place_math.hpp; member templates
  // only so that an explicit instantiation of the class leaves them out.
  template <class U = T> Tensor& abs_();
  template <class U = T> Tensor& absolute_();
  template <class U = T> Tensor& neg_();
  template <class U = T> Tensor& negative_();
  template <class U = T> Tensor& sign_();
  template <class U = T> Tensor& sgn_();
  template <class U = T> Tensor& square_();
  template <class U = T> Tensor& sqrt_();
  template <class U = T> Tensor& rsqrt_();
  template <class U = T> Tensor& reciprocal_();
  template <class U = T> Tensor& exp_();
  template <class U = T> Tensor& exp2_();
  template <class U = T> Tensor& expm1_();
  template <class U = T> Tensor& log_();
  template <class U = T> Tensor& log2_();
  template <class U = T> Tensor& log10_();
  template <class U = T> Tensor& log1p_();
  template <class U = T> Tensor& sin_();
  template <class U = T> Tensor& cos_();
  template <class U = T> Tensor& tan_();
  template <class U = T> Tensor& asin_();
  template <class U = T> Tensor& acos_();
  template <class U = T> Tensor& atan_();
  template <class U = T> Tensor& sinh_();
  template <class U = T> Tensor& cosh_();
  template <class U = T> Tensor& tanh_();
  template <class U = T> Tensor& asinh_();
  template <class U = T> Tensor& acosh_();
  template <class U = T> Tensor& atanh_();
  template <class U = T> Tensor& arcsin_();
  template <class U = T> Tensor& arccos_();
  template <class U = T> Tensor& arctan_();
  template <class U = T> Tensor& arcsinh_();
  template <class U = T> Tensor& arccosh_();
  template <class U = T> Tensor& arctanh_();
  template <class U = T> Tensor& sigmoid_();
  template <class U = T> Tensor& relu_();
  template <class U = T> Tensor& ceil_();
  template <class U = T> Tensor& floor_();
  template <class U = T> Tensor& round_();
  template <class U = T> Tensor& round_(int64_t decimals);
  template <class U = T> Tensor& trunc_();
  template <class U = T> Tensor& fix_();
  template <class U = T> Tensor& frac_();
  template <class U = T> Tensor& erf_();
  template <class U = T> Tensor& erfc_();
  template <class U = T> Tensor& erfinv_();
  template <class U = T> Tensor& lgamma_();
  template <class U = T> Tensor& digamma_();
  template <class U = T> Tensor& polygamma_(int64_t n);
  template <class U = T> Tensor& mvlgamma_(int64_t p);
  template <class U = T> Tensor& i0_();
  template <class U = T> Tensor& sinc_();
  template <class U = T> Tensor& deg2rad_();
  template <class U = T> Tensor& rad2deg_();
  template <class U = T> Tensor& logit_();
  template <class U = T> Tensor& logit_(double eps);
  template <class U = T>
  Tensor& nan_to_num_(double nan = 0.0, std::optional<double> posinf = {}, std::optional<double> neginf = {});
  template <class U = T> Tensor& bitwise_not_();
  template <class U = T> Tensor& logical_not_();
  // With a second operand (a tensor, an expression or a number).
  template <class E> Tensor& pow_(const E& exponent);
  template <class E> Tensor& float_power_(const E& exponent);
  template <class E> Tensor& atan2_(const E& other);
  template <class E> Tensor& arctan2_(const E& other);
  template <class E> Tensor& remainder_(const E& other);
  template <class E> Tensor& fmod_(const E& other);
  template <class E> Tensor& hypot_(const E& other);
  template <class E> Tensor& copysign_(const E& other);
  template <class E> Tensor& nextafter_(const E& other);
  template <class E> Tensor& xlogy_(const E& other);
  template <class E> Tensor& ldexp_(const E& other);
  template <class E> Tensor& igamma_(const E& other);
  template <class E> Tensor& igammac_(const E& other);
  template <class E> Tensor& heaviside_(const E& values);
  template <class E> Tensor& gcd_(const E& other);
  template <class E> Tensor& lcm_(const E& other);
  template <class E> Tensor& multiply_(const E& other);
  template <class E> Tensor& divide_(const E& other);
  template <class E> Tensor& true_divide_(const E& other);
  template <class E> Tensor& floor_divide_(const E& other);
  // rounding_mode "trunc" or "floor", as div's.
  template <class E> Tensor& div_(const E& other, std::string_view rounding_mode);
  template <class E> Tensor& divide_(const E& other, std::string_view rounding_mode);
  template <class E, class S = int> Tensor& subtract_(const E& other, S alpha = 1);
  template <class L> Tensor& clamp_min_(const L& lo);
  template <class H> Tensor& clamp_max_(const H& hi);
  template <class L, class H> Tensor& clip_(const L& lo, const H& hi);
  template <class E> Tensor& logical_and_(const E& other);
  template <class E> Tensor& logical_or_(const E& other);
  template <class E> Tensor& logical_xor_(const E& other);
  template <class E> Tensor& bitwise_and_(const E& other);
  template <class E> Tensor& bitwise_or_(const E& other);
  template <class E> Tensor& bitwise_xor_(const E& other);
  template <class E> Tensor& bitwise_left_shift_(const E& other);
  template <class E> Tensor& bitwise_right_shift_(const E& other);
  // Comparisons write 1 where they hold and 0 elsewhere, in T.
  template <class E> Tensor& eq_(const E& other);
  template <class E> Tensor& ne_(const E& other);
  template <class E> Tensor& lt_(const E& other);
  template <class E> Tensor& le_(const E& other);
  template <class E> Tensor& gt_(const E& other);
  template <class E> Tensor& ge_(const E& other);
  template <class E> Tensor& not_equal_(const E& other);
  template <class E> Tensor& less_(const E& other);
  template <class E> Tensor& less_equal_(const E& other);
  template <class E> Tensor& greater_(const E& other);
  template <class E> Tensor& greater_equal_(const E& other);
  template <class E, class W> Tensor& lerp_(const E& end, const W& weight);
  template <class A, class B> Tensor& addcmul_(const A& tensor1, const B& tensor2, double value = 1.0);
  template <class A, class B> Tensor& addcdiv_(const A& tensor1, const B& tensor2, double value = 1.0);
  // Along or across dims: the result is computed whole, then written.
  template <class U = T> Tensor& tril_(int64_t k = 0);
  template <class U = T> Tensor& triu_(int64_t k = 0);
  template <class U = T> Tensor& cumsum_(int64_t dim);
  template <class U = T> Tensor& cumprod_(int64_t dim);
  template <class U = T> Tensor& renorm_(double p, int64_t dim, double maxnorm);
  // The main diagonal (all indices equal) set to value; with wrap, a tall
  // matrix's diagonal starts again every width + 1 rows, as PyTorch's (and
  // NumPy's) fill_diagonal_.
  template <class U = T> Tensor& fill_diagonal_(T value, bool wrap = false);
  // The indexed writes as methods (x.masked_fill_(mask, v), x.index_add_(0,
  // i, src), x.scatter_(1, i, src), ...): each is the function of the same
  // name applied to this tensor. Defined in in_place_indexing.hpp.
  template <class M, class S> Tensor& masked_fill_(const M& mask, S value);
  template <class M> Tensor& masked_scatter_(const M& mask, const Tensor& source);
  template <class S = int> Tensor& index_add_(int64_t dim, const Tensor<int64_t>& index, const Tensor& source, S alpha = 1);
  template <class U = T> Tensor& index_copy_(int64_t dim, const Tensor<int64_t>& index, const Tensor& source);
  template <class S> Tensor& index_fill_(int64_t dim, const Tensor<int64_t>& index, S value);
  // src a tensor of this type or a number.
  template <class V> Tensor& scatter_(int64_t dim, const Tensor<int64_t>& index, const V& src);
  template <class U = T> Tensor& scatter_add_(int64_t dim, const Tensor<int64_t>& index, const Tensor& src);
  template <class U = T>
  Tensor& scatter_reduce_(int64_t dim, const Tensor<int64_t>& index, const Tensor& src, std::string_view reduce,
                          bool include_self = true);
  // beta * this + alpha * mat1 mat2.
  template <class A, class B, class Beta = double, class Alpha = double>
  Tensor& addmm_(const A& mat1, const B& mat2, Beta beta = 1, Alpha alpha = 1);
  template <class U = T> Tensor& bernoulli_(double p = 0.5);
  // x.index_put_({i, std::nullopt, j}, values) and x.index_put_({mask}, v),
  // as libtorch writes them: index_put_ (advanced_indexing.hpp) on this tensor.
  template <class U = T>
  Tensor& index_put_(const std::vector<std::optional<IndexTensor>>& indices, const Tensor& values,
                     bool accumulate = false);
  template <Scalar S>
  Tensor& index_put_(const std::vector<std::optional<IndexTensor>>& indices, S value, bool accumulate = false);
  // (Member templates only so that an explicit instantiation of Tensor<int>
  // leaves them out: they refuse non-floating types with a static_assert.)
  template <class U = T>
  Tensor& uniform_(double from = 0, double to = 1);
  template <class U = T>
  Tensor& normal_(double mean = 0, double std = 1);
  // PyTorch's other in-place samplers, with its formulas over one uniform
  // double per element, so that a seed gives torch's numbers: Exp(lambd),
  // the trials up to the first success of Bernoulli(p) (integer tensors
  // too), Cauchy(median, sigma), and exp(N(mean, std)).
  template <class U = T>
  Tensor& exponential_(double lambd = 1);
  template <class U = T>
  Tensor& geometric_(double p);
  template <class U = T>
  Tensor& cauchy_(double median = 0, double sigma = 1);
  template <class U = T>
  Tensor& log_normal_(double mean = 1, double std = 2);
  // Integers drawn as PyTorch's random_: in [from, to) (to alone: [0, to)),
  // or with no bounds every integer the type holds exactly (from 0 to 2^24
  // for float, 2^53 for double, the maximum for integer types).
  template <class U = T>
  Tensor& random_(int64_t from, int64_t to);
  template <class U = T>
  Tensor& random_(int64_t to);
  template <class U = T>
  Tensor& random_();

  // ----- autograd (defined in autograd/tensor_autograd.hpp) -------------------
  bool requires_grad() const;
  // Makes a leaf record operations on it (floating types only).
  Tensor& requires_grad_(bool on = true);
  // True for tensors no recorded operation produced.
  bool is_leaf() const;
  // The accumulated gradient of a leaf (undefined until a backward reaches it).
  Tensor grad() const;
  // The .grad slot itself: assign to it (an undefined Tensor clears it).
  Tensor& mutable_grad();
  // hook(grad) runs when this tensor's gradient is computed; a defined
  // result replaces the gradient.
  void register_hook(std::function<Tensor<T>(const Tensor<T>&)> hook);
  // On a leaf: hook(leaf) runs each time a backward has accumulated the
  // leaf's gradient into its .grad (PyTorch's post-accumulate-grad hook:
  // what lets data-parallel training reduce a gradient as soon as it is done).
  void register_post_accumulate_grad_hook(std::function<void(Tensor<T>&)> hook);
  // Keeps this non-leaf's gradient in its .grad when a backward computes it
  // (accumulating over backwards, as a leaf's); for a leaf, nothing to do.
  // The gradient kept is the one hooks registered before this call have seen.
  void retain_grad() const;
  // Whether retain_grad() was called on this non-leaf.
  bool retains_grad() const;
  // The name of the node that produced this tensor; "" for leaves.
  std::string grad_fn_name() const;
  // Computes the gradients of this tensor with respect to the leaves of its graph.
  void backward(Tensor gradient = {}, bool retain_graph = false, bool create_graph = false) const;
  // The same data without history: a new leaf that does not require grad.
  Tensor detach() const;

  // ----- expression interface ------------------------------------------------
  template <class F>
  [[gnu::always_inline]] void for_each_leaf(F&& f) const { f(*this); }
  // Always inlined: the contiguous case is a few instructions, and every
  // leaf of every evaluation asks for it.
  [[gnu::always_inline]] detail::TensorEval<T> evaluator(const detail::Plan& p) const;
  // The same for assign's fast path: one row, checked as it is built.
  [[gnu::always_inline]] detail::TensorEval<T> evaluator(const detail::LinearProbe& p) const;
  // The strides of a leaf that is not laid out like the output (out of
  // line: the contiguous case above is what tiny ops need inlined).
  [[gnu::noinline]] void set_strided_evaluator(const detail::Plan& p, detail::TensorEval<T>& e) const;
  // Throws if the storage cannot hold every element the view addresses
  // (e.g. after storage().resize_(0)).
  [[gnu::always_inline]] void check_storage() const;
  // The data pointer for an evaluator along p: a device tensor's only for a
  // device plan.
  [[gnu::always_inline]] T* evaluator_data(const detail::Plan& p) const {
    return p.on_device ? device_data_ptr() : data_ptr();
  }
  [[noreturn, gnu::noinline, gnu::cold]] void storage_error(std::size_t bytes) const;

 private:
  struct CloneTag {};
  // retain_grad's work, for floating types (the others never require grad).
  template <class U = T>
  void retain_grad_of_non_leaf() const;
  // allocate's body: `where` is a Device or StorageImpl::PinnedHost, the
  // storage's second argument. Never inlined: with the precompiled core it
  // is the library's copy, and inlined it would compile the allocator
  // behind it into every translation unit (half of a hello world's code).
  template <class Where>
  [[gnu::noinline]] static Tensor allocate_in(const Shape& sizes, Where where) {
    for (auto s : sizes)
      detail::check(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
    auto impl = detail::make_handle<TensorImpl>();
    impl->storage = detail::make_handle<StorageImpl>(static_cast<std::size_t>(detail::numel_of(sizes)) * sizeof(T), where);
    impl->set_contiguous_geometry(sizes);
    return Tensor(std::move(impl));
  }
  // Writes an in-place op's result back; like PyTorch, the result type must
  // be castable to T (no float into an int tensor, nothing into bool).
  template <class E>
  Tensor& update(const E& result) {
    using R = typename E::value_type;
    static_assert(can_cast_v<R, T>, "result type can't be cast to the desired output type of this in-place op");
    return copy_(result);
  }
  Tensor(const Tensor& src, CloneTag) {
    *this = allocate(src.sizes(), src.device());
    detail::assign(*this, src);
    detail::record_expression(*this, src);
  }
  const TensorImpl& impl() const {
    detail::check(impl_ != nullptr, "undefined tensor: this Tensor was default-constructed and holds no data");
    return *impl_;
  }
  // A view of the same storage; autograd records it when this tensor requires grad.
  Tensor with_geometry(Shape sizes, Strides strides, int64_t offset) const {
    Tensor view = alias_with_geometry(std::move(sizes), std::move(strides), offset);
    if (detail::grad_mode_flag()) {
      view.impl_->view_base = impl_->view_base ? impl_->view_base : impl_;
      view.impl_->view_version = storage()->version();
      view.impl_->sync_view = &detail::sync_view<T>;
      if (impl_->autograd) detail::record_view(*this, view);
    } else {
      view.impl_->view_without_grad_mode = true;
    }
    return view;
  }
  Tensor alias_with_geometry(Shape sizes, Strides strides, int64_t offset) const {
    auto impl = detail::make_handle<TensorImpl>();
    impl->storage = storage();
    impl->set_geometry(std::move(sizes), std::move(strides), offset);
    return Tensor(std::move(impl));
  }

  std::shared_ptr<TensorImpl> impl_;
};

namespace detail {
// An operand as a Tensor<T> for the length of a call: the tensor itself when
// it is one (a reference, bound as `const auto& t = tensor_operand<T>(e);`),
// else a new tensor of its values. A copy of the handle instead costs two
// locked reference-count operations once the program has threads (about
// 7 ns each on an AVX-512 Xeon), which small products feel.
template <class T, class E>
decltype(auto) tensor_operand(const E& e) {
  if constexpr (std::is_same_v<E, Tensor<T>>) return (e);
  else return Tensor<T>(e);
}
}  // namespace detail

template <class T>
inline void Tensor<T>::check_storage() const {
  const TensorImpl& t = impl();
  if (t.numel == 0) return;
  const auto bytes = static_cast<std::size_t>(t.offset + t.extent()) * sizeof(T);
  // This runs for every leaf of every evaluation: the error is out of line.
  if (bytes > t.storage->nbytes()) [[unlikely]]
    storage_error(bytes);
}

template <class T>
bool Tensor<T>::is_nonzero() const {
  detail::check(numel() != 0, "Boolean value of Tensor with no values is ambiguous");
  detail::check(numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  return !(detail::convert<double>(item()) == 0.0);
}

template <class T>
Tensor<T>& Tensor<T>::set_(Storage source, int64_t storage_offset, Shape sizes, Strides strides) {
  detail::check(source != nullptr, "set_: the source storage is null");
  detail::check(!(detail::grad_mode_flag() && requires_grad()),
                "a leaf Variable that requires grad is being used in an in-place operation.");
  if (strides.empty()) strides = detail::contiguous_strides(sizes);
  detail::check(strides.size() == sizes.size(), "set_: got ", sizes.size(), " sizes and ", strides.size(), " strides");
  detail::check(storage_offset >= 0, "Tensor: invalid storage offset ", storage_offset);
  detail::check(defined(), "undefined tensor: this Tensor was default-constructed and holds no data");
  // No version bump: the data this tensor's saved uses read is not written.
  impl_->storage = std::move(source);
  impl_->set_geometry(std::move(sizes), std::move(strides), storage_offset);
  return *this;
}

template <class T>
void Tensor<T>::storage_error(std::size_t bytes) const {
  detail::fail<Error>("setStorage: sizes ", sizes(), ", strides ", strides(), ", storage offset ", storage_offset(),
                      ", and itemsize ", sizeof(T), " requiring a storage size of ", bytes,
                      " are out of bounds for storage of size ", storage()->nbytes());
}

template <class T>
inline detail::TensorEval<T> Tensor<T>::evaluator(const detail::Plan& p) const {
  detail::TensorEval<T> e;  // st beyond ndim stays unset
  if (p.src[0] == detail::Plan::kLinear) {  // contiguous and of the output's shape (or one element)
    e.set_linear(evaluator_data(p), numel() == 1);
    return e;
  }
  e.base = evaluator_data(p);
  e.ptr = e.base;
  e.ndim = p.ndim;
  set_strided_evaluator(p, e);
  return e;
}

template <class T>
inline detail::TensorEval<T> Tensor<T>::evaluator(const detail::LinearProbe& p) const {
  const TensorImpl& t = impl();
  const bool one = t.numel == 1;
  const bool linear = one || (t.numel == p.n && t.contiguous);
  // Sharing dst's storage is fine only under dst's own mapping (x += x).
  const bool unaliased =
      t.storage.get() != p.dst_storage || (!one && sizeof(T) == p.dst_itemsize && t.offset == p.dst_offset);
  // check_storage's test, with the extent of a linear leaf (its numel):
  // extent() would put a possible call on this path (13 more instructions
  // and 2 more stores per a + b, callgrind). A leaf that is not linear
  // fails anyway.
  const bool fits = static_cast<std::size_t>(t.offset + t.numel) * sizeof(T) <= t.storage->nbytes();
  p.ok = p.ok && linear && unaliased && fits && t.storage->device().is_cpu();
  detail::TensorEval<T> e;  // st beyond ndim stays unset
  // No pointer arithmetic past a storage too small (maybe null) for it.
  e.set_linear(fits ? static_cast<const T*>(t.storage->data()) + t.offset : nullptr, one);
  return e;
}

template <class T>
void Tensor<T>::set_strided_evaluator(const detail::Plan& p, detail::TensorEval<T>& e) const {
  const int64_t lead = p.out_rank - dim();
  for (int k = 0; k < p.ndim; ++k) {
    const int64_t d = p.src[k] - lead;
    e.st[k] = (p.src[k] < 0 || d < 0 || sizes()[d] == 1) ? 0 : strides()[d];
  }
  e.inner = e.st[p.ndim - 1];
}

template <class T>
Tensor<T> Tensor<T>::to(Device d, bool non_blocking) const {
  if (d == device()) return *this;
  Tensor out = copy_to(d, non_blocking);
  detail::record_op<autograd::tag::ToCopy>(out, *this);
  return out;
}

template <class T>
Tensor<T> Tensor<T>::pin_memory() const {
  if (!device().is_cpu()) [[unlikely]]
    detail::fail<Error>("cannot pin 'torch.cuda.", detail::scalar_type_name<T>(),
                        "Tensor' only dense CPU tensors can be pinned");
  if (is_pinned()) return *this;
  Tensor out = allocate_pinned(sizes());
  detail::assign(out, *this);
  detail::record_op<autograd::tag::PinMemory>(out, *this);
  return out;
}

template <class T>
Tensor<T> Tensor<T>::copy_to(Device d, bool non_blocking) const {
  detail::check(d != device(), "copy_to: the tensor is on ", d.str(), " already");
  const NoGradGuard no_grad;
  using Copy = detail::DeviceBackend::Copy;
  const std::size_t nbytes = static_cast<std::size_t>(numel()) * sizeof(T);
  if (device().is_cpu()) {
    detail::DeviceBackend& backend = detail::cuda_backend(d.index);
    const Tensor src = contiguous();
    Tensor out = allocate(sizes(), d);
    if (nbytes == 0) return out;
    if (non_blocking && src.is_pinned())
      backend.copy_async(d.index, out.device_data_ptr(), src.data_ptr(), nbytes, Copy::HostToDevice,
                         src.storage()->data());
    else
      backend.copy(d.index, out.device_data_ptr(), src.data_ptr(), nbytes, Copy::HostToDevice);
    return out;
  }
  if (non_blocking && d.is_cpu() && is_contiguous()) {  // into pinned memory, queued
    detail::DeviceBackend& backend = detail::cuda_backend(device().index);
    const Tensor out = allocate_pinned(sizes());
    if (nbytes > 0)
      backend.copy_async(device().index, out.data_ptr(), device_data_ptr(), nbytes, Copy::DeviceToHost,
                         out.storage()->data());
    return out;
  }
  // From a device, the memory the tensor spans comes to the host whole and
  // is laid out contiguously there: no device code runs, so any
  // translation unit can do it.
  const int index = device().index;
  detail::DeviceBackend& backend = detail::cuda_backend(index);
  const int64_t span = numel() == 0 ? 0 : extent();
  const Tensor host = allocate(Shape{span});
  if (span > 0)
    backend.copy(index, host.data_ptr(), device_data_ptr(), static_cast<std::size_t>(span) * sizeof(T),
                 Copy::DeviceToHost);
  const Tensor out = host.as_strided(sizes(), strides(), 0).contiguous();
  return d.is_cpu() ? out : out.copy_to(d);
}

template <class T>
std::vector<T> Tensor<T>::to_vector() const {
  if (numel() == 0) return {};
  if (!device().is_cpu()) return copy_to(kCPU).to_vector();
  const Tensor c = contiguous();
  const T* p = c.data_ptr();
  return std::vector<T>(p, p + numel());
}

}  // namespace tsr
