// bench/autograd: tessera's fused backward against libtorch's, in one
// process, 1 thread (the reference numbers are 1-thread):
//   (a) forward + backward of a 10-op elementwise chain on 2^22 floats:
//       time, and the peak heap memory above the inputs (counted by
//       wrapping malloc and friends, and mmap);
//   (b) a tiny graph, (x*x + x).sum().backward() on 16 floats, per iteration;
//   (c) an MLP 784-256-10 with cross-entropy and an SGD step, batch 64 and 1
//       (gradients set to none after the step on both sides, as PyTorch 2's
//       zero_grad does by default).
//   ./scripts/bench.sh autograd
#include <tessera.hpp>

#include <malloc.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <mutex>

#include "bench_util.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
}

using namespace tsr;

namespace {

// Peak heap use, counted by wrapping the C allocation functions and
// mmap/munmap (below): this machine's kernel does not keep VmHWM, so the
// process's high-water mark cannot be read from /proc. Every allocation of
// tessera (small blocks through std::aligned_alloc after empty_cache(),
// blocks of 1 MiB and up mapped from the system) and of libtorch
// (posix_memalign, malloc; its BLAS's buffers mapped) passes through them.
std::atomic<int64_t> g_live{0}, g_peak{0};
void note(int64_t delta) {
  const int64_t now = g_live.fetch_add(delta, std::memory_order_relaxed) + delta;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

// Anonymous mappings (counted by the mmap and munmap wrappers below), from
// their mapping to their last unmapped page. A mapping may be unmapped in
// parts (tessera maps a block with room to align it and unmaps the slack at
// once), so each is kept with the bytes still mapped, and an unmapping
// counts against the mapping it falls in.
struct Mapping {
  std::uintptr_t begin = 0, end = 0;
  std::size_t left = 0;
};
std::mutex g_mappings_mutex;
Mapping g_mappings[4096];

// The peak heap memory f adds above what was live before it, in MiB.
template <class F>
double peak_extra_mib(F&& f) {
  empty_cache();
  const int64_t before = g_live.load();
  g_peak.store(before);
  f();
  return static_cast<double>(g_peak.load() - before) / (1 << 20);
}

// The chain: 10 elementwise ops.
template <class X>
auto chain(const X& x) {
  return exp(sin(x) * 0.5f + 1.f) / (1.f + square(tanh(x))) - sqrt(abs(x) + 1.f) * x;
}

void report(const char* what, double ours, double theirs, const char* unit, const char* target) {
  std::printf("  %-44s tessera %9.3f %s  libtorch %9.3f %s  speed %.2fx  (%s)\n", what, ours, unit, theirs, unit,
              theirs / ours, target);
}

}  // namespace

// The wrappers: glibc's own functions underneath, usable sizes counted.
extern "C" {
void* malloc(std::size_t n) {
  void* p = __libc_malloc(n);
  if (p) note(static_cast<int64_t>(malloc_usable_size(p)));
  return p;
}
void* calloc(std::size_t n, std::size_t size) {
  void* p = __libc_calloc(n, size);
  if (p) note(static_cast<int64_t>(malloc_usable_size(p)));
  return p;
}
void* realloc(void* old, std::size_t n) {
  const auto was = old ? static_cast<int64_t>(malloc_usable_size(old)) : 0;
  void* p = __libc_realloc(old, n);
  if (p) note(static_cast<int64_t>(malloc_usable_size(p)) - was);
  return p;
}
void free(void* p) {
  if (p) note(-static_cast<int64_t>(malloc_usable_size(p)));
  __libc_free(p);
}
void* memalign(std::size_t alignment, std::size_t n) {
  void* p = __libc_memalign(alignment, n);
  if (p) note(static_cast<int64_t>(malloc_usable_size(p)));
  return p;
}
void* aligned_alloc(std::size_t alignment, std::size_t n) { return memalign(alignment, n); }
void* mmap(void* addr, std::size_t n, int prot, int flags, int fd, off_t offset) {
  void* p = reinterpret_cast<void*>(syscall(SYS_mmap, addr, n, prot, flags, fd, offset));
  if (p != MAP_FAILED && (flags & MAP_ANONYMOUS)) {
    const std::lock_guard lock(g_mappings_mutex);
    for (Mapping& m : g_mappings)
      if (m.left == 0) {
        const auto begin = reinterpret_cast<std::uintptr_t>(p);
        m = {begin, begin + n, n};
        note(static_cast<int64_t>(n));
        break;
      }
  }
  return p;
}
int munmap(void* p, std::size_t n) {
  {
    const std::lock_guard lock(g_mappings_mutex);
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    for (Mapping& m : g_mappings)
      if (m.left != 0 && at >= m.begin && at < m.end) {
        const std::size_t freed = n < m.left ? n : m.left;
        m.left -= freed;
        note(-static_cast<int64_t>(freed));
        break;
      }
  }
  return static_cast<int>(syscall(SYS_munmap, p, n));
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  *out = memalign(alignment, n);
  return *out || n == 0 ? 0 : ENOMEM;
}
}

int main() {
  bench::print_machine();
  bench::set_threads(1);
  constexpr int64_t N = int64_t{1} << 22;
  manual_seed(1);
  std::printf("== autograd, 1 thread, medians in turns\n");

  // (a) the chain.
  auto x = randn<float>({N}).requires_grad_();
  auto step_ours = [&] {
    auto loss = sum(chain(x));
    loss.backward();
  };
#ifdef TSR_BENCH_TORCH
  auto tx = torch::randn({N}).requires_grad_();
  auto step_torch = [&] {
    auto loss = ((torch::exp(torch::sin(tx) * 0.5f + 1.f) / (1.f + torch::square(torch::tanh(tx)))) -
                 torch::sqrt(torch::abs(tx) + 1.f) * tx)
                    .sum();
    loss.backward();
  };
  const auto [ms_ours, ms_torch] = bench::paired_ms(11, step_ours, step_torch);
  report("(a) 10-op chain fwd+bwd, 2^22 floats", ms_ours, ms_torch, "ms", "target >= 2x");
  // Peak memory of one step from scratch (x.grad unset: the step makes it),
  // then with x.grad already there (the gradient is accumulated into it).
  x.mutable_grad() = Tensor<float>();
  tx.mutable_grad().reset();
  const double first_ours = peak_extra_mib(step_ours), first_torch = peak_extra_mib(step_torch);
  std::printf("  %-44s tessera %9.1f MiB libtorch %9.1f MiB  ratio %.2f  (target <= 0.33)\n",
              "(a) peak extra memory, x.grad unset", first_ours, first_torch, first_ours / first_torch);
  const double again_ours = peak_extra_mib(step_ours), again_torch = peak_extra_mib(step_torch);
  std::printf("  %-44s tessera %9.1f MiB libtorch %9.1f MiB\n", "(a) peak extra memory, x.grad present", again_ours,
              again_torch);
#else
  std::printf("  (a) %.3f ms (libtorch not installed)\n", bench::median_seconds(11, step_ours) * 1e3);
#endif

  // (b) the tiny graph.
  auto s = randn<float>({16}).requires_grad_();
  auto tiny_ours = [&] { sum(s * s + s).backward(); };
#ifdef TSR_BENCH_TORCH
  auto ts = torch::randn({16}).requires_grad_();
  auto tiny_torch = [&] { (ts * ts + ts).sum().backward(); };
  const auto t = bench::interleaved_ns_per_call(11, 2000, tiny_ours, tiny_torch);
  report("(b) (x*x + x).sum().backward(), 16 floats", t[0][5] / 1e3, t[1][5] / 1e3, "us", "target >= 10x");
#else
  std::printf("  (b) %.2f us (libtorch not installed)\n", bench::median_ns_per_call(11, 2000, tiny_ours) / 1e3);
#endif

  // (c) the MLP step.
  for (int64_t batch : {64, 1}) {
    const float lr = 0.01f;
    auto w1 = Tensor<float>(randn<float>({256, 784}) * 0.05f).requires_grad_();
    auto w2 = Tensor<float>(randn<float>({10, 256}) * 0.05f).requires_grad_();
    auto b1 = zeros<float>({256}).requires_grad_(), b2 = zeros<float>({10}).requires_grad_();
    auto in = randn<float>({batch, 784});
    auto target = randint(0, 10, {batch, 1});
    auto mlp_ours = [&] {
      Tensor<float> h = relu(linear(in, w1, b1));
      auto logits = linear(h, w2, b2);
      Tensor<float> loss = -mean(gather(log_softmax(logits, 1), 1, target));
      loss.backward();
      NoGradGuard no_grad;
      for (auto* p : {&w1, &b1, &w2, &b2}) {
        *p -= lr * p->grad();
        p->mutable_grad() = Tensor<float>();  // zero_grad(set_to_none=True), PyTorch 2's default
      }
    };
#ifdef TSR_BENCH_TORCH
    auto tw1 = torch::from_blob(w1.data_ptr(), {256, 784}).clone().requires_grad_();
    auto tb1 = torch::zeros({256}).requires_grad_();
    auto tw2 = torch::from_blob(w2.data_ptr(), {10, 256}).clone().requires_grad_();
    auto tb2 = torch::zeros({10}).requires_grad_();
    auto tin = torch::from_blob(in.data_ptr(), {batch, 784}).clone();
    auto ttarget = torch::from_blob(target.data_ptr(), {batch}, torch::kLong).clone();
    auto mlp_torch = [&] {
      auto h = torch::relu(torch::nn::functional::linear(tin, tw1, tb1));
      auto logits = torch::nn::functional::linear(h, tw2, tb2);
      auto loss = torch::nn::functional::cross_entropy(logits, ttarget);
      loss.backward();
      torch::NoGradGuard no_grad;
      for (auto* p : {&tw1, &tb1, &tw2, &tb2}) {
        p->sub_(p->grad() * lr);
        p->mutable_grad().reset();
      }
    };
    const int calls = batch == 1 ? 200 : 20;
    const auto m = bench::interleaved_ns_per_call(11, calls, mlp_ours, mlp_torch);
    char what[64];
    std::snprintf(what, sizeof what, "(c) MLP 784-256-10 SGD step, batch %lld", (long long)batch);
    report(what, m[0][5] / 1e6, m[1][5] / 1e6, "ms", batch == 1 ? "target >= 3x" : "target >= 1x");
#else
    std::printf("  (c) batch %lld: %.3f ms (libtorch not installed)\n", (long long)batch,
                bench::median_seconds(11, mlp_ours) * 1e3);
#endif
  }
  return 0;
}
