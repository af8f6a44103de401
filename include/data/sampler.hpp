// Samplers, as torch.utils.data: the order in which a DataLoader visits a
// dataset's indices, drawn anew for every epoch (each call of indices()).
// With a seeded Generator the random ones give PyTorch's order for the same
// seed (its randperm is reproduced bit for bit); without one they seed a
// fresh generator from the global stream, as PyTorch does.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "../tessera.hpp"

namespace tsr::detail {
// PyTorch's seed for a sampler without a generator: torch.empty((),
// dtype=torch.int64).random_() on the current global (or worker) stream.
inline uint64_t draw_seed(Generator& g) {
  std::lock_guard lock(g.mutex());
  return g.random64() % (uint64_t{1} << 63);
}
inline uint64_t draw_seed() { return draw_seed(current_generator()); }
inline tsr::Generator generator_or_fresh(const std::optional<tsr::Generator>& g) {
  return g ? *g : tsr::Generator(draw_seed());
}
// A uniform draw in [0, n), as torch.randint draws it.
inline int64_t draw_below(tsr::Generator& g, int64_t n) {
  std::lock_guard lock(g.impl().mutex());
  return static_cast<int64_t>(g.impl().below(static_cast<uint64_t>(n)));
}
}  // namespace tsr::detail

namespace tsr::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The indices of one epoch, in order.
  virtual std::vector<int64_t> indices() = 0;
  // How many indices an epoch has.
  virtual int64_t size() const = 0;
};

// 0, 1, ..., n - 1.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t n) : n_(n) {}
  std::vector<int64_t> indices() override {
    std::vector<int64_t> out(static_cast<std::size_t>(n_));
    for (int64_t i = 0; i < n_; ++i) out[static_cast<std::size_t>(i)] = i;
    return out;
  }
  int64_t size() const override { return n_; }

 private:
  int64_t n_;
};

// A random permutation of 0..n - 1 every epoch (num_samples of them, whole
// permutations one after another), or with replacement num_samples uniform
// draws.
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t n, bool replacement = false, std::optional<int64_t> num_samples = std::nullopt,
                         std::optional<Generator> generator = std::nullopt)
      : n_(n), replacement_(replacement), num_samples_(num_samples.value_or(n)), generator_(std::move(generator)) {
    tsr::detail::check(num_samples_ > 0, "num_samples should be a positive integer value, but got num_samples=", num_samples_);
    tsr::detail::check(n > 0, "RandomSampler: cannot draw from an empty dataset");
  }
  std::vector<int64_t> indices() override {
    Generator g = tsr::detail::generator_or_fresh(generator_);
    std::vector<int64_t> out;
    out.reserve(static_cast<std::size_t>(num_samples_));
    if (replacement_) {
      for (int64_t i = 0; i < num_samples_; ++i) out.push_back(tsr::detail::draw_below(g, n_));
      return out;
    }
    // num_samples / n whole permutations and the first num_samples % n of
    // one more, which PyTorch draws even when that is none of it: the
    // generator moves as PyTorch's does.
    for (int64_t k = 0; k <= num_samples_ / n_; ++k) {
      const std::vector<int64_t> perm = randperm(n_, g).to_vector();
      const auto take = std::min<std::size_t>(perm.size(), static_cast<std::size_t>(num_samples_) - out.size());
      out.insert(out.end(), perm.begin(), perm.begin() + static_cast<std::ptrdiff_t>(take));
    }
    return out;
  }
  int64_t size() const override { return num_samples_; }

 private:
  int64_t n_;
  bool replacement_;
  int64_t num_samples_;
  std::optional<Generator> generator_;
};

// The given indices in a random order every epoch.
class SubsetRandomSampler : public Sampler {
 public:
  explicit SubsetRandomSampler(std::vector<int64_t> indices, std::optional<Generator> generator = std::nullopt)
      : indices_(std::move(indices)), generator_(std::move(generator)) {}
  std::vector<int64_t> indices() override {
    Generator g = tsr::detail::generator_or_fresh(generator_);
    std::vector<int64_t> out;
    for (const int64_t i : randperm(static_cast<int64_t>(indices_.size()), g).to_vector())
      out.push_back(indices_[static_cast<std::size_t>(i)]);
    return out;
  }
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }

 private:
  std::vector<int64_t> indices_;
  std::optional<Generator> generator_;
};

// num_samples indices drawn with probability proportional to their weights
// (with replacement, or each at most once). The draws are tessera's own
// (inverse of the cumulative weights on uniform doubles), not PyTorch's
// multinomial stream.
class WeightedRandomSampler : public Sampler {
 public:
  WeightedRandomSampler(std::vector<double> weights, int64_t num_samples, bool replacement = true,
                        std::optional<Generator> generator = std::nullopt)
      : weights_(std::move(weights)), num_samples_(num_samples), replacement_(replacement), generator_(std::move(generator)) {
    tsr::detail::check(num_samples > 0, "num_samples should be a positive integer value, but got num_samples=", num_samples);
  }
  // torch.multinomial of the weights (as doubles) on the sampler's
  // generator, as PyTorch's sampler draws them: its indices for a seed, and
  // its errors (bad weights are refused here, when drawn, as there).
  std::vector<int64_t> indices() override {
    Generator g = tsr::detail::generator_or_fresh(generator_);
    const auto weights = tensor<double>(weights_);
    tsr::detail::ThreadGeneratorGuard guard(g.impl());
    return multinomial(weights, num_samples_, replacement_).to_vector();
  }
  int64_t size() const override { return num_samples_; }

 private:
  std::vector<double> weights_;
  int64_t num_samples_;
  bool replacement_;
  std::optional<Generator> generator_;
};

// One rank's share of a dataset of n samples, as
// torch.utils.data.DistributedSampler: each epoch every rank draws the same
// order (a permutation from seed + epoch when shuffling: call set_epoch()
// before each epoch, or every epoch repeats), pads it by repeating its start
// up to a multiple of num_replicas (or with drop_last cuts it down to one),
// and takes every num_replicas-th index from position `rank`: the shares
// are disjoint and of equal length. PyTorch reads num_replicas and rank
// from the default process group when they are not given; here they are
// always given (distributed::get_world_size() and get_rank()).
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(int64_t n, int64_t num_replicas, int64_t rank, bool shuffle = true, uint64_t seed = 0,
                     bool drop_last = false)
      : n_(n), replicas_(num_replicas), rank_(rank), shuffle_(shuffle), seed_(seed) {
    tsr::detail::check(n >= 0, "DistributedSampler: a dataset of ", n, " samples");
    tsr::detail::check(num_replicas > 0, "DistributedSampler: num_replicas must be positive, got ", num_replicas);
    tsr::detail::check(rank >= 0 && rank < num_replicas, "Invalid rank ", rank, ", rank should be in the interval [0, ",
                       num_replicas - 1, "]");
    // With drop_last an uneven dataset loses its tail, so that no rank pads:
    // ceil((n - num_replicas) / num_replicas), at least 0, is (n - 1) / num_replicas.
    num_samples_ = drop_last && n % num_replicas != 0 ? (n - 1) / num_replicas : (n + num_replicas - 1) / num_replicas;
  }
  // The epoch whose order the next indices() draws (PyTorch's set_epoch).
  void set_epoch(int64_t epoch) { epoch_ = epoch; }

  std::vector<int64_t> indices() override {
    std::vector<int64_t> order;
    if (shuffle_) {
      Generator g;
      g.manual_seed(seed_ + static_cast<uint64_t>(epoch_));
      order = randperm(n_, g).to_vector();
    } else {
      order.resize(static_cast<std::size_t>(n_));
      std::iota(order.begin(), order.end(), int64_t{0});
    }
    const auto total = static_cast<std::size_t>(num_samples_ * replicas_);
    if (order.size() < total && !order.empty()) {
      // Padding: the order's start, repeated whole as often as needed.
      const std::size_t n = order.size();
      for (std::size_t i = n; i < total; ++i) order.push_back(order[i % n]);
    }
    order.resize(total);
    std::vector<int64_t> share;
    share.reserve(static_cast<std::size_t>(num_samples_));
    for (std::size_t i = static_cast<std::size_t>(rank_); i < total; i += static_cast<std::size_t>(replicas_))
      share.push_back(order[i]);
    return share;
  }
  int64_t size() const override { return num_samples_; }

 private:
  int64_t n_, replicas_, rank_;
  bool shuffle_;
  uint64_t seed_;
  int64_t epoch_ = 0;
  int64_t num_samples_ = 0;
};

// A sampler's indices in batches of batch_size (the last one shorter unless
// drop_last).
class BatchSampler {
 public:
  BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last)
      : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
    tsr::detail::check(batch_size > 0, "batch_size should be a positive integer value, but got batch_size=", batch_size);
  }
  std::vector<std::vector<int64_t>> batches() {
    const std::vector<int64_t> all = sampler_->indices();
    std::vector<std::vector<int64_t>> out;
    for (std::size_t at = 0; at < all.size(); at += static_cast<std::size_t>(batch_size_)) {
      const std::size_t end = std::min(all.size(), at + static_cast<std::size_t>(batch_size_));
      if (drop_last_ && end - at < static_cast<std::size_t>(batch_size_)) break;
      out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(at), all.begin() + static_cast<std::ptrdiff_t>(end));
    }
    return out;
  }
  int64_t size() const {
    const int64_t n = sampler_->size();
    return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
  }

 private:
  std::shared_ptr<Sampler> sampler_;
  int64_t batch_size_;
  bool drop_last_;
};

}  // namespace tsr::data
