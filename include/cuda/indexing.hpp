// Indexing on the device: take_along (index_select, integer indexing, flip,
// roll), gather, masked_select's gather, and scatter.
//
// The host works out from the indices which element goes where: it reads
// them anyway, to check every index before anything is written (PyTorch's
// messages name the bad index), so the device gets the moves ready made
// and only copies elements, one thread per output element. A scatter runs
// one thread per destination, which applies that destination's values in
// index order: repeated indices give the same result as on the CPU (the
// last write wins; sums in index order) and no two threads write one
// element.
#pragma once
#include <cstdint>

#include "../tensor.hpp"
#include "stream.hpp"

namespace tsr::detail::cuda {

template <class T>
struct TakeAlongElement {
  T* out;
  const T* src;
  const int64_t* from;
  int64_t count, len, inner;

  TSR_HOST_DEVICE void operator()(int64_t k) const {
    const int64_t u = k / inner, j = k % inner, o = u / count, i = u % count;
    out[k] = src[(o * len + from[i]) * inner + j];
  }
};

// out[o, i, :] = src[o, from[i], :] for src and out contiguous, seen as
// [s.outer, s.len, s.inner] and [s.outer, count, s.inner]; `from` (count
// positions) on the device.
template <class T>
void take_along(const Tensor<T>& out, const Tensor<T>& src, const Tensor<int64_t>& from, const DimSplit& s) {
  const TakeAlongElement<T> take{out.device_data_ptr(), src.device_data_ptr(), from.device_data_ptr(), from.numel(),
                                 s.len, s.inner};
  for_each_index(out.device().index, out.numel(), take, "thrust::for_each_n (take_along)");
}

template <class T>
struct GatherElement {
  T* out;
  const T* src;
  const int64_t* offsets;
  TSR_HOST_DEVICE void operator()(int64_t k) const { out[k] = src[offsets[k]]; }
};

// out[k] = src's element at offsets[k] (in elements from its first), for
// out contiguous; offsets on the device.
template <class T>
void gather_elements(const Tensor<T>& out, const Tensor<T>& src, const Tensor<int64_t>& offsets) {
  const GatherElement<T> gather{out.device_data_ptr(), src.device_data_ptr(), offsets.device_data_ptr()};
  for_each_index(out.device().index, out.numel(), gather, "thrust::for_each_n (gather)");
}

template <class T>
struct ScatterDestination {
  T* self;
  ScatterMoveView moves;
  const T* src;  // null: every value is `value`
  T value;
  bool add;

  TSR_HOST_DEVICE void operator()(int64_t s) const {
    T& out = self[moves.destinations[s]];
    T acc = out;
    for (int64_t j = moves.begins[s]; j < moves.begins[s + 1]; ++j) {
      const T w = src ? src[moves.sources[j]] : value;
      acc = add ? tsr::detail::convert<T>(acc + w) : w;
    }
    out = acc;
  }
};

// Applies a scatter's moves (detail::ScatterMoves, made on the host and
// copied to self's device): each destination of self gets its values from
// src (or `value`), replaced or added, in index order.
template <class T>
void scatter(const Tensor<T>& self, const ScatterMoves& moves, const Tensor<T>* src, T value, bool add) {
  const ScatterDestination<T> write{self.device_data_ptr(), moves.view(), src ? src->device_data_ptr() : nullptr,
                                    value, add};
  for_each_index(self.device().index, moves.count, write, "thrust::for_each_n (scatter)");
}

}  // namespace tsr::detail::cuda
