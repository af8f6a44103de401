// optim::Optimizer: the base of every optimizer, as torch::optim::Optimizer.
//
// An optimizer holds parameter groups (parameters with their own options:
// a learning rate for the backbone and another for the head) and, for each
// parameter, its state (Adam's moving averages, SGD's momentum buffer) under
// PyTorch's names, so that a state_dict maps one to one onto PyTorch's
// {"state": {index: {...}}, "param_groups": [{...}]}.
//
// Parameters are AnyTensor, as a module's are: optim works on what
// Module::parameters() returns, whatever the model's element type.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "../any_tensor.hpp"
#include "fused_update.hpp"

namespace tsr::optim {

// What step(closure) calls to re-evaluate the model: it computes the loss,
// calls backward() and returns the loss (LBFGS calls it several times).
using LossClosure = std::function<AnyTensor()>;

// An option's value as PyTorch's param_groups dict holds it: None, a bool,
// an int, a float, a tuple of floats (Adam's betas), a string.
using OptionValue = std::variant<std::monostate, bool, int64_t, double, std::vector<double>, std::string>;

namespace detail {
// An option's PyTorch name and the member holding it.
template <class Options, class M>
struct Field {
  const char* name;
  M Options::*member;
};
template <class Options, class M>
constexpr Field<Options, M> field(const char* name, M Options::*member) {
  return {name, member};
}

inline OptionValue to_option_value(bool v) { return v; }
inline OptionValue to_option_value(int64_t v) { return v; }
inline OptionValue to_option_value(double v) { return v; }
inline OptionValue to_option_value(const std::string& v) { return v; }
inline OptionValue to_option_value(const std::tuple<double, double>& v) {
  return std::vector<double>{std::get<0>(v), std::get<1>(v)};
}
template <class V>
OptionValue to_option_value(const std::optional<V>& v) {
  return v ? to_option_value(*v) : OptionValue{};
}

// Reads an option back; a value of another kind is an error naming it.
[[noreturn]] inline void option_type_error(const std::string& name) {
  tsr::detail::fail<Error>("optimizer option '", name, "' has a value of the wrong type");
}
inline void from_option_value(const OptionValue& v, bool& out, const std::string& name) {
  if (const auto* b = std::get_if<bool>(&v)) out = *b;
  else option_type_error(name);
}
inline void from_option_value(const OptionValue& v, int64_t& out, const std::string& name) {
  if (const auto* i = std::get_if<int64_t>(&v)) out = *i;
  else option_type_error(name);
}
inline void from_option_value(const OptionValue& v, double& out, const std::string& name) {
  if (const auto* d = std::get_if<double>(&v)) out = *d;
  else if (const auto* i = std::get_if<int64_t>(&v)) out = static_cast<double>(*i);  // Python's lr=1
  else option_type_error(name);
}
inline void from_option_value(const OptionValue& v, std::string& out, const std::string& name) {
  if (const auto* s = std::get_if<std::string>(&v)) out = *s;
  else option_type_error(name);
}
inline void from_option_value(const OptionValue& v, std::tuple<double, double>& out, const std::string& name) {
  const auto* t = std::get_if<std::vector<double>>(&v);
  if (!t || t->size() != 2) option_type_error(name);
  out = {(*t)[0], (*t)[1]};
}
template <class V>
void from_option_value(const OptionValue& v, std::optional<V>& out, const std::string& name) {
  if (std::holds_alternative<std::monostate>(v)) {
    out.reset();
  } else {
    V value{};
    from_option_value(v, value, name);
    out = value;
  }
}
}  // namespace detail

// The options of one parameter group. Every optimizer's options derive from
// OptimizerCloneableOptions<Self> and list their fields with PyTorch's names.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  // The options as PyTorch's param_groups entry lists them (without "params").
  virtual std::vector<std::pair<std::string, OptionValue>> items() const = 0;
  // Sets the option `name` (one of items()'s); false if there is none.
  virtual bool set_item(const std::string& name, const OptionValue& value) = 0;
};

template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  double get_lr() const override { return self().lr(); }
  void set_lr(double lr) override { static_cast<Derived&>(*this).lr(lr); }
  std::vector<std::pair<std::string, OptionValue>> items() const override {
    std::vector<std::pair<std::string, OptionValue>> out;
    std::apply([&](const auto&... f) { (out.emplace_back(f.name, detail::to_option_value(self().*f.member)), ...); },
               Derived::fields());
    return out;
  }
  bool set_item(const std::string& name, const OptionValue& value) override {
    bool found = false;
    std::apply(
        [&](const auto&... f) {
          ((name == f.name ? (detail::from_option_value(value, static_cast<Derived&>(*this).*f.member, name),
                              found = true)
                           : false),
           ...);
        },
        Derived::fields());
    return found;
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

// Parameters that share options. A group made without options takes the
// optimizer's defaults when it is added.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<AnyTensor> params) : params_(std::move(params)) {}  // NOLINT: as libtorch's
  OptimizerParamGroup(std::vector<AnyTensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& o)
      : params_(o.params_), options_(o.has_options() ? o.options_->clone() : nullptr), initial_lr_(o.initial_lr_) {}
  OptimizerParamGroup& operator=(const OptimizerParamGroup& o) {
    if (this != &o) *this = OptimizerParamGroup(o);
    return *this;
  }
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options() {
    tsr::detail::check(has_options(), "this parameter group has no options");
    return *options_;
  }
  const OptimizerOptions& options() const {
    tsr::detail::check(has_options(), "this parameter group has no options");
    return *options_;
  }
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<AnyTensor>& params() { return params_; }
  const std::vector<AnyTensor>& params() const { return params_; }
  // The learning rate a scheduler started from (PyTorch's group["initial_lr"]):
  // set by the first scheduler attached, kept by those after it.
  const std::optional<double>& initial_lr() const { return initial_lr_; }
  void set_initial_lr(std::optional<double> lr) { initial_lr_ = lr; }

 private:
  std::vector<AnyTensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  std::optional<double> initial_lr_;
};

// A value of a parameter's state: a tensor (PyTorch's exp_avg, and Adam's
// step, which PyTorch 1.13 keeps as a float tensor), a number (RMSprop's
// step is a Python int), or a list of tensors (LBFGS's history).
using StateValue = std::variant<AnyTensor, int64_t, double, std::vector<AnyTensor>>;

// One parameter's state: named values in the order PyTorch creates them.
class ParamState {
 public:
  bool empty() const { return entries_.empty(); }
  bool has(const std::string& name) const { return find(name) != nullptr; }
  StateValue& at(const std::string& name) {
    StateValue* v = find(name);
    tsr::detail::check(v != nullptr, "optimizer state has no entry '", name, "'");
    return *v;
  }
  const StateValue& at(const std::string& name) const { return const_cast<ParamState*>(this)->at(name); }
  void set(const std::string& name, StateValue value) {
    if (StateValue* v = find(name)) *v = std::move(value);
    else entries_.emplace_back(name, std::move(value));
  }
  // The tensor `name`, of the parameter's element type T.
  template <class T>
  Tensor<T>& tensor(const std::string& name) {
    auto* t = std::get_if<AnyTensor>(&at(name));
    tsr::detail::check(t != nullptr, "optimizer state entry '", name, "' is not a tensor");
    return t->as<T>();
  }
  int64_t& integer(const std::string& name) {
    auto* i = std::get_if<int64_t>(&at(name));
    tsr::detail::check(i != nullptr, "optimizer state entry '", name, "' is not an integer");
    return *i;
  }
  const std::vector<std::pair<std::string, StateValue>>& entries() const { return entries_; }
  std::vector<std::pair<std::string, StateValue>>& entries() { return entries_; }

 private:
  StateValue* find(const std::string& name) {
    for (auto& [k, v] : entries_)
      if (k == name) return &v;
    return nullptr;
  }
  const StateValue* find(const std::string& name) const { return const_cast<ParamState*>(this)->find(name); }
  std::vector<std::pair<std::string, StateValue>> entries_;
};

namespace detail {
// The gradient as PyTorch's optimizers first rewrite it: negated when
// maximizing, plus weight_decay * param (L2 decay; none when it is 0).
template <class T>
struct RewrittenGradient {
  RewrittenGradient(bool maximize, double weight_decay) : negate(maximize), decay(T(weight_decay)) {}
  template <class B>
  TSR_HOST_DEVICE B operator()(const B& grad, const B& param) const {
    B g = negate ? -grad : grad;
    if (decay != T(0)) g = g + B(decay) * param;
    return g;
  }
  bool negate;
  T decay;
};

// Advances the step count that PyTorch 1.13 keeps as a float scalar tensor
// ("step": Adam, AdamW, Adagrad), made at 0 when missing; the new count.
inline double advance_float_step(ParamState& state) {
  if (!state.has("step")) state.set("step", AnyTensor(full<float>(Shape{}, 0.0f)));
  Tensor<float>& step = state.tensor<float>("step");
  step.fill_(step.item() + 1.0f);
  return step.item();
}
}  // namespace detail

// An optimizer's state_dict, shaped as PyTorch's: parameters are numbered
// across the groups in order; "state" lists those that have state.
struct OptimizerStateDict {
  struct Group {
    std::vector<std::pair<std::string, OptionValue>> options;
    std::vector<int64_t> params;
  };
  std::vector<std::pair<int64_t, ParamState>> state;
  std::vector<Group> param_groups;
};

// The parameter groups an optimizer's constructor takes: a list of tensors
// (one group with the defaults) or groups.
inline std::vector<OptimizerParamGroup> one_group(std::vector<AnyTensor> params) {
  tsr::detail::check(!params.empty(), "optimizer got an empty parameter list");
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::move(params));
  return groups;
}

class Optimizer {
 public:
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer() = default;

  // Runs one step; the closure (required by LBFGS) re-evaluates the loss.
  // Returns the closure's loss, or an undefined tensor without one.
  virtual AnyTensor step(LossClosure closure = nullptr) = 0;

  void add_param_group(const OptimizerParamGroup& group) {
    OptimizerParamGroup g(group);
    if (!g.has_options()) g.set_options(defaults_->clone());
    const std::vector<AnyTensor> others = parameters();
    for (const auto& p : g.params()) {
      tsr::detail::check(p.defined(), "optimizer can only optimize Tensors, but one of the params is None");
      tsr::detail::check(p.is_floating_point(), "optimizer can only optimize Tensors of floating point dtype, but one of the params is ",
                         p.dtype_name());
      tsr::detail::check(is_leaf(p), "can't optimize a non-leaf Tensor");
      for (const auto& other : others)
        tsr::detail::check(!same_tensor(p, other), "some parameters appear in more than one parameter group");
    }
    state_.emplace_back(g.params().size());
    param_groups_.push_back(std::move(g));
  }

  // Clears every parameter's gradient: unset (the default, as PyTorch 2), or
  // zeroed in place where one exists.
  void zero_grad(bool set_to_none = true) {
    for (auto& group : param_groups_)
      for (auto& p : group.params()) tsr::detail::clear_grad(p, set_to_none);
  }

  std::vector<OptimizerParamGroup>& param_groups() { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return param_groups_; }
  // Every parameter, group after group.
  std::vector<AnyTensor> parameters() const {
    std::vector<AnyTensor> out;
    for (const auto& g : param_groups_) out.insert(out.end(), g.params().begin(), g.params().end());
    return out;
  }
  // How many parameters the optimizer updates.
  std::size_t size() const {
    std::size_t n = 0;
    for (const auto& g : param_groups_) n += g.params().size();
    return n;
  }
  const OptimizerOptions& defaults() const { return *defaults_; }
  OptimizerOptions& defaults() { return *defaults_; }
  // The state of parameter `index` of group `group` (empty before its first step).
  ParamState& state(std::size_t group, std::size_t index) { return state_.at(group).at(index); }

  OptimizerStateDict state_dict() const {
    OptimizerStateDict sd;
    int64_t index = 0;
    for (std::size_t g = 0; g < param_groups_.size(); ++g) {
      OptimizerStateDict::Group group{param_groups_[g].options().items(), {}};
      if (param_groups_[g].initial_lr()) group.options.emplace_back("initial_lr", *param_groups_[g].initial_lr());
      for (std::size_t i = 0; i < param_groups_[g].params().size(); ++i, ++index) {
        group.params.push_back(index);
        if (!state_[g][i].empty()) sd.state.emplace_back(index, state_[g][i]);
      }
      sd.param_groups.push_back(std::move(group));
    }
    return sd;
  }

  // Takes the groups' options and the parameters' state from sd, as
  // PyTorch's load_state_dict: the groups must match in number and size;
  // floating state tensors are converted to their parameter's element type
  // (copies, so the loaded dict and the optimizer share nothing).
  void load_state_dict(const OptimizerStateDict& sd) {
    tsr::detail::check(sd.param_groups.size() == param_groups_.size(),
                       "loaded state dict has a different number of parameter groups");
    std::vector<std::pair<std::size_t, std::size_t>> where;  // index -> (group, position)
    for (std::size_t g = 0; g < param_groups_.size(); ++g) {
      tsr::detail::check(sd.param_groups[g].params.size() == param_groups_[g].params().size(),
                         "loaded state dict contains a parameter group that doesn't match the size of optimizer's group");
      for (std::size_t i = 0; i < param_groups_[g].params().size(); ++i) where.emplace_back(g, i);
    }
    std::vector<std::vector<ParamState>> state(param_groups_.size());
    for (std::size_t g = 0; g < param_groups_.size(); ++g) state[g].resize(param_groups_[g].params().size());
    for (const auto& [index, s] : sd.state) {
      tsr::detail::check(index >= 0 && index < static_cast<int64_t>(where.size()), "loaded state dict has state for parameter ",
                         index, ", but the optimizer has ", where.size(), " parameters");
      const auto [g, i] = where[static_cast<std::size_t>(index)];
      state[g][i] = loaded_state(s, param_groups_[g].params()[i]);
    }
    std::vector<std::unique_ptr<OptimizerOptions>> options;
    for (std::size_t g = 0; g < param_groups_.size(); ++g) {
      options.push_back(param_groups_[g].options().clone());
      for (const auto& [name, value] : sd.param_groups[g].options)
        options.back()->set_item(name, value);  // (keys of other optimizers are ignored)
    }
    for (std::size_t g = 0; g < param_groups_.size(); ++g) {
      param_groups_[g].set_options(std::move(options[g]));
      for (const auto& [name, value] : sd.param_groups[g].options)
        if (name == "initial_lr" && std::holds_alternative<double>(value)) param_groups_[g].set_initial_lr(std::get<double>(value));
    }
    state_ = std::move(state);
  }

 protected:
  Optimizer(std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults)
      : defaults_(std::move(defaults)) {
    tsr::detail::check(!groups.empty(), "optimizer got an empty parameter list");
    for (const auto& g : groups) add_param_group(g);
  }

  static constexpr const char* kFloatOrDouble = "tessera's optimizers update float and double parameters, not ";

  // The closure's loss, evaluated with grad mode on (PyTorch's
  // torch.enable_grad() around it); undefined without a closure.
  static AnyTensor evaluate(const LossClosure& closure) {
    if (!closure) return {};
    const tsr::detail::GradModeGuard enable_grad(true);
    return closure();
  }

  // f(options, parameter, grad-holding tensor, state) for every parameter that
  // has a gradient, typed: Options is the optimizer's, T float or double.
  template <class Options, class F>
  void for_each_param_with_grad(F&& f) {
    for (std::size_t g = 0; g < param_groups_.size(); ++g) {
      auto& options = static_cast<Options&>(param_groups_[g].options());
      auto& params = param_groups_[g].params();
      for (std::size_t i = 0; i < params.size(); ++i) {
        tsr::detail::visit_float_or_double(params[i], kFloatOrDouble, [&](auto& p) {
          if (p.grad().defined()) f(options, p, state_[g][i]);
        });
      }
    }
  }

  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<OptimizerParamGroup> param_groups_;
  std::vector<std::vector<ParamState>> state_;  // [group][parameter]

 private:
  static bool is_leaf(const AnyTensor& p) {
    return p.visit([](const auto& t) { return t.is_leaf(); });
  }
  // The same elements (one address, one shape): PyTorch's "same parameter".
  static bool same_tensor(const AnyTensor& a, const AnyTensor& b) {
    return a.visit([&]<class T>(const Tensor<T>& x) {
      return b.is<T>() && x.data_ptr() == b.as<T>().data_ptr() && x.sizes() == b.sizes();
    });
  }
  // A copy of a loaded state, its floating tensors in the parameter's type
  // (PyTorch converts all but "step", which stays a float tensor).
  static ParamState loaded_state(const ParamState& s, const AnyTensor& param) {
    ParamState out;
    for (const auto& [name, value] : s.entries()) {
      auto convert = [&](const AnyTensor& t) -> AnyTensor {
        if (!t.defined()) return t;
        const AnyTensor copy = t.visit([](const auto& x) { return AnyTensor(x.detach().clone()); });
        if (name == "step" || !t.is_floating_point()) return copy;
        // On the parameter's device and of its type, as PyTorch casts them.
        return param.visit([&]<class T>(const Tensor<T>& p) -> AnyTensor {
          if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
            return tsr::detail::placed_on(copy.to<T>().template as<T>(), p.device());
          else return copy;  // (parameters are float or double)
        });
      };
      if (const auto* t = std::get_if<AnyTensor>(&value)) {
        out.set(name, convert(*t));
      } else if (const auto* list = std::get_if<std::vector<AnyTensor>>(&value)) {
        std::vector<AnyTensor> converted;
        for (const auto& t : *list) converted.push_back(convert(t));
        out.set(name, std::move(converted));
      } else {
        out.set(name, value);
      }
    }
    return out;
  }
};

// The optimizers whose step updates each parameter on its own (all but
// LBFGS). Derived supplies `static const Options& checked(const Options&)`,
// which validates the options with PyTorch's messages, and
// `template <class T> static void update(const Options&, Tensor<T>&,
// ParamState&)`, one parameter's step (under no-grad, its gradient defined).
template <class Derived, class Options>
class PerParameterOptimizer : public Optimizer {
 public:
  PerParameterOptimizer(std::vector<OptimizerParamGroup> groups, const Options& defaults)
      : Optimizer(std::move(groups), std::make_unique<Options>(Derived::checked(defaults))) {}
  PerParameterOptimizer(std::vector<AnyTensor> params, const Options& defaults = Options())
      : PerParameterOptimizer(one_group(std::move(params)), defaults) {}

  AnyTensor step(LossClosure closure = nullptr) override {
    AnyTensor loss = evaluate(closure);
    const NoGradGuard no_grad;
    for_each_param_with_grad<Options>([](const Options& o, auto& p, ParamState& state) { Derived::update(o, p, state); });
    return loss;
  }
};

}  // namespace tsr::optim
