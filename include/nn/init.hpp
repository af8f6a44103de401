// nn::init: PyTorch's parameter initializations (torch.nn.init).
//
// Every function fills a tensor in place, without recording (a parameter
// that requires grad is filled under NoGradGuard, as PyTorch's
// torch.no_grad()), and returns it. The bounds and standard deviations are
// computed in double with PyTorch's formulas in PyTorch's order, and the
// draws come from the same generator stream as rand and randn: after the
// same manual_seed, the uniform-based initializations give PyTorch's values
// bit for bit.
#pragma once
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "../any_tensor.hpp"

namespace tsr::nn::init {

// The nonlinearities calculate_gain knows (libtorch's torch::kReLU, ...), and GELU,
// which a transformer layer takes as its activation.
enum class Nonlinearity { Linear, Conv1D, Conv2D, Conv3D, ConvTranspose1D, ConvTranspose2D, ConvTranspose3D, Sigmoid, Tanh, ReLU, LeakyReLU, SELU, GELU };
enum class FanMode { FanIn, FanOut };

// The recommended gain for a nonlinearity; `param` is leaky_relu's negative
// slope (0.01 when not given).
inline double calculate_gain(Nonlinearity nonlinearity, std::optional<double> param = std::nullopt) {
  switch (nonlinearity) {
    case Nonlinearity::Tanh: return 5.0 / 3;
    case Nonlinearity::ReLU: return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: {
      const double slope = param.value_or(0.01);
      return std::sqrt(2.0 / (1 + slope * slope));
    }
    case Nonlinearity::SELU: return 3.0 / 4;
    case Nonlinearity::GELU: throw ValueError("Unsupported nonlinearity gelu");  // as PyTorch: no recommended gain
    default: return 1;  // linear, convolutions, sigmoid
  }
}

// (fan_in, fan_out): size(1) and size(0), times the receptive field (the
// product of the dims after the first two) for convolution weights.
inline std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const AnyTensor& t) {
  detail::check<ValueError>(t.dim() >= 2, "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive = 1;
  for (std::size_t d = 2; d < t.sizes().size(); ++d) receptive *= t.sizes()[d];
  return {t.sizes()[1] * receptive, t.sizes()[0] * receptive};
}

}  // namespace tsr::nn::init

namespace tsr::detail {
// f(Tensor<T>&) for a floating tensor, unrecorded.
template <class F>
AnyTensor init_fill(AnyTensor t, const char* what, F&& f) {
  check(t.defined(), "nn::init::", what, ": the tensor is undefined");
  t.visit([&]<class T>(Tensor<T>& x) {
    if constexpr (is_floating_v<T>) {
      const NoGradGuard no_grad;
      Tensor<T> data = x.detach();  // the same storage, outside autograd
      f(data);
    } else {
      fail<Error>("nn::init::", what, " expects a floating point tensor, got ", t.dtype_name());
    }
  });
  return t;
}
inline int64_t init_fan(const AnyTensor& t, nn::init::FanMode mode) {
  const auto [in, out] = nn::init::calculate_fan_in_and_fan_out(t);
  return mode == nn::init::FanMode::FanIn ? in : out;
}
}  // namespace tsr::detail

namespace tsr::nn::init {

inline AnyTensor uniform_(AnyTensor t, double a = 0, double b = 1) {
  return detail::init_fill(std::move(t), "uniform_", [&](auto& x) { x.uniform_(a, b); });
}
inline AnyTensor normal_(AnyTensor t, double mean = 0, double std = 1) {
  return detail::init_fill(std::move(t), "normal_", [&](auto& x) { x.normal_(mean, std); });
}
inline AnyTensor constant_(AnyTensor t, double value) {
  return detail::init_fill(std::move(t), "constant_", [&]<class T>(Tensor<T>& x) { x.fill_(static_cast<T>(value)); });
}
inline AnyTensor zeros_(AnyTensor t) { return constant_(std::move(t), 0); }
inline AnyTensor ones_(AnyTensor t) { return constant_(std::move(t), 1); }

// The identity matrix (a 2-D tensor only), as torch.nn.init.eye_.
inline AnyTensor eye_(AnyTensor t) {
  detail::check<ValueError>(t.dim() == 2, "Only tensors with 2 dimensions are supported");
  return detail::init_fill(std::move(t), "eye_", [&]<class T>(Tensor<T>& x) {
    x.zero_();
    for (int64_t i = 0; i < std::min(x.size(0), x.size(1)); ++i) x.select(0, i).select(0, i).fill_(T(1));
  });
}

// Glorot: U(-a, a) with a = gain sqrt(6 / (fan_in + fan_out)).
inline AnyTensor xavier_uniform_(AnyTensor t, double gain = 1) {
  const auto [in, out] = calculate_fan_in_and_fan_out(t);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(in + out));
  const double a = std::sqrt(3.0) * std;
  return uniform_(std::move(t), -a, a);
}
inline AnyTensor xavier_normal_(AnyTensor t, double gain = 1) {
  const auto [in, out] = calculate_fan_in_and_fan_out(t);
  return normal_(std::move(t), 0, gain * std::sqrt(2.0 / static_cast<double>(in + out)));
}

// He: U(-bound, bound) with bound = gain sqrt(3 / fan); `a` is the leaky
// slope the gain is computed for. A tensor with no elements is left alone.
inline AnyTensor kaiming_uniform_(AnyTensor t, double a = 0, FanMode mode = FanMode::FanIn,
                                  Nonlinearity nonlinearity = Nonlinearity::LeakyReLU) {
  if (t.numel() == 0) return t;
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(detail::init_fan(t, mode)));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(t), -bound, bound);
}
inline AnyTensor kaiming_normal_(AnyTensor t, double a = 0, FanMode mode = FanMode::FanIn,
                                 Nonlinearity nonlinearity = Nonlinearity::LeakyReLU) {
  if (t.numel() == 0) return t;
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(detail::init_fan(t, mode)));
  return normal_(std::move(t), 0, std);
}

// N(mean, std) truncated to [a, b], by PyTorch's method: a uniform draw
// between the bounds' normal CDF values, mapped back through erfinv (so it
// draws the same uniform stream and gives PyTorch's values).
inline AnyTensor trunc_normal_(AnyTensor t, double mean = 0, double std = 1, double a = -2, double b = 2) {
  auto cdf = [](double x) { return (1 + std::erf(x / std::sqrt(2.0))) / 2; };
  const double l = cdf((a - mean) / std), u = cdf((b - mean) / std);
  return detail::init_fill(std::move(t), "trunc_normal_", [&]<class T>(Tensor<T>& x) {
    x.uniform_(2 * l - 1, 2 * u - 1);
    // Written unrecorded: copy_ would compile its autograd history for the
    // expression in every translation unit that includes nn (2 s of compile).
    detail::assign(x, clamp(special::erfinv(x) * T(std * std::sqrt(2.0)) + T(mean), T(a), T(b)), true);
  });
}

// The identity of a convolution: a 3-, 4- or 5-D weight zeroed, with a 1
// at the kernel's centre for each output channel d < in channels (per group).
inline AnyTensor dirac_(AnyTensor t, int64_t groups = 1) {
  detail::check<ValueError>(t.dim() >= 3 && t.dim() <= 5, "Only tensors with 3, 4, or 5 dimensions are supported");
  detail::check<ValueError>(groups > 0 && t.sizes()[0] % groups == 0, "dim 0 must be divisible by groups");
  return detail::init_fill(std::move(t), "dirac_", [&]<class T>(Tensor<T>& x) {
    x.zero_();
    const int64_t per_group = x.size(0) / groups, n = std::min(per_group, x.size(1));
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t d = 0; d < n; ++d) {
        Tensor<T> at = x.select(0, g * per_group + d).select(0, d);
        while (at.dim() > 0) at = at.select(0, at.size(0) / 2);
        at.fill_(T(1));
      }
  });
}

// A (semi-)orthogonal matrix from the QR factorization of a normal draw,
// its columns' signs fixed by R's diagonal (Saxe et al., as PyTorch's);
// dims after the first are flattened. The draws are not PyTorch's (see
// normal_), the construction is.
inline AnyTensor orthogonal_(AnyTensor t, double gain = 1) {
  detail::check<ValueError>(t.dim() >= 2, "Only tensors with 2 or more dimensions are supported");
  if (t.numel() == 0) return t;
  const int64_t rows = t.sizes()[0], cols = t.numel() / rows;
  // A tall matrix m x n (m >= n): the transpose when t is wide.
  const bool wide = rows < cols;
  const int64_t m = wide ? cols : rows, n = wide ? rows : cols;
  Tensor<double> a = randn<double>({m, n});
  std::vector<double> q(static_cast<std::size_t>(m * n)), r(static_cast<std::size_t>(n * n), 0.0);
  auto at = [&](std::vector<double>& v, int64_t i, int64_t j, int64_t ld) -> double& { return v[static_cast<std::size_t>(i * ld + j)]; };
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) at(q, i, j, n) = a(i, j);
  // Modified Gram-Schmidt, twice per column for accuracy.
  for (int64_t j = 0; j < n; ++j) {
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t k = 0; k < j; ++k) {
        double dot = 0;
        for (int64_t i = 0; i < m; ++i) dot += at(q, i, k, n) * at(q, i, j, n);
        for (int64_t i = 0; i < m; ++i) at(q, i, j, n) -= dot * at(q, i, k, n);
        at(r, k, j, n) += dot;
      }
    double norm = 0;
    for (int64_t i = 0; i < m; ++i) norm += at(q, i, j, n) * at(q, i, j, n);
    norm = std::sqrt(norm);
    at(r, j, j, n) = norm;
    for (int64_t i = 0; i < m; ++i) at(q, i, j, n) /= norm > 0 ? norm : 1;
  }
  return detail::init_fill(std::move(t), "orthogonal_", [&]<class T>(Tensor<T>& x) {
    Tensor<T> flat = x.view({rows, cols});
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t qi = wide ? j : i, qj = wide ? i : j;  // Gram-Schmidt's R has a positive diagonal
        flat(i, j) = T(gain * at(q, qi, qj, n));
      }
  });
}

}  // namespace tsr::nn::init

namespace tsr::detail {
// Linear's and every convolution's reset_parameters in PyTorch:
// kaiming_uniform_(a = sqrt(5)) on the weight, then the bias (if any) from
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)), in that order of draws.
inline void init_affine(AnyTensor& weight, AnyTensor& bias) {
  nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (!bias.defined()) return;
  const int64_t fan_in = nn::init::calculate_fan_in_and_fan_out(weight).first;
  const double bound = fan_in > 0 ? 1 / std::sqrt(static_cast<double>(fan_in)) : 0;
  nn::init::uniform_(bias, -bound, bound);
}
}  // namespace tsr::detail

namespace tsr {
// libtorch's spellings: torch::kFanIn, torch::kReLU, ...
inline constexpr auto kFanIn = nn::init::FanMode::FanIn;
inline constexpr auto kFanOut = nn::init::FanMode::FanOut;
inline constexpr auto kLinear = nn::init::Nonlinearity::Linear;
inline constexpr auto kConv1D = nn::init::Nonlinearity::Conv1D;
inline constexpr auto kConv2D = nn::init::Nonlinearity::Conv2D;
inline constexpr auto kConv3D = nn::init::Nonlinearity::Conv3D;
inline constexpr auto kConvTranspose1D = nn::init::Nonlinearity::ConvTranspose1D;
inline constexpr auto kConvTranspose2D = nn::init::Nonlinearity::ConvTranspose2D;
inline constexpr auto kConvTranspose3D = nn::init::Nonlinearity::ConvTranspose3D;
inline constexpr auto kSigmoid = nn::init::Nonlinearity::Sigmoid;
inline constexpr auto kTanh = nn::init::Nonlinearity::Tanh;
inline constexpr auto kReLU = nn::init::Nonlinearity::ReLU;
inline constexpr auto kLeakyReLU = nn::init::Nonlinearity::LeakyReLU;
inline constexpr auto kSELU = nn::init::Nonlinearity::SELU;
inline constexpr auto kGELU = nn::init::Nonlinearity::GELU;  // a transformer layer's activation
}  // namespace tsr
