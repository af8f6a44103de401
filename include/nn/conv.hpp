// Convolutions and pooling.
//
// Both rest on one primitive, the patch matrix (im2col): for every output
// position, the input values under the kernel window, one column each.
// A convolution is then a matrix product of the weights with that matrix
// (our packed GEMM), max pooling a max over its rows and average pooling a
// sum; their backward passes go through the matrix product's and the
// reductions' own rules and the patch matrix's adjoint (col2im, which sums
// each column back into the input). im2col and col2im are each other's
// backward, so derivatives of any order work. A convolution with one group
// builds the patch matrix one image at a time in a per-thread workspace
// instead (conv2d_images), where it stays in cache.
#pragma once
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../detail/window_row.hpp"
#include "fused_activation.hpp"
#include "holder.hpp"
#include "init.hpp"
#include "padding.hpp"

namespace tsr::autograd::tag {
struct Im2col;
struct Col2im;
struct Conv2dImages;
struct MaxPool2d;
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

// The device backend's forms (cuda/windows.hpp), in translation units that have it.
namespace cuda {
template <class T>
void im2col(const Tensor<T>& cols, const Tensor<T>& x, const Window2d& g, T fill);
template <class T>
void col2im(const Tensor<T>& x, const Tensor<T>& cols, const Window2d& g);
template <class T>
void max_pool2d(const Tensor<T>& values, const Tensor<int64_t>& indices, const Tensor<T>& x, const Window2d& g,
                T lowest);
}  // namespace cuda

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

// The outputs o in [0, count) whose input position origin + o stride lies
// in [0, size): [lo, hi), empty (lo = hi) when there are none.
struct OutputRange {
  int64_t lo, hi;
};
inline OutputRange outputs_inside(int64_t origin, int64_t stride, int64_t size, int64_t count) {
  const auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };  // b > 0
  const int64_t lo = std::clamp<int64_t>(ceil_div(-origin, stride), 0, count);
  return {lo, std::clamp<int64_t>(ceil_div(size - origin, stride), lo, count)};
}

// For kernel column j: the input column x0 of output column 0, and the
// output columns [lo, hi) whose input column x0 + ox sw lies in [0, w).
struct TapColumns {
  int64_t x0, lo, hi;
};
inline TapColumns tap_columns(const Window2d& g, int64_t j) {
  const int64_t x0 = j * g.dw - g.left;
  const auto [lo, hi] = outputs_inside(x0, g.sw, g.w, g.ow);
  return {x0, lo, hi};
}

// Calls f(tap, oy0, oy1, at, lo, hi) for every kernel tap (i, j), tap =
// i kw + j, of one image: for every channel c, patch-matrix row
// c kh kw + tap holds oh pieces of ow entries, one per output row. Pieces
// oy0 .. oy1 - 1 read the input: piece oy's entry ox, for lo <= ox < hi,
// is at c h w + at + (oy - oy0) sh w + ox sw; every other entry lies in
// the padding.
template <class F>
void for_each_window_tap(const Window2d& g, F&& f) {
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t y0 = i * g.dh - g.top;  // the input row of output row 0
    const auto [first, last] = outputs_inside(y0, g.sh, g.h, g.oh);
    for (int64_t j = 0; j < g.kw; ++j) {
      const auto [x0, lo, hi] = tap_columns(g, j);
      f(i * g.kw + j, first, last, (y0 + first * g.sh) * g.w + x0, lo, hi);
    }
  }
}

// Copies `rows` rows of n elements into dst, where they lie back to back:
// row r's element k is src[r src_stride + k src_step]. With src_step 1,
// whole vectors: the lanes a row's last vector carries past its end land in
// the rows after it, which are written later, and are read from src past
// its row, which the caller keeps readable (a slack of one vector). Nothing
// after dst's last row is written: where a vector would reach past it,
// single elements finish the row.
template <class T>
void copy_rows(const T* src, int64_t src_stride, int64_t src_step, int64_t rows, int64_t n, T* dst) {
  for (int64_t r = 0; r < rows; ++r, src += src_stride, dst += n) {
    int64_t k = 0;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      using B = xsimd::batch<T>;
      const int64_t room = (rows - r) * n;  // from this row's start to the end of dst's rows
      if (src_step == 1)
        for (; k < n && k + int64_t(B::size) <= room; k += B::size) B::load_unaligned(src + k).store_unaligned(dst + k);
    }
    for (; k < n; ++k) dst[k] = src[k * src_step];
  }
}

// One image's patch matrix: src (C, H, W) -> rows of dst, `width` apart.
// Each channel's plane is first laid out with its padding written (the
// fill) in a per-thread buffer: every window row is then a copy of ow
// elements of it with no bounds to test, and with a stride of 1 along W a
// plain vector copy (a vector or two for a 14 x 14 map). Copying only each
// row's part inside the input, with the fill around it, took twice as long
// on AVX2 when done element by element, and as long with masked loads.
template <class T>
void im2col_image(const T* src, const Window2d& g, int64_t channels, T fill, T* dst, int64_t width) {
  const int64_t ow = g.ow, taps = g.kh * g.kw, plane = g.h * g.w;
  if (g.oh <= 0 || ow <= 0) return;
  // Padded rows y hold input row y - top; padded columns x input column x - left.
  const int64_t ph = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1, pw = (ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  constexpr int64_t kSlack = 64;  // at least one vector: copy_rows may read past a row
  thread_local std::vector<T> buffer;
  buffer.assign(ph * pw + kSlack, fill);
  T* const padded = buffer.data();
  // The input's part of the padded plane: [y0, y1) x [x0, x1), where y0 =
  // top and x0 = left unless it is empty.
  const int64_t x0 = std::min(g.left, pw), x1 = std::clamp<int64_t>(g.w + g.left, x0, pw);
  const int64_t y0 = std::min(g.top, ph), y1 = std::clamp<int64_t>(g.h + g.top, y0, ph);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t y = y0; y < y1 && x0 < x1; ++y) {
      const T* const row = src + c * plane + (y - g.top) * g.w;
      std::copy(row + (x0 - g.left), row + (x1 - g.left), padded + y * pw + x0);
    }
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j)
        copy_rows(padded + i * g.dh * pw + j * g.dw, g.sh * pw, g.sw, g.oh, ow, dst + (c * taps + i * g.kw + j) * width);
  }
}

// Its adjoint: src's rows (`width` apart) summed into one image dst (C, H, W).
template <class T>
void col2im_image(const T* src, int64_t width, const Window2d& g, int64_t channels, T* dst) {
  const int64_t ow = g.ow, step = g.sh * g.w, taps = g.kh * g.kw, plane = g.h * g.w;
  for_each_window_tap(g, [&](int64_t tap, int64_t oy0, int64_t oy1, int64_t at, int64_t lo, int64_t hi) {
    const T* v = src + tap * width + oy0 * ow;
    if (g.sw == 1) return add_window_rows(dst, at, step, plane, v, ow, taps * width, oy1 - oy0, channels, lo, hi);
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t oy = oy0, a = c * plane + at; oy < oy1; ++oy, a += step) {
        const T* p = v + c * taps * width + (oy - oy0) * ow;
        for (int64_t k = lo; k < hi; ++k) dst[a + k * g.sw] += p[k];
      }
  });
}

template <class T>
Tensor<T> im2col(const Tensor<T>& x, const Window2d& g, T fill) {
  const Tensor<T> in = x.contiguous();
  const int64_t n = x.size(0), c = x.size(1), rows = c * g.kh * g.kw, cols = g.oh * g.ow, width = n * cols;
  auto out = Tensor<T>::allocate({rows, width}, x.device());
  if (!x.device().is_cpu()) {
    if constexpr (kCudaBackend) cuda::im2col(out, in, g, fill);
    else fail_compiled_without_cuda(x.device(), "convolutions and pooling");
  } else {
    const T* src = in.data_ptr();
    T* dst = out.data_ptr();
    ThreadPool::instance().parallel_for(n, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) im2col_image(src + b * c * g.h * g.w, g, c, fill, dst + b * cols, width);
    });
  }
  record_op<autograd::tag::Im2col>(out, x, g);
  return out;
}

template <class T>
Tensor<T> col2im(const Tensor<T>& cols_in, const Window2d& g, int64_t channels) {
  const Tensor<T> in = cols_in.contiguous();
  const int64_t width = in.size(1), cols = g.oh * g.ow, n = width / cols;
  Tensor<T> out;
  if (!in.device().is_cpu()) {
    out = Tensor<T>::allocate({n, channels, g.h, g.w}, in.device());
    if constexpr (kCudaBackend) cuda::col2im(out, in, g);
    else fail_compiled_without_cuda(in.device(), "convolutions and pooling");
  } else {
    out = zeros<T>({n, channels, g.h, g.w});
    const T* src = in.data_ptr();
    T* dst = out.data_ptr();
    ThreadPool::instance().parallel_for(n, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) col2im_image(src + b * cols, width, g, channels, dst + b * channels * g.h * g.w);
    });
  }
  record_op<autograd::tag::Col2im>(out, cols_in, g, channels);
  return out;
}

}  // namespace tsr::detail

namespace tsr::autograd {
template <>
struct OpRule<tag::Im2col> {
  template <class T> [[gnu::noinline]]
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
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& cols, const detail::Window2d& g, int64_t) {
    struct Rule {
      detail::Window2d g;
      std::vector<GradRef> backward(const Tensor<T>& grad) const { return {detail::im2col(grad, g, T(0)).impl_ptr()}; }
    };
    set_rule(out, "Col2ImBackward0", Rule{g}, {detail::gradient_edge(cols)});
  }
};
}  // namespace tsr::autograd

namespace tsr::detail {

// Per-thread workspaces for one image's patch matrix and its gradient.
inline PackBuffer& conv_workspace(int which) {
  thread_local PackBuffer buffers[2];
  return buffers[which];
}

// Runs work(u0, u1, parallel_products) over units [0, n): the threads take
// one unit at a time until none is left, or, with fewer units than threads
// (one image), this thread runs them with the products parallel inside.
// Taken one at a time, not in fixed shares, because a unit's result does not
// depend on the thread that computes it, and a thread the system holds back
// for a while (another program's threads on these cores) then delays the
// step by a unit, not by its whole share.
template <class F>
void for_units(int64_t n, const F& work) {
  ThreadPool& pool = ThreadPool::instance();
  const int64_t threads = pool.team_size();
  if (n < threads) return work(0, n, true);
  std::atomic<int64_t> next{0};
  pool.parallel_for(threads, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t u = next.fetch_add(1, std::memory_order_relaxed); u < n; u = next.fetch_add(1, std::memory_order_relaxed))
        work(u, u + 1, false);
  });
}

// conv2d with one group, image by image: each image's patch matrix (C kh kw
// x oh ow; 313 KB for 16 channels of 5 x 5 over 14 x 14, so in L2) is built
// in a per-thread workspace and multiplied by the weights straight into the
// image's (O, oh, ow) block of the output, with the bias and the activation
// in the product's epilogue. Neither the whole batch's patch matrix (N times
// larger) nor a pre-activation is written to memory, and nothing needs
// reordering afterwards; the backward builds each image's patches again.
template <class T>
Tensor<T> conv2d_images(const Tensor<T>& x, const Tensor<T>& weight, const Tensor<T>& bias, const Window2d& g,
                        Activation act) {
  const Tensor<T> xc = x.contiguous(), w = weight.reshape({weight.size(0), -1}).contiguous();
  const Tensor<T> bc = bias.defined() ? bias.contiguous() : Tensor<T>();
  const int64_t c = x.size(1), o = w.size(0), k = w.size(1), l = g.oh * g.ow, plane = c * g.h * g.w;
  auto out = Tensor<T>::allocate({x.size(0), o, g.oh, g.ow});
  const BiasActivation<T> work{bc.defined() ? bc.data_ptr() : nullptr, act};
  const Epilogue<T> epi = epilogue_of(work);
  const T* px = xc.data_ptr();
  const T* pw = w.data_ptr();
  T* po = out.data_ptr();
  for_units(x.size(0), [&](int64_t b0, int64_t b1, bool parallel) {
    T* cols = conv_workspace(0).get<T>(k * l);
    for (int64_t b = b0; b < b1; ++b) {
      im2col_image(px + b * plane, g, c, T(0), cols, l);
      matmul_into(o, l, k, T(1), MatView<T>{pw, k, 1}, MatView<T>{cols, l, 1}, T(0), MatSpan<T>{po + b * o * l, l, 1},
                  parallel, epi);
    }
  });
  const Tensor<T> pre = pre_activation(out, act);
  record_op<autograd::tag::Conv2dImages>(pre, x, weight, bias, g);
  record_activation(out, pre, act);
  return out;
}

// The gradients of conv2d_images. Image by image as the forward: the input
// gradient is W^T g_b in a workspace, summed into place by col2im; the weight
// gradient sums g_b P_b^T over the images in fixed chunks (each chunk in
// order, then the chunks in order), so the result does not depend on the
// thread count.
template <class T>
void conv2d_images_backward(const Tensor<T>& grad, const Tensor<T>& x, const Tensor<T>& weight, const Shape& w_sizes,
                            const Window2d& g, Tensor<T>* dx, Tensor<T>* dw) {
  constexpr int64_t kChunk = 4;
  const Tensor<T> gc = grad.contiguous();
  const int64_t n = gc.size(0), o = gc.size(1), l = g.oh * g.ow;
  const int64_t c = w_sizes[1], k = c * g.kh * g.kw, plane = c * g.h * g.w;
  const Tensor<T> xc = dw ? x.contiguous() : Tensor<T>();
  const Tensor<T> w = dx ? weight.reshape({o, k}).contiguous() : Tensor<T>();
  if (dx) *dx = zeros<T>({n, c, g.h, g.w});
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  const Tensor<T> partial = dw ? Tensor<T>::allocate({chunks, o, k}) : Tensor<T>();
  for_units(chunks, [&](int64_t c0, int64_t c1, bool parallel) {
    T* cols = conv_workspace(0).get<T>(k * l);
    T* dcols = dx ? conv_workspace(1).get<T>(k * l) : nullptr;
    for (int64_t chunk = c0; chunk < c1; ++chunk)
      for (int64_t b = chunk * kChunk; b < std::min(n, (chunk + 1) * kChunk); ++b) {
        const T* gb = gc.data_ptr() + b * o * l;
        if (dw) {
          im2col_image(xc.data_ptr() + b * plane, g, c, T(0), cols, l);
          matmul_into(o, k, l, T(1), MatView<T>{gb, l, 1}, MatView<T>{cols, 1, l}, b == chunk * kChunk ? T(0) : T(1),
                      MatSpan<T>{partial.data_ptr() + chunk * o * k, k, 1}, parallel);
        }
        if (dx) {
          matmul_into(k, l, o, T(1), MatView<T>{w.data_ptr(), 1, k}, MatView<T>{gb, l, 1}, T(0),
                      MatSpan<T>{dcols, l, 1}, parallel);
          col2im_image(dcols, l, g, c, dx->data_ptr() + b * plane);
        }
      }
  });
  if (dw) *dw = sum(partial, 0).view(w_sizes);
}

}  // namespace tsr::detail

namespace tsr::autograd {
template <>
struct OpRule<tag::Conv2dImages> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& x, const Tensor<T>& weight, const Tensor<T>& bias,
                     const detail::Window2d& g) {
    struct Rule {
      SavedTensor<T> x, w;  // each kept when the other needs a gradient
      Shape w_sizes;
      detail::Window2d g;
      bool need_x, need_w, need_b;
      std::vector<GradRef> backward(const Tensor<T>& grad) const {
        Tensor<T> dx, dw, db;
        const Tensor<T> xt = need_w ? x.get() : Tensor<T>(), wt = need_x ? w.get() : Tensor<T>();
        if (detail::grad_mode_flag()) {
          // A recorded backward (create_graph): the same products through
          // recorded ops, over the whole batch's patch matrix.
          const int64_t o = grad.size(1);
          const Tensor<T> g2 = grad.permute({1, 0, 2, 3}).reshape({o, -1});
          if (need_x) dx = detail::col2im(mm(wt.reshape({o, -1}).t(), g2), g, w_sizes[1]);
          if (need_w) dw = mm(g2, detail::im2col(xt, g, T(0)).t()).view(w_sizes);
        } else {
          detail::conv2d_images_backward(grad, xt, wt, w_sizes, g, need_x ? &dx : nullptr, need_w ? &dw : nullptr);
        }
        if (need_b) db = sum(grad, Shape{0, 2, 3});
        return {ref(dx), ref(dw), ref(db)};
      }
    };
    auto ex = detail::gradient_edge(x), ew = detail::gradient_edge(weight), eb = detail::gradient_edge(bias);
    Rule rule{ew ? SavedTensor<T>(x) : SavedTensor<T>(), ex ? SavedTensor<T>(weight) : SavedTensor<T>(),
              weight.sizes(), g, ex != nullptr, ew != nullptr, eb != nullptr};
    set_rule(out, "ConvolutionBackward0", std::move(rule), {std::move(ex), std::move(ew), std::move(eb)});
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
  // kZeros (the default), kReflect, kReplicate or kCircular: how the input
  // is padded, as PyTorch's padding_mode.
  ConvOptions& padding_mode(PadMode m) { padding_mode_ = m; return *this; }
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
  PadMode padding_mode() const { return padding_mode_; }

 private:
  int64_t in_channels_, out_channels_;
  ExpandingArray<D> kernel_size_, stride_ = 1, padding_ = 0, dilation_ = 1;
  bool same_ = false, named_padding_ = false;
  int64_t groups_ = 1;
  bool bias_ = true;
  PadMode padding_mode_ = PadMode::Constant;
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

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
// What F::conv3d takes besides its tensors.
struct Conv3dFuncOptions {
  Conv3dFuncOptions& stride(ExpandingArray<3> v) { stride_ = v; return *this; }
  Conv3dFuncOptions& padding(ExpandingArray<3> v) { padding_ = v; same_ = false; return *this; }
  Conv3dFuncOptions& padding(PaddingMode m) { same_ = m == PaddingMode::Same; padding_ = 0; return *this; }
  Conv3dFuncOptions& dilation(ExpandingArray<3> v) { dilation_ = v; return *this; }
  Conv3dFuncOptions& groups(int64_t v) { groups_ = v; return *this; }
  ExpandingArray<3> stride_ = 1, padding_ = 0, dilation_ = 1;
  bool same_ = false;
  int64_t groups_ = 1;
};
// Defined in volumetric.hpp, with the other 3-d layers.
template <detail::FloatElement T>
Tensor<T> conv3d(const Tensor<T>& x, const Tensor<T>& weight, const Tensor<T>& bias = {}, const Conv3dFuncOptions& o = {});

}  // namespace functional
}  // namespace tsr::nn

namespace tsr::detail {
// act(conv2d(x, weight, bias)): with one group, the activation in the
// product's epilogue.
template <FloatElement T>
Tensor<T> conv2d_activated(const Tensor<T>& x_in, const Tensor<T>& weight, const Tensor<T>& bias,
                           const nn::functional::Conv2dFuncOptions& o, Activation act) {
  check(x_in.dim() == 3 || x_in.dim() == 4, "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: ",
                x_in.sizes());
  const bool unbatched = x_in.dim() == 3;
  const Tensor<T> x = unbatched ? x_in.unsqueeze(0) : x_in;
  check(weight.dim() == 4, "weight should have 4 dimensions, got ", weight.sizes());
  const int64_t n = x.size(0), c = x.size(1), out_ch = weight.size(0), groups = o.groups_;
  check(groups > 0, "non-positive groups is not supported");
  check(c == weight.size(1) * groups, "Given groups=", groups, ", weight of size ", weight.sizes(),
                ", expected input", x_in.sizes(), " to have ", weight.size(1) * groups, " channels, but got ", c,
                " channels instead");
  check(out_ch % groups == 0, "out_channels must be divisible by groups");
  Window2d g{weight.size(2), weight.size(3), o.stride_[0], o.stride_[1], o.padding_[0], o.padding_[1],
                     o.dilation_[0], o.dilation_[1], x.size(2), x.size(3), 0, 0};
  check(g.sh > 0 && g.sw > 0, "non-positive stride is not supported");
  check(g.dh > 0 && g.dw > 0, "dilation should be greater than zero");
  int64_t bottom = g.top, right = g.left;
  if (o.same_) {
    check(g.sh == 1 && g.sw == 1, "padding='same' is not supported for strided convolutions");
    const int64_t th = g.dh * (g.kh - 1), tw = g.dw * (g.kw - 1);
    g.top = th / 2, bottom = th - g.top, g.left = tw / 2, right = tw - g.left;  // extra on the far side, as PyTorch
  }
  const int64_t span_h = g.h + g.top + bottom - g.dh * (g.kh - 1), span_w = g.w + g.left + right - g.dw * (g.kw - 1);
  check(span_h > 0 && span_w > 0, "Calculated padded input size per channel: (", g.h + g.top + bottom, " x ",
                g.w + g.left + right, "). Kernel size: (", g.dh * (g.kh - 1) + 1, " x ", g.dw * (g.kw - 1) + 1,
                "). Kernel size can't be greater than actual input size");
  g.oh = (span_h - 1) / g.sh + 1;
  g.ow = (span_w - 1) / g.sw + 1;
  if (bias.defined())
    check(bias.dim() == 1 && bias.numel() == out_ch, "bias should have ", out_ch, " elements, got ", bias.sizes());
  if (groups == 1 && x.device().is_cpu()) {
    const Tensor<T> out = conv2d_images(x, weight, bias, g, act);
    return unbatched ? out.squeeze(0) : out;
  }
  // (On a device, the whole batch's patch matrix and one product per
  // group, also for one group.)
  const Tensor<T> cols = im2col(x, g, T(0));  // (C kh kw, N L)
  const int64_t k = (c / groups) * g.kh * g.kw, l = g.oh * g.ow;
  // Groups: one product for the whole batch per group, (O / G, K) x (K, N L).
  Tensor<T> out =
      matmul(weight.reshape({groups, out_ch / groups, k}), cols.view({groups, k, n * l})).reshape({out_ch, n * l});
  const Tensor<T> nchw = out.view({out_ch, n, g.oh, g.ow}).permute({1, 0, 2, 3});
  // The bias added in the pass that lays the result out as (N, O, H, W).
  out = bias.defined() ? Tensor<T>(nchw + bias.view({1, out_ch, 1, 1})) : nchw.contiguous();
  out = activate(out, act);
  return unbatched ? out.squeeze(0) : out;
}

}  // namespace tsr::detail

namespace tsr::nn {
namespace functional {

// 2-D convolution (cross-correlation, as PyTorch's): x (N, C, H, W) or
// (C, H, W), weight (O, C / groups, kh, kw), bias (O) or undefined.
template <detail::FloatElement T>
Tensor<T> conv2d(const Tensor<T>& x_in, const Tensor<T>& weight, const Tensor<T>& bias = {},
                 const Conv2dFuncOptions& o = {}) {
  return detail::conv2d_activated(x_in, weight, bias, o, detail::Activation::none);
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

// What F::conv_transpose1d, 2d and 3d take besides their
// tensors.
template <std::size_t D>
struct ConvTransposeFuncOptions {
  ConvTransposeFuncOptions& stride(ExpandingArray<D> v) { stride_ = v; return *this; }
  ConvTransposeFuncOptions& padding(ExpandingArray<D> v) { padding_ = v; return *this; }
  ConvTransposeFuncOptions& output_padding(ExpandingArray<D> v) { output_padding_ = v; return *this; }
  ConvTransposeFuncOptions& groups(int64_t v) { groups_ = v; return *this; }
  ConvTransposeFuncOptions& dilation(ExpandingArray<D> v) { dilation_ = v; return *this; }
  ExpandingArray<D> stride_ = 1, padding_ = 0, output_padding_ = 0, dilation_ = 1;
  int64_t groups_ = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;

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

// The 1-D form: x (N, C, L) or (C, L), weight (C, O / groups, k); a 2-D
// one of height 1.
template <detail::FloatElement T>
Tensor<T> conv_transpose1d(const Tensor<T>& x, const Tensor<T>& weight, const Tensor<T>& bias = {},
                           const ConvTranspose1dFuncOptions& o = {}) {
  detail::check(x.dim() == 2 || x.dim() == 3,
                "Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but got input of size: ", x.sizes());
  detail::check(weight.dim() == 3, "weight should have 3 dimensions, got ", weight.sizes());
  const auto o2 = ConvTranspose2dFuncOptions()
                      .stride({1, o.stride_[0]})
                      .padding({0, o.padding_[0]})
                      .output_padding({0, o.output_padding_[0]})
                      .dilation({1, o.dilation_[0]})
                      .groups(o.groups_);
  const int64_t spatial = x.dim() - 1;
  return conv_transpose2d(x.unsqueeze(spatial), weight.unsqueeze(2), bias, o2).squeeze(spatial);
}
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;
// Defined in volumetric.hpp, with the other 3-d layers.
template <detail::FloatElement T>
Tensor<T> conv_transpose3d(const Tensor<T>& x, const Tensor<T>& weight, const Tensor<T>& bias = {},
                           const ConvTranspose3dFuncOptions& o = {});

}  // namespace functional
namespace F = functional;

// Conv1d, Conv2d and Conv3d: weight (O, C / groups, k...), initialized as PyTorch's
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
  std::string name() const override { return "Conv" + std::to_string(D) + "d"; }
  std::string extra_repr() const override {
    std::string s = std::to_string(options.in_channels()) + ", " + std::to_string(options.out_channels()) +
                    ", kernel_size=" + options.kernel_size().repr() + ", stride=" + options.stride().repr();
    if (options.padding_named()) s += std::string(", padding=") + (options.padding_same() ? "same" : "valid");
    else if (!options.padding().all(0)) s += ", padding=" + options.padding().repr();
    if (!options.dilation().all(1)) s += ", dilation=" + options.dilation().repr();
    if (options.groups() != 1) s += ", groups=" + std::to_string(options.groups());
    if (!bias.defined()) s += ", bias=False";
    if (pads_input()) {
      static constexpr const char* kModes[] = {"zeros", "reflect", "replicate", "circular"};
      s += std::string(", padding_mode=") + kModes[static_cast<int>(options.padding_mode())];
    }
    return s;
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x_in) const {
    const Tensor<T> b = bias.defined() ? bias.as<T>() : Tensor<T>();
    const Tensor<T> x = padded_input(x_in);
    if constexpr (D == 1) {
      return F::conv1d(x, weight.as<T>(), b, options.stride()[0], pads_input() ? 0 : options.padding()[0],
                       options.dilation()[0], options.groups(), options.padding_same() && !pads_input());
    } else if constexpr (D == 2) {
      return F::conv2d(x, weight.as<T>(), b, func_options());
    } else {
      auto o = F::Conv3dFuncOptions().stride(options.stride()).padding(pads_input() ? ExpandingArray<3>(0) : options.padding())
                   .dilation(options.dilation()).groups(options.groups());
      if (options.padding_same() && !pads_input()) o.padding(PaddingMode::Same);
      return F::conv3d(x, weight.as<T>(), b, o);
    }
  }
  // act(forward(x)), the activation computed in the product's epilogue
  // (Sequential and nn::Static call this for a Conv2d followed by ReLU, Tanh
  // or Sigmoid).
  template <detail::FloatElement T>
    requires(D == 2)
  Tensor<T> forward_activated(const Tensor<T>& x, detail::Activation act) const {
    return detail::conv2d_activated(padded_input(x), weight.as<T>(), bias.defined() ? bias.as<T>() : Tensor<T>(),
                                    func_options(), act);
  }

  ConvOptions<D> options;
  AnyTensor& weight;
  AnyTensor& bias;

 private:
  // The padding modes other than zeros pad the input first, by the
  // padding (or 'same''s split of it, the extra on the far side) of each
  // dim, and then convolve with none, as PyTorch's modules do.
  bool pads_input() const { return options.padding_mode() != PadMode::Constant; }
  template <class T>
  Tensor<T> padded_input(const Tensor<T>& x) const {
    if (!pads_input()) return x;
    std::vector<int64_t> pads;  // the last dim's first, as F::pad takes them
    for (std::size_t i = D; i-- > 0;) {
      int64_t before = options.padding()[i], after = before;
      if (options.padding_same()) {
        const int64_t total = options.dilation()[i] * (options.kernel_size()[i] - 1);
        before = total / 2;
        after = total - before;
      }
      pads.push_back(before);
      pads.push_back(after);
    }
    return F::pad(x, F::PadFuncOptions(pads).mode(options.padding_mode()));
  }
  F::Conv2dFuncOptions func_options() const
    requires(D == 2)
  {
    auto o = F::Conv2dFuncOptions().stride(options.stride()).padding(pads_input() ? ExpandingArray<2>(0) : options.padding())
                 .dilation(options.dilation()).groups(options.groups());
    if (options.padding_same() && !pads_input()) o.padding(PaddingMode::Same);
    return o;
  }
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
using Conv3dImpl = ConvImpl<3>;
using Conv1d = ModuleHolder<Conv1dImpl>;
using Conv3d = ModuleHolder<Conv3dImpl>;
using Conv2d = ModuleHolder<Conv2dImpl>;

// ----- ConvTranspose1d, ConvTranspose2d and ConvTranspose3d -----------------------
template <std::size_t D>
struct ConvTransposeOptions {
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  ConvTransposeOptions& stride(ExpandingArray<D> v) { stride_ = v; return *this; }
  ConvTransposeOptions& padding(ExpandingArray<D> v) { padding_ = v; return *this; }
  ConvTransposeOptions& output_padding(ExpandingArray<D> v) { output_padding_ = v; return *this; }
  ConvTransposeOptions& groups(int64_t v) { groups_ = v; return *this; }
  ConvTransposeOptions& bias(bool v) { bias_ = v; return *this; }
  ConvTransposeOptions& dilation(ExpandingArray<D> v) { dilation_ = v; return *this; }
  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  const ExpandingArray<D>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<D>& stride() const { return stride_; }
  const ExpandingArray<D>& padding() const { return padding_; }
  const ExpandingArray<D>& output_padding() const { return output_padding_; }
  const ExpandingArray<D>& dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_channels_, out_channels_;
  ExpandingArray<D> kernel_size_, stride_ = 1, padding_ = 0, output_padding_ = 0, dilation_ = 1;
  int64_t groups_ = 1;
  bool bias_ = true;
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;

// weight (C, O / groups, k...), initialized as PyTorch's (the fan-in of
// that shape, i.e. O / groups times the kernel's size, sets both bounds).
template <std::size_t D>
class ConvTransposeImpl : public Module {
 public:
  explicit ConvTransposeImpl(const ConvTransposeOptions<D>& options)
      : options(options),
        weight(register_parameter("weight", empty<float>(weight_shape(options)))),
        bias(register_parameter("bias", options.bias() ? AnyTensor(empty<float>({options.out_channels()})) : AnyTensor())) {
    reset_parameters();
  }
  ConvTransposeImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvTransposeImpl(ConvTransposeOptions<D>(in_channels, out_channels, kernel_size)) {}
  void reset_parameters() { detail::init_affine(weight, bias); }
  std::string name() const override { return "ConvTranspose" + std::to_string(D) + "d"; }
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
    const auto o = F::ConvTransposeFuncOptions<D>()
                       .stride(options.stride())
                       .padding(options.padding())
                       .output_padding(options.output_padding())
                       .groups(options.groups())
                       .dilation(options.dilation());
    const Tensor<T> b = bias.defined() ? bias.as<T>() : Tensor<T>();
    if constexpr (D == 1) return F::conv_transpose1d(x, weight.as<T>(), b, o);
    else if constexpr (D == 2) return F::conv_transpose2d(x, weight.as<T>(), b, o);
    else return F::conv_transpose3d(x, weight.as<T>(), b, o);
  }

  ConvTransposeOptions<D> options;
  AnyTensor& weight;
  AnyTensor& bias;

 private:
  static Shape weight_shape(const ConvTransposeOptions<D>& o) {
    detail::check(o.in_channels() > 0 && o.out_channels() > 0, "in_channels and out_channels must be positive");
    detail::check(o.groups() > 0, "groups must be a positive integer");
    detail::check(o.in_channels() % o.groups() == 0, "in_channels must be divisible by groups");
    detail::check(o.out_channels() % o.groups() == 0, "out_channels must be divisible by groups");
    Shape shape{o.in_channels(), o.out_channels() / o.groups()};
    for (std::size_t i = 0; i < D; ++i) shape.push_back(o.kernel_size()[i]);
    return shape;
  }
};
using ConvTranspose1dImpl = ConvTransposeImpl<1>;
using ConvTranspose2dImpl = ConvTransposeImpl<2>;
using ConvTranspose1d = ModuleHolder<ConvTranspose1dImpl>;
using ConvTranspose2d = ModuleHolder<ConvTranspose2dImpl>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;
using ConvTranspose3dImpl = ConvTransposeImpl<3>;
using ConvTranspose3d = ModuleHolder<ConvTranspose3dImpl>;

// ----- pooling ------------------------------------------------------------------
template <std::size_t D>
struct PoolOptions {
  PoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT: implicit
  PoolOptions& stride(ExpandingArray<D> v) { stride_ = v; return *this; }
  PoolOptions& padding(ExpandingArray<D> v) { padding_ = v; return *this; }
  PoolOptions& dilation(ExpandingArray<D> v) { dilation_ = v; return *this; }
  PoolOptions& ceil_mode(bool v) { ceil_mode_ = v; return *this; }
  PoolOptions& count_include_pad(bool v) { count_include_pad_ = v; return *this; }
  // Average pooling's divisor for every window, in place of its size
  // (PyTorch's avg_pool2d and avg_pool3d have it, its avg_pool1d not).
  PoolOptions& divisor_override(int64_t v) requires(D >= 2) { divisor_override_ = v; return *this; }
  const ExpandingArray<D>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<D>& stride() const { return stride_; }
  const ExpandingArray<D>& padding() const { return padding_; }
  const ExpandingArray<D>& dilation() const { return dilation_; }
  bool ceil_mode() const { return ceil_mode_; }
  bool count_include_pad() const { return count_include_pad_; }
  std::optional<int64_t> divisor_override() const { return divisor_override_; }

 private:
  ExpandingArray<D> kernel_size_, stride_, padding_ = 0, dilation_ = 1;
  bool ceil_mode_ = false, count_include_pad_ = true;
  std::optional<int64_t> divisor_override_;
};
using MaxPool1dOptions = PoolOptions<1>;
using MaxPool2dOptions = PoolOptions<2>;
using AvgPool1dOptions = PoolOptions<1>;
using AvgPool2dOptions = PoolOptions<2>;
using MaxPool3dOptions = PoolOptions<3>;
using AvgPool3dOptions = PoolOptions<3>;

}  // namespace tsr::nn

namespace tsr::detail {
// The (out, in) matrix of adaptive average pooling: output i is the mean of
// the input's [floor(i in / out), ceil((i + 1) in / out)).
template <class T>
Tensor<T> adaptive_average_matrix(int64_t in, int64_t out) {
  auto a = zeros<T>({out, in});
  for (int64_t i = 0; i < out; ++i) {
    const int64_t start = (i * in) / out, end = ((i + 1) * in + out - 1) / out;
    for (int64_t j = start; j < end; ++j) a(i, j) = T(1) / T(end - start);
  }
  return a;
}

// PyTorch's pooling output size: floor or ceil of the window count, a last
// window starting in the right padding dropped. (The division rounds down
// also for a window larger than the input, whose count is then 0.)
inline int64_t pool_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
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

// PyTorch's rule for a window's running maximum, scanned in order: a later
// element wins only when larger, or NaN.
template <class T>
TSR_HOST_DEVICE bool max_pool_takes(T e, T best) {
  return (e > best) | (e != e);
}

// Max pooling over the common 2 x 2 window with stride 2 and no padding (a
// CNN's pooling layer), one plane: the four taps of each output read
// directly, compared in the general loop's order and by its rule, so the
// results and indices are the same; the general loop's stride-2 gather per
// tap was a seventh of a small CNN's training step.
template <class T>
void max_pool_2x2_plane(const T* in, int64_t w, int64_t oh, int64_t ow, T* v, int64_t* at) {
  for (int64_t oy = 0; oy < oh; ++oy) {
    const T* r0 = in + 2 * oy * w;
    const T* r1 = r0 + w;
    for (int64_t ox = 0; ox < ow; ++ox) {
      // The first tap is taken whatever it holds (-inf kept, NaN taken).
      T best = r0[2 * ox];
      int64_t tap = 0;
      const T rest[3] = {r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1]};
      for (int64_t k = 0; k < 3; ++k) {
        const bool take = max_pool_takes(rest[k], best);
        best = take ? rest[k] : best;
        tap = take ? k + 1 : tap;
      }
      v[oy * ow + ox] = best;
      at[oy * ow + ox] = (2 * oy + (tap >> 1)) * w + 2 * ox + (tap & 1);
    }
  }
}

// Max pooling of x (P planes of H x W, contiguous) over the windows of g,
// with the index in its plane (y W + x) of each maximum: PyTorch's
// max_pool2d_with_indices, scanning each window row by row, a later element
// winning only when larger or NaN. Planes are independent, so the threads
// take whole planes.
template <class T>
std::pair<Tensor<T>, Tensor<int64_t>> max_pool2d_indices(const Tensor<T>& x, const Window2d& g, int64_t planes) {
  const Tensor<T> xc = x.contiguous();
  auto out = Tensor<T>::allocate({planes, g.oh * g.ow}, x.device());
  auto idx = Tensor<int64_t>::allocate({planes, g.oh * g.ow}, x.device());
  if (!x.device().is_cpu()) {
    if constexpr (kCudaBackend) cuda::max_pool2d(out, idx, xc, g, -std::numeric_limits<T>::infinity());
    else fail_compiled_without_cuda(x.device(), "convolutions and pooling");
    record_op<autograd::tag::MaxPool2d>(out, x, idx, g, planes);
    return {out, idx};
  }
  const T* src = xc.data_ptr();
  T* po = out.data_ptr();
  int64_t* pi = idx.data_ptr();
  // One output row at a time, tap by tap (in the window's row-major order),
  // across the row's outputs: the outputs' running maxima are independent,
  // where a window at a time would wait on each comparison before the next.
  // The loop keeps the winning tap's number, a constant per tap, and the
  // index in the plane is worked out once per output afterwards.
  const bool two_by_two = g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.top == 0 && g.left == 0 && g.dh == 1 &&
                          g.dw == 1 && 2 * g.oh <= g.h && 2 * g.ow <= g.w;
  ThreadPool::instance().parallel_for(planes, [&](int64_t p0, int64_t p1) {
    if (two_by_two) {
      for (int64_t p = p0; p < p1; ++p)
        max_pool_2x2_plane(src + p * g.h * g.w, g.w, g.oh, g.ow, po + p * g.oh * g.ow, pi + p * g.oh * g.ow);
      return;
    }
    std::vector<int32_t> taps(static_cast<std::size_t>(g.ow));
    std::vector<int64_t> tap_offsets;  // each tap's offset in the plane from the window's corner
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) tap_offsets.push_back(i * g.dh * g.w + j * g.dw);
    int32_t* tap = taps.data();
    for (int64_t p = p0; p < p1; ++p) {
      const T* in = src + p * g.h * g.w;
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        T* v = po + (p * g.oh + oy) * g.ow;
        int64_t* at = pi + (p * g.oh + oy) * g.ow;
        const int64_t top = oy * g.sh - g.top;  // the window's first row, maybe in the padding
        int64_t i0 = 0;  // its first row inside the input
        while (top + i0 * g.dh < 0) ++i0;
        for (int64_t ox = 0; ox < g.ow; ++ox) {  // a window of -inf keeps its first element
          int64_t j0 = 0;
          while (ox * g.sw - g.left + j0 * g.dw < 0) ++j0;
          v[ox] = -std::numeric_limits<T>::infinity();
          tap[ox] = static_cast<int32_t>(i0 * g.kw + j0);
        }
        for (int64_t i = 0; i < g.kh; ++i) {
          const int64_t y = top + i * g.dh;
          if (y < 0 || y >= g.h) continue;
          for (int64_t j = 0; j < g.kw; ++j) {
            const auto [x0, lo, hi] = tap_columns(g, j);
            const T* row = in + y * g.w + x0;
            const auto this_tap = static_cast<int32_t>(i * g.kw + j);
            for (int64_t ox = lo; ox < hi; ++ox) {
              const T e = row[ox * g.sw];
              const bool take = max_pool_takes(e, v[ox]);
              v[ox] = take ? e : v[ox];
              tap[ox] = take ? this_tap : tap[ox];
            }
          }
        }
        for (int64_t ox = 0; ox < g.ow; ++ox)
          at[ox] = top * g.w + ox * g.sw - g.left + tap_offsets[static_cast<std::size_t>(tap[ox])];
      }
    }
  });
  record_op<autograd::tag::MaxPool2d>(out, x, idx, g, planes);
  return {out, idx};
}

}  // namespace tsr::detail

namespace tsr::autograd {
// The gradient of each output goes to its window's maximum.
template <>
struct OpRule<tag::MaxPool2d> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& x, const Tensor<int64_t>& idx, const detail::Window2d& g,
                     int64_t planes) {
    struct Rule {
      Tensor<int64_t> idx;
      Shape x_sizes;
      detail::Window2d g;
      int64_t planes;
      std::vector<GradRef> backward(const Tensor<T>& grad) const {
        const int64_t area = g.h * g.w, l = g.oh * g.ow;
        // Recorded (create_graph): a differentiable scatter; on a device, the device's scatter.
        if (detail::grad_mode_flag() || !grad.device().is_cpu())
          return {scatter_add(zeros<T>({planes, area}, grad.device()), 1, idx, grad.reshape({planes, l})).view(x_sizes).impl_ptr()};
        // Otherwise plane by plane on the threads: scatter_add (serial, with
        // an index check and a copy of its target) took 0.6 ms longer for
        // the CNN's first pooling layer, a twentieth of the training step.
        const Tensor<T> gc = grad.contiguous();
        auto dx = zeros<T>({planes, area});
        const T* pg = gc.data_ptr();
        const int64_t* pi = idx.data_ptr();
        T* pd = dx.data_ptr();
        detail::ThreadPool::instance().parallel_for(planes, [&](int64_t p0, int64_t p1) {
          for (int64_t p = p0; p < p1; ++p)
            for (int64_t j = 0; j < l; ++j) pd[p * area + pi[p * l + j]] += pg[p * l + j];
        });
        return {dx.view(x_sizes).impl_ptr()};
      }
    };
    set_rule(out, "MaxPool2DWithIndicesBackward0", Rule{idx, x.sizes(), g, planes}, {detail::gradient_edge(x)});
  }
};
}  // namespace tsr::autograd

namespace tsr::nn {
namespace functional {

// libtorch's names for the pooling functions' options.
using MaxPool1dFuncOptions = MaxPool1dOptions;
using MaxPool2dFuncOptions = MaxPool2dOptions;
using AvgPool1dFuncOptions = AvgPool1dOptions;
using AvgPool2dFuncOptions = AvgPool2dOptions;
using MaxPool3dFuncOptions = MaxPool3dOptions;
using AvgPool3dFuncOptions = AvgPool3dOptions;

// Max over each window (NaN wins, as in PyTorch); the gradient goes to the
// window's largest element.
template <detail::FloatElement T>
Tensor<T> max_pool2d(const Tensor<T>& x, const MaxPool2dOptions& o) {
  detail::check(!o.divisor_override(), "max_pool2d has no divisor_override (average pooling's option)");
  const detail::Window2d g = detail::pool_window(x, o, "max_pool2d");
  const bool unbatched = x.dim() == 3;
  const int64_t n = unbatched ? 1 : x.size(0), c = x.size(-3);
  Tensor<T> out = detail::max_pool2d_indices(x, g, n * c).first;
  return unbatched ? out.view({c, g.oh, g.ow}) : out.view({n, c, g.oh, g.ow});
}
// Mean over each window; the divisor counts the padding (count_include_pad)
// or only the input's elements, as PyTorch's, or is divisor_override.
template <detail::FloatElement T>
Tensor<T> avg_pool2d(const Tensor<T>& x, const AvgPool2dOptions& o) {
  detail::check(o.dilation().all(1), "avg_pool2d has no dilation");
  detail::check(o.divisor_override().value_or(1) != 0, "divisor must be not zero");
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
      d[oy * g.ow + ox] = T(o.divisor_override() ? *o.divisor_override() : o.count_include_pad() ? pool : (y1 - y0) * (x1 - x0));
    }
  Tensor<T> out = sums / detail::placed_on(divisor, x.device());
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
  auto averaging = [&](int64_t in, int64_t out) {
    detail::check(out > 0, "adaptive_avg_pool2d: output size must be positive");
    return detail::placed_on(detail::adaptive_average_matrix<T>(in, out), x.device());
  };
  const Tensor<T> ah = averaging(x.size(-2), output_size[0]), aw = averaging(x.size(-1), output_size[1]);
  return matmul(matmul(ah, x), aw.t());
}

// Defined in volumetric.hpp, with the other 3-d layers.
template <detail::FloatElement T>
Tensor<T> max_pool3d(const Tensor<T>& x, const MaxPool3dOptions& o);
template <detail::FloatElement T>
Tensor<T> avg_pool3d(const Tensor<T>& x, const AvgPool3dOptions& o);
template <detail::FloatElement T>
Tensor<T> adaptive_avg_pool3d(const Tensor<T>& x, ExpandingArray<3> output_size);

}  // namespace functional

template <std::size_t D, bool Max>
class PoolImpl : public Module {
 public:
  explicit PoolImpl(const PoolOptions<D>& options) : options(options) {}
  explicit PoolImpl(ExpandingArray<D> kernel_size) : options(kernel_size) {}
  std::string name() const override {
    return std::string(Max ? "MaxPool" : "AvgPool") + std::to_string(D) + "d";
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
      else if constexpr (D == 2) return F::max_pool2d(x, options);
      else return F::max_pool3d(x, options);
    } else {
      if constexpr (D == 1) return F::avg_pool1d(x, options);
      else if constexpr (D == 2) return F::avg_pool2d(x, options);
      else return F::avg_pool3d(x, options);
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
using MaxPool3dImpl = PoolImpl<3, true>;
using AvgPool3dImpl = PoolImpl<3, false>;
using MaxPool3d = ModuleHolder<MaxPool3dImpl>;
using AvgPool3d = ModuleHolder<AvgPool3dImpl>;
using AvgPool1d = ModuleHolder<AvgPool1dImpl>;
using AvgPool2d = ModuleHolder<AvgPool2dImpl>;

// Adaptive average pooling over D = 2 or 3 spatial dims, as a module
// (AdaptiveAvgPool2d, AdaptiveAvgPool3d).
template <std::size_t D>
class AdaptiveAvgPoolImpl : public Module {
 public:
  explicit AdaptiveAvgPoolImpl(ExpandingArray<D> output_size) : output_size(output_size) {}
  std::string name() const override { return "AdaptiveAvgPool" + std::to_string(D) + "d"; }
  std::string extra_repr() const override {
    return "output_size=" + (output_size.all(output_size[0]) ? std::to_string(output_size[0]) : output_size.repr());
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& x) const {
    if constexpr (D == 2) return F::adaptive_avg_pool2d(x, output_size);
    else return F::adaptive_avg_pool3d(x, output_size);
  }
  ExpandingArray<D> output_size;
};
using AdaptiveAvgPool2dImpl = AdaptiveAvgPoolImpl<2>;
using AdaptiveAvgPool2d = ModuleHolder<AdaptiveAvgPool2dImpl>;

}  // namespace tsr::nn

// The device forms of the windows above, in translation units with the CUDA backend.
#if TSR_CUDA_BACKEND
#include "../cuda/windows.hpp"
#endif
