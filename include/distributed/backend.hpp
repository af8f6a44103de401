// The seam between the tensor-level collectives (collectives.hpp) and the
// library that moves the bytes: MPI for CPU tensors (mpi_backend.hpp); NCCL
// for CUDA tensors is another implementation of the same interface. Buffers
// are contiguous; counts are in elements.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "../dtype.hpp"
#include "../errors.hpp"
#include "../half.hpp"
#include "work.hpp"

namespace tsr::distributed {

// How all_reduce, reduce and reduce_scatter combine (torch.distributed.ReduceOp).
enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX };

namespace detail {

enum class Element { Float32, Float64, Float16, BFloat16, Int32, Int64, Bool };

template <class T>
constexpr Element element_of() {
  if constexpr (std::is_same_v<T, float>) return Element::Float32;
  else if constexpr (std::is_same_v<T, double>) return Element::Float64;
  else if constexpr (std::is_same_v<T, half>) return Element::Float16;
  else if constexpr (std::is_same_v<T, bfloat16>) return Element::BFloat16;
  else if constexpr (std::is_same_v<T, int32_t>) return Element::Int32;
  else if constexpr (std::is_same_v<T, int64_t>) return Element::Int64;
  else if constexpr (std::is_same_v<T, bool>) return Element::Bool;
  else static_assert(!sizeof(T), "not a tessera element type");
}

// What waiting for an operation longer than its group's timeout throws
// (every backend's Work says it the same way; `consequence` may add what
// became of the group).
inline Error timed_out(const char* operation, std::chrono::milliseconds timeout, int rank, int size,
                       const char* consequence = "") {
  return Error(tsr::detail::str("distributed: ", operation, " timed out after ", timeout.count(), " ms on rank ", rank,
                                " of ", size, " (another rank did not join it)", consequence));
}

// One group's communication. Every call starts the operation and returns
// its Work; `keep` (the tensors' storages) stays alive until it completes.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::shared_ptr<Work> all_reduce(void* data, int64_t count, Element e, ReduceOp op,
                                           std::shared_ptr<const void> keep) = 0;
  virtual std::shared_ptr<Work> broadcast(void* data, int64_t count, Element e, int root,
                                          std::shared_ptr<const void> keep) = 0;
  virtual std::shared_ptr<Work> reduce(void* data, int64_t count, Element e, ReduceOp op, int root,
                                       std::shared_ptr<const void> keep) = 0;
  // out holds size() blocks of `count` elements, block r from rank r.
  virtual std::shared_ptr<Work> all_gather(const void* in, void* out, int64_t count, Element e,
                                           std::shared_ptr<const void> keep) = 0;
  // in holds size() blocks of `count` elements; rank r gets the reduction of block r.
  virtual std::shared_ptr<Work> reduce_scatter(const void* in, void* out, int64_t count, Element e, ReduceOp op,
                                               std::shared_ptr<const void> keep) = 0;
  // out (root only) holds size() blocks of `count` elements.
  virtual std::shared_ptr<Work> gather(const void* in, void* out, int64_t count, Element e, int root,
                                       std::shared_ptr<const void> keep) = 0;
  // in (root only) holds size() blocks; every rank gets its block in out.
  virtual std::shared_ptr<Work> scatter(const void* in, void* out, int64_t count, Element e, int root,
                                        std::shared_ptr<const void> keep) = 0;
  // in holds size() consecutive blocks, block r (in_counts[r] elements) for
  // rank r; out receives rank r's block for this rank (out_counts[r]
  // elements), in rank order.
  virtual std::shared_ptr<Work> all_to_all(const void* in, const std::vector<int64_t>& in_counts, void* out,
                                           const std::vector<int64_t>& out_counts, Element e,
                                           std::shared_ptr<const void> keep) = 0;
  virtual std::shared_ptr<Work> barrier() = 0;
  virtual std::shared_ptr<Work> send(const void* data, int64_t count, Element e, int dst, int tag,
                                     std::shared_ptr<const void> keep) = 0;
  // src -1: from any rank. The Work's source() says which.
  virtual std::shared_ptr<Work> recv(void* data, int64_t count, Element e, int src, int tag,
                                     std::shared_ptr<const void> keep) = 0;
  // The rank the last completed recv on `work` came from.
  virtual int source_of(Work& work) = 0;
  // A backend over the listed ranks of this one (every rank of this one
  // calls it), timing out after `timeout`; null on the ranks not listed.
  virtual std::unique_ptr<Backend> subgroup(const std::vector<int>& ranks, std::chrono::milliseconds timeout) = 0;
};

}  // namespace detail
}  // namespace tsr::distributed
