// expect: mean(): could not infer output dtype
#include <tessera.hpp>
int main() { auto i = tsr::ones<int32_t>({2}); auto m = tsr::mean(i); (void)m; }
