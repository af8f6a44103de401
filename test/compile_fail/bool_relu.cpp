// expect: Boolean inputs not supported for relu
// PyTorch's relu refuses bool tensors with these words.
#include <tessera.hpp>

int main() {
  const tsr::Tensor<bool> mask = tsr::ones<bool>({3});
  const tsr::Tensor<bool> r = tsr::relu(mask);
}
