// The tour on a CUDA device: tensors created on the device or copied there,
// fused expressions running as one kernel each, full reductions, autograd,
// streams and events, copies through pinned memory that do not wait, and the
// caching allocator's statistics. Build with nvcc:
//
//   nvcc -std=c++20 -O2 -arch=sm_80 -Iinclude examples/cuda_tour.cu -lcublas -o cuda_tour
//
// (or as the emulated build with a host compiler: see docs/cuda.md).
#include <tessera.hpp>

#include <iostream>

int main() {
  using namespace tsr;
  if (!tsr::cuda::is_available()) {
    std::cout << "no CUDA device: nothing to show (tsr::cuda::is_available() is false)\n";
    return 0;
  }
  const Device gpu = tsr::cuda(0);

  // Tensors on the device: made there, or copied from the CPU.
  auto x = arange<float>(0.f, 6.f).reshape({2, 3}).to(gpu);
  auto w = ones<float>({3}, gpu);
  std::cout << "x =\n" << x << "\n";

  // One expression, one kernel: the same fused evaluators as on the CPU.
  Tensor<float> y = x * 2.f + sin(x) - w * 0.5f;
  std::cout << "y = 2x + sin(x) - 0.5 =\n" << y << "\n";

  // Views and in-place writes work on device memory as on the CPU's.
  y.select(1, 0).fill_(100.f);
  y.t().slice(0, 1, 3) += 1.f;
  std::cout << "after writing through views:\n" << y << "\n";

  // Reductions give tensors on the device; item() copies a value back.
  std::cout << "sum(y) = " << sum(y) << ", amax(x) = " << amax(x).item() << "\n";
  std::cout << "row sums of y: " << sum(y, {1}) << "\n";
  const auto [row_max, where_max] = max(y, 1);
  std::cout << "row maxima of y: " << row_max << " at " << where_max << "\n";

  // Matrix products through cuBLAS (row-major by the transpose identity:
  // y.t() is read as it lies, not copied).
  std::cout << "y^T x =\n" << matmul(y.t(), x) << "\n";

  // Autograd: the fused backward runs on the device too.
  auto p = arange<float>(-1.f, 2.f).to(gpu).requires_grad_();
  (p * p * 3.f + exp(p)).sum().backward();
  std::cout << "d/dp sum(3p^2 + e^p) = " << p.grad() << "\n";

  // Streams: work queued on a side stream (one of the device's pool), made
  // to wait for the default stream's work so far; events mark points in it.
  const tsr::cuda::Stream side(0);
  side.wait_stream(tsr::cuda::current_stream(0));
  tsr::cuda::Event start, end;
  {
    const tsr::cuda::StreamGuard guard(side);  // side is this thread's current stream on cuda:0
    start.record();
    Tensor<float> z = tanh(y) * 0.5f + 0.5f;
    end.record();
    std::cout << "on " << side << ": (tanh(y) + 1) / 2 =\n" << z << "\n";
  }
  end.synchronize();
  std::cout << "it took " << start.elapsed_time(end) << " ms\n";

  // Copies that do not wait: from pinned (page-locked) host memory to the
  // device and from the device into a new pinned tensor, queued on the
  // current stream; synchronize before the host reads what came back.
  const Tensor<float> staged = arange<float>(0.f, 4.f).pin_memory();
  const Tensor<float> there = staged.to(gpu, /*non_blocking=*/true);
  const Tensor<float> back = there.to(kCPU, /*non_blocking=*/true);
  tsr::cuda::synchronize();
  std::cout << "through pinned memory and back: " << back << " (pinned: " << std::boolalpha << back.is_pinned()
            << ")\n";

  // Back to the CPU, and the allocator's view of what is held.
  std::cout << "y on the CPU:\n" << y.to(kCPU) << "\n";
  std::cout << "memory allocated: " << tsr::cuda::memory_allocated() << " bytes, reserved "
            << tsr::cuda::memory_reserved() << " bytes\n";
  return 0;
}
