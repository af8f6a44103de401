// The seeded generator behind rand, randn, randint, uniform_ and normal_.
//
// The engine is the 32-bit Mersenne Twister (detail/mersenne_twister.hpp),
// whose output the C++ standard fixes bit for bit, and the distributions
// are written here (never std::uniform_real_distribution, whose output
// varies between standard libraries). rand() uses PyTorch's CPU formula for
// uniform floats, so manual_seed(s) followed by rand<float>/rand<double>
// gives the same numbers as torch.manual_seed(s); torch.rand(...).
#pragma once
#include <cmath>
#include <memory>
#include <mutex>

#include "detail/mersenne_twister.hpp"

namespace tsr {
namespace detail {

class Generator {
 public:
  static Generator& instance() {
    static Generator g;
    return g;
  }
  void seed(uint64_t s) {
    engine_.seed(static_cast<uint32_t>(s));
    has_cached_normal_ = false;
  }
  uint32_t random() { return static_cast<uint32_t>(engine_()); }
  uint64_t random64() {
    const uint64_t hi = random();
    return (hi << 32) | random();
  }
  // U[0, 1) with PyTorch's bit recipe: 24 random bits for float, 53 for double.
  float uniform_float() { return static_cast<float>(random() & ((1u << 24) - 1)) * 0x1.0p-24f; }
  double uniform_double() { return static_cast<double>(random64() & ((uint64_t{1} << 53) - 1)) * 0x1.0p-53; }
  // N(0, 1) by Box-Muller over two uniform doubles; the second value is
  // kept. PyTorch's scalar normal sampler (at::normal_distribution<double>)
  // to the bit, log(1 - u2) included, so that its users draw its numbers
  // (log_normal_; normal_ and randn of fewer than 16 elements).
  double normal() {
    if (has_cached_normal_) {
      has_cached_normal_ = false;
      return cached_normal_;
    }
    const double u1 = uniform_double(), u2 = uniform_double();
    const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
    const double theta = 2.0 * 3.14159265358979323846 * u1;
    cached_normal_ = r * std::sin(theta);
    has_cached_normal_ = true;
    return r * std::cos(theta);
  }
  // An integer in [0, range) as PyTorch's random_(from, to) draws it (so
  // torch.randint's numbers): 32 random bits modulo the range, 64 where the
  // range needs more. The modulo favours the low values by at most range /
  // 2^32 (relative), as PyTorch's does.
  uint64_t below(uint64_t range) {
    return range < (uint64_t{1} << 32) ? random() % range : random64() % range;
  }
  std::mutex& mutex() { return mutex_; }
  // A generator of its own (tsr::Generator's), seeded as PyTorch seeds one.
  explicit Generator(uint64_t seed) { this->seed(seed); }

  // Everything the next draws depend on (PyTorch's get_state/set_state).
  struct State {
    MersenneTwister engine;
    bool has_cached_normal;
    double cached_normal;
  };
  State state() const { return {engine_, has_cached_normal_, cached_normal_}; }
  void set_state(const State& s) {
    engine_ = s.engine;
    has_cached_normal_ = s.has_cached_normal;
    cached_normal_ = s.cached_normal;
  }

 private:
  Generator() { seed(67280421310721ull); }  // PyTorch's default seed
  MersenneTwister engine_;
  bool has_cached_normal_ = false;
  double cached_normal_ = 0;
  std::mutex mutex_;
};

// The generator that random draws on this thread use: the global one, or
// while a ThreadGeneratorGuard is alive, the one it names (a DataLoader
// worker's, so that workers draw reproducible streams of their own instead
// of taking turns on the global one in whatever order they run).
inline Generator*& thread_generator() {
  thread_local Generator* g = nullptr;
  return g;
}
inline Generator& current_generator() {
  Generator* g = thread_generator();
  return g ? *g : Generator::instance();
}
class ThreadGeneratorGuard {
 public:
  explicit ThreadGeneratorGuard(Generator& g) : previous_(thread_generator()) { thread_generator() = &g; }
  ~ThreadGeneratorGuard() { thread_generator() = previous_; }
  ThreadGeneratorGuard(const ThreadGeneratorGuard&) = delete;
  ThreadGeneratorGuard& operator=(const ThreadGeneratorGuard&) = delete;

 private:
  Generator* previous_;
};

// Puts the global generator back where it was when the guard goes out of
// scope: what runs inside draws as usual, and the stream after it is as if
// it had not (a copy of a module, built and then overwritten, must not move
// the random stream, as Python's deepcopy does not).
class GeneratorStateGuard {
 public:
  GeneratorStateGuard() {
    auto& g = Generator::instance();
    std::lock_guard lock(g.mutex());
    saved_ = g.state();
  }
  ~GeneratorStateGuard() {
    auto& g = Generator::instance();
    std::lock_guard lock(g.mutex());
    g.set_state(saved_);
  }
  GeneratorStateGuard(const GeneratorStateGuard&) = delete;
  GeneratorStateGuard& operator=(const GeneratorStateGuard&) = delete;

 private:
  Generator::State saved_;
};

}  // namespace detail

// A generator of its own, as torch.Generator: what samplers and random_split
// draw from when given one, so that their order does not depend on (or move)
// the global stream. Copies share the state, as PyTorch's handles do.
class Generator {
 public:
  Generator() : Generator(67280421310721ull) {}  // PyTorch's default seed
  explicit Generator(uint64_t seed) : impl_(std::make_shared<detail::Generator>(seed)) {}
  Generator& manual_seed(uint64_t seed) {
    std::lock_guard lock(impl_->mutex());
    impl_->seed(seed);
    return *this;
  }
  detail::Generator& impl() const { return *impl_; }

 private:
  std::shared_ptr<detail::Generator> impl_;
};

// Seeds the global generator: the same seed gives the same numbers everywhere.
inline void manual_seed(uint64_t seed) {
  auto& g = detail::Generator::instance();
  std::lock_guard lock(g.mutex());
  g.seed(seed);
}

}  // namespace tsr
