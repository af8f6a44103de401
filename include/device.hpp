// Where a tensor's memory lives: the CPU or a CUDA device.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "errors.hpp"

namespace tsr {

struct Device {
  enum class Type : uint8_t { CPU, CUDA };
  Type type = Type::CPU;
  int index = -1;

  constexpr bool is_cpu() const { return type == Type::CPU; }
  constexpr bool is_cuda() const { return type == Type::CUDA; }
  friend constexpr bool operator==(Device, Device) = default;
  std::string str() const;  // "cpu", "cuda:0"
  friend std::ostream& operator<<(std::ostream& os, Device d) { return os << d.str(); }
};

#if TSR_CORE_DEFINITIONS
TSR_CORE_INLINE std::string Device::str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
#endif

inline constexpr Device kCPU{};

// `tsr::cuda(0)` names CUDA device 0, and `tsr::cuda::` holds what
// `torch.cuda` holds (availability, the caching allocator's statistics,
// synchronization). A type rather than a function and a namespace, which
// could not share the name: a cuda is a Device, so it goes wherever one
// does.
//
// The functions work in any translation unit of a program that has the
// CUDA backend (one translation unit compiled by nvcc, or the emulated
// build); in a program without it they throw "Torch not compiled with CUDA
// enabled", as a CPU-only PyTorch does, except is_available() (false) and
// device_count() (0). They are defined in detail/device_backend.hpp.
struct cuda : Device {
  cuda(int index = 0);  // NOLINT: implicit, `Device d = tsr::cuda(1);`

  static bool is_available();
  static int device_count();
  // Waits until every device's queued work has finished.
  static void synchronize();
  // Bytes held by tensors on a device now, and the most since the start or
  // the last reset_peak_memory_stats(); bytes the allocator holds from the
  // device (in use or cached).
  static std::size_t memory_allocated(int device = 0);
  static std::size_t max_memory_allocated(int device = 0);
  static std::size_t memory_reserved(int device = 0);
  static void reset_peak_memory_stats(int device = 0);
  // Gives cached device memory that no tensor uses back to the device.
  static void empty_cache();
  // torch.cuda.memory_summary's table for a device.
  static std::string memory_summary(int device = 0);

  // Streams and events: defined in cuda/stream.hpp, and so usable in
  // translation units that have the backend (which is where device work is
  // queued). This thread's current stream on a device, the device's default
  // stream, and making a stream current on its device.
  class Stream;
  class StreamGuard;
  class Event;
  static inline Stream current_stream(int device = 0);
  static inline Stream default_stream(int device = 0);
  static inline void set_stream(const Stream& stream);
};

inline cuda::cuda(int index) : Device{Device::Type::CUDA, index} {
  detail::check(index >= 0, "Device index must not be negative");
}

}  // namespace tsr
