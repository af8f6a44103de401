// Nodes of operations with their own backward (reductions over dims,
// matrix products, shape and indexing ops), as opposed to the fused
// elementwise nodes.
//
// An op records itself with record_op<Tag>(out, args...): when grad mode is
// on and a differentiable argument requires grad, OpRule<Tag> (one
// specialization per op, in autograd/*_rules.hpp) builds the node. A rule
// keeps what its backward needs and maps the gradient of the result to the
// gradients of its inputs.
//
// An input may be an expression (sum(sin(a) * b, {1})): Input<E> then
// keeps the expression and sends the input's gradient through its fused
// backward, so the reduction and the expression are one node and nothing of
// the expression is stored; where the backward needs the input's value, it
// is recomputed.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fused.hpp"

namespace tsr::autograd {

// A tensor kept for backward, with its storage's version when it was kept:
// get() fails with PyTorch's message if it was modified in place since.
template <class T>
class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor<T>& t) : t_(t), version_(t.storage()->version()) {}
  // An op's own result: kept without its autograd state, which would point
  // back at the node that keeps it (a reference cycle). A recorded backward
  // (create_graph) reads it with that node as its grad_fn again, so the
  // gradient depends on the result's history (PyTorch's saved outputs).
  static SavedTensor output(const Tensor<T>& t) {
    SavedTensor saved(t.detach());
    saved.is_output_ = true;
    return saved;
  }
  Tensor<T> get() const {
    detail::check_saved_version(t_, version_);
    if (is_output_ && detail::grad_mode_flag() && RunningNode::current()) {
      Tensor<T> with_history = t_.detach();
      detail::set_history(with_history, *RunningNode::current());
      return with_history;
    }
    return t_;
  }

 private:
  Tensor<T> t_;
  uint64_t version_ = 0;
  bool is_output_ = false;
};

// A differentiable input of an op: a tensor (its gradient goes to the
// tensor's edge) or an expression (its gradient goes through the
// expression's fused backward to the expression's leaves; with per-op
// autograd, the expression is recorded op by op and taken as a tensor).
template <class E>
class Input {
 public:
  using T = typename E::value_type;

  // keep_value: whether backward will ask for value().
  Input(const E& e, bool keep_value) : sizes_(e.sizes()) {
    if constexpr (detail::is_tensor<E>::value) {
      edges_.push_back(detail::gradient_edge(e));
      if (keep_value) value_ = SavedTensor<T>(e);
    } else {
      if constexpr (!detail::kFusedAutograd) {
        if (detail::records_op_by_op(e)) {
          const Tensor<T> value = e;  // recorded op by op
          edges_.push_back(detail::gradient_edge(value));
          if (keep_value) value_ = SavedTensor<T>(value);
          return;
        }
      }
      if constexpr (detail::fuses_backward<E>()) {
        fused_ = std::make_shared<FusedNode<E, true>>(e, "");
        edges_ = fused_->next;
      }
    }
  }
  const std::vector<std::shared_ptr<Node>>& edges() const { return edges_; }
  const Shape& sizes() const { return sizes_; }
  // The input's value: the saved tensor, or the expression evaluated again.
  Tensor<T> value() const {
    if constexpr (detail::fuses_backward<E>() && !detail::is_tensor<E>::value)
      if (fused_) return fused_->value();
    return value_.get();
  }
  // The gradients for edges() given the gradient of the input's value.
  std::vector<GradRef> send(const Tensor<T>& grad) const {
    if constexpr (detail::fuses_backward<E>() && !detail::is_tensor<E>::value)
      if (fused_) return fused_->apply_with(grad);
    return {grad.impl_ptr()};
  }

 private:
  Shape sizes_;
  std::vector<std::shared_ptr<Node>> edges_;
  SavedTensor<T> value_;
  std::shared_ptr<FusedNode<E, true>> fused_;
};

template <class E>
Input(const E&, bool) -> Input<E>;

// The node of one recorded op: Rule::backward(grad) returns a gradient per
// edge (null where none). release_saved() drops the rule with everything it
// kept.
template <class T, class Rule>
class OpNode final : public TypedNode<T> {
 public:
  OpNode(std::string name, Rule rule, std::vector<std::shared_ptr<Node>> next)
      : name_(std::move(name)), rule_(std::move(rule)) {
    this->next = std::move(next);
  }
  std::string name() const override { return name_; }
  std::vector<GradRef> apply(const GradRef& grad) override {
    if (!rule_) fail_released();
    return rule_->backward(Tensor<T>(grad));
  }
  void release_saved() override { rule_.reset(); }

 private:
  std::string name_;
  std::optional<Rule> rule_;
};

// Makes out the result of a node running `rule` with the given edges.
template <class T, class Rule>
void set_rule(const Tensor<T>& out, std::string name, Rule rule, std::vector<std::shared_ptr<Node>> edges) {
  detail::set_history(out, std::make_shared<OpNode<T, Rule>>(std::move(name), std::move(rule), std::move(edges)));
}

// The rule of an op whose gradient is its output's, unchanged (a copy of
// the value: clone in an in-place write's history, pin_memory).
template <class T>
struct IdentityRule {
  std::vector<GradRef> backward(const Tensor<T>& g) const { return {g.impl_ptr()}; }
};

// One specialization per op tag (autograd/*_rules.hpp): a static
// record(out, args...) that builds the node.
template <class Tag>
struct OpRule;

// A gradient as a GradRef, null for an undefined tensor.
template <class T>
GradRef ref(const Tensor<T>& t) {
  return t.defined() ? t.impl_ptr() : nullptr;
}

}  // namespace tsr::autograd

namespace tsr::detail {

// Whether an op argument asks for a node: an expression with a leaf that
// requires grad, or a list of tensors one of which does.
// (Integer and bool expressions never require grad.)
template <class A>
bool arg_records(const A& a) {
  if constexpr (Expression<A>) {
    if constexpr (is_floating_v<typename A::value_type>) return records(a);
  }
  return false;
}
template <class T>
bool arg_records(const std::vector<Tensor<T>>& list) {
  for (const auto& t : list)
    if (records(t)) return true;
  return false;
}

// A differentiable argument has the result's type (integer arguments, as
// in logsumexp(int_tensor), are not differentiable).
template <class T, class A>
constexpr bool differentiable_as() {
  if constexpr (Expression<A>) return !is_floating_v<typename A::value_type> || std::is_same_v<typename A::value_type, T>;
  else return true;
}
// Whether an argument can require grad: a floating expression, or a list
// of floating tensors. An op with none records nothing, and compiles no
// node (logsumexp of an integer tensor is a float tensor without history).
template <class A>
constexpr bool floating_argument() {
  if constexpr (Expression<A>) {
    return is_floating_v<typename A::value_type>;
  } else if constexpr (requires { typename A::value_type; }) {
    if constexpr (is_tensor<typename A::value_type>::value) return is_floating_v<typename A::value_type::value_type>;
    else return false;
  } else {
    return false;
  }
}

// (Every OpRule<Tag>::record is [[gnu::noinline]]: it runs once per op, and
// inlined here it would instantiate its node type and backward in the
// caller's translation unit, even for the ones the precompiled core holds:
// GCC may inline an `extern template` function, and then needs its callees.)
template <class Tag, class T, class... Args>
void record_op(const Tensor<T>& out, const Args&... args) {
  if constexpr (is_floating_v<T> && (differentiable_as<T, Args>() && ...) && (floating_argument<Args>() || ...)) {
    if ((arg_records(args) || ...)) autograd::OpRule<Tag>::record(out, args...);
  }
}

}  // namespace tsr::detail
