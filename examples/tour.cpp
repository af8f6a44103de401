// A short tour of tessera: tensors, views, lazy fused expressions, reductions,
// printing and files. Built and run by the test suite.
#include <tessera.hpp>

#include <cstdio>
#include <iostream>

int main() {
  using namespace tsr;
  manual_seed(0);

  // Factories and printing, as in PyTorch.
  auto x = arange<float>(0.f, 6.f).reshape({2, 3});
  std::cout << "x =\n" << x << "\n";

  // Expressions are lazy: nothing runs until the result is materialized, and
  // then the whole expression runs as one loop (no temporaries).
  auto e = x * 2.f + sin(x) - 0.5f;  // an expression, not a tensor
  Tensor<float> y = e;               // evaluated here, in one pass
  std::cout << "y = 2x + sin(x) - 0.5 =\n" << y << "\n";

  // Broadcasting and type promotion follow PyTorch.
  auto row = tensor<float>({10, 20, 30});
  std::cout << "x + row =\n" << x + row << "\n";
  Tensor<int32_t> i = arange<int32_t>(0, 5);
  std::cout << "int / int is true division: " << i / 2 << "\n";
  std::cout << "Python's % sign rule: " << (i - 2) % 3 << "\n";

  // Views share storage; writing through a view changes the base tensor.
  x.select(1, 0) = 100.f;
  x.slice(1, 1, 3) += 1.f;
  std::cout << "after writing through views:\n" << x << "\n";
  std::cout << "x.t() is a view with strides [" << x.t().stride(0) << ", " << x.t().stride(1) << "]\n";

  // Reductions fuse their input: sum(a * b) reads a and b once.
  auto a = rand({1000});
  auto b = randn({1000});
  std::cout << "sum(a * b) = " << sum(a * b).item() << ", mean(a) = " << mean(a).item()
            << ", amax(b) = " << amax(b).item() << "\n";
  std::cout << "allclose(a + 1e-9, a): " << std::boolalpha << allclose(a + 1e-9f, a) << "\n";

  // Element access for simulation code.
  auto grid = zeros({3, 3});
  for (int64_t r = 0; r < 3; ++r) grid(r, r) = float(r + 1);
  grid(-1, 0) = -1.f;
  std::cout << "grid =\n" << grid << "\n";

  // Files NumPy reads.
  io::save_npy("tour_grid.npy", grid);
  std::cout << "loaded back as double:\n" << io::load_npy<double>("tour_grid.npy") << "\n";
  std::remove("tour_grid.npy");

  // Errors carry PyTorch's messages.
  try {
    auto bad = x + zeros({4});
    (void)bad;
  } catch (const Error& err) {
    std::cout << "error: " << err.what() << "\n";
  }
  return 0;
}
