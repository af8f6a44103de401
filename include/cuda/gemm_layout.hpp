// Matrix products on cuBLAS without copies: the arguments of a column-major
// strided-batched GEMM for tessera's row-major strided matrices.
//
// A row-major m x n matrix with row stride ld, read column-major with
// leading dimension ld, is its n x m transpose. So C = A B is computed as
// C^T = B^T A^T: cuBLAS gets B first and A second, with the sizes n, m, k,
// and writes C^T column-major, which is C row-major. An operand stored
// column by column (the transpose of a contiguous matrix, as a backward pass
// makes) is read with op T; its data is not moved.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "../detail/blas_layout.hpp"

namespace tsr::detail::cuda {

enum class BlasOp : char { N = 'N', T = 'T' };

// A strided batch of rows x cols matrices: matrix b's element (i, j) at
// data + b * batch_stride + i * row_stride + j * col_stride (elements).
template <class T>
struct StridedMatrices {
  T* data;
  int64_t batch_stride, row_stride, col_stride;
};

// The arguments of cublas<t>gemmStridedBatched(handle, op_first,
// op_second, m, n, k, alpha, first, ld_first, stride_first, second,
// ld_second, stride_second, beta, c, ldc, stride_c, batch).
template <class T>
struct ColumnMajorGemm {
  BlasOp op_first, op_second;
  int m, n, k;
  const T* first;
  int ld_first;
  int64_t stride_first;
  const T* second;
  int ld_second;
  int64_t stride_second;
  T* c;
  int ldc;
  int64_t stride_c;
  int batch;
};

// The call computing c[b] = a[b] b[b] (m x k times k x n) for every b of
// `batch`, or none when an operand is neither row- nor column-major, C's
// rows are not contiguous, or a size does not fit cuBLAS's int: the caller
// makes that operand contiguous first.
template <class T>
std::optional<ColumnMajorGemm<T>> column_major_gemm(int64_t batch, int64_t m, int64_t n, int64_t k,
                                                    StridedMatrices<const T> a, StridedMatrices<const T> b,
                                                    StridedMatrices<T> c) {
  using tsr::detail::blas_operand;
  const auto oa = blas_operand(m, k, a.row_stride, a.col_stride);
  const auto ob = blas_operand(k, n, b.row_stride, b.col_stride);
  const bool c_rows = c.col_stride == 1 && (m == 1 || c.row_stride >= n);
  const int64_t ldc = m == 1 ? (n > 1 ? n : 1) : c.row_stride;
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  // (Not a loop over a braced list: nvcc 13's front end rejects that here.)
  const int64_t largest = std::max(std::max(std::max(batch, m), std::max(n, k)), std::max(std::max(oa.ld, ob.ld), ldc));
  if (!oa.ok || !ob.ok || !c_rows || largest > kMaxInt) return std::nullopt;
  return ColumnMajorGemm<T>{ob.transposed ? BlasOp::T : BlasOp::N,
                            oa.transposed ? BlasOp::T : BlasOp::N,
                            static_cast<int>(n),
                            static_cast<int>(m),
                            static_cast<int>(k),
                            b.data,
                            static_cast<int>(ob.ld),
                            b.batch_stride,
                            a.data,
                            static_cast<int>(oa.ld),
                            a.batch_stride,
                            c.data,
                            static_cast<int>(ldc),
                            c.batch_stride,
                            static_cast<int>(batch)};
}

}  // namespace tsr::detail::cuda
