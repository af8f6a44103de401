// Trains a classifier on Fashion-MNIST (Debian's dataset-fashion-mnist):
// the MLP 784-256-10 (default) or a small CNN (--model cnn), SGD with
// momentum, test accuracy after every epoch. --compare then runs
// fashion_mnist.py, the same training in PyTorch (the same seed gives the
// same initial weights and batch order), and prints both side by side. The
// trained model is saved as PREFIX.pt (PyTorch's format) and
// PREFIX.safetensors; with --compare, PyTorch also loads the .pt and scores it.
//
//   fashion_mnist [--model mlp|cnn] [--epochs N] [--batch N] [--lr X]
//                 [--workers N] [--data DIR] [--seed N] [--save PREFIX] [--compare]
#include <nn/serialize.hpp>
#include <optim/optim.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <string>
#include <vector>

#include "fashion_mnist_data.hpp"

using namespace tsr;

namespace {

struct Args {
  std::string model = "mlp";
  int epochs = 0;  // 0: 5 for the MLP, 3 for the CNN
  int64_t batch = 64;
  double lr = 0.01;
  int64_t workers = 2;
  std::string data = fashion_mnist::kDefaultDir;
  uint64_t seed = 0;
  std::string save;  // "": fashion_mnist_<model>
  bool compare = false;
};

// One epoch's figures.
struct Epoch {
  double loss, accuracy, seconds;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error("fashion_mnist: " + flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--model") a.model = value();
    else if (flag == "--epochs") a.epochs = std::stoi(value());
    else if (flag == "--batch") a.batch = std::stoll(value());
    else if (flag == "--lr") a.lr = std::stod(value());
    else if (flag == "--workers") a.workers = std::stoll(value());
    else if (flag == "--data") a.data = value();
    else if (flag == "--seed") a.seed = std::stoull(value());
    else if (flag == "--save") a.save = value();
    else if (flag == "--compare") a.compare = true;
    else throw Error("fashion_mnist: unknown option " + flag +
                     " (options: --model mlp|cnn, --epochs, --batch, --lr, --workers, --data, --seed, --save, --compare)");
  }
  if (a.model != "mlp" && a.model != "cnn") throw Error("fashion_mnist: --model is mlp or cnn, not " + a.model);
  if (a.epochs == 0) a.epochs = a.model == "mlp" ? 5 : 3;
  if (a.save.empty()) a.save = "fashion_mnist_" + a.model;
  return a;
}

nn::Sequential make_model(const std::string& kind) {
  if (kind == "mlp") return fashion_mnist::mlp();
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 5).padding(2)), nn::ReLU(), nn::MaxPool2d(2),
                        nn::Conv2d(nn::Conv2dOptions(16, 32, 5).padding(2)), nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(),
                        nn::Linear(1568, 10));
}

// One line, redrawn in place on a terminal.
void progress(int epoch, int epochs, int64_t batch, int64_t batches, double loss, double samples_per_s, double left_s) {
  std::printf("\repoch %d/%d  batch %4lld/%lld  loss %.4f  %7.0f samples/s  %3.0f s left ", epoch, epochs,
              static_cast<long long>(batch), static_cast<long long>(batches), loss, samples_per_s, left_s);
  std::fflush(stdout);
}

// Runs fashion_mnist.py with the same settings; its epochs, or none (with
// the reason printed) when Python or PyTorch is missing. It also loads our
// checkpoint and scores it: `checkpoint_accuracy`, or -1.
std::vector<Epoch> run_pytorch(const Args& a, double& checkpoint_accuracy) {
  checkpoint_accuracy = -1;
  const std::string script = std::string(TSR_EXAMPLES_DIR) + "/fashion_mnist.py";
  if (std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") != 0) {
    std::printf("--compare: PyTorch is not installed: it needs /usr/bin/python3 with torch (Debian: apt-get install python3-torch)\n");
    return {};
  }
  const std::string command = "/usr/bin/python3 '" + script + "' --model " + a.model + " --epochs " +
                              std::to_string(a.epochs) + " --batch " + std::to_string(a.batch) + " --lr " +
                              std::to_string(a.lr) + " --seed " + std::to_string(a.seed) + " --data '" + a.data +
                              "' --score '" + a.save + ".pt'";
  std::printf("running PyTorch: %s\n", command.c_str());
  std::vector<Epoch> out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char line[256];
  while (std::fgets(line, sizeof line, pipe)) {
    int e;
    Epoch r;
    if (std::sscanf(line, "epoch %d loss %lf accuracy %lf seconds %lf", &e, &r.loss, &r.accuracy, &r.seconds) == 4)
      out.push_back(r);
    std::sscanf(line, "checkpoint accuracy %lf", &checkpoint_accuracy);
  }
  if (pclose(pipe) != 0) std::printf("--compare: fashion_mnist.py failed (its errors are above)\n");
  return out;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args args = parse(argc, argv);
  const bool terminal = isatty(STDOUT_FILENO) != 0;
  manual_seed(args.seed);

  const auto [train, test] = fashion_mnist::load(args.data);

  nn::Sequential model = make_model(args.model);
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(args.lr).momentum(0.9));
  auto loader = data::make_data_loader(train, data::DataLoaderOptions(args.batch).shuffle(true).num_workers(args.workers));
  std::printf("%s on Fashion-MNIST: %lld training and %lld test images, batch %lld, SGD lr %g momentum 0.9, %d epochs\n",
              args.model.c_str(), static_cast<long long>(train->size()), static_cast<long long>(test->size()),
              static_cast<long long>(args.batch), args.lr, args.epochs);

  using clock = std::chrono::steady_clock;
  std::vector<Epoch> ours;
  for (int epoch = 1; epoch <= args.epochs; ++epoch) {
    const auto start = clock::now();
    double loss_sum = 0;
    int64_t batch = 0, seen = 0;
    for (auto& [x, y] : loader) {
      optimizer.zero_grad();
      const Tensor<float> loss = nn::F::cross_entropy(model->forward(x), y);
      loss.backward();
      optimizer.step();
      loss_sum += loss.item();
      seen += y.numel();
      if (terminal && (++batch % 20 == 0 || batch == loader.size())) {
        const double s = std::chrono::duration<double>(clock::now() - start).count();
        const double rate = double(seen) / s;
        progress(epoch, args.epochs, batch, loader.size(), loss_sum / double(batch), rate,
                 double(loader.size() - batch) * double(args.batch) / rate +
                     double(args.epochs - epoch) * double(loader.size() * args.batch) / rate);
      }
      if (!terminal) ++batch;
    }
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();
    const double acc = fashion_mnist::accuracy(model, test);
    if (terminal) std::printf("\r\033[K");
    std::printf("epoch %d/%d  loss %.4f  test accuracy %.2f%%  %.1f s (%.0f samples/s)\n", epoch, args.epochs,
                loss_sum / double(batch), 100 * acc, seconds, double(seen) / seconds);
    ours.push_back({loss_sum / double(batch), acc, seconds});
  }
  nn::save(model, args.save + ".pt");
  nn::save(model, args.save + ".safetensors");
  std::printf("saved %s.pt (PyTorch's format) and %s.safetensors\n", args.save.c_str(), args.save.c_str());
  if (!args.compare) return 0;

  double checkpoint_accuracy;
  const std::vector<Epoch> theirs = run_pytorch(args, checkpoint_accuracy);
  if (theirs.size() != ours.size()) {
    if (!theirs.empty()) std::printf("--compare: PyTorch reported %zu epochs, not %zu\n", theirs.size(), ours.size());
    return 1;
  }
  std::printf("\n%-6s | %-28s | %-28s | %s\n", "epoch", "tessera: loss, accuracy, time", "PyTorch: loss, accuracy, time",
              "time ratio");
  for (std::size_t e = 0; e < ours.size(); ++e)
    std::printf("%-6zu | %.4f  %6.2f%%  %7.2f s    | %.4f  %6.2f%%  %7.2f s    | %.2f\n", e + 1, ours[e].loss,
                100 * ours[e].accuracy, ours[e].seconds, theirs[e].loss, 100 * theirs[e].accuracy, theirs[e].seconds,
                ours[e].seconds / theirs[e].seconds);
  if (checkpoint_accuracy >= 0)
    std::printf("PyTorch loaded %s.pt into its model: test accuracy %.2f%% (tessera measured %.2f%%)\n", args.save.c_str(),
                100 * checkpoint_accuracy, 100 * ours.back().accuracy);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
