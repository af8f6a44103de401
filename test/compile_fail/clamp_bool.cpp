// expect: clamp: bool tensors with bool bounds are not supported, as in PyTorch
// A bool tensor between bool bounds computes in bool, for which PyTorch has
// no clamp kernel (with integer bounds it computes in int64, as PyTorch).
#include <tessera.hpp>

int main() {
  const tsr::Tensor<bool> b = tsr::ones<bool>({3});
  const auto r = tsr::clamp(b, b, b);
}
