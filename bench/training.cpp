// Training machinery, in one process on 2 threads: an optimizer step (SGD
// with momentum, Adam, AdamW) over 1M and 10M parameters against libtorch,
// and the DataLoader's throughput on Fashion-MNIST with 0, 1 and 2 workers.
// tessera's step is one fused pass per parameter; libtorch's C++ optimizers
// run one tensor operation per formula, each a pass over memory.
#include <data/data.hpp>
#include <data/mnist.hpp>
#include <filesystem>
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

}  // namespace

int main() {
  bench::print_machine();
  bench::set_threads(2);
  dataloader_throughput();
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
    char what[64];

    optim::SGD sgd(ours, optim::SGDOptions(0.01).momentum(0.9));
    torch::optim::SGD torch_sgd(theirs, torch::optim::SGDOptions(0.01).momentum(0.9));
    auto [a, b] = bench::in_turns(15, block, [&] { sgd.step(); }, [&] { torch_sgd.step(); });
    std::snprintf(what, sizeof what, "SGD momentum, %lldM parameters", static_cast<long long>(n >> 20));
    std::printf("  %-34s tessera %8.3f ms  libtorch %8.3f ms  speed %.2fx  (target >= 2x)\n", what, a, b, b / a);

    optim::Adam adam(ours, optim::AdamOptions(1e-3));
    torch::optim::Adam torch_adam(theirs, torch::optim::AdamOptions(1e-3));
    std::tie(a, b) = bench::in_turns(15, block, [&] { adam.step(); }, [&] { torch_adam.step(); });
    std::snprintf(what, sizeof what, "Adam, %lldM parameters", static_cast<long long>(n >> 20));
    std::printf("  %-34s tessera %8.3f ms  libtorch %8.3f ms  speed %.2fx  (target >= 2x)\n", what, a, b, b / a);

    optim::AdamW adamw(ours, optim::AdamWOptions(1e-3));
    torch::optim::AdamW torch_adamw(theirs, torch::optim::AdamWOptions(1e-3));
    std::tie(a, b) = bench::in_turns(15, block, [&] { adamw.step(); }, [&] { torch_adamw.step(); });
    std::snprintf(what, sizeof what, "AdamW, %lldM parameters", static_cast<long long>(n >> 20));
    std::printf("  %-34s tessera %8.3f ms  libtorch %8.3f ms  speed %.2fx  (target >= 2x)\n", what, a, b, b / a);
  }
  return 0;
#endif
}
