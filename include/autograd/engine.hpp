// The backward engine: dependency-counted execution from the root, with
// PyTorch's rules. Iterative (no recursion), so deep graphs cannot overflow
// the stack.
#pragma once
#include <unordered_map>
#include <vector>

#include "node.hpp"

namespace tsr::autograd {

// Runs backward from `root` with `grad` as the gradient of its result.
inline void run_backward(const std::shared_ptr<Node>& root, GradRef grad, bool retain_graph) {
  // How many gradient contributions each reachable node waits for.
  std::unordered_map<Node*, int> pending;
  std::vector<Node*> stack{root.get()};
  pending[root.get()] = 0;
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
  inbox[root.get()] = std::move(grad);
  std::vector<std::shared_ptr<Node>> ready{root};
  NoGradGuard no_grad;  // backward itself is not recorded
  while (!ready.empty()) {
    const std::shared_ptr<Node> node = std::move(ready.back());
    ready.pop_back();
    auto found = inbox.find(node.get());
    std::vector<GradRef> out;
    if (found != inbox.end() && found->second) {
      const GradRef g = std::move(found->second);
      inbox.erase(found);
      out = node->apply(g);
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
