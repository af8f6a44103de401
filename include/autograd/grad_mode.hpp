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
// compute() with recording off: an op that records its own node must not
// record the steps it is computed with.
template <class F>
auto unrecorded(F&& compute) {
  const NoGradGuard no_grad;
  return compute();
}
}  // namespace detail

}  // namespace tsr
