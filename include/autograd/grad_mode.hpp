// Grad mode: whether materializing an expression records a graph node.
// Thread-local, as in PyTorch; NoGradGuard turns it off for a scope.
#pragma once

namespace tsr {
namespace detail {
inline bool& grad_mode_flag() {
  thread_local bool enabled = true;
  return enabled;
}
}  // namespace detail

inline bool is_grad_enabled() { return detail::grad_mode_flag(); }

// Disables graph recording on this thread until the guard goes out of scope.
class NoGradGuard {
 public:
  NoGradGuard() : previous_(detail::grad_mode_flag()) { detail::grad_mode_flag() = false; }
  ~NoGradGuard() { detail::grad_mode_flag() = previous_; }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

namespace detail {
// Sets grad mode on this thread for a scope, on or off (PyTorch's
// AutoGradMode): the engine records a backward under create_graph with it.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(grad_mode_flag()) { grad_mode_flag() = enabled; }
  ~GradModeGuard() { grad_mode_flag() = previous_; }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

// compute() with recording off: an op that records its own node must not
// record the steps it is computed with.
template <class F>
auto unrecorded(F&& compute) {
  const NoGradGuard no_grad;
  return compute();
}
}  // namespace detail

}  // namespace tsr
