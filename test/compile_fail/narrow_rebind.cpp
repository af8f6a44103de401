// expect: write tsr::cast<T>(expr) to convert explicitly
#include <tessera.hpp>
// Rebinding assignment follows the same rule as construction.
int main() {
  auto i = tsr::zeros<int64_t>({2});
  i = tsr::ones<double>({2});
}
