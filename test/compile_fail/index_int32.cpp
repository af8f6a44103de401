// expect: tensors used as indices must be long or bool tensors
// PyTorch 1.13 refuses int32 indices with "tensors used as indices must be long, byte or bool tensors".
#include <tessera.hpp>

int main() {
  const auto x = tsr::zeros<float>({3, 4});
  const auto i = tsr::tensor<int32_t>({0, 2});
  const auto y = tsr::index(x, {i});
}
