// Convolutions and pooling.
//
// Both rest on one primitive, the patch matrix (im2col): for every output
// position, the input values under the kernel window, one column each.
// A convolution is then a matrix product of the weights with that matrix
// (our packed GEMM), max pooling a max over its rows and average pooling a
// sum; their backward passes go through the matrix product's and the
// reductions' own rules and the patch matrix's adjoint (col2im, which sums
// each column back into the input). im2col and col2im are each other's
// backward, so derivatives of any order work.
#pragma once
#include <array>
#include <limits>
#include <string>

#include "holder.hpp"
#include "init.hpp"

namespace tsr::autograd::tag {
struct Im2col;
struct Col2im;
}  // namespace tsr::autograd::tag

namespace tsr::detail {

// The geometry of a 2-D sliding window over (H, W).
struct Window2d {
  int64_t kh, kw;                  // kernel
  int64_t sh, sw;                  // stride
  int64_t top, left;               // padding before (after is implied by the output size)
  int64_t dh, dw;                  // dilation
  int64_t h, w;                    // input size
  int64_t oh, ow;                  // output size
};

// x (N, C, H, W) -> (C kh kw, N oh ow): one row per kernel tap, one column
// per output position of every image, so that a convolution of the whole
// batch is one matrix product. Window positions outside the input read
// `fill` (0 for convolutions, -inf for max pooling).
template <class T>
Tensor<T> im2col(const Tensor<T>& x, const Window2d& g, T fill);
// The adjoint: cols (C kh kw, N oh ow) summed into an (N, C, H, W) input;
// entries falling outside the input are dropped.
template <class T>
Tensor<T> col2im(const Tensor<T>& cols, const Window2d& g, int64_t channels);

// Calls f(row, l, at, count, step) for every run of one image's patch
// matrix: entries l .. l + count - 1 of row `row` (row = (c kh + i) kw + j,
// l = oy ow + ox) read the input at at, at + step, ...; at = -1 for a run
// outside the input. A row of the output splits into at most three runs
// (left padding, inside, right padding), so the inner loops are plain
// strided copies.
template <class F>
void for_each_patch_run(const Window2d& g, int64_t channels, F&& f) {
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t row = (c * g.kh + i) * g.kw + j;
        const int64_t x0 = j * g.dw - g.left;  // input column of ox = 0
        // The ox whose input column x0 + ox sw lies in [0, w).
        const int64_t lo = x0 >= 0 ? 0 : std::min(g.ow, (-x0 + g.sw - 1) / g.sw);
        const int64_t hi = x0 >= g.w ? lo : std::max(lo, std::min(g.ow, (g.w - x0 + g.sw - 1) / g.sw));
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t y = oy * g.sh - g.top + i * g.dh, l = oy * g.ow;
          if (y < 0 || y >= g.h) {
            f(row, l, int64_t{-1}, g.ow, int64_t{0});
            continue;
          }
          if (lo > 0) f(row, l, int64_t{-1}, lo, int64_t{0});
          if (hi > lo) f(row, l + lo, (c * g.h + y) * g.w + x0 + lo * g.sw, hi - lo, g.sw);
          if (hi < g.ow) f(row, l + hi, int64_t{-1}, g.ow - hi, int64_t{0});
        }
      }
}

template <class T>
Tensor<T> im2col(const Tensor<T>& x, const Window2d& g, T fill) {
  const Tensor<T> in = x.contiguous();
  const int64_t n = x.size(0), c = x.size(1), rows = c * g.kh * g.kw, cols = g.oh * g.ow, width = n * cols;
  auto out = Tensor<T>::allocate({rows, width});
  const T* src = in.data_ptr();
  T* dst = out.data_ptr();
  ThreadPool::instance().parallel_for(n, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const T* s = src + b * c * g.h * g.w;
      T* d = dst + b * cols;
      for_each_patch_run(g, c, [&](int64_t row, int64_t l, int64_t at, int64_t count, int64_t step) {
        T* o = d + row * width + l;
        if (at < 0) std::fill(o, o + count, fill);
        else for (int64_t k = 0; k < count; ++k) o[k] = s[at + k * step];
      });
    }
  });
  record_op<autograd::tag::Im2col>(out, x, g);
  return out;
}

template <class T>
Tensor<T> col2im(const Tensor<T>& cols_in, const Window2d& g, int64_t channels) {
  const Tensor<T> in = cols_in.contiguous();
  const int64_t width = in.size(1), cols = g.oh * g.ow, n = width / cols;
  auto out = zeros<T>({n, channels, g.h, g.w});
  const T* src = in.data_ptr();
  T* dst = out.data_ptr();
  ThreadPool::instance().parallel_for(n, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const T* s = src + b * cols;
      T* d = dst + b * channels * g.h * g.w;
      for_each_patch_run(g, channels, [&](int64_t row, int64_t l, int64_t at, int64_t count, int64_t step) {
        if (at < 0) return;
        const T* v = s + row * width + l;
        for (int64_t k = 0; k < count; ++k) d[at + k * step] += v[k];
      });
    }
  });
  record_op<autograd::tag::Col2im>(out, cols_in, g, channels);
  return out;
}

}  // namespace tsr::detail

namespace tsr::autograd {
template <>
struct OpRule<tag::Im2col> {
  template <class T>
  static void record(const Tensor<T>& out, const Tensor<T>& x, const detail::Window2d& g) {
    struct Rule {
      detail::Window2d g;
      int64_t channels;
      std::vector<GradRef> backward(const Tensor<T>& grad) const { return {detail::col2im(grad, g, channels).impl_ptr()}; }
    };
    set_rule(out, "Im2ColBackward0", Rule{g, x.size(1)}, {detail::gradient_edge(x)});
  }
};
template <>
struct OpRule<tag::Col2im> {
  template <class T>
  static void record(const Tensor<T>& out, const Tensor<T>& cols, const detail::Window2d& g, int64_t) {
    struct Rule {
      detail::Window2d g;
      std::vector<GradRef> backward(const Tensor<T>& grad) const { return {detail::im2col(grad, g, T(0)).impl_ptr()}; }
    };
    set_rule(out, "Col2ImBackward0", Rule{g}, {detail::gradient_edge(cols)});
  }
};
}  // namespace tsr::autograd

namespace tsr::nn {

// A size per spatial dim, given as one number for all or one each:
// kernel_size(5) or kernel_size({3, 5}) (libtorch's ExpandingArray).
template <std::size_t D>
struct ExpandingArray {
  ExpandingArray(int64_t v) { values.fill(v); }  // NOLINT: implicit, as libtorch's
  ExpandingArray(std::initializer_list<int64_t> list) {
    detail::check(list.size() == D, "expected ", D, " values, got ", list.size());
    std::copy(list.begin(), list.end(), values.begin());
  }
  int64_t operator[](std::size_t i) const { return values[i]; }
  bool all(int64_t v) const {
    for (int64_t x : values)
      if (x != v) return false;
    return true;
  }
  // Python's tuple repr: (5, 5), or (5,) for one.
  std::string repr() const {
    std::string s = "(";
    for (std::size_t i = 0; i < D; ++i) s += (i ? ", " : "") + std::to_string(values[i]);
    return s + (D == 1 ? ",)" : ")");
  }
  std::array<int64_t, D> values;
};

// Padding "same" (the output as large as the input, for stride 1) and
// "valid" (none): libtorch's torch::kSame and torch::kValid.
enum class PaddingMode { Same, Valid };

}  // namespace tsr::nn

namespace tsr {
inline constexpr auto kSame = nn::PaddingMode::Same;
inline constexpr auto kValid = nn::PaddingMode::Valid;
}  // namespace tsr

namespace tsr::nn {

template <std::size_t D>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  ConvOptions& stride(ExpandingArray<D> v) { stride_ = v; return *this; }
  ConvOptions& padding(ExpandingArray<D> v) { padding_ = v; same_ = false; named_padding_ = false; return *this; }
  ConvOptions& padding(PaddingMode m) {
    named_padding_ = true;
    same_ = m == PaddingMode::Same;
    padding_ = ExpandingArray<D>(0);
    return *this;
  }
  ConvOptions& dilation(ExpandingArray<D> v) { dilation_ = v; return *this; }
  ConvOptions& groups(int64_t v) { groups_ = v; return *this; }
  ConvOptions& bias(bool v) { bias_ = v; return *this; }
  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  const ExpandingArray<D>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<D>& stride() const { return stride_; }
  const ExpandingArray<D>& padding() const { return padding_; }
  const ExpandingArray<D>& dilation() const { return dilation_; }
  bool padding_same() const { return same_; }
  // padding was given as kSame or kValid (printed as a word).
  bool padding_named() const { return named_padding_; }
  int64_t groups() const { return groups_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_channels_, out_channels_;
  ExpandingArray<D> kernel_size_, stride_ = 1, padding_ = 0, dilation_ = 1;
  bool same_ = false, named_padding_ = false;
  int64_t groups_ = 1;
  bool bias_ = true;
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;

namespace functional {

// What F::conv2d takes besides its tensors.
struct Conv2dFuncOptions {
  Conv2dFuncOptions& stride(ExpandingArray<2> v) { stride_ = v; return *this; }
  Conv2dFuncOptions& padding(ExpandingArray<2> v) { padding_ = v; same_ = false; return *this; }
  Conv2dFuncOptions& padding(PaddingMode m) { same_ = m == PaddingMode::Same; padding_ = 0; return *this; }
  Conv2dFuncOptions& dilation(ExpandingArray<2> v) { dilation_ = v; return *this; }
  Conv2dFuncOptions& groups(int64_t v) { groups_ = v; return *this; }
  ExpandingArray<2> stride_ = 1, padding_ = 0, dilation_ = 1;
  bool same_ = false;
  int64_t groups_ = 1;
};

// 2-D convolution (cross-correlation, as PyTorch's): x (N, C, H, W) or
// (C, H, W), weight (O, C / groups, kh, kw), bias (O) or undefined.
template <detail::FloatElement T>
Tensor<T> conv2d(const Tensor<T>& x_in, const Tensor<T>& weight, const Tensor<T>& bias = {},
                 const Conv2dFuncOptions& o = {}) {
  detail::check(x_in.dim() == 3 || x_in.dim() == 4, "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: ",
                x_in.sizes());
  const bool unbatched = x_in.dim() == 3;
  const Tensor<T> x = unbatched ? x_in.unsqueeze(0) : x_in;
  detail::check(weight.dim() == 4, "weight should have 4 dimensions, got ", weight.sizes());
  const int64_t n = x.size(0), c = x.size(1), out_ch = weight.size(0), groups = o.groups_;
  detail::check(groups > 0, "non-positive groups is not supported");
  detail::check(c == weight.size(1) * groups, "Given groups=", groups, ", weight of size ", weight.sizes(),
                ", expected input", x_in.sizes(), " to have ", weight.size(1) * groups, " channels, but got ", c,
                " channels instead");
  detail::check(out_ch % groups == 0, "out_channels must be divisible by groups");
  detail::Window2d g{weight.size(2), weight.size(3), o.stride_[0], o.stride_[1], o.padding_[0], o.padding_[1],
                     o.dilation_[0], o.dilation_[1], x.size(2), x.size(3), 0, 0};
  detail::check(g.sh > 0 && g.sw > 0, "non-positive stride is not supported");
  detail::check(g.dh > 0 && g.dw > 0, "dilation should be greater than zero");
  int64_t bottom = g.top, right = g.left;
  if (o.same_) {
    detail::check(g.sh == 1 && g.sw == 1, "padding='same' is not supported for strided convolutions");
    const int64_t th = g.dh * (g.kh - 1), tw = g.dw * (g.kw - 1);
    g.top = th / 2, bottom = th - g.top, g.left = tw / 2, right = tw - g.left;  // extra on the far side, as PyTorch
  }
  const int64_t span_h = g.h + g.top + bottom - g.dh * (g.kh - 1), span_w = g.w + g.left + right - g.dw * (g.kw - 1);
  detail::check(span_h > 0 && span_w > 0, "Calculated padded input size per channel: (", g.h + g.top + bottom, " x ",
                g.w + g.left + right, "). Kernel size: (", g.dh * (g.kh - 1) + 1, " x ", g.dw * (g.kw - 1) + 1,
                "). Kernel size can't be greater than actual input size");
  g.oh = (span_h - 1) / g.sh + 1;
  g.ow = (span_w - 1) / g.sw + 1;
  const Tensor<T> cols = detail::im2col(x, g, T(0));  // (C kh kw, N L)
  const int64_t k = (c / groups) * g.kh * g.kw, l = g.oh * g.ow;
  // One product for the whole batch (per group): (O, K) x (K, N L).
  Tensor<T> out;
  if (groups == 1) out = mm(weight.reshape({out_ch, k}), cols);
  else out = matmul(weight.reshape({groups, out_ch / groups, k}), cols.view({groups, k, n * l})).reshape({out_ch, n * l});
  const Tensor<T> nchw = out.view({out_ch, n, g.oh, g.ow}).permute({1, 0, 2, 3});
  if (bias.defined()) {  // the bias added in the pass that lays the result out as (N, O, H, W)
    detail::check(bias.dim() == 1 && bias.numel() == out_ch, "bias should have ", out_ch, " elements, got ", bias.sizes());
    out = nchw + bias.view({1, out_ch, 1, 1});
  } else {
    out = nchw.contiguous();
  }
  return unbatched ? out.squeeze(0) : out;
}

// 1-D convolution: x (N, C, L) or (C, L), weight (O, C / groups, k); the 2-D
// one over a height of 1.
template <detail::FloatElement T>
Tensor<T> conv1d(const Tensor<T>& x, const Tensor<T>& weight, const Tensor<T>& bias = {}, int64_t stride = 1,
                 int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1, bool same = false) {
  detail::check(x.dim() == 2 || x.dim() == 3, "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: ",
                x.sizes());
  detail::check(weight.dim() == 3, "weight should have 3 dimensions, got ", weight.sizes());
  auto o = Conv2dFuncOptions().stride({1, stride}).padding({0, padding}).dilation({1, dilation}).groups(groups);
  if (same) o.padding(PaddingMode::Same);
  const int64_t spatial = x.dim() - 1;
  return conv2d(x.unsqueeze(spatial), weight.unsqueeze(2), bias, o).squeeze(spatial);
}

// What F::conv_transpose2d takes besides its tensors.
struct ConvTranspose2dFuncOptions {
  ConvTranspose2dFuncOptions& stride(ExpandingArray<2> v) { stride_ = v; return *this; }
  ConvTranspose2dFuncOptions& padding(ExpandingArray<2> v) { padding_ = v; return *this; }
  ConvTranspose2dFuncOptions& output_padding(ExpandingArray<2> v) { output_padding_ = v; return *this; }
  ConvTranspose2dFuncOptions& groups(int64_t v) { groups_ = v; return *this; }
  ConvTranspose2dFuncOptions& dilation(ExpandingArray<2> v) { dilation_ = v; return *this; }
  ExpandingArray<2> stride_ = 1, padding_ = 0, output_padding_ = 0, dilation_ = 1;
  int64_t groups_ = 1;
};

// The transposed convolution (the adjoint of conv2d with the same options):
// x (N, C, H, W) or (C, H, W), weight (C, O / groups, kh, kw). Every input
// pixel scatters its kernel-weighted copy into the output: one product
// W^T x for the whole batch gives every scattered tap, and col2im sums them
// into place. The output is (H - 1) stride - 2 padding + dilation (k - 1) +
// output_padding + 1 high (and the same across).
template <detail::FloatElement T>
Tensor<T> conv_transpose2d(const Tensor<T>& x_in, const Tensor<T>& weight, const Tensor<T>& bias = {},
                           const ConvTranspose2dFuncOptions& o = {}) {
  detail::check(x_in.dim() == 3 || x_in.dim() == 4,
                "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of size: ", x_in.sizes());
  const bool unbatched = x_in.dim() == 3;
  const Tensor<T> x = unbatched ? x_in.unsqueeze(0) : x_in;
  detail::check(weight.dim() == 4, "weight should have 4 dimensions, got ", weight.sizes());
  const int64_t n = x.size(0), c = x.size(1), groups = o.groups_;
  detail::check(groups > 0, "non-positive groups is not supported");
  detail::check(c == weight.size(0) && c % groups == 0, "Given transposed=1, weight of size ", weight.sizes(),
                ", expected input", x_in.sizes(), " to have ", weight.size(0), " channels, but got ", c, " channels instead");
  const int64_t out_ch = weight.size(1) * groups, h = x.size(2), w = x.size(3);
  for (std::size_t i = 0; i < 2; ++i) {
    detail::check(o.stride_[i] > 0, "non-positive stride is not supported");
    detail::check(o.dilation_[i] > 0, "dilation should be greater than zero");
  }
  detail::check(o.output_padding_[0] < std::max(o.stride_[0], o.dilation_[0]) &&
                    o.output_padding_[1] < std::max(o.stride_[1], o.dilation_[1]),
                "output padding must be smaller than either stride or dilation, but got output_padding_height: ",
                o.output_padding_[0], " output_padding_width: ", o.output_padding_[1], " stride_height: ", o.stride_[0],
                " stride_width: ", o.stride_[1], " dilation_height: ", o.dilation_[0], " dilation_width: ", o.dilation_[1]);
  // The window of the forward convolution this one is the adjoint of: its
  // input is our output, its output positions our input pixels.
  detail::Window2d g{weight.size(2), weight.size(3), o.stride_[0], o.stride_[1], o.padding_[0], o.padding_[1],
                     o.dilation_[0], o.dilation_[1], 0, 0, h, w};
  g.h = (h - 1) * g.sh - 2 * g.top + g.dh * (g.kh - 1) + o.output_padding_[0] + 1;
  g.w = (w - 1) * g.sw - 2 * g.left + g.dw * (g.kw - 1) + o.output_padding_[1] + 1;
  detail::check(g.h > 0 && g.w > 0, "Given input size per channel: (", h, " x ", w,
                "). Calculated output size per channel: (", g.h, " x ", g.w, "). Output size is too small");
  const int64_t k = weight.size(1) * g.kh * g.kw;
  const Tensor<T> pixels = x.permute({1, 0, 2, 3}).reshape({c, n * h * w});  // (C, N H W)
  Tensor<T> taps;                                                               // (O kh kw, N H W)
  if (groups == 1) taps = mm(weight.reshape({c, k}).t(), pixels);
  else
    taps = matmul(weight.reshape({groups, c / groups, k}).transpose(1, 2), pixels.view({groups, c / groups, n * h * w}))
               .reshape({groups * k, n * h * w});
  Tensor<T> out = detail::col2im(taps, g, out_ch);
  if (bias.defined()) {
    detail::check(bias.dim() == 1 && bias.numel() == out_ch, "bias should have ", out_ch, " elements, got ", bias.sizes());
    out = out + bias.view({1, out_ch, 1, 1});
  }
  return unbatched ? out.squeeze(0) : out;
}

}  // namespace functional
namespace F = functional;

// Conv1d and Conv2d: weight (O, C / groups, k...), initialized as PyTorch's
// (kaiming_uniform_(a = sqrt(5)) and a bias from U(+-1/sqrt(fan_in))).
template <std::size_t D>
class ConvImpl : public Module {
 public:
  explicit ConvImpl(const ConvOptions<D>& options)
      : options(options),
        weight(register_parameter("weight", empty<float>(weight_shape(options)))),
        bias(register_parameter("bias", options.bias() ? AnyTensor(empty<float>({options.out_channels()})) : AnyTensor())) {
    reset_parameters();
  }
  ConvImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvImpl(ConvOptions<D>(in_channels, out_channels, kernel_size)) {}
  void reset_parameters() { detail::init_affine(weight, bias); }
  std::string name() const override { return D == 1 ? "Conv1d" : "Conv2d"; }
  std::string extra_repr() const override {
    std::string s = std::to_string(options.in_channels()) + ", " + std::to_string(options.out_channels()) +
                    ", kernel_size=" + options.kernel_size().repr() + ", stride=" + options.stride().repr();
    if (options.padding_named()) s += std::string(", padding=") + (options.padding_same() ? "same" : "valid");
    else if (!options.padding().all(0)) s += ", padding=" + options.padding().repr();
    if (!options.dilation().all(1)) s += ", dilation=" + options.dilation().repr();
    if (options.groups() != 1) s += ", groups=" + std::to_string(options.groups());
    if (!bias.defined()) s += ", bias=False";
    return s;
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    const Tensor<T> b = bias.defined() ? bias.as<T>() : Tensor<T>();
    if constexpr (D == 1) {
      return F::conv1d(x, weight.as<T>(), b, options.stride()[0], options.padding()[0], options.dilation()[0],
                       options.groups(), options.padding_same());
    } else {
      auto o = F::Conv2dFuncOptions().stride(options.stride()).padding(options.padding()).dilation(options.dilation()).groups(
          options.groups());
      if (options.padding_same()) o.padding(PaddingMode::Same);
      return F::conv2d(x, weight.as<T>(), b, o);
    }
  }

  ConvOptions<D> options;
  AnyTensor& weight;
  AnyTensor& bias;

 private:
  static Shape weight_shape(const ConvOptions<D>& o) {
    detail::check(o.in_channels() > 0 && o.out_channels() > 0, "in_channels and out_channels must be positive");
    detail::check(o.groups() > 0, "groups must be a positive integer");
    detail::check(o.in_channels() % o.groups() == 0, "in_channels must be divisible by groups");
    detail::check(o.out_channels() % o.groups() == 0, "out_channels must be divisible by groups");
    Shape s{o.out_channels(), o.in_channels() / o.groups()};
    for (std::size_t i = 0; i < D; ++i) s.push_back(o.kernel_size()[i]);
    return s;
  }
};
using Conv1dImpl = ConvImpl<1>;
using Conv2dImpl = ConvImpl<2>;
using Conv1d = ModuleHolder<Conv1dImpl>;
using Conv2d = ModuleHolder<Conv2dImpl>;

// ----- ConvTranspose2d -------------------------------------------------------------
struct ConvTranspose2dOptions {
  ConvTranspose2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  ConvTranspose2dOptions& stride(ExpandingArray<2> v) { stride_ = v; return *this; }
  ConvTranspose2dOptions& padding(ExpandingArray<2> v) { padding_ = v; return *this; }
  ConvTranspose2dOptions& output_padding(ExpandingArray<2> v) { output_padding_ = v; return *this; }
  ConvTranspose2dOptions& groups(int64_t v) { groups_ = v; return *this; }
  ConvTranspose2dOptions& bias(bool v) { bias_ = v; return *this; }
  ConvTranspose2dOptions& dilation(ExpandingArray<2> v) { dilation_ = v; return *this; }
  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  const ExpandingArray<2>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<2>& stride() const { return stride_; }
  const ExpandingArray<2>& padding() const { return padding_; }
  const ExpandingArray<2>& output_padding() const { return output_padding_; }
  const ExpandingArray<2>& dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_channels_, out_channels_;
  ExpandingArray<2> kernel_size_, stride_ = 1, padding_ = 0, output_padding_ = 0, dilation_ = 1;
  int64_t groups_ = 1;
  bool bias_ = true;
};

// weight (C, O / groups, kh, kw), initialized as PyTorch's (the fan-in of
// that shape, i.e. O / groups kh kw, sets both bounds).
class ConvTranspose2dImpl : public Module {
 public:
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options)
      : options(options),
        weight(register_parameter("weight", empty<float>(weight_shape(options)))),
        bias(register_parameter("bias", options.bias() ? AnyTensor(empty<float>({options.out_channels()})) : AnyTensor())) {
    reset_parameters();
  }
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
  void reset_parameters() { detail::init_affine(weight, bias); }
  std::string name() const override { return "ConvTranspose2d"; }
  std::string extra_repr() const override {
    std::string s = std::to_string(options.in_channels()) + ", " + std::to_string(options.out_channels()) +
                    ", kernel_size=" + options.kernel_size().repr() + ", stride=" + options.stride().repr();
    if (!options.padding().all(0)) s += ", padding=" + options.padding().repr();
    if (!options.dilation().all(1)) s += ", dilation=" + options.dilation().repr();
    if (!options.output_padding().all(0)) s += ", output_padding=" + options.output_padding().repr();
    if (options.groups() != 1) s += ", groups=" + std::to_string(options.groups());
    if (!bias.defined()) s += ", bias=False";
    return s;
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return F::conv_transpose2d(x, weight.as<T>(), bias.defined() ? bias.as<T>() : Tensor<T>(),
                               F::ConvTranspose2dFuncOptions()
                                   .stride(options.stride())
                                   .padding(options.padding())
                                   .output_padding(options.output_padding())
                                   .groups(options.groups())
                                   .dilation(options.dilation()));
  }

  ConvTranspose2dOptions options;
  AnyTensor& weight;
  AnyTensor& bias;

 private:
  static Shape weight_shape(const ConvTranspose2dOptions& o) {
    detail::check(o.in_channels() > 0 && o.out_channels() > 0, "in_channels and out_channels must be positive");
    detail::check(o.groups() > 0, "groups must be a positive integer");
    detail::check(o.in_channels() % o.groups() == 0, "in_channels must be divisible by groups");
    detail::check(o.out_channels() % o.groups() == 0, "out_channels must be divisible by groups");
    return {o.in_channels(), o.out_channels() / o.groups(), o.kernel_size()[0], o.kernel_size()[1]};
  }
};
using ConvTranspose2d = ModuleHolder<ConvTranspose2dImpl>;

// ----- pooling ------------------------------------------------------------------
template <std::size_t D>
struct PoolOptions {
  PoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT: implicit
  PoolOptions& stride(ExpandingArray<D> v) { stride_ = v; return *this; }
  PoolOptions& padding(ExpandingArray<D> v) { padding_ = v; return *this; }
  PoolOptions& dilation(ExpandingArray<D> v) { dilation_ = v; return *this; }
  PoolOptions& ceil_mode(bool v) { ceil_mode_ = v; return *this; }
  PoolOptions& count_include_pad(bool v) { count_include_pad_ = v; return *this; }
  const ExpandingArray<D>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<D>& stride() const { return stride_; }
  const ExpandingArray<D>& padding() const { return padding_; }
  const ExpandingArray<D>& dilation() const { return dilation_; }
  bool ceil_mode() const { return ceil_mode_; }
  bool count_include_pad() const { return count_include_pad_; }

 private:
  ExpandingArray<D> kernel_size_, stride_, padding_ = 0, dilation_ = 1;
  bool ceil_mode_ = false, count_include_pad_ = true;
};
using MaxPool1dOptions = PoolOptions<1>;
using MaxPool2dOptions = PoolOptions<2>;
using AvgPool1dOptions = PoolOptions<1>;
using AvgPool2dOptions = PoolOptions<2>;

}  // namespace tsr::nn

namespace tsr::detail {
// PyTorch's pooling output size: floor or ceil of the window count, a last
// window starting in the right padding dropped.
inline int64_t pool_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (k - 1) - 1;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}
// The window of a 2-D pooling (inputs of rank 3 or 4), checked as PyTorch does.
template <class T>
Window2d pool_window(const Tensor<T>& x, const nn::PoolOptions<2>& o, const char* name) {
  check(x.dim() == 3 || x.dim() == 4, name, ": Expected 3D or 4D (batch mode) tensor for input, got ", x.sizes());
  const int64_t h = x.size(-2), w = x.size(-1);
  for (int i = 0; i < 2; ++i) {
    check(o.kernel_size()[i] > 0, name, ": kernel_size must be greater than zero");
    check(o.stride()[i] > 0, name, ": stride must be greater than zero");
    check(o.dilation()[i] > 0, name, ": dilation must be greater than zero");
    check(o.padding()[i] <= o.kernel_size()[i] / 2, "pad should be at most half of effective kernel size, but got pad=",
          o.padding()[i], ", kernel_size=", o.kernel_size()[i], " and dilation=", o.dilation()[i]);
  }
  Window2d g{o.kernel_size()[0], o.kernel_size()[1], o.stride()[0], o.stride()[1], o.padding()[0], o.padding()[1],
             o.dilation()[0], o.dilation()[1], h, w, 0, 0};
  g.oh = pool_output_size(h, g.kh, g.top, g.sh, g.dh, o.ceil_mode());
  g.ow = pool_output_size(w, g.kw, g.left, g.sw, g.dw, o.ceil_mode());
  check(g.oh > 0 && g.ow > 0, "Given input size: (", x.size(-3), "x", h, "x", w, "). Calculated output size: (", x.size(-3),
        "x", g.oh, "x", g.ow, "). Output size is too small");
  return g;
}
}  // namespace tsr::detail

namespace tsr::nn {
namespace functional {

// Max over each window (NaN wins, as in PyTorch); the gradient goes to the
// window's largest element.
template <detail::FloatElement T>
Tensor<T> max_pool2d(const Tensor<T>& x, const MaxPool2dOptions& o) {
  const detail::Window2d g = detail::pool_window(x, o, "max_pool2d");
  const bool unbatched = x.dim() == 3;
  const int64_t n = unbatched ? 1 : x.size(0), c = x.size(-3);
  const Tensor<T> planes = x.reshape({n * c, 1, g.h, g.w});
  const Tensor<T> cols = detail::im2col(planes, g, -std::numeric_limits<T>::infinity());  // (kh kw, N C L)
  Tensor<T> out = std::get<0>(max(cols, 0));
  return unbatched ? out.view({c, g.oh, g.ow}) : out.view({n, c, g.oh, g.ow});
}
// Mean over each window; the divisor counts the padding (count_include_pad)
// or only the input's elements, as PyTorch's.
template <detail::FloatElement T>
Tensor<T> avg_pool2d(const Tensor<T>& x, const AvgPool2dOptions& o) {
  detail::check(o.dilation().all(1), "avg_pool2d has no dilation");
  const detail::Window2d g = detail::pool_window(x, o, "avg_pool2d");
  const bool unbatched = x.dim() == 3;
  const int64_t n = unbatched ? 1 : x.size(0), c = x.size(-3);
  const Tensor<T> planes = x.reshape({n * c, 1, g.h, g.w});
  const Tensor<T> sums = sum(detail::im2col(planes, g, T(0)), 0).view({n * c, g.oh * g.ow});
  // The divisor of each output position (PyTorch's avg_pool2d kernel).
  auto divisor = Tensor<T>::allocate({g.oh * g.ow});
  T* d = divisor.data_ptr();
  for (int64_t oy = 0; oy < g.oh; ++oy)
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      int64_t y0 = oy * g.sh - g.top, x0 = ox * g.sw - g.left;
      int64_t y1 = std::min(y0 + g.kh, g.h + g.top), x1 = std::min(x0 + g.kw, g.w + g.left);
      const int64_t pool = (y1 - y0) * (x1 - x0);
      y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
      y1 = std::min(y1, g.h), x1 = std::min(x1, g.w);
      d[oy * g.ow + ox] = T(o.count_include_pad() ? pool : (y1 - y0) * (x1 - x0));
    }
  Tensor<T> out = sums / divisor;
  return unbatched ? out.view({c, g.oh, g.ow}) : out.view({n, c, g.oh, g.ow});
}
template <detail::FloatElement T>
Tensor<T> max_pool1d(const Tensor<T>& x, const MaxPool1dOptions& o) {
  detail::check(x.dim() == 2 || x.dim() == 3, "max_pool1d: Expected 2D or 3D (batch mode) tensor for input, got ", x.sizes());
  auto o2 = MaxPool2dOptions({1, o.kernel_size()[0]}).stride({1, o.stride()[0]}).padding({0, o.padding()[0]}).dilation(
      {1, o.dilation()[0]}).ceil_mode(o.ceil_mode());
  return max_pool2d(x.unsqueeze(-2), o2).squeeze(-2);
}
template <detail::FloatElement T>
Tensor<T> avg_pool1d(const Tensor<T>& x, const AvgPool1dOptions& o) {
  detail::check(x.dim() == 2 || x.dim() == 3, "avg_pool1d: Expected 2D or 3D (batch mode) tensor for input, got ", x.sizes());
  auto o2 = AvgPool2dOptions({1, o.kernel_size()[0]}).stride({1, o.stride()[0]}).padding({0, o.padding()[0]}).ceil_mode(
      o.ceil_mode()).count_include_pad(o.count_include_pad());
  return avg_pool2d(x.unsqueeze(-2), o2).squeeze(-2);
}

// Average pooling to a fixed output size: window i covers
// [floor(i in / out), ceil((i + 1) in / out)). Separable, so it is two
// products with averaging matrices: A_h x A_w^T.
template <detail::FloatElement T>
Tensor<T> adaptive_avg_pool2d(const Tensor<T>& x, ExpandingArray<2> output_size) {
  detail::check(x.dim() == 3 || x.dim() == 4, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ", x.sizes());
  auto averaging = [](int64_t in, int64_t out) {
    detail::check(out > 0, "adaptive_avg_pool2d: output size must be positive");
    auto a = zeros<T>({out, in});
    for (int64_t i = 0; i < out; ++i) {
      const int64_t start = (i * in) / out, end = ((i + 1) * in + out - 1) / out;
      for (int64_t j = start; j < end; ++j) a(i, j) = T(1) / T(end - start);
    }
    return a;
  };
  const Tensor<T> ah = averaging(x.size(-2), output_size[0]), aw = averaging(x.size(-1), output_size[1]);
  return matmul(matmul(ah, x), aw.t());
}

}  // namespace functional

template <std::size_t D, bool Max>
class PoolImpl : public Module {
 public:
  explicit PoolImpl(const PoolOptions<D>& options) : options(options) {}
  explicit PoolImpl(ExpandingArray<D> kernel_size) : options(kernel_size) {}
  std::string name() const override {
    return std::string(Max ? "MaxPool" : "AvgPool") + (D == 1 ? "1d" : "2d");
  }
  // PyTorch prints options as it stores them: a number where one was given
  // (here: where all dims agree), a tuple otherwise; AvgPool1d always
  // stores tuples, and the average pools print no dilation or ceil_mode.
  std::string extra_repr() const override {
    auto v = [](const ExpandingArray<D>& a) {
      return (!Max && D == 1) || a[0] != a[D - 1] ? a.repr() : std::to_string(a[0]);
    };
    std::string s = "kernel_size=" + v(options.kernel_size()) + ", stride=" + v(options.stride()) +
                    ", padding=" + v(options.padding());
    if constexpr (Max) s += ", dilation=" + v(options.dilation()) + ", ceil_mode=" + (options.ceil_mode() ? "True" : "False");
    return s;
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    if constexpr (Max) {
      if constexpr (D == 1) return F::max_pool1d(x, options);
      else return F::max_pool2d(x, options);
    } else {
      if constexpr (D == 1) return F::avg_pool1d(x, options);
      else return F::avg_pool2d(x, options);
    }
  }
  PoolOptions<D> options;
};
using MaxPool1dImpl = PoolImpl<1, true>;
using MaxPool2dImpl = PoolImpl<2, true>;
using AvgPool1dImpl = PoolImpl<1, false>;
using AvgPool2dImpl = PoolImpl<2, false>;
using MaxPool1d = ModuleHolder<MaxPool1dImpl>;
using MaxPool2d = ModuleHolder<MaxPool2dImpl>;
using AvgPool1d = ModuleHolder<AvgPool1dImpl>;
using AvgPool2d = ModuleHolder<AvgPool2dImpl>;

class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(ExpandingArray<2> output_size) : output_size(output_size) {}
  std::string name() const override { return "AdaptiveAvgPool2d"; }
  std::string extra_repr() const override {
    return "output_size=" + (output_size[0] == output_size[1] ? std::to_string(output_size[0]) : output_size.repr());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return F::adaptive_avg_pool2d(x, output_size);
  }
  ExpandingArray<2> output_size;
};
using AdaptiveAvgPool2d = ModuleHolder<AdaptiveAvgPool2dImpl>;

}  // namespace tsr::nn
