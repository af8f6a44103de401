// Fused symbolic backward of elementwise expressions.
//
// Materializing an expression with a leaf that requires grad records ONE
// node for the whole expression (FusedNode), which keeps the expression: its
// leaves are the saved tensors. Backward walks the expression tree at compile
// time with the chain rule: every leaf gets a gradient *expression* over the
// leaves and the incoming gradient, evaluated as one fused kernel (and summed
// down to the leaf's shape where it was broadcast; the sum fuses too).
// Nothing intermediate is stored: exp(x) in a derivative is recomputed.
//
// The rules live in Derivative<Op> (autograd/derivatives.hpp), not in the op
// structs: they build host-side expression trees, and the op structs must
// stay plain device-capable functors.
#pragma once
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "../reduce_dims.hpp"
#include "derivatives.hpp"
#include "node.hpp"

namespace tsr::detail {

template <class E>
struct is_tensor : std::false_type {};
template <class T>
struct is_tensor<Tensor<T>> : std::true_type {};
template <class E>
struct is_scalar_leaf : std::false_type {};
template <class T>
struct is_scalar_leaf<ScalarLeaf<T>> : std::true_type {};

// The names of an expression's ops in evaluation order: "mul,sin,add".
template <class E>
void op_names(const E& e, std::vector<std::string>& out) {
  if constexpr (is_tensor<E>::value || is_scalar_leaf<E>::value) {
    (void)e;
  } else if constexpr (requires { e.c; }) {
    op_names(e.a, out), op_names(e.b, out), op_names(e.c, out);
    out.emplace_back(decltype(e.op)::name);
  } else if constexpr (requires { e.b; }) {
    op_names(e.a, out), op_names(e.b, out);
    out.emplace_back(decltype(e.op)::name);
  } else if constexpr (requires { e.op; }) {
    op_names(e.a, out);
    out.emplace_back(decltype(e.op)::name);
  } else {  // Cast
    op_names(e.a, out);
    out.emplace_back("cast");
  }
}

template <class E>
std::string join_op_names(const E& e) {
  std::vector<std::string> names;
  op_names(e, names);
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? "," : "") + names[i];
  return s;
}

// The number of tensor leaves of an expression.
template <class E>
int leaf_count(const E& e) {
  int n = 0;
  e.for_each_leaf([&](const auto&) { ++n; });
  return n;
}

// The chain rule over the tree: calls f(leaf, k, grad) for every tensor leaf
// (k counts leaves in for_each_leaf order) with the expression of its
// gradient. need(k, n) says whether any of leaves k .. k + n - 1 needs a
// gradient; subtrees that need none, and subtrees that are not floating
// (integer and bool results never require grad), are skipped, but still
// count their leaves.
template <class E, class G, class F, class Need>
void backprop(const E& e, const G& g, int& k, F& f, const Need& need) {
  using V = typename E::value_type;
  const int n = leaf_count(e);
  if constexpr (!is_floating_v<V>) {
    k += n;
  } else if constexpr (is_scalar_leaf<E>::value) {
    (void)g;
  } else if (!need(k, n)) {
    k += n;
  } else if constexpr (is_tensor<E>::value) {
    f(e, k++, g);
  } else if constexpr (requires { e.c; }) {
    using D = autograd::Derivative<std::remove_cvref_t<decltype(e.op)>>;
    backprop(e.a, D::grad_a(g, e), k, f, need);
    backprop(e.b, D::grad_b(g, e), k, f, need);
    backprop(e.c, D::grad_c(g, e), k, f, need);
  } else if constexpr (requires { e.b; }) {
    using D = autograd::Derivative<std::remove_cvref_t<decltype(e.op)>>;
    backprop(e.a, D::grad_a(g, e), k, f, need);
    backprop(e.b, D::grad_b(g, e), k, f, need);
  } else if constexpr (requires { e.op; }) {
    using D = autograd::Derivative<std::remove_cvref_t<decltype(e.op)>>;
    backprop(e.a, D::grad(g, e), k, f, need);
  } else {  // Cast<U, A>: the gradient casts back
    using A = std::remove_cvref_t<decltype(e.a)>;
    backprop(e.a, cast<typename A::value_type>(g), k, f, need);
  }
}

// grad (of the output's shape) summed down to `shape` where it was broadcast,
// as a new tensor of type L.
template <class L, class G>
Tensor<L> reduce_to_shape(const G& grad, const Shape& shape) {
  const Shape& out = grad.sizes();
  Shape dims;
  const std::size_t lead = out.size() - shape.size();
  for (std::size_t d = 0; d < out.size(); ++d)
    if (d < lead || (shape[d - lead] == 1 && out[d] != 1)) dims.push_back(static_cast<int64_t>(d));
  // Always a new buffer: a pass-through gradient must not be shared.
  Tensor<L> full = materialize<L>(cast<L>(grad));
  if (dims.empty()) return full.view(shape);
  // The sum runs over the materialized gradient rather than fusing the
  // gradient expression into it: fused, every gradient expression type
  // instantiated the whole reduction machinery again, which doubled the
  // build time of the test suite. One extra pass, for broadcast leaves only.
  return sum(full, dims, true).view(shape);
}

// PyTorch's error when a tensor saved for backward at version `then` was
// modified in place since.
template <class L>
void check_saved_version(const Tensor<L>& t, uint64_t then) {
  const uint64_t now = t.storage()->version();
  if (now == then) return;
  std::ostringstream os;
  os << "one of the variables needed for gradient computation has been modified by an inplace operation: [torch."
     << (std::is_same_v<L, double> ? "DoubleTensor" : "FloatTensor") << " " << t.sizes() << "]";
  const auto& meta = t.impl_ptr()->autograd;
  if (meta && meta->grad_fn) os << ", which is output 0 of " << meta->grad_fn->name() << ",";
  os << " is at version " << now << "; expected version " << then
     << " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
        "with torch.autograd.set_detect_anomaly(True).";
  throw Error(os.str());
}

// The versions of the saved leaves' storage when they were saved.
struct SavedVersions {
  std::vector<uint64_t> at_save;

  template <class E>
  void record(const E& e) {
    e.for_each_leaf([&](const auto& leaf) { at_save.push_back(leaf.storage()->version()); });
  }
  template <class E>
  void check(const E& e) const {
    std::size_t i = 0;
    e.for_each_leaf([&](const auto& leaf) { check_saved_version(leaf, at_save[i++]); });
  }
};

}  // namespace tsr::detail

namespace tsr::autograd {

// The node of a materialized expression: one for the whole tree.
template <class E>
class FusedNode final : public TypedNode<typename E::value_type> {
  using T = typename E::value_type;

 public:
  FusedNode(const E& e, const std::string& kind) : expr_(e), name_(node_name(kind, detail::join_op_names(e))) {
    saved_.record(e);
    e.for_each_leaf([&](const auto& leaf) { this->next.push_back(detail::gradient_edge(leaf)); });
  }
  std::string name() const override { return name_; }

  std::vector<GradRef> apply(const GradRef& grad) override { return apply_with(Tensor<T>(grad)); }
  void release_saved() override { expr_.reset(); }

  // The expression's value, evaluated again (for a reduction's backward
  // that needs its input).
  Tensor<T> value() const {
    if (!expr_) fail_released();
    saved_.check(*expr_);
    return detail::materialize<T>(*expr_);
  }

  // The leaves' gradients for an incoming gradient expression g of the
  // expression's shape (a reduction node passes its gradient broadcast).
  template <class G>
  std::vector<GradRef> apply_with(const G& g) const {
    if (!expr_) fail_released();
    saved_.check(*expr_);
    std::vector<GradRef> out(this->next.size());
    auto need = [&](int k, int n) {
      for (int i = k; i < k + n; ++i)
        if (this->next[static_cast<std::size_t>(i)]) return true;
      return false;
    };
    auto f = [&](const auto& leaf, int index, const auto& leaf_grad) {
      using L = typename std::remove_cvref_t<decltype(leaf)>::value_type;
      out[static_cast<std::size_t>(index)] = detail::reduce_to_shape<L>(leaf_grad, leaf.sizes()).impl_ptr();
    };
    int k = 0;
    detail::backprop(*expr_, g, k, f, need);
    return out;
  }

 protected:
  // "FusedBackward(mul,sin)"; over a bare tensor, PyTorch's names: a clone
  // is CloneBackward0, sum(x) SumBackward0.
  static std::string node_name(const std::string& kind, const std::string& ops) {
    if (!ops.empty()) return kind + "(" + ops + ")";
    return (kind == "FusedBackward" ? std::string("CloneBackward") : kind) + "0";
  }

  std::optional<E> expr_;
  detail::SavedVersions saved_;
  std::string name_;
};

// sum(e) and mean(e) of an expression: the incoming 0-d gradient is
// broadcast (and scaled for mean) into the expression's fused gradients.
template <class E, class Out>
class FullReductionNode final : public TypedNode<Out> {
 public:
  FullReductionNode(const E& e, const char* kind, bool mean)
      : fused_(e, kind), mean_(mean), shape_(e.sizes()) {
    this->next = fused_.next;
  }
  std::string name() const override { return fused_.name(); }
  std::vector<GradRef> apply(const GradRef& grad) override {
    Tensor<Out> g(grad);
    if (mean_) g = detail::materialize<Out>(g / static_cast<Out>(std::max<int64_t>(numel_of(shape_), 1)));
    return fused_.apply_with(g.expand(shape_));
  }
  void release_saved() override { fused_.release_saved(); }

 private:
  FusedNode<E> fused_;
  bool mean_;
  Shape shape_;
};

}  // namespace tsr::autograd

namespace tsr::detail {

// True when materializing e must record a node.
template <class E>
bool records(const E& e) {
  if (!grad_mode_flag()) return false;
  bool any = false;
  e.for_each_leaf([&](const auto& leaf) { any = any || requires_grad(leaf); });
  return any;
}

template <class T, class E>
void record_expression(const Tensor<T>& out, const E& e) {
  if constexpr (is_floating_v<T>) {
    if (records(e)) set_history(out, std::make_shared<autograd::FusedNode<E>>(e, "FusedBackward"));
  }
}

}  // namespace tsr::detail
