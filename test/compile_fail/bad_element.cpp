// expect: Tensor<T>: T must be float, double, int32_t, int64_t, bool, half or bfloat16
#include <tessera.hpp>
int main() { tsr::Tensor<char> t; (void)t; }
