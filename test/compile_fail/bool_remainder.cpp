// expect: remainder: bool tensors are not supported, as in PyTorch
// Two bool tensors compute in bool, which PyTorch's remainder refuses (as
// fmod, floor_divide and pow do); with an integer operand they compute in
// its type.
#include <tessera.hpp>

int main() {
  const tsr::Tensor<bool> a = tsr::ones<bool>({3}), b = tsr::ones<bool>({3});
  const tsr::Tensor<bool> r = tsr::remainder(a, b);
}
