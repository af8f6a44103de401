// The backward engine: dependency-counted execution from the roots, with
// PyTorch's rules. Iterative (no recursion), so deep graphs cannot overflow
// the stack.
#pragma once
#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "node.hpp"

namespace tsr::autograd {

// autograd::grad's request: the nodes whose incoming gradient is wanted
// (each input's grad_fn, or a leaf's accumulator), and the gradients found.
// Accumulators do not run then: grad() leaves every .grad untouched.
// With `stop`, the captured nodes are where the run ends: they are neither
// run nor followed, and their hooks do not run (a fused node's recorded
// backward runs the graph of its own ops this way, up to its inputs).
struct Capture {
  std::vector<Node*> nodes;
  std::vector<GradRef> grads;
  bool stop = false;

  bool stops_at(const Node* n) const {
    if (!stop) return false;
    for (const Node* c : nodes)
      if (c == n) return true;
    return false;
  }
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

// What a run keeps per node reached: how many gradients it still waits for
// and the sum of those that arrived. A flat table searched linearly while
// small (the backward of a tiny graph must not build a hash map: it costs
// more than the graph's arithmetic), indexed by a hash map beyond.
class NodeTable {
 public:
  struct Entry {
    Node* node;
    int pending;
    GradRef inbox;
  };
  // The entry of n; fresh says whether it was just added.
  Entry& get(Node* n, bool* fresh = nullptr) {
    std::size_t i = find(n);
    if (fresh) *fresh = i == entries_.size();
    if (i == entries_.size()) {
      entries_.push_back({n, 0, nullptr});
      if (!index_.empty() || entries_.size() > kLinear) {
        if (index_.empty())
          for (std::size_t k = 0; k < entries_.size(); ++k) index_.emplace(entries_[k].node, k);
        else
          index_.emplace(n, i);
      }
    }
    return entries_[i];
  }

 private:
  static constexpr std::size_t kLinear = 16;
  std::size_t find(Node* n) const {
    if (!index_.empty()) {
      auto it = index_.find(n);
      return it == index_.end() ? entries_.size() : it->second;
    }
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].node == n) return i;
    return entries_.size();
  }
  std::vector<Entry> entries_;
  std::unordered_map<Node*, std::size_t> index_;
};

}  // namespace detail_engine

// Runs backward from each root with its gradient. With create_graph, the
// backward pass is itself recorded (grad mode stays on while nodes run), so
// the gradients it produces have a history of their own: second
// derivatives.
inline void run_backward(const std::vector<std::pair<std::shared_ptr<Node>, GradRef>>& roots, bool retain_graph,
                         Capture* capture = nullptr, bool create_graph = false) {
  detail_engine::NodeTable table;
  // autograd::grad returns gradients instead of accumulating them.
  struct DirectGuard {
    bool saved = direct_accumulation_allowed();
    explicit DirectGuard(bool allow) { direct_accumulation_allowed() = allow && saved; }
    ~DirectGuard() { direct_accumulation_allowed() = saved; }
  } direct(capture == nullptr);
  // How many gradient contributions each reachable node waits for.
  std::vector<Node*> stack;
  for (const auto& [root, g] : roots) {
    bool fresh = false;
    table.get(root.get(), &fresh);
    if (fresh) stack.push_back(root.get());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (capture && capture->stops_at(n)) continue;
    for (const auto& next : n->next) {
      if (!next) continue;
      bool fresh = false;
      ++table.get(next.get(), &fresh).pending;
      if (fresh) stack.push_back(next.get());
    }
  }
  // Gradients are summed per node until it runs; nodes run when all arrived.
  std::vector<std::shared_ptr<Node>> ready;
  for (const auto& [root, g] : roots) {
    auto& entry = table.get(root.get());
    entry.inbox = entry.inbox ? root->add(entry.inbox, g) : g;
    if (entry.pending == 0) {
      entry.pending = -1;  // queued once, however often it is a root
      ready.push_back(root);
    }
  }
  // Backward itself is recorded only for create_graph.
  const detail::GradModeGuard grad_mode(create_graph);
  while (!ready.empty()) {
    const std::shared_ptr<Node> node = std::move(ready.back());
    ready.pop_back();
    std::vector<GradRef> out;
    if (capture && capture->stops_at(node.get())) {
      for (std::size_t i = 0; i < capture->nodes.size(); ++i)
        if (capture->nodes[i] == node.get()) capture->grads[i] = std::move(table.get(node.get()).inbox);
      continue;
    }
    if (GradRef g = std::move(table.get(node.get()).inbox)) {
      g = detail_engine::run_hooks(*node, std::move(g));
      bool run = true;
      if (capture) {
        for (std::size_t i = 0; i < capture->nodes.size(); ++i)
          if (capture->nodes[i] == node.get()) capture->grads[i] = g;
        run = node->accumulates_into() == nullptr;
      }
      if (run) {
        const RunningNode running(node);
        out = node->apply(g);
      }
      if (!retain_graph) node->release_saved();
    }
    // Leaves' accumulations are queued last, so they run first (as
    // PyTorch's engine gives AccumulateGrad the highest priority): a .grad
    // is complete, and its post-accumulate hooks run, as soon as possible,
    // not after the rest of the graph below this node.
    const std::size_t first_new = ready.size();
    for (std::size_t i = 0; i < node->next.size(); ++i) {
      const auto& next = node->next[i];
      if (!next) continue;
      auto& entry = table.get(next.get());
      if (i < out.size() && out[i]) entry.inbox = entry.inbox ? next->add(entry.inbox, out[i]) : std::move(out[i]);
      if (--entry.pending == 0) ready.push_back(next);
    }
    // (In place and stable; a node has a handful of inputs. One new ready
    // node, a chain's usual case, has nothing to reorder.)
    if (ready.size() - first_new > 1) {
      auto end = ready.end();
      for (auto it = ready.begin() + std::ptrdiff_t(first_new); it != end;) {
        if ((*it)->accumulates_into()) {
          std::rotate(it, it + 1, ready.end());
          --end;
        } else {
          ++it;
        }
      }
    }
  }
}

}  // namespace tsr::autograd
