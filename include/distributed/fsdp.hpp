// nn::parallel::FullyShardedDataParallel, as PyTorch's FSDP: each wrapped
// block keeps only its rank's share of its parameters between uses.
//
// At construction the block's parameters are flattened into one padded flat
// parameter of world_size equal shards; each rank keeps its shard (the one
// parameter the wrapper registers, "flat_param", which the optimizer steps)
// and the block's own parameters become views of the flat parameter's
// storage, which is then resized to 0 bytes. Around each use:
//
//   forward:  resize the storage up, all-gather the shards into it (the
//             block's parameters are whole again), run the block, resize
//             it back to 0. Autograd keeps the parameters it saved: tensors
//             whose storage now holds nothing.
//   backward: a hook on the block's output gathers the storage again before
//             the block's backward runs; when every parameter's gradient
//             has been accumulated, the gradients are packed, reduce-
//             scattered (averaged) so each rank keeps its shard's gradient
//             in flat_param's .grad, and the storage goes back to 0.
//
// That refill is the storage protocol of Storage::resize_: the first write
// into a storage resized up from 0 restores its content rather than
// modifying it, so the saved parameters pass autograd's version check,
// while a genuine in-place write to one still fails it.
//
// Include <distributed/fsdp.hpp> (it includes nn and the collectives).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../nn/nn.hpp"
#include "collectives.hpp"

namespace tsr::nn::parallel {

struct FullyShardedDataParallelOptions {
  // Broadcast rank 0's parameters and buffers before sharding (PyTorch's
  // sync_module_states; off as there: each rank then keeps its shard of its
  // own initialization).
  bool sync_module_states = false;
  // The group to shard over; null: the default group.
  distributed::ProcessGroup* process_group = nullptr;
};

// Bytes of parameter storage the FSDP blocks of this process hold: every
// shard, plus the blocks gathered at the moment. `peak` is the most since
// the last reset_fsdp_peak_parameter_bytes().
struct FsdpParameterBytes {
  int64_t current = 0;
  int64_t peak = 0;
};

namespace detail {

inline FsdpParameterBytes& fsdp_bytes() {
  static FsdpParameterBytes bytes;
  return bytes;
}
inline void count_fsdp_bytes(int64_t delta) {
  FsdpParameterBytes& b = fsdp_bytes();
  b.current += delta;
  b.peak = std::max(b.peak, b.current);
}

// What the wrapper needs of a block's flat parameter, whatever its element type.
class FlatParameter {
 public:
  virtual ~FlatParameter() = default;
  // Gathers the full flat parameter (nothing if it is gathered).
  virtual void unshard() = 0;
  // Frees it (nothing if it is free).
  virtual void reshard() = 0;
  virtual bool gathered() const = 0;
  // Called before the block's backward (from a hook on its output).
  virtual void pre_backward() = 0;
  // True from a block's backward starting until its gradients were reduced.
  virtual bool in_backward() const = 0;
};

template <class T>
class TypedFlatParameter final : public FlatParameter, public std::enable_shared_from_this<TypedFlatParameter<T>> {
 public:
  // params: the block's parameters (every one a T).
  TypedFlatParameter(std::vector<Tensor<T>> params, distributed::ProcessGroup* group)
      : params_(std::move(params)), group_(group) {
    distributed::ProcessGroup& g = distributed::detail::group_or_world(group_);
    tsr::detail::check(g.is_member(), "FullyShardedDataParallel: this process is not a member of the process group");
    int64_t total = 0;
    for (const Tensor<T>& p : params_) {
      offsets_.push_back(total);
      total += p.numel();
    }
    shard_size_ = (total + g.size() - 1) / g.size();
    rank_ = g.rank();
    world_ = g.size();
  }

  TypedFlatParameter(const TypedFlatParameter&) = delete;
  TypedFlatParameter& operator=(const TypedFlatParameter&) = delete;
  ~TypedFlatParameter() override {
    if (!shard_.defined()) return;
    count_fsdp_bytes(-bytes(shard_size_));
    if (gathered()) count_fsdp_bytes(-bytes(padded()));
  }

  // Flattens the parameters into the flat parameter, keeps this rank's
  // shard, makes the parameters views of the flat storage and frees it.
  // Returns the shard (the wrapper registers it as its parameter).
  Tensor<T> flatten() {
    const NoGradGuard no_grad;
    flat_ = tsr::zeros<T>({padded()});
    count_fsdp_bytes(bytes(padded()));
    for (std::size_t i = 0; i < params_.size(); ++i) {
      Tensor<T>& p = params_[i];
      const int64_t n = p.numel();
      flat_.slice(0, offsets_[i], offsets_[i] + n).copy_(p.reshape({n}));
      p.set_(flat_.storage(), offsets_[i], p.sizes());
    }
    shard_ = flat_.slice(0, rank_ * shard_size_, (rank_ + 1) * shard_size_).clone();
    count_fsdp_bytes(bytes(shard_size_));
    reshard();
    return shard_;
  }

  // The registered slot's handle (the same tensor as flatten's result, as
  // the module holds it), and a post-accumulate-grad hook on every parameter.
  void attach(Tensor<T> registered) {
    shard_ = std::move(registered);
    for (std::size_t i = 0; i < params_.size(); ++i) {
      std::weak_ptr<TypedFlatParameter> weak = this->shared_from_this();
      params_[i].register_post_accumulate_grad_hook([weak](Tensor<T>&) {
        if (auto s = weak.lock()) s->gradient_ready();
      });
    }
  }

  void unshard() override {
    if (gathered()) return;
    flat_.storage()->resize_(static_cast<std::size_t>(bytes(padded())));
    count_fsdp_bytes(bytes(padded()));
    // The fill of the resized storage (not a modification: see resize_).
    distributed::all_gather_into_tensor(flat_, shard_.detach(), group_);
  }
  void reshard() override {
    if (!gathered()) return;
    flat_.storage()->resize_(0);
    count_fsdp_bytes(-bytes(padded()));
  }
  bool gathered() const override { return flat_.storage()->nbytes() != 0; }

  void pre_backward() override {
    if (in_backward_) return;  // the block's output was used more than once
    in_backward_ = true;
    pending_ = params_.size();
    unshard();
  }
  bool in_backward() const override { return in_backward_; }

 private:
  int64_t padded() const { return shard_size_ * world_; }
  static int64_t bytes(int64_t elements) { return elements * int64_t(sizeof(T)); }

  // Every parameter's gradient has been accumulated: average them over the
  // ranks, keep this rank's shard of the result, free the rest.
  void gradient_ready() {
    if (!in_backward_ || --pending_ > 0) return;
    const NoGradGuard no_grad;
    auto flat_grad = tsr::zeros<T>({padded()});
    for (std::size_t i = 0; i < params_.size(); ++i) {
      Tensor<T>& grad = params_[i].mutable_grad();
      const int64_t n = grad.numel();
      flat_grad.slice(0, offsets_[i], offsets_[i] + n).copy_(grad.reshape({n}));
      grad = {};
    }
    auto mine = tsr::empty<T>({shard_size_});
    distributed::reduce_scatter_tensor(mine, flat_grad, distributed::ReduceOp::AVG, group_);
    Tensor<T>& g = shard_.mutable_grad();
    if (g.defined()) g += mine;  // accumulation over backwards (no optimizer step between)
    else g = mine;
    in_backward_ = false;
    reshard();
  }

  std::vector<Tensor<T>> params_;
  std::vector<int64_t> offsets_;
  int64_t shard_size_ = 0;
  int rank_ = 0, world_ = 1;
  Tensor<T> flat_;   // world_ * shard_size_ elements; 0 bytes while sharded
  Tensor<T> shard_;  // this rank's elements [rank * shard_size, (rank + 1) * shard_size)
  distributed::ProcessGroup* group_;
  std::size_t pending_ = 0;
  bool in_backward_ = false;
};

// The non-template face of every FSDP wrapper, for full_state_dict(model).
class FsdpModule : public Module {
 public:
  std::string name() const override { return "FullyShardedDataParallel"; }
  // The wrapped block's state (its own names), gathered.
  virtual StateDict full_state_dict() = 0;
};

}  // namespace detail

template <class M>
class FullyShardedDataParallelImpl : public detail::FsdpModule {
 public:
  explicit FullyShardedDataParallelImpl(M module, FullyShardedDataParallelOptions options = {})
      : module_(std::move(module)) {
    auto& wrapped = *module_;
    std::vector<AnyTensor> params = wrapped.parameters();
    tsr::detail::check(!params.empty(), "FullyShardedDataParallel: the wrapped module has no parameters");
    if (options.sync_module_states) {
      const NoGradGuard no_grad;
      for (AnyTensor& p : params) p.visit([&](auto& t) { distributed::broadcast(t, 0, options.process_group); });
      for (AnyTensor b : wrapped.buffers())
        b.visit([&](auto& t) { distributed::broadcast(t, 0, options.process_group); });
    }
    tsr::detail::visit_float_or_double(
        params.front(), "FullyShardedDataParallel: parameters must be float or double, not ", [&]<class T>(Tensor<T>&) {
          std::vector<Tensor<T>> typed;
          for (const AnyTensor& p : params) {
            tsr::detail::check(p.is<T>(), "Must flatten tensors with uniform dtype but got torch.",
                               params.front().dtype_name(), " and torch.", p.dtype_name());
            typed.push_back(p.as<T>());
          }
          auto flat = std::make_shared<detail::TypedFlatParameter<T>>(std::move(typed), options.process_group);
          AnyTensor& slot = register_parameter("flat_param", AnyTensor(flat->flatten()));
          flat->attach(slot.as<T>());
          flat_ = std::move(flat);
        });
  }

  // The block's forward on its gathered parameters, which are freed again
  // before it returns; its backward gathers them once more.
  template <tsr::detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) {
    tsr::detail::check(!flat_->in_backward(),
                       "FullyShardedDataParallel: the previous backward did not give every parameter of this block "
                       "a gradient (a parameter that does not contribute to the loss is not supported)");
    flat_->unshard();
    Tensor<T> y;
    try {
      y = as_tensor<T>(module_(x));
    } catch (...) {
      flat_->reshard();
      throw;
    }
    flat_->reshard();
    if (y.requires_grad()) {
      std::weak_ptr<detail::FlatParameter> weak = flat_;
      y.register_hook([weak](const Tensor<T>& grad) {
        if (auto f = weak.lock()) f->pre_backward();
        return grad;
      });
    }
    return y;
  }

  StateDict full_state_dict() override {
    StateDict out;
    const bool was_gathered = flat_->gathered();
    flat_->unshard();
    const NoGradGuard no_grad;
    for (const auto& [name, t] : module_->state_dict())
      out.emplace_back(name, t.visit([](const auto& x) { return AnyTensor(x.clone()); }));
    if (!was_gathered) flat_->reshard();
    return out;
  }

  // The wrapped block (its parameters hold no data outside forward and backward).
  M& module() { return module_; }

  std::string extra_repr() const override {
    std::ostringstream os;
    os << *module_;
    return os.str();
  }

 private:
  template <class T, class R>
  static Tensor<T> as_tensor(R&& r) {
    if constexpr (std::is_same_v<std::remove_cvref_t<R>, AnyTensor>) return r.template as<T>();
    else return Tensor<T>(std::forward<R>(r));
  }

  M module_;
  std::shared_ptr<detail::FlatParameter> flat_;
};

// The holder: FullyShardedDataParallel(nn::Linear(784, 256)), one per block,
// composed as any module (nn::Sequential of wrapped blocks).
template <class M>
class FullyShardedDataParallel : public ModuleHolder<FullyShardedDataParallelImpl<M>> {
 public:
  using ModuleHolder<FullyShardedDataParallelImpl<M>>::ModuleHolder;
  explicit FullyShardedDataParallel(M module, FullyShardedDataParallelOptions options = {})
      : ModuleHolder<FullyShardedDataParallelImpl<M>>(
            std::make_shared<FullyShardedDataParallelImpl<M>>(std::move(module), options)) {}
};
template <class M>
FullyShardedDataParallel(M) -> FullyShardedDataParallel<M>;
template <class M>
FullyShardedDataParallel(M, FullyShardedDataParallelOptions) -> FullyShardedDataParallel<M>;

// The whole model's state_dict with every FSDP block gathered, under the
// names the model has without the wrappers (PyTorch's FULL_STATE_DICT).
// Every rank calls it; every rank gets the whole state.
inline StateDict full_state_dict(Module& model) {
  StateDict out;
  for (auto& [name, m] : model.named_modules()) {
    const std::string prefix = name.empty() ? "" : name + ".";
    if (auto* fsdp = dynamic_cast<detail::FsdpModule*>(m.get())) {
      for (auto& [k, v] : fsdp->full_state_dict()) out.emplace_back(prefix + k, std::move(v));
      continue;
    }
    for (auto& [k, v] : m->named_parameters(false)) out.emplace_back(prefix + k, v.detach());
    for (auto& [k, v] : m->named_buffers(false)) out.emplace_back(prefix + k, v.detach());
  }
  return out;
}

// The parameter bytes FSDP holds on this process, now and at most.
inline FsdpParameterBytes fsdp_parameter_bytes() { return detail::fsdp_bytes(); }
inline void reset_fsdp_peak_parameter_bytes() { detail::fsdp_bytes().peak = detail::fsdp_bytes().current; }

}  // namespace tsr::nn::parallel
