// torch.distributed's collectives over MPI, run by the test suite as
// `mpirun -np 2 test_distributed` (every rank runs every case; expected
// values are worked out from each rank's known contribution). The world
// group times out after 60 s, so a rank that fails cannot hang the suite.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <distributed/ddp.hpp>
#include <distributed/distributed.hpp>
#include <distributed/fsdp.hpp>
#include <optim/optim.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace dist = tsr::distributed;
using dist::ReduceOp;
using tsr::Tensor;

namespace {

int rank() { return dist::get_rank(); }
int world() { return dist::get_world_size(); }

// Rank r's contribution: (r + 1) * [1, 2, ..., n].
template <class T>
Tensor<T> contribution(int64_t n = 4) {
  return tsr::arange<float>(1.f, float(n + 1)).template to<T>() * T(float(rank() + 1));
}
template <class T>
Tensor<T> values(std::vector<float> v) {
  return tsr::tensor<float>(std::move(v)).template to<T>();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tsr::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the default group is every process mpirun started") {
  CHECK(dist::is_initialized());
  CHECK(world() >= 1);
  CHECK(rank() >= 0);
  CHECK(rank() < world());
  CHECK(error_of([] { dist::init_process_group(); }) == "trying to initialize the default process group twice!");
}

TEST_CASE("all_reduce: sum, average, product, minimum and maximum of every rank's tensor") {
  const float w = float(world());
  const float sum_of_ranks = w * (w + 1) / 2;  // sum of (r + 1)
  float factorial = 1;
  for (int r = 1; r <= world(); ++r) factorial *= float(r);
  const auto k = tsr::arange<float>(1.f, 5.f);
  auto t = contribution<float>();
  dist::all_reduce(t);
  CHECK(tsr::equal(t, k * sum_of_ranks));
  t = contribution<float>();
  dist::all_reduce(t, ReduceOp::AVG);
  CHECK(tsr::allclose(t, k * (sum_of_ranks / w)));
  t = contribution<float>();
  dist::all_reduce(t, ReduceOp::PRODUCT);
  CHECK(tsr::equal(t, tsr::pow(k, w) * factorial));
  t = contribution<float>();
  dist::all_reduce(t, ReduceOp::MIN);
  CHECK(tsr::equal(t, Tensor<float>(k)));
  t = contribution<float>();
  dist::all_reduce(t, ReduceOp::MAX);
  CHECK(tsr::equal(t, k * w));
}

TEST_CASE("all_reduce on every element type") {
  const float s = float(world()) * float(world() + 1) / 2;
  const auto expect = [&](auto t) {
    using T = typename decltype(t)::value_type;
    dist::all_reduce(t);
    CHECK(tsr::equal(t, values<T>({s, 2 * s, 3 * s, 4 * s})));
  };
  expect(contribution<double>());
  expect(contribution<int32_t>());
  expect(contribution<int64_t>());
  expect(contribution<tsr::half>());
  expect(contribution<tsr::bfloat16>());
  // Integers average as integers, as NCCL's average does.
  auto i = values<int64_t>({float(rank()), 7.f});
  dist::all_reduce(i, ReduceOp::AVG);
  CHECK(i.select(0, 1).item() == 7);
  // Booleans: a sum is "any", a product "all".
  auto any = values<bool>({rank() == 0 ? 1.f : 0.f, 0.f});
  dist::all_reduce(any);
  CHECK(tsr::equal(any, values<bool>({1.f, 0.f})));
  auto all = values<bool>({rank() == 0 ? 1.f : 0.f, 1.f});
  dist::all_reduce(all, ReduceOp::PRODUCT);
  CHECK(tsr::equal(all, values<bool>({world() == 1 ? 1.f : 0.f, 1.f})));
  CHECK(error_of([] { dist::all_reduce(values<bool>({1.f}), ReduceOp::AVG); }) ==
        "distributed: ReduceOp.AVG is not defined for bool tensors");
}

TEST_CASE("broadcast and reduce") {
  const int last = world() - 1;
  auto t = contribution<float>();
  dist::broadcast(t, last);
  CHECK(tsr::equal(t, tsr::arange<float>(1.f, 5.f) * float(world())));
  auto r = contribution<double>(3);
  dist::reduce(r, 0, ReduceOp::MAX);
  if (rank() == 0) CHECK(tsr::equal(r, tsr::arange<double>(1., 4.) * double(world())));
  else CHECK(tsr::equal(r, contribution<double>(3)));  // left as it was
}

TEST_CASE("all_gather, all_gather_into_tensor, reduce_scatter_tensor") {
  std::vector<Tensor<float>> list;
  for (int r = 0; r < world(); ++r) list.push_back(tsr::zeros<float>({2, 2}));
  dist::all_gather(list, contribution<float>().view({2, 2}));
  for (int r = 0; r < world(); ++r)
    CHECK(tsr::equal(list[r], tsr::arange<float>(1.f, 5.f).view({2, 2}) * float(r + 1)));

  auto out = tsr::zeros<int64_t>({world(), 3});
  dist::all_gather_into_tensor(out, tsr::full<int64_t>({3}, rank()));
  for (int r = 0; r < world(); ++r) CHECK(tsr::equal(out.select(0, r), tsr::full<int64_t>({3}, r)));

  // Block b of every rank's input is b + rank; rank b receives the sum over ranks.
  const Tensor<float> input =
      tsr::arange<float>(0.f, float(world())).view({world(), 1}).expand({world(), 2}).contiguous() + float(rank());
  auto mine = tsr::zeros<float>({2});
  dist::reduce_scatter_tensor(mine, input.view({-1}));
  const float w = float(world());
  CHECK(tsr::equal(mine, tsr::full<float>({2}, w * float(rank()) + w * (w - 1) / 2)));
  CHECK(error_of([&] { dist::all_gather_into_tensor(tsr::zeros<float>({world() + 1}), tsr::zeros<float>({1})); }) ==
        "Output tensor size must be equal to world_size times input tensor size");
}

TEST_CASE("gather, scatter and all_to_all_single") {
  std::vector<Tensor<double>> gathered;
  if (rank() == 0)
    for (int r = 0; r < world(); ++r) gathered.push_back(tsr::zeros<double>({3}));
  dist::gather(contribution<double>(3), gathered, 0);
  if (rank() == 0)
    for (int r = 0; r < world(); ++r) CHECK(tsr::equal(gathered[r], tsr::arange<double>(1., 4.) * double(r + 1)));

  std::vector<Tensor<int32_t>> pieces;
  if (rank() == 0)
    for (int r = 0; r < world(); ++r) pieces.push_back(tsr::full<int32_t>({2}, 10 * r));
  auto piece = tsr::zeros<int32_t>({2});
  dist::scatter(piece, pieces, 0);
  CHECK(tsr::equal(piece, tsr::full<int32_t>({2}, 10 * rank())));
  // Misuse, refused before anything is sent (on every rank, so none waits):
  // the source without its list, another rank with one.
  const std::vector<Tensor<int32_t>> misplaced = rank() == 0 ? std::vector<Tensor<int32_t>>{}
                                                              : std::vector<Tensor<int32_t>>{piece};
  CHECK(error_of([&] { dist::scatter(piece, misplaced, 0); }) ==
        (rank() == 0 ? "distributed: scatter_list must hold one tensor per rank of the group (" +
                           std::to_string(world()) + "), got 0"
                     : std::string("Argument ``scatter_list`` must NOT be specified on non-source ranks.")));

  // Rank r sends 100 r + q to rank q; rank q receives 100 r + q from every r.
  const Tensor<float> send = tsr::arange<float>(0.f, float(world())) + float(100 * rank());
  auto received = tsr::zeros<float>({world()});
  dist::all_to_all_single(received, send);
  CHECK(tsr::equal(received, tsr::arange<float>(0.f, float(world())) * 100.f + float(rank())));

  // Split sizes: rank r sends q + 1 rows of [100 r + q, 100 r + q] to rank
  // q, so rank q receives q + 1 such rows from every rank, in rank order.
  std::vector<int64_t> in_splits, out_splits;
  std::vector<Tensor<int64_t>> rows, expected;
  for (int q = 0; q < world(); ++q) {
    in_splits.push_back(q + 1);
    out_splits.push_back(rank() + 1);
    rows.push_back(tsr::full<int64_t>({q + 1, 2}, 100 * rank() + q));
    expected.push_back(tsr::full<int64_t>({rank() + 1, 2}, 100 * q + rank()));
  }
  const Tensor<int64_t> input = tsr::cat(rows, 0);
  auto output = tsr::zeros<int64_t>({world() * (rank() + 1), 2});
  dist::all_to_all_single(output, input, out_splits, in_splits);
  CHECK(tsr::equal(output, tsr::cat(expected, 0)));
  std::vector<int64_t> wrong = in_splits;
  wrong[0] += 1;
  CHECK(error_of([&] { dist::all_to_all_single(output, input, out_splits, wrong); }) ==
        "Split sizes doesn't match total dim 0 size");
  CHECK(error_of([&] { dist::all_to_all_single(output, input, out_splits, std::vector<int64_t>(world() + 1, 0)); }) ==
        "Number of tensor splits not equal to group size");
}

TEST_CASE("async_op: a Work to wait on, the result in the tensor") {
  auto t = contribution<float>(1 << 16);
  auto work = dist::all_reduce(t, ReduceOp::SUM, nullptr, true);
  REQUIRE(work != nullptr);
  work->wait();
  CHECK(work->is_completed());
  const float s = float(world()) * float(world() + 1) / 2;
  CHECK(t.select(0, 65535).item() == 65536.f * s);
  auto barrier = dist::barrier(nullptr, true);
  barrier->wait();
  CHECK(barrier->is_completed());
  CHECK(dist::all_reduce(t) == nullptr);  // not async: PyTorch's None
}

TEST_CASE("send and recv around a ring") {
  if (world() == 1) return;
  const int next = (rank() + 1) % world(), prev = (rank() + world() - 1) % world();
  auto out = tsr::full<int64_t>({5}, 1000 + rank());
  auto in = tsr::zeros<int64_t>({5});
  auto sending = dist::isend(out, next, nullptr, 3);
  CHECK(dist::recv(in, prev, nullptr, 3) == prev);
  sending->wait();
  CHECK(tsr::equal(in, tsr::full<int64_t>({5}, 1000 + prev)));
  // From any rank: recv says which.
  auto again = dist::isend(out, next, nullptr, 4);
  CHECK(dist::recv(in, -1, nullptr, 4) == prev);
  again->wait();
}

TEST_CASE("new_group: a subset of the ranks, a placeholder elsewhere") {
  dist::ProcessGroup* first = dist::new_group({0});
  if (rank() == 0) {
    CHECK(dist::get_rank(first) == 0);
    CHECK(dist::get_world_size(first) == 1);
    auto t = contribution<float>();
    dist::all_reduce(t, ReduceOp::SUM, first);
    CHECK(tsr::equal(t, contribution<float>()));  // a group of one
  } else {
    CHECK(dist::get_rank(first) == -1);
    CHECK(dist::all_reduce(contribution<float>(), ReduceOp::SUM, first) == nullptr);  // not a member: nothing
  }
}

TEST_CASE("a stuck operation times out with an error instead of hanging") {
  if (world() == 1) return;
  std::vector<int> everyone;
  for (int r = 0; r < world(); ++r) everyone.push_back(r);
  dist::ProcessGroup* quick = dist::new_group(everyone, std::chrono::milliseconds(200));
  // A receive nobody sends: withdrawn after the timeout; the group stays usable.
  if (rank() == 0)
    CHECK(error_of([&] { dist::recv(tsr::zeros<float>({1}), 1, quick, 99); }) ==
          "distributed: recv timed out after 200 ms on rank 0 of " + std::to_string(world()) +
              " (another rank did not join it)");
  // A barrier that rank 0 enters alone: it times out there; then rank 0
  // tells the others, which join it, completing the abandoned barrier.
  const auto go = tsr::zeros<int32_t>({1});
  if (rank() == 0) {
    CHECK(error_of([&] { dist::barrier(quick); }) ==
          "distributed: barrier timed out after 200 ms on rank 0 of " + std::to_string(world()) +
              " (another rank did not join it)");
    for (int r = 1; r < world(); ++r) dist::send(go, r);
  } else {
    dist::recv(go, 0);
    dist::barrier(quick);
  }
  dist::barrier();
}

TEST_CASE("misuse: clear errors") {
  const auto t = tsr::zeros<float>({2, 3}).t();
  CHECK(error_of([&] { dist::all_reduce(t); }) == "Tensors must be contiguous");
  CHECK(error_of([] { dist::broadcast(tsr::zeros<float>({1}), world()); }) ==
        "distributed: broadcast: src rank " + std::to_string(world()) + " is out of range for a group of " +
            std::to_string(world()));
  CHECK(error_of([] { dist::init_process_group("gloo"); }) == "trying to initialize the default process group twice!");
}

namespace {

using DDP = tsr::nn::parallel::DistributedDataParallel<tsr::nn::Linear>;

// Rank r's batch, and the loss every test differentiates.
Tensor<float> batch(int r) { return tsr::arange<float>(0.f, 8.f).view({2, 4}) * float(r + 1) / 10.f - 0.3f; }
Tensor<float> loss(tsr::nn::Linear& m, const Tensor<float>& x) {
  const Tensor<float> y = m(x);
  return tsr::sum(y * y);
}

// A plain copy of a model's parameters (no DDP), to work out expectations.
tsr::nn::Linear copy_of(tsr::nn::Linear& m) {
  tsr::nn::Linear c(4, 3);
  tsr::NoGradGuard no_grad;
  c->weight.as<float>().copy_(m->weight.as<float>());
  c->bias.as<float>().copy_(m->bias.as<float>());
  return c;
}

// The average over ranks of each rank's gradient of the loss on its batch,
// times `times` (computed on every rank from the known batches).
std::pair<Tensor<float>, Tensor<float>> averaged_gradients(tsr::nn::Linear& m, float times = 1.f) {
  Tensor<float> w = tsr::zeros<float>({3, 4}), b = tsr::zeros<float>({3});
  for (int r = 0; r < world(); ++r) {
    auto c = copy_of(m);
    loss(c, batch(r)).backward();
    w += c->weight.as<float>().grad() * (times / float(world()));
    b += c->bias.as<float>().grad() * (times / float(world()));
  }
  return {w, b};
}

}  // namespace

TEST_CASE("DistributedDataParallel: rank 0's parameters everywhere, gradients averaged over the ranks") {
  tsr::manual_seed(uint64_t(17 + rank()));  // every rank initializes differently
  DDP ddp(tsr::nn::Linear(4, 3));
  auto& m = ddp.module();
  // The same parameters on every rank after construction.
  auto gathered = tsr::zeros<float>({world(), 12});
  dist::all_gather_into_tensor(gathered, m->weight.as<float>().detach().reshape({12}));
  for (int r = 1; r < world(); ++r) CHECK(tsr::equal(gathered.select(0, r), gathered.select(0, 0)));
  // Weight and bias: one bucket, in reverse order of registration.
  CHECK(ddp.buckets() == std::vector<std::vector<std::size_t>>{{1, 0}});

  const auto [w, b] = averaged_gradients(m);
  // One process on every rank's batch at once: the loss is a sum over the
  // samples, so its gradient is world size times the average.
  auto single = copy_of(m);
  std::vector<Tensor<float>> batches;
  for (int r = 0; r < world(); ++r) batches.push_back(batch(r));
  loss(single, tsr::cat(batches, 0)).backward();
  loss(m, batch(rank())).backward();
  CHECK(tsr::allclose(m->weight.as<float>().grad(), w, 1e-6, 1e-7));
  CHECK(tsr::allclose(m->bias.as<float>().grad(), b, 1e-6, 1e-7));
  CHECK(tsr::allclose(m->weight.as<float>().grad() * float(world()), single->weight.as<float>().grad(), 1e-6, 1e-7));
  CHECK(tsr::allclose(m->bias.as<float>().grad() * float(world()), single->bias.as<float>().grad(), 1e-6, 1e-7));
}

TEST_CASE("DistributedDataParallel: no_sync accumulates locally, the next backward averages the sums") {
  // The first bucket holds up to 1 MiB whatever the cap (PyTorch's rule): a
  // 1.2 MB weight goes to a second bucket, after the bias.
  CHECK(DDP(tsr::nn::Linear(600, 500)).buckets() == std::vector<std::vector<std::size_t>>{{1}, {0}});
  DDP ddp(tsr::nn::Linear(4, 3), {.bucket_cap_mb = 1e-7});
  CHECK(ddp.buckets() == std::vector<std::vector<std::size_t>>{{1, 0}});
  auto& m = ddp.module();
  const auto [w2, b2] = averaged_gradients(m, 2.f);
  auto local = copy_of(m);
  loss(local, batch(rank())).backward();
  {
    auto guard = ddp.no_sync();
    loss(m, batch(rank())).backward();
  }
  CHECK(tsr::allclose(m->weight.as<float>().grad(), local->weight.as<float>().grad(), 1e-5, 1e-6));  // not averaged
  loss(m, batch(rank())).backward();
  CHECK(tsr::allclose(m->weight.as<float>().grad(), w2, 1e-5, 1e-6));
  CHECK(tsr::allclose(m->bias.as<float>().grad(), b2, 1e-5, 1e-6));
}

TEST_CASE("DistributedDataParallel: ranks with different models are refused") {
  if (world() == 1) return;
  CHECK(error_of([] { tsr::nn::parallel::DistributedDataParallel<tsr::nn::Linear> ddp(tsr::nn::Linear(4, 3 + rank())); }) ==
        "DDP expects same model across all ranks, but the parameter shapes of rank 0 and rank 1 differ.");
  // Rank 0 with a bias, the others without: the counts differ (every rank reports the same).
  CHECK(error_of([] {
          tsr::nn::parallel::DistributedDataParallel<tsr::nn::Linear> ddp(
              tsr::nn::Linear(tsr::nn::LinearOptions(4, 3).bias(rank() == 0)));
        }) == "DDP expects same model across all ranks, but Rank 0 has 2 params, while rank 1 has inconsistent 1 params.");
}

TEST_CASE("DistributedDataParallel: a rank that throws makes the others fail with an error, not hang") {
  if (world() == 1) return;
  std::vector<int> everyone;
  for (int r = 0; r < world(); ++r) everyone.push_back(r);
  dist::ProcessGroup* quick = dist::new_group(everyone, std::chrono::milliseconds(200));
  DDP ddp(tsr::nn::Linear(4, 3), {.process_group = quick});
  const int last = world() - 1;
  const auto go = tsr::zeros<int32_t>({1});
  if (rank() != last) {
    // Backward's average never completes: the last rank is not there.
    CHECK(error_of([&] {
            const Tensor<float> y = ddp(batch(rank()));
            tsr::sum(y * y).backward();
          }) == "distributed: all_reduce timed out after 200 ms on rank " + std::to_string(rank()) + " of " +
                    std::to_string(world()) + " (another rank did not join it)");
    dist::send(go, last);
  } else {
    // A bad batch: the forward throws and this rank never reaches backward.
    CHECK(error_of([&] { (void)ddp(tsr::zeros<float>({2, 5})); }) ==
          "mat1 and mat2 shapes cannot be multiplied (2x5 and 4x3)");  // PyTorch 1.13's text
    // (For the test to end cleanly, it joins the abandoned average once the
    // others have given up on it; a real program would have exited.)
    for (int r = 0; r < last; ++r) dist::recv(go, r);
    dist::all_reduce(tsr::zeros<float>({15}), ReduceOp::AVG, quick);
  }
  dist::barrier();
}

namespace {

// Two heads on one input; the second only where asked (an unused parameter
// elsewhere).
struct TwoHeadsImpl : tsr::nn::Module {
  tsr::nn::Linear a{nullptr}, b{nullptr};
  TwoHeadsImpl() {
    a = register_module("a", tsr::nn::Linear(4, 3));
    b = register_module("b", tsr::nn::Linear(4, 3));
  }
  Tensor<float> forward(const Tensor<float>& x, bool use_b) { return use_b ? Tensor<float>(a(x) + b(x)) : a(x); }
};
using TwoHeads = tsr::nn::ModuleHolder<TwoHeadsImpl>;

// The weights' average gradient when rank r uses the second head iff uses(r):
// plain copies, one per rank, from the same parameters.
std::vector<Tensor<float>> averaged_two_heads(TwoHeads& m, bool (*uses)(int)) {
  std::vector<Tensor<float>> avg;
  for (const auto& p : m->parameters()) avg.push_back(tsr::zeros<float>(p.sizes()));
  for (int r = 0; r < world(); ++r) {
    TwoHeads c;
    c->load_state_dict(m->state_dict());
    const Tensor<float> y = c(batch(r), uses(r));
    tsr::sum(y * y).backward();
    const auto ps = c->parameters();
    for (std::size_t i = 0; i < ps.size(); ++i)
      if (ps[i].as<float>().grad().defined()) avg[i] += ps[i].as<float>().grad() / float(world());
  }
  return avg;
}

}  // namespace

TEST_CASE("DistributedDataParallel: find_unused_parameters") {
  using TwoHeadsDDP = tsr::nn::parallel::DistributedDataParallel<TwoHeads>;
  SUBCASE("a head only rank 0 uses: its gradient is rank 0's over the world size") {
    TwoHeadsDDP ddp(TwoHeads(), {.find_unused_parameters = true});
    const auto expected = averaged_two_heads(ddp.module(), [](int r) { return r == 0; });
    for (int step = 0; step < 2; ++step) {  // the second backward accumulates
      const Tensor<float> y = ddp(batch(rank()), rank() == 0);
      tsr::sum(y * y).backward();
    }
    const auto ps = ddp.parameters();
    for (std::size_t i = 0; i < ps.size(); ++i)
      CHECK(tsr::allclose(ps[i].as<float>().grad(), expected[i] * 2.f, 1e-5, 1e-6));
  }
  SUBCASE("a head no rank uses keeps no gradient") {
    TwoHeadsDDP ddp(TwoHeads(), {.find_unused_parameters = true});
    const auto expected = averaged_two_heads(ddp.module(), [](int) { return false; });
    const Tensor<float> y = ddp(batch(rank()), false);
    tsr::sum(y * y).backward();
    CHECK(tsr::allclose(ddp.module()->a->weight.as<float>().grad(), expected[0], 1e-5, 1e-6));
    CHECK(!ddp.module()->b->weight.as<float>().grad().defined());
    CHECK(!ddp.module()->b->bias.as<float>().grad().defined());
  }
  SUBCASE("without it, an unused parameter is PyTorch's error at the next forward") {
    TwoHeadsDDP ddp((TwoHeads()));
    const Tensor<float> y = ddp(batch(rank()), false);
    tsr::sum(y * y).backward();
    CHECK(error_of([&] { (void)ddp(batch(rank()), false); }).rfind(
              "Expected to have finished reduction in the prior iteration", 0) == 0);
  }
}

namespace {

namespace nn = tsr::nn;
using FSDP = nn::parallel::FullyShardedDataParallel<nn::Linear>;

// Rank r's batch at a step, and its target.
Tensor<float> step_input(int r, int step) {
  return tsr::sin(tsr::arange<float>(0.f, 12.f).view({3, 4}) * float(r + 2 * step + 1)) * 0.8f;
}
Tensor<float> step_target(int r, int step) { return tsr::cos(tsr::arange<float>(0.f, 9.f).view({3, 3}) + float(r - step)); }

// The three ways of training the same model (the same seed, layer by layer).
nn::Sequential plain_model() {
  tsr::manual_seed(5);
  nn::Linear l1(4, 5);
  nn::Linear l2(5, 3);
  return nn::Sequential(l1, nn::Tanh(), l2);
}
nn::Sequential sharded_model() {
  tsr::manual_seed(5);
  FSDP l1(nn::Linear(4, 5));  // 25 elements: uneven shards on 2 and 3 ranks
  FSDP l2(nn::Linear(5, 3));
  return nn::Sequential(l1, nn::Tanh(), l2);
}

template <class Model>
void train(Model& model, const std::vector<tsr::AnyTensor>& params, int rank_of_batch, int steps) {
  tsr::optim::SGD sgd(params, tsr::optim::SGDOptions(0.1).momentum(0.9));
  for (int step = 0; step < steps; ++step) {
    sgd.zero_grad();
    Tensor<float> x, t;
    if (rank_of_batch >= 0) {
      x = step_input(rank_of_batch, step);
      t = step_target(rank_of_batch, step);
    } else {  // every rank's batch at once
      std::vector<Tensor<float>> xs, ts;
      for (int r = 0; r < world(); ++r) {
        xs.push_back(step_input(r, step));
        ts.push_back(step_target(r, step));
      }
      x = tsr::cat(xs, 0);
      t = tsr::cat(ts, 0);
    }
    const Tensor<float> y = model(x);
    nn::functional::mse_loss(y, t).backward();
    sgd.step();
  }
}

void check_close(const nn::StateDict& a, const nn::StateDict& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].first == b[i].first);
    CHECK(tsr::allclose(a[i].second.as<float>(), b[i].second.as<float>(), 1e-5, 1e-6));
  }
}

}  // namespace

TEST_CASE("DDP and FSDP training equal single-process training on the concatenated batch") {
  constexpr int kSteps = 3;
  auto plain = plain_model();
  train(plain, plain->parameters(), -1, kSteps);

  tsr::nn::parallel::DistributedDataParallel<nn::Sequential> ddp(plain_model());
  train(ddp, ddp.parameters(), rank(), kSteps);
  check_close(ddp.module()->state_dict(), plain->state_dict());

  auto sharded = sharded_model();
  // The optimizer sees each block's shard: ceil(25 / world) and ceil(18 / world) elements.
  const auto params = sharded->parameters();
  REQUIRE(params.size() == 2);
  CHECK(params[0].numel() == (25 + world() - 1) / world());
  CHECK(params[1].numel() == (18 + world() - 1) / world());
  CHECK(sharded->named_parameters()[0].first == "0.flat_param");
  train(sharded, params, rank(), kSteps);
  check_close(nn::parallel::full_state_dict(*sharded), plain->state_dict());
}

TEST_CASE("FSDP: a block's parameters hold no memory outside its forward and backward") {
  tsr::manual_seed(9);
  std::vector<FSDP> blocks;
  nn::Sequential model;
  for (int i = 0; i < 4; ++i) {
    blocks.emplace_back(nn::Linear(32, 32));  // 1056 elements each
    model->push_back(blocks.back());
    model->push_back(nn::Tanh());
  }
  const int64_t shard = (1056 + world() - 1) / world();
  const int64_t padded_block = shard * world();
  // Only the shards are held between uses.
  CHECK(nn::parallel::fsdp_parameter_bytes().current == 4 * shard * 4);
  const auto weight = blocks[0]->module()->weight.as<float>();
  CHECK(weight.storage()->nbytes() == 0);
  CHECK(error_of([&] { (void)weight.to_vector(); }).rfind("setStorage: sizes [32, 32], strides [32, 1]", 0) == 0);

  nn::parallel::reset_fsdp_peak_parameter_bytes();
  const Tensor<float> x = tsr::randn<float>({8, 32});
  const Tensor<float> y = model(x);
  CHECK(weight.storage()->nbytes() == 0);  // saved by autograd, freed all the same
  tsr::sum(y * y).backward();
  const auto bytes = nn::parallel::fsdp_parameter_bytes();
  CHECK(bytes.current == 4 * shard * 4);
  // The peak: this rank's shards and one whole block at a time, against
  // 4 * 1056 * 4 bytes for the whole model on every rank.
  CHECK(bytes.peak == (4 * shard + padded_block) * 4);
  for (const auto& p : model->parameters()) CHECK(p.as<float>().grad().numel() == shard);
}

int main(int argc, char** argv) {
  tsr::distributed::init_process_group("mpi", std::chrono::seconds(60));
  doctest::Context context(argc, argv);
  const int status = context.run();
  tsr::distributed::destroy_process_group();
  return status;
}
