// nn::Module: the base of every layer and model, as torch::nn::Module.
//
// A module owns named parameters (leaf tensors that require grad), named
// buffers (state that is saved but not trained, as BatchNorm's running
// mean) and named child modules. Everything that walks a model (its
// parameters for an optimizer, its state_dict for a checkpoint, its repr)
// visits them in registration order with PyTorch's dotted names
// ("0.weight", "encoder.layers.1.norm1.bias"), so keys match PyTorch's.
//
// Parameters and buffers are AnyTensor: a model's element type is a run
// time property, as in PyTorch (to<double>() converts a model in place),
// and buffers need not share it.
#pragma once
#include <functional>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../any_tensor.hpp"
#include "../detail/python_repr.hpp"

namespace tsr::nn {

// A state_dict: names and tensors, in PyTorch's order.
using StateDict = std::vector<std::pair<std::string, AnyTensor>>;

class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module() = default;

  // The class name PyTorch prints ("Linear", "Sequential").
  virtual std::string name() const { return "Module"; }
  // What a leaf module prints between its parentheses
  // (in_features=784, out_features=256, bias=True): PyTorch's extra_repr.
  virtual std::string extra_repr() const { return {}; }

  // ----- registration ------------------------------------------------------
  // Registers t as parameter `name` (a leaf that requires grad unless told
  // otherwise) and returns the slot; an undefined t registers None (a Linear
  // without bias), which walks and state_dicts skip.
  AnyTensor& register_parameter(const std::string& name, AnyTensor t, bool requires_grad = true) {
    check_new_name(name, "parameter");
    if (t.defined()) {
      t = t.detach();
      t.visit([&]<class T>(Tensor<T>& x) {
        if constexpr (is_floating_v<T>) x.requires_grad_(requires_grad);
        else detail::check(!requires_grad, "Only Tensors of floating point dtype can require gradients");
      });
    }
    params_.push_back(std::make_unique<Slot>(Slot{name, std::move(t)}));
    return params_.back()->value;
  }
  AnyTensor& register_buffer(const std::string& name, AnyTensor t) {
    check_new_name(name, "buffer");
    buffers_.push_back(std::make_unique<Slot>(Slot{name, t.defined() ? t.detach() : t}));
    return buffers_.back()->value;
  }
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    check_new_name(name, "module");
    detail::check(m != nullptr, "register_module(\"", name, "\"): the module is empty (null)");
    children_.emplace_back(name, m);
    return m;
  }
  // A holder (nn::Linear, nn::Sequential, ...): registers what it holds.
  template <class Holder>
    requires requires(const Holder& h) { h.ptr(); }
  Holder register_module(const std::string& name, Holder m) {
    register_module(name, m.ptr());
    return m;
  }

  // ----- walks -------------------------------------------------------------
  std::vector<std::pair<std::string, AnyTensor>> named_parameters(bool recurse = true) const {
    std::vector<std::pair<std::string, AnyTensor>> out;
    walk_tensors(&Module::params_, "", recurse, out);
    return out;
  }
  std::vector<AnyTensor> parameters(bool recurse = true) const { return values(named_parameters(recurse)); }
  std::vector<std::pair<std::string, AnyTensor>> named_buffers(bool recurse = true) const {
    std::vector<std::pair<std::string, AnyTensor>> out;
    walk_tensors(&Module::buffers_, "", recurse, out);
    return out;
  }
  std::vector<AnyTensor> buffers(bool recurse = true) const { return values(named_buffers(recurse)); }

  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const { return children_; }
  std::vector<std::shared_ptr<Module>> children() const {
    std::vector<std::shared_ptr<Module>> out;
    for (const auto& [n, m] : children_) out.push_back(m);
    return out;
  }
  // This module and every module below it, depth first, each once (PyTorch
  // lists a module shared by two parents once). The root's name is "".
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules() {
    std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
    collect_modules("", out);
    return out;
  }
  std::vector<std::shared_ptr<Module>> modules() {
    std::vector<std::shared_ptr<Module>> out;
    for (auto& [n, m] : named_modules()) out.push_back(m);
    return out;
  }

  // fn on every child (recursively) and then on this module, as PyTorch's apply.
  void apply(const std::function<void(Module&)>& fn) {
    for (auto& [n, m] : children_) m->apply(fn);
    fn(*this);
  }

  // ----- modes and gradients ------------------------------------------------
  virtual void train(bool on = true) {
    training_ = on;
    for (auto& [n, m] : children_) m->train(on);
  }
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Clears every parameter's gradient: unset (PyTorch 2's default), or
  // zeroed in place where one exists.
  void zero_grad(bool set_to_none = true) {
    for (auto& p : parameters()) tsr::detail::clear_grad(p, set_to_none);
  }

  // ----- element type -------------------------------------------------------
  // Converts every floating parameter and buffer to U in place (what the
  // module's own handles see too), as PyTorch's module.to(dtype); gradients
  // are dropped. Integer buffers keep their type.
  template <class U>
  void to() {
    static_assert(is_floating_v<U>, "Module::to<U>(): U must be a floating type");
    apply([](Module& m) {
      for (auto& slot : m.params_) convert_slot<U>(slot->value, true);
      for (auto& slot : m.buffers_) convert_slot<U>(slot->value, false);
    });
  }

  // ----- device -------------------------------------------------------------
  // Moves every parameter and buffer to `device` in place (what the module's
  // own handles see too), as PyTorch's module.to(device); parameters keep
  // requires_grad and stay leaves, gradients are dropped.
  void to(Device device) {
    apply([&](Module& m) {
      for (auto& slot : m.params_) move_slot(slot->value, device, true);
      for (auto& slot : m.buffers_) move_slot(slot->value, device, false);
    });
  }

  // ----- state_dict -----------------------------------------------------------
  // Parameters and then buffers of each module, the children's after their
  // parent's own, detached (they share the module's data, as PyTorch's).
  StateDict state_dict() const {
    StateDict out;
    collect_state("", out);
    return out;
  }

  // Copies a state_dict's tensors into this model's (converting the element
  // type where they differ). Checked whole before anything is copied, so a
  // failed load leaves the model unchanged; the error lists every problem as
  // PyTorch words it. strict = false ignores missing and unexpected keys
  // (returned in `missing` / `unexpected` when given), never a size mismatch.
  void load_state_dict(const StateDict& sd, bool strict = true, std::vector<std::string>* missing = nullptr,
                       std::vector<std::string>* unexpected = nullptr) {
    StateDict own = state_dict();
    std::vector<std::string> missing_keys, unexpected_keys, errors;
    std::vector<std::pair<AnyTensor*, const AnyTensor*>> copies;
    auto find = [](StateDict& d, const std::string& key) -> AnyTensor* {
      for (auto& [k, v] : d)
        if (k == key) return &v;
      return nullptr;
    };
    for (auto& [key, dst] : own) {
      const AnyTensor* src = nullptr;
      for (const auto& [k, v] : sd)
        if (k == key) src = &v;
      if (!src) {
        missing_keys.push_back(key);
      } else if (!src->defined() || src->sizes() != dst.sizes()) {
        std::ostringstream os;
        os << "size mismatch for " << key << ": copying a param with shape " << torch_size(*src)
           << " from checkpoint, the shape in current model is " << torch_size(dst) << ".";
        errors.push_back(os.str());
      } else {
        copies.emplace_back(&dst, src);
      }
    }
    for (const auto& [k, v] : sd)
      if (!find(own, k)) unexpected_keys.push_back(k);
    if (strict) {
      if (!unexpected_keys.empty()) errors.insert(errors.begin(), "Unexpected key(s) in state_dict: " + quoted(unexpected_keys) + ". ");
      if (!missing_keys.empty()) errors.insert(errors.begin(), "Missing key(s) in state_dict: " + quoted(missing_keys) + ". ");
    }
    if (!errors.empty()) {
      std::string msg = "Error(s) in loading state_dict for " + name() + ":";
      for (const auto& e : errors) msg += "\n\t" + e;
      throw Error(msg);
    }
    const NoGradGuard no_grad;
    for (auto& [dst, src] : copies) copy_converting(*dst, *src);
    if (missing) *missing = missing_keys;
    if (unexpected) *unexpected = unexpected_keys;
  }

  // ----- printing ---------------------------------------------------------------
  // PyTorch's repr: "Linear(in_features=4, out_features=2, bias=True)", and
  // for a module with children one "(name): child" line each, indented.
  std::string repr() const {
    std::vector<std::string> lines;
    const std::string extra = extra_repr();
    std::size_t extra_lines = 0;
    if (!extra.empty()) {
      std::istringstream is(extra);
      for (std::string line; std::getline(is, line);) lines.push_back(line), ++extra_lines;
    }
    for (const auto& [n, m] : children_) lines.push_back("(" + n + "): " + indented(m->repr()));
    std::string out = name() + "(";
    if (extra_lines == 1 && children_.empty()) out += lines[0];
    else if (!lines.empty()) {
      for (const auto& l : lines) out += "\n  " + l;
      out += "\n";
    }
    return out + ")";
  }
  friend std::ostream& operator<<(std::ostream& os, const Module& m) { return os << m.repr(); }

 private:
  struct Slot {
    std::string name;
    AnyTensor value;
  };
  using Slots = std::vector<std::unique_ptr<Slot>>;  // stable addresses: layers keep AnyTensor&

  void check_new_name(const std::string& name, const char* what) const {
    detail::check(!name.empty(), what, " name can't be empty string \"\"");
    detail::check(name.find('.') == std::string::npos, what, " name can't contain \".\", got: ", name);
    auto taken = [&](const Slots& s) {
      for (const auto& slot : s)
        if (slot->name == name) return true;
      return false;
    };
    bool exists = taken(params_) || taken(buffers_);
    for (const auto& [n, m] : children_) exists = exists || n == name;
    detail::check(!exists, "attribute '", name, "' already exists");
  }

  // PyTorch's order: depth first, a module's own tensors before its
  // children's; a module or tensor reached twice is listed once.
  void walk_tensors(Slots Module::*which, const std::string& prefix, bool recurse,
                    std::vector<std::pair<std::string, AnyTensor>>& out) const {
    std::vector<const Module*> seen;
    walk_tensors(which, prefix, recurse, seen, out);
  }
  void walk_tensors(Slots Module::*which, const std::string& prefix, bool recurse, std::vector<const Module*>& seen,
                    std::vector<std::pair<std::string, AnyTensor>>& out) const {
    for (const Module* m : seen)
      if (m == this) return;
    seen.push_back(this);
    for (const auto& slot : this->*which) {
      if (!slot->value.defined()) continue;
      bool listed = false;
      for (const auto& [n, t] : out) listed = listed || same_tensor(t, slot->value);
      if (!listed) out.emplace_back(prefix + slot->name, slot->value);
    }
    if (recurse)
      for (const auto& [n, m] : children_) m->walk_tensors(which, prefix + n + ".", recurse, seen, out);
  }
  void collect_state(const std::string& prefix, StateDict& out) const {
    for (const auto& slot : params_)
      if (slot->value.defined()) out.emplace_back(prefix + slot->name, slot->value.detach());
    for (const auto& slot : buffers_)
      if (slot->value.defined()) out.emplace_back(prefix + slot->name, slot->value.detach());
    for (const auto& [n, m] : children_) m->collect_state(prefix + n + ".", out);
  }
  void collect_modules(const std::string& prefix, std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out) {
    for (const auto& [n, m] : out)
      if (m.get() == this) return;
    out.emplace_back(prefix, shared_from_this());
    for (auto& [n, m] : children_) m->collect_modules(prefix.empty() ? n : prefix + "." + n, out);
  }
  static std::vector<AnyTensor> values(const std::vector<std::pair<std::string, AnyTensor>>& named) {
    std::vector<AnyTensor> out;
    for (const auto& [n, t] : named) out.push_back(t);
    return out;
  }
  static bool same_tensor(const AnyTensor& a, const AnyTensor& b) {
    return a.visit([&]<class T>(const Tensor<T>& x) { return b.is<T>() && b.as<T>().impl_ptr() == x.impl_ptr(); });
  }
  static std::string torch_size(const AnyTensor& t) { return detail::torch_size(t.sizes()); }
  static std::string quoted(const std::vector<std::string>& keys) {
    std::string out;
    for (std::size_t i = 0; i < keys.size(); ++i) out += (i ? ", \"" : "\"") + keys[i] + "\"";
    return out;
  }
  // Every line but the first indented by two spaces (PyTorch's _addindent).
  static std::string indented(const std::string& s) {
    std::string out;
    for (char c : s) {
      out += c;
      if (c == '\n') out += "  ";
    }
    return out;
  }
  template <class U>
  static void convert_slot(AnyTensor& slot, bool parameter) {
    if (!slot.defined() || !slot.is_floating_point() || slot.is<U>()) return;
    const bool grad = slot.requires_grad();
    AnyTensor converted = slot.to<U>();
    if (parameter) converted.as<U>().requires_grad_(grad);
    slot = std::move(converted);
  }
  static void move_slot(AnyTensor& slot, Device device, bool parameter) {
    if (!slot.defined()) return;
    AnyTensor moved = slot.visit([&]<class T>(const Tensor<T>& t) {
      if (t.device() == device) return AnyTensor(t);
      Tensor<T> copy = t.detach().to(device);
      if (parameter) copy.requires_grad_(t.requires_grad());
      return AnyTensor(copy);
    });
    slot = std::move(moved);
  }
  static void copy_converting(AnyTensor& dst, const AnyTensor& src) {
    dst.visit([&]<class T>(Tensor<T>& d) {
      src.visit([&]<class S>(const Tensor<S>& s) {
        // The same type, or one floating type into another (a float
        // checkpoint into a double model).
        if constexpr (std::is_same_v<S, T>) d.detach().copy_(s);
        // (converted unrecorded: see AnyTensor::to)
        else if constexpr (is_floating_v<S> && is_floating_v<T>) d.detach().copy_(detail::materialize<T>(cast<T>(s)));
        else detail::fail<Error>("expected scalar type ", detail::scalar_type_name<T>(), " but found ",
                                 detail::scalar_type_name<S>());
      });
    });
  }

  Slots params_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

}  // namespace tsr::nn
