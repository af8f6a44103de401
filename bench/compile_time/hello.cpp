// Hello world: two tensors, one fused addition, printing.
#include <tessera.hpp>

#include <iostream>

int main() {
  auto a = tsr::tensor<float>({1, 2, 3});
  auto b = tsr::tensor<float>({10, 20, 30});
  tsr::Tensor<float> c = a + b;
  std::cout << c << "\n";
}
