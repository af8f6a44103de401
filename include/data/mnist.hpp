// MNIST-format datasets (MNIST, Fashion-MNIST, KMNIST: the same four IDX
// files), as libtorch's torch::data::datasets::MNIST: images as float
// [N, 1, 28, 28] in [0, 1], targets as int64 [N]. Reads the files plain or
// gzip-compressed (through zlib: link with -lz), e.g. Debian's
// dataset-fashion-mnist in /usr/share/datasets/fashion-mnist.
#pragma once
#include <filesystem>
#include <string>
#include <tuple>

#include "../io/idx.hpp"
#include "dataset.hpp"

namespace tsr::data {

class MNIST : public Dataset<std::tuple<Tensor<float>, Tensor<int64_t>>> {
 public:
  enum class Mode { kTrain, kTest };

  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain) {
    const std::string prefix = mode == Mode::kTrain ? "train" : "t10k";
    const Tensor<float> images = io::load_idx<float>(find(root, prefix + "-images-idx3-ubyte"));
    const Tensor<int64_t> labels = io::load_idx<int64_t>(find(root, prefix + "-labels-idx1-ubyte"));
    tsr::detail::check(images.dim() == 3 && labels.dim() == 1 && images.size(0) == labels.size(0),
                       "MNIST: '", root, "' holds images of shape ", images.sizes(), " and labels of shape ", labels.sizes(),
                       "; expected [N, rows, columns] and [N]");
    images_ = Tensor<float>(images / 255.0f).unsqueeze(1);
    targets_ = labels;
  }

  // Normalizes the images in place, (x - mean) / stddev (what libtorch's
  // .map(transforms::Normalize<>(mean, stddev)) does per sample, done once).
  MNIST& normalize(double mean, double stddev) {
    tsr::detail::check(stddev > 0, "MNIST::normalize: stddev must be positive, got ", stddev);
    images_.copy_((images_ - float(mean)) / float(stddev));
    return *this;
  }

  std::tuple<Tensor<float>, Tensor<int64_t>> get(int64_t index) const override {
    if (index < 0) index += size();
    tsr::detail::check_index(index, size());
    return {images_.select(0, index), targets_.select(0, index)};
  }
  int64_t size() const override { return targets_.size(0); }
  const Tensor<float>& images() const { return images_; }
  const Tensor<int64_t>& targets() const { return targets_; }

 private:
  // `name` or `name.gz` under root.
  static std::string find(const std::string& root, const std::string& name) {
    const std::filesystem::path dir(root);
    if (std::filesystem::exists(dir / name)) return (dir / name).string();
    if (std::filesystem::exists(dir / (name + ".gz"))) return (dir / (name + ".gz")).string();
    tsr::detail::fail<Error>("MNIST: neither ", name, " nor ", name, ".gz is in '", root, "'");
  }

  Tensor<float> images_;
  Tensor<int64_t> targets_;
};

}  // namespace tsr::data
