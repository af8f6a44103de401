// A translation unit compiled without the CUDA backend, linked into the
// emulated device test (test_cuda.cpp): device tensors reaching its
// evaluations must fail with tessera's error instead of reading device
// memory on the host. Its expressions are ones no other unit of that test
// evaluates, so that the linker keeps this unit's instantiations.
#include <tessera.hpp>

namespace host_only {

tsr::Tensor<double> scaled_cosh(const tsr::Tensor<double>& t) { return tsr::cosh(t) * 4.25; }

double summed_cosh(const tsr::Tensor<double>& t) { return tsr::sum(tsr::cosh(t) * 4.25).item(); }

}  // namespace host_only
