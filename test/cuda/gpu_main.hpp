// doctest's main for the tests that run on a GPU (test/cuda/gpu_*.cu): with
// no CUDA device they report that they skipped, with exit status 77 (what
// Meson counts as a skipped test), so a machine without a GPU still builds
// and links them but does not run them.
#pragma once
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime.h>

#include <cstdio>

// A CUDA runtime call's status, required to be success (the message is CUDA's).
inline void check(cudaError_t status) { REQUIRE_MESSAGE(status == cudaSuccess, cudaGetErrorString(status)); }

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n",
                status != cudaSuccess ? cudaGetErrorString(status) : "cudaGetDeviceCount found none");
    return 77;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
    std::printf("running on %s (sm_%d%d, %.1f GiB)\n", prop.name, prop.major, prop.minor,
                static_cast<double>(prop.totalGlobalMem) / (1 << 30));
  doctest::Context context(argc, argv);
  return context.run();
}
