// A 2-D heat equation on a grid: explicit steps written through views.
#include <tessera.hpp>

#include <iostream>

int main() {
  using namespace tsr;
  const int64_t n = 64;
  auto u = zeros({n, n});
  u.select(0, 0) = 1.f;  // a hot edge
  const float alpha = 0.2f;
  for (int step = 0; step < 100; ++step) {
    const auto inner = [&](int64_t dr, int64_t dc) { return u.slice(0, 1 + dr, n - 1 + dr).slice(1, 1 + dc, n - 1 + dc); };
    const Tensor<float> next =
        inner(0, 0) + alpha * (inner(-1, 0) + inner(1, 0) + inner(0, -1) + inner(0, 1) - 4.f * inner(0, 0));
    inner(0, 0) = next;
  }
  std::cout << "heat: " << sum(u).item() << "\n";
  std::cout << u.slice(0, 0, 4).slice(1, 0, 4) << "\n";
}
