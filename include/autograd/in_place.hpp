// In-place writes into tensors with autograd history: `y += e`, `y.copy_(e)`,
// `y.masked_fill_(m, v)` on a result y, or writing an expression that
// requires grad into a tensor. The new value is recorded out of place and y
// takes its node as grad_fn (PyTorch's history rebasing); where the written
// expression reads y itself (y * 2 in `y *= 2`), it reads a recorded copy of
// y's old value instead, since y's storage is about to be overwritten.
//
// Views are not rebased yet: a write into a view of a tensor with history,
// or into a tensor that has views, needs PyTorch's CopySlices (the base's
// history changes) and is refused with a clear error.
#pragma once
#include "function_node.hpp"
#include "view_node.hpp"

namespace tsr::detail {

// e with every tensor leaf that is `from` (the same handle) replaced by `to`.
template <class E, class T>
E replace_leaf(const E& e, const Tensor<T>& from, const Tensor<T>& to) {
  if constexpr (is_tensor<E>::value) {
    if constexpr (std::is_same_v<E, Tensor<T>>) return e.impl_ptr() == from.impl_ptr() ? to : e;
    else return e;
  } else if constexpr (is_scalar_leaf<E>::value || !requires { e.a; }) {
    return e;  // a leaf, or backward's OneLeaf (written under no-grad only)
  } else {
    E copy = e;
    copy.a = replace_leaf(e.a, from, to);
    if constexpr (requires { e.b; }) copy.b = replace_leaf(e.b, from, to);
    if constexpr (requires { e.c; }) copy.c = replace_leaf(e.c, from, to);
    return copy;
  }
}

// A copy of t's value whose gradient passes straight to t's history. (Not
// t.clone(): its fused node keeps t to check its version, and t is about to
// be overwritten, while the identity needs no value at all.)
template <class T>
Tensor<T> copy_of_value(const Tensor<T>& t) {
  struct Identity {
    std::vector<autograd::GradRef> backward(const Tensor<T>& g) const { return {g.impl_ptr()}; }
  };
  Tensor<T> copy = unrecorded([&] { return t.clone(); });
  if (auto edge = gradient_edge(t)) autograd::set_rule(copy, "CloneBackward0", Identity{}, {std::move(edge)});
  return copy;
}

template <class T, class E>
bool in_place_records(const Tensor<T>& dst, const E& src) {
  if constexpr (!is_floating_v<T>) {
    return false;
  } else {
    if (!grad_mode_flag()) return false;
    return requires_grad(dst) || records(src);
  }
}

template <class T, class E>
Tensor<T>& copy_with_history(Tensor<T>& dst, const E& src) {
  if constexpr (is_floating_v<T>) {
    check(!(requires_grad(dst) && dst.is_leaf()),
          "a leaf Variable that requires grad is being used in an in-place operation.");
    const auto& meta = dst.impl_ptr()->autograd;
    const bool is_view = meta && dynamic_cast<autograd::ViewNode<T>*>(meta->grad_fn.get());
    if (is_view || dst.storage().use_count() > 1)
      fail<Error>("autograd does not record in-place writes into a view, or into a tensor that has views, yet "
                  "(PyTorch rebases the base's history here); compute it out of place");
    bool reads_dst = false;
    src.for_each_leaf([&](const auto& leaf) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(leaf)>, Tensor<T>>)
        reads_dst = reads_dst || leaf.impl_ptr() == dst.impl_ptr();
    });
    // The new value, recorded, of dst's shape (src may broadcast).
    auto recorded = [](const auto& e) {
      if constexpr (std::is_same_v<typename std::remove_cvref_t<decltype(e)>::value_type, T>) return Tensor<T>(e);
      else return Tensor<T>(cast<T>(e));
    };
    Tensor<T> value = recorded(reads_dst ? replace_leaf(src, dst, copy_of_value(dst)) : src);
    if (value.sizes() != dst.sizes()) value = value.expand(dst.sizes());
    {
      const NoGradGuard no_grad;
      assign(dst, value);
    }
    dst.storage()->bump_version();
    if (value.requires_grad()) {
      set_history(dst, value.impl_ptr()->autograd->grad_fn);
    } else if (meta) {
      // A constant was written over the whole tensor: it no longer depends
      // on anything (PyTorch keeps a node that sends zeros back).
      meta->grad_fn.reset();
      meta->requires_grad = false;
    }
  }
  return dst;
}

}  // namespace tsr::detail
