// The NCCL implementation of the backend seam, for buffers in GPU memory:
// each operation is enqueued on the backend's CUDA stream, after the work
// queued on the calling thread's current stream (ncclAllReduce,
// ncclBroadcast, ...; gather, scatter and all-to-all as grouped
// ncclSend / ncclRecv), and its Work is a CUDA event recorded after it,
// polled until it has passed or the group's timeout; a timeout aborts the
// communicator (NCCL cannot withdraw an operation) and throws.
//
// The ranks meet through MPI: rank 0 makes NCCL's unique id and broadcasts
// it over an MPI communicator (make_nccl_backend), as MPI-launched NCCL
// jobs do. Needs the CUDA runtime and NCCL (nccl.h and libnccl, which ship
// with the CUDA toolkit); include it only in programs that link them.
#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../cuda/cuda_memory.hpp"
#include "../detail/device_backend.hpp"
#include "../errors.hpp"
#include "backend.hpp"
#include "mpi_backend.hpp"

namespace tsr::distributed::detail {

inline void check_nccl(ncclResult_t status, const char* call) {
  if (status == ncclSuccess) [[likely]]
    return;
  throw Error(tsr::detail::str("NCCL error from ", call, ": ", ncclGetErrorString(status)));
}
// CUDA calls are checked as everywhere else (cuda/cuda_memory.hpp).
using tsr::detail::cuda::check_cuda;

class NcclBackend;

class NcclWork final : public Work {
 public:
  NcclWork(NcclBackend& backend, const char* name, std::shared_ptr<const void> keep)
      : backend_(backend), name_(name), keep_(std::move(keep)) {
    check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  }
  NcclWork(const NcclWork&) = delete;
  NcclWork& operator=(const NcclWork&) = delete;
  ~NcclWork() override { cudaEventDestroy(event_); }

  // Marks the end of the operation on the stream.
  void record(cudaStream_t stream) { check_cuda(cudaEventRecord(event_, stream), "cudaEventRecord"); }

  bool is_completed() override {
    if (done_) return true;
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) return false;
    check_cuda(status, "cudaEventQuery");
    done_ = true;
    keep_.reset();
    return true;
  }
  void wait() override;

 private:
  NcclBackend& backend_;
  const char* name_;
  std::shared_ptr<const void> keep_;
  cudaEvent_t event_ = nullptr;
  bool done_ = false;
};

class NcclBackend final : public Backend {
 public:
  // Takes ownership of `comm` (destroyed with the backend), which runs its
  // operations on a stream of its own on the current device.
  NcclBackend(ncclComm_t comm, std::chrono::milliseconds timeout) : comm_(comm), timeout_(timeout) {
    check_nccl(ncclCommUserRank(comm_, &rank_), "ncclCommUserRank");
    check_nccl(ncclCommCount(comm_, &size_), "ncclCommCount");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check_cuda(cudaEventCreateWithFlags(&inputs_ready_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  }
  NcclBackend(const NcclBackend&) = delete;
  NcclBackend& operator=(const NcclBackend&) = delete;
  ~NcclBackend() override {
    if (aborted_) ncclCommAbort(comm_);
    else ncclCommDestroy(comm_);
    cudaStreamDestroy(stream_);
    cudaEventDestroy(inputs_ready_);
    if (barrier_word_) cudaFree(barrier_word_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  cudaStream_t stream() const { return stream_; }

  std::shared_ptr<Work> all_reduce(void* data, int64_t count, Element e, ReduceOp op,
                                   std::shared_ptr<const void> keep) override {
    return run("all_reduce", std::move(keep), [&] {
      check_nccl(ncclAllReduce(data, data, size_t(count), type_of(e), op_of(e, op), comm_, stream_), "ncclAllReduce");
    });
  }
  std::shared_ptr<Work> broadcast(void* data, int64_t count, Element e, int root,
                                  std::shared_ptr<const void> keep) override {
    return run("broadcast", std::move(keep), [&] {
      check_nccl(ncclBroadcast(data, data, size_t(count), type_of(e), root, comm_, stream_), "ncclBroadcast");
    });
  }
  std::shared_ptr<Work> reduce(void* data, int64_t count, Element e, ReduceOp op, int root,
                               std::shared_ptr<const void> keep) override {
    return run("reduce", std::move(keep), [&] {
      check_nccl(ncclReduce(data, data, size_t(count), type_of(e), op_of(e, op), root, comm_, stream_), "ncclReduce");
    });
  }
  std::shared_ptr<Work> all_gather(const void* in, void* out, int64_t count, Element e,
                                   std::shared_ptr<const void> keep) override {
    return run("all_gather", std::move(keep), [&] {
      check_nccl(ncclAllGather(in, out, size_t(count), type_of(e), comm_, stream_), "ncclAllGather");
    });
  }
  std::shared_ptr<Work> reduce_scatter(const void* in, void* out, int64_t count, Element e, ReduceOp op,
                                       std::shared_ptr<const void> keep) override {
    return run("reduce_scatter", std::move(keep), [&] {
      check_nccl(ncclReduceScatter(in, out, size_t(count), type_of(e), op_of(e, op), comm_, stream_),
                 "ncclReduceScatter");
    });
  }
  // Rooted and all-to-all exchanges: point-to-point calls in one NCCL group.
  std::shared_ptr<Work> gather(const void* in, void* out, int64_t count, Element e, int root,
                               std::shared_ptr<const void> keep) override {
    return run("gather", std::move(keep), [&] {
      grouped([&] {
        if (rank_ == root)
          for (int r = 0; r < size_; ++r) recv_raw(at(out, int64_t(r) * count, e), count, e, r);
        send_raw(in, count, e, root);
      });
    });
  }
  std::shared_ptr<Work> scatter(const void* in, void* out, int64_t count, Element e, int root,
                                std::shared_ptr<const void> keep) override {
    return run("scatter", std::move(keep), [&] {
      grouped([&] {
        if (rank_ == root)
          for (int r = 0; r < size_; ++r) send_raw(at(in, int64_t(r) * count, e), count, e, r);
        recv_raw(out, count, e, root);
      });
    });
  }
  std::shared_ptr<Work> all_to_all(const void* in, const std::vector<int64_t>& in_counts, void* out,
                                   const std::vector<int64_t>& out_counts, Element e,
                                   std::shared_ptr<const void> keep) override {
    return run("all_to_all", std::move(keep), [&] {
      grouped([&] {
        int64_t in_at = 0, out_at = 0;
        for (int r = 0; r < size_; ++r) {
          send_raw(at(in, in_at, e), in_counts[std::size_t(r)], e, r);
          recv_raw(at(out, out_at, e), out_counts[std::size_t(r)], e, r);
          in_at += in_counts[std::size_t(r)];
          out_at += out_counts[std::size_t(r)];
        }
      });
    });
  }
  // An all-reduce of one word in device memory: every rank must enter it.
  std::shared_ptr<Work> barrier() override {
    if (!barrier_word_) check_cuda(cudaMalloc(&barrier_word_, sizeof(float)), "cudaMalloc");
    return all_reduce(barrier_word_, 1, Element::Float32, ReduceOp::SUM, nullptr);
  }
  std::shared_ptr<Work> send(const void* data, int64_t count, Element e, int dst, int tag,
                             std::shared_ptr<const void> keep) override {
    check_tag(tag);
    return run("send", std::move(keep), [&] { send_raw(data, count, e, dst); });
  }
  std::shared_ptr<Work> recv(void* data, int64_t count, Element e, int src, int tag,
                             std::shared_ptr<const void> keep) override {
    check_tag(tag);
    tsr::detail::check(src >= 0, "distributed: the NCCL backend receives from a given rank only (src = -1, any "
                                 "source, needs the MPI backend)");
    last_source_ = src;
    return run("recv", std::move(keep), [&] { recv_raw(data, count, e, src); });
  }
  int source_of(Work&) override { return last_source_; }

  std::unique_ptr<Backend> subgroup(const std::vector<int>& ranks, std::chrono::milliseconds timeout) override {
    const auto it = std::find(ranks.begin(), ranks.end(), rank_);
    const bool member = it != ranks.end();
    ncclComm_t sub = nullptr;
    // Every rank calls the split; those outside get no communicator.
    check_nccl(ncclCommSplit(comm_, member ? 0 : NCCL_SPLIT_NOCOLOR, member ? int(it - ranks.begin()) : 0, &sub,
                             nullptr),
               "ncclCommSplit");
    if (!member) return nullptr;
    return std::make_unique<NcclBackend>(sub, timeout);
  }

  // After a timeout: the communicator is aborted when the backend goes.
  void mark_aborted() { aborted_ = true; }

 private:
  template <class Enqueue>
  std::shared_ptr<Work> run(const char* name, std::shared_ptr<const void> keep, Enqueue&& enqueue) {
    tsr::detail::check(!aborted_, "distributed: this NCCL process group timed out before and cannot be used any more");
    auto work = std::make_shared<NcclWork>(*this, name, std::move(keep));
    wait_for_current_stream();
    enqueue();
    work->record(stream_);
    return work;
  }
  template <class F>
  void grouped(F&& f) {
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    try {
      f();
    } catch (...) {
      ncclGroupEnd();
      throw;
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  }
  void send_raw(const void* data, int64_t count, Element e, int peer) {
    check_nccl(ncclSend(data, size_t(count), type_of(e), peer, comm_, stream_), "ncclSend");
  }
  void recv_raw(void* data, int64_t count, Element e, int peer) {
    check_nccl(ncclRecv(data, size_t(count), type_of(e), peer, comm_, stream_), "ncclRecv");
  }
  static void check_tag(int tag) {
    tsr::detail::check(tag == 0, "distributed: the NCCL backend has no message tags (got tag ", tag, ")");
  }
  static std::size_t element_size(Element e) {
    switch (e) {
      case Element::Float64:
      case Element::Int64: return 8;
      case Element::Float32:
      case Element::Int32: return 4;
      case Element::Float16:
      case Element::BFloat16: return 2;
      case Element::Bool: return 1;
    }
    return 1;
  }
  static void* at(void* base, int64_t elements, Element e) {
    return static_cast<char*>(base) + elements * int64_t(element_size(e));
  }
  static const void* at(const void* base, int64_t elements, Element e) {
    return static_cast<const char*>(base) + elements * int64_t(element_size(e));
  }

  static ncclDataType_t type_of(Element e) {
    switch (e) {
      case Element::Float32: return ncclFloat32;
      case Element::Float64: return ncclFloat64;
      case Element::Float16: return ncclFloat16;
      case Element::BFloat16: return ncclBfloat16;
      case Element::Int32: return ncclInt32;
      case Element::Int64: return ncclInt64;
      case Element::Bool: return ncclUint8;
    }
    return ncclUint8;
  }
  // As PyTorch's NCCL group: booleans travel as bytes, a sum or maximum is
  // "any" (ncclMax), a product or minimum "all" (ncclMin).
  static ncclRedOp_t op_of(Element e, ReduceOp op) {
    if (e == Element::Bool) {
      tsr::detail::check(op != ReduceOp::AVG, "distributed: ReduceOp.AVG is not defined for bool tensors");
      return op == ReduceOp::PRODUCT || op == ReduceOp::MIN ? ncclMin : ncclMax;
    }
    switch (op) {
      case ReduceOp::SUM: return ncclSum;
      case ReduceOp::AVG: return ncclAvg;
      case ReduceOp::PRODUCT: return ncclProd;
      case ReduceOp::MIN: return ncclMin;
      case ReduceOp::MAX: return ncclMax;
    }
    return ncclSum;
  }

  // The buffers are written by work queued on the calling thread's current
  // stream (tessera's kernels and cuBLAS products return before they are
  // done): the backend's stream waits for that work before the operation,
  // as PyTorch's NCCL process group makes its stream wait.
  void wait_for_current_stream() {
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    tsr::detail::DeviceBackend* tensors = tsr::detail::cuda_backend_slot();
    const auto current = reinterpret_cast<cudaStream_t>(tensors ? tensors->current_stream(device) : 0);
    check_cuda(cudaEventRecord(inputs_ready_, current), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(stream_, inputs_ready_, 0), "cudaStreamWaitEvent");
  }

  ncclComm_t comm_;
  std::chrono::milliseconds timeout_;
  int rank_ = 0, size_ = 1;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t inputs_ready_ = nullptr;
  void* barrier_word_ = nullptr;
  int last_source_ = -1;
  bool aborted_ = false;
};

inline void NcclWork::wait() {
  const auto deadline = std::chrono::steady_clock::now() + backend_.timeout();
  for (int polls = 0; !is_completed(); ++polls) {
    if (std::chrono::steady_clock::now() > deadline) {
      // NCCL cannot withdraw an operation: the communicator is unusable.
      backend_.mark_aborted();
      done_ = true;
      throw timed_out(name_, backend_.timeout(), backend_.rank(), backend_.size(),
                      "; the NCCL communicator is aborted");
    }
    if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// A backend over every rank of `bootstrap` (an MPI communicator), on the
// current CUDA device: rank 0's NCCL unique id reaches the others by MPI.
inline std::unique_ptr<NcclBackend> make_nccl_backend(MPI_Comm bootstrap, std::chrono::milliseconds timeout) {
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(bootstrap, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(bootstrap, &size), "MPI_Comm_size");
  ncclUniqueId id{};
  if (rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, bootstrap), "MPI_Bcast");
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommInitRank(&comm, size, id, rank), "ncclCommInitRank");
  return std::make_unique<NcclBackend>(comm, timeout);
}

}  // namespace tsr::distributed::detail
