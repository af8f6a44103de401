// Training machinery, in one process on 2 threads: an optimizer step (SGD
// with momentum, Adam, AdamW) over 1M and 10M parameters against libtorch;
// the DataLoader's throughput on Fashion-MNIST with 0, 1 and 2 workers; a
// training step of fashion_mnist's two models (forward, cross-entropy,
// backward, SGD with momentum) against libtorch's; and saving and loading
// a 100 MB checkpoint. tessera's optimizer step is one fused pass per
// parameter; libtorch's C++ optimizers run one tensor operation per
// formula, each a pass over memory.
#include <data/data.hpp>
#include <data/mnist.hpp>
#include <unistd.h>

#include <filesystem>
#include <io/safetensors.hpp>
#include <nn/nn.hpp>
#include <optim/optim.hpp>

#include "bench_util.hpp"

using namespace tsr;

namespace {

// Samples per second of whole epochs of Fashion-MNIST's training set in
// shuffled batches of 64 (median of 5 epochs), by worker count.
void dataloader_throughput() {
  const std::string root = "/usr/share/datasets/fashion-mnist";
  std::printf("== DataLoader, Fashion-MNIST training set (60000 samples), batch 64, shuffled\n");
  if (!std::filesystem::exists(root + "/train-images-idx3-ubyte.gz")) {
    std::printf("  %s not found (Debian package dataset-fashion-mnist)\n", root.c_str());
    return;
  }
  auto train = std::make_shared<data::MNIST>(root);
  train->normalize(0.2860, 0.3530);
  for (const int64_t workers : {0, 1, 2}) {
    auto loader = data::make_data_loader(train, data::DataLoaderOptions(64).shuffle(true).num_workers(workers));
    int64_t seen = 0;
    const double s = bench::median_seconds(5, [&] {
      for (auto& [x, y] : loader) seen += y.numel();
    });
    std::printf("  %lld worker(s): %8.0f samples/s  (%.1f ms per epoch)\n", static_cast<long long>(workers), 60000 / s,
                s * 1e3);
  }
}

nn::Sequential mlp() { return nn::Sequential(nn::Flatten(), nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10)); }
nn::Sequential cnn() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 5).padding(2)), nn::ReLU(), nn::MaxPool2d(2),
                        nn::Conv2d(nn::Conv2dOptions(16, 32, 5).padding(2)), nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(),
                        nn::Linear(1568, 10));
}

// Writing and reading 25 tensors of 1024 x 1024 floats (100 MB), the medians
// of 5; libtorch's torch::save / torch::load of the same tensors as a list.
void checkpoints() {
  std::printf("== checkpoints, 25 x (1024 x 1024) floats = 100 MB, medians of 5 (tessera writes flush to disk)\n");
  io::TensorDict d;
  for (int i = 0; i < 25; ++i) d.emplace_back("w" + std::to_string(i), Tensor<float>(randn<float>({1024, 1024})));
  const std::string dir = std::filesystem::temp_directory_path() / ("tsr_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const double save_pt = bench::median_seconds(5, [&] { io::save_pt(dir + "/a.pt", io::tensor_dict_value(d)); });
  const double load_pt = bench::median_seconds(5, [&] { (void)io::load_pt(dir + "/a.pt"); });
  const double save_st = bench::median_seconds(5, [&] { io::save_safetensors(dir + "/a.safetensors", d); });
  const double load_st = bench::median_seconds(5, [&] { (void)io::load_safetensors(dir + "/a.safetensors"); });
  std::printf("  tessera .pt           save %7.1f ms  load %7.1f ms\n", save_pt * 1e3, load_pt * 1e3);
  std::printf("  tessera .safetensors  save %7.1f ms  load %7.1f ms\n", save_st * 1e3, load_st * 1e3);
#ifdef TSR_BENCH_TORCH
  std::vector<torch::Tensor> theirs;
  for (const auto& [name, t] : d) theirs.push_back(torch::from_blob(t.as<float>().data_ptr(), {1024, 1024}).clone());
  const double save_torch = bench::median_seconds(5, [&] { torch::save(theirs, dir + "/b.pt"); });
  const double load_torch = bench::median_seconds(5, [&] {
    std::vector<torch::Tensor> back;
    torch::load(back, dir + "/b.pt");
  });
  std::printf("  libtorch torch::save / torch::load   save %7.1f ms  load %7.1f ms\n", save_torch * 1e3, load_torch * 1e3);
#endif
  std::filesystem::remove_all(dir);
}

// SGD with momentum 0.9 and lr 0.01 written by hand: the parameter, its
// gradient and the momentum buffer each read once, the parameter and the
// buffer each written once, in the chunks tessera's step splits among the
// same 2 threads. No step can move less memory, so this is the floor of
// both sides' times; libtorch's moves the buffer three more times (mul_,
// add_, and the parameter's add_ reads it again).
void sgd_momentum_by_hand(float* p, const float* g, float* buf, int64_t n) {
  constexpr int64_t kChunk = tsr::detail::kUpdateChunk;
  tsr::detail::ThreadPool::instance().parallel_for((n + kChunk - 1) / kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin * kChunk, last = std::min(n, end * kChunk); i < last; ++i) {
      buf[i] = 0.9f * buf[i] + g[i];
      p[i] -= 0.01f * buf[i];
    }
  });
}

}  // namespace

int main() {
  bench::print_machine();
  bench::set_threads(2);
  dataloader_throughput();
  checkpoints();
  std::printf("== optimizer step, 2 threads, medians in turns (the parameter's gradient is set once)\n");
#ifndef TSR_BENCH_TORCH
  std::printf("  libtorch not found (Debian package libtorch-dev): nothing to compare with\n");
  return 0;
#else
  for (const int64_t n : {int64_t{1} << 20, int64_t{10} << 20}) {
    manual_seed(0);
    Tensor<float> p = randn<float>({n});
    p.requires_grad_(true);
    p.mutable_grad() = randn<float>({n});
    torch::Tensor tp = torch::from_blob(p.data_ptr(), {n}).clone().requires_grad_(true);
    tp.mutable_grad() = torch::from_blob(p.grad().data_ptr(), {n}).clone();
    const std::vector<AnyTensor> ours{p};
    const std::vector<torch::Tensor> theirs{tp};
    const int block = n > (int64_t{1} << 20) ? 3 : 20;
    const long long millions = n >> 20;
    auto report = [millions](const char* step, double ours_ms, double theirs_ms) {
      char what[64];
      std::snprintf(what, sizeof what, "%s, %lldM parameters", step, millions);
      std::printf("  %-34s tessera %8.3f ms  libtorch %8.3f ms  speed %.2fx  (target >= 2x)\n", what, ours_ms, theirs_ms,
                  theirs_ms / ours_ms);
    };

    optim::SGD sgd(ours, optim::SGDOptions(0.01).momentum(0.9));
    torch::optim::SGD torch_sgd(theirs, torch::optim::SGDOptions(0.01).momentum(0.9));
    // The hand-written step has arrays of its own, as libtorch has: each
    // side's arrays are then as far out of cache as the others' when its
    // turn comes.
    const Tensor<float> hand_p = p.detach().clone(), hand_g = p.grad().clone(), hand_buf = zeros_like(hand_p);
    const auto [a, by_hand, b] = bench::in_turns(
        15, block, [&] { sgd.step(); },
        [&] { sgd_momentum_by_hand(hand_p.data_ptr(), hand_g.data_ptr(), hand_buf.data_ptr(), n); },
        [&] { torch_sgd.step(); });
    report("SGD momentum", a, b);
    std::printf("  %-34s by hand %8.3f ms  (the traffic floor: libtorch / floor %.2fx, tessera / floor %.2f)\n", "",
                by_hand, b / by_hand, a / by_hand);

    optim::Adam adam(ours, optim::AdamOptions(1e-3));
    torch::optim::Adam torch_adam(theirs, torch::optim::AdamOptions(1e-3));
    const auto [c, d] = bench::in_turns(15, block, [&] { adam.step(); }, [&] { torch_adam.step(); });
    report("Adam", c, d);

    optim::AdamW adamw(ours, optim::AdamWOptions(1e-3));
    torch::optim::AdamW torch_adamw(theirs, torch::optim::AdamWOptions(1e-3));
    const auto [e, f] = bench::in_turns(15, block, [&] { adamw.step(); }, [&] { torch_adamw.step(); });
    report("AdamW", e, f);
  }

  // fashion_mnist's training step on one batch of 64 (random images).
  std::printf("== training step, batch 64, SGD lr 0.01 momentum 0.9, medians in turns\n");
  torch::manual_seed(0);
  manual_seed(0);
  const Tensor<float> x = randn({64, 1, 28, 28});
  const Tensor<int64_t> y = randint(0, 10, {64});
  const auto tx = torch::from_blob(const_cast<float*>(x.data_ptr()), {64, 1, 28, 28}).clone();
  const auto ty = torch::from_blob(const_cast<int64_t*>(y.data_ptr()), {64}, torch::kLong).clone();
  for (const bool conv : {false, true}) {
    nn::Sequential ours = conv ? cnn() : mlp();
    torch::nn::Sequential theirs =
        conv ? torch::nn::Sequential(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 5).padding(2)), torch::nn::ReLU(),
                                     torch::nn::MaxPool2d(2), torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 5).padding(2)),
                                     torch::nn::ReLU(), torch::nn::MaxPool2d(2), torch::nn::Flatten(), torch::nn::Linear(1568, 10))
             : torch::nn::Sequential(torch::nn::Flatten(), torch::nn::Linear(784, 256), torch::nn::ReLU(), torch::nn::Linear(256, 10));
    optim::SGD sgd(ours->parameters(), optim::SGDOptions(0.01).momentum(0.9));
    torch::optim::SGD torch_sgd(theirs->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    const auto [a, b] = bench::in_turns(conv ? 11 : 21, conv ? 3 : 20,
                                        [&] {
                                          sgd.zero_grad();
                                          const Tensor<float> loss = nn::F::cross_entropy(ours->forward(x), y);
                                          loss.backward();
                                          sgd.step();
                                        },
                                        [&] {
                                          torch_sgd.zero_grad();
                                          const auto loss = torch::nn::functional::cross_entropy(theirs->forward(tx), ty);
                                          loss.backward();
                                          torch_sgd.step();
                                        });
    std::printf("  %-34s tessera %8.3f ms  libtorch %8.3f ms  speed %.2fx\n", conv ? "small CNN" : "MLP 784-256-10", a, b, b / a);
  }
  return 0;
#endif
}
