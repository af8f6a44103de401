// The 3-d layers' functions: conv3d, max_pool3d, avg_pool3d,
// adaptive_avg_pool3d and conv_transpose3d (the modules Conv3d,
// ConvTranspose3d, MaxPool3d and AvgPool3d are the templates of conv.hpp at
// D = 3; AdaptiveAvgPool3d is here).
//
// Each is built from its 2-d form over depth slices: tap k of a window in
// depth reads, for every output depth o, the input slice o stride + k
// dilation (of the depth-padded input); the slices of one tap are one batch
// for the 2-d layer, and the taps are combined (a sum, or the first
// maximum). So the products are the 2-d convolution's, and the gradients,
// of any order, are those of the 2-d layers and the gathers.
#pragma once
#include <limits>
#include <string>

#include "conv.hpp"

namespace tsr::detail {

// The depth slices read by tap k for every output depth, (N, C, OD, H, W)
// as (N OD, C, H, W): the batch of the 2-d layer for that tap.
template <class T>
Tensor<T> depth_tap(const Tensor<T>& padded, int64_t k, int64_t stride, int64_t dilation, int64_t out_depth) {
  auto at = Tensor<int64_t>::allocate({out_depth});
  for (int64_t o = 0; o < out_depth; ++o) at.data_ptr()[o] = o * stride + k * dilation;
  const Tensor<T> slices = index_select(padded, 2, placed_on(at, padded.device()));  // (N, C, OD, H, W)
  return slices.permute({0, 2, 1, 3, 4}).reshape({-1, padded.size(1), padded.size(3), padded.size(4)});
}

// (N OD, C, H, W) back to (N, C, OD, H, W).
template <class T>
Tensor<T> from_depth_batch(const Tensor<T>& y, int64_t n, int64_t out_depth) {
  return y.view({n, out_depth, y.size(1), y.size(2), y.size(3)}).permute({0, 2, 1, 3, 4}).contiguous();
}

// x with `front` and `back` slices of `fill` added in depth (dim 2).
template <class T>
Tensor<T> pad_depth(const Tensor<T>& x, int64_t front, int64_t back, T fill) {
  if (front == 0 && back == 0) return x;
  std::vector<Tensor<T>> parts;
  auto slab = [&](int64_t d) { return full<T>({x.size(0), x.size(1), d, x.size(3), x.size(4)}, fill, x.device()); };
  if (front > 0) parts.push_back(slab(front));
  parts.push_back(x);
  if (back > 0) parts.push_back(slab(back));
  return cat(parts, 2);
}

// A 3-d pooling's depth: output count, and padding on each side (the back
// covers a ceil_mode window that runs past the padded input), checked as
// PyTorch does.
struct PoolDepth {
  int64_t out, front, back;
};
template <class T>
PoolDepth pool_depth(const Tensor<T>& x5, const nn::PoolOptions<3>& o) {
  const int64_t d = x5.size(2), k = o.kernel_size()[0], s = o.stride()[0], p = o.padding()[0], dil = o.dilation()[0];
  for (int i = 0; i < 3; ++i) {
    check(o.kernel_size()[i] > 0 && o.stride()[i] > 0 && o.dilation()[i] > 0,
          "kernel_size, stride and dilation must be greater than zero, but got kernel_size=", o.kernel_size().repr(),
          ", stride=", o.stride().repr(), ", dilation=", o.dilation().repr());
    check(o.padding()[i] <= o.kernel_size()[i] / 2, "pad should be at most half of kernel size, but got pad=",
          o.padding()[i], " and kernel_size=", o.kernel_size()[i]);
  }
  const int64_t out = pool_output_size(d, k, p, s, dil, o.ceil_mode());
  const int64_t last = (out - 1) * s + (k - 1) * dil;  // in padded coordinates
  return {out, p, std::max(p, last + 1 - d - p)};
}
// PyTorch's "Output size is too small" for a 3-d pooling.
inline void check_pool3d_output(const Shape& in, int64_t od, int64_t oh, int64_t ow) {
  const auto n = static_cast<std::size_t>(in.size());
  check(od > 0 && oh > 0 && ow > 0, "Given input size: (", in[n - 4], "x", in[n - 3], "x", in[n - 2], "x", in[n - 1],
        "). Calculated output size: (", in[n - 4], "x", od, "x", oh, "x", ow, "). Output size is too small");
}
template <class T>
void check_pool3d_input(const Tensor<T>& x) {
  check((x.dim() == 4 || x.dim() == 5) && x.numel() > 0, "non-empty 4D or 5D (batch mode) tensor expected for input");
}

}  // namespace tsr::detail

namespace tsr::nn {
namespace functional {

// 3-d convolution (cross-correlation, as PyTorch's): x (N, C, D, H, W) or
// (C, D, H, W), weight (O, C / groups, kd, kh, kw), bias (O) or undefined.
template <detail::FloatElement T>
Tensor<T> conv3d(const Tensor<T>& x_in, const Tensor<T>& weight, const Tensor<T>& bias, const Conv3dFuncOptions& o) {
  detail::check(x_in.dim() == 4 || x_in.dim() == 5,
                "Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: ", x_in.sizes());
  detail::check(weight.dim() == 5, "weight should have 5 dimensions, got ", weight.sizes());
  const bool unbatched = x_in.dim() == 4;
  const Tensor<T> x = unbatched ? x_in.unsqueeze(0) : x_in;
  const int64_t n = x.size(0), c = x.size(1), groups = o.groups_;
  detail::check(groups > 0, "non-positive groups is not supported");
  detail::check(c == weight.size(1) * groups, "Given groups=", groups, ", weight of size ", weight.sizes(),
                ", expected input", x.sizes(), " to have ", weight.size(1) * groups, " channels, but got ", c,
                " channels instead");
  for (int i = 0; i < 3; ++i) {
    detail::check(o.stride_[i] > 0, "non-positive stride is not supported");
    detail::check(o.dilation_[i] > 0, "dilation should be greater than zero");
  }
  // Each dim's padding on both sides ('same': the extra on the far side, as PyTorch).
  std::array<int64_t, 3> before{}, after{};
  for (std::size_t i = 0; i < 3; ++i) {
    const int64_t total = o.same_ ? o.dilation_[i] * (weight.size(static_cast<int64_t>(i) + 2) - 1) : 2 * o.padding_[i];
    before[i] = o.same_ ? total / 2 : o.padding_[i];
    after[i] = total - before[i];
  }
  if (o.same_)
    detail::check(o.stride_.all(1), "padding='same' is not supported for strided convolutions");
  bool fits = true;
  for (std::size_t i = 0; i < 3; ++i)
    fits = fits && x.size(static_cast<int64_t>(i) + 2) + before[i] + after[i] >
                       o.dilation_[i] * (weight.size(static_cast<int64_t>(i) + 2) - 1);
  detail::check(fits, "Calculated padded input size per channel: (", x.size(2) + before[0] + after[0], " x ",
                x.size(3) + before[1] + after[1], " x ", x.size(4) + before[2] + after[2], "). Kernel size: (",
                o.dilation_[0] * (weight.size(2) - 1) + 1, " x ", o.dilation_[1] * (weight.size(3) - 1) + 1, " x ",
                o.dilation_[2] * (weight.size(4) - 1) + 1, "). Kernel size can't be greater than actual input size");
  if (bias.defined())
    detail::check(bias.dim() == 1 && bias.numel() == weight.size(0), "bias should have ", weight.size(0),
                  " elements, got ", bias.sizes());
  const Tensor<T> padded = detail::pad_depth(x, before[0], after[0], T(0));
  const int64_t out_depth = (padded.size(2) - o.dilation_[0] * (weight.size(2) - 1) - 1) / o.stride_[0] + 1;
  auto o2 = Conv2dFuncOptions().stride({o.stride_[1], o.stride_[2]}).padding({o.padding_[1], o.padding_[2]}).dilation(
      {o.dilation_[1], o.dilation_[2]}).groups(groups);
  if (o.same_) o2.padding(PaddingMode::Same);
  Tensor<T> sum;
  for (int64_t k = 0; k < weight.size(2); ++k) {
    const Tensor<T> tap = conv2d(detail::depth_tap(padded, k, o.stride_[0], o.dilation_[0], out_depth),
                                 weight.select(2, k), k == 0 ? bias : Tensor<T>(), o2);
    sum = k == 0 ? tap : Tensor<T>(sum + tap);
  }
  const Tensor<T> out = detail::from_depth_batch(sum, n, out_depth);
  return unbatched ? out.squeeze(0) : out;
}

// The transposed 3-d convolution (the adjoint of conv3d with the same
// options): x (N, C, D, H, W) or (C, D, H, W), weight (C, O / groups, kd,
// kh, kw). Depth tap k is the 2-d transposed convolution of every input
// slice with the weight's slice k, landing at output depth i stride + k
// dilation - padding for input slice i: the taps are placed by products with
// 0/1 matrices over depth (positions past the output dropped), so the
// gradients, of any order, are those of the 2-d layer and the products.
template <detail::FloatElement T>
Tensor<T> conv_transpose3d(const Tensor<T>& x_in, const Tensor<T>& weight, const Tensor<T>& bias,
                           const ConvTranspose3dFuncOptions& o) {
  detail::check(x_in.dim() == 4 || x_in.dim() == 5,
                "Expected 4D (unbatched) or 5D (batched) input to conv_transpose3d, but got input of size: ", x_in.sizes());
  detail::check(weight.dim() == 5, "weight should have 5 dimensions, got ", weight.sizes());
  const bool unbatched = x_in.dim() == 4;
  const Tensor<T> x = unbatched ? x_in.unsqueeze(0) : x_in;
  const int64_t n = x.size(0), c = x.size(1), d = x.size(2), h = x.size(3), w = x.size(4), groups = o.groups_;
  detail::check(groups > 0, "non-positive groups is not supported");
  detail::check(c == weight.size(0) && c % groups == 0, "Given transposed=1, weight of size ", weight.sizes(),
                ", expected input", x_in.sizes(), " to have ", weight.size(0), " channels, but got ", c, " channels instead");
  for (std::size_t i = 0; i < 3; ++i) {
    detail::check(o.stride_[i] > 0, "non-positive stride is not supported");
    detail::check(o.dilation_[i] > 0, "dilation should be greater than zero");
  }
  const auto& op = o.output_padding_;
  detail::check(op[0] < std::max(o.stride_[0], o.dilation_[0]) && op[1] < std::max(o.stride_[1], o.dilation_[1]) &&
                    op[2] < std::max(o.stride_[2], o.dilation_[2]),
                "output padding must be smaller than either stride or dilation, but got output_padding_depth: ", op[0],
                " output_padding_height: ", op[1], " output_padding_width: ", op[2], " stride_depth: ", o.stride_[0],
                " stride_height: ", o.stride_[1], " stride_width: ", o.stride_[2], " dilation_depth: ", o.dilation_[0],
                " dilation_height: ", o.dilation_[1], " dilation_width: ", o.dilation_[2]);
  std::array<int64_t, 3> out{};
  const std::array<int64_t, 3> in{d, h, w};
  for (std::size_t i = 0; i < 3; ++i)
    out[i] = (in[i] - 1) * o.stride_[i] - 2 * o.padding_[i] + o.dilation_[i] * (weight.size(int64_t(i) + 2) - 1) +
             op[i] + 1;
  detail::check(out[0] > 0 && out[1] > 0 && out[2] > 0, "Given input size per channel: (", d, " x ", h, " x ", w,
                "). Calculated output size per channel: (", out[0], " x ", out[1], " x ", out[2],
                "). Output size is too small");
  const auto o2 = ConvTranspose2dFuncOptions()
                      .stride({o.stride_[1], o.stride_[2]})
                      .padding({o.padding_[1], o.padding_[2]})
                      .output_padding({op[1], op[2]})
                      .dilation({o.dilation_[1], o.dilation_[2]})
                      .groups(groups);
  // (N D, C, H, W): every input slice as one image of the 2-d layer.
  const Tensor<T> slices = x.permute({0, 2, 1, 3, 4}).reshape({n * d, c, h, w});
  Tensor<T> sum;
  for (int64_t k = 0; k < weight.size(2); ++k) {
    const Tensor<T> tap = conv_transpose2d(slices, weight.select(2, k), Tensor<T>(), o2);  // (N D, O, OH, OW)
    auto place = zeros<T>({out[0], d});
    for (int64_t i = 0; i < d; ++i) {
      const int64_t at = i * o.stride_[0] + k * o.dilation_[0] - o.padding_[0];
      if (at >= 0 && at < out[0]) place.data_ptr()[at * d + i] = T(1);
    }
    // (N, OH OW O, D) times place^T: (N, OH OW O, OD).
    const Tensor<T> by_depth = tap.view({n, d, -1}).transpose(1, 2);
    const Tensor<T> placed = matmul(by_depth, detail::placed_on(place, x.device()).t());
    sum = k == 0 ? placed : Tensor<T>(sum + placed);
  }
  // (N, O OH OW, OD) -> (N, O, OD, OH, OW).
  const int64_t out_ch = weight.size(1) * groups;
  Tensor<T> y = sum.view({n, out_ch, out[1], out[2], out[0]}).permute({0, 1, 4, 2, 3}).contiguous();
  if (bias.defined()) {
    detail::check(bias.dim() == 1 && bias.numel() == out_ch, "bias should have ", out_ch, " elements, got ", bias.sizes());
    y = y + bias.view({1, out_ch, 1, 1, 1});
  }
  return unbatched ? y.squeeze(0) : y;
}

// Max over each 3-d window (NaN wins, as in PyTorch); the gradient goes to
// the window's first largest element in (depth, row, column) order, as
// PyTorch's: the first tap in depth with the maximum, and its 2-d window's
// first.
template <detail::FloatElement T>
Tensor<T> max_pool3d(const Tensor<T>& x_in, const MaxPool3dOptions& o) {
  detail::check(!o.divisor_override(), "max_pool3d has no divisor_override (average pooling's option)");
  detail::check_pool3d_input(x_in);
  const bool unbatched = x_in.dim() == 4;
  const Tensor<T> x = unbatched ? x_in.unsqueeze(0) : x_in;
  const detail::PoolDepth depth = detail::pool_depth(x, o);
  const int64_t oh = detail::pool_output_size(x.size(3), o.kernel_size()[1], o.padding()[1], o.stride()[1],
                                              o.dilation()[1], o.ceil_mode());
  const int64_t ow = detail::pool_output_size(x.size(4), o.kernel_size()[2], o.padding()[2], o.stride()[2],
                                              o.dilation()[2], o.ceil_mode());
  detail::check_pool3d_output(x.sizes(), depth.out, oh, ow);
  const Tensor<T> padded = detail::pad_depth(x, depth.front, depth.back, -std::numeric_limits<T>::infinity());
  const auto o2 = MaxPool2dOptions({o.kernel_size()[1], o.kernel_size()[2]}).stride({o.stride()[1], o.stride()[2]}).padding(
      {o.padding()[1], o.padding()[2]}).dilation({o.dilation()[1], o.dilation()[2]}).ceil_mode(o.ceil_mode());
  std::vector<Tensor<T>> taps;
  for (int64_t k = 0; k < o.kernel_size()[0]; ++k)
    taps.push_back(max_pool2d(detail::depth_tap(padded, k, o.stride()[0], o.dilation()[0], depth.out), o2));
  const Tensor<T> out = detail::from_depth_batch(std::get<0>(max(stack(taps), 0)), x.size(0), depth.out);
  return unbatched ? out.squeeze(0) : out;
}

// Mean over each 3-d window; the divisor counts the padding
// (count_include_pad) or only the input's elements, as PyTorch's, or is
// divisor_override.
template <detail::FloatElement T>
Tensor<T> avg_pool3d(const Tensor<T>& x_in, const AvgPool3dOptions& o) {
  detail::check(o.dilation().all(1), "avg_pool3d has no dilation");
  detail::check(o.divisor_override().value_or(1) != 0, "divisor must be not zero");
  detail::check_pool3d_input(x_in);
  const bool unbatched = x_in.dim() == 4;
  const Tensor<T> x = unbatched ? x_in.unsqueeze(0) : x_in;
  const detail::PoolDepth depth = detail::pool_depth(x, o);
  detail::check(x.size(2) >= o.kernel_size()[0] && x.size(3) >= o.kernel_size()[1] && x.size(4) >= o.kernel_size()[2],
                "input image (T: ", x.size(2), " H: ", x.size(3), " W: ", x.size(4), ") smaller than kernel size (kT: ",
                o.kernel_size()[0], " kH: ", o.kernel_size()[1], " kW: ", o.kernel_size()[2], ")");
  detail::check_pool3d_output(x.sizes(), depth.out,
                              detail::pool_output_size(x.size(3), o.kernel_size()[1], o.padding()[1], o.stride()[1], 1, o.ceil_mode()),
                              detail::pool_output_size(x.size(4), o.kernel_size()[2], o.padding()[2], o.stride()[2], 1, o.ceil_mode()));
  const Tensor<T> padded = detail::pad_depth(x, depth.front, depth.back, T(0));
  const auto o2 = AvgPool2dOptions({o.kernel_size()[1], o.kernel_size()[2]}).stride({o.stride()[1], o.stride()[2]}).padding(
      {o.padding()[1], o.padding()[2]}).ceil_mode(o.ceil_mode()).divisor_override(1);  // window sums
  Tensor<T> sums;
  for (int64_t k = 0; k < o.kernel_size()[0]; ++k) {
    const Tensor<T> tap = avg_pool2d(detail::depth_tap(padded, k, o.stride()[0], 1, depth.out), o2);
    sums = k == 0 ? tap : Tensor<T>(sums + tap);
  }
  const int64_t oh = sums.size(2), ow = sums.size(3);
  // The divisor of each output position (PyTorch's avg_pool3d kernel): the
  // window's extent within the padded input, or within the input.
  auto extent = [&](int64_t o_, int64_t dim, bool padded_extent) {
    const int64_t in = x.size(dim + 2), k = o.kernel_size()[static_cast<std::size_t>(dim)];
    const int64_t s = o.stride()[static_cast<std::size_t>(dim)], p = o.padding()[static_cast<std::size_t>(dim)];
    const int64_t start = o_ * s - p, end = std::min(start + k, in + p);
    return padded_extent ? end - start : std::min(end, in) - std::max<int64_t>(start, 0);
  };
  auto divisor = Tensor<T>::allocate({depth.out, oh, ow});
  T* d = divisor.data_ptr();
  for (int64_t a = 0; a < depth.out; ++a)
    for (int64_t b = 0; b < oh; ++b)
      for (int64_t c = 0; c < ow; ++c) {
        const bool with_pad = o.count_include_pad();
        *d++ = T(o.divisor_override() ? *o.divisor_override()
                                      : extent(a, 0, with_pad) * extent(b, 1, with_pad) * extent(c, 2, with_pad));
      }
  const Tensor<T> out = detail::from_depth_batch(sums, x.size(0), depth.out) / detail::placed_on(divisor, x.device());
  return unbatched ? out.squeeze(0) : out;
}

// Average pooling to a fixed output size, window i of each dim covering
// [floor(i in / out), ceil((i + 1) in / out)): separable, so three products
// with averaging matrices.
template <detail::FloatElement T>
Tensor<T> adaptive_avg_pool3d(const Tensor<T>& x, ExpandingArray<3> output_size) {
  detail::check(x.dim() == 4 || x.dim() == 5, "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got ", x.sizes());
  auto averaging = [&](int64_t in, int64_t out) {
    detail::check(out > 0, "adaptive_avg_pool3d: output size must be positive");
    return detail::placed_on(detail::adaptive_average_matrix<T>(in, out), x.device());
  };
  const Tensor<T> ad = averaging(x.size(-3), output_size[0]), ah = averaging(x.size(-2), output_size[1]),
                  aw = averaging(x.size(-1), output_size[2]);
  const Tensor<T> planes = matmul(matmul(ah, x), aw.t());                  // (..., D, oh, ow)
  return movedim(matmul(movedim(planes, -3, -1), ad.t()), -1, -3).contiguous();  // depth last, averaged, back
}

}  // namespace functional

using AdaptiveAvgPool3dImpl = AdaptiveAvgPoolImpl<3>;
using AdaptiveAvgPool3d = ModuleHolder<AdaptiveAvgPool3dImpl>;

}  // namespace tsr::nn
