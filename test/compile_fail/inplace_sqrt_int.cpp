// expect: result type can't be cast to the desired output type
// PyTorch: "result type Float can't be cast to the desired output type Long".
#include <tessera.hpp>
int main() { auto i = tsr::ones<int64_t>({2}); i.sqrt_(); }
