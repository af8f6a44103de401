// Compiled by nvcc (test/meson.build, when nvcc is installed): every scalar
// form of tsr::special called from a CUDA kernel, so a host-only call, a
// global table or an exception in them fails the build. Not executed here.
#include "detail/special_bessel.hpp"
#include "detail/special_erf.hpp"
#include "detail/special_gamma.hpp"

namespace sp = tsr::detail::special;

__global__ void every_special_function(const double* x, double* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double v = x[i];
  y[i] = sp::erfcx(v) + sp::erfinv(v) + sp::ndtr(v) + sp::log_ndtr(v) + sp::ndtri(v) + sp::digamma(v) +
         sp::trigamma(v) + sp::polygamma(3, v) + sp::zeta(v, 2.0) + sp::gammainc(v, 1.5) + sp::gammaincc(v, 1.5) +
         sp::multigammaln(v, 3) + sp::i0(v) + sp::i0e(v) + sp::i1(v) + sp::i1e(v) + sp::bessel_j0(v) +
         sp::bessel_j1(v) + sp::scaled_modified_bessel_k0(v) + sp::scaled_modified_bessel_k1(v) + sp::airy_ai(v) +
         sp::spherical_bessel_j0(v) + sp::sinc(v);
}
