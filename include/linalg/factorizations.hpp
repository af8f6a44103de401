// The kernels under tsr::linalg: factorizations and triangular solves of one
// matrix (square, but for LU), row-major and contiguous, in place, for float
// and double.
// linalg/functions.hpp runs them over batches and checks their inputs.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../linalg.hpp"

namespace tsr::detail {

// y[i] -= s * x[i] for i < n, in SIMD batches (each a fused multiply-add):
// the updates of the panels, blocks and rows below. (GCC's -O2 leaves these
// loops scalar: it would need a check that y and x do not overlap.)
template <class T>
[[gnu::always_inline]] inline void subtract_scaled(T* y, const T* x, T s, int64_t n) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  const B factor(s);
  int64_t i = 0;
  for (; i + W <= n; i += W)
    detail::fnma(factor, B::load_unaligned(x + i), B::load_unaligned(y + i)).store_unaligned(y + i);
  for (; i < n; ++i) y[i] -= s * x[i];
}

// y[i] /= d for i < n, in SIMD batches.
template <class T>
[[gnu::always_inline]] inline void divide_by(T* y, T d, int64_t n) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  const B divisor(d);
  int64_t i = 0;
  for (; i + W <= n; i += W) (B::load_unaligned(y + i) / divisor).store_unaligned(y + i);
  for (; i < n; ++i) y[i] /= d;
}

// Whether a product of one of these blocked loops is worth the thread pool:
// the loops run one product per block, and below about 4M multiply-adds
// (0.1 ms on one core) the threads' start and join cost more than they save
// (a 256 x 256 LU took twice as long on two threads as on one).
inline bool product_worth_threads(int64_t m, int64_t n, int64_t k) { return m * n * k >= (int64_t{1} << 22); }

// LU with partial pivoting, P A = L U (LAPACK's getrf), of the m x n matrix
// a (row-major, rows n apart): on return a holds U on and above the
// diagonal and L's multipliers below it (L's unit diagonal is not stored);
// for each of the min(m, n) steps j, row j was swapped with row piv[j]
// (never, piv[j] = j, without partial_pivoting: A = L U, which exists when
// every leading minor is nonsingular).
// Returns 0, or 1 + the index of the first zero pivot: U is then singular,
// and the factorization still completes, as LAPACK's does.
//
// Blocked, right-looking: a panel of kPanel columns is factored in a copy
// that holds each of its columns contiguous (the pivot search and the
// updates run down columns, which in the row-major matrix would touch a
// cache line per element: two thirds of a 1000 x 1000 factorization's time
// before), the rows to its right are solved with the panel's L, and the
// trailing matrix is updated by one product on the packed GEMM, where the
// O(n^3) work is. `parallel` lets that product use the thread pool (false
// when the caller runs matrices of a batch on the threads).
template <class T>
int64_t lu_factor(T* a, int64_t m, int64_t n, int64_t* piv, bool parallel, bool partial_pivoting = true) {
  constexpr int64_t kPanel = 32;
  const int64_t steps = std::min(m, n);
  int64_t info = 0;
  std::vector<T> buffer(static_cast<std::size_t>(m * std::min(steps, kPanel)));
  for (int64_t j0 = 0; j0 < steps; j0 += kPanel) {
    const int64_t j1 = std::min(steps, j0 + kPanel), width = j1 - j0, rows = m - j0;
    T* const panel = buffer.data();  // column c of the panel at panel + c * rows
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < width; ++c) panel[c * rows + r] = a[(j0 + r) * n + j0 + c];
    for (int64_t c = 0; c < width; ++c) {
      T* const col = panel + c * rows;
      // The first row with the largest magnitude (LAPACK's idamax), so that
      // ties pivot as PyTorch's do; without partial pivoting, the row itself.
      int64_t p = c;
      T largest = std::abs(col[c]);
      for (int64_t r = c + 1; partial_pivoting && r < rows; ++r)
        if (std::abs(col[r]) > largest) largest = std::abs(col[r]), p = r;
      piv[j0 + c] = j0 + p;
      if (p != c)
        for (int64_t x = 0; x < width; ++x) std::swap(panel[x * rows + c], panel[x * rows + p]);
      const T pivot = col[c];
      if (pivot == T(0)) {
        if (info == 0) info = j0 + c + 1;
        continue;
      }
      divide_by(col + c + 1, pivot, rows - c - 1);
      for (int64_t x = c + 1; x < width; ++x) {
        T* const other = panel + x * rows;
        subtract_scaled(other + c + 1, col + c + 1, other[c], rows - c - 1);
      }
    }
    // The panel back in place, and its row swaps applied, in order, to the
    // rest of those rows.
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < width; ++c) a[(j0 + r) * n + j0 + c] = panel[c * rows + r];
    for (int64_t j = j0; j < j1; ++j) {
      if (piv[j] == j) continue;
      T* const x = a + j * n;
      T* const y = a + piv[j] * n;
      std::swap_ranges(x, x + j0, y);
      std::swap_ranges(x + j1, x + n, y + j1);
    }
    if (j1 == n) continue;
    // U12 = L11^-1 A12 (the panel's rows right of it), then A22 -= L21 U12.
    for (int64_t i = j0 + 1; i < j1; ++i) {
      T* row = a + i * n;
      for (int64_t k = j0; k < i; ++k) subtract_scaled(row + j1, a + k * n + j1, row[k], n - j1);
    }
    if (j1 == m) continue;
    matmul_into(m - j1, n - j1, width, T(-1), MatView<T>{a + j1 * n + j0, n, 1}, MatView<T>{a + j0 * n + j1, n, 1},
                T(1), MatSpan<T>{a + j1 * n + j1, n, 1}, parallel && product_worth_threads(m - j1, n - j1, width));
  }
  return info;
}

// Solves A X = B in place of b (m x k, row-major) for the m x m triangular
// block at a (rows lda apart), read from its upper or lower triangle only
// (with ones on the diagonal when unit), by rows: as LAPACK's trsm, a zero
// on the diagonal divides by zero.
template <class T>
void triangular_solve_block(const T* a, int64_t lda, int64_t m, T* b, int64_t k, bool upper, bool unit) {
  auto solve_row = [&](int64_t i, int64_t j0, int64_t j1) {
    T* row = b + i * k;
    for (int64_t j = j0; j < j1; ++j) subtract_scaled(row, b + j * k, a[i * lda + j], k);
    if (!unit) divide_by(row, a[i * lda + i], k);
  };
  if (upper)
    for (int64_t i = m - 1; i >= 0; --i) solve_row(i, i + 1, m);
  else
    for (int64_t i = 0; i < m; ++i) solve_row(i, 0, i);
}

// The same for the whole n x n matrix a, blocked: each block of kBlock rows
// first subtracts what the rows already solved contribute, as one product
// on the packed GEMM (the O(n^2 k) work), then is solved by rows.
template <class T>
void triangular_solve(const T* a, int64_t n, T* b, int64_t k, bool upper, bool unit, bool parallel) {
  constexpr int64_t kBlock = 64;
  if (upper) {
    for (int64_t i1 = n; i1 > 0;) {
      const int64_t i0 = std::max<int64_t>(0, i1 - kBlock);
      if (i1 < n)
        matmul_into(i1 - i0, k, n - i1, T(-1), MatView<T>{a + i0 * n + i1, n, 1}, MatView<T>{b + i1 * k, k, 1}, T(1),
                    MatSpan<T>{b + i0 * k, k, 1}, parallel && product_worth_threads(i1 - i0, k, n - i1));
      triangular_solve_block(a + i0 * n + i0, n, i1 - i0, b + i0 * k, k, true, unit);
      i1 = i0;
    }
  } else {
    for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
      const int64_t i1 = std::min(n, i0 + kBlock);
      if (i0 > 0)
        matmul_into(i1 - i0, k, i0, T(-1), MatView<T>{a + i0 * n, n, 1}, MatView<T>{b, k, 1}, T(1),
                    MatSpan<T>{b + i0 * k, k, 1}, parallel && product_worth_threads(i1 - i0, k, i0));
      triangular_solve_block(a + i0 * n + i0, n, i1 - i0, b + i0 * k, k, false, unit);
    }
  }
}

// Solves A X = B in place of b (n x k, row-major) from lu_factor's result:
// B's rows permuted as A's were, then L y = P b and U x = y.
template <class T>
void lu_solve(const T* lu, const int64_t* piv, int64_t n, T* b, int64_t k, bool parallel) {
  for (int64_t j = 0; j < n; ++j)
    if (piv[j] != j) std::swap_ranges(b + j * k, b + (j + 1) * k, b + piv[j] * k);
  triangular_solve(lu, n, b, k, /*upper=*/false, /*unit=*/true, parallel);
  triangular_solve(lu, n, b, k, /*upper=*/true, /*unit=*/false, parallel);
}

// Cholesky's A = U^T U for the m x m block at a (rows lda apart), from its
// upper triangle (the lower one is neither read nor written): U in its
// place. Returns 0, or the order of the first leading minor that is not
// positive-definite (a pivot <= 0; a NaN pivot passes on, as in the LAPACK
// PyTorch 1.13 calls). Right-looking: each step scales U's row and updates
// the trailing upper triangle row by row, contiguous in memory.
template <class T>
int64_t cholesky_upper_block(T* a, int64_t lda, int64_t m) {
  for (int64_t j = 0; j < m; ++j) {
    T* u = a + j * lda;
    if (u[j] <= T(0)) return j + 1;
    const T d = std::sqrt(u[j]);
    u[j] = d;
    divide_by(u + j + 1, d, m - j - 1);
    for (int64_t i = j + 1; i < m; ++i) subtract_scaled(a + i * lda + i, u + i, u[i], m - i);
  }
  return 0;
}

// The same for the whole n x n matrix a, with zeros written below U.
// Blocked: a diagonal block of kBlock rows is factored, the rows right of it
// solved with its U^T, and the trailing matrix updated by one product on the
// packed GEMM (it computes the trailing lower triangle too, which is never
// read, for a product in one piece).
template <class T>
int64_t cholesky_upper(T* a, int64_t n, bool parallel) {
  constexpr int64_t kBlock = 64;
  for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const int64_t j1 = std::min(n, j0 + kBlock);
    if (const int64_t info = cholesky_upper_block(a + j0 * n + j0, n, j1 - j0); info != 0) return j0 + info;
    if (j1 == n) break;
    // U12 = U11^-T A12: row i of U12 from the rows above it.
    for (int64_t i = j0; i < j1; ++i) {
      T* row = a + i * n;
      for (int64_t p = j0; p < i; ++p) subtract_scaled(row + j1, a + p * n + j1, a[p * n + i], n - j1);
      divide_by(row + j1, a[i * n + i], n - j1);
    }
    // A22 -= U12^T U12 (U12^T read through its transpose's strides).
    matmul_into(n - j1, n - j1, j1 - j0, T(-1), MatView<T>{a + j0 * n + j1, 1, n}, MatView<T>{a + j0 * n + j1, n, 1},
                T(1), MatSpan<T>{a + j1 * n + j1, n, 1}, parallel && product_worth_threads(n - j1, n - j1, j1 - j0));
  }
  for (int64_t i = 1; i < n; ++i) std::fill(a + i * n, a + i * n + i, T(0));
  return 0;
}

}  // namespace tsr::detail
