// The autograd state of a tensor handle. Plain tensors carry none (a null
// pointer in TensorImpl), so code that never asks for gradients pays nothing.
#pragma once
#include <functional>
#include <memory>
#include <vector>

namespace tsr {
struct TensorImpl;
namespace autograd {
class Node;
}

namespace detail {
// A leaf's .grad: a Tensor<T> of the leaf's type (autograd/tensor_autograd.hpp
// defines the typed slot), kept as an object so that mutable_grad() can hand
// out a reference to it.
struct GradSlot {
  virtual ~GradSlot() = default;
};

// A tensor hook, type-erased: takes the gradient, returns a replacement or
// null to keep it.
using GradHook = std::function<std::shared_ptr<TensorImpl>(const std::shared_ptr<TensorImpl>&)>;

struct AutogradMeta {
  bool requires_grad = false;
  // A non-leaf's retain_grad(): its grad_fn keeps its gradient in .grad.
  bool retains_grad = false;
  // The node that computes this tensor's gradient contributions to its
  // inputs: set on results of recorded operations (non-leaves).
  std::shared_ptr<autograd::Node> grad_fn;
  // A leaf's gradient accumulator, alive while some graph uses it.
  std::weak_ptr<autograd::Node> accumulator;
  // A leaf's accumulated gradient (.grad).
  std::unique_ptr<GradSlot> grad;
  // A leaf's hooks, run on its gradient before it is accumulated (a
  // non-leaf's run in its grad_fn, before it applies).
  std::vector<GradHook> hooks;
  // A leaf's post-accumulate-grad hooks, run after each accumulation into
  // .grad, given the leaf (the accumulator holds it).
  std::vector<std::function<void(const std::shared_ptr<TensorImpl>&)>> post_accumulate_hooks;
};
}  // namespace detail
}  // namespace tsr
