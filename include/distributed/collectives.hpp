// torch.distributed's process groups and collectives on tessera tensors:
// init_process_group, get_rank, get_world_size, new_group, and all_reduce,
// broadcast, reduce, all_gather(_into_tensor), reduce_scatter_tensor,
// gather, scatter, all_to_all_single, barrier, send / recv (isend / irecv),
// each with async_op returning a Work. Tensors are contiguous CPU tensors
// (MPI); the results are written into them, as PyTorch does.
#pragma once
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../tessera.hpp"
#include "backend.hpp"
#include "mpi_backend.hpp"

namespace tsr::distributed {

// PyTorch's default_pg_timeout.
inline constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::minutes(30);

// A set of ranks that communicate: the default group (every process) or one
// made by new_group(). On a process outside the group it is a placeholder:
// get_rank gives -1 and collectives on it do nothing.
class ProcessGroup {
 public:
  explicit ProcessGroup(std::unique_ptr<detail::Backend> backend) : backend_(std::move(backend)) {}
  bool is_member() const { return backend_ != nullptr; }
  int rank() const { return backend_ ? backend_->rank() : -1; }
  int size() const { return backend_ ? backend_->size() : -1; }
  detail::Backend* backend() const { return backend_.get(); }

 private:
  std::unique_ptr<detail::Backend> backend_;
};

namespace detail {

struct State {
  std::unique_ptr<ProcessGroup> world;
  std::vector<std::unique_ptr<ProcessGroup>> groups;
  bool finalize_mpi = false;
};
inline State& state() {
  static State s;
  return s;
}

inline ProcessGroup& group_or_world(ProcessGroup* group) {
  tsr::detail::check(state().world != nullptr,
                     "Default process group has not been initialized, please make sure to call init_process_group.");
  return group ? *group : *state().world;
}

// A Work that runs `finish` (copying results into the caller's tensors)
// once the operation beneath it has completed.
class FinishingWork final : public Work {
 public:
  FinishingWork(std::shared_ptr<Work> inner, std::function<void()> finish)
      : inner_(std::move(inner)), finish_(std::move(finish)) {}
  bool is_completed() override {
    if (!inner_->is_completed()) return false;
    run_finish();
    return true;
  }
  void wait() override {
    inner_->wait();
    run_finish();
  }

 private:
  void run_finish() {
    if (finish_) std::exchange(finish_, nullptr)();
  }
  std::shared_ptr<Work> inner_;
  std::function<void()> finish_;
};

// async_op: the Work; otherwise waits and returns null (PyTorch's None).
inline std::shared_ptr<Work> finish(std::shared_ptr<Work> work, bool async_op) {
  if (async_op) return work;
  work->wait();
  return nullptr;
}

template <class T>
void check_tensor(const Tensor<T>& t, const char* what) {
  tsr::detail::check(t.defined(), "distributed: ", what, " is an undefined tensor");
  tsr::detail::check(t.device().is_cpu(), "distributed: the MPI backend works on CPU tensors; ", what, " is on ",
                     t.device().str());
  tsr::detail::check(t.is_contiguous(), "Tensors must be contiguous");
}

inline void check_rank(int rank, const ProcessGroup& g, const char* what) {
  tsr::detail::check(rank >= 0 && rank < g.size(), "distributed: ", what, " rank ", rank,
                     " is out of range for a group of ", g.size());
}

// Keeps what an operation reads or writes (tensors, buffers) alive until it completes.
template <class... Held>
std::shared_ptr<const void> keep(const Held&... held) {
  return std::make_shared<const std::tuple<Held...>>(held...);
}

// The tensors of a list, one after another, in a new contiguous buffer (or
// back out of one).
template <class T>
void pack(const std::vector<Tensor<T>>& list, T* out, int64_t each) {
  for (std::size_t r = 0; r < list.size(); ++r) std::memcpy(out + int64_t(r) * each, list[r].data_ptr(), each * sizeof(T));
}
template <class T>
void unpack(const T* in, const std::vector<Tensor<T>>& list, int64_t each) {
  for (std::size_t r = 0; r < list.size(); ++r) {
    std::memcpy(list[r].data_ptr(), in + int64_t(r) * each, each * sizeof(T));
    list[r].storage()->bump_version();
  }
}
template <class T>
void check_list(const std::vector<Tensor<T>>& list, const Tensor<T>& like, const ProcessGroup& g, const char* what) {
  tsr::detail::check(int(list.size()) == g.size(), "distributed: ", what, " must hold one tensor per rank of the group (",
                     g.size(), "), got ", list.size());
  for (const Tensor<T>& t : list) {
    check_tensor(t, what);
    tsr::detail::check(t.sizes() == like.sizes(), "distributed: every tensor of ", what, " must have the shape ",
                       like.sizes(), ", got ", t.sizes());
  }
}

}  // namespace detail

// Joins the default process group. backend "mpi" (the one there is for CPU
// tensors): rank and world size come from the MPI launcher (mpirun); a
// WORLD_SIZE or RANK in the environment must agree with it.
inline void init_process_group(const std::string& backend = "mpi",
                               std::chrono::milliseconds timeout = kDefaultTimeout) {
  auto& s = detail::state();
  tsr::detail::check(!s.world, "trying to initialize the default process group twice!");
  tsr::detail::check(backend == "mpi", "distributed: backend '", backend,
                     "' is not available; this build has the 'mpi' backend (CPU tensors)");
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  tsr::detail::check(!finalized, "distributed: MPI cannot be initialized again after destroy_process_group()");
  if (!initialized) {
    int provided = 0;
    detail::check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    s.finalize_mpi = true;
  }
  // Collectives run on a worker thread while the caller sends and receives.
  int level = 0;
  detail::check_mpi(MPI_Query_thread(&level), "MPI_Query_thread");
  tsr::detail::check(level == MPI_THREAD_MULTIPLE,
                     "distributed: the MPI backend needs MPI initialized with MPI_THREAD_MULTIPLE (this MPI library "
                     "provides level ", level, "); if your program calls MPI_Init itself, call MPI_Init_thread instead");
  MPI_Comm comm = MPI_COMM_NULL;
  detail::check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
  auto group = std::make_unique<ProcessGroup>(std::make_unique<detail::MpiBackend>(comm, timeout));
  for (const auto& [name, value] : {std::pair<const char*, int>{"WORLD_SIZE", group->size()},
                                    std::pair<const char*, int>{"RANK", group->rank()}}) {
    if (const char* env = std::getenv(name))
      tsr::detail::check(std::atoi(env) == value, "distributed: the environment says ", name, "=", env,
                         " but the MPI launcher gave this process ", value);
  }
  s.world = std::move(group);
}

inline bool is_initialized() { return detail::state().world != nullptr; }

// Leaves every group (and finalizes MPI if init_process_group started it).
inline void destroy_process_group() {
  auto& s = detail::state();
  s.groups.clear();
  s.world.reset();
  if (s.finalize_mpi) {
    MPI_Finalize();
    s.finalize_mpi = false;
  }
}

inline int get_rank(ProcessGroup* group = nullptr) { return detail::group_or_world(group).rank(); }
inline int get_world_size(ProcessGroup* group = nullptr) { return detail::group_or_world(group).size(); }

// A group of the listed ranks (of the default group), whose operations time
// out after `timeout`. Every process calls it, in the same order, with the
// same ranks, as in PyTorch.
inline ProcessGroup* new_group(const std::vector<int>& ranks, std::chrono::milliseconds timeout = kDefaultTimeout) {
  ProcessGroup& world = detail::group_or_world(nullptr);
  for (const int r : ranks) detail::check_rank(r, world, "new_group:");
  auto& groups = detail::state().groups;
  groups.push_back(std::make_unique<ProcessGroup>(world.backend()->subgroup(ranks, timeout)));
  return groups.back().get();
}

// Every rank's tensor combined by `op`; the result in every rank's tensor.
template <class T>
std::shared_ptr<Work> all_reduce(const Tensor<T>& tensor, ReduceOp op = ReduceOp::SUM, ProcessGroup* group = nullptr,
                                 bool async_op = false) {
  ProcessGroup& g = detail::group_or_world(group);
  if (!g.is_member()) return nullptr;
  detail::check_tensor(tensor, "tensor");
  tensor.storage()->bump_version();
  return detail::finish(g.backend()->all_reduce(tensor.data_ptr(), tensor.numel(), detail::element_of<T>(), op,
                                                detail::keep(tensor)),
                        async_op);
}

// src's tensor in every rank's tensor.
template <class T>
std::shared_ptr<Work> broadcast(const Tensor<T>& tensor, int src, ProcessGroup* group = nullptr, bool async_op = false) {
  ProcessGroup& g = detail::group_or_world(group);
  if (!g.is_member()) return nullptr;
  detail::check_tensor(tensor, "tensor");
  detail::check_rank(src, g, "broadcast: src");
  tensor.storage()->bump_version();
  return detail::finish(
      g.backend()->broadcast(tensor.data_ptr(), tensor.numel(), detail::element_of<T>(), src, detail::keep(tensor)),
      async_op);
}

// Every rank's tensor combined into dst's; the others' tensors are left as they were.
template <class T>
std::shared_ptr<Work> reduce(const Tensor<T>& tensor, int dst, ReduceOp op = ReduceOp::SUM,
                             ProcessGroup* group = nullptr, bool async_op = false) {
  ProcessGroup& g = detail::group_or_world(group);
  if (!g.is_member()) return nullptr;
  detail::check_tensor(tensor, "tensor");
  detail::check_rank(dst, g, "reduce: dst");
  if (g.rank() == dst) tensor.storage()->bump_version();
  return detail::finish(g.backend()->reduce(tensor.data_ptr(), tensor.numel(), detail::element_of<T>(), op, dst,
                                            detail::keep(tensor)),
                        async_op);
}

// Every rank's tensor, in rank order, into tensor_list (one per rank).
template <class T>
std::shared_ptr<Work> all_gather(const std::vector<Tensor<T>>& tensor_list, const Tensor<T>& tensor,
                                 ProcessGroup* group = nullptr, bool async_op = false) {
  ProcessGroup& g = detail::group_or_world(group);
  if (!g.is_member()) return nullptr;
  detail::check_tensor(tensor, "tensor");
  detail::check_list(tensor_list, tensor, g, "tensor_list");
  const int64_t each = tensor.numel();
  auto buffer = std::make_shared<std::vector<T>>(static_cast<std::size_t>(each * g.size()));
  auto work = g.backend()->all_gather(tensor.data_ptr(), buffer->data(), each, detail::element_of<T>(),
                                      detail::keep(tensor, buffer));
  return detail::finish(std::make_shared<detail::FinishingWork>(
                            std::move(work), [buffer, tensor_list, each] { detail::unpack(buffer->data(), tensor_list, each); }),
                        async_op);
}

// Every rank's input, in rank order, along the first dimension of output
// (output.numel() == world size * input.numel()).
template <class T>
std::shared_ptr<Work> all_gather_into_tensor(const Tensor<T>& output, const Tensor<T>& input,
                                             ProcessGroup* group = nullptr, bool async_op = false) {
  ProcessGroup& g = detail::group_or_world(group);
  if (!g.is_member()) return nullptr;
  detail::check_tensor(output, "output");
  detail::check_tensor(input, "input");
  tsr::detail::check(output.numel() == input.numel() * g.size(),
                     "Output tensor size must be equal to world_size times input tensor size");
  output.storage()->bump_version();
  return detail::finish(g.backend()->all_gather(input.data_ptr(), output.data_ptr(), input.numel(),
                                                detail::element_of<T>(),
                                                detail::keep(output, input)),
                        async_op);
}

// input holds world-size blocks; rank r's output is block r combined over every rank.
template <class T>
std::shared_ptr<Work> reduce_scatter_tensor(const Tensor<T>& output, const Tensor<T>& input,
                                            ReduceOp op = ReduceOp::SUM, ProcessGroup* group = nullptr,
                                            bool async_op = false) {
  ProcessGroup& g = detail::group_or_world(group);
  if (!g.is_member()) return nullptr;
  detail::check_tensor(output, "output");
  detail::check_tensor(input, "input");
  tsr::detail::check(input.numel() == output.numel() * g.size(),
                     "Input tensor size must be equal to world_size times output tensor size");
  output.storage()->bump_version();
  return detail::finish(g.backend()->reduce_scatter(input.data_ptr(), output.data_ptr(), output.numel(),
                                                    detail::element_of<T>(), op,
                                                    detail::keep(output, input)),
                        async_op);
}

namespace detail {
// What gather and scatter share: the checks (the list on the root rank
// only) and the root's buffer of one block per rank (empty elsewhere).
template <class T>
std::shared_ptr<std::vector<T>> rooted_buffer(const ProcessGroup& g, const Tensor<T>& tensor,
                                              const std::vector<Tensor<T>>& list, int root, const char* root_name,
                                              const char* list_name, const char* off_root_error) {
  check_tensor(tensor, "tensor");
  check_rank(root, g, root_name);
  const bool at_root = g.rank() == root;
  if (at_root) check_list(list, tensor, g, list_name);
  else tsr::detail::check(list.empty(), off_root_error);
  return std::make_shared<std::vector<T>>(at_root ? static_cast<std::size_t>(tensor.numel() * g.size()) : 0);
}
}  // namespace detail

// Every rank's tensor into dst's gather_list (one per rank; empty elsewhere).
template <class T>
std::shared_ptr<Work> gather(const Tensor<T>& tensor, const std::vector<Tensor<T>>& gather_list = {}, int dst = 0,
                             ProcessGroup* group = nullptr, bool async_op = false) {
  ProcessGroup& g = detail::group_or_world(group);
  if (!g.is_member()) return nullptr;
  auto buffer = detail::rooted_buffer(g, tensor, gather_list, dst, "gather: dst", "gather_list",
                                      "Argument ``gather_list`` must NOT be specified on non-destination ranks.");
  const int64_t each = tensor.numel();
  auto work = g.backend()->gather(tensor.data_ptr(), buffer->data(), each, detail::element_of<T>(), dst,
                                  detail::keep(tensor, buffer));
  return detail::finish(std::make_shared<detail::FinishingWork>(
                            std::move(work), [buffer, gather_list, each] { detail::unpack(buffer->data(), gather_list, each); }),
                        async_op);
}

// Block r of src's scatter_list (one tensor per rank) into rank r's tensor.
template <class T>
std::shared_ptr<Work> scatter(const Tensor<T>& tensor, const std::vector<Tensor<T>>& scatter_list = {}, int src = 0,
                              ProcessGroup* group = nullptr, bool async_op = false) {
  ProcessGroup& g = detail::group_or_world(group);
  if (!g.is_member()) return nullptr;
  auto buffer = detail::rooted_buffer(g, tensor, scatter_list, src, "scatter: src", "scatter_list",
                                      "Argument ``scatter_list`` must NOT be specified on non-source ranks.");
  if (!buffer->empty()) detail::pack(scatter_list, buffer->data(), tensor.numel());
  tensor.storage()->bump_version();
  return detail::finish(g.backend()->scatter(buffer->data(), tensor.data_ptr(), tensor.numel(), detail::element_of<T>(),
                                             src,
                                             detail::keep(tensor, buffer)),
                        async_op);
}

// input's rows (its first dimension) in world-size blocks: block r goes to
// rank r, whose output holds the blocks from every rank in rank order.
// Without split sizes the blocks are equal; input_split_sizes[r] rows go to
// rank r, and output_split_sizes[r] rows come from rank r (each rank's
// input split for this rank).
template <class T>
std::shared_ptr<Work> all_to_all_single(const Tensor<T>& output, const Tensor<T>& input,
                                        const std::vector<int64_t>& output_split_sizes,
                                        const std::vector<int64_t>& input_split_sizes, ProcessGroup* group = nullptr,
                                        bool async_op = false) {
  ProcessGroup& g = detail::group_or_world(group);
  if (!g.is_member()) return nullptr;
  detail::check_tensor(output, "output");
  detail::check_tensor(input, "input");
  // Elements per row: what the split sizes count.
  const auto counts = [&](const Tensor<T>& t, const std::vector<int64_t>& splits) {
    const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
    const int64_t row = rows == 0 ? 0 : t.numel() / rows;
    std::vector<int64_t> out;
    if (splits.empty()) {
      tsr::detail::check(rows % g.size() == 0, "Tensor's dim 0 does not divide equally across group size");
      out.assign(static_cast<std::size_t>(g.size()), rows / g.size() * row);
      return out;
    }
    tsr::detail::check(int(splits.size()) == g.size(), "Number of tensor splits not equal to group size");
    int64_t sum = 0;
    for (const int64_t s : splits) {
      tsr::detail::check(s >= 0, "distributed: split sizes must not be negative, got ", s);
      sum += s;
      out.push_back(s * row);
    }
    tsr::detail::check(sum == rows, "Split sizes doesn't match total dim 0 size");
    return out;
  };
  const std::vector<int64_t> in_counts = counts(input, input_split_sizes);
  const std::vector<int64_t> out_counts = counts(output, output_split_sizes);
  output.storage()->bump_version();
  return detail::finish(g.backend()->all_to_all(input.data_ptr(), in_counts, output.data_ptr(), out_counts,
                                                detail::element_of<T>(), detail::keep(output, input)),
                        async_op);
}
template <class T>
std::shared_ptr<Work> all_to_all_single(const Tensor<T>& output, const Tensor<T>& input, ProcessGroup* group = nullptr,
                                        bool async_op = false) {
  return all_to_all_single(output, input, {}, {}, group, async_op);
}

// Returns once every rank of the group has entered it.
inline std::shared_ptr<Work> barrier(ProcessGroup* group = nullptr, bool async_op = false) {
  ProcessGroup& g = detail::group_or_world(group);
  if (!g.is_member()) return nullptr;
  return detail::finish(g.backend()->barrier(), async_op);
}

// Point to point: the tensor to rank dst (with a tag that recv matches).
template <class T>
std::shared_ptr<Work> isend(const Tensor<T>& tensor, int dst, ProcessGroup* group = nullptr, int tag = 0) {
  ProcessGroup& g = detail::group_or_world(group);
  detail::check_tensor(tensor, "tensor");
  detail::check_rank(dst, g, "send: dst");
  return g.backend()->send(tensor.data_ptr(), tensor.numel(), detail::element_of<T>(), dst, tag, detail::keep(tensor));
}
template <class T>
void send(const Tensor<T>& tensor, int dst, ProcessGroup* group = nullptr, int tag = 0) {
  isend(tensor, dst, group, tag)->wait();
}
// From rank src (-1: any rank) into tensor.
template <class T>
std::shared_ptr<Work> irecv(const Tensor<T>& tensor, int src = -1, ProcessGroup* group = nullptr, int tag = 0) {
  ProcessGroup& g = detail::group_or_world(group);
  detail::check_tensor(tensor, "tensor");
  if (src >= 0) detail::check_rank(src, g, "recv: src");
  tensor.storage()->bump_version();
  return g.backend()->recv(tensor.data_ptr(), tensor.numel(), detail::element_of<T>(), src, tag, detail::keep(tensor));
}
// Returns the rank the tensor came from.
template <class T>
int recv(const Tensor<T>& tensor, int src = -1, ProcessGroup* group = nullptr, int tag = 0) {
  auto work = irecv(tensor, src, group, tag);
  work->wait();
  return detail::group_or_world(group).backend()->source_of(*work);
}

}  // namespace tsr::distributed
