// The CPU matrix product C = alpha * A * B + beta * C for float and double,
// in the BLIS/GotoBLAS structure:
//
//   for jc over N in NC columns          B block (KC x NC) lives in L2
//     for pc over K in KC               pack B once, shared by all threads
//       for ic over M in MC rows        pack A's block (MC x KC), per thread
//                                       (once for all jc where N > NC: the
//                                       pc loop outermost, gemm_packed)
//         for ir over MR-high panels    an A micro-panel (MR x KC) stays in L1
//           for jr over NR-wide panels  the micro-kernel: MR x NR in registers,
//                                       the B micro-panel prefetched ahead
//
// The register tiles of one A micro-panel run along C's rows, so C is
// written row strip by row strip, contiguously, where the hardware
// prefetchers follow it (BLIS's order, jr outside ir, writes C down column
// strips: on an AVX-512 Xeon, with C's rows in different pages and out of
// L2, that cost 10-20% of a 1024 x 1024 product).
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
#include <cstring>
#include <new>
#include <numeric>
#include <type_traits>
#include <utility>

#if __has_include(<unistd.h>)
#include <unistd.h>
#endif

#include <xsimd/xsimd.hpp>

#include "simd_fma.hpp"
#include "thread_pool.hpp"
#include "value_barrier.hpp"

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

// The register tile, chosen for the instruction set the code is compiled
// for: MR x NR accumulators (MR rows, two batches wide) plus the two B loads
// and the A broadcast must fit the vector registers: 6 x 2 of AVX2's 16
// (SSE and NEON alike), 12 x 2 of AVX-512's 32.
template <class T>
struct GemmKernel {
  using Batch = xsimd::batch<T>;
  static constexpr int64_t W = static_cast<int64_t>(Batch::size);
  static constexpr int vector_registers = sizeof(Batch) == 64 ? 32 : 16;
  static constexpr int64_t MR = vector_registers == 32 ? 12 : 6;
  static constexpr int64_t NR = 2 * W;
  // gemm_dots' block of dot products: DR rows of A by two columns of B.
  static constexpr int64_t DR = vector_registers == 32 ? 8 : 4;
  // gemm_short_k's tile, where there are 32 registers: SR rows by SV
  // batches (16 accumulators, SV loads of B and a broadcast of A per k).
  static constexpr int64_t SR = 4, SV = 4;
};

// The products (m n k multiply-adds) below which the threads are not used.
inline constexpr int64_t kMinThreadedProduct = 64 * 64 * 64;

// The size of data cache level 1 or 2 in bytes as the C library reports
// it, or `fallback` where it does not.
inline int64_t cache_bytes([[maybe_unused]] int level, int64_t fallback) {
#if defined(_SC_LEVEL1_DCACHE_SIZE)
  const int names[] = {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE};
  const long v = ::sysconf(names[level - 1]);
  if (v > 0) return static_cast<int64_t>(v);
#endif
  return fallback;
}

// Cache blocking derived from this machine's caches (after the analytical
// model of BLIS): a KC x NR micro-panel of B fits in half of L1, beside the
// A micro-panel that the register tiles of a row strip share; an MC x KC
// block of A in half of L2; and a KC x NC block of B in half of L2 as well,
// since every A micro-panel reads all of it, its micro-panels fetched ahead
// as the tiles reach them (sized by L3, as BLIS's order has it, the block
// of an AVX2 build came from L3 for every row strip: 0.75 of OpenBLAS at
// n = 2048 on an AVX-512 Xeon, 0.88 with this). Computed once per process,
// so every product sums in the same order (KC steps) whatever the thread
// count.
//
// A product with a short K (gemm_short_k) works on row blocks of C whose
// columns in one register tile's width fill a third of L1, and only while
// all of C fits in half of L2.
struct GemmBlocks {
  int64_t kc, mc, nc;
  int64_t short_k_rows, short_k_max_c_bytes;
};
template <class T>
GemmBlocks gemm_blocks_for(int64_t l1, int64_t l2) {
  using K = GemmKernel<T>;
  const auto round_down = [](int64_t v, int64_t unit, int64_t least) { return std::max(least, v / unit * unit); };
  const int64_t kc = round_down(l1 / 2 / (K::NR * int64_t(sizeof(T))), 16, 64);
  const int64_t mc = round_down(l2 / 2 / (kc * int64_t(sizeof(T))), K::MR, K::MR);
  const int64_t nc = round_down(l2 / 2 / (kc * int64_t(sizeof(T))), K::NR, K::NR);
  const int64_t short_k_rows = round_down(l1 / 3 / (K::SV * K::W * int64_t(sizeof(T))), K::SR, K::SR);
  return {kc, mc, nc, short_k_rows, l2 / 2};
}
template <class T>
const GemmBlocks& gemm_blocks() {
  static const GemmBlocks blocks =
      gemm_blocks_for<T>(cache_bytes(1, 32 * 1024), cache_bytes(2, 512 * 1024));
  return blocks;
}

// Elementwise work on the product's output (a bias, an activation), done
// on each register tile right after its last K step has stored it, while
// the tile is still in L1, instead of as a pass over C afterwards. Type
// erased, so that the GEMM is compiled once per element type whatever the
// work: fn(state, p, cs, i, j, count) transforms C(i, j .. j + count - 1),
// which starts at p with column stride cs. The work must depend only on the
// element's value and position (paths that do not tile run it over the
// whole of C after the product).
template <class T>
struct Epilogue {
  void (*fn)(const void* state, T* p, int64_t cs, int64_t i, int64_t j, int64_t count) = nullptr;
  const void* state = nullptr;
  explicit operator bool() const { return fn != nullptr; }
  void operator()(T* p, int64_t cs, int64_t i, int64_t j, int64_t count) const { fn(state, p, cs, i, j, count); }
};

// The epilogue over all of C (m x n), row by row.
template <class T>
void apply_epilogue(MatSpan<T> c, int64_t m, int64_t n, const Epilogue<T>& epi) {
  if (epi)
    for (int64_t i = 0; i < m; ++i) epi(&c(i, 0), c.cs, i, 0, n);
}

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

// The square block of `Bytes` bytes a side (32: 8 x 8 floats, 4 x 4
// doubles; 16: 4 x 4 floats), and its transpose: dst row i = src column i.
// Written with GCC's vector extension, whose shuffles within 128-bit halves
// and across them are one instruction each on AVX (unpack, shuffle,
// permute2f128): 24 shuffles and 16 full-width moves for 64 floats, where
// element by element it is 64 loads and 64 stores. The packing of a
// transposed B (W in x W^T) spent a fifth of the product's time in that
// scalar loop.
template <class T, int Bytes = 32>
struct TransposeBlock {
  static constexpr int L = Bytes / int(sizeof(T));
  using V [[gnu::vector_size(Bytes)]] = T;
  // The same, at the element's alignment: unaligned loads and stores.
  using Unaligned [[gnu::vector_size(Bytes), gnu::aligned(alignof(T))]] = T;
  // Used where the instruction set has 32-byte vectors (AVX and up).
  static constexpr bool available = sizeof(xsimd::batch<T>) >= 32;
  static void store(T* p, const V& v) { *reinterpret_cast<Unaligned*>(p) = v; }
  [[gnu::always_inline]] static void run(const T* src, int64_t lds, T* dst, int64_t ldd) {
    V r[L];
#pragma GCC unroll 8
    for (int i = 0; i < L; ++i) r[i] = *reinterpret_cast<const Unaligned*>(src + i * lds);
    if constexpr (L == 8) {
      V t[8], u[8];
      for (int i = 0; i < 8; i += 2) {  // interleave row pairs within each half
        t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
      }
      for (int i = 0; i < 8; i += 4)  // then pairs of pairs
        for (int h = 0; h < 2; ++h) {
          u[i + h] = __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
          u[i + h + 2] = __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
      // u[0..3] hold columns 0, 2, 1, 3 of rows 0-3 in their low halves and
      // columns 4, 6, 5, 7 in their high halves; u[4..7] the same of rows 4-7.
      constexpr int order[4] = {0, 2, 1, 3};
      for (int c = 0; c < 4; ++c) {
        const V& lo = u[order[c]];
        const V& hi = u[4 + order[c]];
        store(dst + c * ldd, __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 8, 9, 10, 11));
        store(dst + (c + 4) * ldd, __builtin_shufflevector(lo, hi, 4, 5, 6, 7, 12, 13, 14, 15));
      }
    } else {
      static_assert(L == 4);
      const V t0 = __builtin_shufflevector(r[0], r[1], 0, 4, 2, 6), t1 = __builtin_shufflevector(r[0], r[1], 1, 5, 3, 7);
      const V t2 = __builtin_shufflevector(r[2], r[3], 0, 4, 2, 6), t3 = __builtin_shufflevector(r[2], r[3], 1, 5, 3, 7);
      store(dst, __builtin_shufflevector(t0, t2, 0, 1, 4, 5));
      store(dst + ldd, __builtin_shufflevector(t1, t3, 0, 1, 4, 5));
      store(dst + 2 * ldd, __builtin_shufflevector(t0, t2, 2, 3, 6, 7));
      store(dst + 3 * ldd, __builtin_shufflevector(t1, t3, 2, 3, 6, 7));
    }
  }
};

// Packs rows [0, mc) x columns [0, kc) of a into MR-high panels, each stored
// k-major (MR values per k), zero-padding the last panel.
template <class T>
void pack_a(MatView<T> a, int64_t mc, int64_t kc, T* dst) {
  constexpr int64_t MR = GemmKernel<T>::MR;
  // A whose rows are contiguous (not transposed) is transposed into a panel
  // by square blocks, as B's columns are (TransposeBlock). The blocks'
  // rows are L elements apart; MR need not be a multiple of L, so the last
  // block of a panel is the panel's last L rows, overlapping the one before
  // it (12 = 8 + 4 floats on AVX-512, 6 = 4 + 2 doubles on AVX2): the
  // overlap is written twice with the same values. Element by element,
  // packing took 6-7% of a 2048 x 2048 product on an AVX-512 Xeon.
  constexpr int kBlockBytes = MR * int64_t(sizeof(T)) >= 32 ? 32 : 16;
  using TB = TransposeBlock<T, kBlockBytes>;
  constexpr int64_t L = TB::L;
  static_assert(MR >= L);
  for (int64_t i0 = 0; i0 < mc; i0 += MR) {
    const int64_t rows = std::min(MR, mc - i0);
    const T* src = a.p + i0 * a.rs;
    if (rows == MR) {
      int64_t k = 0;
      if constexpr (TB::available) {
        if (a.cs == 1)
          for (; k + L <= kc; k += L)
            for (int64_t r = 0; r < MR; r += L) {
              const int64_t r0 = std::min(r, MR - L);
              TB::run(src + r0 * a.rs + k, a.rs, dst + k * MR + r0, MR);
            }
      }
      for (; k < kc; ++k)
        for (int64_t i = 0; i < MR; ++i) dst[k * MR + i] = src[i * a.rs + k * a.cs];
    } else {
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t i = 0; i < MR; ++i) dst[k * MR + i] = i < rows ? src[i * a.rs + k * a.cs] : T(0);
    }
    dst += MR * kc;
  }
}

// Packs panels [p0, p1) (NR columns each) of the kc x nc block b, each panel
// stored k-major (NR values per k), zero-padding the last panel.
template <class T>
void pack_b(MatView<T> b, int64_t kc, int64_t nc, int64_t p0, int64_t p1, T* dst) {
  constexpr int64_t NR = GemmKernel<T>::NR;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t j0 = p * NR, cols = std::min(NR, nc - j0);
    T* out = dst + p * NR * kc;
    const T* src = b.p + j0 * b.cs;
    if (cols == NR && b.cs == 1) {
      for (int64_t k = 0; k < kc; ++k, out += NR)
        for (int64_t j = 0; j < NR; ++j) out[j] = src[k * b.rs + j];
    } else if (b.rs == 1) {
      // B transposed (a weight matrix W in x W^T): its columns are contiguous
      // rows of W. Square blocks are transposed into the panel; what is left
      // (a k tail, the last columns of a narrow panel) goes column by column
      // down it.
      using TB = TransposeBlock<T>;
      int64_t kb = 0, jb = 0;
      if constexpr (TB::available) {  // NR is two vectors: whole blocks
        kb = kc / TB::L * TB::L;
        jb = cols / TB::L * TB::L;
        for (int64_t k = 0; k < kb; k += TB::L)
          for (int64_t j = 0; j < jb; j += TB::L) TB::run(src + j * b.cs + k, b.cs, out + k * NR + j, NR);
      }
      for (int64_t j = 0; j < cols; ++j) {
        const T* col = src + j * b.cs;
        for (int64_t k = j < jb ? kb : 0; k < kc; ++k) out[k * NR + j] = col[k];
      }
      for (int64_t j = cols; j < NR; ++j)
        for (int64_t k = 0; k < kc; ++k) out[k * NR + j] = T(0);
    } else {
      for (int64_t k = 0; k < kc; ++k, out += NR)
        for (int64_t j = 0; j < NR; ++j) out[j] = j < cols ? src[k * b.rs + j * b.cs] : T(0);
    }
  }
}

// C[0:mr, 0:nr] = alpha * (packed A panel x B panel) + beta * C, where
// beta == 0 means C is not read (BLAS's rule: NaN in C does not propagate).
// The B panel's NR values for one k are contiguous, and NR apart from the
// next k's in a packed panel (aligned); B's row stride ldb apart where B is
// read in place. The kernel computes kRows rows (the A panel still holds MR
// values per k): MR, or fewer for the last panel of a product.
//
// A function of its own for each kind of tile: inlined into gemm_block
// beside the five others, the 12-row packed kernel kept one of its 24
// accumulators on the stack under GCC 12, a load and a store in every k
// step (0.83-0.85 of OpenBLAS for SGEMM n = 256 to 1024 on an AVX-512 AMD
// EPYC, 1.0-1.01 out of line). C's tile comes as a pointer and two strides,
// in registers: passed as a MatSpan it went through the stack, and the
// copy read it back as one 16-byte load of two 8-byte stores, which cannot
// be forwarded and waited for every store before it, the previous tile's
// write-back included (a fifth of a 64 x 256 x 10 product's time on an
// AVX-512 Xeon).
template <class T, bool kPackedB, int64_t kRows>
[[gnu::noinline]] void micro_kernel(int64_t kc, const T* __restrict a, const T* __restrict b, int64_t ldb, T* c_p,
                                    int64_t c_rs, int64_t c_cs, int64_t mr, int64_t nr, T alpha, T beta) {
  const MatSpan<T> c{c_p, c_rs, c_cs};
  using G = GemmKernel<T>;
  using B = typename G::Batch;
  constexpr int64_t NR = G::NR, W = G::W, kPrefetchSteps = 16;
  constexpr int64_t kRowLines = std::max<int64_t>(1, NR * int64_t(sizeof(T)) / 64);
  B acc0[kRows], acc1[kRows];  // in registers: every loop over them is unrolled
#pragma GCC unroll 16
  for (int64_t i = 0; i < kRows; ++i) acc0[i] = acc1[i] = B(T(0));
  // C's rows are far apart (often a multiple of 4 KiB): fetch them while the
  // products run instead of stalling on the write-back.
  if (mr == kRows)
    for (int64_t i = 0; i < kRows; ++i) __builtin_prefetch(c.p + i * c.rs, 1);
  if constexpr (kPackedB) ldb = NR;
  // One k step: the outer product of A's column ak and B's row bk, added in.
  auto k_step = [&](const T* ak, const T* bk) __attribute__((always_inline)) {
    // The B micro-panel comes from L2 (or beyond): fetch its rows 16 k
    // steps ahead (the A micro-panel stays in L1), one prefetch per cache
    // line of a row (two on AVX-512, one on AVX2). The address is an
    // integer: past the panel's end it names no object.
    const uintptr_t ahead = reinterpret_cast<uintptr_t>(bk) + uintptr_t(kPrefetchSteps * ldb) * sizeof(T);
#pragma GCC unroll 4
    for (int64_t line = 0; line < kRowLines; ++line)
      __builtin_prefetch(reinterpret_cast<const void*>(ahead + uintptr_t(line) * 64));
    const B b0 = kPackedB ? B::load_aligned(bk) : B::load_unaligned(bk);
    const B b1 = kPackedB ? B::load_aligned(bk + W) : B::load_unaligned(bk + W);
#pragma GCC unroll 12
    for (int64_t i = 0; i < kRows; ++i) {
      const B ai(ak[i]);
      acc0[i] = detail::fma(ai, b0, acc0[i]);
      acc1[i] = detail::fma(ai, b1, acc1[i]);
    }
  };
  // Two k steps per iteration where vectors are 256 bits wide: the 6 x 16
  // tile's step is 12 multiply-adds, and the loop's own counting and branch
  // beside them cost an AVX2 build 3-6% of a square product's speed on an
  // AVX-512 Xeon. With AVX-512 the step is twice as long and unrolling
  // changed nothing measurable, so it stays one step (and half the code).
  int64_t k = 0;
  if constexpr (G::vector_registers == 16) {
    for (; k + 2 <= kc; k += 2, a += 2 * G::MR, b += 2 * ldb) {
      k_step(a, b);
      k_step(a + G::MR, b + ldb);
    }
  }
  for (; k < kc; ++k, a += G::MR, b += ldb) k_step(a, b);
  // alpha * acc + beta * C into the first `rows` rows of NR values, ld
  // apart. Expanded once for every kind of tile (three expansions made a
  // translation unit with float and double products 15% larger).
  const B va(alpha);
  auto write_rows = [&](T* p, int64_t ld, int64_t rows) __attribute__((always_inline)) {
#pragma GCC unroll 16
    for (int64_t i = 0; i < kRows; ++i) {
      if (i >= rows) break;
      T* row = p + i * ld;
      B r0 = va * acc0[i], r1 = va * acc1[i];
      if (beta != T(0)) {
        const B vb(beta);
        r0 = detail::fma(vb, B::load_unaligned(row), r0);
        r1 = detail::fma(vb, B::load_unaligned(row + W), r1);
      }
      r0.store_unaligned(row);
      r1.store_unaligned(row + W);
    }
  };
  // Whole rows go straight into C; part of a row goes through a buffer
  // holding its part of C (zeros around it), with the same arithmetic: an
  // edge tile rounds as an interior one on every instruction set, whatever
  // the thread count makes an edge.
  const bool whole_rows = nr == NR && c.cs == 1;
  alignas(64) T tile[kRows * NR];
  if (!whole_rows && beta != T(0)) {
    std::fill_n(tile, kRows * NR, T(0));
    for (int64_t i = 0; i < mr; ++i)
      for (int64_t j = 0; j < nr; ++j) tile[i * NR + j] = c(i, j);
  }
  write_rows(whole_rows ? c.p : tile, whole_rows ? c.rs : NR, mr);
  if (whole_rows) return;
  for (int64_t i = 0; i < mr; ++i) {
    if (c.cs == 1) {
      std::memcpy(&c(i, 0), tile + i * NR, static_cast<std::size_t>(nr) * sizeof(T));
      continue;
    }
    for (int64_t j = 0; j < nr; ++j) c(i, j) = tile[i * NR + j];
  }
}

// The B panels of one (kc x nc) step: packed, or read in place where B's
// rows are contiguous (direct, with row stride ld), except a last panel
// narrower than NR, which is always packed (zero-padded).
template <class T>
struct BPanels {
  const T* packed;
  const T* direct = nullptr;
  int64_t ld = 0;
  int64_t full_panels = 0;  // the panels read in place when direct
  // Panel p's first element, or null where it is packed.
  const T* in_place(int64_t p) const {
    return direct != nullptr && p < full_panels ? direct + p * GemmKernel<T>::NR : nullptr;
  }
};

// The packed A of a (kc x nc) step: a buffer of MC x KC that each MC-high
// block of A is packed into in turn, or (kept) the panels of all of A's
// rows from row 0, packed in the K step's first block of B and read again
// in its others.
template <class T>
struct APanels {
  MatView<T> a;  // the step's columns of A
  T* packed;
  bool kept = false;
  bool pack = true;  // pack A's blocks in this step
};

// One thread's share of a (kc x nc) step: rows [m0, m1) x B panels [p0, p1).
// epi: the epilogue, on the last K step only (null otherwise), C's block
// starting at column jc.
template <class T>
void gemm_block(const APanels<T>& a, const BPanels<T>& b, MatSpan<T> c, int64_t m0, int64_t m1, int64_t p0, int64_t p1,
                int64_t kc, int64_t nc, T alpha, T beta, const Epilogue<T>* epi, int64_t jc) {
  using G = GemmKernel<T>;
  const int64_t mc_max = gemm_blocks<T>().mc;
  for (int64_t ic = m0; ic < m1; ic += mc_max) {
    const int64_t mc = std::min(mc_max, m1 - ic);
    T* const packed_a = a.kept ? a.packed + ic * kc : a.packed;  // ic is a multiple of MR
    if (a.pack) pack_a(MatView<T>{a.a.p + ic * a.a.rs, a.a.rs, a.a.cs}, mc, kc, packed_a);
    for (int64_t i = 0; i < mc; i += G::MR) {
      const int64_t mr = std::min(G::MR, mc - i);
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t j = p * G::NR, nr = std::min(G::NR, nc - j);
        const T* const direct = b.in_place(p);
        const T* const packed = b.packed + p * G::NR * kc;
        const MatSpan<T> tile{&c(ic + i, j), c.rs, c.cs};
        auto run = [&](auto rows) {
          constexpr int64_t R = decltype(rows)::value;
          if (direct)
            micro_kernel<T, false, R>(kc, packed_a + i * kc, direct, b.ld, tile.p, tile.rs, tile.cs, mr, nr, alpha, beta);
          else
            micro_kernel<T, true, R>(kc, packed_a + i * kc, packed, G::NR, tile.p, tile.rs, tile.cs, mr, nr, alpha, beta);
        };
        // A last panel of at most a third of MR rows, or of MR - 2, runs a
        // kernel of that height. A batch of 64 is 5 x 12 + 4, and the full
        // kernel would compute 72 rows; a 10-class layer's weight gradient
        // (g^T h) has 10 rows, where the 12-row kernel computed 2 rows of
        // zeros (0.93 of OpenBLAS on an AVX-512 Xeon, 1.03-1.04 with the
        // 10-row kernel). What a power of two leaves of 12 is 4 or 8, and 8
        // rows now run on the 10-row kernel: 2 rows of zeros in one panel
        // (1.6% of a batch of 128), for no more kernels than before. On
        // AVX2 (MR = 6) the heights are 6, 4 and 2, as two thirds of 6.
        if (mr > G::MR - 2) run(std::integral_constant<int64_t, G::MR>{});
        else if (mr > G::MR / 3) run(std::integral_constant<int64_t, G::MR - 2>{});
        else run(std::integral_constant<int64_t, G::MR / 3>{});
        if (epi)
          for (int64_t r = 0; r < mr; ++r) (*epi)(&tile(r, 0), c.cs, ic + i + r, jc + j, nr);
      }
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
          if (beta != T(0)) r = detail::fma(vb, B::load_unaligned(row + j), r);
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
            acc[u] = detail::fma(B::load_unaligned(row + j + u * W), B::load_unaligned(x + j + u * W), acc[u]);
        for (; j + W <= k; j += W) acc[0] = detail::fma(B::load_unaligned(row + j), B::load_unaligned(x + j), acc[0]);
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

// The lane sums of W vectors of W lanes each, all in one vector: log2(W)
// levels of pairwise shuffles and additions, each halving the number of
// vectors and the partial sums per vector, 2 (W - 1) shuffles and W - 1
// additions in all, where summing each vector on its own takes log2(W) of
// each per vector. The levels first move whole halves, then whole 128-bit
// lanes (one instruction each), until each 128-bit lane holds the partial
// sums of one vector; the last levels interleave within 128-bit lanes
// (unpack and shufps patterns), which leaves the sums transposed: lane
// E l + c holds vector K c + l (E elements per 128-bit lane, K lanes).
// xsimd 8's haddp would do this, but its AVX-512 float version returns
// the sums in the wrong lanes.
template <class T, int W>
struct LaneSums {
  using V [[gnu::vector_size(W * sizeof(T))]] = T;
  static constexpr int E = std::min(W, 16 / int(sizeof(T))), K = W / E;
  // The source lane of lane t of a level's first (second) addend, where p
  // and q hold groups of 2b partial sums (within each 128-bit lane when b
  // is smaller than a lane): the first (second) half of each group, p's
  // groups then q's.
  static constexpr int source(int t, int b, bool second) {
    const int span = b >= E ? W : E, base = t / span * span, half = span / 2, u = t % span, w = u % half;
    return base + (u < half ? 0 : W) + w / b * 2 * b + (second ? b : 0) + w % b;
  }
  // GCC's __builtin_shuffle with a constant mask, which nvcc's front end
  // also takes (it rejects a pack expanded into __builtin_shufflevector);
  // clang has only the latter.
  using Mask [[gnu::vector_size(W * sizeof(T))]] = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  template <int b, int... I>
  static V level(V p, V q, std::integer_sequence<int, I...>) {
#if defined(__clang__)
    return __builtin_shufflevector(p, q, source(I, b, false)...) + __builtin_shufflevector(p, q, source(I, b, true)...);
#else
    constexpr Mask first = {source(I, b, false)...}, second = {source(I, b, true)...};
    return __builtin_shuffle(p, q, first) + __builtin_shuffle(p, q, second);
#endif
  }
  // One level on v[0 .. 2n), n = sizeof...(P) pairs: v[i] = level(v[2i],
  // v[2i + 1]) for i = 0 .. n - 1 in order, then the next level on
  // v[0 .. n). Expanded over the pairs at compile time (an unroll pragma on
  // a loop here is ignored, with a warning, in sanitizer builds).
  template <int b = W / 2, int... P>
  [[gnu::always_inline]] static void reduce(V* v, std::integer_sequence<int, P...>) {
    ((v[P] = level<b>(v[2 * P], v[2 * P + 1], std::make_integer_sequence<int, W>{})), ...);
    if constexpr (b > 1) reduce<b / 2>(v, std::make_integer_sequence<int, sizeof...(P) / 2>{});
  }
  // Where vector g's sum is, for vectors summed W at a time into
  // consecutive groups of W lanes (store(v + W q, sums + W q)).
  static constexpr int lane_of(int g) { return g / W * W + g % W % K * E + g % W / K; }
  // Scale times the sum of the lanes of v[g], for g < W, in lane
  // lane_of(g): one multiplication for the W sums, where the write-back
  // multiplied each sum on its own, on the ports the multiply-adds use (16
  // scalar multiplications per 256 multiply-adds in 64 x 256 x 10; 0.91 to
  // 0.96 of OpenBLAS on an AVX-512 AMD EPYC).
  template <class Batch>
  [[gnu::always_inline]] static V summed(const Batch* v, T scale) {
    static_assert(sizeof(Batch) == sizeof(V));
    V x[W];
    std::memcpy(x, v, sizeof x);
    reduce(x, std::make_integer_sequence<int, W / 2>{});
    if (scale != T(1)) x[0] *= scale;
    return x[0];
  }
  template <class Batch>
  [[gnu::always_inline]] static void store(const Batch* v, T* sums, T scale) {
    const V x = summed(v, scale);
    std::memcpy(sums, &x, sizeof(V));
  }
  // The same sums with v[g]'s in lane g: one more shuffle.
  template <class Batch>
  [[gnu::always_inline]] static V ordered(const Batch* v, T scale) {
    return in_order(summed(v, scale), std::make_integer_sequence<int, W>{});
  }
  template <int... G>
  [[gnu::always_inline]] static V in_order(V x, std::integer_sequence<int, G...>) {
#if defined(__clang__)
    return __builtin_shufflevector(x, x, lane_of(G)...);
#else
    constexpr Mask order = {lane_of(G)...};
    return __builtin_shuffle(x, order);
#endif
  }
};

// A vector as loaded from memory, held in a register. GCC turns a loaded
// vector that feeds several multiply-adds back into a memory operand of
// each of them, one load per use: in dot_rows' loop, 16 loads of A rows
// where 8 are needed, which made the loop wait on loads rather than on
// multiply-adds (64 x 256 x 10 on an AVX-512 Xeon: 0.5-0.8 of OpenBLAS,
// 0.96-1.04 in registers; on AVX2, 64 to 70 GFLOP/s); in short_k_tile's,
// 16 loads of B where 4 are needed (64 x 10 times 10 x 256 on an AVX-512
// AMD EPYC, whose loads then bound the loop: 0.70 of OpenBLAS, 1.08 in
// registers). The empty asm statement says the value is changed there, so
// it is not loaded again.
template <class Batch>
[[gnu::always_inline]] inline Batch load_to_register(const typename Batch::value_type* p) {
  auto v = Batch::load_unaligned(p).data;
  value_barrier(v);
  return v;
}

// Copies n values from src to dst and zeros up to padded_n; returns dst.
template <class T>
const T* copy_zero_padded(const T* src, int64_t n, T* dst, int64_t padded_n) {
  std::fill_n(std::copy_n(src, n, dst), padded_n - n, T(0));
  return dst;
}

// Rows [i0, i1) of C = alpha * A B + beta * C as dot products, for a C with
// few rows or columns whose A rows and B columns are both contiguous along
// k (x W^T with a small W: a 10-class output layer): no packing, RI x RJ
// dot products at a time in vector accumulators along k, whose lanes are
// then summed W accumulators at a time by one shuffle tree. k is a multiple
// of W: where A's rows are shorter (a_k < k), or not aligned, `rows_copy`
// is a buffer of RI rows of k values that each block of A's rows is copied
// into first, zero-padded (gemm_dots).
// A function of its own, not the body of gemm_dots' lambda: compiled there,
// with hadd per dot product, the same loops took 1.5 times as long (64 x 256
// x 10 on an AVX-512 Xeon).
template <class T>
void dot_rows(MatView<T> a, int64_t a_k, MatView<T> b, MatSpan<T> c, int64_t i0, int64_t i1, int64_t n, int64_t k,
              T alpha, T beta, T* rows_copy) {
  using G = GemmKernel<T>;
  using B = typename G::Batch;
  constexpr int64_t W = G::W, RI = G::DR, RJ = 2;
  using Sums = LaneSums<T, int(W)>;
  static_assert(RI * RJ % W == 0 && W % RJ == 0, "the accumulators are summed W (whole rows) at a time");
  for (int64_t i = i0; i < i1; i += RI) {
    const T* ar[RI];
    for (int64_t r = 0; r < RI; ++r) {
      ar[r] = a.p + std::min(i + r, i1 - 1) * a.rs;  // repeats the last row at the edge
      if (rows_copy) ar[r] = copy_zero_padded(ar[r], a_k, rows_copy + r * k, k);
    }
    for (int64_t j = 0; j < n; j += RJ) {
      const T* br[RJ];
      for (int64_t s = 0; s < RJ; ++s) br[s] = b.p + std::min(j + s, n - 1) * b.cs;
      B acc[RI * RJ];  // dot product (r, s) in acc[r * RJ + s]
#pragma GCC unroll 16
      for (B& x : acc) x = B(T(0));
      const auto step = [&](int64_t p) [[gnu::always_inline]] {
        B va[RI], vb[RJ];
#pragma GCC unroll 8
        for (int64_t r = 0; r < RI; ++r) va[r] = load_to_register<B>(ar[r] + p);
#pragma GCC unroll 8
        for (int64_t s = 0; s < RJ; ++s) vb[s] = B::load_unaligned(br[s] + p);
#pragma GCC unroll 8
        for (int64_t r = 0; r < RI; ++r)
#pragma GCC unroll 8
          for (int64_t s = 0; s < RJ; ++s) acc[r * RJ + s] = detail::fma(va[r], vb[s], acc[r * RJ + s]);
      };
      // Four k steps per loop iteration with 32 registers (64 x 256 x 10
      // on an AVX-512 AMD EPYC: 1.01 to 1.04 of OpenBLAS, double 0.99 to
      // 1.03); one with 16 (the AVX2 build lost 0-5% unrolled).
      if constexpr (G::vector_registers == 32) {
#pragma GCC unroll 4
        for (int64_t p = 0; p < k; p += W) step(p);
      } else {
        for (int64_t p = 0; p < k; p += W) step(p);
      }
      const int64_t rows = std::min(RI, i1 - i), cols = std::min(RJ, n - j);
      if (rows == RI && cols == RJ && beta == T(0) && c.cs == 1) {
        // A whole block: the sums in row order, each row's RJ sums stored
        // as one piece from the vector. Stored one by one from memory (the
        // vector written out, then each sum read from its lane), they took
        // 5% of 64 x 256 x 10 (0.97 of OpenBLAS against 1.01 on an AVX-512
        // AMD EPYC; double 0.97 against 1.00).
#pragma GCC unroll 4
        for (int64_t g = 0; g < RI * RJ; g += W) {
          using Row [[gnu::vector_size(RJ * sizeof(T))]] = T;
          const auto x = Sums::ordered(acc + g, alpha);
#pragma GCC unroll 16
          for (int64_t q = 0; q < W / RJ; ++q) {
            Row row;
            std::memcpy(&row, reinterpret_cast<const char*>(&x) + q * sizeof(Row), sizeof(Row));
            std::memcpy(&c(i + g / RJ + q, j), &row, sizeof(Row));
          }
        }
        continue;
      }
      alignas(64) T sums[RI * RJ];
#pragma GCC unroll 4
      for (int64_t g = 0; g < RI * RJ; g += W) Sums::store(acc + g, sums + g, alpha);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t s = 0; s < cols; ++s) {
          const T sum = sums[Sums::lane_of(int(r * RJ + s))];  // alpha times the dot product
          T& out = c(i + r, j + s);
          out = beta != T(0) ? beta * out + sum : sum;
        }
    }
  }
}

// C = alpha * A B + beta * C by dot_rows, in row blocks of fixed units, so
// the thread count never changes a sum. Each step of the dot products loads
// one vector of a row of A and of a column of B. Where k is not a multiple
// of the vector, the rows are first copied into aligned ones, zero-padded to
// a multiple of it (the last k % W steps went one by one, after the lane
// sums); with 64-byte vectors also where a row does not start at the
// vector's alignment, since each such load then spans two cache lines
// (300 x 200 x 12 in place ran at half the speed of 300 x 208 x 12 on an
// AVX-512 Xeon; copied, 1.4-1.6 times OpenBLAS's against 0.7-0.85). With
// 32-byte vectors half the loads span two lines, and copying cost more than
// it saved (64 x 256 x 10 with rows 16 bytes off: 49 GFLOP/s copied, 66 in
// place). B's few columns are copied once, A's rows block by block.
template <class T>
void gemm_dots(MatView<T> a, MatView<T> b, MatSpan<T> c, int64_t m, int64_t n, int64_t k, T alpha, T beta,
               bool parallel) {
  using G = GemmKernel<T>;
  constexpr int64_t W = G::W, RI = G::DR;
  constexpr auto kAlign = int64_t(sizeof(typename G::Batch));
  const auto aligned = [](const T* p, int64_t stride) {
    return reinterpret_cast<uintptr_t>(p) % kAlign == 0 && stride * int64_t(sizeof(T)) % kAlign == 0;
  };
  const int64_t units = (m + RI - 1) / RI;
  const int64_t threads =
      parallel && units >= 2 && m * n * k >= kMinThreadedProduct ? std::min<int64_t>(ThreadPool::instance().team_size(), units)
                                                          : 1;
  const bool in_place = k % W == 0 && (kAlign < 64 || (aligned(a.p, a.rs) && aligned(b.p, b.cs)));
  const int64_t kp = (k + W - 1) / W * W;
  MatView<T> bv = b;
  T* rows_copy = nullptr;
  if (!in_place) {  // taken before the threads start: nothing in the region may throw
    T* const buffer = pack_buffer_a().get<T>((n + threads * RI) * kp);
    for (int64_t j = 0; j < n; ++j) copy_zero_padded(b.p + j * b.cs, k, buffer + j * kp, kp);
    bv = MatView<T>{buffer, 1, kp};
    rows_copy = buffer + n * kp;
  }
  auto run = [&](int64_t t) {
    const int64_t u0 = units * t / threads, u1 = units * (t + 1) / threads;
    if (u0 < u1)
      dot_rows(a, k, bv, c, u0 * RI, std::min(m, u1 * RI), n, kp, alpha, beta,
               rows_copy ? rows_copy + t * RI * kp : nullptr);
  };
  if (threads > 1)
    ThreadPool::instance().parallel_for(threads, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) run(t);
    });
  else
    run(0);
}

// C[0:SR, 0:SV W] = alpha * A[0:SR, 0:k] B[0:k, 0:SV W] + beta * C, with
// A and B read in place (B's rows ldb apart, each contiguous) and C's rows
// ldc apart. Inlined into its one caller, as micro_kernel is.
template <class T>
[[gnu::always_inline]] inline void short_k_tile(int64_t k, MatView<T> a, const T* __restrict b, int64_t ldb,
                                                T* __restrict c, int64_t ldc, T alpha, T beta) {
  using G = GemmKernel<T>;
  using B = typename G::Batch;
  constexpr int64_t R = G::SR, V = G::SV, W = G::W;
  B acc[R][V];
#pragma GCC unroll 16
  for (int64_t r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int64_t v = 0; v < V; ++v) acc[r][v] = B(T(0));
  for (int64_t p = 0; p < k; ++p, b += ldb) {
    B bv[V];
#pragma GCC unroll 4
    for (int64_t v = 0; v < V; ++v) bv[v] = load_to_register<B>(b + v * W);  // once, not once per row
#pragma GCC unroll 4
    for (int64_t r = 0; r < R; ++r) {
      const B ar(a(r, p));
#pragma GCC unroll 4
      for (int64_t v = 0; v < V; ++v) acc[r][v] = detail::fma(ar, bv[v], acc[r][v]);
    }
  }
  // The write-back, in one of three forms chosen once: alpha * acc + beta *
  // C, alpha * acc, or acc (alpha = 1, beta = 0: a plain product, which
  // spent a tenth of its multiplications on alpha). Tested per element,
  // GCC branched on alpha and beta at every store.
  auto write = [&](auto scaled, auto add_c) __attribute__((always_inline)) {
    const B va(alpha), vb(beta);
#pragma GCC unroll 16
    for (int64_t r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int64_t v = 0; v < V; ++v) {
        T* const out = c + r * ldc + v * W;
        B x = acc[r][v];
        if constexpr (decltype(scaled)::value) x = va * x;
        if constexpr (decltype(add_c)::value) x = detail::fma(vb, B::load_unaligned(out), x);
        x.store_unaligned(out);
      }
  };
  if (beta != T(0)) write(std::true_type{}, std::true_type{});
  else if (alpha != T(1)) write(std::true_type{}, std::false_type{});
  else write(std::false_type{}, std::false_type{});
}

// The longest K that gemm_short_k takes.
inline constexpr int64_t kShortK = 32;

// C = alpha * A B + beta * C for a K of at most kShortK, B's rows
// contiguous, C row-major with at least SR rows and SV W columns, where
// there are 32 vector registers: no packing (as OpenBLAS's "direct" SGEMM
// for small products), an SR x SV W tile per step, A broadcast from where
// it lies, B's rows loaded from where they lie. For a 10-class layer's
// input gradient (g W2: 64 x 10 times 10 x 256) the packed path spent
// as much on its setup and its 12 x 2W tiles' write-back as on the 10 k
// steps: 0.72-0.86 of OpenBLAS on an AVX-512 Xeon, 0.99-1.09 this way
// (called in turns with cblas_sgemm). C goes in row blocks of
// GemmBlocks::short_k_rows, each written column block by column block (in
// tiles down the rows): the tile alone over 64 rows ran at 1.10-1.14 of
// OpenBLAS so, against 0.94-0.97 row strip by row strip; a block's rows
// share the L1 with B's columns. Edge tiles run the same tile on A's rows
// zero-padded to SR and on B's last columns zero-padded to SV W (copied
// once), into a buffer holding their part of C, as micro_kernel's edges do.
// The threads take whole row blocks, so no sum depends on their count.
template <class T>
void gemm_short_k(MatView<T> a, MatView<T> b, MatSpan<T> c, int64_t m, int64_t n, int64_t k, T alpha, T beta,
                  bool parallel, const Epilogue<T>& epi) {
  using G = GemmKernel<T>;
  constexpr int64_t R = G::SR, NW = G::SV * G::W;
  const int64_t rows_per_block = gemm_blocks<T>().short_k_rows;
  const int64_t blocks = (m + rows_per_block - 1) / rows_per_block;
  const bool threaded = parallel && blocks >= 2 && m * n * k >= kMinThreadedProduct;
  // B's last columns, fewer than NW, zero-padded: copied before the threads
  // start (nothing in the region may throw) and read by all of them.
  const int64_t full_n = n / NW * NW;
  T* b_edge = nullptr;
  if (full_n < n) {
    b_edge = pack_buffer_b().get<T>(k * NW);
    for (int64_t p = 0; p < k; ++p) copy_zero_padded(&b(p, full_n), n - full_n, b_edge + p * NW, NW);
  }
  // The epilogue over a tile's rows; its operands passed in, so the whole
  // tiles' loop can give it its local copies (below).
  auto run_epilogue = [](const Epilogue<T>& e, MatSpan<T> cc, int64_t i, int64_t j, int64_t rows, int64_t cols) {
    if (e)
      for (int64_t r = 0; r < rows; ++r) e(&cc(i + r, j), 1, i + r, j, cols);
  };
  // A tile at C's edge (rows x cols of C from (i, j), fewer than R x NW):
  // A's rows zero-padded, C's part through a buffer. A call site of its
  // own: choosing the pointers per tile at one call site cost the whole
  // tiles 3-4% (64 x 256 x 10, scratch program, in turns).
  auto edge_tile = [&](int64_t i, int64_t j, int64_t rows, int64_t cols) {
    alignas(64) T tile[R * NW]{};
    T a_rows[R * kShortK];
    MatView<T> at{&a(i, 0), a.rs, a.cs};
    if (rows < R) {
      for (int64_t r = 0; r < R; ++r)
        for (int64_t p = 0; p < k; ++p) a_rows[r * k + p] = r < rows ? a(i + r, p) : T(0);
      at = MatView<T>{a_rows, k, 1};
    }
    if (beta != T(0))
      for (int64_t r = 0; r < rows; ++r) std::copy_n(&c(i + r, j), cols, tile + r * NW);
    const bool narrow = cols < NW;
    short_k_tile(k, at, narrow ? b_edge : &b(0, j), narrow ? NW : b.rs, tile, NW, alpha, beta);
    for (int64_t r = 0; r < rows; ++r) std::copy_n(tile + r * NW, cols, &c(i + r, j));
    run_epilogue(epi, c, i, j, rows, cols);
  };
  // The loop of whole tiles reads local copies of the operands, the scalars
  // and the epilogue: read through the lambda's captures, they were loaded
  // again after each tile's stores, and the tile's addresses recomputed
  // from them (about 40 instructions per tile, a tenth of a tile of 10 k
  // steps): 64 x 256 x 10 ran at 0.95-0.96 of OpenBLAS that way, 1.04-1.10
  // this way (in turns with cblas_sgemm, a scratch program).
  auto run_block = [&](int64_t block) {
    const MatView<T> al = a, bl = b;
    const MatSpan<T> cl = c;
    const Epilogue<T> el = epi;
    const T alpha_l = alpha, beta_l = beta;
    const int64_t i0 = block * rows_per_block, i1 = std::min(m, i0 + rows_per_block);
    for (int64_t j = 0; j < n; j += NW) {
      const int64_t cols = std::min(NW, n - j);
      int64_t i = i0;
      if (cols == NW)
        for (; i + R <= i1; i += R) {
          short_k_tile(k, MatView<T>{&al(i, 0), al.rs, al.cs}, &bl(0, j), bl.rs, &cl(i, j), cl.rs, alpha_l, beta_l);
          run_epilogue(el, cl, i, j, R, NW);
        }
      for (; i < i1; i += R) edge_tile(i, j, std::min(R, i1 - i), cols);
    }
  };
  if (threaded)
    ThreadPool::instance().parallel_for(blocks, [&](int64_t b0, int64_t b1) {
      for (int64_t block = b0; block < b1; ++block) run_block(block);
    });
  else
    for (int64_t block = 0; block < blocks; ++block) run_block(block);
}

// C (m x n) = alpha * A (m x k) * B (k x n) + beta * C by packed blocks.
// The threads run the whole product in one parallel region: at each (jc, pc)
// step they pack their share of the B block, wait for each other at a
// barrier, and multiply their share of rows (or of B's panels, whichever
// has more register tiles). The B block is double-buffered, so the next
// step's packing never overwrites what a slower thread still reads; one
// barrier per step, where a job per step cost a wake-up of each worker
// (half the speed of a 64 x 784 x 256 product on 2 threads).
template <class T>
void gemm_packed(int64_t m, int64_t n, int64_t k, T alpha, MatView<T> a, MatView<T> b, T beta, MatSpan<T> c,
                 bool parallel, const Epilogue<T>& epi = {}) {
  using G = GemmKernel<T>;
  GemmBlocks blocks = gemm_blocks<T>();
  // K in equal steps (784 = 3 x 262 rather than 2 x 384 + 16: a short last
  // step reads and writes C for little work).
  const int64_t k_steps = (k + blocks.kc - 1) / blocks.kc;
  blocks.kc = (k + k_steps - 1) / k_steps;
  ThreadPool& pool = ThreadPool::instance();
  const int64_t threads = parallel && m * n * k >= kMinThreadedProduct ? pool.team_size() : 1;
  const int64_t a_panels = (m + G::MR - 1) / G::MR;
  // Where B has more than one NC block and the threads split A's rows
  // (each thread the same rows in every block), each thread keeps its rows
  // of A packed for all blocks of a K step (the K steps outermost), up to
  // 16 MiB for all rows; packed again for each block, they cost an AVX2
  // build 7-10% of a 2048 x 2048 DGEMM on an AVX-512 Xeon (A's rows come
  // from memory each time). They are packed block by block in the first
  // block of B, as the others are, so that each is still in L2 when the
  // micro-kernels first read it.
  const int64_t kept_a_size = a_panels * G::MR * std::min(blocks.kc, k);
  const int64_t widest_panels = (std::min(blocks.nc, n) + G::NR - 1) / G::NR;
  const bool keep_a =
      n > blocks.nc && a_panels >= widest_panels && kept_a_size * int64_t(sizeof(T)) <= (int64_t{16} << 20);
  // Every buffer is taken here, before the region: nothing in it may throw
  // while another thread waits at the barrier.
  const int64_t nc_max = std::min(blocks.nc, (n + G::NR - 1) / G::NR * G::NR);
  const int64_t b_size = blocks.kc * nc_max, a_size = blocks.mc * std::min(blocks.kc, k);
  T* const packed_b = pack_buffer_b().get<T>(2 * b_size);
  T* const packed_a = pack_buffer_a().get<T>(keep_a ? kept_a_size : threads * a_size);
  SpinBarrier barrier(static_cast<int>(threads));
  // B is read in place where its rows are contiguous and A has few MR-high
  // panels, each of which reads all of B: with at most four, a packed copy
  // costs more than the reads it saves (a convolution's patch matrix, 16 x
  // 25 times 25 x 50176, spent as long packing as multiplying); with up to
  // six (a batch of 64 on AVX-512), where B's rows also fall into L1 sets
  // without evicting each other between panels. L1 sets repeat every 4 KiB
  // of address on the x86 cores we measured, so rows a power of two apart
  // pile into few sets; rows 784 floats apart (a 784-wide layer's weight)
  // meet in a set every 64 rows: read in place, 64 x 256 x 784 took 0.8 of
  // the packed time on an AVX-512 Xeon. With more panels the packed copy
  // pays (1000 x 1000 x 1000 in place took 1.1 times as long).
  const int64_t rows_per_set_cycle = 4096 / std::gcd<int64_t>(4096, b.rs * int64_t(sizeof(T)));
  const bool direct_b =
      b.cs == 1 && (a_panels <= 4 || (a_panels <= 6 && (blocks.kc + rows_per_set_cycle - 1) / rows_per_set_cycle <= 4));

  // Thread t's part of step `step`, B's block (pc, jc); pack_kept_a: the
  // K step's first block of B, where kept rows of A are packed.
  auto run_step = [&](int64_t t, int64_t jc, int64_t pc, int64_t step, bool pack_kept_a) {
    const int64_t nc = std::min(blocks.nc, n - jc);
    const int64_t panels = (nc + G::NR - 1) / G::NR;
    const int64_t kc = std::min(blocks.kc, k - pc);
    T* const bblock = packed_b + (step % 2) * b_size;
    const MatView<T> bview{b.p + pc * b.rs + jc * b.cs, b.rs, b.cs};
    BPanels<T> bpanels{bblock};
    int64_t pack0 = panels * t / threads, pack1 = panels * (t + 1) / threads;
    if (direct_b) {
      bpanels.direct = bview.p;
      bpanels.ld = b.rs;
      bpanels.full_panels = nc / G::NR;
      pack0 = std::max(pack0, bpanels.full_panels);  // only a narrow last panel
    }
    if (pack0 < pack1) pack_b(bview, kc, nc, pack0, pack1, bblock);
    const MatView<T> ablock{a.p + pc * a.cs, a.rs, a.cs};
    const APanels<T> apanels = keep_a ? APanels<T>{ablock, packed_a, true, pack_kept_a}
                                      : APanels<T>{ablock, packed_a + t * a_size};
    barrier.wait();
    const MatSpan<T> cblock{c.p + jc * c.cs, c.rs, c.cs};
    const T step_beta = pc == 0 ? beta : T(1);
    const Epilogue<T>* const step_epi = epi && pc + kc == k ? &epi : nullptr;
    if (a_panels >= panels) {  // split the rows
      const int64_t m0 = a_panels * t / threads * G::MR, m1 = std::min(m, a_panels * (t + 1) / threads * G::MR);
      if (m0 < m1) gemm_block(apanels, bpanels, cblock, m0, m1, 0, panels, kc, nc, alpha, step_beta, step_epi, jc);
    } else {  // split B's panels
      const int64_t p0 = panels * t / threads, p1 = panels * (t + 1) / threads;
      if (p0 < p1) gemm_block(apanels, bpanels, cblock, 0, m, p0, p1, kc, nc, alpha, step_beta, step_epi, jc);
    }
  };
  // Each element of C sums its K steps in order either way.
  auto region = [&](int64_t t) {
    int64_t step = 0;
    if (keep_a) {
      for (int64_t pc = 0; pc < k; pc += blocks.kc)
        for (int64_t jc = 0; jc < n; jc += blocks.nc, ++step) run_step(t, jc, pc, step, jc == 0);
    } else {
      for (int64_t jc = 0; jc < n; jc += blocks.nc)
        for (int64_t pc = 0; pc < k; pc += blocks.kc, ++step) run_step(t, jc, pc, step, false);
    }
  };
  if (threads > 1) pool.parallel_for(threads, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) region(t);
    });
  else region(0);
}

// C (m x n) = alpha * A (m x k) * B (k x n) + beta * C. `parallel` false keeps
// the work on the calling thread (callers that parallelize over a batch).
// Products with one row, one column or K == 1 take their own paths.
//
// The elements of C computed (padding included) when C's rows are cut into
// MR-high and its columns into NR-wide register tiles.
template <class T>
int64_t padded_tiles(int64_t m, int64_t n) {
  using G = GemmKernel<T>;
  return (m + G::MR - 1) / G::MR * G::MR * ((n + G::NR - 1) / G::NR * G::NR);
}

template <class T>
void gemm(int64_t m, int64_t n, int64_t k, T alpha, MatView<T> a, MatView<T> b, T beta, MatSpan<T> c,
          bool parallel = true, const Epilogue<T>& epi = {}) {
  if (m == 0 || n == 0) return;
  const MatSpan<T> ct{c.p, c.cs, c.rs};
  // The paths that do not tile C run the epilogue over it afterwards.
  auto untiled = [&](auto&& product) {
    product();
    apply_epilogue(c, m, n, epi);
  };
  if (k == 0) return untiled([&] { scale_matrix(c, m, n, beta); });
  // Column-major C: compute C^T = B^T A^T so the micro-kernel stores rows.
  if (c.cs != 1 && c.rs == 1) return untiled([&] { gemm(n, m, k, alpha, b.t(), a.t(), beta, ct, parallel); });
  if (n == 1) return untiled([&] { gemv(a, b.p, b.rs, c.p, c.rs, m, k, alpha, beta, parallel); });
  if (m == 1) return untiled([&] { gemv(b.t(), a.p, a.cs, c.p, c.cs, n, k, alpha, beta, parallel); });
  if (k == 1) return untiled([&] { outer(a, b, c, m, n, alpha, beta, parallel); });
  // Few columns (or rows), both operands contiguous along k: dot products.
  constexpr int64_t kFew = 16;
  if (n < kFew && a.cs == 1 && b.rs == 1) return untiled([&] { gemm_dots(a, b, c, m, n, k, alpha, beta, parallel); });
  if (m < kFew && a.cs == 1 && b.rs == 1)
    return untiled([&] { gemm_dots(b.t(), a.t(), ct, n, m, k, alpha, beta, parallel); });
  // A short K over a C that stays in L2: no packing, unless the tiles' last
  // column block would compute more than a third as many columns again as
  // C has (67 x 10 times 10 x 130 ran at 0.63 of OpenBLAS this way, 0.73
  // packed; 100 x 20 times 20 x 100, which computes 128 columns, at 0.77
  // against 0.70).
  if constexpr (GemmKernel<T>::vector_registers == 32) {
    constexpr int64_t NW = GemmKernel<T>::SV * GemmKernel<T>::W;
    if (k <= kShortK && b.cs == 1 && c.cs == 1 && m >= GemmKernel<T>::SR && 3 * ((n + NW - 1) / NW * NW) <= 4 * n &&
        m * n * int64_t(sizeof(T)) <= gemm_blocks<T>().short_k_max_c_bytes)
      return gemm_short_k(a, b, c, m, n, k, alpha, beta, parallel, epi);
  }
  // A narrow C (a 10-class output layer: 64 x 10) leaves most of an NR-wide
  // tile empty; its transpose fills the tiles, at the price of a strided
  // write-back, which pays when it computes less than 3/4 of the padding.
  if (4 * padded_tiles<T>(n, m) < 3 * padded_tiles<T>(m, n))
    return untiled([&] { gemm_packed(n, m, k, alpha, b.t(), a.t(), beta, ct, parallel); });
  gemm_packed(m, n, k, alpha, a, b, beta, c, parallel, epi);
}

}  // namespace tsr::detail
