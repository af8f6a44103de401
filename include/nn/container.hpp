// Containers: Sequential (a chain of modules called in order), ModuleList
// and ModuleDict (modules held and registered, called by the user), and
// ParameterList and ParameterDict (parameters held and registered).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fused_activation.hpp"
#include "holder.hpp"

namespace tsr::detail {
// The module a holder or a shared_ptr refers to.
template <class M>
auto module_ptr(const M& m) {
  if constexpr (requires { m.ptr(); }) return m.ptr();
  else return m;  // a std::shared_ptr<Impl>
}

// One line of ParameterList's and ParameterDict's repr, as PyTorch prints
// it: "  (0): Parameter containing: [torch.float32 of size 2x3]";
// ParameterDict names the type the legacy way, torch.FloatTensor.
inline std::string parameter_line(const std::string& key, const AnyTensor& p, bool legacy_type_name) {
  std::string line = "  (" + key + "): ";
  if (!p.defined()) return line + "Object of type: NoneType";
  std::string sizes;
  for (int64_t s : p.sizes()) sizes += (sizes.empty() ? "" : "x") + std::to_string(s);
  const Device device = p.visit([](const auto& t) { return t.device(); });
  const std::string type = legacy_type_name
      ? std::string("torch.") + (device.is_cpu() ? "" : "cuda.") + p.scalar_type_name() + "Tensor"
      : std::string(p.dtype_name());
  return line + "Parameter containing: [" + type + " of size " + sizes +
         (device.is_cpu() ? "" : " (GPU " + std::to_string(device.index) + ")") + "]";
}
}  // namespace tsr::detail

namespace tsr::nn {

// Modules called one after another, each on the previous one's output:
// Sequential(Linear(784, 256), ReLU(), Linear(256, 10)). A child is called
// through its own forward for the element type the tensor has (a child
// that has none for it fails with a clear error). A Linear or Conv2d
// followed by a ReLU, Tanh or Sigmoid computes the activation in its
// product's epilogue: one call for the two modules, the same result.
class SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  template <class... Ms>
    requires(sizeof...(Ms) > 0)
  explicit SequentialImpl(Ms&&... modules) {
    (push_back(std::forward<Ms>(modules)), ...);
  }
  std::string name() const override { return "Sequential"; }

  // Appends a module, named by its position ("0", "1", ...) or by `name`.
  template <class M>
  void push_back(M module) {
    push_back(std::to_string(steps_.size()), std::move(module));
  }
  template <class M>
  void push_back(const std::string& name, M module) {
    auto ptr = detail::module_ptr(module);
    using Impl = typename decltype(ptr)::element_type;
    register_module(name, ptr);
    Step step{ptr, &call<Impl>, detail::fusable_activation<Impl>(), nullptr};
    if constexpr (requires(Impl& i, const Tensor<float>& t) { i.forward_activated(t, detail::Activation::relu); })
      step.call_activated = &call_activated<Impl>;
    steps_.push_back(step);
  }

  AnyTensor forward_any(AnyTensor x) const {
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      const Step& s = steps_[i];
      if (s.call_activated && i + 1 < steps_.size() && steps_[i + 1].activation != detail::Activation::none &&
          (x.is<float>() || x.is<double>())) {
        x = s.call_activated(*s.module, x, steps_[++i].activation);
        continue;
      }
      x = s.call(*s.module, x);
    }
    return x;
  }
  // The chain on x; the result has x's element type.
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return forward_any(x).template as<T>();
  }

  std::size_t size() const { return steps_.size(); }
  bool is_empty() const { return steps_.empty(); }
  std::shared_ptr<Module> operator[](std::size_t i) const { return at(i); }
  std::shared_ptr<Module> ptr(std::size_t i) const { return at(i); }
  // The i-th module as its own type: seq->at<LinearImpl>(0).weight.
  template <class Impl>
  Impl& at(std::size_t i) const {
    auto* m = dynamic_cast<Impl*>(at(i).get());
    detail::check(m != nullptr, "Sequential::at<>(", i, "): the module there is a ", at(i)->name());
    return *m;
  }
  std::shared_ptr<Module> at(std::size_t i) const {
    detail::check<IndexError>(i < steps_.size(), "index ", i, " is out of range");
    return steps_[i].module;
  }

 private:
  struct Step {
    std::shared_ptr<Module> module;
    AnyTensor (*call)(Module&, const AnyTensor&);
    detail::Activation activation;  // what this module is, where it can be fused into the product before it
    AnyTensor (*call_activated)(Module&, const AnyTensor&, detail::Activation);  // null: cannot fuse one
  };
  template <class Impl>
  static AnyTensor call_activated(Module& m, const AnyTensor& x, detail::Activation act) {
    return x.visit([&]<class T>(const Tensor<T>& t) -> AnyTensor {
      if constexpr (detail::FloatElement<T>) return static_cast<Impl&>(m).forward_activated(t, act);
      else detail::fail<Error>("Sequential: ", m.name(), " has no forward for a ", x.dtype_name(), " tensor");
    });
  }
  template <class Impl>
  static AnyTensor call(Module& m, const AnyTensor& x) {
    if constexpr (requires(Impl& i) { i.forward_any(x); }) {
      return static_cast<Impl&>(m).forward_any(x);  // a module whose result type is not its input's
    } else {
      return x.visit([&]<class T>(const Tensor<T>& t) -> AnyTensor {
        if constexpr (requires(Impl& i) { i.forward(t); }) {
          return static_cast<Impl&>(m).forward(t);
        } else {
          detail::fail<Error>("Sequential: ", m.name(), " has no forward for a ", x.dtype_name(), " tensor");
        }
      });
    }
  }
  std::vector<Step> steps_;
};
using Sequential = ModuleHolder<SequentialImpl>;

// Modules held in a list and registered as "0", "1", ...; not callable
// itself (the owner calls its elements).
class ModuleListImpl : public Module {
 public:
  ModuleListImpl() = default;
  template <class... Ms>
    requires(sizeof...(Ms) > 0)
  explicit ModuleListImpl(Ms&&... modules) {
    (push_back(std::forward<Ms>(modules)), ...);
  }
  std::string name() const override { return "ModuleList"; }
  template <class M>
  void push_back(M module) {
    auto ptr = detail::module_ptr(module);
    register_module(std::to_string(modules_.size()), ptr);
    modules_.push_back(ptr);
  }
  std::size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  std::shared_ptr<Module> operator[](std::size_t i) const { return ptr(i); }
  std::shared_ptr<Module> ptr(std::size_t i) const {
    detail::check<IndexError>(i < modules_.size(), "index ", i, " is out of range");
    return modules_[i];
  }
  template <class Impl>
  Impl& at(std::size_t i) const {
    auto* m = dynamic_cast<Impl*>(ptr(i).get());
    detail::check(m != nullptr, "ModuleList::at<>(", i, "): the module there is a ", ptr(i)->name());
    return *m;
  }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
using ModuleList = ModuleHolder<ModuleListImpl>;

// Modules by name, in insertion order.
class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() = default;
  std::string name() const override { return "ModuleDict"; }
  template <class M>
  void insert(const std::string& key, M module) {
    auto ptr = detail::module_ptr(module);
    register_module(key, ptr);
    items_.emplace_back(key, ptr);
  }
  std::size_t size() const { return items_.size(); }
  bool contains(const std::string& key) const {
    for (const auto& [k, m] : items_)
      if (k == key) return true;
    return false;
  }
  std::shared_ptr<Module> operator[](const std::string& key) const {
    for (const auto& [k, m] : items_)
      if (k == key) return m;
    detail::fail<IndexError>("ModuleDict has no module named '", key, "'");
  }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [k, m] : items_) out.push_back(k);
    return out;
  }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> items_;
};
using ModuleDict = ModuleHolder<ModuleDictImpl>;

// Parameters held in a list and registered as "0", "1", ... (each a leaf
// that requires grad), so that parameters(), state_dict() and the
// optimizers see them.
class ParameterListImpl : public Module {
 public:
  ParameterListImpl() = default;
  template <class... Ts>
    requires(sizeof...(Ts) > 0)
  explicit ParameterListImpl(Ts&&... params) {
    (append(AnyTensor(std::forward<Ts>(params))), ...);
  }
  std::string name() const override { return "ParameterList"; }
  std::string extra_repr() const override {
    std::string out;
    for (std::size_t i = 0; i < slots_.size(); ++i)
      out += (i ? "\n" : "") + detail::parameter_line(std::to_string(i), slots_[i], false);
    return out;
  }
  void append(AnyTensor p) { slots_.emplace_back(register_parameter(std::to_string(slots_.size()), std::move(p))); }
  template <class Range>
  void extend(const Range& params) {
    for (const auto& p : params) append(AnyTensor(p));
  }
  std::size_t size() const { return slots_.size(); }
  bool is_empty() const { return slots_.empty(); }
  AnyTensor& operator[](std::size_t i) const {
    detail::check<IndexError>(i < slots_.size(), "index ", i, " is out of range");
    return slots_[i];
  }
  auto begin() const { return slots_.begin(); }  // each a reference_wrapper<AnyTensor>
  auto end() const { return slots_.end(); }

 private:
  std::vector<std::reference_wrapper<AnyTensor>> slots_;
};
using ParameterList = ModuleHolder<ParameterListImpl>;

// Parameters by name, in insertion order, registered under their names.
// Inserting a name again replaces its value, as PyTorch's.
class ParameterDictImpl : public Module {
 public:
  ParameterDictImpl() = default;
  std::string name() const override { return "ParameterDict"; }
  std::string extra_repr() const override {
    std::string out;
    for (const auto& [k, p] : items_) out += (out.empty() ? "" : "\n") + detail::parameter_line(k, p, true);
    return out;
  }
  AnyTensor& insert(const std::string& key, AnyTensor p) {
    for (auto& [k, slot] : items_) {
      if (k != key) continue;
      AnyTensor replacement = p.detach();
      replacement.visit([]<class T>(Tensor<T>& t) {
        if (!t.defined()) return;
        if constexpr (is_floating_v<T>) t.requires_grad_(true);
        else detail::fail<Error>("Only Tensors of floating point dtype can require gradients");
      });
      return slot.get() = std::move(replacement);
    }
    items_.emplace_back(key, register_parameter(key, std::move(p)));
    return items_.back().second;
  }
  std::size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  bool contains(const std::string& key) const {
    for (const auto& [k, p] : items_)
      if (k == key) return true;
    return false;
  }
  AnyTensor& operator[](const std::string& key) const {
    for (const auto& [k, p] : items_)
      if (k == key) return p;
    detail::fail<IndexError>("ParameterDict has no parameter named '", key, "'");
  }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [k, p] : items_) out.push_back(k);
    return out;
  }
  std::vector<AnyTensor> values() const {
    std::vector<AnyTensor> out;
    for (const auto& [k, p] : items_) out.push_back(p);
    return out;
  }
  auto begin() const { return items_.begin(); }  // (key, reference_wrapper<AnyTensor>) pairs
  auto end() const { return items_.end(); }

 private:
  std::vector<std::pair<std::string, std::reference_wrapper<AnyTensor>>> items_;
};
using ParameterDict = ModuleHolder<ParameterDictImpl>;

}  // namespace tsr::nn
