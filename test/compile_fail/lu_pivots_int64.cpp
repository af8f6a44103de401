// expect: pivots must be Tensor<int32_t>, as linalg.lu_factor returns them
// PyTorch refuses pivots of another dtype ("pivots should be a Tensor of scalar type torch.int32").
#include <tessera.hpp>
#include <linalg/linalg.hpp>

int main() {
  const auto a = tsr::eye<double>(3);
  const auto [lu, pivots] = tsr::linalg::lu_factor(a);
  const auto x = tsr::linalg::lu_solve(lu, tsr::cast<int64_t>(pivots).eval(), a);
}
