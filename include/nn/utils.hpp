// nn::utils: gradient clipping and flattening parameters into one vector,
// as torch.nn.utils (PyTorch 1.13) and libtorch's torch::nn::utils.
// (Templates on the parameter list, std::vector<AnyTensor> or a braced list
// of tensors, so that a program pays for compiling them only when it calls
// them.)
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../any_tensor.hpp"
#include "../detail/python_repr.hpp"

namespace tsr::nn::utils {

namespace detail {
// f(Tensor<T>& parameter) for every float or double parameter.
template <class Parameters, class F>
void for_each_float_param(Parameters& params, F&& f) {
  for (auto& p : params) tsr::detail::visit_float_or_double(p, "nn::utils: expected float or double parameters, got ", f);
}
}  // namespace detail

// Scales the gradients so that their norm of order norm_type (over all of
// them together) is at most max_norm, and returns the norm they had. As
// PyTorch: each gradient's norm, then the norm of those; the scale is
// max_norm / (norm + 1e-6), applied when below 1. A non-finite norm is an
// error with error_if_nonfinite.
template <class Parameters = std::vector<AnyTensor>>
double clip_grad_norm_(Parameters parameters, double max_norm, double norm_type = 2.0,
                              bool error_if_nonfinite = false) {
  std::vector<double> norms;
  detail::for_each_float_param(parameters, [&]<class T>(Tensor<T>& p) {
    if (p.grad().defined()) norms.push_back(double(norm(p.grad().detach(), norm_type).item()));
  });
  if (norms.empty()) return 0.0;
  double total = 0;
  if (std::isinf(norm_type)) {
    for (double n : norms) total = std::isnan(n) || std::isnan(total) ? NAN : std::max(total, n);
  } else {
    for (double n : norms) total += std::pow(std::abs(n), norm_type);
    total = std::pow(total, 1.0 / norm_type);
  }
  tsr::detail::check(!error_if_nonfinite || std::isfinite(total), "The total norm of order ",
                     tsr::detail::python_float_repr(norm_type),
                     " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and "
                     "scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`");
  const double coef = std::min(max_norm / (total + 1e-6), 1.0);
  const NoGradGuard no_grad;
  detail::for_each_float_param(parameters, [&]<class T>(Tensor<T>& p) {
    if (p.grad().defined()) p.mutable_grad().detach().mul_(T(coef));
  });
  return total;
}

// Clamps every gradient element into [-clip_value, clip_value].
template <class Parameters = std::vector<AnyTensor>>
void clip_grad_value_(Parameters parameters, double clip_value) {
  const NoGradGuard no_grad;
  detail::for_each_float_param(parameters, [&]<class T>(Tensor<T>& p) {
    if (p.grad().defined()) p.mutable_grad().detach().clamp_(T(-clip_value), T(clip_value));
  });
}

// The parameters flattened and concatenated, in order (a new tensor).
template <class Parameters = std::vector<AnyTensor>>
AnyTensor parameters_to_vector(Parameters parameters) {
  tsr::detail::check(!parameters.empty(), "parameters_to_vector: expected at least one parameter");
  return parameters[0].visit([&]<class T>(const Tensor<T>&) -> AnyTensor {
    std::vector<Tensor<T>> parts;
    for (const auto& p : parameters) {
      tsr::detail::check(p.template is<T>(), "parameters_to_vector: expected all parameters to be ", tsr::detail::dtype_name<T>(),
                         ", found ", p.dtype_name());
      parts.push_back(p.template as<T>().detach().reshape({-1}));
    }
    return Tensor<T>(cat(parts));
  });
}

// Copies consecutive slices of vec into the parameters (in place).
template <class Parameters = std::vector<AnyTensor>>
void vector_to_parameters(const AnyTensor& vec, Parameters parameters) {
  tsr::detail::check(vec.dim() == 1, "vector_to_parameters: expected a 1-D tensor, got ", vec.dim(), " dimensions");
  int64_t total = 0;
  for (const auto& p : parameters) total += p.numel();
  tsr::detail::check(total == vec.numel(), "vector_to_parameters: the vector has ", vec.numel(),
                     " elements, but the parameters have ", total);
  const NoGradGuard no_grad;
  int64_t offset = 0;
  for (auto& p : parameters) {
    p.visit([&]<class T>(Tensor<T>& x) {
      vec.visit([&]<class U>(const Tensor<U>& v) {
        if constexpr (std::is_same_v<T, U> && is_floating_v<T>) {
          x.detach().copy_(v.narrow(0, offset, x.numel()).reshape(x.sizes()));
        } else {
          tsr::detail::fail<Error>("vector_to_parameters: the vector is ", tsr::detail::dtype_name<U>(),
                                   ", a parameter ", tsr::detail::dtype_name<T>());
        }
      });
    });
    offset += p.numel();
  }
}

}  // namespace tsr::nn::utils
