// tsr::linalg: solve, solve_triangular, inv, det, slogdet, cholesky,
// matrix_power and multi_dot, and tsr::cholesky_solve, with the names,
// shapes, broadcasting and errors of PyTorch 1.13's, the factorizations on
// float and double tensors on the CPU. Batches are the leading dims and
// broadcast between the two operands of a solve; a right-hand side of shape
// (*, n) is a batch of vectors. Every function is differentiable, to any
// order: each backward (linalg/rules.hpp) is written with these same
// functions and matmul, and the last three are made of differentiable ops.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "../tessera.hpp"
#include "factorizations.hpp"

namespace tsr::autograd::tag {
struct LinalgSolve;
struct LinalgSolveTriangular;
struct LinalgInv;
struct LinalgDet;
struct LinalgSlogdet;
struct LinalgCholesky;
struct CholeskySolve;
}  // namespace tsr::autograd::tag

namespace tsr::detail {

template <class T>
inline constexpr bool linalg_type_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

// The refusal of a dtype that PyTorch 1.13's CPU kernel lacks: the kernel is
// named, as matrix products name theirs (linalg.hpp).
template <class T>
[[noreturn]] void fail_kernel_dtype(const char* fn, const char* kernel) {
  fail<Error>(fn, ": '", scalar_type_name<T>(), "' tensors have no CPU kernel (as in PyTorch 1.13, whose ", kernel,
              " refuses them); compute in float or double with tsr::cast");
}
// torch.linalg's refusal of a dtype: an integer one by the function's name,
// half and bfloat16 by the kernel that lacks them (or, with no kernel named,
// as linalg.inv refuses them).
template <class T>
[[noreturn]] void fail_linalg_dtype(const char* fn, const char* kernel) {
  if constexpr (!is_floating_v<T>)
    fail<Error>(fn, ": Expected a floating point or complex tensor as input. Got ", scalar_type_name<T>());
  else if (kernel == nullptr)
    fail<Error>(fn, ": Low precision dtypes not supported. Got ", scalar_type_name<T>());
  else
    fail_kernel_dtype<T>(fn, kernel);
}

// The decompositions run on the host: a tensor on a device is refused.
template <class T>
void check_on_cpu(const Tensor<T>& t, const char* fn) {
  check(t.device().is_cpu(), fn, ": tessera computes linear algebra decompositions on the CPU; got a tensor on ",
        t.device().str(), " (move it with .to(tsr::kCPU))");
}

// A (*, n, n): at least two dims, square, on the CPU.
template <class T>
void check_square_matrices(const Tensor<T>& a, const char* fn) {
  check(a.dim() >= 2, fn, ": The input tensor A must have at least 2 dimensions.");
  check(a.size(-1) == a.size(-2), fn, ": A must be batches of square matrices, but they are ", a.size(-2), " by ",
        a.size(-1), " matrices");
  check_on_cpu(a, fn);
}

// The batch dims of t (all but the last two) and t's shape with its batch
// dims replaced by `batch`.
template <class T>
Shape batch_of(const Tensor<T>& t) {
  return Shape(t.sizes().begin(), t.sizes().end() - 2);
}
template <class T>
Shape with_batch(const Shape& batch, const Tensor<T>& t) {
  Shape s = batch;
  s.push_back(t.size(-2));
  s.push_back(t.size(-1));
  return s;
}

// A dense copy of t broadcast to `shape`, which the kernels may overwrite.
template <class T>
Tensor<T> dense_copy(const Tensor<T>& t, const Shape& shape) {
  return unrecorded([&] {
    Tensor<T> out = Tensor<T>::allocate(shape);
    assign(out, t);
    return out;
  });
}

// "(Batch element i): " for a batch, nothing for one matrix (PyTorch's
// prefix of the errors of a batched input).
inline std::string batch_element(bool batched, int64_t i) {
  return batched ? str("(Batch element ", i, "): ") : std::string();
}

// Runs f(i, parallel) for every matrix i of a batch of `count`: on the
// thread pool when there are several, each on one thread; a single matrix
// may use the threads inside (its products).
template <class F>
void for_each_matrix(int64_t count, const F& f) {
  if (count == 1) return f(int64_t{0}, true);
  ThreadPool::instance().parallel_for(count, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) f(b, false);
  });
}

// LU factors of every matrix of lu (*, n, n; dense, overwritten) and, when x
// (*, n, k; dense) is given, the solutions of A X = B in its place. Returns
// each matrix's lu_factor result; piv gets the pivots (count x n).
template <class T>
std::vector<int64_t> lu_batch(Tensor<T>& lu, std::vector<int64_t>& piv, Tensor<T>* x = nullptr) {
  const int64_t n = lu.size(-1), count = numel_of(batch_of(lu)), k = x ? x->size(-1) : 0;
  std::vector<int64_t> info(static_cast<std::size_t>(count));
  piv.assign(static_cast<std::size_t>(count * n), 0);
  T* a = lu.data_ptr();
  for_each_matrix(count, [&](int64_t i, bool parallel) {
    int64_t* p = piv.data() + i * n;
    info[static_cast<std::size_t>(i)] = lu_factor(a + i * n * n, n, n, p, parallel);
    if (x && info[static_cast<std::size_t>(i)] == 0) lu_solve(a + i * n * n, p, n, x->data_ptr() + i * n * k, k, parallel);
  });
  return info;
}

// The first matrix whose factorization failed, or -1.
inline int64_t first_failure(const std::vector<int64_t>& info) {
  for (std::size_t i = 0; i < info.size(); ++i)
    if (info[i] != 0) return static_cast<int64_t>(i);
  return -1;
}

// A^-1 B (the solve behind linalg.solve and linalg.inv) for A (*, n, n) and
// B (*, n, k) with broadcast batch dims, unrecorded, and each matrix's
// factorization result (0, or the 1-based position of its zero pivot) in
// `info`. The first failure goes to `on_failure(index, info, batched)`,
// which throws unless the caller reports failures through `info` (the
// `_ex` functions); a failed matrix's X is unspecified.
template <class T, class OnFailure>
Tensor<T> solve_matrices(const Tensor<T>& a, const Tensor<T>& b, const OnFailure& on_failure,
                         std::vector<int64_t>* info = nullptr) {
  const Shape batch = broadcast_shapes(batch_of(a), batch_of(b));
  Tensor<T> lu = dense_copy(a, with_batch(batch, a)), x = dense_copy(b, with_batch(batch, b));
  std::vector<int64_t> piv;
  std::vector<int64_t> infos = lu_batch(lu, piv, &x);
  if (const int64_t bad = first_failure(infos); bad >= 0) on_failure(bad, infos[static_cast<std::size_t>(bad)], a.dim() > 2);
  if (info) *info = std::move(infos);
  return x;
}

// The `_ex` functions' info: one int32 per matrix, over the batch dims.
inline Tensor<int32_t> info_tensor(const std::vector<int64_t>& info, const Shape& batch) {
  auto out = Tensor<int32_t>::allocate(batch);
  for (std::size_t i = 0; i < info.size(); ++i) out.data_ptr()[i] = static_cast<int32_t>(info[i]);
  return out;
}

// inv(A) where A is invertible and zeros where it is singular (det's
// gradient, which is zero there; PyTorch 1.13's is too).
template <class T>
Tensor<T> inverse_or_zeros(const Tensor<T>& a) {
  const int64_t n = a.size(-1);
  Tensor<T> lu = dense_copy(a, a.sizes());
  Tensor<T> x = dense_copy(eye<T>(n), a.sizes());
  std::vector<int64_t> piv;
  const std::vector<int64_t> info = lu_batch(lu, piv, &x);
  T* p = x.data_ptr();
  for (std::size_t i = 0; i < info.size(); ++i)
    if (info[i] != 0) std::fill(p + static_cast<int64_t>(i) * n * n, p + static_cast<int64_t>(i + 1) * n * n, T(0));
  return x;
}

// Whether any element of t is exactly zero.
template <class T>
bool any_zero(const Tensor<T>& t) {
  for (const T v : t.contiguous().to_vector())
    if (v == T(0)) return true;
  return false;
}

}  // namespace tsr::detail

namespace tsr::linalg {

// X with A X = B: A (*, n, n), B (*, n, k), or (*, n) for a batch of vectors
// (when B is 1-D, or has A's shape without its last dim); batch dims
// broadcast. A singular A throws LinAlgError, as PyTorch does.
namespace detail_la {
// solve and solve_ex (fn, for the messages): X and each matrix's info; a
// singular matrix throws with check_errors.
template <class T>
std::tuple<Tensor<T>, Tensor<int32_t>> solve_with_info(const Tensor<T>& a, const Tensor<T>& b, const char* fn,
                                                       bool check_errors, bool left = true) {
  detail::check_square_matrices(a, fn);
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_linalg_dtype<T>(fn, "lu_cpu");
  } else {
    Shape a_rows(a.sizes().begin(), a.sizes().end() - 1);
    const bool vector_case = b.dim() == 1 || (b.dim() == a.dim() - 1 && b.sizes() == a_rows);
    detail::check(vector_case || b.dim() >= 2, fn, ": The input tensor B must have at least 2 dimensions.");
    const Tensor<T> bm = vector_case ? b.unsqueeze(-1) : b;
    detail::check(left ? bm.size(-2) == a.size(-1) : bm.size(-1) == a.size(-1), fn,
                  ": Incompatible shapes of A and B for the equation ", left ? "AX = B (" : "XA = B (", a.size(-2), "x",
                  a.size(-1), " and ", bm.size(-2), "x", bm.size(-1), ")");
    if (!left) {  // X A = B is A^T X^T = B^T (a vector B is a column here too, as in PyTorch)
      auto [xt, info] = solve_with_info(Tensor<T>(a.transpose(-1, -2)), Tensor<T>(bm.transpose(-1, -2)), fn,
                                        check_errors);
      const Tensor<T> x = xt.transpose(-1, -2).contiguous();
      return {vector_case ? Tensor<T>(x.squeeze(-1).contiguous()) : x, info};
    }
    std::vector<int64_t> info;
    Tensor<T> x = detail::solve_matrices(a, bm, [&](int64_t i, int64_t, bool batched) {
      if (check_errors)
        detail::fail<LinAlgError>("torch.", fn, ": ", detail::batch_element(batched, i),
                                  "The solver failed because the input matrix is singular.");
    }, &info);
    const Shape batch = detail::batch_of(x);
    // (A new tensor rather than a view: an in-place write to the result is
    // then recorded on it, as PyTorch records one on its result.)
    if (vector_case) x = detail::dense_copy(x.squeeze(-1), Shape(x.sizes().begin(), x.sizes().end() - 1));
    detail::record_op<autograd::tag::LinalgSolve>(x, a, b, vector_case);
    return {x, detail::info_tensor(info, batch)};
  }
}
}  // namespace detail_la

// With left = false, X with X A = B instead: B (*, k, n).
template <Expression EA, Expression EB>
Tensor<typename EA::value_type> solve(const EA& ea, const EB& eb, bool left = true) {
  using T = typename EA::value_type;
  static_assert(std::is_same_v<T, typename EB::value_type>,
                "linalg.solve: A and B must have the same dtype (PyTorch: Expected A and B to have the same dtype); "
                "cast one with tsr::cast<T>");
  return std::get<0>(detail_la::solve_with_info(Tensor<T>(ea), Tensor<T>(eb), "linalg.solve", true, left));
}
// solve's X and, per matrix, info (int32 over the batch dims: 0, or the
// 1-based position of the zero pivot of a singular matrix, whose X is then
// unspecified); it throws only with check_errors.
template <Expression EA, Expression EB>
std::tuple<Tensor<typename EA::value_type>, Tensor<int32_t>> solve_ex(const EA& ea, const EB& eb,
                                                                      bool check_errors = false) {
  using T = typename EA::value_type;
  static_assert(std::is_same_v<T, typename EB::value_type>, "linalg.solve_ex: A and B must have the same dtype");
  return detail_la::solve_with_info(Tensor<T>(ea), Tensor<T>(eb), "linalg.solve_ex", check_errors);
}

// X with A X = B (left) or X A = B (right) for a triangular A, read from its
// upper or lower triangle only, with ones on its diagonal when unitriangular;
// A (*, n, n) and B (*, n, k) or (*, k, n), batch dims broadcast. As LAPACK's
// trsm, a zero on the diagonal divides by zero (no error).
template <Expression EA, Expression EB>
Tensor<typename EA::value_type> solve_triangular(const EA& ea, const EB& eb, bool upper, bool left = true,
                                                 bool unitriangular = false) {
  using T = typename EA::value_type;
  static_assert(std::is_same_v<T, typename EB::value_type>,
                "linalg.solve_triangular: A and B must have the same dtype; cast one with tsr::cast<T>");
  const Tensor<T> a(ea), b(eb);
  detail::check_square_matrices(a, "linalg.solve_triangular");
  detail::check(b.dim() >= 2, "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.");
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_kernel_dtype<T>("linalg.solve_triangular", "triangular_solve_cpu");
  } else {
    const int64_t n = a.size(-1);
    detail::check(left ? b.size(-2) == n : b.size(-1) == n, "linalg.solve_triangular: Incompatible shapes of A and B for the equation ",
                  left ? "AX = B (" : "XA = B (", a.size(-2), "x", a.size(-1), " and ", b.size(-2), "x", b.size(-1), ")");
    // X A = B is A^T X^T = B^T, with A^T's triangle the other one.
    const Tensor<T> am = left ? a : a.transpose(-1, -2), bm = left ? b : b.transpose(-1, -2);
    const Shape batch = detail::broadcast_shapes(detail::batch_of(am), detail::batch_of(bm));
    const Tensor<T> dense_a = detail::dense_copy(am, detail::with_batch(batch, am));
    Tensor<T> x = detail::dense_copy(bm, detail::with_batch(batch, bm));
    const int64_t k = x.size(-1), count = detail::numel_of(batch);
    const bool solve_upper = left ? upper : !upper;
    detail::for_each_matrix(count, [&](int64_t i, bool parallel) {
      detail::triangular_solve(dense_a.data_ptr() + i * n * n, n, x.data_ptr() + i * n * k, k, solve_upper, unitriangular,
                               parallel);
    });
    if (!left) x = detail::unrecorded([&] { return x.transpose(-1, -2).contiguous(); });
    detail::record_op<autograd::tag::LinalgSolveTriangular>(x, a, b, upper, left, unitriangular);
    return x;
  }
}

// The inverse of each matrix of A (*, n, n); a singular one throws
// LinAlgError with the first zero pivot, as PyTorch does.
namespace detail_la {
// inv and inv_ex (fn, for the messages).
template <class T>
std::tuple<Tensor<T>, Tensor<int32_t>> inverse_with_info(const Tensor<T>& a, const char* fn, bool check_errors) {
  detail::check_square_matrices(a, fn);
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_linalg_dtype<T>(fn, nullptr);
  } else {
    std::vector<int64_t> info;
    Tensor<T> x = detail::solve_matrices(a, eye<T>(a.size(-1)), [&](int64_t i, int64_t v, bool batched) {
      if (check_errors)
        detail::fail<LinAlgError>(fn, ": ", detail::batch_element(batched, i), "The diagonal element ", v,
                                  " is zero, the inversion could not be completed because the input matrix is singular.");
    }, &info);
    detail::record_op<autograd::tag::LinalgInv>(x, a);
    return {x, detail::info_tensor(info, detail::batch_of(a))};
  }
}
}  // namespace detail_la

template <Expression EA>
Tensor<typename EA::value_type> inv(const EA& ea) {
  return std::get<0>(detail_la::inverse_with_info(Tensor<typename EA::value_type>(ea), "linalg.inv", true));
}
// inv's inverses and, per matrix, info (int32 over the batch dims: 0, or
// the 1-based position of the zero pivot of a singular matrix, whose
// inverse is then unspecified); it throws only with check_errors.
template <Expression EA>
std::tuple<Tensor<typename EA::value_type>, Tensor<int32_t>> inv_ex(const EA& ea, bool check_errors = false) {
  return detail_la::inverse_with_info(Tensor<typename EA::value_type>(ea), "linalg.inv_ex", check_errors);
}

namespace detail_la {
// Calls f(i, sign, u) for each matrix i of A (*, n, n) with the LU factors
// of a copy of it: sign is +1 or -1, its row permutation's, and u the
// factors (row-major n x n, U on and above the diagonal).
template <class T, class F>
void for_each_lu(const Tensor<T>& a, const F& f) {
  Tensor<T> lu = tsr::detail::dense_copy(a, a.sizes());
  std::vector<int64_t> piv;
  tsr::detail::lu_batch(lu, piv);
  const int64_t n = a.size(-1), count = tsr::detail::numel_of(tsr::detail::batch_of(a));
  for (int64_t i = 0; i < count; ++i) {
    T sign = T(1);
    for (int64_t j = 0; j < n; ++j)
      if (piv[static_cast<std::size_t>(i * n + j)] != j) sign = -sign;
    f(i, sign, lu.data_ptr() + i * n * n);
  }
}
}  // namespace detail_la

// The determinant of each matrix of A (*, n, n), from its LU factors: the
// product of U's diagonal with the permutation's sign (1 for 0 x 0).
template <Expression EA>
Tensor<typename EA::value_type> det(const EA& ea) {
  using T = typename EA::value_type;
  const Tensor<T> a(ea);
  detail::check_square_matrices(a, "linalg.det");
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_linalg_dtype<T>("linalg.det", "lu_cpu");
  } else {
    const int64_t n = a.size(-1);
    Tensor<T> d = Tensor<T>::allocate(detail::batch_of(a));
    detail_la::for_each_lu(a, [&](int64_t i, T sign, const T* u) {
      for (int64_t j = 0; j < n; ++j) sign *= u[j * n + j];
      d.data_ptr()[i] = sign;
    });
    detail::record_op<autograd::tag::LinalgDet>(d, a);
    return d;
  }
}

// {sign, log|det|} of each matrix of A (*, n, n): sign 0 and -inf for a
// singular one. The gradient flows through log|det| (the sign has none).
template <Expression EA>
std::tuple<Tensor<typename EA::value_type>, Tensor<typename EA::value_type>> slogdet(const EA& ea) {
  using T = typename EA::value_type;
  const Tensor<T> a(ea);
  detail::check_square_matrices(a, "linalg.slogdet");
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_linalg_dtype<T>("linalg.slogdet", "lu_cpu");
  } else {
    const int64_t n = a.size(-1);
    Tensor<T> sign = Tensor<T>::allocate(detail::batch_of(a)), logabs = Tensor<T>::allocate(detail::batch_of(a));
    detail_la::for_each_lu(a, [&](int64_t i, T s, const T* u) {
      T l = T(0);
      for (int64_t j = 0; j < n; ++j) {
        const T v = u[j * n + j];
        s *= v > T(0) ? T(1) : v < T(0) ? T(-1) : T(0);
        l += std::log(std::abs(v));
      }
      sign.data_ptr()[i] = s;
      logabs.data_ptr()[i] = l;
    });
    detail::record_op<autograd::tag::LinalgSlogdet>(logabs, a);
    return {sign, logabs};
  }
}

// L with A = L L^T (lower, from A's lower triangle), or U with A = U^T U
// (upper, from A's upper triangle), for each matrix of A (*, n, n); a matrix
// that is not positive-definite throws LinAlgError naming its first
// leading minor that is not, as PyTorch does.
namespace detail_la {
// cholesky and cholesky_ex (fn, for the messages).
template <class T>
std::tuple<Tensor<T>, Tensor<int32_t>> cholesky_with_info(const Tensor<T>& a, bool upper, const char* fn,
                                                          bool check_errors) {
  detail::check_square_matrices(a, fn);
  if constexpr (!detail::linalg_type_v<T>) {
    detail::fail_linalg_dtype<T>(fn, "cholesky_cpu");
  } else {
    // The kernel factors an upper triangle: A's own, or A^T's for L (A's
    // lower triangle read as the upper one of its transpose), then L = U^T.
    Tensor<T> f = detail::dense_copy(upper ? a : a.transpose(-1, -2), a.sizes());
    const int64_t n = a.size(-1), count = detail::numel_of(detail::batch_of(a));
    std::vector<int64_t> info(static_cast<std::size_t>(count));
    detail::for_each_matrix(count, [&](int64_t i, bool parallel) {
      info[static_cast<std::size_t>(i)] = detail::cholesky_upper(f.data_ptr() + i * n * n, n, parallel);
    });
    if (const int64_t bad = detail::first_failure(info); check_errors && bad >= 0)
      detail::fail<LinAlgError>(fn, ": ", detail::batch_element(a.dim() > 2, bad),
                                "The factorization could not be completed because the input is not positive-definite "
                                "(the leading minor of order ",
                                info[static_cast<std::size_t>(bad)], " is not positive-definite).");
    if (!upper) f = detail::unrecorded([&] { return f.transpose(-1, -2).contiguous(); });
    detail::record_op<autograd::tag::LinalgCholesky>(f, a, upper);
    return {f, detail::info_tensor(info, detail::batch_of(a))};
  }
}
}  // namespace detail_la

template <Expression EA>
Tensor<typename EA::value_type> cholesky(const EA& ea, bool upper = false) {
  return std::get<0>(detail_la::cholesky_with_info(Tensor<typename EA::value_type>(ea), upper, "linalg.cholesky", true));
}
// cholesky's factors and, per matrix, info (int32 over the batch dims: 0,
// or the order of the first leading minor that is not positive-definite,
// whose factor is then unspecified); it throws only with check_errors.
template <Expression EA>
std::tuple<Tensor<typename EA::value_type>, Tensor<int32_t>> cholesky_ex(const EA& ea, bool upper = false,
                                                                         bool check_errors = false) {
  return detail_la::cholesky_with_info(Tensor<typename EA::value_type>(ea), upper, "linalg.cholesky_ex", check_errors);
}

// A^n for each matrix of A (*, n, n): the identity for n = 0, inv(A)^-n for
// n < 0, and by repeated squaring with matmul otherwise (so that gradients
// flow through the products).
template <Expression EA>
Tensor<typename EA::value_type> matrix_power(const EA& ea, int64_t n) {
  using T = typename EA::value_type;
  const Tensor<T> a(ea);
  detail::check(a.dim() >= 2, "linalg.matrix_power: The input tensor A must have at least 2 dimensions.");
  detail::check(a.size(-1) == a.size(-2), "linalg.matrix_power: A must be batches of square matrices, but they are ",
                a.size(-2), " by ", a.size(-1), " matrices");
  if (n == 0) return detail::dense_copy(eye<T>(a.size(-1)), a.sizes());
  Tensor<T> base = n < 0 ? inv(a) : a;
  uint64_t e = n < 0 ? uint64_t(-(n + 1)) + 1 : uint64_t(n);
  Tensor<T> result;
  for (;;) {
    if (e & 1) result = result.defined() ? Tensor<T>(matmul(result, base)) : base;
    e >>= 1;
    if (e == 0) break;
    base = matmul(base, base);
  }
  return result.is_alias_of(a) ? Tensor<T>(a.clone()) : result;
}

// The product of a chain of matrices, the first one possibly a row vector
// and the last a column vector (1-D), multiplied in the order that takes the
// fewest multiply-adds (the classic dynamic program, as PyTorch's).
template <class T>
Tensor<T> multi_dot(const std::vector<Tensor<T>>& tensors) {
  const std::size_t n = tensors.size();
  detail::check(n >= 2, "multi_dot(): expected at least 2 tensors but got ", n);
  const int64_t first_dim = tensors.front().dim(), last_dim = tensors.back().dim();
  detail::check(first_dim == 1 || first_dim == 2, "multi_dot(): the first tensor must be 1D or 2D but got ", first_dim, "D");
  detail::check(last_dim == 1 || last_dim == 2, "multi_dot(): the last tensor must be 1D or 2D but got ", last_dim, "D");
  std::vector<Tensor<T>> m(tensors);
  if (first_dim == 1) m.front() = m.front().unsqueeze(0);
  if (last_dim == 1) m.back() = m.back().unsqueeze(1);
  for (std::size_t i = 1; i + 1 < n; ++i)
    detail::check(m[i].dim() == 2, "multi_dot(): tensor ", i, " must be 2D but got ", m[i].dim(), "D");
  for (std::size_t i = 0; i + 1 < n; ++i)
    detail::check(m[i].size(1) == m[i + 1].size(0), "multi_dot(): tensors ", i, " and ", i + 1, " with shapes ",
                  tensors[i].sizes(), " and ", tensors[i + 1].sizes(), " cannot be multiplied");
  // cost[i][j]: the fewest multiply-adds for m[i..j]; split[i][j]: where.
  std::vector<int64_t> dims{m[0].size(0)};
  for (const auto& t : m) dims.push_back(t.size(1));
  std::vector<std::vector<int64_t>> cost(n, std::vector<int64_t>(n, 0)), split(n, std::vector<int64_t>(n, 0));
  for (std::size_t len = 1; len < n; ++len)
    for (std::size_t i = 0; i + len < n; ++i) {
      const std::size_t j = i + len;
      cost[i][j] = -1;
      for (std::size_t k = i; k < j; ++k) {
        const int64_t c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1];
        if (cost[i][j] < 0 || c < cost[i][j]) cost[i][j] = c, split[i][j] = static_cast<int64_t>(k);
      }
    }
  const auto product = [&](const auto& self, std::size_t i, std::size_t j) -> Tensor<T> {
    if (i == j) return m[i];
    const auto k = static_cast<std::size_t>(split[i][j]);
    return mm(self(self, i, k), self(self, k + 1, j));
  };
  Tensor<T> out = product(product, 0, n - 1);
  if (last_dim == 1) out = out.squeeze(1);
  if (first_dim == 1) out = out.squeeze(0);
  return out;
}

}  // namespace tsr::linalg

namespace tsr {

// torch.cholesky_solve: X with A X = B, given A's Cholesky factor L (A =
// L L^T) or, with upper, U (A = U^T U); B (*, n, k), batch dims broadcast.
// Two triangular solves; its gradient is PyTorch's, which takes the factor
// as a whole matrix (not only its triangle).
template <Expression EB, Expression EL>
Tensor<typename EB::value_type> cholesky_solve(const EB& eb, const EL& el, bool upper = false) {
  using T = typename EB::value_type;
  const Tensor<T> b(eb), l(el);
  detail::check(b.dim() >= 2, "b should have at least 2 dimensions, but has ", b.dim(), " dimensions instead");
  detail::check(l.dim() >= 2, "u should have at least 2 dimensions, but has ", l.dim(), " dimensions instead");
  detail::check(l.size(-1) == l.size(-2), "A must be batches of square matrices, but they are ", l.size(-2), " by ",
                l.size(-1), " matrices");
  detail::check(l.size(-1) == b.size(-2), "Incompatible matrix sizes for cholesky_solve: each A matrix is ", l.size(-2),
                " by ", l.size(-1), " but each b matrix is ", b.size(-2), " by ", b.size(-1));
  Tensor<T> x = detail::unrecorded([&] {
    const Tensor<T> lower = upper ? l.transpose(-1, -2) : l;
    return linalg::solve_triangular(lower.transpose(-1, -2), linalg::solve_triangular(lower, b, false), true);
  });
  detail::record_op<autograd::tag::CholeskySolve>(x, b, l, upper);
  return x;
}

// torch.logdet: log det A for each matrix of A (*, n, n), NaN where the
// determinant is negative and -inf where it is 0; slogdet's log|det| where
// the sign is not negative, and its gradient.
template <Expression EA>
Tensor<typename EA::value_type> logdet(const EA& ea) {
  using T = typename EA::value_type;
  const Tensor<T> a(ea);
  detail::check_square_matrices(a, "logdet");
  const auto [sign, logabs] = linalg::slogdet(a);
  return where(sign < T(0), std::numeric_limits<T>::quiet_NaN(), logabs);
}

}  // namespace tsr

#include "rules.hpp"
