// expect: norm(): input dtype should be either floating point or complex
// PyTorch's norm refuses integer tensors with these words.
#include <tessera.hpp>

int main() {
  const tsr::Tensor<int32_t> i = tsr::ones<int32_t>({3});
  const auto n = tsr::norm(i);
}
