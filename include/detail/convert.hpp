// Element conversions with PyTorch's meaning (16-bit floats via float,
// anything to bool is "not zero").
#pragma once
#include <type_traits>

#include "../dtype.hpp"
#include "config.hpp"

namespace tsr::detail {

template <class To, class From>
TSR_HOST_DEVICE inline To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<acc_t<From>>(x) != acc_t<From>(0);
  } else if constexpr (std::is_same_v<From, half> || std::is_same_v<From, bfloat16>) {
    return static_cast<To>(static_cast<float>(x));
  } else if constexpr (std::is_same_v<To, half> || std::is_same_v<To, bfloat16>) {
    return To(static_cast<float>(x));
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace tsr::detail
