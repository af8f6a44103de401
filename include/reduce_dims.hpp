// Reductions over dimensions: sum, mean, prod, amax, amin, all, any and
// count_nonzero with a list of dims (empty: all) and keepdim.
//
// Each is one pass over its input expression, which is fused (sum(a * b, {1})
// reads a and b once and allocates only the result). The layout comes from
// detail::ReducePlan: an inner reduction reduces contiguous rows with the
// blocked, cascaded SIMD kernel of the full reductions; an outer reduction
// (column sums) walks rows and vectorizes across the kept inner dimension.
// Both combine partial results pairwise in an order fixed by the shape, and
// threads only split the outputs, so results are bitwise identical for every
// thread count.
#pragma once
#include <bit>
#include <concepts>
#include <memory>
#include <tuple>

#include "detail/reduce_plan.hpp"
#include "reduce.hpp"

namespace tsr {
namespace detail {

struct AnyReducer {
  static constexpr const char* name = "any";
  template <class A> static A identity() { return false; }
  template <class V> TSR_HOST_DEVICE static V combine(const V& a, const V& b) { return a || b; }
};

// The width of the kept-inner chunks an outer reduction (column sums) is
// split into: whole rows when there are enough outer positions for every
// thread, else a share of a row per thread (a multiple of 64, at least 256
// elements), so that memory streams row after row. The width never changes
// a result: every column is combined in the same order.
inline int64_t column_chunk(const ReducePlan& rp) {
  const int64_t inner = rp.inner_kept_size();
  const int64_t threads = rp.outputs * rp.count < kParallelGrain ? 1 : get_num_threads();
  if (rp.outer_outputs() >= threads) return inner;
  const int64_t share = (inner + threads - 1) / threads;
  return std::min(inner, std::max<int64_t>(256, (share + 63) / 64 * 64));
}

// Pairwise combination of runs of column partials, `width` values each
// (PairwiseStack for a vector of columns).
template <class R, class A>
class PairwiseColumns {
 public:
  // Room for the partials of `pushes` runs: a binary counter holds at most
  // bit_width(pushes) + 1 of them at once.
  PairwiseColumns(int64_t width, int64_t pushes)
      : width_(width),
        values_(new A[static_cast<std::size_t>((std::bit_width(uint64_t(pushes)) + 1) * width)]) {}
  // The buffer for the next run: fill it, then close() it.
  A* open() { return slot(n_); }
  void close() {
    count_[n_++] = 1;
    while (n_ >= 2 && count_[n_ - 1] == count_[n_ - 2]) {
      A* lo = slot(n_ - 2);
      const A* hi = slot(n_ - 1);
      for (int64_t j = 0; j < width_; ++j) lo[j] = R::combine(lo[j], hi[j]);
      count_[n_ - 2] *= 2;
      --n_;
    }
  }
  void finish(A* out) {
    if (n_ == 0) return std::fill(out, out + width_, R::template identity<A>());
    std::copy(slot(n_ - 1), slot(n_ - 1) + width_, out);
    for (int i = n_ - 2; i >= 0; --i)
      for (int64_t j = 0; j < width_; ++j) out[j] = R::combine(slot(i)[j], out[j]);
  }

 private:
  A* slot(int i) { return values_.get() + i * width_; }
  int64_t width_;
  std::unique_ptr<A[]> values_;  // not std::vector: A may be bool
  int64_t count_[64];
  int n_ = 0;
};

// Rows per run of an outer reduction: each column adds this many values in
// a row, then the runs combine pairwise. Longer than kCascade because each
// pairwise merge is a pass over the whole run buffer (merges cost 1/32 of a
// pass per row here instead of 1/8), and the error bound stays a few dozen
// additions.
inline constexpr int64_t kColumnRun = 32;

// acc[j] = combine(...combine(combine(acc[j], ev0[j]), ev1[j])..., evN[j])
// for j < width: one or more rows of an outer reduction, in row order. Taking
// several rows per pass loads and stores acc once for all of them: besides
// the traffic, each store to acc can stall the next loads of the rows when
// the two sit at nearby offsets modulo 4 KiB (4K aliasing: a 4096 x 4096
// column sum took 4.3 or 7 ms depending on where the input started; 8
// rows per pass: 3.1-3.6 ms wherever it starts).
template <class R, class A, class... Ev>
void combine_rows(A* acc, int64_t width, const Ev&... evs) {
  int64_t j = 0;
  using Ev0 = std::tuple_element_t<0, std::tuple<Ev...>>;
  if constexpr (Ev0::simd && std::is_same_v<typename Ev0::value_type, A>) {
    using B = xsimd::batch<A>;
    constexpr int64_t W = static_cast<int64_t>(B::size);
    if ((evs.contiguous_inner() && ...)) {
      for (; j + W <= width; j += W) {
        B x = B::load_unaligned(acc + j);
        ((x = R::combine(x, evs.template batch_contig<B>(j))), ...);
        x.store_unaligned(acc + j);
      }
    } else if ((evs.unit_inner() && ...)) {
      for (; j + W <= width; j += W) {
        B x = B::load_unaligned(acc + j);
        ((x = R::combine(x, evs.template batch<B>(j))), ...);
        x.store_unaligned(acc + j);
      }
    }
  }
  for (; j < width; ++j) {
    A x = acc[j];
    ((x = R::combine(x, convert<A>(evs[j]))), ...);
    acc[j] = x;
  }
}

// Calls body(local, idx, at, width) for every work unit of an outer
// reduction: the chunk [c0, c0 + width) of the kept inner dim at one
// kept-outer position, whose outputs start at out + at. idx holds the unit's
// kept dims (rp.set_row fills in a reduced row); local is this thread's copy
// of the evaluator.
template <class Ev, class F>
void for_each_column_unit(const ReducePlan& rp, const Ev& ev, const F& body) {
  const int64_t inner = rp.inner_kept_size();
  const int64_t chunk = column_chunk(rp);
  const int64_t chunks = (inner + chunk - 1) / chunk;
  run_units(rp.outer_outputs() * chunks, rp.outputs * rp.count, [&](int64_t ub, int64_t ue) {
    auto local = ev;
    int64_t idx[kMaxEvalDims];
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t o = u / chunks, c0 = (u % chunks) * chunk;
      rp.set_outer(o, idx);
      idx[rp.plan.ndim - 1] = c0;
      body(local, idx, o * inner + c0, std::min(chunk, inner - c0));
    }
  });
}

// Reduces e over the plan's reduced dims into out[0, rp.outputs), in the
// order of the kept dims (the result's contiguous layout).
template <class R, class A, Expression E>
void reduce_into(A* out, const E& e, const ReducePlan& rp) {
  if (rp.outputs == 0) return;
  if (rp.count == 0) return std::fill(out, out + rp.outputs, R::template identity<A>());
  const Plan& p = rp.plan;
  const auto ev = e.evaluator(p);

  if (!rp.kept_inner) {  // inner reduction: each output reduces rows of the inner reduced dim
    const int64_t len = rp.reduced_inner_size();
    const int64_t rows = rp.count / len;
    run_units(rp.outputs, rp.outputs * rp.count, [&](int64_t ob, int64_t oe) {
      auto local = ev;
      int64_t idx[kMaxEvalDims];
      for (int64_t o = ob; o < oe; ++o) {
        rp.set_outer(o, idx);
        PairwiseStack<R, A> stack;
        for (int64_t r = 0; r < rows; ++r) {
          rp.set_reduced(r, rp.reduced - 1, idx);
          for (int64_t c = 0; c < len; c += kReduceBlock) {
            idx[p.ndim - 1] = c;
            local.set_row(idx, p.ndim);
            stack.push(reduce_block<R, A>(local, std::min(kReduceBlock, len - c)));
          }
        }
        out[o] = stack.finish();
      }
    });
    return;
  }

  // Outer reduction: rows of each unit are combined in runs of kColumnRun,
  // the runs pairwise.
  for_each_column_unit(rp, ev, [&](auto& local, int64_t* idx, int64_t at, int64_t width) {
    PairwiseColumns<R, A> columns(width, (rp.count + kColumnRun - 1) / kColumnRun);
    for (int64_t r = 0; r < rp.count; r += kColumnRun) {
      // Each run accumulates in place in the pairwise stack's next slot.
      // It starts from the identity, not from a copy of its first row, so
      // that a column of -0.0 sums to +0.0 as in PyTorch.
      A* run = columns.open();
      std::fill(run, run + width, R::template identity<A>());
      const int64_t ke = std::min(rp.count, r + kColumnRun);
      int64_t k = r;
      for (; k + 8 <= ke; k += 8) {
        auto e1 = local, e2 = local, e3 = local, e4 = local, e5 = local, e6 = local, e7 = local;
        rp.set_row(k, idx, local);
        rp.set_row(k + 1, idx, e1);
        rp.set_row(k + 2, idx, e2);
        rp.set_row(k + 3, idx, e3);
        rp.set_row(k + 4, idx, e4);
        rp.set_row(k + 5, idx, e5);
        rp.set_row(k + 6, idx, e6);
        rp.set_row(k + 7, idx, e7);
        combine_rows<R>(run, width, local, e1, e2, e3, e4, e5, e6, e7);
      }
      for (; k < ke; ++k) {
        rp.set_row(k, idx, local);
        combine_rows<R>(run, width, local);
      }
      columns.close();
    }
    columns.finish(out + at);
  });
}

// The device backend's reduction over dimensions (cuda/reduce.hpp), in
// translation units that have it.
namespace cuda {
template <class R, class A, class E>
void reduce_dims_into(const Tensor<A>& out, const E& e, const ReducePlan& rp);
}  // namespace cuda

// out = the reduction of e along rp, on out's device.
template <class R, class A, class E>
void reduce_on_device(const Tensor<A>& out, const E& e, ReducePlan rp) {
  check_same_device(out.device(), e);
  if constexpr (kCudaBackend) {
    rp.plan.on_device = true;
    cuda::reduce_dims_into<R, A>(out, e, rp);
  } else {
    fail_compiled_without_cuda(out.device(), "a reduction");
  }
}

// The reduction of e over `dims` as a new tensor of type Out, accumulating
// in A (and through a temporary of A when the two differ: 16-bit floats).
//
// On a device, the backend's kernel writes the outputs (cuda/reduce.hpp).
template <class Out, class R, class A, Expression E>
Tensor<Out> reduce_dims(const E& e, const Shape& dims, bool keepdim) {
  const uint64_t mask = reduce_mask(dims, e.dim());
  const ReducePlan rp = make_reduce_plan(e, mask);
  const Device device = expr_device(e);
  auto out = Tensor<Out>::allocate(reduced_shape(e.sizes(), mask, keepdim), device);
  const auto reduce_to = [&](const Tensor<A>& acc) {
    if (device.is_cpu()) reduce_into<R, A>(acc.data_ptr(), e, rp);
    else reduce_on_device<R, A>(acc, e, rp);
  };
  if constexpr (std::is_same_v<Out, A>) {
    reduce_to(out);
  } else {
    auto acc = Tensor<A>::allocate(out.sizes(), device);
    reduce_to(acc);
    out.copy_(cast<Out>(acc));
  }
  return out;
}

// The number of elements reduced into each output.
template <class E>
int64_t reduced_count(const E& e, const Shape& dims) {
  const uint64_t mask = reduce_mask(dims, e.dim());
  int64_t n = 1;
  for (int64_t d = 0; d < e.dim(); ++d)
    if (mask >> d & 1) n *= e.sizes()[static_cast<std::size_t>(d)];
  return n;
}

// The first reduced dim of size 0, or -1: reductions without an identity
// (amax, amin, the inf-norms) fail there, naming it as PyTorch does.
template <class E>
int64_t first_empty_reduced_dim(const E& e, const Shape& dims) {
  const uint64_t mask = reduce_mask(dims, e.dim());
  for (int64_t d = 0; d < e.dim(); ++d)
    if ((mask >> d & 1) && e.sizes()[static_cast<std::size_t>(d)] == 0) return d;
  return -1;
}
template <class E>
void check_nonempty_dims(const E& e, const Shape& dims, const char* name) {
  if (dims.empty()) return check_nonempty(e, name);  // all dims, as PyTorch reads an empty list
  const int64_t d = first_empty_reduced_dim(e, dims);
  check<IndexError>(d < 0, name, "(): Expected reduction dim ", d, " to have non-zero size.");
}

}  // namespace detail

// sum(e, dims, keepdim): integer and bool inputs sum to int64, as in PyTorch.
template <Expression E>
auto sum(const E& e, const Shape& dims, bool keepdim = false) {
  using R = detail::sum_t<typename E::value_type>;
  auto out = detail::reduce_dims<R, detail::SumReducer, acc_t<R>>(e, dims, keepdim);
  detail::record_op<autograd::tag::Sum>(out, e, dims, false, "SumBackward1");
  return out;
}
template <Expression E>
auto prod(const E& e, const Shape& dims, bool keepdim = false) {
  using R = detail::sum_t<typename E::value_type>;
  auto out = detail::reduce_dims<R, detail::ProdReducer, acc_t<R>>(e, dims, keepdim);
  detail::record_op<autograd::tag::Prod>(out, e, dims, "ProdBackward1");
  return out;
}
template <Expression E>
auto mean(const E& e, const Shape& dims, bool keepdim = false) {
  using T = typename E::value_type;
  static_assert(is_floating_v<T>, "mean(): could not infer output dtype. Input dtype must be either a floating point "
                                  "or complex dtype. Use mean(cast<float>(x)) for integer tensors.");
  const auto count = static_cast<double>(detail::reduced_count(e, dims));
  auto s = detail::reduce_dims<acc_t<T>, detail::SumReducer, acc_t<T>>(e, dims, keepdim);
  Tensor<T> out = detail::materialize<T>(detail::as_type<T>(s / acc_t<T>(count)));
  detail::record_op<autograd::tag::Sum>(out, e, dims, true, "MeanBackward1");
  return out;
}
template <Expression E>
auto amax(const E& e, const Shape& dims, bool keepdim = false) {
  using T = typename E::value_type;
  detail::check_nonempty_dims(e, dims, "amax");
  auto out = detail::reduce_dims<T, detail::MaxReducer, acc_t<T>>(e, dims, keepdim);
  detail::record_op<autograd::tag::Extremum>(out, e, dims, "AmaxBackward0", false);
  return out;
}
template <Expression E>
auto amin(const E& e, const Shape& dims, bool keepdim = false) {
  using T = typename E::value_type;
  detail::check_nonempty_dims(e, dims, "amin");
  auto out = detail::reduce_dims<T, detail::MinReducer, acc_t<T>>(e, dims, keepdim);
  detail::record_op<autograd::tag::Extremum>(out, e, dims, "AminBackward0", false);
  return out;
}
// The smallest and largest elements, over all or along dim: {min, max}.
// Their gradients are amin's and amax's (PyTorch 1.13 has none).
template <Expression E>
auto aminmax(const E& e) {
  using T = typename E::value_type;
  detail::check(e.numel() > 0,
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  const Tensor<T> x(e);
  return std::make_tuple(amin(x), amax(x));
}
template <Expression E>
auto aminmax(const E& e, int64_t dim, bool keepdim = false) {
  using T = typename E::value_type;
  const Tensor<T> x(e);
  dim = detail::wrap_dim(dim, x.dim());
  detail::check(x.dim() == 0 || x.size(dim) > 0,
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  const Shape dims = x.dim() == 0 ? Shape{} : Shape{dim};
  return std::make_tuple(amin(x, dims, keepdim), amax(x, dims, keepdim));
}
// all / any: true where every / some element is nonzero; bool results.
template <Expression E>
auto all(const E& e, const Shape& dims = {}, bool keepdim = false) {
  return detail::reduce_dims<bool, detail::AllReducer, bool>(cast<bool>(e), dims, keepdim);
}
template <Expression E>
auto any(const E& e, const Shape& dims = {}, bool keepdim = false) {
  return detail::reduce_dims<bool, detail::AnyReducer, bool>(cast<bool>(e), dims, keepdim);
}
// The number of nonzero elements over dims (int64).
template <Expression E>
auto count_nonzero(const E& e, const Shape& dims = {}) {
  return detail::reduce_dims<int64_t, detail::SumReducer, int64_t>(cast<int64_t>(cast<bool>(e)), dims, false);
}

// An integer dim in place of a list: sum(x, 1) as x.sum(1) in PyTorch.
template <Expression E, std::integral I>
auto sum(const E& e, I dim, bool keepdim = false) { return sum(e, Shape{int64_t(dim)}, keepdim); }
template <Expression E, std::integral I>
auto mean(const E& e, I dim, bool keepdim = false) { return mean(e, Shape{int64_t(dim)}, keepdim); }
template <Expression E, std::integral I>
auto prod(const E& e, I dim, bool keepdim = false) { return prod(e, Shape{int64_t(dim)}, keepdim); }
template <Expression E, std::integral I>
auto amax(const E& e, I dim, bool keepdim = false) { return amax(e, Shape{int64_t(dim)}, keepdim); }
template <Expression E, std::integral I>
auto amin(const E& e, I dim, bool keepdim = false) { return amin(e, Shape{int64_t(dim)}, keepdim); }

// ----- method forms ------------------------------------------------------------
template <class D> auto ExprBase<D>::sum(const Shape& dims, bool keepdim) const { return tsr::sum(derived(), dims, keepdim); }
template <class D> auto ExprBase<D>::mean(const Shape& dims, bool keepdim) const { return tsr::mean(derived(), dims, keepdim); }
template <class D> auto ExprBase<D>::prod(const Shape& dims, bool keepdim) const { return tsr::prod(derived(), dims, keepdim); }
template <class D> auto ExprBase<D>::amax(const Shape& dims, bool keepdim) const { return tsr::amax(derived(), dims, keepdim); }
template <class D> auto ExprBase<D>::amin(const Shape& dims, bool keepdim) const { return tsr::amin(derived(), dims, keepdim); }

template <class T>
template <class U>
auto Tensor<T>::sum_to_size(const Shape& size) const {
  using R = detail::sum_t<T>;
  const int64_t lead = dim() - static_cast<int64_t>(size.size());
  bool expandable = lead >= 0;
  Shape summed;
  for (int64_t d = 0; expandable && d < dim(); ++d) {
    if (d < lead) {
      summed.push_back(d);
    } else if (const int64_t want = size[static_cast<std::size_t>(d - lead)]; want != sizes()[d]) {
      expandable = want == 1;
      summed.push_back(d);
    }
  }
  detail::check(expandable, "size {", size, "} is not expandable to size {", sizes(), "}.");
  if (summed.empty()) {  // this tensor itself, or its integers as int64
    if constexpr (std::is_same_v<R, T>) return *this;
    else return Tensor<R>(cast<R>(*this));
  }
  return Tensor<R>(tsr::sum(*this, summed, true)).reshape(size);
}

}  // namespace tsr
