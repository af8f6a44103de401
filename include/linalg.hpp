// Matrix products: mm, bmm, mv, dot, outer, matmul (PyTorch's rules for 1-D,
// 2-D and batched operands with batch broadcasting), linear, addmm/addmm_.
//
// Float and double run on our packed GEMM (detail/gemm.hpp), or on CBLAS when
// the library is built with -Dblas=openblas; integer types use a plain loop.
// As in PyTorch, operands must have the same dtype (checked at compile time:
// matmul does not promote), bool products do not exist, and half products
// run on a device only (PyTorch 1.13's CPU has none).
#pragma once
#include <algorithm>
#include <limits>
#include <optional>
#include <type_traits>

#include "detail/blas_layout.hpp"
#include "detail/gemm.hpp"
#include "reduce.hpp"
#include "views.hpp"

#if defined(TSR_USE_CBLAS)
#include <cblas.h>
#endif

namespace tsr {
namespace detail {

template <class A, class B>
using matmul_value_t = typename std::remove_cvref_t<A>::value_type;

template <class A, class B>
constexpr void check_matmul_types() {
  using TA = typename std::remove_cvref_t<A>::value_type;
  using TB = typename std::remove_cvref_t<B>::value_type;
  static_assert(std::is_same_v<TA, TB>,
                "matrix products need operands of the same dtype (PyTorch: expected scalar type Float but found "
                "Double); cast one with tsr::cast<T>");
  static_assert(!std::is_same_v<TA, bool>, "matrix products do not exist for bool (nor in PyTorch)");
}

// Half products exist on a device only; on the CPU they are refused, as
// PyTorch 1.13 refuses them in the kernel that would run (addmm_impl_cpu_,
// addmv_impl_cpu, bmm, dot), which the message names.
template <class T>
void check_cpu_product_type(const char* kernel) {
  if constexpr (std::is_same_v<T, half>)
    fail<Error>("matrix products of 'Half' tensors do not run on the CPU (as in PyTorch 1.13, whose ", kernel,
                " refuses them); move them to a CUDA device, or compute in float with tsr::cast<float>");
}

// Checks the operands' dtypes, materializes them, calls impl on the tensors
// and records the product for autograd (backward_name(a, b) names its node).
template <class A, class B, class Name, class Impl>
auto tensor_product(const A& a, const B& b, Name backward_name, Impl impl) {
  check_matmul_types<A, B>();
  using T = matmul_value_t<A, B>;
  const auto& ta = tensor_operand<T>(a);
  const auto& tb = tensor_operand<T>(b);
  auto out = unrecorded([&] { return impl(ta, tb); });
  record_op<autograd::tag::Matmul>(out, ta, tb, backward_name(ta, tb));
  return out;
}

// PyTorch's node names for matmul by operand ranks (its batched and
// vector-matrix forms are compositions; here they are one MatmulBackward0).
template <class T>
const char* matmul_backward_name(const Tensor<T>& a, const Tensor<T>& b) {
  if (a.dim() == 1 && b.dim() == 1) return "DotBackward0";
  if (a.dim() == 2 && b.dim() == 1) return "MvBackward0";
  if (a.dim() == 2 && b.dim() == 2) return "MmBackward0";
  return "MatmulBackward0";
}
template <const char* Name>
struct FixedName {
  template <class T>
  const char* operator()(const Tensor<T>&, const Tensor<T>&) const { return Name; }
};
inline constexpr char kMmBackward[] = "MmBackward0";
inline constexpr char kBmmBackward[] = "BmmBackward0";
inline constexpr char kMvBackward[] = "MvBackward0";
inline constexpr char kDotBackward[] = "DotBackward0";

// The operand checks of addmm and addmm_.
template <class T>
void check_addmm_operands(const Tensor<T>& a, const Tensor<T>& b) {
  check(a.dim() == 2, "mat1 must be a matrix, got ", a.dim(), "-D tensor");
  check(b.dim() == 2, "mat2 must be a matrix, got ", b.dim(), "-D tensor");
  check(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1), " and ",
        b.size(0), "x", b.size(1), ")");
}

template <class T>
MatView<T> mat_view(const Tensor<T>& t) {
  return {t.data_ptr(), t.stride(0), t.stride(1)};
}
template <class T>
MatSpan<T> mat_span(const Tensor<T>& t) {
  return {t.data_ptr(), t.stride(0), t.stride(1)};
}

#if defined(TSR_USE_CBLAS)
inline CBLAS_TRANSPOSE cblas_trans(const BlasOperand& o) { return o.transposed ? CblasTrans : CblasNoTrans; }

template <class T>
bool blas_gemm(int64_t m, int64_t n, int64_t k, T alpha, MatView<T> a, MatView<T> b, T beta, MatSpan<T> c) {
  const BlasOperand oa = blas_operand(m, k, a.rs, a.cs), ob = blas_operand(k, n, b.rs, b.cs);
  const bool c_rows = c.cs == 1 && (m == 1 || c.rs >= n);
  // CBLAS takes int sizes and strides; larger products stay on our kernel.
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  const bool fits = std::max({m, n, k, oa.ld, ob.ld, c.rs}) <= kMaxInt;
  if (!oa.ok || !ob.ok || !c_rows || k == 0 || !fits) return false;
  const auto M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  const int ldc = static_cast<int>(m == 1 ? std::max<int64_t>(1, n) : c.rs);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, cblas_trans(oa), cblas_trans(ob), M, N, K, alpha, a.p, static_cast<int>(oa.ld), b.p,
                static_cast<int>(ob.ld), beta, c.p, ldc);
  else
    cblas_dgemm(CblasRowMajor, cblas_trans(oa), cblas_trans(ob), M, N, K, alpha, a.p, static_cast<int>(oa.ld), b.p,
                static_cast<int>(ob.ld), beta, c.p, ldc);
  return true;
}
#endif

// C = alpha * A B + beta * C for any element type with a product.
template <class T>
void matmul_into(int64_t m, int64_t n, int64_t k, T alpha, MatView<T> a, MatView<T> b, T beta, MatSpan<T> c,
                 bool parallel = true, const Epilogue<T>& epi = {}) {
  check_cpu_product_type<T>("addmm_impl_cpu_");
  if constexpr (std::is_floating_point_v<T>) {
#if defined(TSR_USE_CBLAS)
    if (blas_gemm(m, n, k, alpha, a, b, beta, c)) return apply_epilogue(c, m, n, epi);
#endif
    gemm(m, n, k, alpha, a, b, beta, c, parallel, epi);
  } else {
    using A = std::conditional_t<std::is_same_v<T, bfloat16> || std::is_same_v<T, half>, float, T>;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        A s = A(0);
        for (int64_t p = 0; p < k; ++p) s += static_cast<A>(a(i, p)) * static_cast<A>(b(p, j));
        T& out = c(i, j);
        out = beta == T(0) ? static_cast<T>(static_cast<A>(alpha) * s)
                           : static_cast<T>(static_cast<A>(beta) * static_cast<A>(out) + static_cast<A>(alpha) * s);
      }
    apply_epilogue(c, m, n, epi);
  }
}

// The device's strided-batched product (cuda/matmul.hpp), in translation
// units that have it.
namespace cuda {
template <class T>
struct StridedMatrices;
template <class T>
bool batched_gemm(int device, int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, StridedMatrices<const T> a,
                  StridedMatrices<const T> b, T beta, StridedMatrices<T> c);
}  // namespace cuda

// True when a product of a and b runs on a device.
template <class T>
bool on_device(const Tensor<T>& a, const Tensor<T>& b) {
  return !a.device().is_cpu() || !b.device().is_cpu();
}

// c = alpha * a b + beta * c on the tensors' device, for matrices (2-D) or
// batches of them (3-D, an operand's batch stride may be 0); c's rows are
// contiguous (a new tensor's). An operand that cuBLAS cannot read as it
// lies (no unit stride) is copied contiguous first.
template <class T>
void matmul_on_device(const Tensor<T>& c, const Tensor<T>& a, const Tensor<T>& b, T alpha, T beta) {
  const Device device = c.device();
  check_same_device(device, a);
  check_same_device(device, b);
  if constexpr (!is_floating_v<T>) {
    fail<Error>("matrix products of '", scalar_type_name<T>(),
                "' tensors do not run on CUDA devices (as in PyTorch, whose addmm_cuda refuses them); copy them to "
                "the CPU first with .to(tsr::kCPU)");
  } else if constexpr (!kCudaBackend) {
    fail_compiled_without_cuda(device, "a matrix product");
  } else {
    const bool batched = c.dim() == 3;
    const auto matrices = [&](const Tensor<T>& t) {
      return cuda::StridedMatrices<const T>{t.device_data_ptr(), batched ? t.stride(0) : 0, t.stride(-2),
                                            t.stride(-1)};
    };
    const int64_t batch = batched ? c.size(0) : 1, m = c.size(-2), n = c.size(-1), k = a.size(-1);
    const cuda::StridedMatrices<T> out{c.device_data_ptr(), batched ? c.stride(0) : 0, c.stride(-2), c.stride(-1)};
    if (cuda::batched_gemm<T>(device.index, batch, m, n, k, alpha, matrices(a), matrices(b), beta, out)) return;
    const Tensor<T> dense_a = a.contiguous(), dense_b = b.contiguous();
    check(cuda::batched_gemm<T>(device.index, batch, m, n, k, alpha, matrices(dense_a), matrices(dense_b), beta, out),
          "a matrix product on ", device.str(), " with sizes beyond cuBLAS's int range");
  }
}

template <class T>
Tensor<T> mm_impl(const Tensor<T>& a, const Tensor<T>& b) {
  check(a.dim() == 2, "self must be a matrix");
  check(b.dim() == 2, "mat2 must be a matrix");
  check(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1), " and ",
        b.size(0), "x", b.size(1), ")");
  auto out = Tensor<T>::allocate({a.size(0), b.size(1)}, a.device());
  if (on_device(a, b)) {
    matmul_on_device(out, a, b, T(1), T(0));
    return out;
  }
  matmul_into(a.size(0), b.size(1), a.size(1), T(1), mat_view(a), mat_view(b), T(0), mat_span(out));
  return out;
}

template <class T>
Tensor<T> mv_impl(const Tensor<T>& a, const Tensor<T>& v) {
  check(a.dim() == 2 && v.dim() == 1, "vector + matrix @ vector expected, got 1, ", a.dim(), ", ", v.dim());
  check(a.size(1) == v.size(0), "size mismatch, got ", a.size(0), ", ", a.size(0), "x", a.size(1), ",", v.size(0));
  auto out = Tensor<T>::allocate({a.size(0)}, a.device());
  if (on_device(a, v)) {
    matmul_on_device(out.unsqueeze(1), a, v.unsqueeze(1), T(1), T(0));
    return out;
  }
  check_cpu_product_type<T>("addmv_impl_cpu");
  matmul_into(a.size(0), 1, a.size(1), T(1), mat_view(a), MatView<T>{v.data_ptr(), v.stride(0), 0}, T(0),
              MatSpan<T>{out.data_ptr(), 1, 1});
  return out;
}

template <class T>
Tensor<T> dot_impl(const Tensor<T>& a, const Tensor<T>& b) {
  check(a.dim() == 1 && b.dim() == 1, "1D tensors expected, but got ", a.dim(), "D and ", b.dim(), "D tensors");
  check(a.numel() == b.numel(), "inconsistent tensor size, expected tensor [", a.numel(), "] and src [", b.numel(),
        "] to have the same number of elements, but got ", a.numel(), " and ", b.numel(), " elements respectively");
  auto out = Tensor<T>::allocate({}, a.device());
  if (on_device(a, b)) {
    matmul_on_device(out.reshape({1, 1}), a.unsqueeze(0), b.unsqueeze(1), T(1), T(0));
    return out;
  }
  check_cpu_product_type<T>("dot");
  matmul_into(1, 1, a.numel(), T(1), MatView<T>{a.data_ptr(), 0, a.stride(0)}, MatView<T>{b.data_ptr(), b.stride(0), 0},
              T(0), MatSpan<T>{out.data_ptr(), 1, 1});
  return out;
}

// a (..., n, k) x b (..., k, p) with broadcast batch dims, both at least 2-D.
template <class T>
Tensor<T> batched_matmul(const Tensor<T>& a, const Tensor<T>& b) {
  if (!on_device(a, b)) check_cpu_product_type<T>("bmm");
  const int64_t n = a.size(-2), k = a.size(-1), p = b.size(-1);
  Shape batch_a(a.sizes().begin(), a.sizes().end() - 2), batch_b(b.sizes().begin(), b.sizes().end() - 2);
  const Shape batch = broadcast_shapes(batch_a, batch_b);
  Shape out_shape = batch;
  out_shape.push_back(n);
  out_shape.push_back(p);
  auto out = Tensor<T>::allocate(out_shape, a.device());
  const int64_t count = numel_of(batch);
  if (out.numel() == 0) return out;
  Shape sa = batch, sb = batch;
  sa.push_back(n), sa.push_back(k), sb.push_back(k), sb.push_back(p);
  const Tensor<T> ea = a.expand(sa), eb = b.expand(sb);
  if (on_device(a, b)) {  // one strided batch: the batch dims folded into one (copied where they do not fold)
    const auto folded = [&](const Tensor<T>& t, int64_t rows, int64_t cols) {
      const Shape shape{count, rows, cols};
      if (auto st = view_strides(t.sizes(), t.strides(), shape)) return t.as_strided(shape, *st, t.storage_offset());
      return t.contiguous().view(shape);
    };
    matmul_on_device(out.view({count, n, p}), folded(ea, n, k), folded(eb, k, p), T(1), T(0));
    return out;
  }
  const int64_t nb = static_cast<int64_t>(batch.size());
  // The offsets of batch element i in a and b.
  auto offsets = [&](int64_t i, int64_t& oa, int64_t& ob) {
    oa = ob = 0;
    for (int64_t d = nb - 1; d >= 0; --d) {
      const int64_t s = batch[static_cast<std::size_t>(d)], at = i % s;
      i /= s;
      oa += at * ea.strides()[static_cast<std::size_t>(d)];
      ob += at * eb.strides()[static_cast<std::size_t>(d)];
    }
  };
  const T* pa = ea.data_ptr();
  const T* pb = eb.data_ptr();
  T* po = out.data_ptr();
  auto one = [&](int64_t i, bool parallel) {
    int64_t oa, ob;
    offsets(i, oa, ob);
    matmul_into(n, p, k, T(1), MatView<T>{pa + oa, ea.stride(-2), ea.stride(-1)},
                MatView<T>{pb + ob, eb.stride(-2), eb.stride(-1)}, T(0), MatSpan<T>{po + i * n * p, p, 1}, parallel);
  };
  // Many small products: one per thread at a time; few large ones: each
  // product uses every thread. Either way each product's sums are the same.
  if (count >= 2 * ThreadPool::instance().num_threads() && n * p * k < 128 * 128 * 128) {
    run_units(count, count * n * p * k, [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) one(i, false);
    });
  } else {
    for (int64_t i = 0; i < count; ++i) one(i, true);
  }
  return out;
}

template <class T>
Tensor<T> bmm_impl(const Tensor<T>& a, const Tensor<T>& b) {
  check(a.dim() == 3, "batch1 must be a 3D tensor");
  check(b.dim() == 3, "batch2 must be a 3D tensor");
  check(b.size(0) == a.size(0) && b.size(1) == a.size(2), "Expected size for first two dimensions of batch2 tensor to be: [",
        a.size(0), ", ", a.size(2), "] but got: [", b.size(0), ", ", b.size(1), "].");
  return batched_matmul(a, b);
}

// The rows of a (..., n, k) as one (count * n) x k matrix, when its batch
// dims fold into the row dim without a copy (PyTorch folds the same way).
template <class T>
std::optional<Tensor<T>> fold_rows(const Tensor<T>& a) {
  const int64_t rows = a.numel() / std::max<int64_t>(1, a.size(-1));
  if (auto st = view_strides(a.sizes(), a.strides(), Shape{rows, a.size(-1)}))
    return a.as_strided(Shape{rows, a.size(-1)}, *st, a.storage_offset());
  return std::nullopt;
}

template <class T>
Tensor<T> matmul_impl(const Tensor<T>& a, const Tensor<T>& b) {
  const int64_t da = a.dim(), db = b.dim();
  check(da >= 1 && db >= 1, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ", db, "D");
  if (da == 1 && db == 1) return dot_impl(a, b);
  if (da == 2 && db == 1) return mv_impl(a, b);
  if (da == 1 && db == 2) {
    check(a.size(0) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (1x", a.size(0), " and ", b.size(0), "x",
          b.size(1), ")");
    return mm_impl(a.unsqueeze(0), b).squeeze(0);
  }
  if (da == 2 && db == 2) return mm_impl(a, b);
  // Batched. A batched a times a matrix or vector folds a's batch into rows.
  if (da >= 3 && db <= 2) {
    if (auto rows = fold_rows(a)) {
      Shape shape(a.sizes().begin(), a.sizes().end() - 1);
      if (db == 2) shape.push_back(b.size(1));
      const Tensor<T> r = db == 2 ? mm_impl(*rows, b) : mv_impl(*rows, b);
      return r.view(shape);
    }
  }
  const Tensor<T> a2 = da == 1 ? a.unsqueeze(0) : a;
  const Tensor<T> b2 = db == 1 ? b.unsqueeze(1) : b;
  if (a2.size(-1) != b2.size(-2)) {
    if (db <= 2)
      fail<Error>("mat1 and mat2 shapes cannot be multiplied (", numel_of(Shape(a.sizes().begin(), a.sizes().end() - 1)), "x", a.size(-1), " and ",
                  b2.size(0), "x", b2.size(1), ")");
    const Shape batch_a(a2.sizes().begin(), a2.sizes().end() - 2);
    fail<Error>("Expected size for first two dimensions of batch2 tensor to be: [", numel_of(batch_a), ", ",
                a2.size(-1), "] but got: [", numel_of(batch_a), ", ", b2.size(-2), "].");
  }
  Tensor<T> out = batched_matmul(a2, b2);
  if (da == 1) out = out.squeeze(-2);
  if (db == 1) out = out.squeeze(-1);
  return out;
}

}  // namespace detail

// ----- public API -----------------------------------------------------------

// Matrix product with PyTorch's rules: 1-D x 1-D is a dot product (0-d
// result), 2-D x 1-D a matrix-vector product, 1-D x 2-D a vector-matrix
// product, and anything with more dims a batched product whose batch dims
// broadcast (a 1-D operand gets a temporary dim that is removed after).
template <Expression A, Expression B>
auto matmul(const A& a, const B& b) {
  return detail::tensor_product(a, b, [](const auto& x, const auto& y) { return detail::matmul_backward_name(x, y); },
                                [](const auto& x, const auto& y) { return detail::matmul_impl(x, y); });
}

// (n x k) x (k x p).
template <Expression A, Expression B>
auto mm(const A& a, const B& b) {
  return detail::tensor_product(a, b, detail::FixedName<detail::kMmBackward>{},
                                [](const auto& x, const auto& y) { return detail::mm_impl(x, y); });
}

// (batch x n x k) x (batch x k x p), no broadcasting (use matmul for that).
template <Expression A, Expression B>
auto bmm(const A& a, const B& b) {
  return detail::tensor_product(a, b, detail::FixedName<detail::kBmmBackward>{},
                                [](const auto& x, const auto& y) { return detail::bmm_impl(x, y); });
}

// (n x k) x (k).
template <Expression A, Expression B>
auto mv(const A& a, const B& v) {
  return detail::tensor_product(a, v, detail::FixedName<detail::kMvBackward>{},
                                [](const auto& x, const auto& y) { return detail::mv_impl(x, y); });
}

// Inner product of two 1-D tensors of the same dtype, as a 0-d tensor.
template <Expression A, Expression B>
auto dot(const A& a, const B& b) {
  return detail::tensor_product(a, b, detail::FixedName<detail::kDotBackward>{},
                                [](const auto& x, const auto& y) { return detail::dot_impl(x, y); });
}

// out[i][j] = a[i] * b[j], with the usual type promotion (PyTorch computes
// outer as a broadcast multiply too).
template <Expression A, Expression B>
auto outer(const A& a, const B& b) {
  detail::check(a.dim() == 1, "outer: Expected 1-D argument self, but got ", a.dim(), "-D");
  detail::check(b.dim() == 1, "outer: Expected 1-D argument vec2, but got ", b.dim(), "-D");
  using T = typename decltype(a * b)::value_type;
  const auto ta = Tensor<typename A::value_type>(a), tb = Tensor<typename B::value_type>(b);
  return Tensor<T>(ta.unsqueeze(1) * tb.unsqueeze(0));
}

// beta * c + alpha * (a x b), with c broadcast to the product's shape. With
// beta == 0, c is ignored (NaN in it does not propagate), as in PyTorch.
// beta and alpha may be of different arithmetic types (addmm(c, a, b, 0, 0.5)),
// as PyTorch's Scalars.
template <Expression C, Expression A, Expression B, class Beta = double, class Alpha = double>
auto addmm(const C& c, const A& a, const B& b, Beta beta = 1, Alpha alpha = 1) {
  detail::check_matmul_types<A, B>();
  detail::check_matmul_types<C, A>();
  using T = detail::matmul_value_t<A, B>;
  const auto& ta = detail::tensor_operand<T>(a);
  const auto& tb = detail::tensor_operand<T>(b);
  detail::check_addmm_operands(ta, tb);
  const auto& tc = detail::tensor_operand<T>(c);
  auto out = Tensor<T>::allocate({ta.size(0), tb.size(1)}, ta.device());
  detail::unrecorded([&] {
    if (beta != Beta(0)) out.copy_(tc.expand(out.sizes()));
    else (void)tc.expand(out.sizes());  // the shape check still applies
  });
  if (detail::on_device(ta, tb))
    detail::matmul_on_device(out, ta, tb, static_cast<T>(alpha), static_cast<T>(beta));
  else
    detail::matmul_into(ta.size(0), tb.size(1), ta.size(1), static_cast<T>(alpha), detail::mat_view(ta),
                        detail::mat_view(tb), static_cast<T>(beta), detail::mat_span(out));
  detail::record_op<autograd::tag::Addmm>(out, tc, ta, tb, static_cast<T>(beta), static_cast<T>(alpha));
  return out;
}

// c = beta * c + alpha * (a x b) in place; c must have the product's shape.
template <class T, Expression A, Expression B, class Beta = double, class Alpha = double>
Tensor<T>& addmm_(Tensor<T>& c, const A& a, const B& b, Beta beta = 1, Alpha alpha = 1) {
  detail::check_matmul_types<Tensor<T>, A>();
  detail::check_matmul_types<A, B>();
  detail::check_in_place(c, ScalarLeaf<T>(T(0)));
  detail::check_no_autograd("addmm_", a, b);
  const auto& ta = detail::tensor_operand<T>(a);
  const auto& tb = detail::tensor_operand<T>(b);
  detail::check_addmm_operands(ta, tb);
  const Shape shape{ta.size(0), tb.size(1)};
  detail::check(c.sizes() == shape, "Bad in-place call: input tensor size ", c.sizes(), " and output tensor size ",
                shape, " should match");
  // Through a new result when the product must not see its own writes, and
  // on a device (whose product writes whole rows of a new tensor).
  if (c.is_alias_of(ta) || c.is_alias_of(tb) || !c.device().is_cpu() || detail::on_device(ta, tb)) {
    c.copy_(addmm(c, ta, tb, beta, alpha));
    return c;
  }
  detail::matmul_into(shape[0], shape[1], ta.size(1), static_cast<T>(alpha), detail::mat_view(ta),
                      detail::mat_view(tb), static_cast<T>(beta), detail::mat_span(c));
  c.storage()->bump_version();
  return c;
}

// x W^T + b: x is (..., in), W is (out, in) or (in), b broadcasts to the result.
template <Expression X, Expression W>
auto linear(const X& x, const W& w) {
  detail::check_matmul_types<X, W>();
  using T = detail::matmul_value_t<X, W>;
  const auto& tw = detail::tensor_operand<T>(w);
  return matmul(detail::tensor_operand<T>(x), tw.dim() == 2 ? tw.t() : tw);
}
// With a bias: one addmm (the bias is the product's starting value) for a
// matrix x, and for a batch of them folded into one (..., in) -> (rows, in);
// a product and a fused add otherwise.
template <Expression X, Expression W, Expression Bias>
auto linear(const X& x, const W& w, const Bias& b) {
  detail::check_matmul_types<X, Bias>();
  using T = detail::matmul_value_t<X, W>;
  const auto& tx = detail::tensor_operand<T>(x);
  const auto& tw = detail::tensor_operand<T>(w);
  if (tx.dim() == 2 && tw.dim() == 2) return addmm(b, tx, tw.t());
  const auto& tb = detail::tensor_operand<T>(b);
  if (tx.dim() > 2 && tw.dim() == 2 && tb.dim() <= 1 && tx.size(-1) == tw.size(1)) {
    Shape shape(tx.sizes().begin(), tx.sizes().end() - 1);
    shape.push_back(tw.size(0));
    return addmm(tb, tx.reshape({-1, tx.size(-1)}), tw.t()).view(shape);
  }
  return Tensor<T>(linear(tx, tw) + tb);
}

}  // namespace tsr
