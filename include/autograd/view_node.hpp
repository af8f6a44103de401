// Backward of views (view, reshape, transpose, permute, slice, narrow,
// select, squeeze, unsqueeze, expand, diagonal, as_strided, unfold): the
// gradient of the view is written into a zero buffer laid out like the
// base's storage, through the view's own strides (adding where the view
// overlaps itself), and read back through the base's; dims the view
// broadcasts (stride 0, as expand makes) are summed first. One node type
// serves every view op.
#pragma once
#include <algorithm>
#include <optional>
#include <vector>

#include "../reduce_dims.hpp"
#include "node.hpp"

namespace tsr::autograd {

// Where a view sits in its base: both geometries, the view's offset taken
// from the base's, and the span of storage the base covers.
struct ViewGeometry {
  template <class T>
  ViewGeometry(const Tensor<T>& base, const Tensor<T>& view)
      : base_sizes_(base.sizes()), base_strides_(base.strides()), base_span_(base.extent()),
        view_sizes_(view.sizes()), view_strides_(view.strides()),
        view_offset_(view.storage_offset() - base.storage_offset()) {}
  Shape base_sizes_;
  Strides base_strides_;
  int64_t base_span_;
  Shape view_sizes_;
  Strides view_strides_;
  int64_t view_offset_;
};

// Whether the dims of a view not in `skipped` address distinct elements:
// sorted by stride, each dim's stride must reach past every element the
// smaller ones address (PyTorch's test for as_strided's gradient). A view
// that fails it without overlapping is only written in more slices.
inline bool free_of_overlap(const Shape& sizes, const Strides& strides, const std::vector<bool>& skipped) {
  std::vector<std::size_t> dims;
  for (std::size_t d = 0; d < sizes.size(); ++d)
    if (!skipped[d] && sizes[d] > 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](std::size_t a, std::size_t b) { return strides[a] < strides[b]; });
  int64_t span = 1;  // the smaller dims address [0, span)
  for (std::size_t d : dims) {
    if (strides[d] < span) return false;
    span += (sizes[d] - 1) * strides[d];
  }
  return true;
}

// The dims along which a view's gradient is written one slice at a time so
// that no slice overlaps itself: none for nearly every view; for an
// overlapping one, the fewest slices found greedily (a dim whose removal
// leaves the rest free of overlap, the shortest such; else the shortest
// dim, and again).
inline std::vector<std::size_t> dims_to_write_one_at_a_time(const Shape& sizes, const Strides& strides) {
  std::vector<bool> looped(sizes.size(), false);
  std::vector<std::size_t> out;
  if (numel_of(sizes) == 0) return out;
  while (!free_of_overlap(sizes, strides, looped)) {
    std::size_t best = sizes.size(), shortest = sizes.size();
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      if (looped[d] || sizes[d] <= 1) continue;
      if (shortest == sizes.size() || sizes[d] < sizes[shortest]) shortest = d;
      looped[d] = true;
      if (free_of_overlap(sizes, strides, looped) && (best == sizes.size() || sizes[d] < sizes[best])) best = d;
      looped[d] = false;
    }
    const std::size_t d = best != sizes.size() ? best : shortest;
    looped[d] = true;
    out.push_back(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <class T>
class ViewNode final : public TypedNode<T>, private ViewGeometry {
 public:
  ViewNode(const Tensor<T>& base, const Tensor<T>& view) : ViewGeometry(base, view) {
    this->next.push_back(detail::gradient_edge(base));
  }
  std::string name() const override { return "ViewBackward0"; }
  std::vector<GradRef> apply(const GradRef& grad) override {
    Tensor<T> g(grad);
    if (auto direct = rearranged(g)) return {direct->impl_ptr()};
    Shape sizes = view_sizes_, summed;
    for (std::size_t d = 0; d < sizes.size(); ++d)
      if (view_strides_[d] == 0 && sizes[d] > 1) summed.push_back(static_cast<int64_t>(d)), sizes[d] = 1;
    if (!summed.empty()) g = sum(g, summed, true);
    // (Recorded under create_graph: the writes into the zeros as CopySlices.)
    auto buffer = zeros<T>({base_span_});
    const std::vector<std::size_t> looped = dims_to_write_one_at_a_time(sizes, view_strides_);
    if (looped.empty()) buffer.as_strided(sizes, view_strides_, view_offset_).copy_(g);
    else add_slice_by_slice(buffer, g, sizes, looped);
    return {buffer.as_strided(base_sizes_, base_strides_, 0).clone().impl_ptr()};
  }

 private:
  // A view that overlaps itself (as_strided, unfold with a step smaller
  // than its windows) has elements that share storage, and their gradients
  // add there: it is written one slice at a time along the dims `looped`,
  // each slice free of overlap, adding into what earlier slices wrote.
  void add_slice_by_slice(Tensor<T>& buffer, Tensor<T> g, const Shape& sizes,
                          const std::vector<std::size_t>& looped) const {
    Shape slice_sizes;
    Strides slice_strides;
    int64_t count = 1;
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      if (std::find(looped.begin(), looped.end(), d) != looped.end()) {
        count *= sizes[d];
      } else {
        slice_sizes.push_back(sizes[d]);
        slice_strides.push_back(view_strides_[d]);
      }
    }
    std::vector<int64_t> at(looped.size(), 0);  // the slice's index along each looped dim
    for (int64_t i = 0; i < count; ++i) {
      int64_t offset = view_offset_;
      Tensor<T> slice = g;
      for (std::size_t k = looped.size(); k-- > 0;) {  // the last dim first: the others keep their numbers
        offset += at[k] * view_strides_[looped[k]];
        slice = slice.select(static_cast<int64_t>(looped[k]), at[k]);
      }
      buffer.as_strided(slice_sizes, slice_strides, offset).add_(slice);
      for (std::size_t k = looped.size(); k-- > 0;) {
        if (++at[k] < sizes[looped[k]]) break;
        at[k] = 0;
      }
    }
  }

  // Views that only rearrange the base's elements (each exactly once, from
  // the same offset) pass the gradient back as a view of it, with no copy:
  // a permutation of the base's dims (t, transpose, permute) becomes the
  // inverse permutation, and a reshape of a contiguous base (view, reshape,
  // flatten, squeeze, unsqueeze) a reshape.
  std::optional<Tensor<T>> rearranged(const Tensor<T>& g) const {
    if (view_offset_ != 0 || numel_of(view_sizes_) != numel_of(base_sizes_)) return std::nullopt;
    const std::size_t n = base_sizes_.size();
    if (view_sizes_.size() == n) {
      Shape inverse(n, -1);
      std::vector<bool> used(n, false);
      bool ok = true;
      for (std::size_t i = 0; i < n && ok; ++i) {
        ok = false;
        for (std::size_t j = 0; j < n; ++j)
          if (!used[j] && base_sizes_[j] == view_sizes_[i] && (base_strides_[j] == view_strides_[i] || base_sizes_[j] == 1)) {
            used[j] = true, inverse[j] = static_cast<int64_t>(i), ok = true;
            break;
          }
      }
      if (ok) return g.permute(inverse);
    }
    const bool base_contiguous = detail::contiguous_strides(base_sizes_) == base_strides_;
    const bool view_contiguous = detail::contiguous_strides(view_sizes_) == view_strides_;
    if (base_contiguous && view_contiguous) return g.reshape(base_sizes_);
    return std::nullopt;
  }
};

// The base's new grad_fn after an in-place write into one of its views
// (PyTorch's CopySlices): the base's gradient goes to the written value
// through the view's geometry, and to the base's old history everywhere
// else (the view's region was overwritten: zero there).
template <class T>
class CopySlices final : public TypedNode<T>, private ViewGeometry {
 public:
  CopySlices(const Tensor<T>& base, const Tensor<T>& view, std::shared_ptr<Node> old_base,
             std::shared_ptr<Node> value)
      : ViewGeometry(base, view) {
    this->next.push_back(std::move(old_base));
    this->next.push_back(std::move(value));
  }
  std::string name() const override { return "CopySlices"; }
  std::vector<GradRef> apply(const GradRef& grad) override {
    const Tensor<T> g(grad);
    GradRef to_value, to_old;
    if (this->next[1]) {
      // The gradient laid out like the base's storage, so the view's strides address it.
      auto buffer = zeros<T>({base_span_});
      buffer.as_strided(base_sizes_, base_strides_, 0).copy_(g);
      to_value = buffer.as_strided(view_sizes_, view_strides_, view_offset_).clone().impl_ptr();
    }
    if (this->next[0]) {
      // g with the view's region zeroed. (A mask rather than zeroing g's
      // copy in place: under create_graph every step is recorded, and the
      // clone above must not see its input written.)
      auto keep = ones<bool>({base_span_});
      keep.as_strided(view_sizes_, view_strides_, view_offset_).fill_(false);
      to_old = tsr::detail::backward_eval<T>(where(keep.as_strided(base_sizes_, base_strides_, 0), g, T(0))).impl_ptr();
    }
    return {to_old, to_value};
  }
};

}  // namespace tsr::autograd

namespace tsr::detail {

// Records view as a view of base when base requires grad. (The node is
// made through the autograd runtime: every program takes views, few of
// them of tensors that require grad.)
template <class T>
void record_view(const Tensor<T>& base, const Tensor<T>& view) {
  if constexpr (is_floating_v<T>) {
    if (!grad_mode_flag() || !requires_grad(base)) return;
    autograd_runtime<T>().record_view(base, view);
  }
}

template <class T>
void record_view_node(const Tensor<T>& base, const Tensor<T>& view) {
  if constexpr (is_floating_v<T>) {
    bool expanded = false;
    for (std::size_t d = 0; d < base.sizes().size(); ++d) expanded |= base.strides()[d] == 0 && base.sizes()[d] > 1;
    if (!expanded) {
      set_history(view, std::make_shared<autograd::ViewNode<T>>(base, view));
      return;
    }
    // Elements of an expanded base share storage, so the view cannot be
    // mapped back to them one by one; it is recorded as a view of the
    // tensor the base views (whose storage is its own), as views are after
    // an in-place write: the dims that read one element many times are
    // summed on the way back, which is the expansion's gradient.
    const auto& root = base.impl_ptr()->view_base;
    check(root != nullptr && requires_grad(Tensor<T>(root)),
          "autograd does not record views of an expanded tensor that requires grad unless the tensor it expands "
          "requires grad; clone() it first");
    set_history(view, std::make_shared<autograd::ViewNode<T>>(Tensor<T>(root), view));
  }
}

// A view whose storage version moved since its autograd state was derived:
// its base may have a new history (an in-place write through this or
// another view), so the view's grad_fn is derived again from the base's.
// (Under no-grad nothing is recorded; the view catches up later.)
template <class T>
void sync_view(const std::shared_ptr<TensorImpl>& view_impl) {
  TensorImpl& impl = *view_impl;
  const uint64_t now = impl.storage->version();
  if (impl.view_version == now || !grad_mode_flag()) return;
  impl.view_version = now;
  if constexpr (is_floating_v<T>) {
    if (impl.autograd && impl.autograd->grad_fn) {
      impl.autograd->grad_fn.reset();
      impl.autograd->requires_grad = false;
    }
    if (!(impl.autograd && impl.autograd->requires_grad)) record_view(Tensor<T>(impl.view_base), Tensor<T>(view_impl));
  }
}

}  // namespace tsr::detail
