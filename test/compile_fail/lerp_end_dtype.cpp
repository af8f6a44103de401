// expect: lerp: expected dtype of `end` to be the dtype of `start`
// lerp does not promote: PyTorch refuses a double end for a float start.
#include <tessera.hpp>

int main() {
  const tsr::Tensor<float> a = tsr::ones<float>({3});
  const tsr::Tensor<double> b = tsr::ones<double>({3});
  const auto r = tsr::lerp(a, b, 0.5);
}
