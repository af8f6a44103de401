// nn::parallel::DistributedDataParallel, as PyTorch's: every rank holds the
// whole model and a share of the data; backward averages the gradients
// over the ranks, bucket by bucket, while it is still running.
//
// At construction the ranks' parameter shapes are compared and rank 0's
// parameters and buffers are broadcast. The parameters are grouped into
// buckets in reverse order of registration (about the order backward
// produces their gradients): the first bucket up to 1 MiB, the others up to
// bucket_cap_mb. Each parameter gets a post-accumulate-grad hook; when every
// parameter of a bucket has its gradient, the bucket's gradients are packed
// into one flat tensor and an asynchronous all_reduce starts on it, so the
// communication overlaps the rest of backward. When the last bucket has
// started, the hook waits for all of them and writes the averages back into
// the .grad tensors. Inside no_sync(), gradients only accumulate locally.
//
// With find_unused_parameters, each forward walks the autograd graph from
// its output to find the parameters it did not use; those count as ready
// (a zero contribution) when backward starts, and a parameter no rank used
// keeps its .grad as it was, as in PyTorch.
//
// Include <distributed/ddp.hpp> (it includes nn and the collectives).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "../nn/nn.hpp"
#include "collectives.hpp"

namespace tsr::nn::parallel {

struct DistributedDataParallelOptions {
  // Buckets after the first hold up to this many MiB of gradients.
  double bucket_cap_mb = 25;
  // Rank 0's buffers (running statistics) are broadcast before each forward.
  bool broadcast_buffers = true;
  // The group to average over; null: the default group.
  distributed::ProcessGroup* process_group = nullptr;
  // Find, after each forward, the parameters its output does not depend on
  // (a walk of the graph; off by default, as in PyTorch, for its cost).
  bool find_unused_parameters = false;
};

namespace detail {

// The state the hooks share with the wrapper (held by both).
struct DdpState {
  struct Bucket {
    std::vector<std::size_t> params;  // indices into DdpState::params
    std::size_t pending = 0;          // parameters whose gradient has not arrived
    AnyTensor flat;                   // the gradients, packed
    std::shared_ptr<distributed::Work> work;
  };
  std::vector<AnyTensor> params;
  std::vector<std::size_t> bucket_of;  // bucket of each parameter
  std::vector<Bucket> buckets;
  std::size_t launched = 0;  // buckets whose all_reduce has started this iteration
  bool started = false;      // some gradient arrived this iteration
  bool sync = true;          // false inside no_sync()
  distributed::ProcessGroup* group = nullptr;
  // With find_unused_parameters: whether the last forward used each
  // parameter (1) or not (0); empty otherwise (every parameter is used).
  Tensor<int32_t> used;

  void reset() {
    for (Bucket& b : buckets) {
      b.pending = b.params.size();
      b.work.reset();
    }
    launched = 0;
    started = false;
  }

  // The parameters the graph behind `output` accumulates into.
  void find_used(const std::shared_ptr<autograd::Node>& output) {
    used = tsr::zeros<int32_t>({int64_t(params.size())});
    // Sets, not lists: the walk runs after every forward, over graphs of
    // thousands of nodes.
    std::unordered_set<const TensorImpl*> reached;
    std::unordered_set<const autograd::Node*> seen;
    std::vector<const autograd::Node*> stack;
    if (output) stack.push_back(output.get());
    while (!stack.empty()) {
      const autograd::Node* n = stack.back();
      stack.pop_back();
      if (!seen.insert(n).second) continue;
      if (const TensorImpl* leaf = n->accumulates_into()) reached.insert(leaf);
      for (const auto& next : n->next)
        if (next) stack.push_back(next.get());
    }
    for (std::size_t i = 0; i < params.size(); ++i)
      used(int64_t(i)) = reached.contains(params[i].visit([](const auto& t) { return t.impl_ptr().get(); }));
  }

  // A parameter's gradient has been accumulated.
  void ready(std::size_t i) {
    if (!sync) return;
    if (!started) {
      started = true;
      // The parameters the forward did not use contribute nothing: ready now.
      if (used.defined())
        for (int64_t k = 0; k < used.numel(); ++k)
          if (!used(k)) mark(std::size_t(k));
    }
    mark(i);
  }

  void mark(std::size_t i) {
    Bucket& b = buckets[bucket_of[i]];
    if (--b.pending > 0) return;
    launch(b);
    if (++launched == buckets.size()) finish();
  }

  void launch(Bucket& b) {
    b.flat.visit([&]<class T>(Tensor<T>& flat) {
      int64_t at = 0;
      for (const std::size_t p : b.params) {
        const Tensor<T>& param = params[p].as<T>();
        const Tensor<T> grad = param.grad();
        const int64_t n = param.numel();
        if (grad.defined()) flat.slice(0, at, at + n).copy_(grad.reshape({n}));
        else flat.slice(0, at, at + n).zero_();  // unused here
        at += n;
      }
      b.work = distributed::all_reduce(flat, distributed::ReduceOp::AVG, group, true);
    });
  }

  void finish() {
    // A parameter some rank used gets the average; one no rank used keeps its .grad.
    if (used.defined()) distributed::all_reduce(used, distributed::ReduceOp::MAX, group);
    for (Bucket& b : buckets) {
      b.work->wait();
      b.flat.visit([&]<class T>(Tensor<T>& flat) {
        int64_t at = 0;
        for (const std::size_t p : b.params) {
          Tensor<T>& param = params[p].as<T>();
          const int64_t n = param.numel();
          const Tensor<T> average = flat.slice(0, at, at + n).view(param.sizes());
          at += n;
          if (used.defined() && !used(int64_t(p))) continue;
          Tensor<T>& grad = param.mutable_grad();
          if (grad.defined()) grad.copy_(average);
          else grad = average.clone();
        }
      });
    }
    reset();
  }
};

}  // namespace detail

template <class M>
class DistributedDataParallel {
 public:
  explicit DistributedDataParallel(M module, DistributedDataParallelOptions options = {})
      : module_(std::move(module)), options_(options), state_(std::make_shared<detail::DdpState>()) {
    state_->group = options.process_group;
    state_->params = module_->parameters();
    NoGradGuard no_grad;
    check_same_model();
    for (AnyTensor& p : state_->params)
      p.visit([&](auto& t) { distributed::broadcast(t, 0, state_->group); });
    sync_buffers();
    make_buckets();
    for (std::size_t i = 0; i < state_->params.size(); ++i) {
      std::weak_ptr<detail::DdpState> weak = state_;
      state_->params[i].visit([&]<class T>(Tensor<T>& t) {
        t.register_post_accumulate_grad_hook([weak, i](Tensor<T>&) {
          if (auto s = weak.lock()) s->ready(i);
        });
      });
    }
    state_->reset();
  }

  // The wrapped module's forward (after broadcasting rank 0's buffers).
  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    tsr::detail::check(!state_->started,
                       "Expected to have finished reduction in the prior iteration before starting a new one. This "
                       "error indicates that your module has parameters that were not used in producing loss.");
    if (options_.broadcast_buffers) {
      NoGradGuard no_grad;
      sync_buffers();
    }
    decltype(auto) output = module_(std::forward<Args>(args)...);
    if (options_.find_unused_parameters && state_->sync && tsr::detail::grad_mode_flag()) {
      std::shared_ptr<autograd::Node> root;
      if constexpr (requires { output.visit([](const auto&) {}); })
        output.visit([&](const auto& t) { root = t.requires_grad() ? tsr::detail::gradient_edge(t) : nullptr; });
      else
        root = output.requires_grad() ? tsr::detail::gradient_edge(output) : nullptr;
      state_->find_used(root);
    }
    return output;
  }
  template <class... Args>
  decltype(auto) forward(Args&&... args) {
    return (*this)(std::forward<Args>(args)...);
  }

  M& module() { return module_; }
  std::vector<AnyTensor> parameters() const { return module_->parameters(); }
  // Bucket b's parameters (indices into parameters()), in the order they are packed.
  std::vector<std::vector<std::size_t>> buckets() const {
    std::vector<std::vector<std::size_t>> out;
    for (const auto& b : state_->buckets) out.push_back(b.params);
    return out;
  }

  // While it lives, backward accumulates gradients locally (gradient
  // accumulation); the first backward after it averages the sums.
  class NoSync {
   public:
    explicit NoSync(std::shared_ptr<detail::DdpState> s) : state_(std::move(s)) { state_->sync = false; }
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;
    ~NoSync() { state_->sync = true; }

   private:
    std::shared_ptr<detail::DdpState> state_;
  };
  [[nodiscard]] NoSync no_sync() { return NoSync(state_); }

 private:
  // PyTorch's check that every rank wraps the same model.
  void check_same_model() {
    distributed::ProcessGroup& g = distributed::detail::group_or_world(state_->group);
    const int world = g.size();
    std::vector<int64_t> shapes;
    for (const AnyTensor& p : state_->params) {
      shapes.push_back(p.dim());
      for (const int64_t s : p.sizes()) shapes.push_back(s);
    }
    const auto counts = tsr::zeros<int64_t>({world, 2});
    distributed::all_gather_into_tensor(
        counts, tsr::tensor<int64_t>({int64_t(state_->params.size()), int64_t(shapes.size())}), state_->group);
    const auto c = counts.to_vector();
    for (int r = 1; r < world; ++r) {
      tsr::detail::check(c[2 * r] == c[0], "DDP expects same model across all ranks, but Rank 0 has ", c[0],
                         " params, while rank ", r, " has inconsistent ", c[2 * r], " params.");
      tsr::detail::check(c[2 * r + 1] == c[1], "DDP expects same model across all ranks, but the parameter shapes of "
                                               "rank 0 and rank ", r, " differ.");
    }
    const auto all = tsr::zeros<int64_t>({world, int64_t(shapes.size())});
    distributed::all_gather_into_tensor(all, tsr::tensor<int64_t>(shapes), state_->group);
    const auto v = all.to_vector();
    for (int r = 1; r < world; ++r)
      for (std::size_t k = 0; k < shapes.size(); ++k)
        tsr::detail::check(v[r * shapes.size() + k] == v[k], "DDP expects same model across all ranks, but the "
                                                             "parameter shapes of rank 0 and rank ", r, " differ.");
  }

  void sync_buffers() {
    for (AnyTensor b : module_->buffers())
      b.visit([&](auto& t) { distributed::broadcast(t, 0, state_->group); });
  }

  // Reverse order of registration; one element type per bucket; the first
  // bucket up to 1 MiB (PyTorch's first-bucket size), the others up to the cap.
  void make_buckets() {
    auto& s = *state_;
    s.bucket_of.assign(s.params.size(), 0);
    const double first_cap = 1 << 20, cap = options_.bucket_cap_mb * (1 << 20);
    double bytes = 0;
    for (std::size_t k = s.params.size(); k-- > 0;) {
      const AnyTensor& p = s.params[k];
      const double n = double(p.numel()) * double(p.visit([]<class T>(const Tensor<T>&) { return sizeof(T); }));
      const bool full = bytes > 0 && bytes + n > (s.buckets.size() == 1 ? first_cap : cap);
      if (s.buckets.empty() || full ||
          std::string_view(s.params[s.buckets.back().params.front()].dtype_name()) != p.dtype_name()) {
        s.buckets.emplace_back();
        bytes = 0;
      }
      s.buckets.back().params.push_back(k);
      s.bucket_of[k] = s.buckets.size() - 1;
      bytes += n;
    }
    for (auto& b : s.buckets) {
      int64_t total = 0;
      for (const std::size_t p : b.params) total += s.params[p].numel();
      s.params[b.params.front()].visit([&]<class T>(const Tensor<T>&) { b.flat = AnyTensor(tsr::zeros<T>({total})); });
    }
  }

  M module_;
  DistributedDataParallelOptions options_;
  std::shared_ptr<detail::DdpState> state_;
};

}  // namespace tsr::nn::parallel
