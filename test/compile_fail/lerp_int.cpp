// expect: lerp: integer and bool tensors are not supported, as in PyTorch
#include <tessera.hpp>

int main() {
  const tsr::Tensor<int64_t> a = tsr::ones<int64_t>({3});
  const auto r = tsr::lerp(a, a, 0.5);
}
