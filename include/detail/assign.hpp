// Materialization: writing an expression into a destination tensor.
//
// The plan merges dimensions, the expression becomes a trivially copyable
// evaluator, and the output is walked row by row in tiles. A row whose
// operands all have inner stride 0 or 1 runs on xsimd batches; any other row
// runs a strided scalar loop. Tiles are the unit of parallel work: they start
// at fixed columns, so results never depend on the thread count.
#pragma once
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "../tensor.hpp"
#include "small_vector.hpp"
#include "streaming_store.hpp"
#include "thread_pool.hpp"

namespace tsr::detail {

// Elements per tile along a row: a multiple of every batch width.
inline constexpr int64_t kTile = 4096;
// Below this many elements an evaluation stays on the calling thread.
inline constexpr int64_t kParallelGrain = 32768;

// Runs fn(begin, end) over `units` work units: on the pool when the whole job
// (`work` elements) is large enough to pay for it, else on this thread.
template <class F>
void run_units(int64_t units, int64_t work, const F& fn) {
  if (work < kParallelGrain || units < 2) fn(0, units);
  else ThreadPool::instance().parallel_for(units, fn);
}

// Asks for the leaves' cache lines of the N elements from i on, a little
// ahead, one request per line: with exp or sin between the loads, the
// out-of-order core does not get far enough ahead to keep memory busy (the
// transcendental chain on 2^24 floats, one thread: 1.1-1.2x faster).
//
// Always inlined, and every evaluator's prefetch too: GCC counts a prefetch
// as free of side effects, so a function of prefetches alone is taken for
// a pure one and its calls deleted. Written as a lambda that GCC left out of
// line, the transcendental chain's loop lost all its requests, unnoticed.
template <int64_t N, class T, class Ev>
[[gnu::always_inline]] inline void prefetch_ahead(const Ev& ev, int64_t i) {
  constexpr int64_t line = kCacheLine / int64_t(sizeof(T)), ahead = kPrefetchAhead / int64_t(sizeof(T));
  for (int64_t k = 0; k < N; k += line) ev.prefetch(i + ahead + k);
}

// The SIMD loop of a row: Contig says every leaf has stride 1 (no
// per-load branch between loading and broadcasting).
//
// The loop reads a local copy of the evaluator: through the reference, the
// compiler must assume each store to `out` may change the leaves' pointers
// and reloads them every iteration whenever this function is not inlined
// (two extra loads per iteration: a + b on 1000 floats went from 80 to 100 ns
// when a change elsewhere moved it out of line). The copy's unused parts
// are optimized away.
//
// `stream` (a large output, aligned for it, as write_tiles checks): store the
// batches around the cache (streaming_store.hpp) and prefetch the leaves. A
// test per iteration, not a second loop: GCC at -O2 keeps one copy of the
// loop, and the branch is always predicted.
template <bool Contig, class T, class Ev>
inline void write_row_simd(T* out, const Ev& ev_ref, int64_t n, [[maybe_unused]] bool stream = false) {
  const Ev ev = ev_ref;
  using B = xsimd::batch<T>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  constexpr bool streamable = streaming_alignment<T>() != 0;
  int64_t i = 0;
  if constexpr (Contig) {
    // Two independent batches per iteration: compute-bound chains (sin, exp)
    // overlap their latency chains.
    for (; i + 2 * W <= n; i += 2 * W) {
      const B x0 = ev.template batch_contig<B>(i);
      const B x1 = ev.template batch_contig<B>(i + W);
      if constexpr (streamable) {
        if (stream) {
          prefetch_ahead<2 * W, T>(ev, i);
          store_streaming(out + i, x0);
          store_streaming(out + i + W, x1);
          continue;
        }
      }
      x0.store_unaligned(out + i);
      x1.store_unaligned(out + i + W);
    }
    for (; i + W <= n; i += W) ev.template batch_contig<B>(i).store_unaligned(out + i);
  } else {
    for (; i + W <= n; i += W) {
      const B x = ev.template batch<B>(i);
      if constexpr (streamable) {
        if (stream) {
          prefetch_ahead<W, T>(ev, i);
          store_streaming(out + i, x);
          continue;
        }
      }
      x.store_unaligned(out + i);
    }
  }
  for (; i < n; ++i) out[i] = ev[i];
}

// Which row loops a tile writer compiles.
enum class RowLoops {
  // A SIMD loop for rows whose leaves all have stride 1, one for rows with
  // leaves of stride 0 or 1 (a test per load between loading and
  // broadcasting), and a scalar loop for the rest: an expression's own
  // evaluation, where each loop pays in run time.
  all,
  // The second SIMD loop (serving contiguous rows too) and the scalar one:
  // the evaluations of a backward, which compile several per expression type.
  one_simd,
  // Only the second: the caller knows every row is dense output with
  // leaves of stride 0 or 1.
  unit_only,
};

// Writes n elements of a row: out[i * out_stride] = ev[i]; `stream` as in
// write_row_simd.
template <RowLoops Loops = RowLoops::all, class T, class Ev>
inline void write_row(T* out, int64_t out_stride, const Ev& ev, int64_t n, [[maybe_unused]] bool stream = false) {
  if constexpr (Ev::simd && std::is_same_v<typename Ev::value_type, T>) {
    if constexpr (Loops == RowLoops::all)
      if (out_stride == 1 && ev.contiguous_inner()) return write_row_simd<true>(out, ev, n, stream);
    if (out_stride == 1 && ev.unit_inner()) return write_row_simd<false>(out, ev, n, stream);
  }
  const Ev local = ev;  // as in write_row_simd
  for (int64_t i = 0; i < n; ++i) out[i * out_stride] = convert<T>(local[i]);
}

// Calls f(idx, n) for each tile in units [ub, ue) of a plan: idx is the
// tile's starting index (plan.ndim entries), n its length.
template <class F>
inline void for_each_tile(const Plan& p, int64_t ub, int64_t ue, F&& f) {
  const int64_t inner = p.inner_size();
  const int64_t tiles_per_row = (inner + kTile - 1) / kTile;
  int64_t idx[kMaxEvalDims];
  if (p.ndim == 1) {  // one row (every contiguous evaluation): tiles are columns
    for (int64_t u = ub; u < ue; ++u) {
      idx[0] = u * kTile;
      f(idx, std::min(kTile, inner - idx[0]));
    }
    return;
  }
  for (int64_t u = ub; u < ue; ++u) {
    const int64_t row = u / tiles_per_row, col = (u % tiles_per_row) * kTile;
    p.row_index(row, col, idx);
    f(idx, std::min(kTile, inner - col));
  }
}

inline int64_t tile_count(const Plan& p) {
  return p.rows() * ((p.inner_size() + kTile - 1) / kTile);
}

// Writes one tile: n elements of a row of an expression, whose evaluator
// (type-erased) is placed at the tile's start index, with the row loops
// `Loops`. The only part of a tiled evaluation that depends on the
// expression.
template <class T, class Ev, RowLoops Loops = RowLoops::all>
void write_tile(const void* ev, T* out, int64_t out_stride, const int64_t* idx, int nd, int64_t n, bool stream) {
  Ev local = *static_cast<const Ev*>(ev);
  local.set_row(idx, nd);
  if constexpr (Loops == RowLoops::unit_only && Ev::simd && std::is_same_v<typename Ev::value_type, T>)
    write_row_simd<false>(out, local, n, stream);
  else
    write_row<Loops>(out, out_stride, local, n, stream);
}
template <class T>
using TileWriter = void (*)(const void* ev, T* out, int64_t out_stride, const int64_t* idx, int nd, int64_t n,
                            bool stream);

// Writes every tile of `plan` into dst with `write` (on the pool when the job
// is large): the tiling and threading, compiled once per element type rather
// than once per expression. A tile is 4096 elements: the indirect call and
// the evaluator's copy per tile cost nothing measurable. Unless the
// expression reads dst itself (`reads_dst`), a dense output of
// streaming_threshold() bytes or more is stored around the cache, in each
// tile that starts aligned for it (every tile of a contiguous tensor, whose
// storage is aligned to 64 bytes). An expression that reads dst has brought
// each line into the cache before it writes it, so there is no read to save,
// and streaming stores of cached lines cost more: a += b * 2 on 2^24 floats
// took 1.2 times as long.
template <class T>
void write_tiles(const Tensor<T>& dst, const Plan& plan, TileWriter<T> write, const void* ev, bool reads_dst) {
  const TensorEval<T> out_ev = dst.evaluator(plan);
  T* const out_base = const_cast<T*>(out_ev.base);
  const bool streaming = streaming_alignment<T>() != 0 && !reads_dst && out_ev.inner == 1 &&
                         static_cast<std::size_t>(dst.numel()) * sizeof(T) >= streaming_threshold();
  run_units(tile_count(plan), dst.numel(), [&](int64_t ub, int64_t ue) {
    for_each_tile(plan, ub, ue, [&](const int64_t* idx, int64_t len) {
      int64_t off = 0;
      for (int k = 0; k < plan.ndim; ++k) off += idx[k] * out_ev.st[k];
      T* const out = out_base + off;
      write(ev, out, out_ev.inner, idx, plan.ndim, len,
            streaming && aligned_for_streaming(out));
    });
    if (streaming) streaming_fence();
  });
}

// For a leaf of dst's own storage: true when it overlaps dst under a
// different element mapping (out of line: few leaves ever get here).
template <class T, class L>
[[gnu::noinline]] bool overlaps_differently(const Tensor<T>& dst, const Tensor<L>& leaf) {
  const auto dst_begin = reinterpret_cast<uintptr_t>(static_cast<const char*>(dst.storage()->data()) +
                                                     dst.storage_offset() * int64_t(sizeof(T)));
  const auto dst_end = dst_begin + static_cast<uintptr_t>(dst.extent()) * sizeof(T);
  const auto begin = reinterpret_cast<uintptr_t>(static_cast<const char*>(leaf.storage()->data()) +
                                                 leaf.storage_offset() * int64_t(sizeof(L)));
  const auto end = begin + static_cast<uintptr_t>(leaf.extent()) * sizeof(L);
  if (end <= dst_begin || dst_end <= begin) return false;
  bool same = sizeof(L) == sizeof(T) && leaf.storage_offset() == dst.storage_offset();
  const std::size_t rank = dst.sizes().size();
  int64_t st[64];
  if (same && leaf.sizes().size() <= 64) {
    broadcast_strides(leaf.sizes(), leaf.strides(), rank, st);
    for (std::size_t d = 0; d < rank && same; ++d) same = dst.sizes()[d] == 1 || st[d] == dst.strides()[d];
  } else {
    same = false;
  }
  return !same;
}

// How src's leaves share dst's storage. `needs_temporary`: writing src into
// dst element by element could read an element after it was overwritten (a
// leaf shares memory with dst under a different element mapping; the
// identical mapping, x += x * 2, is safe). `reads_dst`: some leaf shares dst's
// storage at all.
struct DestinationUse {
  bool needs_temporary = false;
  bool reads_dst = false;
};
template <class T, class E>
DestinationUse destination_use(const Tensor<T>& dst, const E& src) {
  DestinationUse use;
  src.for_each_leaf([&](const auto& leaf) {
    if (leaf.storage() != dst.storage()) return;
    use.reads_dst = true;
    use.needs_temporary = use.needs_temporary || (leaf.numel() != 0 && overlaps_differently(dst, leaf));
  });
  return use;
}

// True when dst and every tensor leaf are contiguous with dst's shape (a
// one-element leaf counts too: it broadcasts as a stride-0 row). Then the
// whole evaluation is one row and needs no plan. Only called once src is
// known to broadcast to dst's shape: then a leaf with dst's element count
// has dst's shape but for size-1 dims, so counts are compared, not shapes.
template <class T, class E>
bool all_linear(const Tensor<T>& dst, const E& src) {
  if (!dst.is_contiguous()) return false;
  const int64_t n = dst.numel();
  bool ok = true;
  src.for_each_leaf([&](const auto& leaf) {
    const int64_t m = leaf.numel();
    ok = ok && (m == 1 || (m == n && leaf.is_contiguous()));
  });
  return ok;
}

// The plan for writing src (broadcast) into an output of shape `out` laid out
// like dst (or for reading src alone when dst is null).
template <class T, class E>
Plan strided_plan(const Shape& out, const Tensor<T>& dst, const E& src);

// The plan for reading src alone (a reduction's input), laid out as `out`.
template <class E>
Plan make_plan(const Shape& out, const E& src) {
  return strided_plan(out, Tensor<typename E::value_type>(), src);
}

// The plan for an output of shape `out` laid out like `dst` (may be null)
// from its operands' layouts, merging dims where all allow it. Not a
// template: only the walk that collects the operands is compiled per
// expression.
#if TSR_CORE_DEFINITIONS
TSR_CORE_INLINE Plan strided_plan_of(const Shape& out, const TensorImpl* dst, const TensorImpl* const* leaves, std::size_t n) {
  // Every operand's strides, broadcast to the output's rank: dst first.
  const std::size_t rank = out.size();
  SmallVector<int64_t, 64> strides;
  if (dst) {
    strides.resize(rank);
    for (std::size_t d = 0; d < rank; ++d) strides[d] = dst->strides[d];
  }
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t at = strides.size();
    strides.resize(at + rank);
    broadcast_strides(leaves[k]->sizes, leaves[k]->strides, rank, strides.data() + at);
  }
  return Plan::make(out, strides.data(), static_cast<int>(strides.size() / std::max<std::size_t>(rank, 1)));
}
#else
Plan strided_plan_of(const Shape& out, const TensorImpl* dst, const TensorImpl* const* leaves, std::size_t n);
#endif
template <class T, class E>
Plan strided_plan(const Shape& out, const Tensor<T>& dst, const E& src) {
  SmallVector<const TensorImpl*, 16> leaves;
  src.for_each_leaf([&](const auto& leaf) { leaves.push_back(leaf.impl_ptr().get()); });
  return strided_plan_of(out, dst.defined() ? dst.impl_ptr().get() : nullptr, leaves.data(), leaves.size());
}

// Out of line: the error path of assign's shape check.
#if TSR_CORE_DEFINITIONS
[[gnu::noinline]] TSR_CORE_INLINE void check_assign_shape(const Shape& out, const Shape& src) {
  const Shape b = broadcast_shapes(out, src);
  check(b == out, "output with shape ", out, " doesn't match the broadcast shape ", b);
}
#else
void check_assign_shape(const Shape& out, const Shape& src);
#endif

template <class T, class E>
[[gnu::noinline]] void assign_general(const Tensor<T>& dst, const E& src, bool in_place);

// The device backend's evaluation (cuda/elementwise.hpp), in translation
// units that have it.
namespace cuda {
template <class T, class E>
void write_elements(const Tensor<T>& dst, const E& src, const Plan& plan);
}  // namespace cuda

// Fails unless every tensor of src is on `device`.
template <class E>
void check_same_device(Device device, const E& src) {
  src.for_each_leaf([&](const auto& leaf) {
    if (leaf.device() != device) [[unlikely]]
      fail_mixed_devices(device, leaf.device());
  });
}

// dst = src on dst's device, along a plan made for dst and src's leaves;
// the caller has checked shapes, devices and aliasing.
template <class T, class E>
void write_on_device(const Tensor<T>& dst, const E& src, Plan plan) {
  if constexpr (kCudaBackend) {
    plan.on_device = true;
    cuda::write_elements(dst, src, plan);
  } else {
    fail_compiled_without_cuda(dst.device(), "an elementwise evaluation");
  }
}

// dst[...] = src, broadcasting src to dst's shape (which never changes).
//
// The common case costs a few dozen nanoseconds over the arithmetic: a job
// of one tile where dst and every leaf are contiguous of dst's shape and
// none overlaps dst differently is one row on this thread, with no plan to
// build. The leaves check that while their evaluators are built
// (LinearProbe), in the one walk over the tree that evaluation needs
// anyway. Everything else goes through assign_general, kept out of line so
// that this path inlines well.
//
// `in_place`: the write changes an existing tensor, so its storage version
// moves (autograd checks it). It moves once the checks have passed and
// before the write: a load of the counter right after the loop would wait
// for the loop's stores to drain (4K aliasing with the output), which tiny
// ops feel.
template <class T, class E>
void assign(const Tensor<T>& dst, const E& src, bool in_place) {
  if (!(src.sizes() == dst.sizes())) check_assign_shape(dst.sizes(), src.sizes());
  const TensorImpl& d = *dst.impl_ptr();
  const int64_t n = d.numel;
  if (n > 0 && n <= kTile && d.contiguous && d.storage->device().is_cpu()) {
    const LinearProbe probe{n, d.storage.get(), d.offset, sizeof(T)};
    const auto ev = src.evaluator(probe);
    if (probe.ok) {
      T* const out = dst.data_ptr();
      if (in_place) d.storage->bump_version();
      write_row(out, 1, ev, n);
      return;
    }
  }
  assign_general(dst, src, in_place);
}

// dst = src along `plan`, on dst's device (the caller has checked shapes,
// devices and aliasing): tiled, each tile's rows written by the loops
// `Loops` names. `reads_dst`: some leaf of src shares dst's storage (the
// caller knows; see write_tiles).
template <RowLoops Loops = RowLoops::all, class T, class E>
void write_along(const Tensor<T>& dst, const E& src, const Plan& plan, bool reads_dst) {
  if (!dst.device().is_cpu()) return write_on_device(dst, src, plan);
  const auto ev = src.evaluator(plan);
  using Ev = std::remove_const_t<decltype(ev)>;
  static_assert(std::is_trivially_copyable_v<Ev>, "evaluators must be trivially copyable");
  write_tiles(dst, plan, &write_tile<T, Ev, Loops>, &ev, reads_dst);
}

// Any evaluation: through a temporary when a leaf overlaps dst differently,
// else tiled (on the pool when large) along the plan.
template <class T, class E>
void assign_general(const Tensor<T>& dst, const E& src, bool in_place) {
  const Shape& out = dst.sizes();
  const bool linear = all_linear(dst, src);
  if (!linear)
    for (std::size_t d = 0; d < out.size(); ++d)
      check(dst.strides()[d] != 0 || out[d] <= 1,
            "unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation.");
  const Device device = dst.device();
  check_same_device(device, src);
  if (in_place) dst.storage()->bump_version();
  const int64_t n = dst.numel();
  if (n == 0) return;
  const DestinationUse use = destination_use(dst, src);
  if (use.needs_temporary) {
    const auto tmp = Tensor<typename E::value_type>::allocate(src.sizes(), device);
    assign(tmp, src);
    assign(dst, tmp);
    return;
  }

  write_along(dst, src, linear ? Plan::linear(static_cast<int>(out.size()), n) : strided_plan(out, dst, src),
              use.reads_dst);
}

// Materializes e into a new tensor without recording it for autograd: the
// fused backward's gradient expressions (recording them would instantiate a
// node type for every gradient expression, whose backward would instantiate
// more, forever; a recorded backward, create_graph, evaluates them one op at
// a time instead: autograd/fused.hpp), and the inner passes of composite ops,
// which record one node of their own.
template <class T, class E>
Tensor<T> materialize(const E& e) {
  auto out = Tensor<T>::allocate(e.sizes(), expr_device(e));
  assign(out, e);
  return out;
}

// Materializes e into a new tensor, unrecorded, compiling less than
// materialize: for the evaluations of a backward (each leaf's gradient
// expression, a rule's gradient), of which every recorded expression type
// compiles several. No single-row path without a plan, no test for leaves
// that overlap the new buffer (none can), and one SIMD row loop
// (RowLoops::one_simd) where materialize compiles three, two of them
// twice (inlined into assign's single-row path, and in its tiles). The
// backward's kernels lose only the loop without a per-load test, which the
// summed derivative of one tensor never had either (write_summed_gradient).
template <class T, class E>
Tensor<T> materialize_gradient(const E& e) {
  auto out = Tensor<T>::allocate(e.sizes(), expr_device(e));
  const int64_t n = out.numel();
  if (n == 0) return out;
  const Shape& shape = out.sizes();
  check_same_device(out.device(), e);
  write_along<RowLoops::one_simd>(
      out, e, all_linear(out, e) ? Plan::linear(static_cast<int>(shape.size()), n) : strided_plan(shape, out, e),
      /*reads_dst=*/false);
  return out;
}

// e as a tensor, unrecorded: a tensor is itself, an expression is
// materialized.
template <class E>
Tensor<typename E::value_type> unrecorded_tensor(const E& e) {
  if constexpr (std::is_same_v<E, Tensor<typename E::value_type>>) return e;
  else return materialize<typename E::value_type>(e);
}

}  // namespace tsr::detail
