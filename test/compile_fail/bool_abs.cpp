// expect: abs: bool tensors are not supported, as in PyTorch
// PyTorch has no abs of a bool tensor (torch.abs raises an error).
#include <tessera.hpp>

int main() {
  const tsr::Tensor<bool> mask = tsr::ones<bool>({3});
  const tsr::Tensor<bool> r = tsr::abs(mask);
}
