// expect: result type can't be cast to the desired output type (a floating expression into an integer tensor
#include <tessera.hpp>
// A float expression does not silently truncate into an integer tensor.
int main() { tsr::Tensor<int32_t> i = tsr::ones<float>({2}) * 1.5f; }
