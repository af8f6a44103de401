// The per-element-type part of autograd that only a running backward needs,
// reached through pointers that are set when autograd is switched on.
//
// Whether an expression records a node is decided at run time (does a leaf
// require grad?), so every translation unit that materializes an
// expression compiles its node. If that node called the gradient
// accumulator, the sums over broadcast dims and the engine directly, every
// such translation unit would also compile them, with everything they reach
// (reductions, views and their nodes, in-place writes through views): most
// of a hello world's build, for a program that never asks for a gradient.
// Instead the node calls them through AutogradRuntime<T>, which
// enable_autograd_runtime<T>() fills in. A backward can only run once a
// tensor requires grad, so the places that make one do (requires_grad_,
// and a recorded expression whose result type differs from its inputs')
// call it, and only translation units that contain those compile the
// runtime. Invariant: every tensor that requires grad has the runtime of
// its element type enabled.
#pragma once
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "../tensor.hpp"

namespace tsr::autograd {
class Node;
struct Capture;
using GradRef = std::shared_ptr<TensorImpl>;
}  // namespace tsr::autograd

namespace tsr::detail {

template <class T>
struct AutogradRuntime {
  // The node that accumulates a gradient into the .grad of this leaf.
  std::shared_ptr<autograd::Node> (*accumulator)(const std::shared_ptr<TensorImpl>& leaf);
  // g (of a larger shape) summed over the dims it was broadcast along.
  Tensor<T> (*sum_to)(const Tensor<T>& g, const Shape& shape);
  // a + b for two gradients of one result (recorded under create_graph).
  autograd::GradRef (*add_gradients)(const autograd::GradRef& a, const autograd::GradRef& b);
  // Records view as a view of base, which requires grad.
  void (*record_view)(const Tensor<T>& base, const Tensor<T>& view);
  // The node of an in-place write into a view of base (autograd/in_place.hpp):
  // the viewed region's gradient goes to the written value's history, the
  // rest to base's history before the write.
  std::shared_ptr<autograd::Node> (*copy_slices)(const Tensor<T>& base, const Tensor<T>& view,
                                                 const std::shared_ptr<autograd::Node>& old_base,
                                                 const std::shared_ptr<autograd::Node>& value);
};

template <class T>
inline std::atomic<const AutogradRuntime<T>*> autograd_runtime_of{nullptr};

// The engine (autograd/engine.hpp's run_backward), for a recorded backward
// that runs a backward of its own.
using RunBackward = void (*)(const std::vector<std::pair<std::shared_ptr<autograd::Node>, autograd::GradRef>>&, bool,
                             autograd::Capture*, bool);
inline std::atomic<RunBackward> run_backward_of{nullptr};

[[noreturn, gnu::cold]] inline void fail_runtime_missing() {
  fail<Error>("tessera internal error: a gradient was needed for a tensor whose element type never had autograd "
              "switched on (requires_grad_); please report this");
}

template <class T>
const AutogradRuntime<T>& autograd_runtime() {
  const AutogradRuntime<T>* runtime = autograd_runtime_of<T>.load(std::memory_order_acquire);
  if (!runtime) [[unlikely]]
    fail_runtime_missing();
  return *runtime;
}

inline RunBackward run_backward_fn() {
  const RunBackward run = run_backward_of.load(std::memory_order_acquire);
  if (!run) [[unlikely]]
    fail_runtime_missing();
  return run;
}

// Fills in AutogradRuntime<T> (autograd/tensor_autograd.hpp defines it,
// where everything it points at is visible).
template <class T>
void enable_autograd_runtime();

}  // namespace tsr::detail
