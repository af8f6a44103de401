// The same classifier as mlp.cpp, written with nn and optim as a PyTorch
// user would: nn::Sequential, cross entropy, SGD with momentum.
#include <tessera.hpp>
#include <nn/nn.hpp>
#include <optim/optim.hpp>

#include <iostream>

int main() {
  using namespace tsr;
  manual_seed(0);
  const int64_t n = 256, features = 20, hidden = 64, classes = 4;
  const auto x = randn({n, features});
  // Labels from a fixed random linear map, so that there is something to learn.
  const auto labels = argmax(matmul(x, randn({features, classes})), 1);

  nn::Sequential model(nn::Linear(features, hidden), nn::ReLU(), nn::Linear(hidden, classes));
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(0.5).momentum(0.9));
  for (int epoch = 0; epoch < 50; ++epoch) {
    optimizer.zero_grad();
    const Tensor<float> logits = model->forward(x);
    const auto loss = nn::functional::cross_entropy(logits, labels);
    loss.backward();
    optimizer.step();
    if (epoch % 10 == 0) {
      const auto accuracy = mean(cast<float>(argmax(logits, 1) == labels)).item();
      std::cout << "epoch " << epoch << " loss " << loss.item() << " accuracy " << accuracy << "\n";
    }
  }
}
