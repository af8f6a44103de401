// expect: where expected condition to be a boolean tensor
#include <tessera.hpp>
int main() { auto x = tsr::ones({2}); auto e = tsr::where(x, x, 0.f); (void)e; }
