// Padding, interpolation, one-hot encoding, Bilinear and adaptive max pooling.
//
// Padding and nearest interpolation gather input elements by index
// (index_select per dim, whose backward adds the gradient back); linear,
// cubic and area interpolation are separable, one product with a resampling
// matrix per spatial dim. All are differentiable through those ops' rules.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "../detail/python_repr.hpp"
#include "conv.hpp"
#include "padding.hpp"
#include "holder.hpp"
#include "init.hpp"

namespace tsr::nn {

enum class InterpolateMode { Nearest, Linear, Bilinear, Bicubic, Trilinear, Area, NearestExact };

}  // namespace tsr::nn

namespace tsr {
inline constexpr auto kNearest = nn::InterpolateMode::Nearest;
inline constexpr auto kBilinear = nn::InterpolateMode::Bilinear;
inline constexpr auto kBicubic = nn::InterpolateMode::Bicubic;
inline constexpr auto kTrilinear = nn::InterpolateMode::Trilinear;
inline constexpr auto kArea = nn::InterpolateMode::Area;
inline constexpr auto kNearestExact = nn::InterpolateMode::NearestExact;
// (kLinear, linear interpolation, is init's nonlinearity of that name, as
// libtorch's one torch::kLinear serves both: InterpolateFuncOptions::mode
// takes it.)
}  // namespace tsr

namespace tsr::detail {
// PyTorch's spelling of a mode ("nearest-exact").
inline const char* interpolate_mode_name(nn::InterpolateMode m) {
  static constexpr const char* kNames[] = {"nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact"};
  return kNames[static_cast<int>(m)];
}
}  // namespace tsr::detail

namespace tsr::nn {

struct InterpolateFuncOptions {
  InterpolateFuncOptions& size(std::vector<int64_t> v) { size_ = std::move(v); return *this; }
  InterpolateFuncOptions& scale_factor(std::vector<double> v) { scale_factor_ = std::move(v); return *this; }
  InterpolateFuncOptions& mode(InterpolateMode m) { mode_ = m; return *this; }
  // kLinear: linear interpolation of a 3-D input.
  InterpolateFuncOptions& mode(init::Nonlinearity m) {
    tsr::detail::check(m == init::Nonlinearity::Linear, "interpolate: the mode must be kNearest, kLinear, kBilinear, kBicubic, "
                                                      "kTrilinear, kArea or kNearestExact");
    mode_ = InterpolateMode::Linear;
    return *this;
  }
  InterpolateFuncOptions& align_corners(bool v) { align_corners_ = v; return *this; }
  const std::vector<int64_t>& size() const { return size_; }
  const std::vector<double>& scale_factor() const { return scale_factor_; }
  InterpolateMode mode() const { return mode_; }
  std::optional<bool> align_corners() const { return align_corners_; }

 private:
  std::vector<int64_t> size_;
  std::vector<double> scale_factor_;
  InterpolateMode mode_ = InterpolateMode::Nearest;
  std::optional<bool> align_corners_;
};

namespace functional {

using tsr::one_hot;
// libtorch spells this F::InterpolateFuncOptions (F::PadFuncOptions: padding.hpp).
using nn::InterpolateFuncOptions;

}  // namespace functional
}  // namespace tsr::nn

namespace tsr::detail {
// PyTorch's source coordinate of output pixel i (its
// area_pixel_compute_source_index): align_corners maps the corner pixels'
// centres onto each other; otherwise src = (i + 0.5) scale - 0.5, clamped at
// 0 except for cubic interpolation.
inline double resample_source(int64_t i, int64_t in, int64_t out, bool align_corners, double scale, bool cubic) {
  const auto di = static_cast<double>(i);
  if (align_corners) return out > 1 ? di * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0;
  const double src = (di + 0.5) * scale - 0.5;
  return cubic ? src : std::max(src, 0.0);
}

// The (out, in) matrix of 1-D linear interpolation.
template <class T>
Tensor<T> linear_interpolation_matrix(int64_t in, int64_t out, bool align_corners, double scale) {
  auto a = zeros<T>({out, in});
  for (int64_t i = 0; i < out; ++i) {
    const double src = resample_source(i, in, out, align_corners, scale, false);
    const auto i0 = std::min<int64_t>(static_cast<int64_t>(src), in - 1);
    const int64_t i1 = std::min<int64_t>(i0 + 1, in - 1);
    const double l1 = src - static_cast<double>(i0);
    a(i, i0) += T(1 - l1);
    a(i, i1) += T(l1);
  }
  return a;
}

// The (out, in) matrix of 1-D cubic convolution: Keys' kernel with
// a = -0.75, four taps, those beyond the borders taken from the border
// pixel (PyTorch's bicubic).
template <class T>
Tensor<T> cubic_interpolation_matrix(int64_t in, int64_t out, bool align_corners, double scale) {
  constexpr double a = -0.75;
  const auto near = [](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };          // |x| <= 1
  const auto far = [](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };  // 1 < |x| < 2
  auto m = zeros<T>({out, in});
  for (int64_t i = 0; i < out; ++i) {
    const double src = resample_source(i, in, out, align_corners, scale, true), left = std::floor(src), t = src - left;
    const double weights[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
    for (int64_t k = 0; k < 4; ++k)
      m(i, std::clamp<int64_t>(static_cast<int64_t>(left) - 1 + k, 0, in - 1)) += T(weights[k]);
  }
  return m;
}

// x resampled along dim d by an (out, in) matrix.
template <class T>
Tensor<T> resample_along(const Tensor<T>& x, int64_t d, const Tensor<T>& matrix) {
  const Tensor<T> m = placed_on(matrix, x.device());
  if (d == x.dim() - 1) return matmul(x, m.t());
  if (d == x.dim() - 2) return matmul(m, x);
  return matmul(x.transpose(d, -1), m.t()).transpose(d, -1);
}
}  // namespace tsr::detail

namespace tsr::nn::functional {

// Resizes the spatial dims of (N, C, L), (N, C, H, W) or (N, C, D, H, W) to
// `size`, or by `scale_factor`: nearest, nearest-exact and area for each;
// linear, bilinear, bicubic and trilinear for the one rank each is for.
template <detail::FloatElement T>
Tensor<T> interpolate(const Tensor<T>& x, const InterpolateFuncOptions& o) {
  using M = InterpolateMode;
  const M mode = o.mode();
  const char* name = detail::interpolate_mode_name(mode);
  const bool interpolating = mode == M::Linear || mode == M::Bilinear || mode == M::Bicubic || mode == M::Trilinear;
  detail::check<ValueError>(interpolating || !o.align_corners().has_value(),
                            "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear");
  const int64_t spatial = x.dim() - 2;
  // The input rank each interpolating mode is for (nearest-style modes take 3-5).
  const int64_t rank = mode == M::Linear ? 3 : mode == M::Bilinear || mode == M::Bicubic ? 4 : mode == M::Trilinear ? 5 : 0;
  if (rank != 0 && mode != M::Bicubic && x.dim() >= 3 && x.dim() <= 5)
    detail::check(x.dim() == rank, "Got ", x.dim(), "D input, but ", name, " mode needs ", rank, "D input");
  detail::check((rank == 0 && spatial >= 1 && spatial <= 3) || x.dim() == rank, "Input Error: Only 3D, 4D and 5D input Tensors supported (got ",
                x.dim(), "D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got ", name, ")");
  detail::check(o.size().empty() != o.scale_factor().empty(), "only one of size or scale_factor should be defined");
  std::vector<int64_t> out_size;
  std::vector<double> scale;  // input per output pixel
  for (int64_t k = 0; k < spatial; ++k) {
    const int64_t in = x.size(2 + k);
    if (!o.size().empty()) {
      detail::check(static_cast<int64_t>(o.size().size()) == spatial || o.size().size() == 1, "size shape must match input shape. Input is ",
                    spatial, "D, size is ", o.size().size());
      out_size.push_back(o.size()[o.size().size() == 1 ? 0 : static_cast<std::size_t>(k)]);
      scale.push_back(static_cast<double>(in) / static_cast<double>(out_size.back()));
    } else {
      detail::check(static_cast<int64_t>(o.scale_factor().size()) == spatial || o.scale_factor().size() == 1,
                    "scale_factor shape must match input shape. Input is ", spatial, "D, scale_factor is ", o.scale_factor().size());
      const double f = o.scale_factor()[o.scale_factor().size() == 1 ? 0 : static_cast<std::size_t>(k)];
      out_size.push_back(static_cast<int64_t>(std::floor(static_cast<double>(in) * f)));
      scale.push_back(1.0 / f);
    }
    detail::check(out_size.back() > 0, "interpolate: the output size must be positive");
  }
  const bool corners = o.align_corners().value_or(false);
  Tensor<T> out = x;
  for (int64_t k = 0; k < spatial; ++k) {
    const auto ks = static_cast<std::size_t>(k);
    const int64_t in = x.size(2 + k), n = out_size[ks];
    if (mode == M::Nearest || mode == M::NearestExact) {
      // In float, as PyTorch's nearest_idx (a double product can round the
      // other way); nearest-exact takes the pixel whose centre is nearest.
      const auto s = static_cast<float>(scale[ks]);
      Tensor<int64_t> index = Tensor<int64_t>::allocate({n});
      for (int64_t i = 0; i < n; ++i) {
        const float src = mode == M::Nearest ? static_cast<float>(i) * s
                                             : static_cast<float>((static_cast<double>(i) + 0.5) * static_cast<double>(s));
        index(i) = std::min<int64_t>(static_cast<int64_t>(std::floor(src)), in - 1);
      }
      out = index_select(out, 2 + k, detail::placed_on(index, x.device()));
    } else {
      const Tensor<T> matrix = mode == M::Area      ? detail::adaptive_average_matrix<T>(in, n)
                               : mode == M::Bicubic ? detail::cubic_interpolation_matrix<T>(in, n, corners, scale[ks])
                                                    : detail::linear_interpolation_matrix<T>(in, n, corners, scale[ks]);
      out = detail::resample_along(out, 2 + k, matrix);
    }
  }
  return out;
}

}  // namespace tsr::nn::functional

namespace tsr::detail {
// x's last three dims split into `split`, permuted by `order` (indices into
// split) and merged into `merged`; the leading dims stay as they are.
template <class T>
Tensor<T> rearrange_last3(const Tensor<T>& x, std::initializer_list<int64_t> split, std::initializer_list<int64_t> order,
                          std::initializer_list<int64_t> merged) {
  Shape lead(x.sizes().begin(), x.sizes().end() - 3), to_split = lead, permutation, out = lead;
  const auto b = static_cast<int64_t>(lead.size());
  for (int64_t k = 0; k < b; ++k) permutation.push_back(k);
  for (int64_t v : split) to_split.push_back(v);
  for (int64_t k : order) permutation.push_back(b + k);
  for (int64_t v : merged) out.push_back(v);
  return x.reshape(to_split).permute(permutation).reshape(out);
}
}  // namespace tsr::detail

namespace tsr::nn::functional {

// (*, C r^2, H, W) -> (*, C, H r, W r): each group of r^2 channels becomes
// r x r blocks of pixels (sub-pixel convolution's rearrangement).
template <detail::FloatElement T>
Tensor<T> pixel_shuffle(const Tensor<T>& x, int64_t upscale_factor) {
  const int64_t r = upscale_factor, nd = x.dim();
  detail::check(nd >= 3, "pixel_shuffle expects input to have at least 3 dimensions, but got input with ", nd, " dimension(s)");
  detail::check(r > 0, "pixel_shuffle expects a positive upscale_factor, but got ", r);
  const int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  detail::check(c % (r * r) == 0, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=",
                c, " is not divisible by ", r * r);
  // (C, r, r, H, W) -> (C, H, r, W, r)
  return detail::rearrange_last3(x, {c / (r * r), r, r, h, w}, {0, 3, 1, 4, 2}, {c / (r * r), h * r, w * r});
}
// The inverse: (*, C, H r, W r) -> (*, C r^2, H, W).
template <detail::FloatElement T>
Tensor<T> pixel_unshuffle(const Tensor<T>& x, int64_t downscale_factor) {
  const int64_t r = downscale_factor, nd = x.dim();
  detail::check(nd >= 3, "pixel_unshuffle expects input to have at least 3 dimensions, but got input with ", nd, " dimension(s)");
  detail::check(r > 0, "pixel_unshuffle expects a positive downscale_factor, but got ", r);
  const int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  detail::check(h % r == 0, "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=", h,
                " is not divisible by ", r);
  detail::check(w % r == 0, "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=", w,
                " is not divisible by ", r);
  // (C, H, r, W, r) -> (C, r, r, H, W)
  return detail::rearrange_last3(x, {c, h / r, r, w / r, r}, {0, 2, 4, 1, 3}, {c * r * r, h / r, w / r});
}

}  // namespace tsr::nn::functional

namespace tsr::detail {

// Max pooling of x's last D dims to a fixed output size, over PyTorch's
// adaptive windows (output cell i of n over an input of m: rows
// [i m / n, ceil((i + 1) m / n))), each window's first maximum in row-major
// order as PyTorch's kernels take it. `op` names the function in errors.
template <class T, std::size_t D>
Tensor<T> adaptive_max_pool(const Tensor<T>& x, const nn::ExpandingArray<D>& output_size, const char* op) {
  const auto nd = static_cast<int64_t>(D);
  check(x.dim() == nd + 1 || x.dim() == nd + 2, op, "(): Expected ", nd + 1, "D or ", nd + 2,
        "D tensor, but got: ", x.sizes());
  for (int64_t d = 1; d < x.dim(); ++d)
    check(x.size(d) > 0, op, "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
          x.sizes(), " with dimension ", d, " being empty");
  Shape out_shape = x.sizes();
  int64_t cells = 1;
  for (std::size_t d = 0; d < D; ++d) {
    out_shape[out_shape.size() - D + d] = output_size[d];
    cells *= output_size[d];
  }
  for (std::size_t d = 0; d < D; ++d)
    check(output_size[d] >= 0, "Trying to create tensor with negative dimension ", output_size[d], ": ", out_shape);
  if (cells == 0 || x.numel() == 0) return zeros<T>(out_shape, x.device());
  const Shape batch(x.sizes().begin(), x.sizes().end() - nd);
  std::vector<Tensor<T>> maxima;
  for (int64_t cell = 0; cell < cells; ++cell) {
    Tensor<T> window = x;
    for (int64_t d = nd - 1, rest = cell; d >= 0; rest /= output_size[d], --d) {
      const int64_t i = rest % output_size[d], n = output_size[d], m = x.size(d - nd);
      window = window.slice(d - nd, i * m / n, ((i + 1) * m + n - 1) / n);
    }
    Shape rows = batch;
    rows.push_back(window.numel() / numel_of(batch));
    maxima.push_back(std::get<0>(max(window.reshape(rows), -1)));
  }
  return stack(maxima, -1).view(out_shape);
}

}  // namespace tsr::detail

namespace tsr::nn::functional {

// Max pooling to a fixed output size, over PyTorch's adaptive windows.
template <detail::FloatElement T>
Tensor<T> adaptive_max_pool2d(const Tensor<T>& x, ExpandingArray<2> output_size) {
  return detail::adaptive_max_pool(x, output_size, "adaptive_max_pool2d");
}
template <detail::FloatElement T>
Tensor<T> adaptive_max_pool3d(const Tensor<T>& x, ExpandingArray<3> output_size) {
  return detail::adaptive_max_pool(x, output_size, "adaptive_max_pool3d");
}

// The 1-d adaptive poolings: (N, C, L) or (C, L) as one row of pixels.
template <detail::FloatElement T>
Tensor<T> adaptive_avg_pool1d(const Tensor<T>& x, int64_t output_size) {
  detail::check(x.dim() == 2 || x.dim() == 3, "adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got ", x.sizes());
  return adaptive_avg_pool2d(x.unsqueeze(-2), {1, output_size}).squeeze(-2);
}
template <detail::FloatElement T>
Tensor<T> adaptive_max_pool1d(const Tensor<T>& x, int64_t output_size) {
  detail::check(x.dim() == 2 || x.dim() == 3, "adaptive_max_pool1d(): Expected 2D or 3D tensor, but got ", x.sizes());
  return adaptive_max_pool2d(x.unsqueeze(-2), {1, output_size}).squeeze(-2);
}

// x1^T A x2 + b over the last dims: weight (out, in1, in2).
template <detail::FloatElement T>
Tensor<T> bilinear(const Tensor<T>& x1, const Tensor<T>& x2, const Tensor<T>& weight, const Tensor<T>& bias = {}) {
  detail::check(weight.dim() == 3, "bilinear(): weight must be 3-dimensional, got ", weight.sizes());
  detail::check(x1.size(-1) == weight.size(1), "bilinear(): input1 size does not match weight size: got ", x1.size(-1),
                " but expected ", weight.size(1));
  detail::check(x2.size(-1) == weight.size(2), "bilinear(): input2 size does not match weight size: got ", x2.size(-1),
                " but expected ", weight.size(2));
  Shape lead = x1.sizes();
  lead.resize(lead.size() - 1);
  const Tensor<T> a = x1.reshape({-1, x1.size(-1)}), b = x2.reshape({-1, x2.size(-1)});
  const Tensor<T> left = matmul(a, weight);                    // (out, N, in2)
  Tensor<T> y = sum(left * b.unsqueeze(0), -1).t();             // (N, out)
  if (bias.defined()) y = y + bias;
  lead.push_back(weight.size(0));
  return y.reshape(lead);
}

}  // namespace tsr::nn::functional

namespace tsr::nn {

// The padding modules: F::pad of the last D dims with one mode. Options as
// libtorch's: ZeroPad2dOptions(padding), ConstantPad1dOptions(padding,
// value), ReflectionPad2dOptions(padding), ...; one number pads every side,
// or {left, right} ({left, right, top, bottom} in 2-d, then front, back in
// 3-d).
template <int D>
struct PadOptions {
  PadOptions(ExpandingArray<2 * D> padding) : padding_(padding) {}  // NOLINT: implicit
  const ExpandingArray<2 * D>& padding() const { return padding_; }
 private:
  ExpandingArray<2 * D> padding_;
};
template <int D>
struct ConstantPadOptions {
  ConstantPadOptions(ExpandingArray<2 * D> padding, double value) : padding_(padding), value_(value) {}
  const ExpandingArray<2 * D>& padding() const { return padding_; }
  double value() const { return value_; }
 private:
  ExpandingArray<2 * D> padding_;
  double value_;
};
template <PadMode M, int D, bool Zero = false>
class PadImpl : public Module {
  static constexpr bool kValued = M == PadMode::Constant && !Zero;
  static_assert(M != PadMode::Circular, "PyTorch 1.13 has no circular padding module: F::pad with kCircular");

 public:
  using Options = std::conditional_t<kValued, ConstantPadOptions<D>, PadOptions<D>>;
  explicit PadImpl(const Options& options) : options(options) {}
  explicit PadImpl(ExpandingArray<2 * D> padding) requires(!kValued) : options(padding) {}
  PadImpl(ExpandingArray<2 * D> padding, double value) requires(kValued) : options(padding, value) {}
  std::string name() const override {
    const std::string dims = std::to_string(D) + "d";
    if constexpr (M == PadMode::Reflect) return "ReflectionPad" + dims;
    else if constexpr (M == PadMode::Replicate) return "ReplicationPad" + dims;
    else return (Zero ? "ZeroPad" : "ConstantPad") + dims;
  }
  std::string extra_repr() const override {
    if constexpr (kValued) return "padding=" + options.padding().repr() + ", value=" + detail::python_float_repr(options.value());
    else return options.padding().repr();
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    const auto& p = options.padding().values;
    auto o = PadFuncOptions(std::vector<int64_t>(p.begin(), p.end())).mode(M);
    if constexpr (kValued) o.value(options.value());
    return functional::pad(x, o);
  }
  Options options;
};
using ZeroPad2dImpl = PadImpl<PadMode::Constant, 2, true>;
using ZeroPad2d = ModuleHolder<ZeroPad2dImpl>;
using ZeroPad2dOptions = PadOptions<2>;
using ConstantPad1dImpl = PadImpl<PadMode::Constant, 1>;
using ConstantPad1d = ModuleHolder<ConstantPad1dImpl>;
using ConstantPad1dOptions = ConstantPadOptions<1>;
using ConstantPad2dImpl = PadImpl<PadMode::Constant, 2>;
using ConstantPad2d = ModuleHolder<ConstantPad2dImpl>;
using ConstantPad2dOptions = ConstantPadOptions<2>;
using ReflectionPad1dImpl = PadImpl<PadMode::Reflect, 1>;
using ReflectionPad1d = ModuleHolder<ReflectionPad1dImpl>;
using ReflectionPad1dOptions = PadOptions<1>;
using ReflectionPad2dImpl = PadImpl<PadMode::Reflect, 2>;
using ReflectionPad2d = ModuleHolder<ReflectionPad2dImpl>;
using ReflectionPad2dOptions = PadOptions<2>;
using ReplicationPad1dImpl = PadImpl<PadMode::Replicate, 1>;
using ReplicationPad1d = ModuleHolder<ReplicationPad1dImpl>;
using ReplicationPad1dOptions = PadOptions<1>;
using ReplicationPad2dImpl = PadImpl<PadMode::Replicate, 2>;
using ReplicationPad2d = ModuleHolder<ReplicationPad2dImpl>;
using ReplicationPad2dOptions = PadOptions<2>;
using ConstantPad3dImpl = PadImpl<PadMode::Constant, 3>;
using ConstantPad3d = ModuleHolder<ConstantPad3dImpl>;
using ConstantPad3dOptions = ConstantPadOptions<3>;
using ReflectionPad3dImpl = PadImpl<PadMode::Reflect, 3>;
using ReflectionPad3d = ModuleHolder<ReflectionPad3dImpl>;
using ReflectionPad3dOptions = PadOptions<3>;
using ReplicationPad3dImpl = PadImpl<PadMode::Replicate, 3>;
using ReplicationPad3d = ModuleHolder<ReplicationPad3dImpl>;
using ReplicationPad3dOptions = PadOptions<3>;

// libtorch: PixelShuffleOptions(upscale_factor), PixelUnshuffleOptions(downscale_factor).
struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t factor) : factor_(factor) {}  // NOLINT: implicit, nn::PixelShuffle(2)
  int64_t upscale_factor() const { return factor_; }
  int64_t downscale_factor() const { return factor_; }
 private:
  int64_t factor_;
};
using PixelUnshuffleOptions = PixelShuffleOptions;
template <bool Up>
class PixelShuffleImplBase : public Module {
 public:
  explicit PixelShuffleImplBase(const PixelShuffleOptions& options) : factor(options.upscale_factor()) {}
  std::string name() const override { return Up ? "PixelShuffle" : "PixelUnshuffle"; }
  std::string extra_repr() const override { return (Up ? "upscale_factor=" : "downscale_factor=") + std::to_string(factor); }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return Up ? functional::pixel_shuffle(x, factor) : functional::pixel_unshuffle(x, factor);
  }
  int64_t factor;
};
using PixelShuffleImpl = PixelShuffleImplBase<true>;
using PixelShuffle = ModuleHolder<PixelShuffleImpl>;
using PixelUnshuffleImpl = PixelShuffleImplBase<false>;
using PixelUnshuffle = ModuleHolder<PixelUnshuffleImpl>;

// Resizes its input as F::interpolate does with its options: size or
// scale_factor, mode, align_corners.
using UpsampleOptions = InterpolateFuncOptions;
class UpsampleImpl : public Module {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {}) : options(options) {}
  std::string name() const override { return "Upsample"; }
  // As PyTorch prints it: one number or a tuple, then the mode.
  std::string extra_repr() const override {
    auto listed = [](const auto& values, auto repr) {
      std::string s = values.size() == 1 ? "" : "(";
      for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + repr(values[i]);
      return values.size() == 1 ? s : s + ")";
    };
    const std::string what = options.scale_factor().empty()
                                 ? "size=" + listed(options.size(), [](int64_t v) { return std::to_string(v); })
                                 : "scale_factor=" + listed(options.scale_factor(), detail::python_float_repr);
    return what + ", mode=" + detail::interpolate_mode_name(options.mode());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return functional::interpolate(x, options);
  }
  UpsampleOptions options;
};
using Upsample = ModuleHolder<UpsampleImpl>;

struct BilinearOptions {
  BilinearOptions(int64_t in1, int64_t in2, int64_t out) : in1_(in1), in2_(in2), out_(out) {}
  BilinearOptions& bias(bool v) { bias_ = v; return *this; }
  int64_t in1_features() const { return in1_; }
  int64_t in2_features() const { return in2_; }
  int64_t out_features() const { return out_; }
  bool bias() const { return bias_; }

 private:
  int64_t in1_, in2_, out_;
  bool bias_ = true;
};
// Initialized as PyTorch's: weight and bias from U(-1/sqrt(in1), 1/sqrt(in1)).
class BilinearImpl : public Module {
 public:
  explicit BilinearImpl(const BilinearOptions& options)
      : options(options),
        weight(register_parameter("weight", empty<float>({options.out_features(), options.in1_features(), options.in2_features()}))),
        bias(register_parameter("bias", options.bias() ? AnyTensor(empty<float>({options.out_features()})) : AnyTensor())) {
    reset_parameters();
  }
  BilinearImpl(int64_t in1, int64_t in2, int64_t out) : BilinearImpl(BilinearOptions(in1, in2, out)) {}
  void reset_parameters() {
    const double bound = 1 / std::sqrt(static_cast<double>(options.in1_features()));
    init::uniform_(weight, -bound, bound);
    if (bias.defined()) init::uniform_(bias, -bound, bound);
  }
  std::string name() const override { return "Bilinear"; }
  std::string extra_repr() const override {
    return "in1_features=" + std::to_string(options.in1_features()) + ", in2_features=" + std::to_string(options.in2_features()) +
           ", out_features=" + std::to_string(options.out_features()) + ", bias=" + (bias.defined() ? "True" : "False");
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x1, const Tensor<T>& x2) const {
    return F::bilinear(x1, x2, weight.as<T>(), bias.defined() ? bias.as<T>() : Tensor<T>());
  }
  BilinearOptions options;
  AnyTensor& weight;
  AnyTensor& bias;
};
using Bilinear = ModuleHolder<BilinearImpl>;

// Adaptive max pooling over D = 2 or 3 spatial dims, as a module
// (AdaptiveMaxPool2d, AdaptiveMaxPool3d).
template <std::size_t D>
class AdaptiveMaxPoolImpl : public Module {
 public:
  explicit AdaptiveMaxPoolImpl(ExpandingArray<D> output_size) : output_size(output_size) {}
  std::string name() const override { return "AdaptiveMaxPool" + std::to_string(D) + "d"; }
  std::string extra_repr() const override {
    return "output_size=" + (output_size.all(output_size[0]) ? std::to_string(output_size[0]) : output_size.repr());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::adaptive_max_pool(x, output_size, D == 2 ? "adaptive_max_pool2d" : "adaptive_max_pool3d");
  }
  ExpandingArray<D> output_size;
};
using AdaptiveMaxPool2dImpl = AdaptiveMaxPoolImpl<2>;
using AdaptiveMaxPool3dImpl = AdaptiveMaxPoolImpl<3>;
using AdaptiveMaxPool3d = ModuleHolder<AdaptiveMaxPool3dImpl>;
using AdaptiveMaxPool2d = ModuleHolder<AdaptiveMaxPool2dImpl>;
template <bool Max>
class AdaptivePool1dImpl : public Module {
 public:
  explicit AdaptivePool1dImpl(int64_t output_size) : output_size(output_size) {}
  std::string name() const override { return Max ? "AdaptiveMaxPool1d" : "AdaptiveAvgPool1d"; }
  std::string extra_repr() const override { return "output_size=" + std::to_string(output_size); }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return Max ? F::adaptive_max_pool1d(x, output_size) : F::adaptive_avg_pool1d(x, output_size);
  }
  int64_t output_size;
};
using AdaptiveAvgPool1dImpl = AdaptivePool1dImpl<false>;
using AdaptiveAvgPool1d = ModuleHolder<AdaptiveAvgPool1dImpl>;
using AdaptiveMaxPool1dImpl = AdaptivePool1dImpl<true>;
using AdaptiveMaxPool1d = ModuleHolder<AdaptiveMaxPool1dImpl>;

}  // namespace tsr::nn
