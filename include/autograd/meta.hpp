// The autograd state of a tensor handle. Plain tensors carry none (a null
// pointer in TensorImpl), so code that never asks for gradients pays nothing.
#pragma once
#include <memory>

namespace tsr {
struct TensorImpl;
namespace autograd {
class Node;
}

namespace detail {
struct AutogradMeta {
  bool requires_grad = false;
  // The node that computes this tensor's gradient contributions to its
  // inputs: set on results of recorded operations (non-leaves).
  std::shared_ptr<autograd::Node> grad_fn;
  // A leaf's gradient accumulator, alive while some graph uses it.
  std::weak_ptr<autograd::Node> accumulator;
  // A leaf's accumulated gradient (.grad).
  std::shared_ptr<TensorImpl> grad;
};
}  // namespace detail
}  // namespace tsr
