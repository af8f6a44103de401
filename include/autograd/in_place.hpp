// In-place writes with autograd involved: `y += e`, `y.copy_(e)`,
// `y.masked_fill_(m, v)` on a tensor with history, or writing an expression
// that requires grad into any tensor. The new value is recorded out of
// place. For a tensor that is no view, it becomes the tensor's grad_fn
// (PyTorch's history rebasing). For a view, the view's base gets a
// CopySlices node that routes the gradient of the viewed region to the new
// value and the rest to the base's old history; the view, and every other
// view of the base, derive their grad_fn from the base again on next use
// (the storage version moved). Where the written expression reads the
// destination's storage (y * 2 in `y *= 2`, or an overlapping sibling
// view), it reads recorded copies of the old values instead, since that
// storage is about to be overwritten.
#pragma once
#include "function_node.hpp"
#include "view_node.hpp"

#include <utility>
#include <vector>

namespace tsr::detail {

// A copy of t's value whose gradient passes straight to t's history. (Not
// t.clone(): its fused node keeps t to check its version, and t is about to
// be overwritten, while the identity needs no value at all.)
template <class T>
Tensor<T> copy_of_value(const Tensor<T>& t) {
  Tensor<T> copy = unrecorded([&] { return t.clone(); });
  if (auto edge = gradient_edge(t))
    autograd::set_rule(copy, "CloneBackward0", autograd::IdentityRule<T>{}, {std::move(edge)});
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

// e with every tensor leaf of type T that shares dst's storage replaced by
// a recorded copy of its value (copy_of_value; one per tensor, in `copies`):
// the write is about to overwrite what those leaves read.
template <class E, class T>
E with_overwritten_leaves_copied(const E& e, const Tensor<T>& dst,
                                 std::vector<std::pair<const TensorImpl*, Tensor<T>>>& copies) {
  if constexpr (is_tensor<E>::value) {
    if constexpr (std::is_same_v<E, Tensor<T>>) {
      if (e.storage().get() != dst.storage().get()) return e;
      for (const auto& [impl, copy] : copies)
        if (impl == e.impl_ptr().get()) return copy;
      copies.emplace_back(e.impl_ptr().get(), copy_of_value(e));
      return copies.back().second;
    } else {
      return e;
    }
  } else if constexpr (is_scalar_leaf<E>::value || !requires { e.a; }) {
    return e;  // a leaf, or backward's OneLeaf (written under no-grad only)
  } else {
    // (void): the operands' assignments return references to [[nodiscard]]
    // expression types, which nvcc warns about when they are dropped.
    E copy = e;
    static_cast<void>(copy.a = with_overwritten_leaves_copied(e.a, dst, copies));
    if constexpr (requires { e.b; }) static_cast<void>(copy.b = with_overwritten_leaves_copied(e.b, dst, copies));
    if constexpr (requires { e.c; }) static_cast<void>(copy.c = with_overwritten_leaves_copied(e.c, dst, copies));
    return copy;
  }
}

template <class T, class E>
Tensor<T>& copy_with_history(Tensor<T>& dst, const E& src) {
  if constexpr (is_floating_v<T>) {
    check(!(requires_grad(dst) && dst.is_leaf()),
          "a leaf Variable that requires grad is being used in an in-place operation.");
    check(!dst.impl_ptr()->view_without_grad_mode,
          "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that "
          "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
          "the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
          "tracked) or both outside (if you want the inplace to be tracked).");
    const std::shared_ptr<TensorImpl> base_impl = dst.impl_ptr()->view_base;
    const Tensor<T> base = base_impl ? Tensor<T>(base_impl) : Tensor<T>();
    if (base.defined())
      check(!(requires_grad(base) && base.is_leaf()),
            "a view of a leaf Variable that requires grad is being used in an in-place operation.");
    bool reads_dst = false;
    src.for_each_leaf([&](const auto& leaf) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(leaf)>, Tensor<T>>)
        reads_dst = reads_dst || leaf.storage().get() == dst.storage().get();
    });
    // The new value, recorded, of dst's shape (src may broadcast).
    auto recorded = [](const auto& e) {
      if constexpr (std::is_same_v<typename std::remove_cvref_t<decltype(e)>::value_type, T>) return Tensor<T>(e);
      else return Tensor<T>(cast<T>(e));
    };
    std::vector<std::pair<const TensorImpl*, Tensor<T>>> copies;
    Tensor<T> value = recorded(reads_dst ? with_overwritten_leaves_copied(src, dst, copies) : src);
    if (value.sizes() != dst.sizes()) value = value.expand(dst.sizes());
    // The base's history before the write (a view's is derived from it).
    const std::shared_ptr<autograd::Node> old_base = base.defined() ? gradient_edge(base) : nullptr;
    {
      const NoGradGuard no_grad;
      assign(dst, value);
    }
    dst.storage()->bump_version();
    const std::shared_ptr<autograd::Node> value_edge = gradient_edge(value);
    if (base.defined()) {
      if (old_base || value_edge)
        set_history(base, autograd_runtime<T>().copy_slices(base, dst, old_base, value_edge));
    } else if (value_edge) {
      set_history(dst, value_edge);
    } else if (const auto& meta = dst.impl_ptr()->autograd) {
      // A constant was written over the whole tensor: it no longer depends
      // on anything (PyTorch keeps a node that sends zeros back).
      meta->grad_fn.reset();
      meta->requires_grad = false;
    }
  }
  return dst;
}

}  // namespace tsr::detail
