// The CPU matrix product C = alpha * A * B + beta * C for float and double,
// in the BLIS/GotoBLAS structure:
//
//   for jc over N in NC columns          B block (KC x NC) lives in L3
//     for pc over K in KC               pack B once, shared by all threads
//       for ic over M in MC rows        A block (MC x KC) lives in L2, per thread
//         for jr over NR-wide panels    a B micro-panel (KC x NR) stays in L1
//           for ir over MR-high panels  the micro-kernel: MR x NR in registers
//
// Operands are read through (row stride, column stride), so transposed,
// sliced and broadcast (stride 0) matrices are packed directly, never copied
// to contiguous first. Packing pads edge panels with zeros, so the
// micro-kernel always runs full tiles and only the write-back is masked.
//
// Every element of C sums its products in the same order (KC blocks in order,
// k in order within a block) whatever the thread count, so results are
// bitwise identical for 1 and 2 threads.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>

#include <xsimd/xsimd.hpp>

#include "thread_pool.hpp"

namespace tsr::detail {

// A read-only matrix operand: element (i, j) is p[i * rs + j * cs].
template <class T>
struct MatView {
  const T* p;
  int64_t rs, cs;
  const T& operator()(int64_t i, int64_t j) const { return p[i * rs + j * cs]; }
  MatView t() const { return {p, cs, rs}; }
};

// A writable output matrix.
template <class T>
struct MatSpan {
  T* p;
  int64_t rs, cs;
  T& operator()(int64_t i, int64_t j) const { return p[i * rs + j * cs]; }
};

// Register and cache blocking. MR x NR accumulators take 12 of the 16 vector
// registers of AVX2 (MR rows, two batches wide), leaving room for the two B
// loads and the A broadcast. KC x NR of B (16 KiB for float) sits in L1, MC x
// KC of A (~144 KiB) in L2, KC x NC of B (~3 MiB) in L3.
template <class T>
struct GemmBlocking {
  using Batch = xsimd::batch<T>;
  static constexpr int64_t W = static_cast<int64_t>(Batch::size);
  static constexpr int64_t MR = 6;
  static constexpr int64_t NR = 2 * W;
  static constexpr int64_t KC = 256;
  static constexpr int64_t MC = MR * (144 * 1024 / (KC * sizeof(T)) / MR);
  static constexpr int64_t NC = NR * (3 * 1024 * 1024 / (KC * sizeof(T)) / NR);
};

// A growable 64-byte aligned buffer, one per thread and purpose, so that
// packing never allocates in steady state.
class PackBuffer {
 public:
  PackBuffer() = default;
  PackBuffer(const PackBuffer&) = delete;
  PackBuffer& operator=(const PackBuffer&) = delete;
  ~PackBuffer() { std::free(p_); }
  template <class T>
  T* get(int64_t count) {
    const std::size_t bytes = (static_cast<std::size_t>(count) * sizeof(T) + 63) / 64 * 64;
    if (bytes > bytes_) {
      std::free(p_);
      p_ = std::aligned_alloc(64, bytes);
      bytes_ = p_ ? bytes : 0;
      if (!p_) throw std::bad_alloc();
    }
    return static_cast<T*>(p_);
  }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

inline PackBuffer& pack_buffer_a() {
  thread_local PackBuffer buf;
  return buf;
}
inline PackBuffer& pack_buffer_b() {
  thread_local PackBuffer buf;
  return buf;
}

// Packs rows [0, mc) x columns [0, kc) of a into MR-high panels, each stored
// k-major (MR values per k), zero-padding the last panel.
template <class T>
void pack_a(MatView<T> a, int64_t mc, int64_t kc, T* dst) {
  constexpr int64_t MR = GemmBlocking<T>::MR;
  for (int64_t i0 = 0; i0 < mc; i0 += MR) {
    const int64_t rows = std::min(MR, mc - i0);
    const T* src = a.p + i0 * a.rs;
    if (rows == MR) {
      for (int64_t k = 0; k < kc; ++k, dst += MR)
        for (int64_t i = 0; i < MR; ++i) dst[i] = src[i * a.rs + k * a.cs];
    } else {
      for (int64_t k = 0; k < kc; ++k, dst += MR)
        for (int64_t i = 0; i < MR; ++i) dst[i] = i < rows ? src[i * a.rs + k * a.cs] : T(0);
    }
  }
}

// Packs panels [p0, p1) (NR columns each) of the kc x nc block b, each panel
// stored k-major (NR values per k), zero-padding the last panel.
template <class T>
void pack_b(MatView<T> b, int64_t kc, int64_t nc, int64_t p0, int64_t p1, T* dst) {
  constexpr int64_t NR = GemmBlocking<T>::NR;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t j0 = p * NR, cols = std::min(NR, nc - j0);
    T* out = dst + p * NR * kc;
    const T* src = b.p + j0 * b.cs;
    if (cols == NR && b.cs == 1) {
      for (int64_t k = 0; k < kc; ++k, out += NR)
        for (int64_t j = 0; j < NR; ++j) out[j] = src[k * b.rs + j];
    } else {
      for (int64_t k = 0; k < kc; ++k, out += NR)
        for (int64_t j = 0; j < NR; ++j) out[j] = j < cols ? src[k * b.rs + j * b.cs] : T(0);
    }
  }
}

// C[0:mr, 0:nr] = alpha * (packed A panel x packed B panel) + beta * C, where
// beta == 0 means C is not read (BLAS's rule: NaN in C does not propagate).
template <class T>
inline void micro_kernel(int64_t kc, const T* __restrict a, const T* __restrict b, MatSpan<T> c, int64_t mr,
                         int64_t nr, T alpha, T beta) {
  using G = GemmBlocking<T>;
  using B = typename G::Batch;
  constexpr int64_t MR = G::MR, NR = G::NR, W = G::W;
  B acc0[MR], acc1[MR];
  for (int64_t i = 0; i < MR; ++i) acc0[i] = acc1[i] = B(T(0));
  // C's rows are far apart (often a multiple of 4 KiB): fetch them while the
  // products run instead of stalling on the write-back.
  if (mr == MR)
    for (int64_t i = 0; i < MR; ++i) __builtin_prefetch(c.p + i * c.rs, 1);
  for (int64_t k = 0; k < kc; ++k, a += MR, b += NR) {
    const B b0 = B::load_aligned(b), b1 = B::load_aligned(b + W);
    for (int64_t i = 0; i < MR; ++i) {
      const B ai(a[i]);
      acc0[i] = xsimd::fma(ai, b0, acc0[i]);
      acc1[i] = xsimd::fma(ai, b1, acc1[i]);
    }
  }
  const B va(alpha);
  if (mr == MR && nr == NR && c.cs == 1) {
    for (int64_t i = 0; i < MR; ++i) {
      T* row = c.p + i * c.rs;
      B r0 = va * acc0[i], r1 = va * acc1[i];
      if (beta != T(0)) {
        const B vb(beta);
        r0 = xsimd::fma(vb, B::load_unaligned(row), r0);
        r1 = xsimd::fma(vb, B::load_unaligned(row + W), r1);
      }
      r0.store_unaligned(row);
      r1.store_unaligned(row + W);
    }
    return;
  }
  alignas(64) T tile[MR * NR];
  for (int64_t i = 0; i < MR; ++i) {
    (va * acc0[i]).store_aligned(tile + i * NR);
    (va * acc1[i]).store_aligned(tile + i * NR + W);
  }
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t j = 0; j < nr; ++j) {
      T& out = c(i, j);
      out = beta != T(0) ? beta * out + tile[i * NR + j] : tile[i * NR + j];
    }
}

// One thread's share of a (kc x nc) step: rows [m0, m1) x B panels [p0, p1).
template <class T>
void gemm_block(MatView<T> a, const T* packed_b, MatSpan<T> c, int64_t m0, int64_t m1, int64_t p0, int64_t p1,
                int64_t kc, int64_t nc, T alpha, T beta) {
  using G = GemmBlocking<T>;
  T* packed_a = pack_buffer_a().get<T>(G::MC * kc);
  for (int64_t ic = m0; ic < m1; ic += G::MC) {
    const int64_t mc = std::min(G::MC, m1 - ic);
    pack_a(MatView<T>{a.p + ic * a.rs, a.rs, a.cs}, mc, kc, packed_a);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t j = p * G::NR, nr = std::min(G::NR, nc - j);
      const T* bp = packed_b + p * G::NR * kc;
      for (int64_t i = 0; i < mc; i += G::MR)
        micro_kernel(kc, packed_a + i * kc, bp, MatSpan<T>{&c(ic + i, j), c.rs, c.cs},
                     std::min(G::MR, mc - i), nr, alpha, beta);
    }
  }
}

// Scales C by beta (zeroing it when beta == 0): the product with K == 0.
template <class T>
void scale_matrix(MatSpan<T> c, int64_t m, int64_t n, T beta) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c(i, j) = beta == T(0) ? T(0) : beta * c(i, j);
}

// C = alpha * a b^T + beta * C for a column a and a row b (K == 1: a
// weight gradient at batch size 1), row by row, without packing; the same
// roundings as the micro-kernel (alpha * (a b), then beta * C fused in).
template <class T>
void outer(MatView<T> a, MatView<T> b, MatSpan<T> c, int64_t m, int64_t n, T alpha, T beta, bool parallel) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  auto rows = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const T ai = a(i, 0);
      T* row = &c(i, 0);
      int64_t j = 0;
      if (c.cs == 1 && b.cs == 1) {
        const B va(alpha), vai(ai), vb(beta);
        for (; j + W <= n; j += W) {
          B r = va * (vai * B::load_unaligned(b.p + j));
          if (beta != T(0)) r = xsimd::fma(vb, B::load_unaligned(row + j), r);
          r.store_unaligned(row + j);
        }
      }
      for (; j < n; ++j) {
        T& out = c(i, j);
        const T r = alpha * (ai * b(0, j));
        out = beta != T(0) ? std::fma(beta, out, r) : r;
      }
    }
  };
  if (parallel && m * n >= (int64_t{1} << 16)) ThreadPool::instance().parallel_for(m, rows);
  else rows(0, m);
}

// Matrix-vector product y = alpha * A x + beta * y (A is m x k), for products
// with one output row or column, where packing to NR-wide panels would waste
// most of the arithmetic. Each output sums over k in order.
template <class T>
void gemv(MatView<T> a, const T* x, int64_t incx, T* y, int64_t incy, int64_t m, int64_t k, T alpha, T beta,
          bool parallel) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  auto rows = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const T* row = a.p + i * a.rs;
      T s = T(0);
      if (a.cs == 1 && incx == 1) {
        B acc[4] = {B(T(0)), B(T(0)), B(T(0)), B(T(0))};
        int64_t j = 0;
        for (; j + 4 * W <= k; j += 4 * W)
          for (int u = 0; u < 4; ++u)
            acc[u] = xsimd::fma(B::load_unaligned(row + j + u * W), B::load_unaligned(x + j + u * W), acc[u]);
        for (; j + W <= k; j += W) acc[0] = xsimd::fma(B::load_unaligned(row + j), B::load_unaligned(x + j), acc[0]);
        s = xsimd::hadd((acc[0] + acc[1]) + (acc[2] + acc[3]));
        for (; j < k; ++j) s += row[j] * x[j];
      } else {
        for (int64_t j = 0; j < k; ++j) s += row[j * a.cs] * x[j * incx];
      }
      T& out = y[i * incy];
      out = beta != T(0) ? beta * out + alpha * s : alpha * s;
    }
  };
  if (parallel && m >= 2 && m * k >= 65536) {
    // Fixed units of 16 rows, so the split never changes a row's sum.
    const int64_t units = (m + 15) / 16;
    ThreadPool::instance().parallel_for(units, [&](int64_t u0, int64_t u1) { rows(u0 * 16, std::min(m, u1 * 16)); });
  } else {
    rows(0, m);
  }
}

// C (m x n) = alpha * A (m x k) * B (k x n) + beta * C. `parallel` false keeps
// the work on the calling thread (callers that parallelize over a batch).
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, T alpha, MatView<T> a, MatView<T> b, T beta, MatSpan<T> c,
          bool parallel = true) {
  using G = GemmBlocking<T>;
  if (m == 0 || n == 0) return;
  if (k == 0) return scale_matrix(c, m, n, beta);
  // Column-major C: compute C^T = B^T A^T so the micro-kernel stores rows.
  if (c.cs != 1 && c.rs == 1) return gemm(n, m, k, alpha, b.t(), a.t(), beta, MatSpan<T>{c.p, c.cs, c.rs}, parallel);
  if (n == 1) return gemv(a, b.p, b.rs, c.p, c.rs, m, k, alpha, beta, parallel);
  if (m == 1) return gemv(b.t(), a.p, a.cs, c.p, c.cs, n, k, alpha, beta, parallel);
  if (k == 1) return outer(a, b, c, m, n, alpha, beta, parallel);

  ThreadPool& pool = ThreadPool::instance();
  const int64_t threads = parallel && m * n * k >= 64 * 64 * 64 ? pool.num_threads() : 1;
  T* packed_b = pack_buffer_b().get<T>(G::KC * std::min(G::NC, (n + G::NR - 1) / G::NR * G::NR));
  for (int64_t jc = 0; jc < n; jc += G::NC) {
    const int64_t nc = std::min(G::NC, n - jc);
    const int64_t panels = (nc + G::NR - 1) / G::NR, row_units = (m + G::MR - 1) / G::MR;
    // Threads split whichever of M and N has more register tiles.
    const bool split_rows = row_units >= panels;
    for (int64_t pc = 0; pc < k; pc += G::KC) {
      const int64_t kc = std::min(G::KC, k - pc);
      const MatView<T> bblock{b.p + pc * b.rs + jc * b.cs, b.rs, b.cs};
      const MatView<T> ablock{a.p + pc * a.cs, a.rs, a.cs};
      const MatSpan<T> cblock{c.p + jc * c.cs, c.rs, c.cs};
      const T step_beta = pc == 0 ? beta : T(1);
      auto pack = [&](int64_t p0, int64_t p1) { pack_b(bblock, kc, nc, p0, p1, packed_b); };
      auto compute = [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          if (split_rows) {
            const int64_t m0 = row_units * t / threads * G::MR, m1 = std::min(m, row_units * (t + 1) / threads * G::MR);
            if (m0 < m1) gemm_block(ablock, packed_b, cblock, m0, m1, 0, panels, kc, nc, alpha, step_beta);
          } else {
            const int64_t p0 = panels * t / threads, p1 = panels * (t + 1) / threads;
            if (p0 < p1) gemm_block(ablock, packed_b, cblock, 0, m, p0, p1, kc, nc, alpha, step_beta);
          }
        }
      };
      if (threads > 1) {
        pool.parallel_for(panels, pack);
        pool.parallel_for(threads, compute);
      } else {
        pack(0, panels);
        compute(0, 1);
      }
    }
  }
}

}  // namespace tsr::detail
