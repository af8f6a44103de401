// Sliding windows on the device, for convolutions and pooling
// (nn/conv.hpp): the patch matrix (im2col), its adjoint (col2im) and max
// pooling with indices, one thread per output element, each working out
// from its index which input elements its window covers. col2im sums each
// input element's taps in the CPU's order, and max pooling scans each
// window in the CPU's order by PyTorch's rule, so both give the CPU's
// results; no thread writes another's element.
#pragma once
#include <cstdint>

#include "../nn/conv.hpp"
#include "stream.hpp"

namespace tsr::detail::cuda {

// cols (C kh kw, N oh ow) from x (N, C, H, W), both contiguous.
template <class T>
struct Im2colElement {
  const T* x;
  T* cols;
  Window2d g;
  int64_t channels, images;
  T fill;

  TSR_HOST_DEVICE void operator()(int64_t k) const {
    const int64_t taps = g.kh * g.kw, width = images * g.oh * g.ow;
    const int64_t row = k / width, col = k % width;
    const int64_t c = row / taps, i = row % taps / g.kw, j = row % g.kw;
    const int64_t b = col / (g.oh * g.ow), oy = col % (g.oh * g.ow) / g.ow, ox = col % g.ow;
    const int64_t y = oy * g.sh - g.top + i * g.dh, xx = ox * g.sw - g.left + j * g.dw;
    cols[k] = y >= 0 && y < g.h && xx >= 0 && xx < g.w ? x[((b * channels + c) * g.h + y) * g.w + xx] : fill;
  }
};

// x (N, C, H, W) = the sum of its taps in cols (C kh kw, N oh ow), tap by
// tap in row-major order, as the CPU's col2im adds them.
template <class T>
struct Col2imElement {
  const T* cols;
  T* x;
  Window2d g;
  int64_t channels, images;

  TSR_HOST_DEVICE void operator()(int64_t e) const {
    const int64_t width = images * g.oh * g.ow;
    const int64_t xx = e % g.w, y = e / g.w % g.h, c = e / (g.w * g.h) % channels, b = e / (g.w * g.h * channels);
    T acc = T(0);
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t sy = y + g.top - i * g.dh;  // oy * sh
      if (sy < 0 || sy % g.sh != 0 || sy / g.sh >= g.oh) continue;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t sx = xx + g.left - j * g.dw;  // ox * sw
        if (sx < 0 || sx % g.sw != 0 || sx / g.sw >= g.ow) continue;
        acc += cols[((c * g.kh + i) * g.kw + j) * width + b * g.oh * g.ow + (sy / g.sh) * g.ow + sx / g.sw];
      }
    }
    x[e] = acc;
  }
};

// The maximum of each window of P planes (H x W) and its index in the
// plane, scanned row by row, a later element winning only when larger or
// NaN (tsr::detail::max_pool_takes); a window of -inf keeps its first
// element inside the input.
template <class T>
struct MaxPoolElement {
  const T* x;
  T* values;
  int64_t* indices;
  Window2d g;
  T lowest;  // -inf

  TSR_HOST_DEVICE void operator()(int64_t k) const {
    const int64_t area = g.oh * g.ow, oy = k % area / g.ow, ox = k % g.ow;
    const T* plane = x + k / area * g.h * g.w;
    T best = lowest;
    int64_t at = -1;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t y = oy * g.sh - g.top + i * g.dh;
      if (y < 0 || y >= g.h) continue;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t xx = ox * g.sw - g.left + j * g.dw;
        if (xx < 0 || xx >= g.w) continue;
        const T e = plane[y * g.w + xx];
        const bool take = tsr::detail::max_pool_takes(e, best);
        if (take || at < 0) at = y * g.w + xx;
        if (take) best = e;
      }
    }
    values[k] = best;
    indices[k] = at;
  }
};

template <class T>
void im2col(const Tensor<T>& cols, const Tensor<T>& x, const Window2d& g, T fill) {
  const Im2colElement<T> write{x.device_data_ptr(), cols.device_data_ptr(), g, x.size(1), x.size(0), fill};
  for_each_index(cols.device().index, cols.numel(), write, "thrust::for_each_n (im2col)");
}

template <class T>
void col2im(const Tensor<T>& x, const Tensor<T>& cols, const Window2d& g) {
  const Col2imElement<T> write{cols.device_data_ptr(), x.device_data_ptr(), g, x.size(1), x.size(0)};
  for_each_index(x.device().index, x.numel(), write, "thrust::for_each_n (col2im)");
}

template <class T>
void max_pool2d(const Tensor<T>& values, const Tensor<int64_t>& indices, const Tensor<T>& x, const Window2d& g, T lowest) {
  const MaxPoolElement<T> write{x.device_data_ptr(), values.device_data_ptr(), indices.device_data_ptr(), g, lowest};
  for_each_index(x.device().index, values.numel(), write, "thrust::for_each_n (max_pool2d)");
}

}  // namespace tsr::detail::cuda
