// nn: training steps of nn models against libtorch's, in one process, both
// on 2 threads. A step is the forward, cross-entropy, backward, an SGD
// update of every parameter written in the bench (under no-grad), and the
// gradients set to none:
//   (a) MLP 784-256-10 (Linear, ReLU, Linear), batch 64 and batch 1, as a
//       Sequential and as the compile-time nn::Static;
//   (b) the small CNN (Conv2d 1->16 5x5 pad 2, ReLU, MaxPool 2, Conv2d 16->32
//       5x5 pad 2, ReLU, MaxPool 2, Flatten, Linear 1568->10), batch 64;
// and a forward and backward (of the output's sum, every parameter's
// gradient, then set to none) of
//   (c) LSTM, 1 layer, input 128, hidden 256, sequence 50, batch 16;
//   (d) TransformerEncoderLayer, d_model 256, 4 heads (feed-forward 2048,
//       dropout 0.1, training mode), sequence 128, batch 8.
// Measured in turns of several steps each (see in_turns). Environment:
// BENCH_ONLY=tessera|libtorch runs one side alone; BENCH_TORCH_THREADS and
// BENCH_BLAS_THREADS override libtorch's and OpenBLAS's thread counts.
#include <nn/nn.hpp>

#include "bench_util.hpp"

using namespace tsr;

namespace {

// One SGD step of a tessera model on (x, labels).
template <class Model>
void tessera_step(Model& model, const Tensor<float>& x, const Tensor<int64_t>& labels, float lr) {
  const Tensor<float> loss = nn::F::cross_entropy(model(x), labels);
  loss.backward();
  const NoGradGuard no_grad;
  for (auto& p : model->parameters()) {
    auto& t = p.template as<float>();
    t -= lr * t.grad();
    t.mutable_grad() = {};
  }
}

// The output's sum, backward, and the gradients set to none.
template <class Model>
void tessera_backward(Model& model, const Tensor<float>& out) {
  sum(out).backward();
  for (auto& p : model->parameters()) p.template as<float>().mutable_grad() = {};
}

#ifdef TSR_BENCH_TORCH
template <class Model>
void torch_backward(Model& model, const torch::Tensor& out) {
  out.sum().backward();
  for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
}

void torch_step(torch::nn::Sequential& model, const torch::Tensor& x, const torch::Tensor& labels, float lr) {
  const auto loss = torch::nn::functional::cross_entropy(model->forward(x), labels);
  loss.backward();
  const torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) {
    p.sub_(lr * p.grad());
    p.mutable_grad() = torch::Tensor();
  }
}
#endif

void report(const char* what, double ours, double theirs, const char* target) {
  std::printf("  %-36s tessera %8.3f ms  libtorch %8.3f ms  speed %.2fx  (%s)\n", what, ours, theirs, theirs / ours, target);
}

nn::Sequential tessera_mlp() {
  nn::Sequential m(nn::Linear(784, 256));
  m->push_back(nn::ReLU());
  m->push_back(nn::Linear(256, 10));
  return m;
}
nn::Sequential tessera_cnn() {
  nn::Sequential m(nn::Conv2d(nn::Conv2dOptions(1, 16, 5).padding(2)));
  m->push_back(nn::ReLU());
  m->push_back(nn::MaxPool2d(2));
  m->push_back(nn::Conv2d(nn::Conv2dOptions(16, 32, 5).padding(2)));
  m->push_back(nn::ReLU());
  m->push_back(nn::MaxPool2d(2));
  m->push_back(nn::Flatten());
  m->push_back(nn::Linear(1568, 10));
  return m;
}

}  // namespace

int main() {
  bench::print_machine();
  bench::set_threads(2);
#ifdef TSR_BENCH_OPENBLAS
  if (const char* blas = std::getenv("BENCH_BLAS_THREADS")) openblas_set_num_threads(std::atoi(blas));
#endif
#ifdef TSR_BENCH_TORCH
  if (const char* t = std::getenv("BENCH_TORCH_THREADS")) at::set_num_threads(std::atoi(t));
#endif
  std::printf("== nn training steps, 2 threads, medians in turns\n");
#ifndef TSR_BENCH_TORCH
  std::printf("  libtorch not found (Debian package libtorch-dev): nothing to compare with\n");
  return 0;
#else
  torch::manual_seed(0);
  manual_seed(0);
  for (const int64_t batch : {64, 1}) {
    auto ours = tessera_mlp();
    torch::nn::Sequential theirs(torch::nn::Linear(784, 256), torch::nn::ReLU(), torch::nn::Linear(256, 10));
    const Tensor<float> x = randn({batch, 784});
    const Tensor<int64_t> y = randint(0, 10, {batch});
    const auto tx = torch::from_blob(const_cast<float*>(x.data_ptr()), {batch, 784}).clone();
    const auto ty = torch::from_blob(const_cast<int64_t*>(y.data_ptr()), {batch}, torch::kLong).clone();
    const auto [a, b] = bench::in_turns(21, batch == 1 ? 100 : 20, [&] { tessera_step(ours, x, y, 0.01f); },
                                 [&] { torch_step(theirs, tx, ty, 0.01f); });
    report(batch == 1 ? "(a) MLP 784-256-10 step, batch 1" : "(a) MLP 784-256-10 step, batch 64", a, b,
           batch == 1 ? "target >= 4x" : "target >= 1.3x");
    // The same model defined at compile time.
    nn::Static<nn::sized::Linear<784, 256>, nn::ReLU, nn::sized::Linear<256, 10>> fixed;
    const auto [c, d] = bench::in_turns(21, batch == 1 ? 100 : 20, [&] { tessera_step(fixed, x, y, 0.01f); },
                                 [&] { torch_step(theirs, tx, ty, 0.01f); });
    report(batch == 1 ? "(a) ... nn::Static, batch 1" : "(a) ... nn::Static, batch 64", c, d,
           batch == 1 ? "target >= 4x" : "target >= 1.3x");
  }
  {
    auto ours = tessera_cnn();
    torch::nn::Sequential theirs(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 5).padding(2)), torch::nn::ReLU(),
                                 torch::nn::MaxPool2d(2), torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 5).padding(2)),
                                 torch::nn::ReLU(), torch::nn::MaxPool2d(2), torch::nn::Flatten(), torch::nn::Linear(1568, 10));
    const Tensor<float> x = randn({64, 1, 28, 28});
    const Tensor<int64_t> y = randint(0, 10, {64});
    const auto tx = torch::from_blob(const_cast<float*>(x.data_ptr()), {64, 1, 28, 28}).clone();
    const auto ty = torch::from_blob(const_cast<int64_t*>(y.data_ptr()), {64}, torch::kLong).clone();
    const auto [a, b] = bench::in_turns(11, 3, [&] { tessera_step(ours, x, y, 0.01f); }, [&] { torch_step(theirs, tx, ty, 0.01f); });
    report("(b) small CNN step, batch 64", a, b, "target >= 1.0x");
  }
  {
    nn::LSTM ours(128, 256);
    torch::nn::LSTM theirs(torch::nn::LSTMOptions(128, 256));
    const Tensor<float> x = randn({50, 16, 128});
    const auto tx = torch::from_blob(const_cast<float*>(x.data_ptr()), {50, 16, 128}).clone();
    const auto [a, b] = bench::in_turns(11, 3, [&] { tessera_backward(ours, std::get<0>(ours(x))); },
                                 [&] { torch_backward(theirs, std::get<0>(theirs->forward(tx))); });
    report("(c) LSTM 128->256, seq 50, batch 16", a, b, "target >= 1.0x");
  }
  {
    nn::TransformerEncoderLayer ours(256, 4);
    torch::nn::TransformerEncoderLayer theirs(torch::nn::TransformerEncoderLayerOptions(256, 4));
    const Tensor<float> x = randn({128, 8, 256});
    const auto tx = torch::from_blob(const_cast<float*>(x.data_ptr()), {128, 8, 256}).clone();
    const auto [a, b] = bench::in_turns(11, 3, [&] { tessera_backward(ours, ours(x)); },
                                 [&] { torch_backward(theirs, theirs->forward(tx)); });
    report("(d) TransformerEncoderLayer 256/4, seq 128, b 8", a, b, "target >= 1.0x");
  }
  return 0;
#endif
}
