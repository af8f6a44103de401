// One pass over a parameter and its optimizer state: the whole update of an
// optimizer step, for every element, while the element is in registers.
//
// PyTorch's single-tensor optimizers spend one pass over memory per formula
// (Adam: mul_, add_, mul_, addcmul_, sqrt, div, add_, addcdiv_, about twenty
// reads and writes of a parameter-sized array); an update is bound by memory,
// so reading each tensor once and writing each updated one once is most of
// the speed there is. The formulas are written once, for SIMD batches; the
// tail runs the same batch code on a padded copy, so every element gets the
// same arithmetic wherever it lies.
//
// A step is a function object whose operator() is a template over the
// operand type and TSR_HOST_DEVICE: on the CPU it runs on xsimd batches, on
// a CUDA device on single elements, one thread per element (nvcc cannot
// take generic lambdas into device code, hence named steps).
#pragma once
#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../tessera.hpp"

namespace tsr::detail {

// A tensor the update reads (const Tensor<T>&) or writes (Tensor<T>&), as a
// contiguous array; a non-contiguous one is worked on as a contiguous copy,
// written back at the end when the update writes it.
template <class T, bool Writes>
struct UpdateOperand {
  static constexpr bool writes = Writes;
  explicit UpdateOperand(const Tensor<T>& t) : original(t), work(t.contiguous()) {}
  std::conditional_t<Writes, T*, const T*> data() const { return work.data_ptr(); }
  void finish() {
    if constexpr (Writes) {
      if (work.device_data_ptr() != original.device_data_ptr()) {
        const NoGradGuard no_grad;
        original.copy_(work);
      } else {
        original.storage()->bump_version();  // written through the pointer
      }
    }
  }
  Tensor<T> original;
  Tensor<T> work;
};

// Read-only operands reach the step as const batches.
template <class Pointer, class B>
decltype(auto) as_operand(B& b) {
  if constexpr (std::is_const_v<std::remove_pointer_t<Pointer>>) return static_cast<const B&>(b);
  else return static_cast<B&>(b);
}

template <class B, class T>
B load_padded(const T* p, int64_t count) {
  alignas(64) T buffer[B::size] = {};
  std::memcpy(buffer, p, static_cast<std::size_t>(count) * sizeof(T));
  return B::load_aligned(buffer);
}

// A whole batch at p, or the first `count` elements of one on a padded copy.
template <bool Whole, class B, class T>
B load_batch(const T* p, int64_t count) {
  if constexpr (Whole) return B::load_unaligned(p);
  else return load_padded<B>(p, count);
}

template <bool Whole, class B, class T>
void store_one(const B& b, T* p, int64_t i, int64_t count) {
  if constexpr (!std::is_const_v<T>) {
    if constexpr (Whole) {
      b.store_unaligned(p + i);
    } else {
      alignas(64) std::remove_const_t<T> buffer[B::size];
      b.store_aligned(buffer);
      std::memcpy(p + i, buffer, static_cast<std::size_t>(count) * sizeof(T));
    }
  }
}

template <bool Whole, class Batches, class Pointers>
void store_written(const Batches& batches, const Pointers& pointers, int64_t i, int64_t count) {
  [&]<std::size_t... k>(std::index_sequence<k...>) {
    (store_one<Whole>(std::get<k>(batches), std::get<k>(pointers), i, count), ...);
  }(std::make_index_sequence<std::tuple_size_v<Batches>>{});
}

namespace cuda {
// Defined in cuda/fused_update.hpp, in translation units with the backend:
// step(v...) on element k of every operand (on `device`) for every k < n,
// one thread per element; Writes says which operands the step updates.
template <class T, bool... Writes, class Step>
void update_elements(int device, const Step& step, T* const* pointers, int64_t n);
}  // namespace cuda

// The update of operands on a CUDA device (all on one, checked).
template <class T, class Step, class... Operands>
void fused_update_on_device(Device device, const Step& step, const Operands&... operands) {
  if constexpr (kCudaBackend) {
    T* const pointers[] = {const_cast<T*>(operands.work.device_data_ptr())...};
    const int64_t n = std::get<0>(std::forward_as_tuple(operands...)).work.numel();
    cuda::update_elements<T, Operands::writes...>(device.index, step, pointers, n);
  } else {
    fail_compiled_without_cuda(device, "an optimizer step");
  }
}

// The elements of a parameter that one thread updates at a time (a multiple
// of every batch width).
inline constexpr int64_t kUpdateChunk = int64_t(1) << 15;

// The CPU's loop: batches of every operand (contiguous arrays), split among
// the thread pool's threads in chunks of kUpdateChunk where large.
template <class T, class Step, class Operands>
void fused_update_on_cpu(const Step& step, const Operands& operands) {
  using B = xsimd::batch<T>;
  constexpr int64_t kLanes = static_cast<int64_t>(B::size);
  const int64_t n = std::get<0>(operands).work.numel();
  const auto pointers = std::apply([](const auto&... o) { return std::make_tuple(o.data()...); }, operands);

  // `count` elements at i of every operand, a whole batch or (Whole false)
  // the tail on padded copies: load, step, store the written ones.
  auto batch_at = []<bool Whole>(std::bool_constant<Whole>, const Step& s, const auto& ptrs, int64_t i, int64_t count) {
    std::apply(
        [&](auto*... p) {
          auto batches = std::make_tuple(load_batch<Whole, B>(p + i, count)...);
          std::apply([&](auto&... b) { s(as_operand<decltype(p)>(b)...); }, batches);
          store_written<Whole>(batches, std::make_tuple(p...), i, count);
        },
        ptrs);
  };
  auto run = [&](int64_t begin, int64_t end) {
    // Copies of the step and the pointers, local to this loop: the stores
    // through the pointers cannot change them, so they stay in registers and
    // the step's tests of its options are made once, outside the loop.
    // (Read through references, every batch loaded them again.)
    const Step s = step;
    const auto ptrs = pointers;
    int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes) batch_at(std::true_type{}, s, ptrs, i, kLanes);
    if (i < end) batch_at(std::false_type{}, s, ptrs, i, end - i);
  };

  // Threads only where a chunk is large enough to pay for waking them.
  const int64_t chunks = (n + kUpdateChunk - 1) / kUpdateChunk;
  if (chunks <= 2) {
    run(0, n);
  } else {
    ThreadPool::instance().parallel_for(chunks, [&](int64_t b, int64_t e) {
      run(b * kUpdateChunk, std::min(n, e * kUpdateChunk));
    });
  }
}

// step(b...) on batches of each operand, in the order given: updated ones
// (non-const lvalues) as xsimd::batch<T>& stored back, read-only ones (const
// or temporaries) as const xsimd::batch<T>&.
// All operands must have the same number of elements (optimizer state is
// made with its parameter's shape). Large updates are split among the
// thread pool's threads; the result does not depend on the split.
template <class T, class Step, class... Ts>
void fused_update(const Step& step, Ts&&... tensors) {
  auto operands = std::make_tuple(
      UpdateOperand<T, std::is_lvalue_reference_v<Ts> && !std::is_const_v<std::remove_reference_t<Ts>>>(static_cast<const Tensor<T>&>(tensors))...);
  const int64_t n = std::get<0>(operands).work.numel();
  std::apply([&](const auto&... o) { check(((o.work.numel() == n) && ...), "fused_update: operand sizes differ"); },
             operands);
  const Device device = std::get<0>(operands).work.device();
  std::apply([&](const auto&... o) {
    ((o.work.device() == device ? void() : fail_mixed_devices(device, o.work.device())), ...);
  }, operands);
  if (!device.is_cpu()) {
    std::apply([&](const auto&... o) { fused_update_on_device<T>(device, step, o...); }, operands);
  } else if constexpr (kCpuSimd) {
    // (nvcc's device pass never runs the CPU's loop, and must not see the
    // steps instantiated for SIMD batches, which device code cannot hold.)
    fused_update_on_cpu<T>(step, operands);
  }
  std::apply([](auto&... o) { (o.finish(), ...); }, operands);
}

}  // namespace tsr::detail

#if TSR_CUDA_BACKEND
#include "../cuda/fused_update.hpp"
#endif
