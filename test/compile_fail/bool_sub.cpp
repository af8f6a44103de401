// expect: Subtraction, the `-` operator, with two bool tensors is not supported
#include <tessera.hpp>
int main() { auto b = tsr::ones<bool>({2}); auto e = b - b; (void)e; }
