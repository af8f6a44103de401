// Graph nodes. A node belongs to one result tensor and computes, from the
// gradient of that result, the gradient contributions to each of its inputs
// (`next`: the node that produced each input, or that accumulates a leaf's
// .grad; null where an input needs no gradient).
//
// Gradients travel between nodes as TensorImpl handles: the element type of
// each is fixed by the tensor it belongs to, so both ends know it statically
// (TypedNode<T> is the node of a Tensor<T> result).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "../tensor.hpp"
#include "grad_mode.hpp"
#include "runtime.hpp"

namespace tsr::autograd {

class Node {
 public:
  // Destroying the last handle of a long chain (100k nodes) would recurse
  // once per node and overflow the stack: nodes this one alone keeps alive
  // are queued and destroyed by a loop in the outermost destructor instead.
  // (A derived node's saved tensors are gone by now: derived members die
  // before this body runs, so `next` holds the last references.)
  virtual ~Node();
  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  virtual std::string name() const = 0;
  // The gradient for each entry of `next` (null: no contribution) given the
  // gradient of this node's result.
  virtual std::vector<GradRef> apply(const GradRef& grad) = 0;
  // a + b for two gradients of this node's result (several consumers).
  virtual GradRef add(const GradRef& a, const GradRef& b) const = 0;
  // Frees what was saved for backward; apply() afterwards is PyTorch's
  // "backward through the graph a second time" error.
  virtual void release_saved() {}
  // The gradient of the leaf this node accumulates into, for
  // AccumulateGrad; null for every other node.
  virtual const TensorImpl* accumulates_into() const { return nullptr; }

  std::vector<std::shared_ptr<Node>> next;
  // Hooks registered on this node's result (Tensor::register_hook), run on
  // its gradient before apply().
  std::vector<detail::GradHook> pre_hooks;
  // Which of pre_hooks is its result's retain_grad() hook (-1: none), so
  // that an in-place write, which gives the result a new node, moves it.
  int retains_grad_hook = -1;

 private:
  // The per-thread queue of nodes waiting to be destroyed. Nodes may die
  // during thread exit (a static tensor with a graph) after the queue did;
  // get() then returns null.
  struct DestroyQueue {
    std::vector<std::shared_ptr<Node>> items;
    bool draining = false;
    DestroyQueue() { state() = 1; }
    ~DestroyQueue() { state() = 2; }
    static int& state() {  // 0: not made yet, 1: alive, 2: destroyed
      thread_local int s = 0;
      return s;
    }
    static DestroyQueue* get() {
      if (state() == 2) return nullptr;
      thread_local DestroyQueue q;
      return &q;
    }
  };
};

#if TSR_CORE_DEFINITIONS
TSR_CORE_INLINE Node::~Node() {
  DestroyQueue* q = DestroyQueue::get();
  if (!q) return;  // this thread's queue is gone (thread exit): plain destruction
  for (auto& n : next)
    if (n && n.use_count() == 1) q->items.push_back(std::move(n));
  if (q->draining) return;
  q->draining = true;
  while (!q->items.empty()) {
    std::shared_ptr<Node> n = std::move(q->items.back());
    q->items.pop_back();
    n.reset();  // its destructor queues its own inputs
  }
  q->draining = false;
}
#endif

}  // namespace tsr::autograd

namespace tsr::autograd {
// The node whose apply() runs on this thread (set by the engine): a saved
// output of that node, read while the backward is recorded (create_graph),
// gets it back as its grad_fn (SavedTensor in function_node.hpp).
class RunningNode {
 public:
  explicit RunningNode(const std::shared_ptr<Node>& node) : previous_(current()) { current() = &node; }
  ~RunningNode() { current() = previous_; }
  RunningNode(const RunningNode&) = delete;
  RunningNode& operator=(const RunningNode&) = delete;
  static const std::shared_ptr<Node>*& current() {
    thread_local const std::shared_ptr<Node>* node = nullptr;
    return node;
  }

 private:
  const std::shared_ptr<Node>* previous_;
};
}  // namespace tsr::autograd

namespace tsr::detail {
// An expression a backward computes (autograd/fused.hpp): fused and
// unrecorded, or recorded op by op under create_graph.
template <class T, class E>
Tensor<T> backward_eval(const E& e);
}  // namespace tsr::detail

namespace tsr::autograd {

template <class T>
class TypedNode : public Node {
 public:
  GradRef add(const GradRef& a, const GradRef& b) const override {
    return detail::autograd_runtime<T>().add_gradients(a, b);
  }
};

inline void fail_released() {
  detail::fail<Error>("Trying to backward through the graph a second time (or directly access saved tensors after they "
                      "have already been freed). Saved intermediate values of the graph are freed when you call "
                      ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                      "graph a second time or if you need to access saved tensors after calling backward.");
}

}  // namespace tsr::autograd

namespace tsr::detail {
template <class T>
struct TypedGradSlot final : GradSlot {
  Tensor<T> grad;
};
// The .grad of a tensor whose autograd state exists, made on first use.
template <class T>
Tensor<T>& grad_slot(AutogradMeta& meta) {
  if (!meta.grad) meta.grad = std::make_unique<TypedGradSlot<T>>();
  return static_cast<TypedGradSlot<T>&>(*meta.grad).grad;
}
}  // namespace tsr::detail

namespace tsr::autograd {

// Adds incoming gradients into a leaf's .grad.
template <class T>
class AccumulateGrad final : public TypedNode<T> {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf) : leaf_(std::move(leaf)) {}
  std::string name() const override { return "AccumulateGrad"; }
  const TensorImpl* accumulates_into() const override { return leaf_.get(); }
  std::vector<GradRef> apply(const GradRef& grad) override {
    // Only the engine holds a gradient it computed (count taken before g).
    const bool sole = grad.use_count() == 1;
    Tensor<T>& slot = detail::grad_slot<T>(*leaf_->autograd);
    const Tensor<T> g(grad);
    if (detail::grad_mode_flag()) {
      // A recorded backward (create_graph): .grad keeps the gradient's
      // history, so it is never written in place (PyTorch's rule).
      slot = slot.defined() ? detail::backward_eval<T>(slot + g) : g.clone();
    } else if (!slot.defined()) {
      // The first gradient becomes .grad; a buffer someone else still holds
      // (the caller's gradient, a pass-through, a view of a larger
      // gradient) or a broadcast view is copied first.
      const bool owned = sole && g.storage().use_count() == 1 && g.is_contiguous();
      slot = owned ? g : detail::materialize<T>(g);
    } else {
      slot += g;
    }
    // Copied: a hook may register another (it runs from the next backward).
    const auto hooks = leaf_->autograd->post_accumulate_hooks;
    for (const auto& hook : hooks) hook(leaf_);
    return {};
  }

 private:
  std::shared_ptr<TensorImpl> leaf_;
};

// Whether this thread's backward may add gradients straight into .grad
// (off while autograd::grad captures them instead).
inline bool& direct_accumulation_allowed() {
  thread_local bool allowed = true;
  return allowed;
}

// The .grad a gradient of `shape` for `edge` can be added into directly,
// skipping its materialization: edge accumulates into a leaf whose .grad
// exists, is dense and has that shape, and the leaf has no hooks (they
// must see the gradient, or run after its accumulation), and the backward is not recorded. Null otherwise.
template <class T>
Tensor<T>* direct_grad_slot(const std::shared_ptr<Node>& edge, const Shape& shape) {
  if (!edge || !direct_accumulation_allowed() || detail::grad_mode_flag()) return nullptr;
  const TensorImpl* leaf = edge->accumulates_into();
  if (!leaf || !leaf->autograd || !leaf->autograd->hooks.empty() || !edge->pre_hooks.empty() ||
      !leaf->autograd->post_accumulate_hooks.empty())
    return nullptr;
  auto* slot = dynamic_cast<detail::TypedGradSlot<T>*>(leaf->autograd->grad.get());
  if (!slot || !slot->grad.defined() || !slot->grad.is_contiguous() || slot->grad.sizes() != shape) return nullptr;
  return &slot->grad;
}

}  // namespace tsr::autograd

namespace tsr::detail {

// A view whose storage version may have moved: its autograd state is
// brought up to date first (TensorImpl::sync_view), then read.
[[gnu::noinline]] inline bool view_requires_grad(const std::shared_ptr<TensorImpl>& impl) {
  impl->sync_view(impl);
  return impl->autograd && impl->autograd->requires_grad;
}

// Always inlined: every evaluation asks this of every leaf, and nearly
// every answer is "no autograd state at all" (GCC kept it out of line,
// a call per leaf on every in-place write).
template <class T>
[[gnu::always_inline]] inline bool requires_grad(const Tensor<T>& t) {
  const TensorImpl* impl = t.impl_ptr().get();
  if (!impl) return false;
  if (impl->view_base) [[unlikely]]
    return view_requires_grad(t.impl_ptr());
  return impl->autograd && impl->autograd->requires_grad;
}

// The node that receives a gradient for input t: its grad_fn, or (for a
// leaf) its accumulator; null when t needs no gradient.
template <class T>
std::shared_ptr<autograd::Node> gradient_edge(const Tensor<T>& t) {
  if (!requires_grad(t)) return nullptr;
  AutogradMeta& meta = *t.impl_ptr()->autograd;
  if (meta.grad_fn) return meta.grad_fn;
  if (auto acc = meta.accumulator.lock()) return acc;
  auto acc = autograd_runtime<T>().accumulator(t.impl_ptr());
  meta.accumulator = acc;
  return acc;
}

// Makes `out` the result of `node`: a non-leaf that requires grad.
template <class T>
void set_history(const Tensor<T>& out, std::shared_ptr<autograd::Node> node) {
  auto& impl = *out.impl_ptr();
  if (!impl.autograd) impl.autograd = std::make_unique<AutogradMeta>();
  impl.autograd->requires_grad = true;
  // A new history for a tensor that retains its gradient (an in-place
  // write): the hook that keeps it goes to the new node, as in PyTorch.
  if (const auto& old = impl.autograd->grad_fn; impl.autograd->retains_grad && old && old != node &&
                                                  old->retains_grad_hook >= 0) {
    auto at = old->pre_hooks.begin() + old->retains_grad_hook;
    node->retains_grad_hook = static_cast<int>(node->pre_hooks.size());
    node->pre_hooks.push_back(std::move(*at));
    old->pre_hooks.erase(at);
    old->retains_grad_hook = -1;
  }
  impl.autograd->grad_fn = std::move(node);
}


}  // namespace tsr::detail
