// What the Fashion-MNIST examples share: the data sets (Debian's
// dataset-fashion-mnist), normalized by the training set's statistics, the
// MLP, and a model's accuracy on the test set.
#pragma once
#include <data/data.hpp>
#include <data/mnist.hpp>
#include <nn/nn.hpp>

#include <memory>
#include <string>

namespace fashion_mnist {

inline const std::string kDefaultDir = "/usr/share/datasets/fashion-mnist";

struct Data {
  std::shared_ptr<tsr::data::MNIST> train, test;
};

inline Data load(const std::string& dir) {
  Data d{std::make_shared<tsr::data::MNIST>(dir),
         std::make_shared<tsr::data::MNIST>(dir, tsr::data::MNIST::Mode::kTest)};
  constexpr double mean = 0.2860, stddev = 0.3530;  // the training set's (fashion_mnist.py uses the same)
  d.train->normalize(mean, stddev);
  d.test->normalize(mean, stddev);
  return d;
}

// The classifier 784-256-10 both examples train by default.
inline tsr::nn::Sequential mlp() {
  namespace nn = tsr::nn;
  return nn::Sequential(nn::Flatten(), nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10));
}

// Share of the test set the model classifies right.
inline double accuracy(tsr::nn::Sequential& model, const std::shared_ptr<tsr::data::MNIST>& test) {
  model->eval();
  const tsr::NoGradGuard no_grad;
  int64_t right = 0;
  auto loader = tsr::data::make_data_loader(test, tsr::data::DataLoaderOptions(1000));
  for (auto& [x, y] : loader) {
    const tsr::Tensor<float> logits = model->forward(x);
    right += tsr::sum(tsr::argmax(logits, 1) == y).item();
  }
  model->train();
  return double(right) / double(test->size());
}

}  // namespace fashion_mnist
