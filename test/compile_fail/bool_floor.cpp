// expect: floor: bool tensors are not supported, as in PyTorch
// PyTorch rounds no bool tensor (floor, ceil, round and trunc raise an error).
#include <tessera.hpp>

int main() {
  const tsr::Tensor<bool> mask = tsr::ones<bool>({3});
  const tsr::Tensor<bool> r = tsr::floor(mask);
}
