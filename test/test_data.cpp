// data: datasets, samplers and the DataLoader, with PyTorch 1.13's orders for
// the same seeds (tools/make_golden.py: data_orders).
#include <data/data.hpp>
#include <data/mnist.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>

#include "common.hpp"

using namespace tsr;
using test::error_of;

namespace {

std::vector<int64_t> golden_indices(const std::string& name) { return test::golden<int64_t>(name).to_vector(); }

std::shared_ptr<data::TensorDataset<float, int64_t>> numbered(int64_t n) {
  // Sample i: the row [i, i + 0.5] and the label i.
  Tensor<float> x = Tensor<float>(cast<float>(arange<int64_t>(0, n))).unsqueeze(1);
  x = cat({x, Tensor<float>(x + 0.5f)}, 1);
  return std::make_shared<data::TensorDataset<float, int64_t>>(x, arange<int64_t>(0, n));
}

// The labels of every batch of one epoch, in order.
template <class Loader>
std::vector<int64_t> epoch_labels(Loader& loader) {
  std::vector<int64_t> out;
  for (auto& [x, y] : loader)
    for (int64_t v : y.to_vector()) out.push_back(v);
  return out;
}

}  // namespace

TEST_CASE("randperm reproduces torch.randperm for the same seed") {
  CHECK(randperm(10, Generator(0)).to_vector() == golden_indices("data_randperm10_seed0"));
  CHECK(randperm(1000, Generator().manual_seed(42)).to_vector() == golden_indices("data_randperm1000_seed42"));
  manual_seed(7);
  CHECK(randperm(37).to_vector() == golden_indices("data_randperm37_global7"));
  CHECK(randperm(0).numel() == 0);
  CHECK(error_of([] { randperm(-1); }) == "Trying to create tensor with negative dimension -1: [-1]");
}

TEST_CASE("samplers and random_split give PyTorch's orders") {
  data::RandomSampler seeded(10, false, 25, Generator(3));
  CHECK(seeded.indices() == golden_indices("data_random_sampler_seed3"));
  manual_seed(5);
  data::RandomSampler global(12);
  CHECK(global.indices() == golden_indices("data_random_sampler_global5"));
  data::SubsetRandomSampler subset({10, 20, 30, 40, 50, 60}, Generator(11));
  CHECK(subset.indices() == golden_indices("data_subset_random_seed11"));

  const auto ds = numbered(10);
  const auto parts = data::random_split<std::tuple<Tensor<float>, Tensor<int64_t>>>(ds, {3, 3, 4}, Generator(42));
  std::vector<int64_t> joined;
  for (const auto& p : parts) joined.insert(joined.end(), p->indices().begin(), p->indices().end());
  CHECK(joined == golden_indices("data_random_split_seed42"));
  CHECK(std::get<1>(parts[2]->get(0)).item() == joined[6]);
  CHECK(error_of([&] { data::random_split<std::tuple<Tensor<float>, Tensor<int64_t>>>(ds, {3, 4}); }) ==
        "Sum of input lengths does not equal the length of the input dataset!");

  // With replacement: torch.randint's draws.
  data::RandomSampler drawn(10, true, 40, Generator(4));
  CHECK(drawn.indices() == golden_indices("data_random_sampler_replacement_seed4"));
  // In range, and a new draw every epoch.
  data::RandomSampler with_replacement(5, true, 1000, Generator(1));
  const auto a = with_replacement.indices(), b = with_replacement.indices();
  CHECK(a != b);
  CHECK(std::all_of(a.begin(), a.end(), [](int64_t i) { return i >= 0 && i < 5; }));

  // Weighted: never a zero weight; without replacement each index at most once.
  data::WeightedRandomSampler weighted({0.0, 1.0, 3.0, 0.0}, 4000, true, Generator(2));
  const auto w = weighted.indices();
  const auto threes = std::count(w.begin(), w.end(), 2);
  CHECK(std::count(w.begin(), w.end(), 0) + std::count(w.begin(), w.end(), 3) == 0);
  CHECK(threes > 2800);  // expected 3000, standard deviation 27
  CHECK(threes < 3200);
  data::WeightedRandomSampler unique({1.0, 2.0, 3.0}, 3, false, Generator(2));
  auto u = unique.indices();
  CHECK(u == golden_indices("data_weighted_sampler_unique_seed2"));  // PyTorch's draws
  std::sort(u.begin(), u.end());
  CHECK(u == std::vector<int64_t>{0, 1, 2});
  data::WeightedRandomSampler few({0.0, 1.0, 3.0, 0.0}, 10, true, Generator(2));
  CHECK(few.indices() == golden_indices("data_weighted_sampler_seed2"));
  // A zero weight is drawn last without replacement; errors come when drawing, as PyTorch's.
  data::WeightedRandomSampler all({1.0, 0.0}, 2, false);
  CHECK(all.indices() == std::vector<int64_t>{0, 1});
  data::WeightedRandomSampler too_many({1.0, 0.0}, 3, false);
  CHECK(error_of([&] { too_many.indices(); }) == "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  data::WeightedRandomSampler negative({1.0, -1.0}, 3);
  CHECK(error_of([&] { negative.indices(); }) == "invalid multinomial distribution (encountering probability entry < 0)");
  data::WeightedRandomSampler zero({0.0, 0.0}, 3);
  CHECK(error_of([&] { zero.indices(); }) == "invalid multinomial distribution (sum of probabilities <= 0)");
}

TEST_CASE("datasets index as PyTorch's, with its errors") {
  const auto ds = numbered(5);
  const auto [x, y] = ds->get(3);
  CHECK(x.to_vector() == std::vector<float>{3.0f, 3.5f});
  CHECK(y.item() == 3);
  CHECK(error_of([&] { ds->get(5); }) == "index 5 is out of bounds for dimension 0 with size 5");
  CHECK(error_of([&] { ds->get(-6); }) == "index -6 is out of bounds for dimension 0 with size 5");
  CHECK(std::get<1>(ds->get(-1)).item() == 4);
  CHECK(error_of([] { data::TensorDataset<float, int64_t>(zeros<float>({3}), zeros<int64_t>({4})); }) ==
        "Size mismatch between tensors");

  using Sample = std::tuple<Tensor<float>, Tensor<int64_t>>;
  const data::Subset<Sample> subset(ds, {4, 0});
  CHECK(std::get<1>(subset.get(0)).item() == 4);
  CHECK(std::get<1>(subset.get(-1)).item() == 0);
  const data::ConcatDataset<Sample> both({ds, numbered(2)});
  CHECK(both.size() == 7);
  CHECK(std::get<1>(both.get(6)).item() == 1);
  CHECK(std::get<1>(both.get(-7)).item() == 0);
  CHECK(error_of([&] { both.get(-8); }) == "absolute value of index should not exceed dataset length");
}

TEST_CASE("DistributedSampler: PyTorch's shares, disjoint and equal, reshuffled by set_epoch") {
  const auto golden = golden_indices("data_distributed_sampler");
  std::vector<int64_t> got;
  for (const bool drop_last : {false, true})
    for (int64_t rank = 0; rank < 3; ++rank) {
      data::DistributedSampler s(10, 3, rank, true, 5, drop_last);
      CHECK(s.size() == (drop_last ? 3 : 4));
      for (const int64_t epoch : {0, 1}) {
        s.set_epoch(epoch);
        const auto share = s.indices();
        got.insert(got.end(), share.begin(), share.end());
      }
    }
  for (int64_t rank = 0; rank < 3; ++rank) {
    const auto share = data::DistributedSampler(7, 3, rank, false).indices();  // padded from the start
    got.insert(got.end(), share.begin(), share.end());
  }
  for (int64_t rank = 0; rank < 5; ++rank) {
    const auto share = data::DistributedSampler(2, 5, rank, false).indices();  // padding repeats the whole order
    got.insert(got.end(), share.begin(), share.end());
  }
  CHECK(got == golden);
  // Without set_epoch every epoch repeats the order; the ranks' shares are disjoint.
  data::DistributedSampler a(9, 3, 0), b(9, 3, 1), c(9, 3, 2);
  CHECK(a.indices() == a.indices());
  std::vector<int64_t> all;
  for (auto* s : {&a, &b, &c}) {
    const auto share = s->indices();
    all.insert(all.end(), share.begin(), share.end());
  }
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(error_of([] { data::DistributedSampler(10, 3, 3); }) == "Invalid rank 3, rank should be in the interval [0, 2]");
  CHECK(data::DistributedSampler(0, 2, 1).indices().empty());
}

TEST_CASE("a DataLoader batches in the sampler's order, whatever the worker count") {
  const auto ds = numbered(22);
  // PyTorch's shuffled order for a global seed (two epochs) and for a generator.
  for (const int64_t workers : {0, 1, 2, 3}) {
    CAPTURE(workers);
    manual_seed(123);
    auto loader = data::make_data_loader(ds, data::DataLoaderOptions(4).shuffle(true).drop_last(true).num_workers(workers));
    CHECK(loader.size() == 5);
    std::vector<int64_t> order = epoch_labels(loader), second = epoch_labels(loader);
    order.insert(order.end(), second.begin(), second.end());
    CHECK(order == golden_indices("data_loader_order_global123"));

    auto seeded = data::make_data_loader(
        ds, data::DataLoaderOptions(5).shuffle(true).num_workers(workers).generator(Generator(9)));
    CHECK(seeded.size() == 5);
    order = epoch_labels(seeded), second = epoch_labels(seeded);
    order.insert(order.end(), second.begin(), second.end());
    CHECK(order == golden_indices("data_loader_order_seed9"));

    // Batches are stacked samples; the last one is short without drop_last.
    auto plain = data::make_data_loader(ds, data::DataLoaderOptions(8).num_workers(workers));
    std::vector<Shape> shapes;
    for (auto& [x, y] : plain) {
      shapes.push_back(x.sizes());
      CHECK(y.sizes() == Shape{x.size(0)});
      CHECK(x.select(1, 1).to_vector() == Tensor<float>(cast<float>(y) + 0.5f).to_vector());
    }
    CHECK(shapes == std::vector<Shape>{{8, 2}, {8, 2}, {6, 2}});
    // pin_memory(true) pins each batch, which needs the CUDA backend: in
    // this program (which has none), the first batch says so. (With the
    // backend: test_cuda.)
    auto pinning = data::make_data_loader(ds, data::DataLoaderOptions(8).num_workers(workers).pin_memory(true));
    CHECK(error_of([&] {
            for (auto& b : pinning) (void)b;
          }).find("Torch not compiled with CUDA enabled") == 0);
  }
}

namespace {
// A dataset whose samples are random draws (a random transform): which
// stream each batch draws from shows the workers' seeding.
class Noisy : public data::Dataset<Tensor<float>> {
 public:
  Tensor<float> get(int64_t index) const override {
    if (index == fail_at) throw Error("sample " + std::to_string(index) + " is broken");
    ++calls;
    return rand<float>({3});
  }
  int64_t size() const override { return 24; }
  int64_t fail_at = -1;
  mutable std::atomic<int> calls{0};
};
}  // namespace

TEST_CASE("DataLoader workers draw from streams of their own, reproducibly") {
  auto ds = std::make_shared<Noisy>();
  auto run = [&](int64_t workers) {
    manual_seed(1);
    auto loader = data::make_data_loader(ds, data::DataLoaderOptions(2).num_workers(workers));
    std::vector<std::vector<float>> out;
    for (auto& b : loader) out.push_back(b.to_vector());
    return out;
  };
  const auto a = run(2), b = run(2);
  CHECK(a == b);  // the same seed and worker count: the same samples
  // Worker 0 made batches 0, 2, ...; worker 1 batches 1, 3, ...: different streams.
  CHECK(a[0] != a[1]);
  std::set<std::vector<float>> distinct(a.begin(), a.end());
  CHECK(distinct.size() == a.size());
  // The global stream after the epoch does not depend on what the workers drew.
  manual_seed(1);
  { auto loader = data::make_data_loader(ds, data::DataLoaderOptions(2).num_workers(2)); for (auto& batch : loader) (void)batch; }
  const float after_workers = rand<float>({1}).item();
  manual_seed(1);
  { auto loader = data::make_data_loader(ds, data::DataLoaderOptions(2).num_workers(3)); for (auto& batch : loader) (void)batch; }
  CHECK(rand<float>({1}).item() == after_workers);
}

TEST_CASE("a DataLoader passes on a worker's error and stops its workers midway") {
  auto ds = std::make_shared<Noisy>();
  ds->fail_at = 9;
  for (const int64_t workers : {0, 2}) {
    CAPTURE(workers);
    auto loader = data::make_data_loader(ds, data::DataLoaderOptions(2).num_workers(workers));
    int seen = 0;
    CHECK(error_of([&] {
            for (auto& b : loader) {
              (void)b;
              ++seen;
            }
          }) == "sample 9 is broken");
    CHECK(seen == 4);  // batches 0-3; batch 4 holds sample 9
  }
  // Leaving an epoch early joins its workers, which stop within the prefetch window.
  ds->fail_at = -1;
  ds->calls = 0;
  {
    auto loader = data::make_data_loader(ds, data::DataLoaderOptions(1).num_workers(2).prefetch_factor(2));
    for (auto& b : loader) {
      (void)b;
      break;
    }
  }
  CHECK(ds->calls <= 6);  // the first batch and at most 2 * 2 ahead (and one in flight)
  CHECK(error_of([&] { data::make_data_loader(ds, data::DataLoaderOptions(2).num_workers(-1)); }) ==
        "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.");
}

namespace {
// Writes an IDX file of bytes (gzip-compressed when gz) under the build's
// temporary directory; returns its path.
std::string write_idx(const std::string& name, const std::vector<unsigned char>& content, bool gz) {
  const std::string path = (std::filesystem::temp_directory_path() / ("tsr_test_" + name)).string();
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(gzwrite(f, content.data(), static_cast<unsigned>(content.size())) == static_cast<int>(content.size()));
    REQUIRE(gzclose(f) == Z_OK);
  } else {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(content.size()));
  }
  return path;
}
std::vector<unsigned char> idx_header(unsigned char type, std::vector<uint32_t> dims) {
  std::vector<unsigned char> h{0, 0, type, static_cast<unsigned char>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) h.push_back(static_cast<unsigned char>(d >> s));
  return h;
}
}  // namespace

TEST_CASE("IDX files read plain and gzip-compressed, and bad ones are refused") {
  // Two 2x3 "images" of bytes 0..11 and their labels 7, 200.
  std::vector<unsigned char> images = idx_header(0x08, {2, 2, 3});
  for (unsigned char v = 0; v < 12; ++v) images.push_back(v * 20);
  std::vector<unsigned char> labels = idx_header(0x08, {2});
  labels.push_back(7);
  labels.push_back(200);
  for (const bool gz : {false, true}) {
    CAPTURE(gz);
    const Tensor<float> x = io::load_idx<float>(write_idx(gz ? "a.gz" : "a", images, gz));
    CHECK(x.sizes() == Shape{2, 2, 3});
    CHECK(x.to_vector()[11] == 220.0f);
    CHECK(io::load_idx<int64_t>(write_idx(gz ? "b.gz" : "b", labels, gz)).to_vector() == std::vector<int64_t>{7, 200});
  }
  // Big-endian wider types: int16 -2, int32 70000, float 1.5, double -0.25.
  std::vector<unsigned char> shorts = idx_header(0x0B, {1});
  shorts.insert(shorts.end(), {0xFF, 0xFE});
  CHECK(io::load_idx<int64_t>(write_idx("s", shorts, false)).item() == -2);
  std::vector<unsigned char> ints = idx_header(0x0C, {1});
  ints.insert(ints.end(), {0x00, 0x01, 0x11, 0x70});
  CHECK(io::load_idx<int64_t>(write_idx("i", ints, false)).item() == 70000);
  std::vector<unsigned char> floats = idx_header(0x0D, {1});
  floats.insert(floats.end(), {0x3F, 0xC0, 0x00, 0x00});
  CHECK(io::load_idx<float>(write_idx("f", floats, false)).item() == 1.5f);
  std::vector<unsigned char> doubles = idx_header(0x0E, {1});
  doubles.insert(doubles.end(), {0xBF, 0xD0, 0, 0, 0, 0, 0, 0});
  CHECK(io::load_idx<double>(write_idx("d", doubles, false)).item() == -0.25);

  // Refused: truncated data, trailing data, a header claiming more than
  // memory (never allocated), a bad magic, an unknown type, cut gzip.
  std::vector<unsigned char> cut(images.begin(), images.end() - 1);
  CHECK(error_of([&] { io::load_idx<float>(write_idx("cut", cut, false)); })
            .find("holds 11 bytes of data, but its header (shape [2, 2, 3]) needs 12") != std::string::npos);
  std::vector<unsigned char> longer = images;
  longer.push_back(1);
  CHECK(error_of([&] { io::load_idx<float>(write_idx("long", longer, false)); }).find("holds 13 bytes") != std::string::npos);
  const std::vector<unsigned char> huge = idx_header(0x0E, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF});
  CHECK(error_of([&] { io::load_idx<float>(write_idx("huge", huge, false)); }).find("sizes overflow") != std::string::npos);
  CHECK(error_of([&] { io::load_idx<float>(write_idx("magic", {1, 2, 3, 4, 5}, false)); }).find("bad magic") != std::string::npos);
  CHECK(error_of([&] { io::load_idx<float>(write_idx("type", idx_header(0x42, {1}), false)); })
            .find("unknown element type 0x42") != std::string::npos);
  const std::string gz_path = write_idx("cut.gz", images, true);
  std::filesystem::resize_file(gz_path, std::filesystem::file_size(gz_path) - 6);
  CHECK(error_of([&] { io::load_idx<float>(gz_path); }).find("load_idx:") != std::string::npos);
  CHECK(error_of([] { io::load_idx<float>("/nonexistent/file"); }) == "load_idx: cannot open '/nonexistent/file'");
}

TEST_CASE("MNIST reads the four IDX files of a directory") {
  const auto dir = std::filesystem::temp_directory_path() / "tsr_test_mnist";
  std::filesystem::create_directories(dir);
  std::vector<unsigned char> images = idx_header(0x08, {3, 2, 2});
  for (unsigned char v = 0; v < 12; ++v) images.push_back(static_cast<unsigned char>(v * 51 % 256));
  std::vector<unsigned char> labels = idx_header(0x08, {3});
  labels.insert(labels.end(), {4, 0, 9});
  for (const char* prefix : {"train", "t10k"}) {
    std::filesystem::copy_file(write_idx("img.gz", images, true), dir / (std::string(prefix) + "-images-idx3-ubyte.gz"),
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(write_idx("lab", labels, false), dir / (std::string(prefix) + "-labels-idx1-ubyte"),
                               std::filesystem::copy_options::overwrite_existing);
  }
  data::MNIST train(dir.string());
  CHECK(train.size() == 3);
  CHECK(train.images().sizes() == Shape{3, 1, 2, 2});
  const auto [x, y] = train.get(2);
  CHECK(y.item() == 9);
  CHECK(x.to_vector()[3] == float(11 * 51 % 256) / 255.0f);
  train.normalize(0.5, 0.25);
  CHECK(std::get<0>(train.get(0)).to_vector()[0] == (0.0f - 0.5f) / 0.25f);
  CHECK(data::MNIST(dir.string(), data::MNIST::Mode::kTest).targets().to_vector() == std::vector<int64_t>{4, 0, 9});
  CHECK(error_of([] { data::MNIST("/nonexistent"); }) ==
        "MNIST: neither train-images-idx3-ubyte nor train-images-idx3-ubyte.gz is in '/nonexistent'");

  // Debian's dataset-fashion-mnist, where installed: 60000 and 10000 28x28
  // images, ten classes, 6000 and 1000 of each.
  const std::string fashion = "/usr/share/datasets/fashion-mnist";
  if (std::filesystem::exists(fashion + "/train-images-idx3-ubyte.gz")) {
    data::MNIST full(fashion);
    CHECK(full.images().sizes() == Shape{60000, 1, 28, 28});
    CHECK(amin(full.images()).item() == 0.0f);
    CHECK(amax(full.images()).item() == 1.0f);
    for (int64_t c = 0; c < 10; ++c) CHECK(sum(full.targets() == c).item() == 6000);
    CHECK(data::MNIST(fashion, data::MNIST::Mode::kTest).size() == 10000);
  }
}
