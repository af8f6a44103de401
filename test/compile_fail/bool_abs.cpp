// expect: "abs_cpu" not implemented for 'Bool'
// PyTorch has no abs of a bool tensor (torch.abs raises this).
#include <tessera.hpp>

int main() {
  const tsr::Tensor<bool> mask = tsr::ones<bool>({3});
  const tsr::Tensor<bool> r = tsr::abs(mask);
}
