// The operand layouts the cuBLAS tests multiply: row- and column-major,
// padded, and broadcast batches, over shapes that include single rows,
// single columns and k = 0. Shared by test_cuda.cpp (cuBLAS's documented
// semantics on the host) and test/cuda/gpu_backend.cu (cuBLAS on a GPU).
#pragma once
#include <cuda/gemm_layout.hpp>

#include <cstdint>
#include <vector>

namespace gemm_cases {

using tsr::detail::cuda::StridedMatrices;

// A batch of rows x cols matrices laid out row by row, or column by column
// (transposed), with `pad` extra elements between rows (or columns).
struct Layout {
  bool transposed;
  int64_t pad;
  bool broadcast_batch;  // batch stride 0
};
inline constexpr Layout kLayouts[] = {{false, 0, false}, {true, 0, false}, {false, 3, false}, {true, 2, false},
                                      {false, 0, true}};
// {batch, m, n, k}
inline constexpr int64_t kShapes[][4] = {{3, 4, 5, 6}, {2, 1, 5, 3}, {2, 4, 1, 3}, {1, 3, 4, 1}, {2, 3, 4, 0}};

// Calls f(batch, m, n, k, layout_a, layout_b) for every shape and every
// pair of layouts; returns how many cases ran (125).
template <class F>
int for_each_case(F&& f) {
  int cases = 0;
  for (const auto& s : kShapes)
    for (const Layout la : kLayouts)
      for (const Layout lb : kLayouts) {
        f(s[0], s[1], s[2], s[3], la, lb);
        ++cases;
      }
  return cases;
}

// The storage of such a batch, filled with small integers (every product
// and sum of the tests is exact in every floating type, half included) and
// -99 in the padding; `view` gets its strides and points at the storage.
template <class T>
std::vector<T> fill(int64_t batch, int64_t rows, int64_t cols, Layout l, StridedMatrices<const T>& view, int seed) {
  const int64_t ld = (l.transposed ? rows : cols) + l.pad;
  const int64_t per = ld * (l.transposed ? cols : rows);
  std::vector<T> data(static_cast<std::size_t>(per * (l.broadcast_batch ? 1 : batch)), T(-99.f));
  view = {data.data(), l.broadcast_batch ? 0 : per, l.transposed ? 1 : ld, l.transposed ? ld : 1};
  for (int64_t b = 0; b < (l.broadcast_batch ? 1 : batch); ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        data[static_cast<std::size_t>(b * view.batch_stride + i * view.row_stride + j * view.col_stride)] =
            T(static_cast<float>((seed + 3 * b + 5 * i + 7 * j) % 11 - 5));
  return data;
}

// Element (x, i, j) of the row-major product a b, in double.
template <class T>
double product_element(const StridedMatrices<const T>& a, const StridedMatrices<const T>& b, int64_t k, int64_t x,
                       int64_t i, int64_t j) {
  double sum = 0;
  for (int64_t l = 0; l < k; ++l)
    sum += static_cast<double>(a.data[x * a.batch_stride + i * a.row_stride + l * a.col_stride]) *
           static_cast<double>(b.data[x * b.batch_stride + l * b.row_stride + j * b.col_stride]);
  return sum;
}

}  // namespace gemm_cases
