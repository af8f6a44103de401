// cumsum and cumprod on the device: one thread per line along the scanned
// dim, running the CPU's sequence (the same accumulation type and order,
// so the same results). Neighbouring threads take neighbouring lines,
// whose elements lie next to each other when the dim is not the last.
#pragma once
#include <cstdint>

#include "../scan.hpp"
#include "stream.hpp"

namespace tsr::detail::cuda {

template <class Out, class Acc, class T, class Op>
struct ScanLine {
  const T* src;
  Out* dst;
  int64_t len, inner;
  Acc init;
  Op op;

  TSR_HOST_DEVICE void operator()(int64_t u) const {
    const int64_t base = (u / inner) * len * inner + u % inner;
    Acc acc = init;
    for (int64_t i = 0; i < len; ++i) {
      const int64_t at = base + i * inner;
      acc = op(acc, static_cast<Acc>(tsr::detail::convert<tsr::detail::scan_acc_t<T>>(src[at])));
      dst[at] = tsr::detail::convert<Out>(acc);
    }
  }
};

// out = the inclusive scan of x (both contiguous, seen as [outer, len,
// inner]) along len.
template <class Out, class Acc, class T, class Op>
void scan(const Tensor<Out>& out, const Tensor<T>& x, const DimSplit& s, Acc init, Op op) {
  const ScanLine<Out, Acc, T, Op> line{x.device_data_ptr(), out.device_data_ptr(), s.len, s.inner, init, op};
  for_each_index(out.device().index, s.outer * s.inner, line, "thrust::for_each_n (scan)");
}

}  // namespace tsr::detail::cuda
