// sort, argsort and topk on the device: one sort of every element's
// position, ordered by line, then value (NaN greatest, as on the CPU), then
// position, which makes the order total, so the result is the CPU's
// (stable, first occurrences of ties) whatever the sorting algorithm;
// then one thread per output element writes the first k of each line.
// (thrust::sort: CUB's merge sort under nvcc, as the comparator is not a
// plain less-than.)
#pragma once
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include <cstdint>

#include "../sort.hpp"
#include "stream.hpp"

namespace tsr::detail::cuda {

template <class T>
struct LineOrder {
  const T* src;
  int64_t len;
  bool descending;

  TSR_HOST_DEVICE bool operator()(int64_t a, int64_t b) const {
    const int64_t la = a / len, lb = b / len;
    if (la != lb) return la < lb;
    using A = tsr::acc_t<T>;
    const A va = tsr::detail::convert<A>(src[a]), vb = tsr::detail::convert<A>(src[b]);
    if (descending ? tsr::detail::sorts_before(vb, va) : tsr::detail::sorts_before(va, vb)) return true;
    if (descending ? tsr::detail::sorts_before(va, vb) : tsr::detail::sorts_before(vb, va)) return false;
    return a < b;
  }
};

template <class T>
struct WriteSorted {
  const T* src;
  const int64_t* order;
  T* values;
  int64_t* indices;
  int64_t len, k;

  TSR_HOST_DEVICE void operator()(int64_t m) const {
    const int64_t line = m / k, from = order[line * len + m % k];
    values[m] = src[from];
    indices[m] = from - line * len;
  }
};

// values and indices (contiguous, lines' shape with k in the last dim) =
// the first k elements of each line of lines (contiguous, sorted along its
// last dim) and their positions in the line.
template <class T>
void sort_lines(const Tensor<T>& values, const Tensor<int64_t>& indices, const Tensor<T>& lines, bool descending) {
  const int64_t n = lines.numel();
  if (values.numel() == 0) return;
  const int device = lines.device().index;
  const int64_t len = lines.size(lines.dim() - 1);
  const auto order = Tensor<int64_t>::allocate({n}, lines.device());
  int64_t* p = order.device_data_ptr();
  const LineOrder<T> before{lines.device_data_ptr(), len, descending};
  Launch(device).run("thrust::sort (sort along a dim)", [&](const auto& policy) {
    thrust::sequence(policy, p, p + n);
    thrust::sort(policy, p, p + n, before);
  });
  const WriteSorted<T> write{lines.device_data_ptr(), p, values.device_data_ptr(), indices.device_data_ptr(), len,
                             values.size(values.dim() - 1)};
  for_each_index(device, values.numel(), write, "thrust::for_each_n (sorted values)");
}

}  // namespace tsr::detail::cuda
