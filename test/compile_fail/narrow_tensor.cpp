// expect: result type can't be cast to the desired output type
#include <tessera.hpp>
// A tensor of another type is an expression too: no implicit float -> int64.
int main() {
  const auto x = tsr::ones<float>({2});
  tsr::Tensor<int64_t> i = x;
}
