// expect: argmax: bool tensors are not supported, as in PyTorch
#include <tessera.hpp>
int main() { auto m = tsr::ones<bool>({2, 3}); auto i = tsr::argmax(m, 1); (void)i; }
