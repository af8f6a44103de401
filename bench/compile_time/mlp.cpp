// A small MLP classifier trained with autograd: two linear layers, ReLU,
// cross entropy through log_softmax, plain SGD.
#include <tessera.hpp>

#include <cmath>
#include <iostream>

int main() {
  using namespace tsr;
  manual_seed(0);
  const int64_t n = 256, features = 20, hidden = 64, classes = 4;
  const auto x = randn({n, features});
  // Labels from a fixed random linear map, so that there is something to learn.
  const auto labels = argmax(matmul(x, randn({features, classes})), 1);
  const Tensor<float> onehot = cast<float>(labels.unsqueeze(1) == arange<int64_t>(0, classes));

  auto w1 = (randn({features, hidden}) * (1.f / std::sqrt(float(features)))).eval().requires_grad_();
  auto b1 = zeros({hidden}).requires_grad_();
  auto w2 = (randn({hidden, classes}) * (1.f / std::sqrt(float(hidden)))).eval().requires_grad_();
  auto b2 = zeros({classes}).requires_grad_();
  Tensor<float>* params[] = {&w1, &b1, &w2, &b2};

  for (int epoch = 0; epoch < 50; ++epoch) {
    const Tensor<float> h = relu(matmul(x, w1) + b1);
    const Tensor<float> logits = matmul(h, w2) + b2;
    const Tensor<float> loss = -sum(log_softmax(logits, 1) * onehot) / float(n);
    loss.backward();
    NoGradGuard no_grad;
    for (Tensor<float>* p : params) {
      *p -= 0.5f * p->grad();
      p->mutable_grad() = {};
    }
    if (epoch % 10 == 0) {
      const auto accuracy = mean(cast<float>(argmax(logits, 1) == labels)).item();
      std::cout << "epoch " << epoch << " loss " << loss.item() << " accuracy " << accuracy << "\n";
    }
  }
}
