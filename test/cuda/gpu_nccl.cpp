// The NCCL backend (include/distributed/nccl_backend.hpp) on a real GPU,
// as one rank: every collective through the backend seam on device
// buffers, against what a group of one must give (its own data, moved
// where the operation puts it). Built with the host compiler against the
// CUDA runtime and NCCL; without a GPU it reports that it skipped.
// (Several ranks need several GPUs: NCCL refuses two ranks on one device.)
#include "gpu_main.hpp"

#include <distributed/nccl_backend.hpp>

#include <cstdint>
#include <vector>

namespace dd = tsr::distributed::detail;
using tsr::distributed::ReduceOp;

namespace {

// A device copy of v, and back.
template <class T>
T* to_device(const std::vector<T>& v) {
  T* p = nullptr;
  check(cudaMalloc(&p, v.size() * sizeof(T)));
  check(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}
template <class T>
std::vector<T> to_host(const T* p, std::size_t n) {
  std::vector<T> v(n);
  check(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

std::unique_ptr<dd::NcclBackend> group_of_one() {
  ncclUniqueId id{};
  dd::check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  ncclComm_t comm = nullptr;
  dd::check_nccl(ncclCommInitRank(&comm, 1, id, 0), "ncclCommInitRank");
  return std::make_unique<dd::NcclBackend>(comm, std::chrono::seconds(30));
}

}  // namespace

TEST_CASE("NCCL backend: every collective on device buffers, as a group of one") {
  auto backend = group_of_one();
  CHECK(backend->rank() == 0);
  CHECK(backend->size() == 1);
  const std::vector<float> v = {1.5f, -2.f, 3.25f, 8.f};

  for (const ReduceOp op : {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::PRODUCT, ReduceOp::MIN, ReduceOp::MAX}) {
    float* d = to_device(v);
    auto work = backend->all_reduce(d, 4, dd::Element::Float32, op, nullptr);
    work->wait();
    CHECK(work->is_completed());
    CHECK(to_host(d, 4) == v);
    check(cudaFree(d));
  }
  {
    double* d = to_device(std::vector<double>{1, 2});
    backend->broadcast(d, 2, dd::Element::Float64, 0, nullptr)->wait();
    CHECK(to_host(d, 2) == std::vector<double>{1, 2});
    backend->reduce(d, 2, dd::Element::Float64, ReduceOp::SUM, 0, nullptr)->wait();
    CHECK(to_host(d, 2) == std::vector<double>{1, 2});
    check(cudaFree(d));
  }
  {
    const std::vector<int64_t> w = {7, 8, 9};
    int64_t* in = to_device(w);
    int64_t* out = to_device(std::vector<int64_t>(3, 0));
    backend->all_gather(in, out, 3, dd::Element::Int64, nullptr)->wait();
    CHECK(to_host(out, 3) == w);
    check(cudaMemset(out, 0, 3 * sizeof(int64_t)));
    backend->reduce_scatter(in, out, 3, dd::Element::Int64, ReduceOp::SUM, nullptr)->wait();
    CHECK(to_host(out, 3) == w);
    check(cudaMemset(out, 0, 3 * sizeof(int64_t)));
    backend->gather(in, out, 3, dd::Element::Int64, 0, nullptr)->wait();
    CHECK(to_host(out, 3) == w);
    check(cudaMemset(out, 0, 3 * sizeof(int64_t)));
    backend->scatter(in, out, 3, dd::Element::Int64, 0, nullptr)->wait();
    CHECK(to_host(out, 3) == w);
    check(cudaMemset(out, 0, 3 * sizeof(int64_t)));
    backend->all_to_all(in, {3}, out, {3}, dd::Element::Int64, nullptr)->wait();
    CHECK(to_host(out, 3) == w);
    check(cudaFree(in));
    check(cudaFree(out));
  }
  {
    // Booleans: a sum is "any" (NCCL's max on bytes).
    uint8_t* d = to_device(std::vector<uint8_t>{1, 0});  // bools travel as bytes
    backend->all_reduce(d, 2, dd::Element::Bool, ReduceOp::SUM, nullptr)->wait();
    CHECK(to_host(d, 2) == std::vector<uint8_t>{1, 0});
    CHECK_THROWS_AS(backend->all_reduce(d, 2, dd::Element::Bool, ReduceOp::AVG, nullptr), tsr::Error);
    check(cudaFree(d));
  }
  backend->barrier()->wait();
  // What the NCCL backend cannot do is refused, not attempted.
  CHECK_THROWS_AS(backend->recv(nullptr, 1, dd::Element::Float32, -1, 0, nullptr), tsr::Error);
  CHECK_THROWS_AS(backend->send(nullptr, 1, dd::Element::Float32, 0, 3, nullptr), tsr::Error);
}
