// expect: result type can't be cast to the desired output type
#include <tessera.hpp>
// Nothing but bool goes into a bool tensor without cast<bool>.
int main() { tsr::Tensor<bool> b = tsr::ones<int32_t>({2}); }
