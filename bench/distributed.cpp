// Distributed training's costs, run under MPI (scripts/bench.sh distributed
// launches `mpirun -np 2`): every rank runs every measurement, rank 0 prints.
//
//  1. all_reduce bandwidth: tsr::distributed::all_reduce of a float tensor
//     against a plain MPI_Allreduce of the same buffer, measured in turns
//     (each run starts together on every rank after a barrier).
//  2. A data-parallel training step of an MLP (forward, cross-entropy,
//     backward, SGD): DistributedDataParallel, whose buckets are averaged
//     while backward runs, against the same step with one average of every
//     gradient after backward (no overlap).
//
// One thread per rank: the ranks share this machine's cores.
#include <distributed/ddp.hpp>
#include <optim/optim.hpp>

#include "bench_util.hpp"

using namespace tsr;
namespace dist = tsr::distributed;

namespace {

bool leader() { return dist::get_rank() == 0; }

// Median milliseconds of two contestants, in turns; every run starts after a
// barrier so that the ranks time the same collective.
template <class F, class G>
std::pair<double, double> synced_turns(int reps, F&& f, G&& g) {
  std::vector<double> a, b;
  auto once = [](auto& h) {
    dist::barrier();
    const auto t0 = std::chrono::steady_clock::now();
    h();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  once(f);
  once(g);
  for (int r = 0; r < reps; ++r) {
    a.push_back(once(f));
    b.push_back(once(g));
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return {a[a.size() / 2], b[b.size() / 2]};
}

void all_reduce_bandwidth() {
  if (leader())
    std::printf("== all_reduce (sum) of float tensors, %d ranks: tessera against MPI_Allreduce on the same buffer\n"
                "  %-10s %12s %12s %14s %14s %8s\n",
                dist::get_world_size(), "size", "tessera ms", "MPI ms", "tessera GB/s", "MPI GB/s", "ratio");
  for (const int64_t mib : {1, 16, 64}) {
    const int64_t n = mib * (1 << 20) / 4;
    // The same buffer for both (its values only double each time).
    auto t = ones<float>({n});
    const auto [ours, mpi] = synced_turns(
        mib >= 64 ? 10 : 30, [&] { dist::all_reduce(t); },
        [&] { MPI_Allreduce(MPI_IN_PLACE, t.data_ptr(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
    // Bytes of the buffer per second (the "algorithm bandwidth").
    const double bytes = double(n) * 4;
    if (leader())
      std::printf("  %4lld MiB   %12.3f %12.3f %14.2f %14.2f %8.2f\n", static_cast<long long>(mib), ours, mpi,
                  bytes / ours / 1e6, bytes / mpi / 1e6, mpi / ours);
  }
}

nn::Sequential mlp() {
  return nn::Sequential(nn::Linear(784, 1024), nn::ReLU(), nn::Linear(1024, 1024), nn::ReLU(), nn::Linear(1024, 1024),
                        nn::ReLU(), nn::Linear(1024, 10));
}

// The same step with one average of every gradient after backward.
void average_after_backward(std::vector<AnyTensor>& params, Tensor<float>& flat) {
  const NoGradGuard no_grad;
  int64_t at = 0;
  for (const AnyTensor& p : params) {
    const Tensor<float>& g = p.as<float>().grad();
    flat.slice(0, at, at + g.numel()).copy_(g.reshape({g.numel()}));
    at += g.numel();
  }
  dist::all_reduce(flat, dist::ReduceOp::AVG);
  at = 0;
  for (AnyTensor& p : params) {
    Tensor<float>& g = p.as<float>().mutable_grad();
    g.copy_(flat.slice(0, at, at + g.numel()).view(g.sizes()));
    at += g.numel();
  }
}

void ddp_step() {
  const int64_t batch = 64;
  manual_seed(uint64_t(1 + dist::get_rank()));
  const Tensor<float> x = randn<float>({batch, 784});
  const Tensor<int64_t> y = randint<int64_t>(0, 10, {batch});

  nn::parallel::DistributedDataParallel overlapped(mlp());
  optim::SGD sgd_overlapped(overlapped.parameters(), optim::SGDOptions(0.01).momentum(0.9));
  nn::Sequential plain = mlp();
  std::vector<AnyTensor> params = plain->parameters();
  optim::SGD sgd_plain(params, optim::SGDOptions(0.01).momentum(0.9));
  int64_t total = 0;
  for (const AnyTensor& p : params) total += p.numel();
  auto flat = zeros<float>({total});

  const auto [ours, after] = synced_turns(
      30,
      [&] {
        sgd_overlapped.zero_grad();
        nn::F::cross_entropy(overlapped(x), y).backward();
        sgd_overlapped.step();
      },
      [&] {
        sgd_plain.zero_grad();
        nn::F::cross_entropy(plain->forward(x), y).backward();
        average_after_backward(params, flat);
        sgd_plain.step();
      });
  if (leader())
    std::printf("== training step of an MLP 784-1024-1024-1024-10 (%.1f M parameters), batch %lld per rank, %d ranks\n"
                "  DistributedDataParallel (%zu buckets, averaged during backward): %8.2f ms\n"
                "  one average after backward (no overlap):                   %8.2f ms\n"
                "  overlap gained: %.2f ms per step (%.0f%%)\n",
                double(total) / 1e6, static_cast<long long>(batch), dist::get_world_size(),
                overlapped.buckets().size(), ours, after, after - ours, 100 * (after - ours) / after);
}

}  // namespace

int main() {
  dist::init_process_group();
  set_num_threads(1);
  if (leader()) bench::print_machine();
  all_reduce_bandwidth();
  ddp_step();
  dist::destroy_process_group();
}
