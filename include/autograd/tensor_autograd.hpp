// Tensor's autograd methods and the hooks the core calls when it
// materializes or writes in place.
#pragma once
#include "engine.hpp"
#include "fused.hpp"
#include "view_node.hpp"

namespace tsr {

namespace detail {

template <class T>
void enable_autograd_runtime() {
  static constexpr AutogradRuntime<T> runtime{
      [](const std::shared_ptr<TensorImpl>& leaf) -> std::shared_ptr<autograd::Node> {
        return std::make_shared<autograd::AccumulateGrad<T>>(leaf);
      },
      &sum_over_broadcast_dims<T>,
      [](const autograd::GradRef& a, const autograd::GradRef& b) {
        return backward_eval<T>(Tensor<T>(a) + Tensor<T>(b)).impl_ptr();
      },
      &record_view_node<T>,
      [](const Tensor<T>& base, const Tensor<T>& view, const std::shared_ptr<autograd::Node>& old_base,
         const std::shared_ptr<autograd::Node>& value) -> std::shared_ptr<autograd::Node> {
        return std::make_shared<autograd::CopySlices<T>>(base, view, old_base, value);
      },
  };
  autograd_runtime_of<T>.store(&runtime, std::memory_order_release);
  run_backward_of.store(&autograd::run_backward, std::memory_order_release);
}

template <class T, class E>
void record_full_reduction(const Tensor<T>& out, const E& e, bool mean) {
  if constexpr (is_floating_v<T> && has_floating_leaf<E>()) {
    if (!records(e)) return;
    const char* kind = mean ? "MeanBackward" : "SumBackward";
    if constexpr (!kFusedAutograd) {
      if (records_op_by_op(e)) {
        const Tensor<T> value = as_type<T>(e);  // recorded op by op
        set_history(out, std::make_shared<autograd::FullReductionNode<Tensor<T>, T>>(value, kind, mean));
        return;
      }
    }
    if constexpr (fuses_backward<E>())
      set_history(out, std::make_shared<autograd::FullReductionNode<E, T>>(e, kind, mean));
  }
}

// In-place writes autograd cannot follow are refused instead of giving
// wrong gradients: PyTorch's error for leaves that require grad; for the
// rest (writing into a recorded result, or writing an expression that
// requires grad into a tensor), autograd has no history rebasing: refused.
template <class T, class E>
void check_in_place(const Tensor<T>& dst, const E& src) {
  if (!grad_mode_flag()) return;
  if (requires_grad(dst)) {
    check(!dst.is_leaf(), "a leaf Variable that requires grad is being used in an in-place operation.");
    fail<Error>("in-place operations on a tensor that requires grad and has a grad_fn (", dst.grad_fn_name(),
                ") are not supported by autograd; compute it out of place");
  }
  check(!records(src), "autograd does not record writing an expression that requires grad into an existing "
                       "tensor in place; materialize it as a new tensor (Tensor y = expr)");
}

template <class... E>
void check_no_autograd(const char* op, const E&... inputs) {
  if ((records(inputs) || ...))
    fail<Error>("autograd does not record ", op, ", and an input requires grad; compute it under "
                "NoGradGuard or on detach()ed inputs");
}

}  // namespace detail

template <class T>
bool Tensor<T>::requires_grad() const {
  return detail::requires_grad(*this);
}

template <class T>
Tensor<T>& Tensor<T>::requires_grad_(bool on) {
  detail::check(is_floating_v<T>, "only Tensors of floating point dtype can require gradients");
  detail::check(is_leaf(), "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                           "variable in a subgraph that doesn't require differentiation use var_no_grad = "
                           "var.detach().");
  TensorImpl& t = *impl_ptr();
  if (!t.autograd) t.autograd = std::make_unique<detail::AutogradMeta>();
  t.autograd->requires_grad = on;
  if constexpr (is_floating_v<T>)
    if (on) detail::enable_autograd_runtime<T>();
  return *this;
}

template <class T>
bool Tensor<T>::is_leaf() const {
  (void)detail::requires_grad(*this);  // a view may have to catch up with its base first
  const auto& meta = impl().autograd;
  return !meta || !meta->grad_fn;
}

template <class T>
Tensor<T> Tensor<T>::grad() const {
  const auto& meta = impl().autograd;
  return meta && meta->grad ? detail::grad_slot<T>(*meta) : Tensor();
}

template <class T>
Tensor<T>& Tensor<T>::mutable_grad() {
  TensorImpl& t = *impl_ptr();
  if (!t.autograd) t.autograd = std::make_unique<detail::AutogradMeta>();
  return detail::grad_slot<T>(*t.autograd);
}

template <class T>
void Tensor<T>::register_hook(std::function<Tensor<T>(const Tensor<T>&)> hook) {
  detail::check(requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
  detail::GradHook erased = [hook = std::move(hook)](const autograd::GradRef& g) -> autograd::GradRef {
    const Tensor<T> in(g);
    Tensor<T> out = hook(in);
    if (!out.defined()) return nullptr;
    detail::check(out.sizes() == in.sizes(), "hook changed the size of the gradient from ", in.sizes(), " to ",
                  out.sizes());
    return out.impl_ptr();
  };
  detail::AutogradMeta& meta = *impl_ptr()->autograd;
  if (meta.grad_fn) meta.grad_fn->pre_hooks.push_back(std::move(erased));
  else meta.hooks.push_back(std::move(erased));
}

template <class T>
void Tensor<T>::retain_grad() const {
  detail::check(requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  if constexpr (is_floating_v<T>) retain_grad_of_non_leaf();
}

template <class T>
template <class U>
void Tensor<T>::retain_grad_of_non_leaf() const {
  if (is_leaf()) return;
  detail::AutogradMeta& meta = *impl_ptr()->autograd;
  if (meta.retains_grad) return;
  autograd::Node& fn = *meta.grad_fn;
  // The hook holds the tensor weakly: the tensor owns the graph that holds the hook.
  std::weak_ptr<TensorImpl> weak = impl_ptr();
  fn.retains_grad_hook = static_cast<int>(fn.pre_hooks.size());
  fn.pre_hooks.push_back([weak](const autograd::GradRef& g) -> autograd::GradRef {
    const std::shared_ptr<TensorImpl> self = weak.lock();
    if (!self || !g) return nullptr;
    const Tensor<T> grad(g);
    Tensor<T>& slot = detail::grad_slot<T>(*self->autograd);
    slot = slot.defined() ? Tensor<T>(slot + grad) : grad.clone();
    return nullptr;
  });
  meta.retains_grad = true;
}

template <class T>
bool Tensor<T>::retains_grad() const {
  const auto& meta = impl().autograd;
  return meta && meta->retains_grad && !is_leaf();
}

template <class T>
void Tensor<T>::register_post_accumulate_grad_hook(std::function<void(Tensor<T>&)> hook) {
  detail::check(requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
  detail::check(is_leaf(), "post accumulate grad hooks cannot be registered on non-leaf tensors");
  impl_ptr()->autograd->post_accumulate_hooks.push_back(
      [hook = std::move(hook)](const std::shared_ptr<TensorImpl>& leaf) {
        Tensor<T> t(leaf);
        hook(t);
      });
}

template <class T>
std::string Tensor<T>::grad_fn_name() const {
  (void)detail::requires_grad(*this);  // a view may have to catch up with its base first
  const auto& meta = impl().autograd;
  return meta && meta->grad_fn ? meta->grad_fn->name() : "";
}

template <class T>
Tensor<T> Tensor<T>::detach() const {
  return alias_with_geometry(sizes(), strides(), storage_offset());
}

template <class T>
void Tensor<T>::backward(Tensor gradient, bool retain_graph, bool create_graph) const {
  detail::check(requires_grad(), "element 0 of tensors does not require grad and does not have a grad_fn");
  if (!gradient.defined()) {
    detail::check(numel() == 1, "grad can be implicitly created only for scalar outputs");
    gradient = ones<T>(sizes(), device());
  } else {
    detail::check(gradient.sizes() == sizes(), "Mismatch in shape: grad_output[0] has a shape of ", gradient.sizes(),
                  " and output[0] has a shape of ", sizes(), ".");
  }
  // create_graph keeps the graph (PyTorch's retain_graph defaults to create_graph).
  autograd::run_backward({{detail::gradient_edge(*this), gradient.impl_ptr()}}, retain_graph || create_graph, nullptr,
                         create_graph);
}

namespace autograd {

// The gradients of outputs (weighted by grad_outputs; ones for scalar
// outputs when none are given) with respect to inputs, returned instead of
// accumulated into .grad. An input the outputs do not depend on is an error
// unless allow_unused, which returns an undefined tensor for it.
namespace detail_grad {
template <class T>
std::vector<Tensor<T>> grad(const std::vector<Tensor<T>>& outputs, const std::vector<Tensor<T>>& inputs,
                            const std::vector<Tensor<T>>& grad_outputs, bool retain_graph, bool create_graph,
                            bool allow_unused) {
  detail::check(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "grad requires one gradient per "
                "output: got ", grad_outputs.size(), " gradients for ", outputs.size(), " outputs");
  std::vector<std::pair<std::shared_ptr<Node>, GradRef>> roots;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Tensor<T>& out = outputs[i];
    detail::check(out.requires_grad(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor<T> g = grad_outputs.empty() ? Tensor<T>() : grad_outputs[i];
    if (!g.defined()) {
      detail::check(out.numel() == 1, "grad can be implicitly created only for scalar outputs");
      g = ones<T>(out.sizes(), out.device());
    }
    detail::check(g.sizes() == out.sizes(), "Mismatch in shape: grad_output[", i, "] has a shape of ", g.sizes(),
                  " and output[", i, "] has a shape of ", out.sizes(), ".");
    roots.emplace_back(detail::gradient_edge(out), g.impl_ptr());
  }
  Capture capture;
  std::vector<std::shared_ptr<Node>> keep;  // accumulators made here stay alive until the end
  for (const auto& x : inputs) {
    detail::check(x.requires_grad(), "One of the differentiated Tensors does not require grad");
    keep.push_back(detail::gradient_edge(x));
    capture.nodes.push_back(keep.back().get());
  }
  capture.grads.resize(inputs.size());
  run_backward(roots, retain_graph || create_graph, &capture, create_graph);
  std::vector<Tensor<T>> result;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!capture.grads[i]) {
      detail::check(allow_unused, "One of the differentiated Tensors appears to not have been used in the graph. "
                                  "Set allow_unused=True if this is the desired behavior.");
      result.emplace_back();
    } else {
      result.emplace_back(capture.grads[i]);
    }
  }
  return result;
}
}  // namespace detail_grad

template <class T>
std::vector<Tensor<T>> grad(const std::vector<Tensor<T>>& outputs, const std::vector<Tensor<T>>& inputs,
                            const std::vector<Tensor<T>>& grad_outputs = {}, bool retain_graph = false,
                            bool create_graph = false, bool allow_unused = false) {
  return detail_grad::grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused);
}
// The same with braced lists: autograd::grad({y}, {x}).
template <class T>
std::vector<Tensor<T>> grad(std::initializer_list<Tensor<T>> outputs, std::initializer_list<Tensor<T>> inputs,
                            std::initializer_list<Tensor<T>> grad_outputs = {}, bool retain_graph = false,
                            bool create_graph = false, bool allow_unused = false) {
  return detail_grad::grad<T>(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused);
}

}  // namespace autograd

}  // namespace tsr
