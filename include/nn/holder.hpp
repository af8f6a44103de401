// ModuleHolder: the handle users hold a module by, as libtorch's
// (`nn::Linear fc(784, 256); fc->weight; fc(x);`). It shares the module
// (copies are the same module), so a model registered in a parent and held
// in a member is one object.
#pragma once
#include <cstddef>
#include <memory>
#include <ostream>
#include <type_traits>
#include <utility>

#include "module.hpp"

namespace tsr::nn {

template <class Impl>
class ModuleHolder {
 public:
  using ImplType = Impl;

  // A default-constructed module, where it has a default constructor.
  ModuleHolder()
    requires std::is_default_constructible_v<Impl>
      : impl_(std::make_shared<Impl>()) {}
  // An empty holder, to be assigned later (a member of a model).
  ModuleHolder(std::nullptr_t) {}  // NOLINT: implicit, as libtorch's
  // The module built from its constructor's arguments: nn::Linear(784, 256).
  template <class A, class... Args>
    requires(!std::is_same_v<std::remove_cvref_t<A>, ModuleHolder> && std::is_constructible_v<Impl, A, Args...>)
  explicit ModuleHolder(A&& a, Args&&... args) : impl_(std::make_shared<Impl>(std::forward<A>(a), std::forward<Args>(args)...)) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}  // NOLINT: implicit

  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  Impl* get() const {
    detail::check(impl_ != nullptr, "Accessing empty ModuleHolder");
    return impl_.get();
  }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return !is_empty(); }

  // Calls the module's forward; an unevaluated expression argument
  // (fc2(F::relu(fc1(x)))) is materialized first.
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    return get()->forward(as_input(std::forward<Args>(args))...);
  }

  friend std::ostream& operator<<(std::ostream& os, const ModuleHolder& m) { return os << *m.get(); }

 private:
  template <class A>
  static decltype(auto) as_input(A&& a) {
    using E = std::remove_cvref_t<A>;
    if constexpr (Expression<E>) {
      if constexpr (!std::is_same_v<E, Tensor<typename E::value_type>>) return Tensor<typename E::value_type>(a);
      else return std::forward<A>(a);
    } else {
      return std::forward<A>(a);
    }
  }
  std::shared_ptr<Impl> impl_;
};

}  // namespace tsr::nn

namespace tsr::detail {
// The element types layers compute in.
template <class T>
concept FloatElement = std::is_same_v<T, float> || std::is_same_v<T, double>;
}  // namespace tsr::detail
