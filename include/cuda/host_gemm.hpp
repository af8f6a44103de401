// cublasGemmStridedBatchedEx as its documentation defines it (column-major
// operands, op N or T, alpha and beta, beta 0 ignoring C), computed on the
// host: the emulated build's cuBLAS, and the tests' reference for the
// arguments of cuda/gemm_layout.hpp. Half and bfloat16 accumulate in float,
// as cuBLAS's compute type for them.
#pragma once
#include "../dtype.hpp"
#include "gemm_layout.hpp"

namespace tsr::detail::cuda {

template <class T>
void host_gemm_strided_batched(const ColumnMajorGemm<T>& g, T alpha, T beta) {
  using A = acc_t<T>;
  for (int b = 0; b < g.batch; ++b) {
    const T* first = g.first + b * g.stride_first;
    const T* second = g.second + b * g.stride_second;
    T* c = g.c + b * g.stride_c;
    for (int i = 0; i < g.m; ++i)
      for (int j = 0; j < g.n; ++j) {
        A sum = A(0);
        for (int l = 0; l < g.k; ++l) {
          const A x = A(g.op_first == BlasOp::N ? first[i + l * g.ld_first] : first[l + i * g.ld_first]);
          const A y = A(g.op_second == BlasOp::N ? second[l + j * g.ld_second] : second[j + l * g.ld_second]);
          sum += x * y;
        }
        T& out = c[i + j * g.ldc];
        out = beta == T(0) ? T(A(alpha) * sum) : T(A(beta) * A(out) + A(alpha) * sum);
      }
  }
}

}  // namespace tsr::detail::cuda
