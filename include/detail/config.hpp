// Build-wide constants and the one host/device annotation macro.
#pragma once
#include <cstdint>

// Every scalar form that may run inside a CUDA kernel carries this macro;
// under nvcc it expands to __host__ __device__, elsewhere to nothing.
#if defined(__CUDACC__)
#define TSR_HOST_DEVICE __host__ __device__
#else
#define TSR_HOST_DEVICE
#endif

// Unrolls the loop that follows in device code. A loop over an evaluator's
// dims, bounded by kMaxEvalDims and unrolled, names every array element at
// compile time, so the arrays stay in registers and the kernel's parameters:
// indexed at run time, they are copied to the thread's local memory.
#if defined(__CUDA_ARCH__)
#define TSR_DEVICE_UNROLL _Pragma("unroll")
#else
#define TSR_DEVICE_UNROLL
#endif

namespace tsr::detail {
// Evaluators hold fixed arrays so that they stay trivially copyable; this is
// the largest rank an expression may have after size-1 dimensions are dropped
// and contiguous dimensions are merged.
inline constexpr int kMaxEvalDims = 16;
}  // namespace tsr::detail

// The CUDA backend is compiled into a translation unit compiled by nvcc, or
// by the host compiler with TSR_CUDA_EMULATED (the emulated build: Thrust's
// CPP device system runs the device code path on the CPU, device memory is
// host memory). Elsewhere device tensors can be created and copied (when
// some translation unit of the program has the backend) but not computed on.
#if defined(__CUDACC__) || defined(TSR_CUDA_EMULATED)
#define TSR_CUDA_BACKEND 1
#else
#define TSR_CUDA_BACKEND 0
#endif

namespace tsr::detail {
inline constexpr bool kCudaBackend = TSR_CUDA_BACKEND;
}  // namespace tsr::detail

// TSR_PER_OP_AUTOGRAD: an expression that autograd records is evaluated and
// recorded one op at a time (as a create_graph backward's expressions are),
// instead of as one node whose backward is compiled for that expression.
// Far less to compile per differentiated expression; run time more like an
// eager framework's (each op a pass over memory, a scalar loop, on one
// thread). For edit-compile loops; define it in every translation unit of a
// program, the precompiled core's included (docs/design.md, "Compile cost").
namespace tsr::detail {
#if defined(TSR_PER_OP_AUTOGRAD)
inline constexpr bool kFusedAutograd = false;
#else
inline constexpr bool kFusedAutograd = true;
#endif
}  // namespace tsr::detail
