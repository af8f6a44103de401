// The handle of a collective or point-to-point operation (PyTorch's Work):
// what async_op=true returns, and what every blocking call waits on.
#pragma once
#include <chrono>

namespace tsr::distributed {

class Work {
 public:
  virtual ~Work() = default;
  // Whether the operation has finished (never blocks). Its results are in
  // the tensors once this is true and wait() has been called or returns.
  virtual bool is_completed() = 0;
  // Blocks until the operation has finished and its results are in the
  // tensors; throws tsr::Error when it takes longer than the process
  // group's timeout (then the group cannot be used any more).
  virtual void wait() = 0;
};

}  // namespace tsr::distributed
