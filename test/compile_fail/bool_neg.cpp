// expect: Negation, the `-` operator, on a bool tensor is not supported
#include <tessera.hpp>
int main() { auto b = tsr::ones<bool>({2}); auto e = -b; (void)e; }
