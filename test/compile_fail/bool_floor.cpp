// expect: "floor_vml_cpu" not implemented for 'Bool'
// PyTorch rounds no bool tensor (floor, ceil, round and trunc raise this).
#include <tessera.hpp>

int main() {
  const tsr::Tensor<bool> mask = tsr::ones<bool>({3});
  const tsr::Tensor<bool> r = tsr::floor(mask);
}
