// expect: lerp: expected dtype of `weight` to be the dtype of `start`
// A weight tensor must have the dtype of start and end (a number may be any).
#include <tessera.hpp>

int main() {
  const tsr::Tensor<float> a = tsr::ones<float>({3});
  const tsr::Tensor<double> w = tsr::ones<double>({3});
  const auto r = tsr::lerp(a, a, w);
}
