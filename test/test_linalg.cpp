// Matrix products against PyTorch 1.13 (tools/make_golden.py: linalg), the
// packed GEMM against a double-precision reference on shapes that hit every
// edge tile, thread-count determinism, and PyTorch's error texts; and
// tsr::linalg's solves, inverses, determinants and Cholesky factors
// (make_golden.py: linalg_decompositions), their residuals, gradients to the
// second order and errors; linalg::qr, eigh, svd and the norms, cond, rank
// and pseudoinverse (make_golden.py: linalg_qr, linalg_eigh, linalg_svd,
// linalg_norms; vectors compared up to their signs); cross and inner
// (index_writes_names); einsum (make_golden.py: einsum_cases); and the LU
// family (make_golden.py: linalg_lu).
#include "common.hpp"

#include <fstream>

#include <linalg/linalg.hpp>

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
  // with whole blocks and a remainder. A K of at most 32 with B's rows
  // contiguous and 32 vector registers takes the unpacked short-K tiles (4
  // rows by 4 vectors): 64 x 10 x 256 fills them, the others leave rows,
  // columns or both at the edges.
  for (auto [m, k, n] : {std::array<int64_t, 3>{1, 1, 1}, {5, 7, 3}, {6, 16, 16}, {7, 257, 17}, {13, 1, 33},
                         {150, 300, 70}, {2, 513, 2}, {300, 64, 1}, {1, 64, 300}, {64, 256, 10}, {10, 100, 64},
                         {33, 37, 5}, {3, 800, 40}, {20, 100, 45}, {16, 300, 25}, {64, 10, 256}, {67, 7, 100},
                         {5, 32, 70}, {9, 2, 50}, {130, 25, 200}}) {
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
    CHECK(all(abs(cast<double>(mm(a.t().contiguous().t(), b)) - want) <= bound).item());
    // alpha and beta: addmm's 0.5 c + 2 a b, within twice the product's bound and the sum's rounding.
    const auto c = randn<float>({m, n});
    const Tensor<double> want_addmm = 2. * want + 0.5 * cast<double>(c);
    CHECK(all(abs(cast<double>(addmm(c, a, b, 0.5, 2.0)) - want_addmm) <= 2. * bound + 1e-6 * abs(want_addmm)).item());
    // The same with B given transposed: narrow products (64 x 10, 5 x 3) take the dot products.
    CHECK(all(abs(cast<double>(addmm(c, a, b.t().contiguous().t(), 0.5, 2.0)) - want_addmm) <=
              2. * bound + 1e-6 * abs(want_addmm))
              .item());
    const auto ad = a.to<double>(), bd = b.to<double>();
    CHECK(allclose(mm(ad, bd), want, 1e-12, 1e-12));
    CHECK(allclose(mm(ad, bd.t().contiguous().t()), want, 1e-12, 1e-12));
    CHECK(allclose(addmm(c.to<double>(), ad, bd, 0.5, 2.0), want_addmm, 1e-12, 1e-12));
  }
  // Dot products (a narrow x W^T) whose rows start off the vector's alignment, k a multiple of
  // it: where the vectors are 64 bytes the rows are copied into aligned ones first, elsewhere
  // they are read in place; and the same rows one element shorter (a k tail, copied everywhere).
  for (const int64_t k : {256, 255}) {
    CAPTURE(k);
    const auto x = randn<float>({64, 257}).narrow(1, 1, k), w = randn<float>({10, 257}).narrow(1, 1, k);
    const auto want = reference_mm(x, w.t());
    const Tensor<double> bound = reference_mm(Tensor<float>(abs(x)), Tensor<float>(abs(w.t()))) * (k * 6e-8);
    CHECK(all(abs(cast<double>(mm(x, w.t())) - want) <= bound).item());
    CHECK(all(abs(cast<double>(mm(w, x.t())) - want.t()) <= bound.t()).item());
    const auto xd = x.to<double>(), wd = w.to<double>();
    CHECK(allclose(mm(xd, wd.t()), want, 1e-12, 1e-12));
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
  // A short K (a 10-class layer's input gradient for a batch of 512): row blocks on the threads.
  const auto g = randn<float>({512, 10});
  const auto one_short_k = mm(g, w_narrow);
  set_num_threads(2);
  CHECK(equal(mm(g, w_narrow), one_short_k));
#ifndef TSR_USE_CBLAS  // and its sums are the packed kernel's, which a transposed B takes
  CHECK(equal(mm(g, w_narrow.t().contiguous().t()), one_short_k));
#endif
  CHECK(equal(mm(x, w.t()), one_wide));
  CHECK(equal(mm(x, w_narrow.t()), one_narrow));
  CHECK(equal(mm(a, b), one));
  CHECK(equal(bmm(batch_a, batch_b), one_batch));
  CHECK(equal(mv(a, b.select(1, 0)), one_mv));
  // Packing reads the same values whatever the strides.
  CHECK(equal(mm(a.t().contiguous().t(), b.t().contiguous().t()), one));
  // B wider than one NC block of the cache blocking (1344 floats at most, 336 doubles at least,
  // on the builds we run), with enough rows that the threads split them: each thread packs its rows
  // of A once per K step (400 is two or three of them) and keeps them for every block of B. Each
  // element sums the same terms in the same order as a product of B's columns 280 at a time
  // (one block, A packed for it alone) does, so the two are bitwise equal, on 1 and 2 threads.
  const auto wide_products = [](auto type) {
    using T = decltype(type);
    const auto wa = randn<T>({520, 400}), wb = randn<T>({400, 1400});
    set_num_threads(1);
    const auto one_wide = mm(wa, wb);
    set_num_threads(2);
    CHECK(equal(mm(wa, wb), one_wide));
#ifndef TSR_USE_CBLAS  // OpenBLAS (-Dblas=openblas) makes no such promise about its blocks
    for (int64_t j = 0; j < 1400; j += 280)
      CHECK(equal(mm(wa, wb.slice(1, j, j + 280)), one_wide.slice(1, j, j + 280)));
#endif
  };
  wide_products(0.f);
  wide_products(0.0);
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

namespace {

// Every linalg_decompositions case of one dtype: values and gradients.
template <class T>
void check_decompositions(const std::string& tag, double rtol, double of_largest) {
  using V = std::vector<Tensor<T>>;
  const std::string p = "la2_" + tag + "_";
  for (const char* name : {"solve_matrix", "solve_vector", "solve_batch_vectors", "solve_broadcast",
                           "solve_one_vector_batch", "solve_large"})
    test::check_forward_backward<T>(p + name, 2, [](const V& v) { return linalg::solve(v[0], v[1]); }, rtol, of_largest);
  for (const char* name : {"inv", "inv_batch", "inv_large"})
    test::check_forward_backward<T>(p + name, 1, [](const V& v) { return linalg::inv(v[0]); }, rtol, of_largest);
  for (const char* name : {"det", "det_batch", "det_large"})
    test::check_forward_backward<T>(p + name, 1, [](const V& v) { return linalg::det(v[0]); }, rtol, of_largest);
  test::check_forward_backward<T>(p + "slogdet", 1, [](const V& v) { return std::get<1>(linalg::slogdet(v[0])); }, rtol, of_largest);
  for (const char* name : {"cholesky", "cholesky_large"})
    test::check_forward_backward<T>(p + name, 1, [](const V& v) { return linalg::cholesky(v[0]); }, rtol, of_largest);
  test::check_forward_backward<T>(p + "cholesky_upper", 1, [](const V& v) { return linalg::cholesky(v[0], true); }, rtol, of_largest);
  test::check_forward_backward<T>(p + "solve_triangular_upper", 2,
                                  [](const V& v) { return linalg::solve_triangular(v[0], v[1], true); }, rtol, of_largest);
  test::check_forward_backward<T>(p + "solve_triangular_lower_unit", 2,
                                  [](const V& v) { return linalg::solve_triangular(v[0], v[1], false, true, true); }, rtol, of_largest);
  test::check_forward_backward<T>(p + "solve_triangular_right", 2,
                                  [](const V& v) { return linalg::solve_triangular(v[0], v[1], true, false); }, rtol, of_largest);
  test::check_forward_backward<T>(p + "solve_triangular_right_lower", 2,
                                  [](const V& v) { return linalg::solve_triangular(v[0], v[1], false, false); }, rtol, of_largest);
}

}  // namespace

TEST_CASE("linalg: solve, inv, det, slogdet, cholesky and solve_triangular match PyTorch, gradients included") {
  check_decompositions<float>("f32", 2e-4, 1e-4);
  check_decompositions<double>("f64", 1e-10, 0);
}

TEST_CASE("linalg: singular matrices and determinant signs as PyTorch") {
  using V = std::vector<Tensor<double>>;
  // det is 0 at a singular matrix and so is its gradient (PyTorch 1.13's).
  test::check_forward_backward<double>("la2_f64_det_singular", 1, [](const V& v) { return linalg::det(v[0]); }, 1e-12);
  const auto [sign, logabs] = linalg::slogdet(test::golden<double>("la2_slogdet_signs_in"));
  check_close(sign, test::golden("la2_slogdet_signs_sign"), 0, 0, "slogdet sign");
  check_close(logabs, test::golden("la2_slogdet_signs_logabs"), 1e-14, 1e-14, "slogdet logabsdet");
  // A zero pivot: the solve and the inverse refuse it, the triangular solve divides by it (LAPACK's trsm).
  CHECK(error_of([] { linalg::solve(tensor<double>({1, 2, 2, 4}, {2, 2}), ones<double>({2})); }) ==
        "torch.linalg.solve: The solver failed because the input matrix is singular.");
  const Tensor<double> upper_singular = tensor<double>({1, 2, 0, 0}, {2, 2});
  const auto x = linalg::solve_triangular(upper_singular, ones<double>({2, 1}), true);
  CHECK(std::isinf(x(0, 0)));
  CHECK(std::isinf(x(1, 0)));
}

TEST_CASE("linalg: residuals of random batches, one and two threads alike") {
  manual_seed(7);
  for (const int64_t n : {1, 5, 33, 96}) {
    INFO("n = " << n);
    const Tensor<double> a = Tensor<double>(randn<double>({3, n, n}) + 2.0 * std::sqrt(double(n)) * eye<double>(n));
    const Tensor<double> b = randn<double>({3, n, 4});
    const Tensor<double> x = linalg::solve(a, b);
    CHECK(max(abs(Tensor<double>(matmul(a, x) - b))).item() < 1e-10);
    CHECK(max(abs(Tensor<double>(matmul(linalg::inv(a), a) - eye<double>(n)))).item() < 1e-10);
    const Tensor<double> spd = Tensor<double>(matmul(a, a.transpose(-1, -2)));
    const Tensor<double> l = linalg::cholesky(spd);
    CHECK(max(abs(Tensor<double>(matmul(l, l.transpose(-1, -2)) - spd))).item() < 1e-9 * n * n);
    CHECK(equal(l, tril(l)));
    // det(A) = prod of the eigenvalues... of L L^T: det(spd) = prod(diag(L))^2.
    const Tensor<double> d = linalg::det(spd), diag_product = prod(diagonal(l, 0, 1, 2), 1);
    check_close(d, Tensor<double>(diag_product * diag_product), 1e-9, 0, "det of L L^T");
    set_num_threads(1);
    const Tensor<double> x1 = linalg::solve(a, b);
    set_num_threads(2);
    CHECK(test::bitwise_equal(x, x1));
  }
  // An empty matrix: det 1, inverse empty; an empty right-hand side.
  CHECK(linalg::det(zeros<double>({2, 0, 0})).to_vector() == std::vector<double>{1, 1});
  CHECK(linalg::inv(zeros<double>({0, 0})).sizes() == Shape{0, 0});
  CHECK(linalg::solve(eye<double>(3), zeros<double>({3, 0})).sizes() == Shape{3, 0});
}

TEST_CASE("linalg: gradients to the second order against central differences") {
  using V = std::vector<Tensor<double>>;
  manual_seed(8);
  const Tensor<double> a = Tensor<double>(randn<double>({3, 3}) + 3.0 * eye<double>(3)), b = randn<double>({3, 2});
  const Tensor<double> m = randn<double>({3, 3});
  auto spd_of = [](const Tensor<double>& t) { return Tensor<double>(matmul(t, t.t()) + 3.0 * eye<double>(3)); };
  const std::vector<std::function<Tensor<double>(const V&)>> two = {
      [](const V& v) { return linalg::solve(v[0], v[1]); },
      [](const V& v) { return linalg::solve_triangular(v[0], v[1], true); },
      [](const V& v) { return linalg::solve_triangular(v[0], v[1].t(), false, false, true); },
  };
  for (const auto& f : two) {
    CHECK(autograd::gradcheck(f, {a, b}));
    CHECK(autograd::gradgradcheck(f, {a, b}));
  }
  const std::vector<std::function<Tensor<double>(const V&)>> one = {
      [](const V& v) { return linalg::inv(v[0]); },
      [](const V& v) { return linalg::det(v[0]); },
      [](const V& v) { return std::get<1>(linalg::slogdet(v[0])); },
      [&](const V& v) { return linalg::cholesky(spd_of(v[0])); },
      [&](const V& v) { return linalg::cholesky(spd_of(v[0]), true); },
      [](const V& v) { return linalg::matrix_power(v[0], 3); },
      [](const V& v) { return linalg::matrix_power(v[0], -2); },
      [](const V& v) { return linalg::multi_dot(V{v[0], v[0].t(), v[0]}); },
  };
  for (const auto& f : one) {
    CHECK(autograd::gradcheck(f, {m}));
    CHECK(autograd::gradgradcheck(f, {m}));
  }
}

TEST_CASE("linalg: PyTorch's errors") {
  const auto sq = eye<float>(3);
  CHECK(error_of([] { linalg::solve(ones<float>({2, 3}), ones<float>({2})); }) ==
        "linalg.solve: A must be batches of square matrices, but they are 2 by 3 matrices");
  CHECK(error_of([] { linalg::solve(ones<float>({3}), ones<float>({3})); }) ==
        "linalg.solve: The input tensor A must have at least 2 dimensions.");
  CHECK(error_of([&] { linalg::solve(sq, ones<float>({4})); }) ==
        "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)");
  CHECK(error_of([&] { linalg::solve(sq, ones<float>({2, 3})); }) ==
        "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x3)");
  CHECK(error_of([&] { linalg::solve(sq, ones<float>({})); }) ==
        "linalg.solve: The input tensor B must have at least 2 dimensions.");
  CHECK(error_of([&] { linalg::solve(sq.expand({2, 3, 3}), ones<float>({3, 3, 1})); }) ==
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  CHECK(error_of([] { linalg::solve(zeros<float>({1, 2, 2}), ones<float>({2})); }) ==
        "torch.linalg.solve: (Batch element 0): The solver failed because the input matrix is singular.");
  CHECK(error_of([] { linalg::solve(ones<int64_t>({2, 2}), ones<int64_t>({2})); }) ==
        "linalg.solve: Expected a floating point or complex tensor as input. Got Long");
  CHECK(error_of([] { linalg::solve(eye<tsr::half>(2), ones<tsr::half>({2})); }) ==
        "linalg.solve: 'Half' tensors have no CPU kernel (as in PyTorch 1.13, whose lu_cpu refuses them); compute in float or double with tsr::cast");
  CHECK(error_of([] { linalg::inv(ones<float>({2, 3})); }) ==
        "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices");
  CHECK(error_of([] { linalg::inv(zeros<float>({3, 3})); }) ==
        "linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the input matrix "
        "is singular.");
  CHECK(error_of([] { linalg::inv(stack(std::vector<Tensor<float>>{eye<float>(2), zeros<float>({2, 2})})); }) ==
        "linalg.inv: (Batch element 1): The diagonal element 1 is zero, the inversion could not be completed because "
        "the input matrix is singular.");
  CHECK(error_of([] { linalg::inv(eye<tsr::half>(2)); }) == "linalg.inv: Low precision dtypes not supported. Got Half");
  CHECK(error_of([] { linalg::det(ones<float>({3})); }) == "linalg.det: The input tensor A must have at least 2 dimensions.");
  CHECK(error_of([] { linalg::det(ones<int64_t>({2, 2})); }) ==
        "linalg.det: Expected a floating point or complex tensor as input. Got Long");
  CHECK(error_of([] { linalg::det(eye<tsr::bfloat16>(2)); }) ==
        "linalg.det: 'BFloat16' tensors have no CPU kernel (as in PyTorch 1.13, whose lu_cpu refuses them); compute in float or double with tsr::cast");
  CHECK(error_of([] { linalg::slogdet(ones<float>({2, 3})); }) ==
        "linalg.slogdet: A must be batches of square matrices, but they are 2 by 3 matrices");
  CHECK(error_of([] { linalg::cholesky(tensor<float>({1, 2, 2, 1}, {2, 2})); }) ==
        "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the "
        "leading minor of order 2 is not positive-definite).");
  CHECK(error_of([] { linalg::cholesky(tensor<float>({1, 0, 0, 1, 1, 2, 2, 1}, {2, 2, 2})); }) ==
        "linalg.cholesky: (Batch element 1): The factorization could not be completed because the input is not "
        "positive-definite (the leading minor of order 2 is not positive-definite).");
  CHECK(error_of([] { linalg::cholesky(eye<tsr::half>(2)); }) ==
        "linalg.cholesky: 'Half' tensors have no CPU kernel (as in PyTorch 1.13, whose cholesky_cpu refuses them); compute in float or double with tsr::cast");
  CHECK(error_of([] { linalg::solve_triangular(eye<float>(2), ones<float>({2}), true); }) ==
        "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.");
  CHECK(error_of([] { linalg::solve_triangular(eye<float>(2), ones<float>({3, 1}), true); }) ==
        "linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x1)");
  CHECK(error_of([] { linalg::solve_triangular(eye<float>(2), ones<float>({1, 3}), true, false); }) ==
        "linalg.solve_triangular: Incompatible shapes of A and B for the equation XA = B (2x2 and 1x3)");
  CHECK(error_of([] { linalg::solve_triangular(ones<int64_t>({2, 2}), ones<int64_t>({2, 1}), true); }) ==
        "linalg.solve_triangular: 'Long' tensors have no CPU kernel (as in PyTorch 1.13, whose triangular_solve_cpu refuses them); compute in float or double with tsr::cast");
  // The singular errors are LinAlgError, which is a tsr::Error.
  CHECK_THROWS_AS(linalg::inv(zeros<double>({2, 2})), LinAlgError);
  // Node names as PyTorch's grad_fn.
  const Tensor<double> a = Tensor<double>(eye<double>(2) * 2.0).requires_grad_();
  CHECK(linalg::solve(a, ones<double>({2})).grad_fn_name() == "LinalgSolveExBackward0");
  CHECK(linalg::inv(a).grad_fn_name() == "LinalgInvExBackward0");
  CHECK(linalg::det(a).grad_fn_name() == "LinalgDetBackward0");
  CHECK(linalg::cholesky(a).grad_fn_name() == "LinalgCholeskyExBackward0");
}

TEST_CASE("einsum matches PyTorch on every kind of equation, gradients included") {
  // Each line of einsum_cases.txt: name|equation|number of operands.
  std::ifstream cases(std::string(TSR_GOLDEN_DIR) + "/einsum_cases.txt");
  std::string line;
  int checked = 0;
  while (std::getline(cases, line)) {
    const std::size_t bar1 = line.find('|'), bar2 = line.rfind('|');
    const std::string name = line.substr(0, bar1), equation = line.substr(bar1 + 1, bar2 - bar1 - 1);
    const int operands = std::stoi(line.substr(bar2 + 1));
    test::check_forward_backward<float>("es_f32_" + name, operands,
                                        [&](const std::vector<Tensor<float>>& v) { return einsum(equation, v); }, 1e-5);
    test::check_forward_backward<double>("es_f64_" + name, operands,
                                         [&](const std::vector<Tensor<double>>& v) { return einsum(equation, v); }, 1e-12);
    ++checked;
  }
  CHECK(checked == 20);
  // Against the ops it stands for (arithmetic, not PyTorch).
  manual_seed(9);
  const Tensor<double> a = randn<double>({2, 3}), b = randn<double>({3, 4}), c = randn<double>({4, 4});
  CHECK(allclose(einsum("ij,jk->ik", a, b), matmul(a, b), 1e-14, 1e-14));
  CHECK(allclose(einsum("ii", c), sum(diagonal(c)), 1e-14, 1e-14));
  CHECK(allclose(einsum("ij->ji", a), a.t(), 0, 0));
  // Second derivatives, through the diagonal, the products and the sums.
  using V = std::vector<Tensor<double>>;
  for (const char* equation : {"iij,jk->ki", "bij,bjk->kbi"}) {
    INFO(equation);
    const V in = std::string(equation) == "iij,jk->ki" ? V{randn<double>({2, 2, 3}), randn<double>({3, 2})}
                                                        : V{randn<double>({2, 2, 3}), randn<double>({2, 3, 2})};
    auto f = [&](const V& v) { return einsum(equation, v); };
    CHECK(autograd::gradcheck(f, in));
    CHECK(autograd::gradgradcheck(f, in));
  }
}

TEST_CASE("einsum: PyTorch's errors") {
  const auto a = ones<float>({2, 3}), b = ones<float>({3, 4});
  CHECK(error_of([&] { einsum("ij,jk->ik", a); }) == "einsum(): fewer operands were provided than specified in the equation");
  CHECK(error_of([&] { einsum("ij->ij", a, b); }) == "einsum(): more operands were provided than specified in the equation");
  CHECK(error_of([&] { einsum("ij->ik", a); }) ==
        "einsum(): output subscript k does not appear in the equation for any input operand");
  CHECK(error_of([&] { einsum("ijk->ik", a); }) ==
        "einsum(): the number of subscripts in the equation (3) does not match the number of dimensions (2) for "
        "operand 0 and no ellipsis was given");
  CHECK(error_of([&] { einsum("ij,jk->iki", a, b); }) == "einsum(): output subscript i appears more than once in the output");
  CHECK(error_of([&] { einsum("ij,kk->ik", a, b); }) ==
        "einsum(): subscript k is repeated for operand 1 but the sizes don't match, 4 != 3");
  CHECK(error_of([&] { einsum("i1,jk->ik", a, b); }) ==
        "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]");
  CHECK(error_of([&] { einsum("ij,jk->ik", a, ones<float>({5, 4})); }) ==
        "einsum(): subscript j has size 5 for operand 1 which does not broadcast with previously seen size 3");
  CHECK(error_of([&] { einsum("...ij,...jk", ones<float>({5, 2, 3}), ones<float>({2, 3, 4})); }) ==
        "einsum(): dimension 0 covered by ellipsis in operand 1has size 2 which does not broadcast with previously "
        "seen ellipsis with size 5 for the respective dimension");
  CHECK(error_of([&] { einsum("....->", a); }) == "einsum(): found '.' for operand 0 for which an ellipsis was already found");
  CHECK(error_of([&] { einsum("ij->ij->", a); }) ==
        "einsum(): invalid subscript given at index 6 in the equation string, subscripts must be in [a-zA-Z]");
}

TEST_CASE("linalg: matrix_power, multi_dot and cholesky_solve match PyTorch, gradients included") {
  for (const auto& [tag, rtol] : {std::pair<std::string, double>{"f32", 1e-4}, {"f64", 1e-11}}) {
    auto run = [&](auto type) {
      using T = decltype(type);
      using V = std::vector<Tensor<T>>;
      const std::string p = "la3_" + tag + "_";
      test::check_forward_backward<T>(p + "matrix_power_3", 1, [](const V& v) { return linalg::matrix_power(v[0], 3); }, rtol);
      test::check_forward_backward<T>(p + "matrix_power_6", 1, [](const V& v) { return linalg::matrix_power(v[0], 6); }, rtol);
      test::check_forward_backward<T>(p + "matrix_power_m2", 1, [](const V& v) { return linalg::matrix_power(v[0], -2); }, rtol);
      test::check_forward_backward<T>(p + "multi_dot_4", 4, [](const V& v) { return linalg::multi_dot(v); }, rtol);
      test::check_forward_backward<T>(p + "multi_dot_vectors", 4, [](const V& v) { return linalg::multi_dot(v); }, rtol);
      test::check_forward_backward<T>(p + "cholesky_solve", 2, [](const V& v) { return cholesky_solve(v[0], v[1]); }, rtol);
      test::check_forward_backward<T>(p + "cholesky_solve_upper", 2,
                                      [](const V& v) { return cholesky_solve(v[0], v[1], true); }, rtol);
    };
    if (tag == "f32") run(float{});
    else run(double{});
  }
  // A^0 is the identity, A^1 a copy; integer matrices multiply too.
  const Tensor<double> a = tensor<double>({1, 2, 3, 4}, {2, 2});
  CHECK(equal(linalg::matrix_power(a, 0), eye<double>(2)));
  const Tensor<double> once = linalg::matrix_power(a, 1);
  CHECK(equal(once, a));
  CHECK(!once.is_alias_of(a));
  CHECK(linalg::matrix_power(tensor<int64_t>({1, 1, 1, 0}, {2, 2}), 10).to_vector() ==
        std::vector<int64_t>{89, 55, 55, 34});  // Fibonacci numbers
  CHECK(error_of([] { linalg::matrix_power(ones<float>({2, 3}), 2); }) ==
        "linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 matrices");
  CHECK(error_of([] { linalg::matrix_power(zeros<float>({3, 3}), -1); }) ==
        "linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the input matrix is "
        "singular.");
  CHECK(error_of([] { linalg::multi_dot(std::vector<Tensor<float>>{ones<float>({3, 4})}); }) ==
        "multi_dot(): expected at least 2 tensors but got 1");
  CHECK(error_of([] { linalg::multi_dot(std::vector<Tensor<float>>{ones<float>({2, 3}), ones<float>({4, 5})}); }) ==
        "multi_dot(): tensors 0 and 1 with shapes [2, 3] and [4, 5] cannot be multiplied");
  CHECK(error_of([] { linalg::multi_dot(std::vector<Tensor<float>>{ones<float>({2, 3, 3}), ones<float>({3, 5})}); }) ==
        "multi_dot(): the first tensor must be 1D or 2D but got 3D");
  CHECK(error_of([] { cholesky_solve(ones<float>({3, 2}), eye<float>(2)); }) ==
        "Incompatible matrix sizes for cholesky_solve: each A matrix is 2 by 2 but each b matrix is 3 by 2");
  CHECK(error_of([] { cholesky_solve(ones<float>({3}), eye<float>(3)); }) ==
        "b should have at least 2 dimensions, but has 1 dimensions instead");
}

TEST_CASE("addmv, addr, addbmm, baddbmm, tensordot, kron and logdet match PyTorch") {
  const auto m = test::golden<float>("ps_m"), v = test::golden<float>("ps_v"), c = test::golden<float>("ps_c");
  check_close(addmv(c, m, v, 0.5, 2), test::golden("ps_addmv"), 1e-5, 1e-5, "addmv");
  check_close(addmv(c.narrow(0, 0, 1), m.t().narrow(1, 0, 4).t(), v, 1, -1), test::golden("ps_addmv_t"), 1e-5, 1e-5,
              "addmv of a strided matrix, c of one element");
  check_close(addmv(full<float>({4}, NAN), m, v, 0), test::golden("ps_addmv_beta0"), 1e-5, 1e-5, "beta = 0 ignores NaN");
  const auto u = test::golden<float>("ps_u"), w = test::golden<float>("ps_w");
  check_close(addr(m, u, w, 2, 0.5), test::golden("ps_addr"), 1e-5, 1e-5, "addr");
  check_close(addr(c.narrow(0, 0, 1), u, w), test::golden("ps_addr_bcast"), 1e-5, 1e-5, "addr, c broadcast");
  const auto b1 = test::golden<float>("ps_b1"), b2 = test::golden<float>("ps_b2"), cm = test::golden<float>("ps_cm");
  check_close(addbmm(cm, b1, b2, 0.5, 1.5), test::golden("ps_addbmm"), 1e-5, 1e-5, "addbmm");
  check_close(baddbmm(cm, b1, b2, -1, 0.25), test::golden("ps_baddbmm"), 1e-5, 1e-5, "baddbmm, c broadcast");
  check_close(baddbmm(full<float>({3, 4, 2}, NAN), b1, b2, 0), test::golden("ps_baddbmm_beta0"), 1e-5, 1e-5,
              "baddbmm, beta = 0 ignores NaN");
  const auto ints = test::golden<int64_t>("ps_ints");
  check_close(addmv(tensor<int64_t>({1, 2}), ints, tensor<int64_t>({3, -1, 2}), 2, 3), test::golden("ps_addmv_int"), 0, 0,
              "integer addmv");

  const auto x3 = test::golden<float>("ps_x3"), y3 = test::golden<float>("ps_y3");
  check_close(tensordot(x3, y3, {1, 2}, {1, 0}), test::golden("ps_td_lists"), 1e-5, 1e-5, "tensordot over two dims");
  check_close(tensordot(x3, y3, 1), test::golden("ps_td_1"), 1e-5, 1e-5, "tensordot over the last and first dim");
  check_close(tensordot(x3.narrow(2, 0, 2), y3.select(0, 0).narrow(0, 0, 2), 0), test::golden("ps_td_0"), 1e-6, 1e-6,
              "tensordot over no dims: the outer product");
  check_close(tensordot(x3, y3.transpose(0, 1), {-2}, {0}), test::golden("ps_td_neg"), 1e-5, 1e-5,
              "tensordot with a negative dim");
  check_close(kron(test::golden<float>("ps_ka"), test::golden<float>("ps_kb")), test::golden("ps_kron"), 0, 0, "kron");
  const auto kron_int = kron(ints, tensor<float>({1.f, 10.f}));
  static_assert(std::is_same_v<decltype(kron_int), const Tensor<float>>, "kron promotes");
  check_close(kron_int, test::golden("ps_kron_int"), 0, 0, "kron of an integer and a float tensor");

  const auto sq = test::golden<double>("ps_sq");
  check_close(logdet(sq), test::golden("ps_logdet"), 1e-10, 1e-10, "logdet: NaN for a negative determinant, -inf for 0");
  check_close(logdet(test::golden<double>("ps_spd")), test::golden("ps_logdet_spd"), 1e-12, 1e-12, "logdet");

  CHECK(error_of([&] { addmv(c.narrow(0, 0, 3), m, v); }) == "size mismatch, got 3, 4x5,5");
  CHECK(error_of([&] { addmv(c, m, tensor<float>({1.f})); }) == "size mismatch, got 4, 4x5,1");
  CHECK(error_of([&] { addmv(c, v, v); }) == "vector + matrix @ vector expected, got 1, 1, 1");
  CHECK(error_of([&] { addr(m, m, w); }) == "addr: Expected 1-D argument vec1, but got 2-D");
  CHECK(error_of([&] { addbmm(cm, b1, b2.narrow(0, 0, 2)); }) ==
        "batch1 and batch2 must have same number of batches, got 3 and 2");
  CHECK(error_of([&] { addbmm(cm, b1, b1); }) == "Incompatible matrix sizes for bmm (4x6 and 4x6)");
  CHECK(error_of([&] { addbmm(cm, m, b2); }) == "batch1 must be a 3D tensor");
  CHECK(error_of([&] { tensordot(x3, y3, {1, 2}, {1}); }) == "both dimension lists should have same length");
  CHECK(error_of([&] { tensordot(x3, y3, {1}, {0}); }) ==
        "contracted dimensions need to match, but first has size 3 in dim 1 and second has size 4 in dim 0");
  CHECK(error_of([&] { tensordot(x3, y3, -1); }) == "tensordot expects dims >= 0, but got dims=-1");
  CHECK(error_of([&] { logdet(m); }) == "logdet: A must be batches of square matrices, but they are 4 by 5 matrices");
}

TEST_CASE("cross, linalg::cross and inner match PyTorch") {
  const auto a = test::golden<float>("iw_a"), b = test::golden<float>("iw_b");
  test::check_close(cross(a, b), test::golden("iw_cross"), 1e-6, 1e-7, "cross along the first dim of size 3");
  test::check_close(linalg::cross(a.transpose(1, 2), b.transpose(1, 2)), test::golden("iw_linalg_cross"), 1e-6, 1e-7,
                    "linalg::cross of transposed operands, broadcast");
  test::check_close(inner(test::golden<float>("iw_x"), test::golden<float>("iw_s2")), test::golden("iw_inner"), 1e-6,
                    1e-6, "inner of matrices");
  test::check_close(inner(test::golden<float>("iw_p"), test::golden<float>("iw_q")), test::golden("iw_inner_vec"),
                    1e-6, 1e-6, "inner of vectors");
  CHECK(test::error_of([] { linalg::cross(ones<float>({2, 4}), ones<float>({2, 4})); }) ==
        "linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4");
  CHECK(test::error_of([] { linalg::cross(ones<float>({2, 3}), ones<float>({3})); }) ==
        "linalg.cross: inputs must have the same number of dimensions.");
  CHECK(test::error_of([] { cross(ones<float>({2, 2}), ones<float>({2, 2})); }) == "no dimension of size 3 in input");
  CHECK(test::error_of([] { inner(ones<float>({2, 3}), ones<float>({4})); }) ==
        "inner() the last dimension must match on both input tensors but got shapes [2, 3] and [4]");
}

namespace {
// V with each column's largest-magnitude entry made positive: eigenvectors
// are unique up to sign, and this picks one.
Tensor<double> sign_fixed(const Tensor<double>& v) {
  const Tensor<double> flat = v.reshape({-1, v.size(-2), v.size(-1)}).contiguous();
  Tensor<double> out = flat.clone();
  const int64_t n = v.size(-1);
  for (int64_t b = 0; b < flat.size(0); ++b)
    for (int64_t j = 0; j < n; ++j) {
      int64_t at = 0;
      for (int64_t i = 0; i < n; ++i)
        if (std::abs(flat(b, i, j)) > std::abs(flat(b, at, j))) at = i;
      if (flat(b, at, j) < 0)
        for (int64_t i = 0; i < n; ++i) out(b, i, j) = -flat(b, i, j);
    }
  return out.reshape(v.sizes());
}
}  // namespace

TEST_CASE("linalg::qr matches PyTorch in every mode, gradients included") {
  for (const std::string tag : {"f32", "f64"}) {
    const bool f32 = tag == "f32";
    const double tol = f32 ? 2e-5 : 1e-12;
    for (const std::string shape : {"5x3", "4x4", "3x5", "2x4x3"}) {
      const std::string name = "qr_" + tag + "_" + shape;
      const auto a64 = test::golden(name + "_both_in0");
      for (const std::string mode : {"reduced", "complete", "r"}) {
        INFO(name << " mode " << mode);
        auto check = [&](const auto& a) {
          const auto [q, r] = linalg::qr(a, mode);
          test::check_close(q, test::golden(name + "_" + mode + "_q"), tol, tol, "Q");
          test::check_close(r, test::golden(name + "_" + mode + "_r"), tol, tol, "R");
        };
        if (f32) check(Tensor<float>(cast<float>(a64)));
        else check(a64);
      }
      auto run = [&](auto zero) {
        using T = decltype(zero);
        test::check_forward_backward<T>(name + "_both", 1, [](const std::vector<Tensor<T>>& x) {
          const auto [q, r] = linalg::qr(x[0]);
          return cat({q.reshape({-1}), r.reshape({-1})});
        }, tol * 10);
        test::check_forward_backward<T>(name + "_qonly", 1, [](const std::vector<Tensor<T>>& x) {
          return std::get<0>(linalg::qr(x[0]));
        }, tol * 10);
        test::check_forward_backward<T>(name + "_ronly", 1, [](const std::vector<Tensor<T>>& x) {
          return std::get<1>(linalg::qr(x[0]));
        }, tol * 10);
      };
      if (f32) run(0.f);
      else run(0.0);
    }
  }
  // Q R = A and Q^T Q = I for a larger, batched A (hand-checkable identities).
  manual_seed(4);
  const Tensor<double> a = randn<double>({3, 40, 25});
  const auto [q, r] = linalg::qr(a);
  CHECK(Tensor<double>(abs(matmul(q, r) - a)).amax().item() < 1e-13);
  CHECK(Tensor<double>(abs(matmul(q.transpose(-1, -2), q) - eye<double>(25))).amax().item() < 1e-14);
  CHECK(Tensor<double>(abs(tril(r, -1))).amax().item() == 0);
  // Second derivatives (recorded backward through both factors).
  using V = std::vector<Tensor<double>>;
  CHECK(autograd::gradgradcheck([](const V& x) {
    const auto [q2, r2] = linalg::qr(x[0]);
    return Tensor<double>(sum(q2 * q2 * q2) + sum(r2 * r2 * r2));
  }, V{randn<double>({4, 3})}));
  CHECK(autograd::gradgradcheck([](const V& x) { return Tensor<double>(sum(exp(std::get<1>(linalg::qr(x[0]))))); },
                                V{randn<double>({2, 4})}));

  CHECK(test::error_of([] { linalg::qr(ones<double>({3})); }) ==
        "linalg.qr: The input tensor A must have at least 2 dimensions.");
  CHECK(test::error_of([] { linalg::qr(ones<double>({3, 3}), "full"); }) ==
        "qr received unrecognized mode 'full' but expected one of 'reduced' (default), 'r', or 'complete'");
  const Tensor<double> leaf = randn<double>({4, 3}).requires_grad_();
  CHECK(test::error_of([&] { std::get<0>(linalg::qr(leaf, "complete")).sum().backward(); }) ==
        "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
  CHECK(test::error_of([&] { std::get<1>(linalg::qr(leaf, "r")).sum().backward(); }) ==
        "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
        "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
  CHECK(std::get<0>(linalg::qr(leaf)).grad_fn_name() == "LinalgQrBackward0");
}

TEST_CASE("geqrf, householder_product (orgqr) and ormqr match PyTorch, householder_product's gradients included") {
  for (const std::string tag : {"f32", "f64"}) {
    const bool f32 = tag == "f32";
    const double tol = f32 ? 2e-5 : 1e-12;
    for (const std::string shape : {"5x3", "4x4", "3x5", "2x4x3"}) {
      const std::string name = "hh_" + tag + "_" + shape;
      INFO(name);
      auto run = [&](auto zero) {
        using T = decltype(zero);
        const auto golden = [&](const std::string& what) { return Tensor<T>(cast<T>(test::golden(name + "_" + what))); };
        const auto [h, tau] = geqrf(golden("a"));
        test::check_close(h, golden("geqrf"), tol, tol, "geqrf");
        test::check_close(tau, golden("tau"), tol, tol, "tau");
        // ormqr from PyTorch's factors (so that only ormqr is measured), on both sides, Q and Q^T.
        for (const bool left : {true, false})
          for (const bool transpose : {false, true}) {
            const std::string side = std::string(left ? "left" : "right") + (transpose ? "_t" : "");
            test::check_close(ormqr(golden("geqrf"), golden("tau"), golden("ormqr_" + side + "_c"), left, transpose),
                              golden("ormqr_" + side), tol, tol, "ormqr " + side);
          }
        if (h.size(-2) < h.size(-1)) return;
        for (const std::string hp : {"_hp", "_hp_short"}) {
          // Unrecorded (a plain loop) and recorded (ops whose gradients are the formula's).
          const auto plain = linalg::householder_product(test::golden<T>(name + hp + "_in0"), test::golden<T>(name + hp + "_in1"));
          test::check_close(plain, test::golden(name + hp + "_out"), tol, tol, "plain " + hp);
          test::check_forward_backward<T>(name + hp, 2, [](const std::vector<Tensor<T>>& x) {
            return linalg::householder_product(x[0], x[1]);
          }, tol * 10);
        }
      };
      if (f32) run(0.f);
      else run(0.0);
    }
  }
  // orgqr is householder_product; Q from geqrf's factors is linalg::qr's Q.
  manual_seed(6);
  const Tensor<double> a = randn<double>({3, 7, 4});
  const auto [h, tau] = geqrf(a);
  CHECK(allclose(orgqr(h, tau), std::get<0>(linalg::qr(a)), 1e-14, 1e-14));
  CHECK(allclose(ormqr(h, tau, eye<double>(7).expand({3, 7, 7})), std::get<0>(linalg::qr(a, "complete")), 1e-14, 1e-14));
  // Second derivatives through the recorded product.
  using V = std::vector<Tensor<double>>;
  CHECK(autograd::gradgradcheck([](const V& x) {
    const Tensor<double> q = linalg::householder_product(x[0], x[1]);
    return Tensor<double>(sum(q * q * q));
  }, V{randn<double>({4, 3}), randn<double>({2})}));

  // PyTorch's messages.
  CHECK(test::error_of([] { geqrf(ones<double>({3})); }) == "torch.geqrf: input must have at least 2 dimensions.");
  CHECK(test::error_of([] { linalg::householder_product(ones<double>({3, 4}), ones<double>({3})); }) ==
        "torch.linalg.householder_product: input.shape[-2] must be greater than or equal to input.shape[-1]");
  CHECK(test::error_of([] { linalg::householder_product(ones<double>({4, 2}), ones<double>({3})); }) ==
        "torch.linalg.householder_product: input.shape[-1] must be greater than or equal to tau.shape[-1]");
  CHECK(test::error_of([] { linalg::householder_product(ones<double>({2, 4, 3}), ones<double>({3, 3})); }) ==
        "torch.linalg.householder_product: Expected batch dimensions of tau to be equal to input.shape[:-2], but got [3]");
  CHECK(test::error_of([] { ormqr(ones<double>({4}), ones<double>({3}), ones<double>({4, 2})); }) ==
        "torch.ormqr: input must have at least 2 dimensions.");
  CHECK(test::error_of([] { ormqr(ones<double>({4, 3}), ones<double>({3}), ones<double>({4})); }) ==
        "torch.ormqr: other must have at least 2 dimensions.");
  CHECK(test::error_of([] { ormqr(ones<double>({4, 3}), ones<double>({5}), ones<double>({4, 2})); }) ==
        "torch.ormqr: other.shape[-2] must be greater than or equal to tau.shape[-1]");
  CHECK(test::error_of([] { ormqr(ones<double>({4, 3}), ones<double>({3}), ones<double>({3, 2})); }) ==
        "torch.ormqr: other.shape[-2] must be equal to input.shape[-2]");
  CHECK(test::error_of([] { ormqr(ones<double>({4, 3}), ones<double>({3}), ones<double>({2, 3}), false); }) ==
        "torch.ormqr: other.shape[-1] must be equal to input.shape[-2]");
  const Tensor<double> leaf = randn<double>({4, 3}).requires_grad_();
  CHECK(test::error_of([&] { geqrf(leaf); }) ==
        "autograd does not record geqrf (PyTorch 1.13 has no derivative for it), and an input requires grad; compute "
        "it under NoGradGuard or on detach()ed inputs");
}

TEST_CASE("linalg::eigh and eigvalsh match PyTorch, gradients included") {
  for (const std::string tag : {"f32", "f64"}) {
    const bool f32 = tag == "f32";
    // Jacobi in double rounds a float result once; LAPACK's float algorithm
    // is within a few float ulps of the matrix's norm.
    const double tol = f32 ? 1e-5 : 1e-12;
    for (const std::string shape : {"1x1", "4x4", "7x7", "2x3x3"}) {
      const std::string name = "eigh_" + tag + "_" + shape;
      INFO(name);
      const auto a64 = test::golden(name + "_grad_in0");
      auto check = [&](const auto& a) {
        const auto [values, vectors] = linalg::eigh(a);
        test::check_close(values, test::golden(name + "_values"), tol, tol, "eigenvalues");
        test::check_close(sign_fixed(cast<double>(vectors)), sign_fixed(test::golden(name + "_vectors")), tol * 10,
                          tol * 10, "eigenvectors, up to sign");
        test::check_close(linalg::eigvalsh(triu(a), "U"), test::golden(name + "_values_upper"), tol, tol,
                          "eigvalsh of the upper triangle");
      };
      if (f32) check(Tensor<float>(cast<float>(a64)));
      else check(a64);
      auto run = [&](auto zero) {
        using T = decltype(zero);
        test::check_forward_backward<T>(name + "_grad", 1, [](const std::vector<Tensor<T>>& x) {
          const auto [values, vectors] = linalg::eigh(x[0]);
          return cat({values.reshape({-1}), Tensor<T>(vectors * vectors).reshape({-1})});
        }, tol * 100);
      };
      if (f32) run(0.f);
      else run(0.0);
    }
  }
  manual_seed(6);
  const Tensor<double> m = randn<double>({2, 30, 30}), a = m + m.transpose(-1, -2);
  const auto [values, vectors] = linalg::eigh(a);
  CHECK(Tensor<double>(abs(matmul(vectors * values.unsqueeze(-2), vectors.transpose(-1, -2)) - a)).amax().item() <
        1e-12);
  CHECK(Tensor<double>(abs(matmul(vectors.transpose(-1, -2), vectors) - eye<double>(30))).amax().item() < 1e-13);
  using V = std::vector<Tensor<double>>;
  const auto sym = [](const Tensor<double>& x) { return Tensor<double>((x + x.transpose(-1, -2)) * 0.5); };
  CHECK(autograd::gradgradcheck([&](const V& x) {
    const auto [l, v] = linalg::eigh(sym(x[0]));
    return Tensor<double>(sum(l * l * l) + sum(v * v * v * v));
  }, V{randn<double>({4, 4})}));
  CHECK(autograd::gradgradcheck([&](const V& x) { return Tensor<double>(sum(exp(linalg::eigvalsh(sym(x[0]))))); },
                                V{randn<double>({3, 3})}));

  CHECK(test::error_of([] { linalg::eigh(ones<double>({3, 4})); }) ==
        "linalg.eigh: A must be batches of square matrices, but they are 3 by 4 matrices");
  CHECK(test::error_of([] { linalg::eigh(ones<double>({3, 3}), "X"); }) ==
        "Expected UPLO argument to be 'L' or 'U', but got X");
  CHECK(test::error_of([] { linalg::eigh(full<double>({3, 3}, NAN)); }) ==
        "linalg.eigh: The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
        "repeated eigenvalues.");
  CHECK(std::get<0>(linalg::eigh(ones<double>({0, 0}))).numel() == 0);
}

TEST_CASE("linalg::svd and svdvals match PyTorch, gradients included") {
  for (const std::string tag : {"f32", "f64"}) {
    const bool f32 = tag == "f32";
    const double tol = f32 ? 1e-5 : 1e-12;
    for (const std::string shape : {"5x3", "4x4", "3x5", "2x4x2"}) {
      const std::string name = "svd_" + tag + "_" + shape;
      INFO(name);
      const auto a64 = test::golden(name + "_grad_in0");
      auto check = [&](const auto& a) {
        const auto [u, s, vh] = linalg::svd(a, false);
        test::check_close(s, test::golden(name + "_s"), tol, tol, "singular values");
        test::check_close(linalg::svdvals(a), test::golden(name + "_svdvals"), tol, tol, "svdvals");
        // Each pair (u_i, v_i) is unique up to one sign: compare u_i v_i^T.
        const auto pairs = [](const Tensor<double>& uu, const Tensor<double>& vv) {
          return Tensor<double>(uu.unsqueeze(-1) * vv.unsqueeze(-3));
        };
        test::check_close(pairs(cast<double>(u), cast<double>(vh)),
                          pairs(test::golden(name + "_u"), test::golden(name + "_vh")), tol * 10, tol * 10,
                          "singular vectors, as the products u_i v_i^T");
      };
      if (f32) check(Tensor<float>(cast<float>(a64)));
      else check(a64);
      auto run = [&](auto zero) {
        using T = decltype(zero);
        test::check_forward_backward<T>(name + "_grad", 1, [](const std::vector<Tensor<T>>& x) {
          const auto [u, s, vh] = linalg::svd(x[0], false);
          return cat({s.reshape({-1}), Tensor<T>(u * u).reshape({-1}), Tensor<T>(vh * vh).reshape({-1})});
        }, tol * 100);
      };
      if (f32) run(0.f);
      else run(0.0);
    }
  }
  // full_matrices: square orthogonal factors; a rank-1 matrix's U is
  // completed to an orthonormal basis.
  manual_seed(9);
  const Tensor<double> low = matmul(randn<double>({5, 1}), randn<double>({1, 3}));
  const auto [u, s, vh] = linalg::svd(low);
  CHECK(u.sizes() == Shape{5, 5});
  CHECK(vh.sizes() == Shape{3, 3});
  CHECK(Tensor<double>(abs(matmul(u.t(), u) - eye<double>(5))).amax().item() < 1e-14);
  CHECK(Tensor<double>(abs(matmul(vh, vh.t()) - eye<double>(3))).amax().item() < 1e-14);
  CHECK(Tensor<double>(abs(matmul(u.narrow(1, 0, 3) * s.unsqueeze(0), vh) - low)).amax().item() < 1e-14);
  CHECK(s(1) < 1e-15);
  using V = std::vector<Tensor<double>>;
  CHECK(autograd::gradgradcheck([](const V& x) {
    const auto [u2, s2, vh2] = linalg::svd(x[0], false);
    return Tensor<double>(sum(u2 * u2 * u2) + sum(vh2 * vh2 * vh2) + sum(s2 * s2 * s2));
  }, V{randn<double>({4, 3})}));
  CHECK(autograd::gradcheck([](const V& x) {
    const auto [u2, s2, vh2] = linalg::svd(x[0], true);
    return Tensor<double>(u2.narrow(-1, 0, 2) * 2.0);  // full_matrices: the first k columns count
  }, V{randn<double>({2, 4, 2})}));
  CHECK(test::error_of([] { linalg::svd(ones<double>({3})); }) ==
        "linalg.svd: The input tensor A must have at least 2 dimensions.");
  CHECK(test::error_of([] { linalg::svd(full<double>({2, 2}, NAN)); }) ==
        "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values.");
}

TEST_CASE("linalg norms, cond, matrix_rank and pinv match PyTorch") {
  const auto a = test::golden("ln_a");
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double tol = 1e-12;
  test::check_close(linalg::matrix_norm(a), test::golden("ln_matrix_fro"), tol, tol, "fro");
  test::check_close(linalg::matrix_norm(a, "fro", {2, 0}, true), test::golden("ln_matrix_fro_dims"), tol, tol,
                    "fro over dims (2, 0)");
  test::check_close(linalg::matrix_norm(a, "nuc"), test::golden("ln_matrix_nuc"), tol, tol, "nuc");
  test::check_close(linalg::matrix_norm(a, "nuc", {2, 0}, true), test::golden("ln_matrix_nuc_dims"), tol, tol,
                    "nuc over dims (2, 0)");
  for (double ord : {1.0, -1.0, 2.0, -2.0, inf, -inf}) {
    std::string tag = ord == inf ? "inf" : ord == -inf ? "minf" : (ord < 0 ? "m" : "") + std::to_string(int(std::abs(ord)));
    INFO("ord " << ord);
    test::check_close(linalg::matrix_norm(a, ord), test::golden("ln_matrix_" + tag), tol, tol, "matrix_norm");
    test::check_close(linalg::matrix_norm(a, ord, {2, 0}, true), test::golden("ln_matrix_" + tag + "_dims"), tol, tol,
                      "matrix_norm over dims (2, 0)");
  }
  test::check_close(linalg::vector_norm(a, 3, {0, 2}), test::golden("ln_vector_3"), tol, tol, "vector_norm");
  test::check_close(linalg::norm(a), test::golden("ln_norm"), tol, tol, "norm");
  test::check_close(linalg::norm(a, std::nullopt, Shape{1}), test::golden("ln_norm_dim"), tol, tol, "norm over a dim");
  test::check_close(linalg::norm(a.select(0, 0), 2.0), test::golden("ln_norm_matrix_2"), tol, tol, "norm of a matrix");
  test::check_close(linalg::norm(a.select(0, 0).select(0, 0), inf), test::golden("ln_norm_vector_inf"), tol, tol,
                    "norm of a vector");
  const Tensor<double> sq = a.narrow(2, 0, 3);
  test::check_close(linalg::cond(sq), test::golden("ln_cond_None"), 1e-10, 0, "cond");
  test::check_close(linalg::cond(sq, 2.0), test::golden("ln_cond_2"), 1e-10, 0, "cond 2");
  test::check_close(linalg::cond(sq, -2.0), test::golden("ln_cond_m2"), 1e-10, 0, "cond -2");
  test::check_close(linalg::cond(sq, "fro"), test::golden("ln_cond_fro"), 1e-10, 0, "cond fro");
  test::check_close(linalg::cond(sq, "nuc"), test::golden("ln_cond_nuc"), 1e-10, 0, "cond nuc");
  test::check_close(linalg::cond(sq, 1.0), test::golden("ln_cond_1"), 1e-10, 0, "cond 1");
  test::check_close(linalg::cond(sq, -inf), test::golden("ln_cond_minf"), 1e-10, 0, "cond -inf");
  const auto low = test::golden("ln_low");
  CHECK(equal(linalg::matrix_rank(stack({low, eye<double>(3), zeros<double>({3, 3})})), test::golden<int64_t>("ln_rank")));
  CHECK(equal(linalg::matrix_rank(a, 1.0, 0.0), test::golden<int64_t>("ln_rank_atol")));
  test::check_close(linalg::pinv(a), test::golden("ln_pinv"), 1e-10, 1e-12, "pinv");
  test::check_close(linalg::pinv(low), test::golden("ln_pinv_low"), 1e-10, 1e-12, "pinv of a rank-2 matrix");
  test::check_forward_backward<double>("ln_grad", 1, [](const std::vector<Tensor<double>>& x) {
    return cat({linalg::matrix_norm(x[0], "nuc"), linalg::matrix_norm(x[0], 2.0), linalg::matrix_norm(x[0], -inf),
                linalg::cond(x[0]).reshape({-1}), linalg::pinv(x[0]).reshape({-1})});
  }, 1e-9);
  CHECK(test::error_of([&] { linalg::matrix_norm(a, 3.0); }) == "linalg.matrix_norm: Order 3 not supported.");
  CHECK(test::error_of([&] { linalg::matrix_norm(a, "abc"); }) == "linalg.matrix_norm: Order abc not supported.");
  CHECK(test::error_of([&] { linalg::matrix_norm(a, "fro", {0, 0}); }) ==
        "linalg.matrix_norm: dims must be different. Got (0, 0)");
  CHECK(test::error_of([&] { linalg::norm(a, 2.0); }) ==
        "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.");
  CHECK(test::error_of([] { linalg::cond(ones<double>({2, 3}), 1.0); }) ==
        "linalg.cond(ord=1): A must be batches of square matrices, but they are 2 by 3 matrices");
}

TEST_CASE("linalg.matrix_exp and linalg.vecdot, with PyTorch's values and gradients") {
  using VD = std::vector<Tensor<double>>;
  using VF = std::vector<Tensor<float>>;
  for (const char* name : {"small", "large", "batch"}) {
    test::check_forward_backward<double>(std::string("me_f64_") + name, 1,
                                         [](const VD& v) { return linalg::matrix_exp(v[0]); }, 1e-10);
    test::check_forward_backward<float>(std::string("me_f32_") + name, 1,
                                        [](const VF& v) { return linalg::matrix_exp(v[0]); }, 2e-5, 2e-6);
  }
  // By hand: a nilpotent matrix's series ends, exp([[0, 1], [0, 0]]) = [[1, 1], [0, 1]]; exp(0) = I.
  CHECK(equal(linalg::matrix_exp(tensor<double>({0, 1, 0, 0}).reshape({2, 2})), tensor<double>({1, 1, 0, 1}).reshape({2, 2})));
  CHECK(equal(linalg::matrix_exp(zeros<double>({3, 3})), eye<double>(3)));
  CHECK(linalg::matrix_exp(zeros<float>({2, 0, 0})).sizes() == Shape{2, 0, 0});
  // exp(A) exp(-A) = I, and the second derivative through the recorded backward agrees with differences.
  const auto a = test::golden<double>("me_f64_large_in0");
  check_close(matmul(linalg::matrix_exp(a), linalg::matrix_exp(Tensor<double>(-a))), eye<double>(4), 0, 1e-9,
              "exp(A) exp(-A)");
  auto small = test::golden<double>("me_f64_small_in0").requires_grad_();
  CHECK(autograd::gradgradcheck([](const std::vector<Tensor<double>>& v) { return linalg::matrix_exp(v[0]); }, {small}));
  CHECK(error_of([] { (void)linalg::matrix_exp(zeros<double>({2, 3})); }) ==
        "linalg.matrix_exp: A must be batches of square matrices, but they are 2 by 3 matrices");
  test::check_forward_backward<double>("me_vecdot", 2, [](const VD& v) { return linalg::vecdot(v[0], v[1]); }, 1e-12);
  test::check_forward_backward<double>("me_vecdot_dim0", 2, [](const VD& v) { return linalg::vecdot(v[0], v[1], 0); },
                                       1e-12);
}

TEST_CASE("inv_ex, cholesky_ex and solve_ex report failures per matrix instead of throwing") {
  // PyTorch 1.13 on these: info [0, 2] for each (the zero pivot, the leading minor of order 2).
  const auto singular = stack({eye<double>(2), tensor<double>({1, 2, 2, 4}).reshape({2, 2})});
  const auto [inverse, inv_info] = linalg::inv_ex(singular);
  CHECK(equal(inv_info, tensor<int32_t>({0, 2})));
  CHECK(equal(inverse.select(0, 0), eye<double>(2)));
  const auto indefinite = stack({Tensor<double>(eye<double>(2) * 4.), tensor<double>({1, 2, 2, 1}).reshape({2, 2})});
  const auto [factor, chol_info] = linalg::cholesky_ex(indefinite);
  CHECK(equal(chol_info, tensor<int32_t>({0, 2})));
  CHECK(equal(factor.select(0, 0), Tensor<double>(eye<double>(2) * 2.)));
  const auto [x, solve_info] = linalg::solve_ex(singular, ones<double>({2, 2, 1}));
  CHECK(equal(solve_info, tensor<int32_t>({0, 2})));
  CHECK(equal(x.select(0, 0), ones<double>({2, 1})));
  // A single matrix: a 0-d info; the results agree with the throwing forms.
  const auto spd = tensor<double>({4, 2, 2, 3}).reshape({2, 2});
  const auto [l, ok] = linalg::cholesky_ex(spd, /*upper=*/true);
  CHECK(ok.dim() == 0);
  CHECK(ok.item() == 0);
  CHECK(equal(l, linalg::cholesky(spd, true)));
  CHECK(equal(std::get<0>(linalg::inv_ex(spd)), linalg::inv(spd)));
  // check_errors: PyTorch's messages, naming the _ex function.
  CHECK(error_of([&] { (void)linalg::inv_ex(singular, true); }) ==
        "linalg.inv_ex: (Batch element 1): The diagonal element 2 is zero, the inversion could not be completed "
        "because the input matrix is singular.");
  CHECK(error_of([&] { (void)linalg::cholesky_ex(indefinite.select(0, 1), false, true); }) ==
        "linalg.cholesky_ex: The factorization could not be completed because the input is not positive-definite (the "
        "leading minor of order 2 is not positive-definite).");
  CHECK(error_of([&] { (void)linalg::solve_ex(singular, ones<double>({2, 2, 1}), true); }) ==
        "torch.linalg.solve_ex: (Batch element 1): The solver failed because the input matrix is singular.");
  // The gradients are the throwing forms' (where the matrices are invertible).
  auto a = spd.clone().requires_grad_();
  sum(std::get<0>(linalg::inv_ex(a))).backward();
  auto b = spd.clone().requires_grad_();
  sum(linalg::inv(b)).backward();
  CHECK(equal(a.grad(), b.grad()));
}

namespace {

// P, L and U of each matrix side by side in one row, as make_golden.py's
// linalg_lu concatenates them.
template <class T>
Tensor<T> flat_plu(const std::tuple<Tensor<T>, Tensor<T>, Tensor<T>>& plu, int64_t batch_dims) {
  const auto rows = [&](const Tensor<T>& t) {
    Shape s(t.sizes().begin(), t.sizes().begin() + batch_dims);
    s.push_back(-1);
    return t.reshape(s);
  };
  return cat({rows(std::get<0>(plu)), rows(std::get<1>(plu)), rows(std::get<2>(plu))}, -1);
}

template <class T>
void check_lu_goldens(const std::string& tag, double rtol, double of_largest) {
  using V = std::vector<Tensor<T>>;
  for (const std::string shape : {"4x4", "5x3", "3x5", "2x3x3"}) {
    const std::string name = "lu_" + tag + "_" + shape;
    CAPTURE(name);
    const int64_t batch_dims = shape == "2x3x3" ? 1 : 0;
    const auto pivots = test::golden<int32_t>(name + "_pivots");
    CHECK(equal(std::get<1>(linalg::lu_factor(test::golden<T>(name + "_factor_in0"))), pivots));
    test::check_forward_backward<T>(name + "_factor", 1, [](const V& v) { return std::get<0>(linalg::lu_factor(v[0])); },
                                    rtol, of_largest);
    test::check_forward_backward<T>(name + "_lu", 1, [&](const V& v) { return flat_plu(linalg::lu(v[0]), batch_dims); },
                                    rtol, of_largest);
    test::check_forward_backward<T>(name + "_lu_l", 1, [](const V& v) { return std::get<1>(linalg::lu(v[0])); }, rtol,
                                    of_largest);
    test::check_forward_backward<T>(name + "_lu_u", 1, [](const V& v) { return std::get<2>(linalg::lu(v[0])); }, rtol,
                                    of_largest);
    test::check_forward_backward<T>(name + "_unpack", 1,
                                    [&](const V& v) { return flat_plu(lu_unpack(v[0], pivots), batch_dims); }, rtol,
                                    of_largest);
  }
  const auto pivots = test::golden<int32_t>("lu_" + tag + "_solve_pivots");
  for (const bool left : {true, false})
    for (const bool adjoint : {false, true})
      test::check_forward_backward<T>(
          "lu_" + tag + "_solve_" + std::to_string(int(left)) + std::to_string(int(adjoint)), 2,
          [&](const V& v) { return linalg::lu_solve(v[0], pivots, v[1], left, adjoint); }, rtol, of_largest);
  test::check_forward_backward<T>("lu_" + tag + "_old_solve", 2, [&](const V& v) { return lu_solve(v[0], v[1], pivots); },
                                  rtol, of_largest);
}

}  // namespace

TEST_CASE("linalg.lu_factor, lu, lu_solve and lu_unpack, with PyTorch's factors, pivots and gradients") {
  check_lu_goldens<double>("f64", 1e-10, 0);
  check_lu_goldens<float>("f32", 1e-4, 1e-5);

  // A singular matrix: lu_factor_ex reports U's first zero (1-based) and
  // factors as LAPACK does; lu factors it; lu_factor throws.
  const auto singular = test::golden<double>("lu_singular_in");
  const auto [packed, pivots, info] = linalg::lu_factor_ex(singular);
  check_close(packed, test::golden<double>("lu_singular_packed"), 1e-15, 1e-15, "singular factors");
  CHECK(equal(pivots, test::golden<int32_t>("lu_singular_pivots")));
  CHECK(info.item() == test::golden<int32_t>("lu_singular_info").item());
  const auto [p, l, u] = linalg::lu(singular);
  check_close(matmul(p, matmul(l, u)), singular, 0, 1e-15, "P L U of a singular matrix");
  CHECK(error_of([&] { (void)linalg::lu_factor(singular); }) ==
        "torch.linalg.lu_factor: U[3,3] is zero and using it on lu_solve would result in a division by zero. If you "
        "still want to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)");

  // Blocked factorizations (panels of 32 columns) of tall and wide matrices:
  // P L U = A, |L| <= 1 (partial pivoting), P a permutation; and lu_solve
  // agrees with linalg.solve.
  manual_seed(11);
  for (const Shape& shape : {Shape{70, 45}, Shape{45, 100}, Shape{2, 80, 80}}) {
    CAPTURE(shape);
    const Tensor<double> a = randn<double>(shape);
    const auto [pm, lm, um] = linalg::lu(a);
    check_close(matmul(pm, matmul(lm, um)), a, 0, 1e-12, "P L U");
    CHECK(max(abs(lm)).item() <= 1.0);
    CHECK(equal(sum(pm, Shape{-1}), ones<double>(Shape(pm.sizes().begin(), pm.sizes().end() - 1))));
    CHECK(equal(sum(pm, Shape{-2}), ones<double>(Shape(pm.sizes().begin(), pm.sizes().end() - 1))));
  }
  const Tensor<double> a = Tensor<double>(randn<double>({100, 100}) + 10.0 * eye<double>(100)), b = randn<double>({100, 7});
  const auto [lu100, piv100] = linalg::lu_factor(a);
  check_close(linalg::lu_solve(lu100, piv100, b), linalg::solve(a, b), 1e-12, 1e-12, "lu_solve against solve");
  check_close(linalg::lu_solve(lu100, piv100, b, true, true), linalg::solve(a.t(), b), 1e-12, 1e-12, "adjoint");

  // Empty matrices; lu_unpack without data or pivots.
  const auto [p30, l30, u30] = linalg::lu(zeros<double>({3, 0}));
  CHECK(equal(p30, eye<double>(3)));
  CHECK((l30.sizes() == Shape{3, 0} && u30.sizes() == Shape{0, 0}));
  CHECK(std::get<0>(linalg::lu_factor(zeros<float>({0, 3}))).sizes() == Shape{0, 3});
  const auto [p_only, l_none, u_none] = lu_unpack(lu100, piv100, false);
  CHECK((p_only.sizes() == Shape{100, 100} && l_none.sizes() == Shape{0} && u_none.sizes() == Shape{0}));
  CHECK(std::get<0>(lu_unpack(lu100, piv100, true, false)).sizes() == Shape{0});

  // Without pivoting, by hand: [[2, 1], [4, 3]] = [[1, 0], [2, 1]] [[2, 1], [0, 1]], where
  // partial pivoting would swap the rows; pivots 1, 2 and P = I. On a larger
  // matrix with a dominant diagonal, L U = A with no permutation.
  const Tensor<double> two = tensor<double>({2, 1, 4, 3}, {2, 2});
  const auto [packed_np, pivots_np] = linalg::lu_factor(two, false);
  CHECK(equal(packed_np, tensor<double>({2, 1, 2, 1}, {2, 2})));
  CHECK(pivots_np.to_vector() == std::vector<int32_t>{1, 2});
  CHECK(std::get<1>(linalg::lu_factor(two)).to_vector() == std::vector<int32_t>{2, 2});
  const Tensor<double> dominant = Tensor<double>(randn<double>({70, 45}) + 20.0 * eye<double>(70, 45));
  const auto [p_np, l_np, u_np] = linalg::lu(dominant, false);
  CHECK(equal(p_np, eye<double>(70)));
  check_close(matmul(l_np, u_np), dominant, 0, 1e-12, "L U without pivoting");

  // The second derivatives agree with central differences.
  using V = std::vector<Tensor<double>>;
  for (const Shape& shape : {Shape{3, 3}, Shape{4, 2}, Shape{2, 4}}) {
    CAPTURE(shape);
    const auto f = [](const V& v) { return flat_plu(linalg::lu(v[0]), 0); };
    const Tensor<double> m = randn<double>(shape);
    CHECK(autograd::gradcheck(f, {m}));
    CHECK(autograd::gradgradcheck(f, {m}));
    const auto unpivoted = [](const V& v) { return flat_plu(linalg::lu(v[0], false), 0); };
    const Tensor<double> d = Tensor<double>(m + 3.0 * eye<double>(shape[0], shape[1]));
    CHECK(autograd::gradcheck(unpivoted, {d}));
  }
  const Tensor<double> m = Tensor<double>(randn<double>({3, 3}) + 3.0 * eye<double>(3)), rhs = randn<double>({3, 2});
  const auto [lu3, piv3] = linalg::lu_factor(m);
  for (const bool left : {true, false})
    for (const bool adjoint : {false, true}) {
      const auto f = [&](const V& v) { return linalg::lu_solve(v[0], piv3, v[1], left, adjoint); };
      const Tensor<double> side = left ? rhs : Tensor<double>(rhs.t());
      CHECK(autograd::gradgradcheck(f, {lu3, side}));
    }
}

TEST_CASE("The LU functions' errors are PyTorch's") {
  const auto sq = test::golden<double>("lu_f64_4x4_factor_in0").narrow(0, 0, 3).narrow(1, 0, 3).contiguous();
  const auto [lu, piv] = linalg::lu_factor(sq);
  const std::string zero_pivot =
      "U[1,1] is zero and using it on lu_solve would result in a division by zero. If you still want to perform the "
      "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)";
  CHECK(error_of([] { (void)linalg::lu_factor(zeros<float>({3, 3})); }) == "torch.linalg.lu_factor: " + zero_pivot);
  CHECK(error_of([] { (void)linalg::lu_factor(zeros<float>({2, 3, 3})); }) ==
        "torch.linalg.lu_factor: (Batch element 0): " + zero_pivot);
  CHECK(error_of([] { (void)linalg::lu_factor_ex(zeros<float>({3, 3}), true, true); }) ==
        "torch.linalg.lu_factor_ex: " + zero_pivot);
  CHECK(std::get<2>(linalg::lu_factor_ex(zeros<float>({2, 3, 3}))).to_vector() == std::vector<int32_t>{1, 1});
  CHECK(error_of([] { (void)linalg::lu_factor(ones<float>({3})); }) ==
        "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: [3] instead");
  CHECK(error_of([] { (void)linalg::lu(ones<float>({3})); }) ==
        "linalg.lu: Expected tensor with 2 or more dimensions. Got size: [3] instead");
  CHECK(error_of([] { (void)linalg::lu_factor(ones<int64_t>({3, 3})); }) ==
        "linalg.lu_factor: 'Long' tensors have no CPU kernel (as in PyTorch 1.13, whose lu_cpu refuses them); compute "
        "in float or double with tsr::cast");
  CHECK(error_of([&] { (void)linalg::lu_solve(lu, piv, ones<double>({3})); }) ==
        "linalg.lu_solve: The input tensor B must have at least 2 dimensions.");
  CHECK(error_of([&] { (void)linalg::lu_solve(lu, piv, ones<double>({4, 2})); }) ==
        "linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x2)");
  CHECK(error_of([&] { (void)linalg::lu_solve(lu, piv, ones<double>({2, 4}), false); }) ==
        "linalg.lu_solve: Incompatible shapes of A and B for the equation XA = B (3x3 and 2x4)");
  CHECK(error_of([&] { (void)linalg::lu_solve(lu, piv.narrow(0, 0, 2), ones<double>({3, 2})); }) ==
        "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix");
  CHECK(error_of([&] { (void)linalg::lu_solve(lu.expand({2, 3, 3}), piv, ones<double>({3, 2})); }) ==
        "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with shape [3] instead");
  CHECK(error_of([&] { (void)linalg::lu_solve(ones<double>({3, 4}), piv, ones<double>({3, 2})); }) ==
        "torch.linalg.lu_solve: A must be batches of square matrices, but they are 3 by 4 matrices");
  CHECK(error_of([&] { (void)linalg::lu_solve(lu, tensor<int32_t>({4, 1, 1}), ones<double>({3, 2})); }) ==
        "Pivots given to lu_solve must all be smaller or equal to LU.size(-2). Did you properly pass the result of "
        "lu_factor?");
  CHECK(error_of([&] { (void)linalg::lu_solve(lu, tensor<int32_t>({0, 1, 1}), ones<double>({3, 2})); }) ==
        "Pivots given to lu_solve must all be greater or equal to 1. Did you properly pass the result of lu_factor?");
  CHECK(error_of([] { (void)linalg::lu_solve(ones<int64_t>({3, 3}), tensor<int32_t>({1, 2, 3}), ones<int64_t>({3, 1})); }) ==
        "torch.linalg.lu_solve: Expected a floating point or complex tensor as input. Got Long");
  CHECK(error_of([&] { (void)lu_unpack(lu, tensor<int32_t>({4, 1, 1})); }) ==
        "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly pass the result of "
        "lu_factor?");
  CHECK(error_of([&] { (void)lu_unpack(ones<double>({3}), piv); }) ==
        "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: [3] instead");
  // PyTorch 1.13 reads out of bounds here; tessera refuses.
  CHECK(error_of([&] { (void)lu_unpack(lu, piv.narrow(0, 0, 2)); }) ==
        "torch.lu_unpack: Expected pivots of shape [3] (LU.shape[:-2] and min(m, n)) for LU of shape [3, 3], but got "
        "pivots with shape [2] instead");
}

TEST_CASE("linalg.lstsq: PyTorch's solutions, gradients, residuals, ranks and singular values") {
  using VD = std::vector<Tensor<double>>;
  using VF = std::vector<Tensor<float>>;
  for (const std::string name : {"tall", "wide", "square", "batch", "vector", "deficient"}) {
    CAPTURE(name);
    test::check_forward_backward<double>("ls_f64_" + name, 2,
                                         [](const VD& v) { return std::get<0>(linalg::lstsq(v[0], v[1])); }, 1e-9);
    test::check_forward_backward<float>("ls_f32_" + name, 2,
                                        [](const VF& v) { return std::get<0>(linalg::lstsq(v[0], v[1])); }, 1e-4, 1e-4);
    const auto a = test::golden<double>("ls_f64_" + name + "_in0"), b = test::golden<double>("ls_f64_" + name + "_in1");
    for (const std::string driver : {"gels", "gelsy", "gelsd", "gelss"}) {
      if (driver == "gels" && name == "deficient") continue;
      CAPTURE(driver);
      const std::string key = "ls_" + name + "_" + driver + "_";
      const auto [x, residuals, rank, singular_values] = linalg::lstsq(a, b, std::nullopt, driver);
      check_close(x, test::golden(key + "solution"), 1e-9, 1e-9, "solution");
      CHECK(residuals.sizes() == test::golden(key + "residuals").sizes());
      if (residuals.numel() > 0) check_close(residuals, test::golden(key + "residuals"), 1e-9, 1e-12, "residuals");
      CHECK(equal(rank, test::golden<int64_t>(key + "rank")));
      CHECK(singular_values.sizes() == test::golden(key + "singular_values").sizes());
      if (singular_values.numel() > 0)
        check_close(singular_values, test::golden(key + "singular_values"), 1e-12, 1e-12, "singular values");
    }
  }
  // A relative cutoff that drops two of the three singular values.
  const auto a = test::golden<double>("ls_f64_tall_in0"), b = test::golden<double>("ls_f64_tall_in1");
  const auto [x, residuals, rank, s] = linalg::lstsq(a, b, 0.9, "gelsd");
  check_close(x, test::golden("ls_tall_rcond_solution"), 1e-12, 1e-12, "rcond 0.9");
  CHECK(rank.item() == test::golden<int64_t>("ls_tall_rcond_rank").item());
  CHECK(residuals.sizes() == Shape{0});
  // The second derivative agrees with central differences; an empty system
  // has the zero solution.
  CHECK(autograd::gradgradcheck([](const VD& v) { return std::get<0>(linalg::lstsq(v[0], v[1])); }, {a, b}));
  CHECK(equal(std::get<0>(linalg::lstsq(zeros<double>({0, 3}), zeros<double>({0, 2}))), zeros<double>({3, 2})));

  CHECK(error_of([&] { (void)linalg::lstsq(a, b, std::nullopt, "foo"); }) ==
        "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  CHECK(error_of([&] { (void)linalg::lstsq(a, zeros<double>({4, 2})); }) ==
        "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  CHECK(error_of([&] { (void)linalg::lstsq(a.expand({2, 5, 3}), zeros<double>({5, 2})); }) ==
        "torch.linalg.lstsq: input.size(-2) should match other.size(-1)");
  CHECK(error_of([] { (void)linalg::lstsq(zeros<double>({5}), zeros<double>({5})); }) ==
        "torch.linalg.lstsq: input must have at least 2 dimensions.");
  CHECK(error_of([&] { (void)linalg::lstsq(a, zeros<double>({3, 5, 2})); }) ==
        "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1");
  CHECK(error_of([&] { (void)linalg::lstsq(a.expand({2, 5, 3}), zeros<double>({3, 5, 2})); }) ==
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  CHECK(error_of([] { (void)linalg::lstsq(ones<int64_t>({5, 3}), ones<int64_t>({5, 2})); }) ==
        "This function doesn't handle types other than float and double");
}

TEST_CASE("linalg.solve with left = false, tensorinv and tensorsolve, with PyTorch's values and gradients") {
  using VD = std::vector<Tensor<double>>;
  test::check_forward_backward<double>("ts_solve_right", 2, [](const VD& v) { return linalg::solve(v[0], v[1], false); },
                                       1e-10);
  test::check_forward_backward<double>("ts_tensorinv", 1, [](const VD& v) { return linalg::tensorinv(v[0]); }, 1e-9);
  test::check_forward_backward<double>("ts_tensorinv_ind1", 1, [](const VD& v) { return linalg::tensorinv(v[0], 1); },
                                       1e-9);
  test::check_forward_backward<double>("ts_tensorsolve", 2, [](const VD& v) { return linalg::tensorsolve(v[0], v[1]); },
                                       1e-9);
  test::check_forward_backward<double>("ts_tensorsolve_dims", 2,
                                       [](const VD& v) { return linalg::tensorsolve(v[0], v[1], Shape{0, 2}); }, 1e-9);
  const auto a = eye<double>(3);
  CHECK(error_of([&] { (void)linalg::solve(a, ones<double>({3}), false); }) ==
        "linalg.solve: Incompatible shapes of A and B for the equation XA = B (3x3 and 3x1)");
  CHECK(error_of([&] { (void)linalg::solve(a, ones<double>({3, 2}), false); }) ==
        "linalg.solve: Incompatible shapes of A and B for the equation XA = B (3x3 and 3x2)");
  CHECK(error_of([] { (void)linalg::solve(zeros<double>({3, 3}), ones<double>({2, 3}), false); }) ==
        "torch.linalg.solve: The solver failed because the input matrix is singular.");
  CHECK(error_of([] { (void)linalg::tensorinv(ones<double>({4, 6, 8, 3}), 1); }) ==
        "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got 144 != 4");
  CHECK(error_of([] { (void)linalg::tensorinv(ones<double>({4, 6}), 0); }) ==
        "Expected a strictly positive integer for 'ind', but got 0");
  // (PyTorch 1.13: "cannot create std::vector larger than max_size()".)
  CHECK(error_of([] { (void)linalg::tensorinv(ones<double>({4, 6, 8, 3}), 7); }) ==
        "linalg.tensorinv: Expected 'ind' to be at most the number of dims of the input (4), but got 7");
  CHECK(error_of([] { (void)linalg::tensorinv(zeros<double>({2, 2, 4})); }) ==
        "inv: The diagonal element 1 is zero, the inversion could not be completed because the input matrix is singular.");
  CHECK(error_of([] { (void)linalg::tensorinv(ones<int64_t>({2, 2, 4})); }) ==
        "linalg.inv: Expected a floating point or complex tensor as input. Got Long");
  CHECK(error_of([] { (void)linalg::tensorsolve(ones<double>({6, 4}), ones<double>({6})); }) ==
        "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but "
        "got 4 != 6");
  CHECK(error_of([] { (void)linalg::tensorsolve(ones<double>({2, 6, 3}), ones<double>({6}), Shape{0, 0}); }) ==
        "movedim: repeated dim in `source` ([0, 0])");
  CHECK(error_of([] { (void)linalg::tensorsolve(zeros<double>({2, 3, 6}), ones<double>({2, 3})); }) ==
        "torch.linalg.solve: The solver failed because the input matrix is singular.");
}
