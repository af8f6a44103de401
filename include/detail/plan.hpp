// The iteration plan of one evaluation: the output shape with size-1
// dimensions dropped and dimensions merged wherever every operand is
// contiguous across them, so that the inner loop runs as long as possible.
#pragma once

#include "../shape.hpp"
#include "config.hpp"

namespace tsr::detail {

// Writes the strides of a tensor (sizes, strides) broadcast to rank `rank`
// into r[0..rank): 0 where broadcast.
inline void broadcast_strides(const Shape& sizes, const Strides& strides, std::size_t rank, int64_t* r) {
  const std::size_t lead = rank - sizes.size();
  for (std::size_t i = 0; i < lead; ++i) r[i] = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) r[lead + i] = sizes[i] == 1 ? 0 : strides[i];
}

// Writes flat position `flat` over dims [lo, hi) of `sizes` (the last dim
// fastest) into idx[lo, hi), and returns what is left of it: the position
// over the dims before lo. Every index decomposition of a plan goes through
// here, host and device. On a device the loop runs over every possible dim,
// unrolled, so each array element is named at compile time (config.hpp,
// TSR_DEVICE_UNROLL); on the host it runs over [lo, hi) alone.
TSR_HOST_DEVICE inline int64_t unflatten(int64_t flat, const int64_t* sizes, int lo, int hi, int64_t* idx) {
#if defined(__CUDA_ARCH__)
  constexpr bool every_dim = true;
#else
  constexpr bool every_dim = false;
#endif
  TSR_DEVICE_UNROLL for (int d = every_dim ? kMaxEvalDims - 1 : hi - 1; d >= (every_dim ? 0 : lo); --d) {
    if (d < lo || d >= hi) continue;
    idx[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  return flat;
}

// sizes[d]; on a device with every dim named at compile time, as above.
TSR_HOST_DEVICE inline int64_t size_at(const int64_t* sizes, int d) {
#if defined(__CUDA_ARCH__)
  int64_t size = 0;
  TSR_DEVICE_UNROLL for (int k = 0; k < kMaxEvalDims; ++k) {
    if (k == d) size = sizes[k];
  }
  return size;
#else
  return sizes[d];
#endif
}

struct Plan {
  int out_rank = 0;  // rank of the output shape the plan was made for
  int ndim = 1;
  // Set by the device backend for evaluators that run on a device: a leaf
  // on a device gives its pointer only to such a plan, so host loops never
  // read device memory.
  bool on_device = false;
  // Only [0, ndim) is meaningful (left uninitialized beyond: plans are made
  // on every evaluation, and zeroing them shows in tiny ops).
  int64_t sizes[kMaxEvalDims];
  int src[kMaxEvalDims];  // the original dim whose stride each dim uses; -1: none

  // Builds the plan for `out` given every operand's broadcast strides, laid
  // out one after another, out.size() values per operand.
  static Plan make(const Shape& out, const int64_t* strides, int n_operands) {
    const int rank = static_cast<int>(out.size());
    Plan p;
    p.out_rank = static_cast<int>(out.size());
    p.sizes[0] = 1;
    p.src[0] = -1;
    int n = 0;
    int64_t group_size = 1;
    // Walk from the innermost dim outwards, merging into the current group
    // while every operand stays contiguous across the boundary.
    int rev_src[64];
    int64_t rev_sizes[64];
    for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
      if (out[d] == 1) continue;
      bool merge = n > 0;
      if (merge) {
        const int inner = rev_src[n - 1];
        for (int o = 0; o < n_operands && merge; ++o) {
          const int64_t* st = strides + o * rank;
          merge = st[d] == st[inner] * group_size;
        }
      }
      if (merge) {
        group_size *= out[d];
        rev_sizes[n - 1] = group_size;
      } else {
        check(n < kMaxEvalDims, "tessera evaluates expressions of at most ", kMaxEvalDims,
              " non-mergeable dimensions; got a tensor of shape ", out);
        rev_src[n] = d;
        rev_sizes[n] = group_size = out[d];
        ++n;
      }
    }
    if (n == 0) return p;  // a single element
    p.ndim = n;
    for (int k = 0; k < n; ++k) {
      p.src[k] = rev_src[n - 1 - k];
      p.sizes[k] = rev_sizes[n - 1 - k];
    }
    return p;
  }

  // The plan of an evaluation where the destination and every tensor leaf
  // are contiguous with the output's shape: one row of n elements.
  static Plan linear(int rank, int64_t n) {
    Plan p;
    p.out_rank = rank;
    p.ndim = 1;
    p.sizes[0] = n;
    p.src[0] = kLinear;
    return p;
  }
  static constexpr int kLinear = -2;  // src value: the flattened contiguous layout

  int64_t inner_size() const { return sizes[ndim - 1]; }
  int64_t rows() const {
    int64_t r = 1;
    for (int k = 0; k + 1 < ndim; ++k) r *= sizes[k];
    return r;
  }
  // Fills idx[0..ndim-1] for the start of row `row` at column `col`.
  void row_index(int64_t row, int64_t col, int64_t* idx) const {
    idx[ndim - 1] = col;
    unflatten(row, sizes, 0, ndim - 1, idx);
  }
};

// Stands in for a Plan when assign tries its fast path (one row of n
// elements on this thread): each tensor leaf builds its linear evaluator
// and clears `ok` if it cannot take part, that is when it is neither
// contiguous with the output's element count nor a single element, when
// its storage is too small for it, or when it shares the destination's
// storage (`dst_storage`) under any other element mapping than the
// destination's own. Checking while building saves a walk over the leaves
// per check, which tiny ops feel. When `ok` ends false the evaluator is
// dropped and the general path runs (and reports any error).
struct LinearProbe {
  int64_t n;
  const void* dst_storage;
  int64_t dst_offset;         // in elements of dst's type,
  std::size_t dst_itemsize;   // which is this many bytes
  mutable bool ok = true;
};

}  // namespace tsr::detail
