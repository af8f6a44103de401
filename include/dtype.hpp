// Element types, their PyTorch names, and type promotion at compile time.
#pragma once
#include <cstdint>
#include <type_traits>

#include "half.hpp"

namespace tsr {

template <class T>
inline constexpr bool is_element_type_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
    std::is_same_v<T, int64_t> || std::is_same_v<T, bool> || std::is_same_v<T, half> ||
    std::is_same_v<T, bfloat16>;

template <class T>
inline constexpr bool is_floating_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half> ||
    std::is_same_v<T, bfloat16>;

template <class T>
inline constexpr bool is_integral_v = std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;

namespace detail {

// PyTorch's dtype names, as printed in `dtype=` suffixes.
template <class T>
constexpr const char* dtype_name() {
  if constexpr (std::is_same_v<T, float>) return "torch.float32";
  else if constexpr (std::is_same_v<T, double>) return "torch.float64";
  else if constexpr (std::is_same_v<T, int32_t>) return "torch.int32";
  else if constexpr (std::is_same_v<T, int64_t>) return "torch.int64";
  else if constexpr (std::is_same_v<T, bool>) return "torch.bool";
  else if constexpr (std::is_same_v<T, half>) return "torch.float16";
  else if constexpr (std::is_same_v<T, bfloat16>) return "torch.bfloat16";
}

// PyTorch's scalar type names, as its dtype errors print them.
template <class T>
constexpr const char* scalar_type_name() {
  if constexpr (std::is_same_v<T, float>) return "Float";
  else if constexpr (std::is_same_v<T, double>) return "Double";
  else if constexpr (std::is_same_v<T, int32_t>) return "Int";
  else if constexpr (std::is_same_v<T, int64_t>) return "Long";
  else if constexpr (std::is_same_v<T, bool>) return "Bool";
  else if constexpr (std::is_same_v<T, half>) return "Half";
  else return "BFloat16";
}

// Category used by result_type: bool < integral < floating.
template <class T>
constexpr int category() {
  if constexpr (std::is_same_v<T, bool>) return 0;
  else if constexpr (std::is_integral_v<T>) return 1;
  else return 2;
}

// Rank within the promotion lattice; half and bfloat16 share a rank and
// promote to float when they meet, as in PyTorch.
template <class T>
constexpr int promotion_rank() {
  if constexpr (std::is_same_v<T, bool>) return 0;
  else if constexpr (std::is_same_v<T, int32_t>) return 1;
  else if constexpr (std::is_same_v<T, int64_t>) return 2;
  else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) return 3;
  else if constexpr (std::is_same_v<T, float>) return 4;
  else return 5;
}

template <class A, class B>
struct promote {
  using type = std::conditional_t<(promotion_rank<A>() >= promotion_rank<B>()), A, B>;
};
template <class A>
struct promote<A, A> {
  using type = A;
};
template <>
struct promote<half, bfloat16> {
  using type = float;
};
template <>
struct promote<bfloat16, half> {
  using type = float;
};

// C++ scalars normalized to element types: any integer is int64 (Python int),
// any floating scalar is double (Python float), bool stays bool.
template <class S>
using scalar_element_t =
    std::conditional_t<std::is_same_v<S, bool>, bool,
                       std::conditional_t<std::is_integral_v<S>, int64_t,
                                          std::conditional_t<is_element_type_v<S>, S, double>>>;

}  // namespace detail

// The type two tensors of element types A and B promote to (torch.promote_types).
template <class A, class B>
using promote_t = typename detail::promote<A, B>::type;

// The element type a C++ scalar takes when it meets a tensor of type T:
// a scalar never widens the tensor's category, only raises it (to the
// default float dtype, or to int64 from bool), as PyTorch's wrapped numbers.
template <class S, class T>
using wrapped_scalar_t = std::conditional_t<
    (detail::category<detail::scalar_element_t<S>>() <= detail::category<T>()), T,
    std::conditional_t<detail::category<detail::scalar_element_t<S>>() == 2, float, int64_t>>;

// The floating type an operation like sin or true division computes in.
template <class T>
using floating_t = std::conditional_t<is_floating_v<T>, T, float>;

// PyTorch's can_cast(from, to): a value may move to a type of the same or a
// higher category (bool < integer < floating), never down. Writing an
// expression into a tensor of another element type follows it: double into
// float or int64 into int32 is allowed (precision, not category), floating
// into integer or anything into bool needs an explicit cast<T>(...).
template <class From, class To>
inline constexpr bool can_cast_v = !(is_floating_v<From> && !is_floating_v<To>) &&
                                   !(std::is_same_v<To, bool> && !std::is_same_v<From, bool>);

// The type arithmetic runs in: 16-bit floats compute in float.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;

}  // namespace tsr
