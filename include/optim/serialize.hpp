// optim::save / optim::load: an optimizer's state_dict in PyTorch's format,
// {"state": {index: {name: value}}, "param_groups": [{options, "params": [...]}]},
// so that torch.optim's load_state_dict takes what tessera saves and
// tessera's takes what torch.save(optimizer.state_dict(), path) wrote.
#pragma once
#include <string>

#include "../io/checkpoint_format.hpp"
#include "../io/pt.hpp"
#include "optimizer.hpp"

namespace tsr::optim {
namespace detail {

inline io::PickleValue to_pickle(const OptionValue& v) {
  return std::visit(
      [](const auto& x) -> io::PickleValue {
        using V = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<V, std::monostate>) return io::PickleValue::None{};
        else if constexpr (std::is_same_v<V, std::vector<double>>) {
          io::PickleValue::Tuple t;
          for (double d : x) t.items.emplace_back(d);
          return t;
        } else return x;
      },
      v);
}

inline io::PickleValue to_pickle(const StateValue& v) {
  return std::visit(
      [](const auto& x) -> io::PickleValue {
        using V = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<V, std::vector<AnyTensor>>) {
          io::PickleValue::List l;
          for (const auto& t : x) l.items.push_back(t.defined() ? io::PickleValue(t) : io::PickleValue(io::PickleValue::None{}));
          return l;
        } else return x;
      },
      v);
}

inline io::PickleValue to_pickle(const OptimizerStateDict& sd) {
  io::PickleValue::Dict state;
  for (const auto& [index, s] : sd.state) {
    io::PickleValue::Dict entries;
    for (const auto& [name, value] : s.entries()) entries.items.emplace_back(name, to_pickle(value));
    state.items.emplace_back(index, std::move(entries));
  }
  io::PickleValue::List groups;
  for (const auto& g : sd.param_groups) {
    io::PickleValue::Dict group;
    for (const auto& [name, value] : g.options) group.items.emplace_back(name, to_pickle(value));
    io::PickleValue::List params;
    for (int64_t p : g.params) params.items.emplace_back(p);
    group.items.emplace_back("params", std::move(params));
    groups.items.push_back(std::move(group));
  }
  io::PickleValue::Dict out;
  // (assigned whole: emplace_back into the empty vector makes GCC 12 warn,
  // falsely, of a write out of bounds)
  out.items = {{std::string("state"), std::move(state)}, {std::string("param_groups"), std::move(groups)}};
  return out;
}

[[noreturn]] inline void not_an_optimizer_state(const std::string& source, const std::string& what) {
  tsr::detail::fail<Error>("'", source, "' does not hold an optimizer's state_dict: ", what);
}

inline OptionValue to_option(const io::PickleValue& v, const std::string& name, const std::string& source) {
  if (v.is<io::PickleValue::None>()) return std::monostate{};
  if (const auto* b = v.get_if<bool>()) return *b;
  if (const auto* i = v.get_if<int64_t>()) return *i;
  if (const auto* d = v.get_if<double>()) return *d;
  if (const auto* s = v.get_if<std::string>()) return *s;
  const auto* t = v.get_if<io::PickleValue::Tuple>();
  const auto* l = v.get_if<io::PickleValue::List>();
  if (t || l) {  // Adam's betas, (0.9, 0.999)
    std::vector<double> out;
    for (const auto& x : t ? t->items : l->items) {
      if (const auto* d = x.get_if<double>()) out.push_back(*d);
      else if (const auto* i = x.get_if<int64_t>()) out.push_back(static_cast<double>(*i));
      else not_an_optimizer_state(source, "option '" + name + "' holds a " + x.type_name());
    }
    return out;
  }
  not_an_optimizer_state(source, "option '" + name + "' holds a " + v.type_name());
}

inline StateValue to_state(const io::PickleValue& v, const std::string& name, const std::string& source) {
  if (const auto* t = v.get_if<AnyTensor>()) return *t;
  if (const auto* i = v.get_if<int64_t>()) return *i;
  if (const auto* d = v.get_if<double>()) return *d;
  if (const auto* l = v.get_if<io::PickleValue::List>()) {  // LBFGS's history
    std::vector<AnyTensor> out;
    for (const auto& x : l->items) {
      if (const auto* t = x.get_if<AnyTensor>()) out.push_back(*t);
      else if (x.is<io::PickleValue::None>()) out.emplace_back();
      else not_an_optimizer_state(source, "state '" + name + "' holds a list of " + x.type_name());
    }
    return out;
  }
  not_an_optimizer_state(source, "state '" + name + "' holds a " + v.type_name());
}

inline OptimizerStateDict from_pickle(const io::PickleValue& v, const std::string& source) {
  const io::PickleValue* state = v.find("state");
  const io::PickleValue* groups = v.find("param_groups");
  if (!state || !groups || !state->is<io::PickleValue::Dict>() || !groups->is<io::PickleValue::List>())
    not_an_optimizer_state(source, "it needs a dict 'state' and a list 'param_groups'");
  OptimizerStateDict sd;
  for (const auto& [k, s] : state->get_if<io::PickleValue::Dict>()->items) {
    const auto* index = k.get_if<int64_t>();
    const auto* entries = s.get_if<io::PickleValue::Dict>();
    if (!index || !entries) not_an_optimizer_state(source, "'state' must map parameter indices to dicts");
    ParamState p;
    for (const auto& [name, value] : entries->items) {
      const auto* n = name.get_if<std::string>();
      if (!n) not_an_optimizer_state(source, "a state's key is a " + std::string(name.type_name()));
      p.set(*n, to_state(value, *n, source));
    }
    sd.state.emplace_back(*index, std::move(p));
  }
  for (const auto& g : groups->get_if<io::PickleValue::List>()->items) {
    const auto* group = g.get_if<io::PickleValue::Dict>();
    if (!group) not_an_optimizer_state(source, "a parameter group is a " + std::string(g.type_name()));
    OptimizerStateDict::Group out;
    bool has_params = false;
    for (const auto& [key, value] : group->items) {
      const auto* name = key.get_if<std::string>();
      if (!name) not_an_optimizer_state(source, "a parameter group's key is a " + std::string(key.type_name()));
      if (*name != "params") {
        out.options.emplace_back(*name, to_option(value, *name, source));
        continue;
      }
      const auto* params = value.get_if<io::PickleValue::List>();
      if (!params) not_an_optimizer_state(source, "'params' is not a list");
      for (const auto& p : params->items) {
        const auto* i = p.get_if<int64_t>();
        if (!i) not_an_optimizer_state(source, "'params' holds a " + std::string(p.type_name()));
        out.params.push_back(*i);
      }
      has_params = true;
    }
    if (!has_params) not_an_optimizer_state(source, "a parameter group has no 'params'");
    sd.param_groups.push_back(std::move(out));
  }
  return sd;
}

inline void check_pytorch_format(const std::string& path, const char* who) {
  tsr::detail::check(io::checkpoint_format(path, who) == io::CheckpointFormat::PyTorch, who, ": '", path,
                     "': an optimizer's state is saved in PyTorch's format (.pt or .pth); safetensors holds only tensors");
}

}  // namespace detail

inline void save(const Optimizer& optimizer, const std::string& path) {
  detail::check_pytorch_format(path, "optim::save");
  io::save_pt(path, detail::to_pickle(optimizer.state_dict()));
}

// Loads a saved state with load_state_dict (the groups must match in number
// and size; the optimizer is unchanged when it fails).
inline void load(Optimizer& optimizer, const std::string& path) {
  detail::check_pytorch_format(path, "optim::load");
  optimizer.load_state_dict(detail::from_pickle(io::load_pt(path), path));
}

}  // namespace tsr::optim
