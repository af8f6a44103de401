// The MPI implementation of the backend seam, for CPU tensors: every
// operation is one nonblocking MPI call (MPI_Iallreduce, MPI_Ibcast, ...)
// on the group's own communicator, whose Work polls MPI_Test until it
// completes or the group's timeout passes. Errors come back as tsr::Error
// with MPI's text (the communicator returns errors instead of aborting).
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
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
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

class MpiWork final : public Work {
 public:
  MpiWork(MpiBackend& backend, const char* name, bool point_to_point, std::shared_ptr<const void> keep)
      : backend_(backend), name_(name), point_to_point_(point_to_point), keep_(std::move(keep)) {}
  MPI_Request* request() { return &request_; }
  void on_completion(std::function<void()> f) { finish_ = std::move(f); }

  bool is_completed() override {
    if (done_) return true;
    int flag = 0;
    check_mpi(MPI_Test(&request_, &flag, &status_), "MPI_Test");
    if (flag) complete();
    return done_;
  }
  void wait() override;
  int source() const { return status_.MPI_SOURCE; }

 private:
  void complete() {
    done_ = true;
    if (finish_) finish_();
    keep_.reset();
  }

  MpiBackend& backend_;
  const char* name_;
  bool point_to_point_;
  std::shared_ptr<const void> keep_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  MPI_Status status_{};
  std::function<void()> finish_;
  bool done_ = false;
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
    settle_abandoned();
    for (MPI_Op& op : ops_)
      if (op != MPI_OP_NULL) MPI_Op_free(&op);
    MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  std::shared_ptr<Work> all_reduce(void* data, int64_t count, Element e, ReduceOp op,
                                   std::shared_ptr<const void> keep) override {
    auto work = start("all_reduce", std::move(keep));
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data, checked_count(count), type_of(e), op_of(e, op), comm_,
                             work->request()),
              "MPI_Iallreduce");
    if (op == ReduceOp::AVG) work->on_completion([=, this] { divide(data, count, e); });
    return work;
  }
  std::shared_ptr<Work> broadcast(void* data, int64_t count, Element e, int root,
                                  std::shared_ptr<const void> keep) override {
    auto work = start("broadcast", std::move(keep));
    check_mpi(MPI_Ibcast(data, checked_count(count), type_of(e), root, comm_, work->request()), "MPI_Ibcast");
    return work;
  }
  std::shared_ptr<Work> reduce(void* data, int64_t count, Element e, ReduceOp op, int root,
                               std::shared_ptr<const void> keep) override {
    auto work = start("reduce", std::move(keep));
    // The root reduces in place; the others send their data, which stays as it was.
    check_mpi(MPI_Ireduce(rank_ == root ? MPI_IN_PLACE : data, rank_ == root ? data : nullptr, checked_count(count),
                          type_of(e), op_of(e, op), root, comm_, work->request()),
              "MPI_Ireduce");
    if (op == ReduceOp::AVG && rank_ == root) work->on_completion([=, this] { divide(data, count, e); });
    return work;
  }
  std::shared_ptr<Work> all_gather(const void* in, void* out, int64_t count, Element e,
                                   std::shared_ptr<const void> keep) override {
    auto work = start("all_gather", std::move(keep));
    const int n = checked_count(count);
    check_mpi(MPI_Iallgather(in, n, type_of(e), out, n, type_of(e), comm_, work->request()), "MPI_Iallgather");
    return work;
  }
  std::shared_ptr<Work> reduce_scatter(const void* in, void* out, int64_t count, Element e, ReduceOp op,
                                       std::shared_ptr<const void> keep) override {
    auto work = start("reduce_scatter", std::move(keep));
    check_mpi(MPI_Ireduce_scatter_block(in, out, checked_count(count), type_of(e), op_of(e, op), comm_,
                                        work->request()),
              "MPI_Ireduce_scatter_block");
    if (op == ReduceOp::AVG) work->on_completion([=, this] { divide(out, count, e); });
    return work;
  }
  std::shared_ptr<Work> gather(const void* in, void* out, int64_t count, Element e, int root,
                               std::shared_ptr<const void> keep) override {
    auto work = start("gather", std::move(keep));
    const int n = checked_count(count);
    check_mpi(MPI_Igather(in, n, type_of(e), out, n, type_of(e), root, comm_, work->request()), "MPI_Igather");
    return work;
  }
  std::shared_ptr<Work> scatter(const void* in, void* out, int64_t count, Element e, int root,
                                std::shared_ptr<const void> keep) override {
    auto work = start("scatter", std::move(keep));
    const int n = checked_count(count);
    check_mpi(MPI_Iscatter(in, n, type_of(e), out, n, type_of(e), root, comm_, work->request()), "MPI_Iscatter");
    return work;
  }
  std::shared_ptr<Work> all_to_all(const void* in, const std::vector<int64_t>& in_counts, void* out,
                                   const std::vector<int64_t>& out_counts, Element e,
                                   std::shared_ptr<const void> keep) override {
    const bool equal = std::all_of(in_counts.begin(), in_counts.end(), [&](int64_t c) { return c == in_counts[0]; }) &&
                       out_counts == in_counts;
    if (equal) {
      auto work = start("all_to_all", std::move(keep));
      const int n = checked_count(in_counts.empty() ? 0 : in_counts[0]);
      check_mpi(MPI_Ialltoall(in, n, type_of(e), out, n, type_of(e), comm_, work->request()), "MPI_Ialltoall");
      return work;
    }
    // Counts and displacements, which MPI reads until the operation completes.
    struct Layout {
      std::vector<int> in_counts, in_displs, out_counts, out_displs;
      std::shared_ptr<const void> keep;
    };
    auto layout = std::make_shared<Layout>();
    const auto fill = [](const std::vector<int64_t>& counts, std::vector<int>& c, std::vector<int>& d) {
      int64_t at = 0;
      for (const int64_t n : counts) {
        c.push_back(checked_count(n));
        d.push_back(checked_count(at));
        at += n;
      }
    };
    fill(in_counts, layout->in_counts, layout->in_displs);
    fill(out_counts, layout->out_counts, layout->out_displs);
    layout->keep = std::move(keep);
    const Layout& l = *layout;
    auto work = start("all_to_all", layout);
    check_mpi(MPI_Ialltoallv(in, l.in_counts.data(), l.in_displs.data(), type_of(e), out, l.out_counts.data(),
                             l.out_displs.data(), type_of(e), comm_, work->request()),
              "MPI_Ialltoallv");
    return work;
  }
  std::shared_ptr<Work> barrier() override {
    auto work = start("barrier", nullptr);
    check_mpi(MPI_Ibarrier(comm_, work->request()), "MPI_Ibarrier");
    return work;
  }
  std::shared_ptr<Work> send(const void* data, int64_t count, Element e, int dst, int tag,
                             std::shared_ptr<const void> keep) override {
    auto work = start("send", std::move(keep), true);
    check_mpi(MPI_Isend(data, checked_count(count), type_of(e), dst, tag, comm_, work->request()), "MPI_Isend");
    return work;
  }
  std::shared_ptr<Work> recv(void* data, int64_t count, Element e, int src, int tag,
                             std::shared_ptr<const void> keep) override {
    auto work = start("recv", std::move(keep), true);
    check_mpi(MPI_Irecv(data, checked_count(count), type_of(e), src < 0 ? MPI_ANY_SOURCE : src, tag, comm_,
                        work->request()),
              "MPI_Irecv");
    return work;
  }
  int source_of(Work& work) override { return static_cast<MpiWork&>(work).source(); }

  std::unique_ptr<Backend> subgroup(const std::vector<int>& ranks, std::chrono::milliseconds timeout) override {
    MPI_Group all = MPI_GROUP_NULL, some = MPI_GROUP_NULL;
    check_mpi(MPI_Comm_group(comm_, &all), "MPI_Comm_group");
    check_mpi(MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &some), "MPI_Group_incl");
    MPI_Comm sub = MPI_COMM_NULL;
    const int status = MPI_Comm_create(comm_, some, &sub);  // collective over comm_
    MPI_Group_free(&some);
    MPI_Group_free(&all);
    check_mpi(status, "MPI_Comm_create");
    if (sub == MPI_COMM_NULL) return nullptr;
    return std::make_unique<MpiBackend>(sub, timeout);
  }

  // An operation that timed out may still be running on the other ranks:
  // its request is kept and settled when the group is destroyed.
  void abandon(MPI_Request request, std::shared_ptr<const void> keep) {
    abandoned_.push_back({request, std::move(keep)});
  }

 private:
  std::shared_ptr<MpiWork> start(const char* name, std::shared_ptr<const void> keep, bool p2p = false) {
    return std::make_shared<MpiWork>(*this, name, p2p, std::move(keep));
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

  // Waits for the abandoned operations (bounded by the timeout): MPI
  // cannot free a communicator with operations in flight.
  void settle_abandoned() {
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (auto& [request, keep] : abandoned_) {
      int flag = 0;
      while (MPI_Test(&request, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag) {
        if (std::chrono::steady_clock::now() > deadline) {
          // Another rank never joined: the job cannot end cleanly.
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
    abandoned_.clear();
  }

  MPI_Comm comm_;
  std::chrono::milliseconds timeout_;
  int rank_ = 0, size_ = 1;
  MPI_Op ops_[8] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL,
                    MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  // With the tensors they write into, which must outlive them.
  std::vector<std::pair<MPI_Request, std::shared_ptr<const void>>> abandoned_;
};

inline void MpiWork::wait() {
  const auto deadline = std::chrono::steady_clock::now() + backend_.timeout();
  for (int polls = 0; !is_completed(); ++polls) {
    if (std::chrono::steady_clock::now() > deadline) {
      if (point_to_point_) {
        // A send or receive can be withdrawn; the group stays usable.
        MPI_Cancel(&request_);
        MPI_Wait(&request_, MPI_STATUS_IGNORE);
      } else {
        backend_.abandon(request_, std::move(keep_));
      }
      request_ = MPI_REQUEST_NULL;
      done_ = true;
      keep_.reset();
      throw Error(tsr::detail::str("distributed: ", name_, " timed out after ", backend_.timeout().count(),
                                   " ms on rank ", backend_.rank(), " of ", backend_.size(),
                                   " (another rank did not join it)"));
    }
    // Poll hard first (most operations finish in microseconds), then yield the core.
    if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace tsr::distributed::detail
