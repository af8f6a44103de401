// Tensor's autograd methods and the hooks the core calls when it
// materializes or writes in place.
#pragma once
#include "engine.hpp"
#include "fused.hpp"
#include "view_node.hpp"

namespace tsr {

namespace detail {

template <class T, class E>
void record_full_reduction(const Tensor<T>& out, const E& e, bool mean) {
  if constexpr (is_floating_v<T>) {
    if (records(e))
      set_history(out, std::make_shared<autograd::FullReductionNode<E, T>>(e, mean ? "MeanBackward" : "SumBackward",
                                                                           mean));
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
  return *this;
}

template <class T>
bool Tensor<T>::is_leaf() const {
  const auto& meta = impl().autograd;
  return !meta || !meta->grad_fn;
}

template <class T>
Tensor<T> Tensor<T>::grad() const {
  const auto& meta = impl().autograd;
  return meta && meta->grad ? Tensor(meta->grad) : Tensor();
}

template <class T>
std::string Tensor<T>::grad_fn_name() const {
  const auto& meta = impl().autograd;
  return meta && meta->grad_fn ? meta->grad_fn->name() : "";
}

template <class T>
Tensor<T> Tensor<T>::detach() const {
  return alias_with_geometry(sizes(), strides(), storage_offset());
}

template <class T>
void Tensor<T>::backward(Tensor gradient, bool retain_graph, bool create_graph) const {
  detail::check(!create_graph, "backward(create_graph=true): the backward pass is not recorded, so second "
                               "derivatives are not available; call backward with create_graph=false");
  detail::check(requires_grad(), "element 0 of tensors does not require grad and does not have a grad_fn");
  if (!gradient.defined()) {
    detail::check(numel() == 1, "grad can be implicitly created only for scalar outputs");
    gradient = ones<T>(sizes());
  } else {
    detail::check(gradient.sizes() == sizes(), "Mismatch in shape: grad_output[0] has a shape of ", gradient.sizes(),
                  " and output[0] has a shape of ", sizes(), ".");
  }
  autograd::run_backward(detail::gradient_edge(*this), gradient.impl_ptr(), retain_graph);
}

}  // namespace tsr
