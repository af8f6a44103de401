// An optimizer's fused update on the device: one thread per element loads
// the element of every operand (parameter, state, gradient), runs the
// optimizer's step on them as scalars and stores the ones the step updates.
// The step is the one the CPU runs on SIMD batches (optim/fused_update.hpp),
// so the formulas exist once.
#pragma once
#include <thrust/execution_policy.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../detail/config.hpp"
#include "stream.hpp"

namespace tsr::detail::cuda {

template <class T, class Step, bool... Writes>
struct UpdateElement {
  Step step;
  T* pointers[sizeof...(Writes)];

  TSR_HOST_DEVICE void operator()(int64_t k) const { run(k, std::make_index_sequence<sizeof...(Writes)>{}); }

 private:
  template <std::size_t... I>
  TSR_HOST_DEVICE void run(int64_t k, std::index_sequence<I...>) const {
    T v[] = {pointers[I][k]...};
    // Operands the step only reads reach it as const, as on the CPU.
    step(static_cast<std::conditional_t<Writes, T&, const T&>>(v[I])...);
    ((Writes ? void(pointers[I][k] = v[I]) : void()), ...);
  }
};

template <class T, bool... Writes, class Step>
void update_elements(int device, const Step& step, T* const* pointers, int64_t n) {
  if (n == 0) return;
  static_assert(std::is_trivially_copyable_v<Step>, "an optimizer step must be trivially copyable to run on the device");
  UpdateElement<T, Step, Writes...> update{step, {}};
  for (std::size_t i = 0; i < sizeof...(Writes); ++i) update.pointers[i] = pointers[i];
  for_each_index(device, n, update, "thrust::for_each_n (optimizer step)");
}

}  // namespace tsr::detail::cuda
