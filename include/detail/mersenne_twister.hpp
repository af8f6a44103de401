// The 32-bit Mersenne Twister (MT19937), the engine behind tessera's
// generator and PyTorch's CPU generator.
//
// The C++ standard fixes its output bit for bit (std::mt19937), but <random>
// is one of the costliest standard headers to compile (about a fifth of a
// second in every translation unit), and only the engine is needed: this is
// the same algorithm, with the same seeding, so the same numbers.
#pragma once
#include <cstdint>

namespace tsr::detail {

class MersenneTwister {
 public:
  explicit MersenneTwister(uint32_t seed = 5489u) { this->seed(seed); }

  void seed(uint32_t s) {
    state_[0] = s;
    for (uint32_t i = 1; i < kN; ++i) state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + i;
    next_ = kN;
  }

  uint32_t operator()() {
    if (next_ >= kN) regenerate();
    uint32_t y = state_[next_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }

 private:
  static constexpr uint32_t kN = 624, kM = 397;

  // The twist: a new block of kN words from the previous one, in three runs
  // so that no index wraps, and branch-free (the low bit of y is random, so
  // a branch on it would be mispredicted half the time).
  static uint32_t twist(uint32_t upper, uint32_t lower, uint32_t far) {
    const uint32_t y = (upper & 0x80000000u) | (lower & 0x7fffffffu);
    return far ^ (y >> 1) ^ (0x9908b0dfu & (0u - (y & 1u)));
  }
  void regenerate() {
    uint32_t i = 0;
    for (; i < kN - kM; ++i) state_[i] = twist(state_[i], state_[i + 1], state_[i + kM]);
    for (; i < kN - 1; ++i) state_[i] = twist(state_[i], state_[i + 1], state_[i + kM - kN]);
    state_[kN - 1] = twist(state_[kN - 1], state_[0], state_[kM - 1]);
    next_ = 0;
  }

  uint32_t state_[kN];
  uint32_t next_ = kN;
};

}  // namespace tsr::detail
