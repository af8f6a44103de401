// Training machinery against libtorch, in one process on 2 threads: an
// optimizer step (SGD with momentum, Adam, AdamW) over 1M and 10M parameters.
// tessera's step is one fused pass per parameter; libtorch's C++ optimizers
// run one tensor operation per formula, each a pass over memory.
#include <optim/optim.hpp>

#include "bench_util.hpp"

using namespace tsr;

namespace {

// Milliseconds per step of both, alternating blocks of steps (median of the
// blocks' means), so that a slow stretch of the machine hits both alike.
template <class Ours, class Theirs>
std::pair<double, double> in_turns(int turns, int block, Ours&& ours, Theirs&& theirs) {
  std::vector<double> a, b;
  auto time_block = [block](auto& f) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < block; ++i) f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / block;
  };
  ours();
  theirs();
  for (int r = 0; r < turns; ++r) {
    a.push_back(time_block(ours));
    b.push_back(time_block(theirs));
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return {a[a.size() / 2], b[b.size() / 2]};
}

}  // namespace

int main() {
  bench::print_machine();
  bench::set_threads(2);
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
    auto [a, b] = in_turns(15, block, [&] { sgd.step(); }, [&] { torch_sgd.step(); });
    std::snprintf(what, sizeof what, "SGD momentum, %lldM parameters", static_cast<long long>(n >> 20));
    std::printf("  %-34s tessera %8.3f ms  libtorch %8.3f ms  speed %.2fx  (target >= 2x)\n", what, a, b, b / a);

    optim::Adam adam(ours, optim::AdamOptions(1e-3));
    torch::optim::Adam torch_adam(theirs, torch::optim::AdamOptions(1e-3));
    std::tie(a, b) = in_turns(15, block, [&] { adam.step(); }, [&] { torch_adam.step(); });
    std::snprintf(what, sizeof what, "Adam, %lldM parameters", static_cast<long long>(n >> 20));
    std::printf("  %-34s tessera %8.3f ms  libtorch %8.3f ms  speed %.2fx  (target >= 2x)\n", what, a, b, b / a);

    optim::AdamW adamw(ours, optim::AdamWOptions(1e-3));
    torch::optim::AdamW torch_adamw(theirs, torch::optim::AdamWOptions(1e-3));
    std::tie(a, b) = in_turns(15, block, [&] { adamw.step(); }, [&] { torch_adamw.step(); });
    std::snprintf(what, sizeof what, "AdamW, %lldM parameters", static_cast<long long>(n >> 20));
    std::printf("  %-34s tessera %8.3f ms  libtorch %8.3f ms  speed %.2fx  (target >= 2x)\n", what, a, b, b / a);
  }
  return 0;
#endif
}
