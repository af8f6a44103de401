// AnyTensor: a tensor whose element type is known at run time only.
//
// Tensor<T> carries its element type in the C++ type. What holds tensors of
// several types side by side needs it as a value instead: a module's
// parameters and buffers (float weights beside BatchNorm's int64 counter),
// a state_dict, a checkpoint file. AnyTensor is one of the Tensor<T> handles,
// sharing its data; typed code gets the Tensor<T> back with as<T>(), which
// fails with PyTorch's "expected scalar type" error on the wrong type.
#pragma once
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "tessera.hpp"

namespace tsr {


class AnyTensor {
 public:
  using Variant = std::variant<Tensor<float>, Tensor<double>, Tensor<int64_t>, Tensor<int32_t>, Tensor<bool>,
                               Tensor<half>, Tensor<bfloat16>>;

  AnyTensor() = default;  // undefined (PyTorch's None)
  template <class T>
  AnyTensor(Tensor<T> t) : value_(std::move(t)) {}  // NOLINT: implicit, as a Tensor<T> is one

  // f(Tensor<T>&) for the type held.
  template <class F>
  decltype(auto) visit(F&& f) {
    return std::visit(std::forward<F>(f), value_);
  }
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), value_);
  }

  bool defined() const {
    return visit([](const auto& t) { return t.defined(); });
  }
  template <class T>
  bool is() const {
    return std::holds_alternative<Tensor<T>>(value_);
  }
  bool is_floating_point() const {
    return visit([]<class T>(const Tensor<T>&) { return is_floating_v<T>; });
  }
  // "torch.float32", ...
  const char* dtype_name() const {
    return visit([]<class T>(const Tensor<T>&) { return detail::dtype_name<T>(); });
  }
  // "Float", "Double", ... (PyTorch's ScalarType names).
  const char* scalar_type_name() const {
    return visit([]<class T>(const Tensor<T>&) { return detail::scalar_type_name<T>(); });
  }
  const Shape& sizes() const {
    return visit([](const auto& t) -> const Shape& { return t.sizes(); });
  }
  int64_t dim() const { return static_cast<int64_t>(sizes().size()); }
  int64_t numel() const {
    return visit([](const auto& t) { return t.numel(); });
  }
  bool requires_grad() const {
    return visit([](const auto& t) { return t.defined() && t.requires_grad(); });
  }

  // The typed handle (sharing the data); PyTorch's error for another type.
  template <class T>
  Tensor<T>& as() {
    if (auto* t = std::get_if<Tensor<T>>(&value_)) return *t;
    type_error<T>();
  }
  template <class T>
  const Tensor<T>& as() const {
    if (const auto* t = std::get_if<Tensor<T>>(&value_)) return *t;
    type_error<T>();
  }

  // A copy converted to U (a new tensor, outside autograd; the same handle
  // when already U). Unrecorded: a recorded cast would compile a node type
  // and its backward for every pair of element types, in every translation
  // unit that converts, though a detached copy never runs them.
  template <class U>
  AnyTensor to() const {
    return visit([]<class T>(const Tensor<T>& t) -> AnyTensor {
      if constexpr (std::is_same_v<T, U>) return t;
      else return detail::materialize<U>(cast<U>(t));
    });
  }
  AnyTensor detach() const {
    return visit([](const auto& t) { return AnyTensor(t.defined() ? t.detach() : t); });
  }

  friend std::ostream& operator<<(std::ostream& os, const AnyTensor& t) {
    if (!t.defined()) return os << "None";
    t.visit([&](const auto& x) { os << x; });
    return os;
  }

 private:
  template <class T>
  [[noreturn]] void type_error() const {
    detail::fail<Error>("expected scalar type ", detail::scalar_type_name<T>(), " but found ", scalar_type_name());
  }
  Variant value_;
};

namespace detail {
// f(Tensor<T>&) when t holds float or double, the element types training
// computes in; an Error of `message` and the type's name for the others.
template <class F>
auto visit_float_or_double(AnyTensor& t, const char* message, F&& f) -> std::invoke_result_t<F&, Tensor<float>&> {
  return t.visit([&]<class T>(Tensor<T>& x) -> std::invoke_result_t<F&, Tensor<float>&> {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) return f(x);
    else fail<Error>(message, dtype_name<T>());
  });
}

// Clears t's gradient as zero_grad does (Module's and Optimizer's): unsets
// it, or zeroes it in place where one exists.
inline void clear_grad(AnyTensor& t, bool set_to_none) {
  t.visit([&]<class T>(Tensor<T>& x) {
    if constexpr (is_floating_v<T>) {
      if (!x.grad().defined()) return;
      if (set_to_none) {
        x.mutable_grad() = {};
      } else {
        const NoGradGuard no_grad;
        x.mutable_grad().detach().zero_();
      }
    }
  });
}
}  // namespace detail

}  // namespace tsr
