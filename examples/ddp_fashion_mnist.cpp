// Data-parallel training on Fashion-MNIST (Debian's dataset-fashion-mnist):
// the MLP 784-256-10 of fashion_mnist.cpp wrapped in DistributedDataParallel,
// each rank training on its DistributedSampler share with a batch of
// --batch / world size, so that the ranks together take the single-process
// run's steps. Launch with MPI:
//
//   mpirun -np 2 ddp_fashion_mnist [--epochs N] [--batch N] [--lr X] [--data DIR] [--seed N]
//
// (as root in a container add --allow-run-as-root). Rank 0 prints the
// training loss averaged over the ranks and the test accuracy per epoch.
// The ranks on one machine share its cores: each uses its share of them.
#include <distributed/ddp.hpp>
#include <optim/optim.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "fashion_mnist_data.hpp"

using namespace tsr;
namespace dist = tsr::distributed;

namespace {

struct Args {
  int epochs = 5;
  int64_t batch = 64;  // over all ranks together
  double lr = 0.01;
  std::string data = fashion_mnist::kDefaultDir;
  uint64_t seed = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error("ddp_fashion_mnist: " + flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--epochs") a.epochs = std::stoi(value());
    else if (flag == "--batch") a.batch = std::stoll(value());
    else if (flag == "--lr") a.lr = std::stod(value());
    else if (flag == "--data") a.data = value();
    else if (flag == "--seed") a.seed = std::stoull(value());
    else throw Error("ddp_fashion_mnist: unknown option " + flag + " (options: --epochs, --batch, --lr, --data, --seed)");
  }
  return a;
}

// The ranks running on this machine (MPI's shared-memory neighbours).
int local_ranks() {
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int n = 1;
  MPI_Comm_size(local, &n);
  MPI_Comm_free(&local);
  return n;
}

}  // namespace

int main(int argc, char** argv) try {
  dist::init_process_group();
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const Args args = parse(argc, argv);
  set_num_threads(std::max(1, int(std::thread::hardware_concurrency()) / local_ranks()));
  if (args.batch % world != 0) throw Error("ddp_fashion_mnist: --batch must be a multiple of the number of ranks");
  manual_seed(args.seed);  // DDP broadcasts rank 0's initial weights anyway

  const auto [train, test] = fashion_mnist::load(args.data);

  nn::parallel::DistributedDataParallel model(fashion_mnist::mlp());
  optim::SGD optimizer(model.parameters(), optim::SGDOptions(args.lr).momentum(0.9));
  auto shard = std::make_shared<data::DistributedSampler>(train->size(), world, rank, true, args.seed);
  data::DataLoader<data::MNIST::sample_type> loader(train, shard, data::DataLoaderOptions(args.batch / world));
  if (rank == 0)
    std::printf("MLP on Fashion-MNIST, %d ranks: %lld training images (%lld per rank), batch %lld (%lld per rank), "
                "SGD lr %g momentum 0.9, %d epochs\n",
                world, static_cast<long long>(train->size()), static_cast<long long>(shard->size()),
                static_cast<long long>(args.batch), static_cast<long long>(args.batch / world), args.lr, args.epochs);

  for (int epoch = 1; epoch <= args.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    shard->set_epoch(epoch);  // a new order each epoch, the same on every rank
    auto loss_sum = zeros<double>({1});
    for (auto& [x, y] : loader) {
      optimizer.zero_grad();
      const Tensor<float> loss = nn::F::cross_entropy(model(x), y);
      loss.backward();
      optimizer.step();
      loss_sum += double(loss.item());
    }
    dist::all_reduce(loss_sum, dist::ReduceOp::AVG);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double acc = fashion_mnist::accuracy(model.module(), test);
    if (rank == 0)
      std::printf("epoch %d/%d  loss %.4f  test accuracy %.2f%%  %.1f s\n", epoch, args.epochs,
                  loss_sum.item() / double(loader.size()), 100 * acc, seconds);
  }
  dist::destroy_process_group();
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
