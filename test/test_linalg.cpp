// Matrix products against PyTorch 1.13 (tools/make_golden.py: linalg), the
// packed GEMM against a double-precision reference on shapes that hit every
// edge tile, thread-count determinism, and PyTorch's error texts.
#include "common.hpp"

using namespace tsr;
using test::check_close;
using test::error_of;

namespace {

// The product in double with a plain triple loop: the independent reference.
template <class T>
Tensor<double> reference_mm(const Tensor<T>& a, const Tensor<T>& b) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  auto out = zeros<double>({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const double x = static_cast<double>(a(i, p));
      for (int64_t j = 0; j < n; ++j) out(i, j) = out(i, j) + x * static_cast<double>(b(p, j));
    }
  return out;
}

// got and PyTorch's want are each within the documented bound of a k-term
// float dot product, k * eps * sum |a_i b_i| (docs/linalg.md), of the exact
// product; so they are within twice that of each other. The sum of |a_i b_i|
// is |a| @ |b|, in double. (Fixed tolerances failed for K = 300 on AVX-512,
// where the accumulation order differs from PyTorch's.)
void check_within_gemm_bound(const Tensor<float>& a, const Tensor<float>& b, const Tensor<double>& want,
                             const std::string& what) {
  INFO(what);
  const int64_t k = a.size(-1);
  const Tensor<double> got = cast<double>(matmul(a, b));
  const Tensor<double> bound = matmul(Tensor<double>(abs(cast<double>(a))), Tensor<double>(abs(cast<double>(b))));
  REQUIRE(got.sizes() == want.sizes());
  const double eps = std::ldexp(1.0, -24);
  const auto g = got.to_vector(), w = want.to_vector(), s = bound.to_vector();
  int bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool ok = (std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i] ||
                    std::abs(g[i] - w[i]) <= 2.0 * static_cast<double>(k) * eps * s[i];
    if (!ok && bad++ == 0) FAIL_CHECK("element " << i << ": got " << g[i] << ", PyTorch " << w[i] << ", bound "
                                                 << 2.0 * static_cast<double>(k) * eps * s[i]);
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("matmul matches PyTorch on every rank combination") {
  for (const char* name : {"mm", "mm_deep", "vv", "mv", "vm", "bmm", "bcast", "b3_2", "b3_1", "b1_3", "b2_3",
                           "empty_k", "empty_m", "empty_batch", "special"}) {
    const std::string base = std::string("la_") + name;
    const auto a = test::golden<float>(base + "_a"), b = test::golden<float>(base + "_b");
    check_within_gemm_bound(a, b, test::golden(base + "_out"), base);
  }
  const auto a = test::golden<double>("la_f64_a"), b = test::golden<double>("la_f64_b");
  check_close(matmul(a, b), test::golden("la_f64_out"), 1e-13, 1e-13, "double");
  check_close(mm(test::golden<int64_t>("la_int_a"), test::golden<int64_t>("la_int_b")), test::golden("la_int_out"), 0,
              0, "int64");
  check_close(mm(test::golden<int32_t>("la_int_a"), test::golden<int32_t>("la_int_b")), test::golden("la_int_out"), 0,
              0, "int32");
  // bfloat16 accumulates in float and rounds once: within bfloat16's unit roundoff (2^-8 relative) of the float product
  // of the same (rounded) values.
  // tsr:: because OpenBLAS's cblas.h (with -Dblas=openblas) declares a global bfloat16.
  const auto a16 = test::golden<float>("la_mm_a").to<tsr::bfloat16>();
  const auto b16 = test::golden<float>("la_mm_b").to<tsr::bfloat16>();
  check_close(mm(a16, b16), mm(a16.to<float>(), b16.to<float>()), 1.0 / 256, 1e-6, "bfloat16");
}

TEST_CASE("matmul with non-contiguous operands matches PyTorch") {
  const auto a = test::golden<float>("la_nc_a"), b = test::golden<float>("la_nc_b"), c = test::golden<float>("la_nc_c");
  check_close(matmul(a.t(), b.t()), test::golden("la_nc_tt"), 1e-5, 1e-5, "transposed");
  check_close(matmul(a.slice(0, 0, 40, 2), c.slice(1, 0, 60, 3)), test::golden("la_nc_step"), 1e-5, 1e-5, "step");
  check_close(matmul(a.slice(0, 0, 1).expand({20, 30}), c), test::golden("la_nc_expand"), 1e-5, 1e-5, "expanded");
  check_close(matmul(a, c.select(0, 0).slice(0, 0, 1).expand({30})), test::golden("la_nc_mv_expand"), 1e-5, 1e-5,
              "expanded vector");
  check_close(bmm(c.reshape({3, 20, 30}).transpose(1, 2), a.reshape({3, 20, 20}).slice(2, 0, 20, 2)),
              test::golden("la_nc_bmm_t"), 1e-5, 1e-5, "bmm transposed and stepped");
  // An expression operand is materialized once, then multiplied.
  check_close(matmul(a.t() * 2.f, b.t()), test::golden("la_nc_tt") * 2.0, 1e-5, 1e-5, "expression operand");
}

TEST_CASE("addmm, linear, outer and dot match PyTorch") {
  const auto m1 = test::golden<float>("la_addmm_m1"), m2 = test::golden<float>("la_addmm_m2");
  const auto bias = test::golden<float>("la_addmm_bias");
  check_close(addmm(bias, m1, m2, 0.5, 2.0), test::golden("la_addmm"), 1e-5, 1e-5, "addmm");
  check_close(addmm(full<float>({8, 6}, NAN), m1, m2, 0.0, 1.5), test::golden("la_addmm_beta0"), 1e-5, 1e-5,
              "beta = 0 ignores NaN");
  check_close(addmm(full<float>({8, 6}, NAN), m1, m2, 0, 1.5), test::golden("la_addmm_beta0"), 1e-5, 1e-5,
              "beta and alpha of different types, as libtorch's Scalars");
  Tensor<float> c = bias.expand({8, 6}).clone();
  addmm_(c, m1, m2, 0.5, 2.0);
  check_close(c, test::golden("la_addmm"), 1e-5, 1e-5, "addmm_");
  // In place into a transposed destination, and with c aliasing an operand.
  Tensor<float> ct = bias.expand({8, 6}).clone().t().contiguous().t();
  addmm_(ct, m1, m2, 0.5, 2.0);
  check_close(ct, test::golden("la_addmm"), 1e-5, 1e-5, "addmm_ into a column-major c");
  Tensor<float> sq = m1.slice(1, 0, 8).clone();
  const Tensor<double> expect_sq = reference_mm(sq, sq) + sq.to<double>();
  addmm_(sq, sq, sq);
  check_close(sq, expect_sq, 1e-5, 1e-5, "addmm_ with c aliasing both operands");

  const auto x = test::golden<float>("la_lin_x"), w = test::golden<float>("la_lin_w"), lb = test::golden<float>("la_lin_b");
  check_close(linear(x, w, lb), test::golden("la_lin"), 1e-5, 1e-5, "linear");
  check_close(linear(x, w), test::golden("la_lin_nobias"), 1e-5, 1e-5, "linear without bias");
  check_close(outer(test::golden<float>("la_outer_u"), test::golden<double>("la_outer_v")), test::golden("la_outer"),
              1e-6, 0, "outer promotes");
  const auto ia = test::golden<int32_t>("la_int_a");
  const auto d = dot(ia.select(0, 0), ia.select(0, 1));
  static_assert(std::is_same_v<decltype(d), const Tensor<int32_t>>, "dot keeps the dtype");
  CHECK(d.dim() == 0);
  CHECK(d.item() == static_cast<int32_t>(test::golden<int64_t>("la_dot_int").item()));
}

TEST_CASE("the packed GEMM is exact to float rounding on every edge tile") {
  manual_seed(3);
  // Sizes around the register tiles (6 or 12 x 2W), the K block and the row
  // block; narrow ones (64 x 10) take the transposed product or, with B
  // given transposed, dot products. B given transposed is packed by square
  // blocks (8 x 8 floats, 4 x 4 doubles where the vectors are 32 bytes) and
  // column by column for the rest: 45 and 25 columns leave a last panel
  // with whole blocks and a remainder.
  for (auto [m, k, n] : {std::array<int64_t, 3>{1, 1, 1}, {5, 7, 3}, {6, 16, 16}, {7, 257, 17}, {13, 1, 33},
                         {150, 300, 70}, {2, 513, 2}, {300, 64, 1}, {1, 64, 300}, {64, 256, 10}, {10, 100, 64},
                         {33, 37, 5}, {3, 800, 40}, {20, 100, 45}, {16, 300, 25}}) {
    CAPTURE(m);
    CAPTURE(k);
    CAPTURE(n);
    const auto a = randn<float>({m, k}), b = randn<float>({k, n});
    const auto want = reference_mm(a, b);
    // The error bound of a k-term float dot product: k * eps * sum |a_i b_i|.
    const auto bound = reference_mm(Tensor<float>(abs(a)), Tensor<float>(abs(b))) * (k * 6e-8);
    CHECK(all(abs(cast<double>(mm(a, b)) - want) <= bound).item());
    CHECK(all(abs(cast<double>(mm(a.t().contiguous().t(), b.t().contiguous().t())) - want) <= bound).item());
    CHECK(all(abs(cast<double>(mm(a, b.t().contiguous().t())) - want) <= bound).item());
    const auto ad = a.to<double>(), bd = b.to<double>();
    CHECK(allclose(mm(ad, bd), want, 1e-12, 1e-12));
    CHECK(allclose(mm(ad, bd.t().contiguous().t()), want, 1e-12, 1e-12));
  }
}

TEST_CASE("products are bitwise identical for 1 and 2 threads and any operand layout") {
  manual_seed(5);
  const auto a = randn<float>({301, 520}), b = randn<float>({520, 203});
  const auto batch_a = randn<float>({16, 24, 40}), batch_b = randn<float>({16, 40, 24});
  const int threads = get_num_threads();
  set_num_threads(1);
  const auto one = mm(a, b);
  const auto one_batch = bmm(batch_a, batch_b);
  const auto one_mv = mv(a, b.select(1, 0));
  // A layer's x W^T, wide and narrow (dot products, parallel over rows).
  const auto x = randn<float>({2048, 256}), w = randn<float>({256, 256}), w_narrow = randn<float>({10, 256});
  const auto one_wide = mm(x, w.t()), one_narrow = mm(x, w_narrow.t());
  set_num_threads(2);
  CHECK(equal(mm(x, w.t()), one_wide));
  CHECK(equal(mm(x, w_narrow.t()), one_narrow));
  CHECK(equal(mm(a, b), one));
  CHECK(equal(bmm(batch_a, batch_b), one_batch));
  CHECK(equal(mv(a, b.select(1, 0)), one_mv));
  // Packing reads the same values whatever the strides.
  CHECK(equal(mm(a.t().contiguous().t(), b.t().contiguous().t()), one));
  set_num_threads(threads);
  // A batch of small products (parallel over the batch) equals each product alone.
  for (int64_t i : {0, 7, 15}) CHECK(equal(one_batch.select(0, i), mm(batch_a.select(0, i), batch_b.select(0, i))));
}

TEST_CASE("matrix products raise PyTorch's errors") {
  const auto a = ones<float>({2, 3}), b = ones<float>({4, 5}), v3 = ones<float>({3}), v4 = ones<float>({4});
  CHECK(error_of([&] { mm(a, b); }) == "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  CHECK(error_of([&] { mm(a, v3); }) == "mat2 must be a matrix");
  CHECK(error_of([&] { mm(v3, a); }) == "self must be a matrix");
  CHECK(error_of([&] { matmul(ones<float>({}), a); }) ==
        "both arguments to matmul need to be at least 1D, but they are 0D and 2D");
  CHECK(error_of([&] { matmul(v3, v4); }) ==
        "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 "
        "and 4 elements respectively");
  CHECK(error_of([&] { matmul(a, v4); }) == "size mismatch, got 2, 2x3,4");
  CHECK(error_of([&] { matmul(v4, a); }) == "mat1 and mat2 shapes cannot be multiplied (1x4 and 2x3)");
  CHECK(error_of([&] { matmul(ones<float>({2, 2, 3}), b); }) ==
        "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)");
  CHECK(error_of([&] { matmul(ones<float>({2, 2, 3}), ones<float>({3, 3, 5})); }) ==
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  CHECK(error_of([&] { matmul(ones<float>({2, 2, 3}), ones<float>({2, 4, 5})); }) ==
        "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
  CHECK(error_of([&] { bmm(ones<float>({2, 2, 3}), ones<float>({3, 3, 5})); }) ==
        "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3].");
  CHECK(error_of([&] { bmm(a, ones<float>({2, 4, 5})); }) == "batch1 must be a 3D tensor");
  CHECK(error_of([&] { mv(a, ones<float>({3, 1})); }) == "vector + matrix @ vector expected, got 1, 2, 2");
  CHECK(error_of([&] { dot(ones<float>({3, 1}), v3); }) == "1D tensors expected, but got 2D and 1D tensors");
  CHECK(error_of([&] { outer(v3, ones<float>({3, 1})); }) == "outer: Expected 1-D argument vec2, but got 2-D");
  CHECK(error_of([&] { linear(a, ones<float>({4, 5})); }) == "mat1 and mat2 shapes cannot be multiplied (2x3 and 5x4)");
  CHECK(error_of([&] { addmm(ones<float>({3, 3}), a, ones<float>({3, 4})); }) ==
        "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  Target "
        "sizes: [2, 4].  Tensor sizes: [3, 3]");
  Tensor<float> c = ones<float>({1, 4});
  CHECK(error_of([&] { addmm_(c, a, ones<float>({3, 4})); }) ==
        "Bad in-place call: input tensor size [1, 4] and output tensor size [2, 4] should match");
}
