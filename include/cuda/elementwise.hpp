// Elementwise evaluation on the device: the CPU's evaluator trees, one
// thread per output element (or per 16 bytes of a contiguous output),
// launched through Thrust.
//
// The plan and the evaluators are the CPU's own (detail/plan.hpp,
// detail/assign.hpp): trivially copyable trees of raw pointers and strides,
// whose scalar forms are host/device functions. A thread finds its element's
// row and column from its index, places a copy of the evaluator at that row
// (set_row, as the CPU's tile loop does once per row) and writes one element.
// Compiled by nvcc, Thrust launches a CUDA kernel (on the thread's current
// stream of dst's device, cuda/stream.hpp); compiled by g++ against
// Thrust's CPP device system (the emulated build), the same code runs on the
// CPU, which is how it is tested on machines without a GPU.
#pragma once
#include <thrust/execution_policy.h>

#include <cstdint>
#include <type_traits>

#include "../detail/plan.hpp"
#include "../tensor.hpp"
#include "stream.hpp"

namespace tsr::detail::cuda {

// Where output element k of an evaluation along a plan lies: its row's
// index (idx[0..ndim), the column entry 0, as set_row takes it) and its
// column. Shared by the element writes and the reductions' element reads.
struct PlanIndex {
  int ndim;
  int64_t cols;  // the rows' length (the plan's last dim)
  int64_t sizes[tsr::detail::kMaxEvalDims];

  explicit PlanIndex(const tsr::detail::Plan& plan) : ndim(plan.ndim), cols(plan.inner_size()) {
    for (int d = 0; d < ndim; ++d) sizes[d] = plan.sizes[d];
  }
  TSR_HOST_DEVICE int64_t place(int64_t k, int64_t* idx) const {
    TSR_DEVICE_UNROLL for (int d = 0; d < tsr::detail::kMaxEvalDims; ++d) idx[d] = 0;
    tsr::detail::unflatten(k / cols, sizes, 0, ndim - 1, idx);
    return k % cols;
  }
  // An evaluator placed at the row of idx.
  template <class Ev>
  TSR_HOST_DEVICE Ev at_row(const Ev& ev, const int64_t* idx) const {
    Ev placed = ev;
    placed.set_row(idx, ndim);
    return placed;
  }
};

// The fast path of a one-row plan (operands contiguous, or all their dims
// merged into one): the evaluator placed at that row once, on the host.
// Each thread then reads its column straight from the kernel's parameters,
// with no index arithmetic and no copy of the tree.
template <class Ev>
Ev at_only_row(const Ev& ev) {
  const int64_t row[1] = {0};
  Ev placed = ev;
  placed.set_row(row, 1);
  return placed;
}

template <class T, class Ev>
struct WriteColumn {
  Ev ev;
  T* out;
  int64_t out_step;
  TSR_HOST_DEVICE void operator()(int64_t k) const { out[k * out_step] = tsr::detail::convert<T>(ev[k]); }
};

// Writes output elements [W t, W t + W) of a one-row evaluation whose
// leaves are all packet_ready, and the output contiguous and aligned: one
// vector load per contiguous leaf and one vector store (16 bytes of the
// output's type). The last thread writes what is left one by one.
template <class T, class Ev, int W>
struct WritePackets {
  Ev ev;
  T* out;
  int64_t n;
  TSR_HOST_DEVICE void operator()(int64_t t) const {
    const int64_t k = t * W;
    if (k + W <= n) {
      *reinterpret_cast<tsr::detail::Packet<T, W>*>(out + k) =
          tsr::detail::map_packets<W>([](auto x) { return tsr::detail::convert<T>(x); }, ev.template packet<W>(k));
      return;
    }
    for (int64_t j = k; j < n; ++j) out[j] = tsr::detail::convert<T>(ev[j]);
  }
};

// Writes output element k of an evaluation along a plan.
template <class T, class Ev>
struct WriteElement {
  Ev ev;
  tsr::detail::TensorEval<T> out;
  PlanIndex at;

  TSR_HOST_DEVICE void operator()(int64_t k) const {
    int64_t idx[tsr::detail::kMaxEvalDims];
    const int64_t col = at.place(k, idx);
    const auto out_row = at.at_row(out, idx);
    const_cast<T*>(out_row.ptr)[col * out_row.inner] = tsr::detail::convert<T>(at.at_row(ev, idx)[col]);
  }
};

// dst = src, element by element on the device, along `plan` (made for dst
// and src's leaves as on the CPU: broadcast leaves have stride 0, merged
// dims are one). The caller has checked shapes and aliasing.
template <class T, class E>
void write_elements(const Tensor<T>& dst, const E& src, const tsr::detail::Plan& plan) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  const auto ev = src.evaluator(plan);
  using Ev = std::remove_const_t<decltype(ev)>;
  static_assert(std::is_trivially_copyable_v<Ev>, "evaluators must be trivially copyable to run on the device");
  if (plan.ndim == 1) {
    const auto out = at_only_row(dst.evaluator(plan));
    const Ev row = at_only_row(ev);
    constexpr int W = tsr::detail::kPacketWidth<T>;
    if constexpr (W > 1) {
      if (out.inner == 1 && tsr::detail::packet_aligned<T, W>(out.ptr) && row.template packet_ready<W>()) {
        const WritePackets<T, Ev, W> write{row, const_cast<T*>(out.ptr), n};
        return for_each_index(dst.device().index, (n + W - 1) / W, write, "thrust::for_each_n (elementwise, packets)");
      }
    }
    const WriteColumn<T, Ev> write{row, const_cast<T*>(out.ptr), out.inner};
    return for_each_index(dst.device().index, n, write, "thrust::for_each_n (elementwise, one row)");
  }
  const WriteElement<T, Ev> write{ev, dst.evaluator(plan), PlanIndex(plan)};
  for_each_index(dst.device().index, n, write, "thrust::for_each_n (elementwise)");
}

}  // namespace tsr::detail::cuda
