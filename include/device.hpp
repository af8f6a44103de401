// Where a tensor's memory lives: the CPU or a CUDA device.
#pragma once
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
  std::string str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
  friend std::ostream& operator<<(std::ostream& os, Device d) { return os << d.str(); }
};

inline constexpr Device kCPU{};
inline Device cuda(int index = 0) {
  detail::check(index >= 0, "Device index must not be negative");
  return Device{Device::Type::CUDA, index};
}

namespace detail {
// The CPU build cannot create CUDA tensors; say so as PyTorch does.
// (The message is built only on failure: check() would evaluate d.str()
// on every storage allocation.)
inline void check_device_supported(Device d) {
  if (!d.is_cpu()) [[unlikely]]
    fail<Error>("Torch not compiled with CUDA enabled (tessera: this translation unit was not compiled by nvcc "
                "with the CUDA backend; requested device ", d.str(), ")");
}
}  // namespace detail

}  // namespace tsr
