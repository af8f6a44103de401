// Padding: F::pad (constant, reflect, replicate and circular, of the last
// 1 to 3 dims; negative amounts crop) with libtorch's PadFuncOptions, and
// the modes' names (tsr::kReflect, ...), which the convolution modules'
// padding_mode takes too.
#pragma once
#include <algorithm>
#include <vector>

#include "../tessera.hpp"

namespace tsr::nn {
enum class PadMode { Constant, Reflect, Replicate, Circular };
}  // namespace tsr::nn

namespace tsr {
inline constexpr auto kConstant = nn::PadMode::Constant;
inline constexpr auto kReflect = nn::PadMode::Reflect;
inline constexpr auto kReplicate = nn::PadMode::Replicate;
inline constexpr auto kCircular = nn::PadMode::Circular;
// libtorch's name of a convolution's default padding_mode: zeros, a
// constant 0.
inline constexpr auto kZeros = nn::PadMode::Constant;
}  // namespace tsr

namespace tsr::nn {

struct PadFuncOptions {
  // Pairs from the last dim backwards: {left, right, top, bottom, ...}.
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT: implicit
  PadFuncOptions& mode(PadMode m) { mode_ = m; return *this; }
  PadFuncOptions& value(double v) { value_ = v; return *this; }
  const std::vector<int64_t>& pad() const { return pad_; }
  PadMode mode() const { return mode_; }
  double value() const { return value_; }

 private:
  std::vector<int64_t> pad_;
  PadMode mode_ = PadMode::Constant;
  double value_ = 0;
};

namespace functional {

// libtorch spells it F::PadFuncOptions.
using nn::PadFuncOptions;

// Pads (or, with negative amounts, crops) the last dims.
template <detail::FloatElement T>
Tensor<T> pad(const Tensor<T>& x, const PadFuncOptions& o) {
  const auto& p = o.pad();
  detail::check(p.size() % 2 == 0, "Padding length must be divisible by 2");
  const auto dims = static_cast<int64_t>(p.size() / 2);
  detail::check(dims <= x.dim(), "Padding length too large");
  // The other modes pad the last 1, 2 or 3 dims of a batched or unbatched
  // input (circular: batched only), as PyTorch's kernels for them.
  if (o.mode() != PadMode::Constant) {
    detail::check(dims <= 3 && (x.dim() == dims + 1 || x.dim() == dims + 2),
                  "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
    if (o.mode() == PadMode::Circular)
      detail::check(x.dim() == dims + 2, "Invalid padding size, expected ", 2 * (x.dim() - 2), " but got ", 2 * dims);
  }
  Tensor<T> out = x;
  for (int64_t k = 0; k < dims; ++k) {
    const int64_t d = x.dim() - 1 - k, before = p[2 * static_cast<std::size_t>(k)], after = p[2 * static_cast<std::size_t>(k) + 1];
    const int64_t n = out.size(d), len = n + before + after;
    detail::check(len >= 0, "The input size ", n, ", plus negative padding ", before, " and ", after,
                  " resulted in a negative output size, which is invalid. Check dimension ", d, " of your input.");
    if (o.mode() == PadMode::Reflect)
      detail::check(before < n && after < n, "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (",
                    before, ", ", after, ") at dimension ", d, " of input ", x.sizes());
    if (o.mode() == PadMode::Replicate) detail::check(n > 0, "replication padding of an empty dimension");
    // The input's part that is kept: [lo, hi).
    const int64_t lo = std::max<int64_t>(0, -before), hi = std::min(n, n + after), kept = hi - lo;
    // (PyTorch checks the padding against the input's size, and where a
    // crop leaves less than the padding, reads memory it never wrote.)
    if (o.mode() == PadMode::Circular)
      detail::check(before <= kept && after <= kept, "Padding value causes wrapping around more than once.");
    // Each output position's source index; -1 where a constant goes.
    std::vector<int64_t> src(static_cast<std::size_t>(len));
    for (int64_t i = 0; i < len; ++i) {
      int64_t j = i - before;
      if (j < 0 || j >= n) {
        if (o.mode() == PadMode::Constant) j = -1;
        else if (o.mode() == PadMode::Replicate) j = std::clamp<int64_t>(j, 0, n - 1);
        else if (o.mode() == PadMode::Reflect) j = j < 0 ? -j : 2 * (n - 1) - j;
      }
      // Circular padding wraps around the kept part, as PyTorch's (which
      // crops first, then copies the padding from the cropped result).
      if (o.mode() == PadMode::Circular) j = lo + ((i - std::max<int64_t>(0, before)) % kept + kept) % kept;
      src[static_cast<std::size_t>(i)] = j;
    }
    if (o.mode() == PadMode::Constant) {
      Shape shape = out.sizes();
      shape[static_cast<std::size_t>(d)] = len;
      Tensor<T> padded = full<T>(shape, T(o.value()));
      if (hi > lo) padded.slice(d, std::max<int64_t>(0, before), std::max<int64_t>(0, before) + hi - lo) = out.slice(d, lo, hi);
      out = padded;
    } else {
      Tensor<int64_t> index = Tensor<int64_t>::allocate({len});
      for (int64_t i = 0; i < len; ++i) index(i) = src[static_cast<std::size_t>(i)];
      out = index_select(out, d, index);
    }
  }
  return out;
}

}  // namespace functional
}  // namespace tsr::nn
