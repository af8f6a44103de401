// Unfold and Fold (F::unfold, F::fold): the sliding-window patch matrix of a
// batch of images, and its adjoint, which sums patches back into images.
// They are the convolutions' im2col and col2im (conv.hpp) with PyTorch's
// layout, (N, C kh kw, L) for L window positions, so each differentiates
// through the other, to any order, on every device the convolutions run on.
#pragma once
#include <cstdint>
#include <string>

#include "conv.hpp"

namespace tsr::nn {

// libtorch: UnfoldOptions(kernel_size).dilation(1).padding(0).stride(1).
struct UnfoldOptions {
  UnfoldOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, nn::Unfold(2)
  UnfoldOptions& dilation(ExpandingArray<2> v) { dilation_ = v; return *this; }
  UnfoldOptions& padding(ExpandingArray<2> v) { padding_ = v; return *this; }
  UnfoldOptions& stride(ExpandingArray<2> v) { stride_ = v; return *this; }
  const ExpandingArray<2>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<2>& dilation() const { return dilation_; }
  const ExpandingArray<2>& padding() const { return padding_; }
  const ExpandingArray<2>& stride() const { return stride_; }

 private:
  ExpandingArray<2> kernel_size_, dilation_ = 1, padding_ = 0, stride_ = 1;
};

// libtorch: FoldOptions(output_size, kernel_size), then as UnfoldOptions.
struct FoldOptions : UnfoldOptions {
  FoldOptions(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : UnfoldOptions(kernel_size), output_size_(output_size) {}
  using UnfoldOptions::dilation;
  using UnfoldOptions::padding;
  using UnfoldOptions::stride;
  FoldOptions& dilation(ExpandingArray<2> v) { UnfoldOptions::dilation(v); return *this; }
  FoldOptions& padding(ExpandingArray<2> v) { UnfoldOptions::padding(v); return *this; }
  FoldOptions& stride(ExpandingArray<2> v) { UnfoldOptions::stride(v); return *this; }
  const ExpandingArray<2>& output_size() const { return output_size_; }

 private:
  ExpandingArray<2> output_size_;
};

namespace detail_fold {

// The window over an h x w image, its options checked with PyTorch's
// words; the number of positions along each side is left to the caller.
inline detail::Window2d window(const UnfoldOptions& o, int64_t h, int64_t w) {
  const auto& k = o.kernel_size();
  const auto& d = o.dilation();
  const auto& p = o.padding();
  const auto& s = o.stride();
  detail::check(k[0] > 0 && k[1] > 0, "kernel size should be greater than zero, but got kernel_height: ", k[0],
                " kernel_width: ", k[1]);
  detail::check(d[0] > 0 && d[1] > 0, "dilation should be greater than zero, but got dilation_height: ", d[0],
                " dilation_width: ", d[1]);
  detail::check(p[0] >= 0 && p[1] >= 0, "padding should be non-negative, but got pad_height: ", p[0],
                " pad_width: ", p[1]);
  detail::check(s[0] > 0 && s[1] > 0, "stride should be greater than zero, but got stride_height: ", s[0],
                " stride_width: ", s[1]);
  const int64_t oh = (h + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) / s[0] + 1;
  const int64_t ow = (w + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) / s[1] + 1;
  return {k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], h, w, oh, ow};
}

// "kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0)", as PyTorch's messages list them.
inline std::string listed(const UnfoldOptions& o) {
  return "kernel_size=" + o.kernel_size().repr() + ", dilation=" + o.dilation().repr() +
         ", padding=" + o.padding().repr();
}

// A number where both dims agree, a pair otherwise (the modules' reprs).
inline std::string short_repr(const ExpandingArray<2>& a) { return a[0] == a[1] ? std::to_string(a[0]) : a.repr(); }

}  // namespace detail_fold

namespace functional {

using UnfoldFuncOptions = UnfoldOptions;
using FoldFuncOptions = FoldOptions;

// The patches of x (N, C, H, W), or (C, H, W) unbatched, under a kh x kw
// window: (N, C kh kw, L), one column per window position, row c kh kw +
// i kw + j holding channel c's tap (i, j); positions in the zero padding
// read 0.
template <detail::FloatElement T>
Tensor<T> unfold(const Tensor<T>& x, const UnfoldFuncOptions& o) {
  detail::check(x.dim() == 3 || x.dim() == 4,
                "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
                "input, but got: ", x.sizes());
  const bool unbatched = x.dim() == 3;
  const Tensor<T> x4 = unbatched ? x.unsqueeze(0) : x;
  const detail::Window2d g = detail_fold::window(o, x4.size(2), x4.size(3));
  detail::check(g.oh >= 1 && g.ow >= 1, "Given input with spatial size (", g.h, ", ", g.w, "), ",
                detail_fold::listed(o), ", calculated shape of the array of sliding blocks as (", g.oh, ", ", g.ow,
                "), but its components must be at least one.");
  const int64_t n = x4.size(0), rows = x4.size(1) * g.kh * g.kw;
  const Tensor<T> cols = detail::im2col(x4, g, T(0));  // (C kh kw, N L)
  const Tensor<T> out = cols.view({rows, n, g.oh * g.ow}).permute({1, 0, 2}).contiguous();
  return unbatched ? out.squeeze(0) : out;
}

// The adjoint of unfold: patches x (N, C kh kw, L), or (C kh kw, L)
// unbatched, summed into images (N, C, H, W) of output_size (H, W); L must
// be the number of window positions over them.
template <detail::FloatElement T>
Tensor<T> fold(const Tensor<T>& x, const FoldFuncOptions& o) {
  const detail::Window2d g = detail_fold::window(o, o.output_size()[0], o.output_size()[1]);
  detail::check(x.dim() == 2 || x.dim() == 3,
                "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
                "for input, but got: ", x.sizes());
  const bool unbatched = x.dim() == 2;
  const Tensor<T> x3 = unbatched ? x.unsqueeze(0) : x;
  const int64_t taps = g.kh * g.kw;
  detail::check(x3.size(1) % taps == 0,
                "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
                "input.size(1)=", x3.size(1), " and kernel_size=", o.kernel_size().repr(), ".");
  detail::check(x3.size(2) == g.oh * g.ow, "Given output_size=", o.output_size().repr(), ", ", detail_fold::listed(o),
                ", stride=", o.stride().repr(), ", expected size of input's dimension 2 to match the calculated number "
                "of sliding blocks ", g.oh, " * ", g.ow, " = ", g.oh * g.ow, ", but got input.size(2)=", x3.size(2), ".");
  detail::check(g.oh >= 1 && g.ow >= 1, "Given output_size=", o.output_size().repr(), ", ", detail_fold::listed(o),
                ", calculated shape of the array of sliding blocks as (", g.oh, ", ", g.ow,
                "), but its components must be at least one.");
  const int64_t n = x3.size(0), rows = x3.size(1);
  const Tensor<T> cols = x3.permute({1, 0, 2}).reshape({rows, n * g.oh * g.ow});
  const Tensor<T> out = detail::col2im(cols, g, rows / taps);
  return unbatched ? out.squeeze(0) : out;
}

}  // namespace functional

class UnfoldImpl : public Module {
 public:
  explicit UnfoldImpl(const UnfoldOptions& options) : options(options) {}
  explicit UnfoldImpl(ExpandingArray<2> kernel_size) : options(kernel_size) {}
  std::string name() const override { return "Unfold"; }
  std::string extra_repr() const override {
    using detail_fold::short_repr;
    return "kernel_size=" + short_repr(options.kernel_size()) + ", dilation=" + short_repr(options.dilation()) +
           ", padding=" + short_repr(options.padding()) + ", stride=" + short_repr(options.stride());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return functional::unfold(x, options);
  }
  UnfoldOptions options;
};
using Unfold = ModuleHolder<UnfoldImpl>;

class FoldImpl : public Module {
 public:
  explicit FoldImpl(const FoldOptions& options) : options(options) {}
  std::string name() const override { return "Fold"; }
  std::string extra_repr() const override {
    using detail_fold::short_repr;
    return "output_size=" + short_repr(options.output_size()) + ", kernel_size=" + short_repr(options.kernel_size()) +
           ", dilation=" + short_repr(options.dilation()) + ", padding=" + short_repr(options.padding()) +
           ", stride=" + short_repr(options.stride());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return functional::fold(x, options);
  }
  FoldOptions options;
};
using Fold = ModuleHolder<FoldImpl>;

}  // namespace tsr::nn
