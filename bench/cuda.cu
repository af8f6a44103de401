// Device benchmarks: what a kernel of tessera's reaches on a GPU, against
// the GPU's own limits measured in the same run.
//
//   memory-bound: a fused elementwise chain and reductions, in GB/s, against
//                 a device-to-device copy of the same bytes (the bandwidth
//                 limit; target 0.85 of it)
//   copies:       to(device) and back, 256 MiB, from pageable memory (waited
//                 for) and from pinned memory (non_blocking), in GB/s
//   matrix products: cuBLAS's SGEMM and HGEMM (cublasGemmEx) in TFLOP/s
//                 against the GPU's peak where known, and tsr::mm of float
//                 and half on the device against the same cuBLAS call
//                 (tessera's overhead)
//   training:     one step of the MLP 784-256-10 (batch 64, SGD with
//                 momentum) on the device
//
// Built by `scripts/bench.sh cuda` (nvcc, sm_80 and sm_90), or by hand:
//
//   nvcc -std=c++20 -O2 -gencode arch=compute_90,code=sm_90 -diag-suppress 1675 \
//        -Iinclude bench/cuda.cu -lcublas -o bench_cuda && ./bench_cuda
//
// With no GPU it says so and exits 0. Times are medians of events recorded
// on the current stream around each repetition.
#include <tessera.hpp>
#include <nn/nn.hpp>
#include <optim/optim.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using tsr::Tensor;

// Median milliseconds of `reps` runs of f (after two warm-up runs), timed
// by events on this thread's current stream of cuda:0.
double median_ms(int reps, const std::function<void()>& f) {
  f();
  f();
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    tsr::cuda::Event start, end;
    start.record();
    f();
    end.record();
    end.synchronize();
    ms.push_back(start.elapsed_time(end));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The GPU's dense peak in TFLOP/s for float (no tensor cores) and half
// (tensor cores), for the GPUs whose figures we know (NVIDIA's data sheets,
// SXM parts); 0 otherwise.
struct Peak {
  double fp32, fp16;
};
Peak peak_of(const std::string& name) {
  if (name.find("H200") != std::string::npos || name.find("H100") != std::string::npos) return {67.0, 989.4};
  if (name.find("A100") != std::string::npos) return {19.5, 312.0};
  return {0, 0};
}

void report(const char* what, double ms, double bytes, double limit_gbs) {
  const double gbs = bytes / (ms * 1e-3) / 1e9;
  std::printf("  %-44s %9.3f ms %8.1f GB/s   %.2f of the copy\n", what, ms, gbs, gbs / limit_gbs);
}

void memory_bound(int64_t n) {
  std::printf("memory-bound, %lld floats (%.0f MiB each):\n", static_cast<long long>(n), n * 4.0 / (1 << 20));
  const tsr::Device gpu = tsr::cuda(0);
  const Tensor<float> a = tsr::rand<float>({n}).to(gpu), b = tsr::rand<float>({n}).to(gpu);
  Tensor<float> out = tsr::empty<float>({n}, gpu);
  const double bytes = 4.0 * static_cast<double>(n);
  // The limit: a device-to-device copy reads and writes every byte once.
  const double copy_ms = median_ms(20, [&] {
    tsr::detail::cuda::check_cuda(cudaMemcpyAsync(out.device_data_ptr(), a.device_data_ptr(), static_cast<std::size_t>(bytes),
                                                  cudaMemcpyDeviceToDevice,
                                                  reinterpret_cast<cudaStream_t>(tsr::cuda::current_stream(0).id())),
                                  "cudaMemcpyAsync");
  });
  const double limit = 2 * bytes / (copy_ms * 1e-3) / 1e9;
  std::printf("  %-44s %9.3f ms %8.1f GB/s\n", "device-to-device copy (the limit)", copy_ms, limit);
  report("out.copy_(a * 2 + b)", median_ms(20, [&] { out.copy_(a * 2.f + b); }), 3 * bytes, limit);
  report("out.copy_(sin(a) * exp(-b) + a * b)", median_ms(20, [&] { out.copy_(sin(a) * exp(-b) + a * b); }), 3 * bytes,
         limit);
  report("sum(a)", median_ms(20, [&] { (void)tsr::sum(a); }), bytes, limit);
  report("sum(a * b)", median_ms(20, [&] { (void)tsr::sum(a * b); }), 2 * bytes, limit);
  const Tensor<float> m = a.view({4096, n / 4096});
  report("sum(m, 1), m 4096 rows", median_ms(20, [&] { (void)tsr::sum(m, {1}); }), bytes, limit);
  report("sum(m, 0), m 4096 rows", median_ms(20, [&] { (void)tsr::sum(m, {0}); }), bytes, limit);
}

// Copies of 256 MiB between the host and cuda:0: from and into ordinary
// (pageable) memory, which the driver stages and the call waits for, and
// from and into pinned memory, queued (non_blocking) and timed to the end
// of the copy on the stream.
void copies() {
  const int64_t n = int64_t(1) << 26;
  const double bytes = 4.0 * static_cast<double>(n);
  const tsr::Device gpu = tsr::cuda(0);
  const Tensor<float> pageable = tsr::rand<float>({n});
  const Tensor<float> pinned = pageable.pin_memory();
  const Tensor<float> on_device = pageable.to(gpu);
  Tensor<float> sink;
  const auto gbs = [&](double ms) { return bytes / (ms * 1e-3) / 1e9; };
  std::printf("copies, %.0f MiB:\n", bytes / (1 << 20));
  const double h2d = median_ms(10, [&] { sink = pageable.to(gpu); });
  const double h2d_pinned = median_ms(10, [&] { sink = pinned.to(gpu, true); });
  std::printf("  %-44s %9.3f ms %8.1f GB/s\n", "host to device, pageable", h2d, gbs(h2d));
  std::printf("  %-44s %9.3f ms %8.1f GB/s   %.2fx\n", "host to device, pinned, non_blocking", h2d_pinned,
              gbs(h2d_pinned), h2d / h2d_pinned);
  const double d2h = median_ms(10, [&] { sink = on_device.to(tsr::kCPU); });
  const double d2h_pinned = median_ms(10, [&] { sink = on_device.to(tsr::kCPU, true); });
  std::printf("  %-44s %9.3f ms %8.1f GB/s\n", "device to host, pageable", d2h, gbs(d2h));
  std::printf("  %-44s %9.3f ms %8.1f GB/s   %.2fx\n", "device to host, pinned, non_blocking", d2h_pinned,
              gbs(d2h_pinned), d2h / d2h_pinned);
}

// An n x n product of T on the device: by tsr::mm and by one cublasGemmEx call on the same buffers (c^T = b^T a^T
// in column-major: no transposes; float accumulation), which is the
// reference for tessera's overhead; both against the GPU's peak.
template <class T>
void products(int64_t n, double peak) {
  const tsr::Device gpu = tsr::cuda(0);
  const Tensor<T> a = Tensor<T>(tsr::cast<T>(tsr::rand<float>({n, n}))).to(gpu);
  const Tensor<T> b = Tensor<T>(tsr::cast<T>(tsr::rand<float>({n, n}))).to(gpu);
  Tensor<T> c = tsr::empty<T>({n, n}, gpu);
  const double flop = 2.0 * static_cast<double>(n) * n * n;
  cublasHandle_t handle = nullptr;
  tsr::detail::cuda::check_cublas(cublasCreate(&handle), "cublasCreate");
  tsr::detail::cuda::check_cublas(cublasSetStream(handle, reinterpret_cast<cudaStream_t>(tsr::cuda::current_stream(0).id())), "cublasSetStream");
  const float one = 1.f, zero = 0.f;
  const cudaDataType type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_16F;
  const double direct = median_ms(10, [&] {
    tsr::detail::cuda::check_cublas(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, b.device_data_ptr(), type, int(n),
                       a.device_data_ptr(), type, int(n), &zero, c.device_data_ptr(), type, int(n), CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  });
  cublasDestroy(handle);
  const double tf_direct = flop / (direct * 1e-3) / 1e12;
  std::printf("  %-14s n = %-5lld cublasGemmEx %8.3f ms %7.1f TFLOP/s", tsr::detail::dtype_name<T>(),
              static_cast<long long>(n), direct, tf_direct);
  if (peak > 0) std::printf(" (%.2f of the peak %.0f)", tf_direct / peak, peak);
  const double ms = median_ms(10, [&] { c = tsr::mm(a, b); });
  const double tf = flop / (ms * 1e-3) / 1e12;
  std::printf("   tsr::mm %8.3f ms %7.1f TFLOP/s (%.2f of cublasGemmEx)\n", ms, tf, tf / tf_direct);
}

void training_step() {
  using namespace tsr;
  const Device gpu = tsr::cuda(0);
  manual_seed(0);
  nn::Sequential model(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10));
  model->to(gpu);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  const Tensor<float> x = rand<float>({64, 784}).to(gpu);
  const Tensor<int64_t> y = Tensor<int64_t>(remainder(arange<int64_t>(0, 64) * 7, int64_t(10))).to(gpu);
  const double ms = median_ms(50, [&] {
    opt.zero_grad();
    nn::functional::cross_entropy(model->forward(x), y).backward();
    opt.step();
  });
  std::printf("training: MLP 784-256-10, batch 64, SGD momentum: %.3f ms per step (libtorch with CUDA: not built "
              "against here)\n", ms);
}

}  // namespace

int main() {
  if (!tsr::cuda::is_available()) {
    std::printf("no CUDA device: nothing to measure (tsr::cuda::is_available() is false)\n");
    return 0;
  }
  cudaDeviceProp prop{};
  tsr::detail::cuda::check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("%s (sm_%d%d, %d SMs, %.1f GiB), CUDA runtime %d\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, static_cast<double>(prop.totalGlobalMem) / (1 << 30), CUDART_VERSION);
  memory_bound(int64_t(1) << 26);
  copies();
  const Peak peak = peak_of(prop.name);
  std::printf("matrix products (allow_tf32 off, as PyTorch's default):\n");
  for (const int64_t n : {1024, 4096, 8192}) products<float>(n, peak.fp32);
  for (const int64_t n : {1024, 4096, 8192}) products<tsr::half>(n, peak.fp16);
  training_step();
}
