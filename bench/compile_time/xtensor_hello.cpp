// The reference: the same hello world with xtensor.
#include <xtensor/xarray.hpp>
#include <xtensor/xio.hpp>

#include <iostream>

int main() {
  const xt::xarray<float> a = {1, 2, 3};
  const xt::xarray<float> b = {10, 20, 30};
  const xt::xarray<float> c = a + b;
  std::cout << c << "\n";
}
