// The backward engine: dependency-counted execution from the roots, with
// PyTorch's rules. Iterative (no recursion), so deep graphs cannot overflow
// the stack.
#pragma once
#include <unordered_map>
#include <utility>
#include <vector>

#include "node.hpp"

namespace tsr::autograd {

// autograd::grad's request: the nodes whose incoming gradient is wanted
// (each input's grad_fn, or a leaf's accumulator), and the gradients found.
// Accumulators do not run then: grad() leaves every .grad untouched.
struct Capture {
  std::vector<Node*> nodes;
  std::vector<GradRef> grads;
};

namespace detail_engine {
// The node's hooks (and, for an accumulator, its leaf's) on gradient g.
inline GradRef run_hooks(const Node& node, GradRef g) {
  auto apply = [&](const std::vector<tsr::detail::GradHook>& hooks) {
    for (const auto& hook : hooks)
      if (GradRef replaced = hook(g)) g = std::move(replaced);
  };
  apply(node.pre_hooks);
  if (const TensorImpl* leaf = node.accumulates_into(); leaf && leaf->autograd) apply(leaf->autograd->hooks);
  return g;
}
}  // namespace detail_engine

// Runs backward from each root with its gradient.
inline void run_backward(const std::vector<std::pair<std::shared_ptr<Node>, GradRef>>& roots, bool retain_graph,
                         Capture* capture = nullptr) {
  // How many gradient contributions each reachable node waits for.
  std::unordered_map<Node*, int> pending;
  std::vector<Node*> stack;
  for (const auto& [root, g] : roots)
    if (pending.try_emplace(root.get(), 0).second) stack.push_back(root.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const auto& next : n->next) {
      if (!next) continue;
      auto [it, fresh] = pending.try_emplace(next.get(), 0);
      ++it->second;
      if (fresh) stack.push_back(next.get());
    }
  }
  // Gradients summed per node until it runs; nodes run when all arrived.
  std::unordered_map<Node*, GradRef> inbox;
  std::vector<std::shared_ptr<Node>> ready;
  for (const auto& [root, g] : roots) {
    GradRef& slot = inbox[root.get()];
    slot = slot ? root->add(slot, g) : g;
    if (pending[root.get()] == 0) {
      pending[root.get()] = -1;  // queued once, however often it is a root
      ready.push_back(root);
    }
  }
  NoGradGuard no_grad;  // backward itself is not recorded
  while (!ready.empty()) {
    const std::shared_ptr<Node> node = std::move(ready.back());
    ready.pop_back();
    auto found = inbox.find(node.get());
    std::vector<GradRef> out;
    if (found != inbox.end() && found->second) {
      GradRef g = detail_engine::run_hooks(*node, std::move(found->second));
      inbox.erase(found);
      bool run = true;
      if (capture) {
        for (std::size_t i = 0; i < capture->nodes.size(); ++i)
          if (capture->nodes[i] == node.get()) capture->grads[i] = g;
        run = node->accumulates_into() == nullptr;
      }
      if (run) out = node->apply(g);
      if (!retain_graph) node->release_saved();
    }
    for (std::size_t i = 0; i < node->next.size(); ++i) {
      const auto& next = node->next[i];
      if (!next) continue;
      if (i < out.size() && out[i]) {
        GradRef& slot = inbox[next.get()];
        slot = slot ? next->add(slot, out[i]) : std::move(out[i]);
      }
      if (--pending[next.get()] == 0) ready.push_back(next);
    }
  }
}

}  // namespace tsr::autograd
