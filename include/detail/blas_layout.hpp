// How a strided matrix is handed to a BLAS: as stored (row-major, unit
// column stride) or transposed (unit row stride), with its leading
// dimension. CBLAS (row-major calls) and cuBLAS (column-major, through the
// transpose identity) both read their arguments off this.
#pragma once
#include <algorithm>
#include <cstdint>

namespace tsr::detail {

struct BlasOperand {
  bool ok;          // false: neither stride is 1 (broadcast or doubly strided)
  bool transposed;  // stored column by column
  int64_t ld;       // the stride between its rows (or columns, transposed)
};

// A rows x cols matrix whose element (i, j) is at i * rs + j * cs.
inline BlasOperand blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (rows == 0 || cols == 0) return {true, false, std::max<int64_t>(1, cols)};  // nothing to read
  if (cs == 1 && (rows == 1 || rs >= std::max<int64_t>(1, cols)))
    return {true, false, rows == 1 ? std::max<int64_t>(1, cols) : rs};
  if (rs == 1 && (cols == 1 || cs >= std::max<int64_t>(1, rows)))
    return {true, true, cols == 1 ? std::max<int64_t>(1, rows) : cs};
  return {false, false, 0};
}

}  // namespace tsr::detail
