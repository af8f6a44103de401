// Helpers shared by the test files: golden files and ulp comparisons.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <tessera.hpp>

namespace test {

inline std::string golden_path(const std::string& name) { return std::string(TSR_GOLDEN_DIR) + "/" + name + ".npy"; }

template <class T = double>
tsr::Tensor<T> golden(const std::string& name) {
  return tsr::io::load_npy<T>(golden_path(name));
}

// Distance in units in the last place of F between got and want (both
// representable in F); NaN matches NaN, infinities must match exactly.
template <class F>
double ulp_error(double got, double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(want) || std::isinf(got)) return got == want ? 0 : INFINITY;
  if (got == want) return 0;
  const F w = static_cast<F>(want);
  const F spacing = std::nextafter(std::abs(w), std::numeric_limits<F>::infinity()) - std::abs(w);
  return std::abs(got - want) / static_cast<double>(spacing);
}

// Worst ulp error of got against want (element by element, same shape).
template <class F, class A, class B>
double worst_ulp(const A& got, const B& want, int64_t* where = nullptr) {
  auto g = tsr::Tensor<double>(tsr::cast<double>(got)).to_vector();
  auto w = tsr::Tensor<double>(tsr::cast<double>(want)).to_vector();
  REQUIRE(g.size() == w.size());
  double worst = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double e = ulp_error<F>(g[i], w[i]);
    if (e > worst) {
      worst = e;
      if (where) *where = static_cast<int64_t>(i);
    }
  }
  return worst;
}

// Like worst_ulp, but an element passes if it is close to PyTorch's value or
// to the exact value (where PyTorch itself is inaccurate); NaN in `exact`
// means "no exact value known here".
template <class F, class A>
double worst_ulp_either(const A& got, const tsr::Tensor<double>& want, const tsr::Tensor<double>& exact,
                        int64_t* where = nullptr, int64_t* differs_from_torch = nullptr) {
  auto g = tsr::Tensor<double>(tsr::cast<double>(got)).to_vector();
  auto w = want.to_vector();
  auto x = exact.to_vector();
  REQUIRE(g.size() == w.size());
  REQUIRE(g.size() == x.size());
  double worst = 0;
  int64_t differs = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    double e = ulp_error<F>(g[i], w[i]);
    if (e > 0) ++differs;
    if (!std::isnan(x[i])) e = std::min(e, ulp_error<F>(g[i], x[i]));
    if (e > worst) {
      worst = e;
      if (where) *where = static_cast<int64_t>(i);
    }
  }
  if (differs_from_torch) *differs_from_torch = differs;
  return worst;
}

inline bool file_exists(const std::string& p) { return std::ifstream(p).good(); }

template <class E>
std::string repr(const E& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}

// Runs f once with each thread count and restores the default.
template <class F>
void with_threads(int n, F&& f) {
  const int before = tsr::get_num_threads();
  tsr::set_num_threads(n);
  try {
    f();
  } catch (...) {
    tsr::set_num_threads(before);
    throw;
  }
  tsr::set_num_threads(before);
}

// Same shape and every element within atol + rtol * |want| (NaN matches NaN).
template <class G, class W>
void check_close(const G& got_expr, const W& want_expr, double rtol, double atol, const std::string& what) {
  const tsr::Tensor<double> got = tsr::cast<double>(got_expr);
  const tsr::Tensor<double> want = tsr::cast<double>(want_expr);
  INFO(what);
  REQUIRE(got.sizes() == want.sizes());
  const auto g = got.to_vector(), w = want.to_vector();
  int bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool ok = (std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i] ||
                    std::abs(g[i] - w[i]) <= atol + rtol * std::abs(w[i]);
    if (!ok && bad++ == 0) FAIL_CHECK("element " << i << ": got " << g[i] << ", PyTorch " << w[i]);
  }
  CHECK(bad == 0);
}

// The message of the tsr::Error that f throws, or "no error".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const tsr::Error& e) {
    return e.what();
  }
  return "no error";
}

// Tensors of the same shape with the same bits in every element.
template <class T>
bool bitwise_equal(const tsr::Tensor<T>& a, const tsr::Tensor<T>& b) {
  if (a.sizes() != b.sizes()) return false;
  const auto x = a.contiguous().to_vector(), y = b.contiguous().to_vector();
  return std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

// Case `prefix` of make_golden.py's _save_forward_backward: f's output and
// its inputs' gradients for the saved output gradient, each within rtol,
// plus `of_largest` times its largest magnitude (for sums whose terms are
// much larger than some results: a float solve's rounding scales with the
// largest entries, not with each one).
template <class T>
void check_forward_backward(const std::string& prefix, int inputs,
                            const std::function<tsr::Tensor<T>(const std::vector<tsr::Tensor<T>>&)>& f, double rtol,
                            double of_largest = 0) {
  std::vector<tsr::Tensor<T>> in;
  for (int i = 0; i < inputs; ++i) in.push_back(test::golden<T>(prefix + "_in" + std::to_string(i)).requires_grad_());
  const tsr::Tensor<T> out = f(in);
  out.backward(test::golden<T>(prefix + "_gout"));
  auto check = [&](const tsr::Tensor<T>& got, const std::string& name, const std::string& what) {
    const tsr::Tensor<double> want = test::golden(prefix + "_" + name);
    const double atol = rtol + (of_largest == 0 ? 0 : of_largest * tsr::max(tsr::abs(want)).item());
    check_close(got, want, rtol, atol, prefix + " " + what);
  };
  check(out, "out", "forward");
  for (int i = 0; i < inputs; ++i)
    check(in[static_cast<std::size_t>(i)].grad(), "grad" + std::to_string(i), "gradient " + std::to_string(i));
}

// The names of a list of (name, value) pairs, one per line.
template <class Named>
std::string keys_of(const Named& named) {
  std::string out;
  for (const auto& [k, v] : named) out += (out.empty() ? "" : "\n") + k;
  return out;
}

}  // namespace test
