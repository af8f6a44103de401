// Datasets, as torch.utils.data: something indexable with a size. A sample
// is whatever get(i) returns: a Tensor<T>, or a tuple of tensors (an image
// and its label); the DataLoader stacks samples into batches of the same
// shape. Datasets are shared (std::shared_ptr) between subsets, loaders and
// their worker threads, and get() must be safe to call from several threads.
#pragma once
#include <cstdint>
#include <memory>
#include <numeric>
#include <tuple>
#include <vector>

#include "../tessera.hpp"

namespace tsr::detail {
// A sample index in [-size, size) as one in [0, size) (Python's negative
// indices count from the end); PyTorch's IndexError, naming the index as
// given, outside.
inline int64_t sample_index(int64_t index, int64_t size) {
  check<IndexError>(index >= -size && index < size, "index ", index, " is out of bounds for dimension 0 with size ", size);
  return index < 0 ? index + size : index;
}
}  // namespace tsr::detail

namespace tsr::data {

template <class Sample>
class Dataset {
 public:
  using sample_type = Sample;
  virtual ~Dataset() = default;
  virtual Sample get(int64_t index) const = 0;
  virtual int64_t size() const = 0;
};

// Rows of tensors that share their first dimension: sample i is the tuple
// of each tensor's row i (views, as PyTorch's indexing returns).
template <class... Ts>
class TensorDataset : public Dataset<std::tuple<Tensor<Ts>...>> {
 public:
  explicit TensorDataset(Tensor<Ts>... tensors) : tensors_(std::move(tensors)...) {
    const int64_t n = std::get<0>(tensors_).dim() > 0 ? std::get<0>(tensors_).size(0) : -1;
    std::apply([&](const auto&... t) { detail::check(((t.dim() > 0 && t.size(0) == n) && ...), "Size mismatch between tensors"); },
               tensors_);
  }
  std::tuple<Tensor<Ts>...> get(int64_t index) const override {
    index = detail::sample_index(index, size());
    return std::apply([&](const auto&... t) { return std::make_tuple(t.select(0, index)...); }, tensors_);
  }
  int64_t size() const override { return std::get<0>(tensors_).size(0); }
  const std::tuple<Tensor<Ts>...>& tensors() const { return tensors_; }

 private:
  std::tuple<Tensor<Ts>...> tensors_;
};

// The samples of `dataset` at `indices`, in that order.
template <class Sample>
class Subset : public Dataset<Sample> {
 public:
  Subset(std::shared_ptr<const Dataset<Sample>> dataset, std::vector<int64_t> indices)
      : dataset_(std::move(dataset)), indices_(std::move(indices)) {}
  Sample get(int64_t index) const override {
    return dataset_->get(indices_[static_cast<std::size_t>(detail::sample_index(index, size()))]);
  }
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  const std::vector<int64_t>& indices() const { return indices_; }
  const std::shared_ptr<const Dataset<Sample>>& dataset() const { return dataset_; }

 private:
  std::shared_ptr<const Dataset<Sample>> dataset_;
  std::vector<int64_t> indices_;
};

// Datasets one after another.
template <class Sample>
class ConcatDataset : public Dataset<Sample> {
 public:
  explicit ConcatDataset(std::vector<std::shared_ptr<const Dataset<Sample>>> datasets) : datasets_(std::move(datasets)) {
    detail::check(!datasets_.empty(), "datasets should not be an empty iterable");
    int64_t total = 0;
    for (const auto& d : datasets_) cumulative_sizes_.push_back(total += d->size());
  }
  Sample get(int64_t index) const override {
    if (index < 0) {
      detail::check(-index <= size(), "absolute value of index should not exceed dataset length");
      index += size();
    }
    index = detail::sample_index(index, size());
    std::size_t which = 0;
    while (index >= cumulative_sizes_[which]) ++which;
    const int64_t start = which == 0 ? 0 : cumulative_sizes_[which - 1];
    return datasets_[which]->get(index - start);
  }
  int64_t size() const override { return cumulative_sizes_.back(); }
  const std::vector<int64_t>& cumulative_sizes() const { return cumulative_sizes_; }

 private:
  std::vector<std::shared_ptr<const Dataset<Sample>>> datasets_;
  std::vector<int64_t> cumulative_sizes_;
};

// Splits a dataset into non-overlapping subsets of the given lengths, by a
// random permutation as torch.utils.data.random_split (the same subsets for
// the same generator seed).
template <class Sample>
std::vector<std::shared_ptr<Subset<Sample>>> random_split(std::shared_ptr<const Dataset<Sample>> dataset,
                                                          const std::vector<int64_t>& lengths, Generator generator = {}) {
  detail::check(std::accumulate(lengths.begin(), lengths.end(), int64_t{0}) == dataset->size(),
                "Sum of input lengths does not equal the length of the input dataset!");
  const std::vector<int64_t> order = randperm(dataset->size(), generator).to_vector();
  std::vector<std::shared_ptr<Subset<Sample>>> out;
  auto at = order.begin();
  for (const int64_t n : lengths) {
    out.push_back(std::make_shared<Subset<Sample>>(dataset, std::vector<int64_t>(at, at + n)));
    at += n;
  }
  return out;
}

}  // namespace tsr::data
