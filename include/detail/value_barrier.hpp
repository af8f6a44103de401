// An empty asm statement a SIMD register passes through.
//
// The compiler must assume the value changed there: it cannot load it again
// from memory where it was loaded once (gemm's load_to_register), nor fold
// or contract arithmetic across it (float_round's additions). No instruction
// is emitted. On targets without a register constraint here, nothing.
#pragma once

namespace tsr::detail {

template <class Register>
[[gnu::always_inline]] inline void value_barrier(Register& reg) {
#if defined(__x86_64__) || defined(__i386__)
  asm("" : "+v"(reg));
#elif defined(__aarch64__)
  asm("" : "+w"(reg));
#endif
}

}  // namespace tsr::detail
