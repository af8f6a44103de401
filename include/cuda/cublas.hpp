// Matrix products through cuBLAS: one strided-batched GEMM per product,
// with the arguments of cuda/gemm_layout.hpp (no copies of transposed
// operands), and PyTorch's precision switches (cuda/matmul_flags.hpp).
#pragma once
#include <cublas_v2.h>

#include <type_traits>

#include "../errors.hpp"
#include "../half.hpp"
#include "gemm_layout.hpp"
#include "matmul_flags.hpp"

namespace tsr::detail::cuda {

inline void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) [[unlikely]]
    throw Error(tsr::detail::str("cuBLAS error: ", cublasGetStatusName(status), " (", cublasGetStatusString(status),
                                 ") from ", call));
}

inline cublasOperation_t cublas_op(BlasOp op) { return op == BlasOp::T ? CUBLAS_OP_T : CUBLAS_OP_N; }

// The element type's cuBLAS data type, and the compute type it runs in.
template <class T>
constexpr cudaDataType_t cuda_data_type() {
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  else if constexpr (std::is_same_v<T, double>) return CUDA_R_64F;
  else if constexpr (std::is_same_v<T, half>) return CUDA_R_16F;
  else if constexpr (std::is_same_v<T, bfloat16>) return CUDA_R_16BF;
  else static_assert(!sizeof(T), "cuBLAS products exist for float, double, half and bfloat16");
}

// c = alpha * a b + beta * c for the batch the arguments describe, on the
// handle's stream.
template <class T>
void gemm_strided_batched(cublasHandle_t handle, const ColumnMajorGemm<T>& g, T alpha, T beta) {
  constexpr cudaDataType_t type = cuda_data_type<T>();
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  if constexpr (std::is_same_v<T, double>) {
    compute = CUBLAS_COMPUTE_64F;
  } else if constexpr (std::is_same_v<T, float>) {
    if (tsr::backends::cuda::matmul::allow_tf32.load()) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  } else if (!tsr::backends::cuda::matmul::allow_fp16_reduced_precision_reduction.load()) {
    math = static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  }
  check_cublas(cublasSetMathMode(handle, math), "cublasSetMathMode");
  // The scalars are in the compute type: float for float, half and bfloat16.
  using Scalar = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Scalar a = static_cast<Scalar>(alpha), b = static_cast<Scalar>(beta);
  check_cublas(cublasGemmStridedBatchedEx(handle, cublas_op(g.op_first), cublas_op(g.op_second), g.m, g.n, g.k, &a,
                                          g.first, type, g.ld_first, g.stride_first, g.second, type, g.ld_second,
                                          g.stride_second, &b, g.c, type, g.ldc, g.stride_c, g.batch, compute,
                                          CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx");
}

}  // namespace tsr::detail::cuda
