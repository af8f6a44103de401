// Fits y = a exp(-b x) + c by autograd and a hand-written Adam.
#include <tessera.hpp>

#include <cmath>
#include <iostream>

int main() {
  using namespace tsr;
  manual_seed(0);
  const auto x = linspace<float>(0.f, 4.f, 200);
  const Tensor<float> y = 2.5f * exp(-1.3f * x) + 0.5f + 0.01f * randn({200});

  Tensor<float> params[3] = {ones({1}).requires_grad_(), ones({1}).requires_grad_(), zeros({1}).requires_grad_()};
  Tensor<float> m[3] = {zeros({1}), zeros({1}), zeros({1})};
  Tensor<float> v[3] = {zeros({1}), zeros({1}), zeros({1})};
  const float lr = 0.05f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;

  for (int step = 1; step <= 500; ++step) {
    const auto& [a, b, c] = params;
    const Tensor<float> pred = a * exp(-b * x) + c;
    const auto loss = mean(square(pred - y));
    loss.backward();
    NoGradGuard no_grad;
    const float bc1 = 1.f - std::pow(beta1, float(step)), bc2 = 1.f - std::pow(beta2, float(step));
    for (int i = 0; i < 3; ++i) {
      const auto g = params[i].grad();
      m[i] = beta1 * m[i] + (1.f - beta1) * g;
      v[i] = beta2 * v[i] + (1.f - beta2) * g * g;
      params[i] -= lr * (m[i] / bc1) / (sqrt(v[i] / bc2) + eps);
      params[i].mutable_grad() = {};
    }
    if (step % 100 == 0) std::cout << "step " << step << " loss " << loss.item() << "\n";
  }
  std::cout << params[0] << " " << params[1] << " " << params[2] << "\n";
}
