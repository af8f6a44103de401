// The layout of a reduction over some dimensions of an expression.
//
// The input's dimensions are reordered into groups, outermost first:
//   [kept outer ...] [reduced ...]            an inner reduction (row sums), or
//   [kept outer ...] [reduced ...] [kept inner] an outer reduction (column sums),
// the second when the input's innermost dimension is kept: then the kernel
// walks rows of the kept inner dimension and vectorizes across it, instead of
// striding through memory one element at a time. Inside each group,
// neighbouring dimensions merge where every operand is contiguous across
// them; size-1 dimensions drop out. The result is a Plan the evaluators
// understand (src[k] names the input dim whose strides dim k uses).
#pragma once
#include <algorithm>

#include "../shape.hpp"
#include "plan.hpp"
#include "small_vector.hpp"

namespace tsr::detail {

// The dims of `dims` as a bit mask over a tensor of rank `rank`; an empty
// list means every dim. PyTorch's errors for bad and repeated dims.
inline uint64_t reduce_mask(const Shape& dims, int64_t rank) {
  check(rank <= 64, "tessera reduces tensors of at most 64 dimensions");
  if (dims.empty()) return rank == 64 ? ~uint64_t{0} : (uint64_t{1} << rank) - 1;
  uint64_t mask = 0;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, rank);
    check(!(mask >> w & 1), "dim ", w, " appears multiple times in the list of dims");
    mask |= uint64_t{1} << w;
  }
  return rank == 0 ? 0 : mask;
}

// The shape of the result: reduced dims removed, or kept as 1 with keepdim.
inline Shape reduced_shape(const Shape& in, uint64_t mask, bool keepdim) {
  Shape out;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (!(mask >> d & 1)) out.push_back(in[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

struct ReducePlan {
  Plan plan;               // over the input, dims in group order
  int kept_outer = 0;      // plan dims [0, kept_outer) are kept
  int reduced = 0;         // then this many reduced dims
  bool kept_inner = false; // then one kept dim, the innermost, if true
  int64_t outputs = 1;     // elements of the result
  int64_t count = 1;       // elements reduced into each of them

  TSR_HOST_DEVICE int64_t inner_kept_size() const { return kept_inner ? size_at(plan.sizes, plan.ndim - 1) : 1; }
  int64_t outer_outputs() const { return outputs / inner_kept_size(); }
  // The inner reduced dim (an inner reduction's rows).
  TSR_HOST_DEVICE int64_t reduced_inner_size() const { return size_at(plan.sizes, kept_outer + reduced - 1); }

  // Fills idx[0, kept_outer) from the flat index of a kept-outer position.
  TSR_HOST_DEVICE void set_outer(int64_t o, int64_t* idx) const { unflatten(o, plan.sizes, 0, kept_outer, idx); }
  // Fills the reduced dims of idx from a flat index over the first `n` of
  // them (the outer reduced dims when n = reduced - 1).
  TSR_HOST_DEVICE void set_reduced(int64_t r, int n, int64_t* idx) const {
    unflatten(r, plan.sizes, kept_outer, kept_outer + n, idx);
  }
  // Points an evaluator at reduced row r (flat over all reduced dims) of
  // the position idx holds.
  template <class Ev>
  void set_row(int64_t r, int64_t* idx, Ev& ev) const {
    set_reduced(r, reduced, idx);
    ev.set_row(idx, plan.ndim);
  }
};

// The plan for reducing an input of shape `in` over the dims in `mask`,
// from its leaves' strides (n_leaves rows of in.size() strides, broadcast to
// the input's rank). Not a template: only the gathering of the strides
// depends on the expression (make_reduce_plan).
inline ReducePlan reduce_plan_from_strides(const Shape& in, const int64_t* strides, int n_leaves, uint64_t mask) {
  const int rank = static_cast<int>(in.size());
  ReducePlan rp;
  int innermost = -1;  // the last dim of size > 1
  for (int d = 0; d < rank; ++d) {
    if (mask >> d & 1) rp.count *= in[d];
    else rp.outputs *= in[d];
    if (in[d] != 1) innermost = d;
  }
  rp.kept_inner = innermost >= 0 && !(mask >> innermost & 1);

  Plan& p = rp.plan;
  p.out_rank = rank;
  p.ndim = 0;
  int group_start = 0;
  // Appends dim d, the next dim outwards of the group being built, merging
  // it into the plan dim before it when every leaf is contiguous across the
  // two (the merged dim keeps the inner dim's strides).
  auto append = [&](int d) {
    const int n = p.ndim;
    if (n > group_start) {
      const int inner = p.src[n - 1];
      bool merge = true;
      for (int l = 0; l < n_leaves && merge; ++l) {
        const int64_t* st = strides + l * rank;
        merge = st[inner] * p.sizes[n - 1] == st[d];
      }
      if (merge) {
        p.sizes[n - 1] *= in[d];
        return;
      }
    }
    check(n < kMaxEvalDims, "tessera reduces expressions of at most ", kMaxEvalDims,
          " non-mergeable dimensions; got a tensor of shape ", in);
    p.sizes[n] = in[d];
    p.src[n] = d;
    p.ndim = n + 1;
  };
  // Adds the dims that `pick` selects as one group, outermost first.
  auto add_group = [&](auto&& pick) {
    int dims[64];
    int nd = 0;
    for (int d = 0; d < rank; ++d)
      if (in[d] != 1 && pick(d)) dims[nd++] = d;
    // Build the group inner to outer, then reverse it into place.
    const int first = p.ndim;
    group_start = first;
    for (int i = nd - 1; i >= 0; --i) append(dims[i]);
    std::reverse(p.sizes + first, p.sizes + p.ndim);
    std::reverse(p.src + first, p.src + p.ndim);
    return p.ndim - first;
  };
  rp.kept_outer = add_group([&](int d) { return !(mask >> d & 1) && !(rp.kept_inner && d == innermost); });
  rp.reduced = add_group([&](int d) { return (mask >> d & 1) != 0; });
  if (rp.reduced == 0) {  // only size-1 dims are reduced: one element per output
    p.sizes[p.ndim] = 1;
    p.src[p.ndim] = -1;
    ++p.ndim;
    rp.reduced = 1;
  }
  if (rp.kept_inner) add_group([&](int d) { return d == innermost; });
  return rp;
}

// Builds the plan for reducing `e` over the dims in `mask`.
template <class E>
ReducePlan make_reduce_plan(const E& e, uint64_t mask) {
  const Shape& in = e.sizes();
  const std::size_t rank = in.size();
  // Every leaf's strides broadcast to the input's rank, one after another.
  SmallVector<int64_t, 64> strides;
  e.for_each_leaf([&](const auto& leaf) {
    const std::size_t at = strides.size();
    strides.resize(at + rank);
    broadcast_strides(leaf.sizes(), leaf.strides(), rank, strides.data() + at);
  });
  const int n_leaves = rank == 0 ? 0 : static_cast<int>(strides.size() / rank);
  return reduce_plan_from_strides(in, strides.data(), n_leaves, mask);
}

}  // namespace tsr::detail
