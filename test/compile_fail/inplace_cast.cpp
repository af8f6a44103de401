// expect: result type can't be cast to the desired output type
#include <tessera.hpp>
int main() { auto i = tsr::ones<int64_t>({2}); i += 2.5; }
