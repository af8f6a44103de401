// expect: clamp: a bool tensor with a bool number as its min is not supported, as in PyTorch
// One bool bound given as a number: PyTorch refuses it (a bool tensor bound
// is the maximum of two bool tensors, which it takes).
#include <tessera.hpp>

int main() {
  const tsr::Tensor<bool> b = tsr::ones<bool>({3});
  const auto r = tsr::clamp(b, true);
}
