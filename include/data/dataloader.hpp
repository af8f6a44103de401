// DataLoader, as torch.utils.data.DataLoader: batches of a dataset's
// samples in the sampler's order, stacked into tensors, optionally made by
// worker threads ahead of use.
//
//   for (auto& [images, labels] : loader) { ... }
//
// Every epoch (each begin()) draws a new order from the sampler. With
// num_workers > 0, worker w makes batches w, w + W, w + 2W, ... (as
// PyTorch's workers do), at most prefetch_factor * W batches ahead of the
// consumer, and the batches come out in the sampler's order whatever the
// worker count. Each worker draws its random numbers (random transforms in
// get()) from a generator of its own, seeded base_seed + w where base_seed
// is drawn at the start of the epoch, so two workers never share a stream
// and a run is reproducible for a given seed and worker count.
#pragma once
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

#include "dataset.hpp"
#include "sampler.hpp"

namespace tsr::data {

// Stacks samples into a batch: tensors along a new first dimension; tuples
// of tensors element by element (PyTorch's default_collate for these).
template <class T>
Tensor<T> collate(const std::vector<Tensor<T>>& samples) {
  return stack(samples);
}
template <class... Ts>
std::tuple<Tensor<Ts>...> collate(const std::vector<std::tuple<Tensor<Ts>...>>& samples) {
  return [&]<std::size_t... k>(std::index_sequence<k...>) {
    auto column = [&]<std::size_t i>(std::integral_constant<std::size_t, i>) {
      std::vector<std::tuple_element_t<i, std::tuple<Tensor<Ts>...>>> parts;
      parts.reserve(samples.size());
      for (const auto& s : samples) parts.push_back(std::get<i>(s));
      return stack(parts);
    };
    return std::make_tuple(column(std::integral_constant<std::size_t, k>{})...);
  }(std::index_sequence_for<Ts...>{});
}

// A batch in pinned memory (DataLoaderOptions::pin_memory).
template <class T>
Tensor<T> pinned(const Tensor<T>& batch) {
  return batch.pin_memory();
}
template <class... Ts>
std::tuple<Tensor<Ts>...> pinned(const std::tuple<Tensor<Ts>...>& batch) {
  return std::apply([](const auto&... t) { return std::make_tuple(t.pin_memory()...); }, batch);
}

struct DataLoaderOptions {
  DataLoaderOptions(int64_t batch_size = 1) : batch_size_(batch_size) {}  // NOLINT: as libtorch's
  DataLoaderOptions& batch_size(int64_t v) { batch_size_ = v; return *this; }
  int64_t batch_size() const { return batch_size_; }
  DataLoaderOptions& shuffle(bool v) { shuffle_ = v; return *this; }
  bool shuffle() const { return shuffle_; }
  DataLoaderOptions& drop_last(bool v) { drop_last_ = v; return *this; }
  bool drop_last() const { return drop_last_; }
  DataLoaderOptions& num_workers(int64_t v) { num_workers_ = v; return *this; }
  int64_t num_workers() const { return num_workers_; }
  DataLoaderOptions& prefetch_factor(int64_t v) { prefetch_factor_ = v; return *this; }
  int64_t prefetch_factor() const { return prefetch_factor_; }
  // Batches in page-locked memory (made so by the workers when there are
  // any), for copies to a device that do not wait: x.to(tsr::cuda(0), true).
  // Needs the CUDA backend in the program.
  DataLoaderOptions& pin_memory(bool v) { pin_memory_ = v; return *this; }
  bool pin_memory() const { return pin_memory_; }
  // The generator the shuffle order and the workers' seeds come from (the
  // global one when unset).
  DataLoaderOptions& generator(Generator g) { generator_ = std::move(g); return *this; }
  const std::optional<Generator>& generator() const { return generator_; }

 private:
  int64_t batch_size_;
  bool shuffle_ = false;
  bool drop_last_ = false;
  int64_t num_workers_ = 0;
  int64_t prefetch_factor_ = 2;
  bool pin_memory_ = false;
  std::optional<Generator> generator_;
};

template <class Sample>
class DataLoader {
 public:
  using Batch = decltype(collate(std::declval<const std::vector<Sample>&>()));

  DataLoader(std::shared_ptr<const Dataset<Sample>> dataset, const DataLoaderOptions& options = {})
      : DataLoader(dataset, default_sampler(*dataset, options), options) {}
  // With a sampler of one's own (shuffle must then be false, as in PyTorch).
  DataLoader(std::shared_ptr<const Dataset<Sample>> dataset, std::shared_ptr<Sampler> sampler, const DataLoaderOptions& options)
      : dataset_(std::move(dataset)), options_(options),
        batches_(std::move(sampler), options.batch_size(), options.drop_last()) {
    tsr::detail::check(options.num_workers() >= 0,
                       "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.");
    tsr::detail::check(options.prefetch_factor() > 0, "prefetch_factor option should be positive, got ", options.prefetch_factor());
  }

  // Batches per epoch.
  int64_t size() const { return batches_.size(); }
  const Dataset<Sample>& dataset() const { return *dataset_; }

  class Iterator;
  Iterator begin() { return Iterator(std::make_shared<Epoch>(*this)); }
  Iterator end() { return Iterator(); }

 private:
  static std::shared_ptr<Sampler> default_sampler(const Dataset<Sample>& dataset, const DataLoaderOptions& o) {
    if (o.shuffle()) return std::make_shared<RandomSampler>(dataset.size(), false, std::nullopt, o.generator());
    return std::make_shared<SequentialSampler>(dataset.size());
  }

  Batch make_batch(const std::vector<int64_t>& indices) const {
    std::vector<Sample> samples;
    samples.reserve(indices.size());
    for (const int64_t i : indices) samples.push_back(dataset_->get(i));
    return options_.pin_memory() ? pinned(collate(samples)) : collate(samples);
  }

  // One pass over the data: its batches' indices, and with workers the
  // threads and the batches they have made, in order.
  class Epoch {
   public:
    explicit Epoch(DataLoader& loader) : loader_(loader) {
      // As PyTorch: the workers' base seed first, then the sampler's draws.
      base_seed_ = loader.options_.generator() ? tsr::detail::draw_seed(loader.options_.generator()->impl())
                                               : tsr::detail::draw_seed();
      batches_ = loader.batches_.batches();
      const auto workers = static_cast<std::size_t>(loader.options_.num_workers());
      if (workers == 0) return;
      slots_.resize(batches_.size());
      for (std::size_t w = 0; w < workers; ++w) threads_.emplace_back([this, w, workers] { work(w, workers); });
    }
    ~Epoch() {
      {
        std::lock_guard lock(mutex_);
        stop_ = true;
      }
      progress_.notify_all();
      for (auto& t : threads_) t.join();
    }
    Epoch(const Epoch&) = delete;
    Epoch& operator=(const Epoch&) = delete;

    std::size_t count() const { return batches_.size(); }

    // Batch k (each taken once, in order).
    Batch take(std::size_t k) {
      if (threads_.empty()) return loader_.make_batch(batches_[k]);
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return slots_[k].batch.has_value() || slots_[k].error; });
      consumed_ = k + 1;
      progress_.notify_all();
      if (slots_[k].error) std::rethrow_exception(slots_[k].error);
      Batch b = std::move(*slots_[k].batch);
      slots_[k].batch.reset();
      return b;
    }

   private:
    struct Slot {
      std::optional<Batch> batch;
      std::exception_ptr error;
    };

    void work(std::size_t w, std::size_t workers) {
      tsr::detail::Generator generator(base_seed_ + w);
      const tsr::detail::ThreadGeneratorGuard own_stream(generator);
      const tsr::detail::ThreadPool::SerialScope serial;
      const std::size_t ahead = workers * static_cast<std::size_t>(loader_.options_.prefetch_factor());
      for (std::size_t k = w; k < batches_.size(); k += workers) {
        {
          std::unique_lock lock(mutex_);
          progress_.wait(lock, [&] { return stop_ || k < consumed_ + ahead; });
          if (stop_) return;
        }
        Slot slot;
        try {
          slot.batch.emplace(loader_.make_batch(batches_[k]));
        } catch (...) {
          slot.error = std::current_exception();
        }
        {
          std::lock_guard lock(mutex_);
          slots_[k] = std::move(slot);
        }
        ready_.notify_all();
      }
    }

    DataLoader& loader_;
    uint64_t base_seed_ = 0;
    std::vector<std::vector<int64_t>> batches_;
    std::vector<Slot> slots_;
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable ready_, progress_;
    std::size_t consumed_ = 0;
    bool stop_ = false;
  };

 public:
  // An input iterator over one epoch's batches; the epoch (and its worker
  // threads) ends when the iterator is destroyed, also midway.
  class Iterator {
   public:
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    Iterator() = default;
    explicit Iterator(std::shared_ptr<Epoch> epoch) : epoch_(std::move(epoch)) { load(); }
    Batch& operator*() { return *current_; }
    Batch* operator->() { return &*current_; }
    Iterator& operator++() {
      ++k_;
      load();
      return *this;
    }
    bool operator==(const Iterator& o) const { return done() == o.done(); }

   private:
    bool done() const { return !epoch_ || k_ >= epoch_->count(); }
    void load() {
      if (done()) {
        current_.reset();
        epoch_.reset();  // joins the workers
        return;
      }
      current_.emplace(epoch_->take(k_));
    }
    std::shared_ptr<Epoch> epoch_;
    std::size_t k_ = 0;
    std::optional<Batch> current_;
  };

 private:
  std::shared_ptr<const Dataset<Sample>> dataset_;
  DataLoaderOptions options_;
  BatchSampler batches_;
};

// The loader for a dataset held by a shared_ptr of its own type.
template <class D>
auto make_data_loader(std::shared_ptr<D> dataset, const DataLoaderOptions& options = {}) {
  using Sample = typename D::sample_type;
  return DataLoader<Sample>(std::shared_ptr<const Dataset<Sample>>(std::move(dataset)), options);
}

}  // namespace tsr::data
