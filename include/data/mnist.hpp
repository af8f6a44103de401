// MNIST-format datasets (MNIST, Fashion-MNIST, KMNIST: the same four IDX
// files), as libtorch's torch::data::datasets::MNIST: images as float
// [N, 1, 28, 28] in [0, 1], targets as int64 [N]. Reads the files plain or
// gzip-compressed (through zlib: link with -lz), e.g. Debian's
// dataset-fashion-mnist in /usr/share/datasets/fashion-mnist.
#pragma once
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>

#include "../io/idx.hpp"
#include "dataset.hpp"

namespace tsr::data {

// Sample i is (image i, its label): a TensorDataset of the two.
class MNIST : public TensorDataset<float, int64_t> {
 public:
  enum class Mode { kTrain, kTest };

  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain) : MNIST(load(root, mode)) {}

  // Normalizes the images in place, (x - mean) / stddev (what libtorch's
  // .map(transforms::Normalize<>(mean, stddev)) does per sample, done once).
  MNIST& normalize(double mean, double stddev) {
    tsr::detail::check(stddev > 0, "MNIST::normalize: stddev must be positive, got ", stddev);
    const Tensor<float> x = images();  // (a handle on the dataset's images)
    // Unrecorded (the images are data, never part of a graph): copy_ would
    // compile its autograd history for the expression.
    tsr::detail::assign(x, (x - float(mean)) / float(stddev), true);
    return *this;
  }

  const Tensor<float>& images() const { return std::get<0>(tensors()); }
  const Tensor<int64_t>& targets() const { return std::get<1>(tensors()); }

 private:
  explicit MNIST(std::pair<Tensor<float>, Tensor<int64_t>> data) : TensorDataset(data.first, data.second) {}

  // Images as float [N, 1, rows, columns] in [0, 1] and labels as int64 [N].
  static std::pair<Tensor<float>, Tensor<int64_t>> load(const std::string& root, Mode mode) {
    const std::string prefix = mode == Mode::kTrain ? "train" : "t10k";
    const Tensor<float> images = io::load_idx<float>(find(root, prefix + "-images-idx3-ubyte"));
    const Tensor<int64_t> labels = io::load_idx<int64_t>(find(root, prefix + "-labels-idx1-ubyte"));
    tsr::detail::check(images.dim() == 3 && labels.dim() == 1 && images.size(0) == labels.size(0),
                       "MNIST: '", root, "' holds images of shape ", images.sizes(), " and labels of shape ", labels.sizes(),
                       "; expected [N, rows, columns] and [N]");
    return {Tensor<float>(images / 255.0f).unsqueeze(1), labels};
  }

  // `name` or `name.gz` under root.
  static std::string find(const std::string& root, const std::string& name) {
    const std::filesystem::path dir(root);
    if (std::filesystem::exists(dir / name)) return (dir / name).string();
    if (std::filesystem::exists(dir / (name + ".gz"))) return (dir / (name + ".gz")).string();
    tsr::detail::fail<Error>("MNIST: neither ", name, " nor ", name, ".gz is in '", root, "'");
  }
};

}  // namespace tsr::data
