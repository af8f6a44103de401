// The MPI implementation of the backend seam, for CPU tensors. Collectives
// run as MPI's blocking calls (MPI_Allreduce, MPI_Bcast, ...) on a worker
// thread of the group, one after another in the order they were issued, as
// PyTorch's MPI process group does: the blocking calls use MPI's tuned
// algorithms (its nonblocking ones reached half their bandwidth here), and
// the worker makes progress while the caller computes, so asynchronous
// operations really overlap (MPI's nonblocking collectives only progress
// when polled). Send and receive stay nonblocking (MPI_Isend / MPI_Irecv),
// so that a timed-out one can be withdrawn. A Work waits for its operation
// up to the group's timeout. Errors come back as tsr::Error with MPI's text
// (the communicator returns errors instead of aborting). Needs
// MPI_THREAD_MULTIPLE, which init_process_group asks for.
#pragma once
// Only MPI's C interface is used: not the deprecated C++ bindings, whose
// headers warn under -Wextra.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../errors.hpp"
#include "backend.hpp"

namespace tsr::distributed::detail {

inline void check_mpi(int status, const char* call) {
  if (status == MPI_SUCCESS) [[likely]]
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw Error(tsr::detail::str("MPI error from ", call, ": ", std::string(text, static_cast<std::size_t>(length))));
}

inline int checked_count(int64_t count) {
  tsr::detail::check(count <= int64_t(std::numeric_limits<int>::max()), "distributed: a message of ", count,
                     " elements is more than MPI's int count can describe");
  return static_cast<int>(count);
}

// Half and bfloat16 have no MPI type: they travel as 16-bit words and are
// combined by user-defined ops in float, as PyTorch's CPU backends do.
template <class H, ReduceOp Op>
void combine_16bit(void* in, void* inout, int* len, MPI_Datatype*) {
  const H* a = static_cast<const H*>(in);
  H* b = static_cast<H*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float x = static_cast<float>(a[i]), y = static_cast<float>(b[i]);
    float r;
    if constexpr (Op == ReduceOp::PRODUCT) r = x * y;
    else if constexpr (Op == ReduceOp::MIN) r = y < x ? y : x;
    else if constexpr (Op == ReduceOp::MAX) r = y > x ? y : x;
    else r = x + y;  // SUM and AVG (divided afterwards)
    b[i] = H(r);
  }
}

class MpiBackend;

// A send or receive: one MPI request, polled.
class MpiWork final : public Work {
 public:
  MpiWork(MpiBackend& backend, const char* name, std::shared_ptr<const void> keep)
      : backend_(backend), name_(name), keep_(std::move(keep)) {}
  MPI_Request* request() { return &request_; }

  bool is_completed() override {
    if (done_) return true;
    int flag = 0;
    check_mpi(MPI_Test(&request_, &flag, &status_), "MPI_Test");
    if (flag) {
      done_ = true;
      keep_.reset();
    }
    return done_;
  }
  void wait() override;
  int source() const { return status_.MPI_SOURCE; }

 private:
  MpiBackend& backend_;
  const char* name_;
  std::shared_ptr<const void> keep_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  MPI_Status status_{};
  bool done_ = false;
};

// Until a short collective has had time to finish (or the next one to be
// posted), the waiting thread polls, yielding the core (which the ranks and
// workers share), instead of sleeping: a sleeping thread's wake-up cost 10%
// of a 1 MiB all_reduce.
inline constexpr auto kCollectivePoll = std::chrono::microseconds(500);

// A collective: what the worker thread reports when it has run it.
struct CollectiveState {
  std::mutex mutex;
  std::condition_variable finished;
  std::atomic<bool> done{false};
  std::exception_ptr error;
  std::shared_ptr<const void> keep;  // released when done
};

class MpiCollectiveWork final : public Work {
 public:
  MpiCollectiveWork(MpiBackend& backend, const char* name, std::shared_ptr<CollectiveState> state)
      : backend_(backend), name_(name), state_(std::move(state)) {}
  bool is_completed() override {
    std::lock_guard lock(state_->mutex);
    if (state_->done && state_->error) std::rethrow_exception(state_->error);
    return state_->done.load();
  }
  void wait() override;

 private:
  MpiBackend& backend_;
  const char* name_;
  std::shared_ptr<CollectiveState> state_;
};

// Runs a group's collectives one at a time, in the order they were posted.
class CollectiveThread {
 public:
  CollectiveThread() : thread_([this] { run(); }) {}
  CollectiveThread(const CollectiveThread&) = delete;
  CollectiveThread& operator=(const CollectiveThread&) = delete;
  ~CollectiveThread() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void post(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
      pending_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_one();
  }
  // Waits until every posted collective has run; false at the deadline.
  bool drain(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return idle_.wait_until(lock, deadline, [&] { return queue_.empty() && !busy_; });
  }

 private:
  void run() {
    for (;;) {
      std::function<void()> task;
      // A collective often follows another closely (a bucket after a
      // bucket): poll for it a moment before sleeping.
      const auto polled = std::chrono::steady_clock::now() + kCollectivePoll;
      while (pending_.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < polled)
        std::this_thread::yield();
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
        pending_.fetch_sub(1, std::memory_order_relaxed);
        busy_ = true;
      }
      task();
      {
        std::lock_guard lock(mutex_);
        busy_ = false;
      }
      idle_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> queue_;
  std::atomic<int> pending_{0};  // queue_.size(), readable without the lock
  bool busy_ = false, stop_ = false;
  std::thread thread_;  // last: started once the members above exist
};

class MpiBackend final : public Backend {
 public:
  // Takes ownership of `comm` (freed with the backend).
  MpiBackend(MPI_Comm comm, std::chrono::milliseconds timeout) : comm_(comm), timeout_(timeout) {
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  MpiBackend(const MpiBackend&) = delete;
  MpiBackend& operator=(const MpiBackend&) = delete;
  ~MpiBackend() override {
    // A collective that timed out may still complete when the other ranks
    // join it; MPI cannot free a communicator with one in flight. If they
    // never do within the timeout, the job cannot end cleanly.
    if (worker_ && !worker_->drain(std::chrono::steady_clock::now() + timeout_)) MPI_Abort(MPI_COMM_WORLD, 1);
    worker_.reset();
    for (MPI_Op& op : ops_)
      if (op != MPI_OP_NULL) MPI_Op_free(&op);
    MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  std::shared_ptr<Work> all_reduce(void* data, int64_t count, Element e, ReduceOp op,
                                   std::shared_ptr<const void> keep) override {
    const int n = checked_count(count);
    const MPI_Op mpi_op = op_of(e, op);
    return collective("all_reduce", std::move(keep), [=, this] {
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, data, n, type_of(e), mpi_op, comm_), "MPI_Allreduce");
      if (op == ReduceOp::AVG) divide(data, count, e);
    });
  }
  std::shared_ptr<Work> broadcast(void* data, int64_t count, Element e, int root,
                                  std::shared_ptr<const void> keep) override {
    const int n = checked_count(count);
    return collective("broadcast", std::move(keep), [=, this] {
      check_mpi(MPI_Bcast(data, n, type_of(e), root, comm_), "MPI_Bcast");
    });
  }
  std::shared_ptr<Work> reduce(void* data, int64_t count, Element e, ReduceOp op, int root,
                               std::shared_ptr<const void> keep) override {
    const int n = checked_count(count);
    const MPI_Op mpi_op = op_of(e, op);
    return collective("reduce", std::move(keep), [=, this] {
      // The root reduces in place; the others send their data, which stays as it was.
      const bool at_root = rank_ == root;
      check_mpi(MPI_Reduce(at_root ? MPI_IN_PLACE : data, at_root ? data : nullptr, n, type_of(e), mpi_op, root, comm_),
                "MPI_Reduce");
      if (op == ReduceOp::AVG && at_root) divide(data, count, e);
    });
  }
  std::shared_ptr<Work> all_gather(const void* in, void* out, int64_t count, Element e,
                                   std::shared_ptr<const void> keep) override {
    const int n = checked_count(count);
    return collective("all_gather", std::move(keep), [=, this] {
      check_mpi(MPI_Allgather(in, n, type_of(e), out, n, type_of(e), comm_), "MPI_Allgather");
    });
  }
  std::shared_ptr<Work> reduce_scatter(const void* in, void* out, int64_t count, Element e, ReduceOp op,
                                       std::shared_ptr<const void> keep) override {
    const int n = checked_count(count);
    const MPI_Op mpi_op = op_of(e, op);
    return collective("reduce_scatter", std::move(keep), [=, this] {
      check_mpi(MPI_Reduce_scatter_block(in, out, n, type_of(e), mpi_op, comm_), "MPI_Reduce_scatter_block");
      if (op == ReduceOp::AVG) divide(out, count, e);
    });
  }
  std::shared_ptr<Work> gather(const void* in, void* out, int64_t count, Element e, int root,
                               std::shared_ptr<const void> keep) override {
    const int n = checked_count(count);
    return collective("gather", std::move(keep), [=, this] {
      check_mpi(MPI_Gather(in, n, type_of(e), out, n, type_of(e), root, comm_), "MPI_Gather");
    });
  }
  std::shared_ptr<Work> scatter(const void* in, void* out, int64_t count, Element e, int root,
                                std::shared_ptr<const void> keep) override {
    const int n = checked_count(count);
    return collective("scatter", std::move(keep), [=, this] {
      check_mpi(MPI_Scatter(in, n, type_of(e), out, n, type_of(e), root, comm_), "MPI_Scatter");
    });
  }
  std::shared_ptr<Work> all_to_all(const void* in, const std::vector<int64_t>& in_counts, void* out,
                                   const std::vector<int64_t>& out_counts, Element e,
                                   std::shared_ptr<const void> keep) override {
    const bool equal = std::all_of(in_counts.begin(), in_counts.end(), [&](int64_t c) { return c == in_counts[0]; }) &&
                       out_counts == in_counts;
    if (equal) {
      const int n = checked_count(in_counts.empty() ? 0 : in_counts[0]);
      return collective("all_to_all", std::move(keep), [=, this] {
        check_mpi(MPI_Alltoall(in, n, type_of(e), out, n, type_of(e), comm_), "MPI_Alltoall");
      });
    }
    // Counts and displacements in MPI's int.
    const auto layout = [](const std::vector<int64_t>& counts, std::vector<int>& c, std::vector<int>& d) {
      int64_t at = 0;
      for (const int64_t n : counts) {
        c.push_back(checked_count(n));
        d.push_back(checked_count(at));
        at += n;
      }
    };
    std::vector<int> ic, id, oc, od;
    layout(in_counts, ic, id);
    layout(out_counts, oc, od);
    return collective("all_to_all", std::move(keep), [=, this] {
      check_mpi(MPI_Alltoallv(in, ic.data(), id.data(), type_of(e), out, oc.data(), od.data(), type_of(e), comm_),
                "MPI_Alltoallv");
    });
  }
  std::shared_ptr<Work> barrier() override {
    return collective("barrier", nullptr, [this] { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); });
  }
  std::shared_ptr<Work> send(const void* data, int64_t count, Element e, int dst, int tag,
                             std::shared_ptr<const void> keep) override {
    auto work = std::make_shared<MpiWork>(*this, "send", std::move(keep));
    check_mpi(MPI_Isend(data, checked_count(count), type_of(e), dst, tag, comm_, work->request()), "MPI_Isend");
    return work;
  }
  std::shared_ptr<Work> recv(void* data, int64_t count, Element e, int src, int tag,
                             std::shared_ptr<const void> keep) override {
    auto work = std::make_shared<MpiWork>(*this, "recv", std::move(keep));
    check_mpi(MPI_Irecv(data, checked_count(count), type_of(e), src < 0 ? MPI_ANY_SOURCE : src, tag, comm_,
                        work->request()),
              "MPI_Irecv");
    return work;
  }
  int source_of(Work& work) override { return static_cast<MpiWork&>(work).source(); }

  // A collective over comm_: run by the worker, after those issued before it.
  std::unique_ptr<Backend> subgroup(const std::vector<int>& ranks, std::chrono::milliseconds timeout) override {
    auto sub = std::make_shared<MPI_Comm>(MPI_COMM_NULL);
    collective("new_group", nullptr, [=, this] {
      MPI_Group all = MPI_GROUP_NULL, some = MPI_GROUP_NULL;
      check_mpi(MPI_Comm_group(comm_, &all), "MPI_Comm_group");
      check_mpi(MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &some), "MPI_Group_incl");
      const int status = MPI_Comm_create(comm_, some, sub.get());
      MPI_Group_free(&some);
      MPI_Group_free(&all);
      check_mpi(status, "MPI_Comm_create");
    })->wait();
    if (*sub == MPI_COMM_NULL) return nullptr;
    return std::make_unique<MpiBackend>(*sub, timeout);
  }

 private:
  template <class F>
  std::shared_ptr<Work> collective(const char* name, std::shared_ptr<const void> keep, F call) {
    auto state = std::make_shared<CollectiveState>();
    state->keep = std::move(keep);
    if (!worker_) worker_ = std::make_unique<CollectiveThread>();
    worker_->post([state, call = std::move(call)]() mutable {
      std::exception_ptr error;
      try {
        call();
      } catch (...) {
        error = std::current_exception();
      }
      std::shared_ptr<const void> done_with;
      {
        std::lock_guard lock(state->mutex);
        state->done = true;
        state->error = error;
        done_with = std::move(state->keep);
      }
      state->finished.notify_all();
    });
    return std::make_shared<MpiCollectiveWork>(*this, name, std::move(state));
  }

  static MPI_Datatype type_of(Element e) {
    switch (e) {
      case Element::Float32: return MPI_FLOAT;
      case Element::Float64: return MPI_DOUBLE;
      case Element::Int32: return MPI_INT32_T;
      case Element::Int64: return MPI_INT64_T;
      case Element::Bool: return MPI_C_BOOL;
      case Element::Float16:
      case Element::BFloat16: return MPI_UINT16_T;
    }
    return MPI_DATATYPE_NULL;
  }

  MPI_Op op_of(Element e, ReduceOp op) {
    if (e == Element::Bool) {
      // As PyTorch's CPU backends: a sum or maximum of booleans is "any", a product or minimum "all".
      tsr::detail::check(op != ReduceOp::AVG, "distributed: ReduceOp.AVG is not defined for bool tensors");
      return op == ReduceOp::PRODUCT || op == ReduceOp::MIN ? MPI_LAND : MPI_LOR;
    }
    if (e == Element::Float16 || e == Element::BFloat16) return user_op(e, op);
    switch (op) {
      case ReduceOp::PRODUCT: return MPI_PROD;
      case ReduceOp::MIN: return MPI_MIN;
      case ReduceOp::MAX: return MPI_MAX;
      default: return MPI_SUM;  // SUM, and AVG before its division
    }
  }

  MPI_Op user_op(Element e, ReduceOp op) {
    const std::size_t kind = op == ReduceOp::PRODUCT ? 1 : op == ReduceOp::MIN ? 2 : op == ReduceOp::MAX ? 3 : 0;
    const std::size_t at = (e == Element::Float16 ? 0 : 4) + kind;
    MPI_Op& slot = ops_[at];
    if (slot != MPI_OP_NULL) return slot;
    MPI_User_function* f = nullptr;
    if (e == Element::Float16) f = user_function<half>(op);
    else f = user_function<bfloat16>(op);
    check_mpi(MPI_Op_create(f, 1, &slot), "MPI_Op_create");
    return slot;
  }
  template <class H>
  static MPI_User_function* user_function(ReduceOp op) {
    switch (op) {
      case ReduceOp::PRODUCT: return &combine_16bit<H, ReduceOp::PRODUCT>;
      case ReduceOp::MIN: return &combine_16bit<H, ReduceOp::MIN>;
      case ReduceOp::MAX: return &combine_16bit<H, ReduceOp::MAX>;
      default: return &combine_16bit<H, ReduceOp::SUM>;
    }
  }

  // AVG: the sum divided by the group's size, in the element type
  // (integers divide as integers, as NCCL's average does).
  void divide(void* data, int64_t count, Element e) const {
    const auto each = [&](auto* p) {
      using T = std::remove_pointer_t<decltype(p)>;
      for (int64_t i = 0; i < count; ++i) {
        if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
          p[i] = T(static_cast<float>(p[i]) / static_cast<float>(size_));
        else
          p[i] = static_cast<T>(p[i] / static_cast<T>(size_));
      }
    };
    switch (e) {
      case Element::Float32: each(static_cast<float*>(data)); break;
      case Element::Float64: each(static_cast<double*>(data)); break;
      case Element::Float16: each(static_cast<half*>(data)); break;
      case Element::BFloat16: each(static_cast<bfloat16*>(data)); break;
      case Element::Int32: each(static_cast<int32_t*>(data)); break;
      case Element::Int64: each(static_cast<int64_t*>(data)); break;
      case Element::Bool: break;  // refused before
    }
  }

  MPI_Comm comm_;
  std::chrono::milliseconds timeout_;
  int rank_ = 0, size_ = 1;
  // User-defined ops (half, bfloat16), made on the caller's thread before posting.
  MPI_Op ops_[8] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL,
                    MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  std::unique_ptr<CollectiveThread> worker_;  // started by the first collective
};

inline void MpiWork::wait() {
  const auto deadline = std::chrono::steady_clock::now() + backend_.timeout();
  for (int polls = 0; !is_completed(); ++polls) {
    if (std::chrono::steady_clock::now() > deadline) {
      // A send or receive can be withdrawn; the group stays usable.
      MPI_Cancel(&request_);
      MPI_Wait(&request_, MPI_STATUS_IGNORE);
      done_ = true;
      keep_.reset();
      throw timed_out(name_, backend_.timeout(), backend_.rank(), backend_.size());
    }
    // Poll hard first (most transfers finish in microseconds), then yield the core.
    if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

inline void MpiCollectiveWork::wait() {
  const auto polled = std::chrono::steady_clock::now() + kCollectivePoll;
  while (!state_->done.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < polled)
    std::this_thread::yield();
  std::unique_lock lock(state_->mutex);
  if (!state_->finished.wait_until(lock, std::chrono::steady_clock::now() + backend_.timeout(),
                                   [&] { return state_->done.load(); }))
    throw timed_out(name_, backend_.timeout(), backend_.rank(), backend_.size());
  if (state_->error) std::rethrow_exception(state_->error);
}

}  // namespace tsr::distributed::detail
