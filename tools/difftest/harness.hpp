// The runtime of a generated differential test: identical inputs for
// tessera and libtorch, each side's results reduced to (dtype, shape,
// values as double), and the comparison. gen.py writes the cases.
#pragma once
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <tessera.hpp>
#include <vector>

namespace difftest {

// dtypes by PyTorch's name, so that both sides print alike.
template <class T> constexpr const char* dtype_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, float>) return "float32";
  else if constexpr (std::is_same_v<T, double>) return "float64";
  else return "other";
}
inline std::string dtype_name(c10::ScalarType s) {
  switch (s) {
    case c10::kBool: return "bool";
    case c10::kInt: return "int32";
    case c10::kLong: return "int64";
    case c10::kFloat: return "float32";
    case c10::kDouble: return "float64";
    default: return "other";
  }
}
template <class T> c10::ScalarType torch_dtype() {
  if constexpr (std::is_same_v<T, bool>) return c10::kBool;
  else if constexpr (std::is_same_v<T, int32_t>) return c10::kInt;
  else if constexpr (std::is_same_v<T, int64_t>) return c10::kLong;
  else if constexpr (std::is_same_v<T, float>) return c10::kFloat;
  else return c10::kDouble;
}

// One result: what a comparison needs, with no library types left.
struct Out {
  bool defined = true;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<double> values;
};
template <class T>
Out out(const tsr::Tensor<T>& t) {
  if (!t.defined()) return Out{false, "", {}, {}};
  Out o{true, dtype_name<T>(), std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), {}};
  for (const T& v : t.to_vector()) o.values.push_back(static_cast<double>(v));
  return o;
}
inline Out out(const torch::Tensor& t) {
  if (!t.defined()) return Out{false, "", {}, {}};
  Out o{true, dtype_name(t.scalar_type()), t.sizes().vec(), {}};
  const auto d = t.detach().to(c10::kDouble).contiguous();
  o.values.assign(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
  return o;
}

// Deterministic input data, the same on both sides. Floats are continuous
// in [-3, 3] (or, with `ties`, multiples of 1/4, so that extrema and sorts
// meet equal values); with `special`, about one element in five is NaN,
// +-inf, -0.0 or 0.0. Integers are in [-5, 5]; bools are fair coins.
inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
enum Fill { kPlain = 0, kSpecial = 1, kTies = 2, kPositive = 4 };
template <class T>
std::vector<T> values(int64_t n, uint64_t seed, int fill) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = mix(seed * 1000003u + static_cast<uint64_t>(i));
    const double u = static_cast<double>(r >> 11) * 0x1.0p-53;  // [0, 1)
    if constexpr (std::is_same_v<T, bool>) {
      v[i] = (r >> 7) & 1;
    } else if constexpr (std::is_integral_v<T>) {
      v[i] = static_cast<T>(static_cast<int64_t>(r % 11) - 5);
      if ((fill & kPositive) && v[i] <= 0) v[i] = static_cast<T>(1 - v[i]);
    } else {
      double x = (fill & kTies) ? std::floor(u * 24) / 4 - 3 : u * 6 - 3;
      if (fill & kPositive) x = std::abs(x) + 0.25;
      if ((fill & kSpecial) && (r & 0xff) < 52) {
        const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0};
        x = specials[(r >> 8) % 5];
      }
      v[i] = static_cast<T>(x);
    }
  }
  return v;
}

// An input: its values, and both libraries' tensors made from them.
template <class T>
struct Input {
  std::vector<int64_t> shape;
  std::vector<T> data;
  Input(std::vector<int64_t> s, uint64_t seed, int fill) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data = values<T>(n, seed, fill);
  }
  tsr::Tensor<T> tsr() const { return tsr::tensor<T>(data, tsr::Shape(shape.begin(), shape.end())); }
  torch::Tensor th() const {
    auto t = torch::empty(shape, torch::TensorOptions().dtype(torch_dtype<T>()));
    if constexpr (std::is_same_v<T, bool>) {
      auto* p = t.template data_ptr<bool>();
      for (std::size_t i = 0; i < data.size(); ++i) p[i] = data[i];
    } else {
      std::copy(data.begin(), data.end(), t.template data_ptr<T>());
    }
    return t;
  }
  std::string repr() const {
    std::ostringstream os;
    os << dtype_name<T>() << " [";
    for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
    os << "]: {";
    for (std::size_t i = 0; i < data.size() && i < 64; ++i) os << (i ? ", " : "") << +data[i];
    if (data.size() > 64) os << ", ... (" << data.size() << " values)";
    os << "}";
    return os.str();
  }
};

// How close is close: relative to the result's own scale, so that a value
// computed by cancellation is judged by the size of what cancelled.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

struct Runner {
  int passed = 0, failed = 0;
  std::ostringstream failures;

  using Side = std::function<std::vector<Out>()>;
  void run(int id, const char* source, const std::vector<std::string>& inputs, Tolerance tol, const Side& ours,
           const Side& theirs) {
    std::vector<Out> a, b;
    std::string err_a, err_b;
    bool threw_a = false, threw_b = false;
    try {
      a = ours();
    } catch (const tsr::Error& e) {
      threw_a = true, err_a = e.what();
    } catch (const std::exception& e) {
      fail(id, source, inputs, std::string("tessera threw something other than tsr::Error: ") + e.what());
      return;
    }
    try {
      b = theirs();
    } catch (const std::exception& e) {
      threw_b = true, err_b = e.what();
      err_b = err_b.substr(0, err_b.find('\n'));
    }
    if (threw_a != threw_b) {
      fail(id, source, inputs,
           threw_a ? "tessera threw \"" + err_a + "\"; libtorch did not"
                   : "libtorch threw \"" + err_b + "\"; tessera did not");
      return;
    }
    if (threw_a) return pass();
    if (a.size() != b.size()) return fail(id, source, inputs, "different numbers of results");
    for (std::size_t k = 0; k < a.size(); ++k) {
      std::string why = compare(a[k], b[k], tol);
      if (!why.empty()) return fail(id, source, inputs, "result " + std::to_string(k) + ": " + why);
    }
    pass();
  }

  static std::string shape_str(const std::vector<int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
  }
  static std::string compare(const Out& a, const Out& b, Tolerance tol) {
    if (a.defined != b.defined) return a.defined ? "libtorch's is undefined" : "tessera's is undefined";
    if (!a.defined) return "";
    if (a.dtype != b.dtype) return "dtype " + a.dtype + ", libtorch " + b.dtype;
    if (a.shape != b.shape) return "shape " + shape_str(a.shape) + ", libtorch " + shape_str(b.shape);
    double scale = 0;
    for (double v : b.values)
      if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
    const bool exact = a.dtype == "bool" || a.dtype == "int32" || a.dtype == "int64";
    for (std::size_t i = 0; i < a.values.size(); ++i) {
      const double x = a.values[i], y = b.values[i];
      bool ok;
      if (std::isnan(y) || std::isnan(x)) ok = std::isnan(x) && std::isnan(y);
      else if (std::isinf(y) || std::isinf(x)) ok = x == y;
      else if (exact) ok = x == y;
      else ok = std::abs(x - y) <= tol.atol * std::max(1.0, scale) + tol.rtol * std::abs(y);
      if (!ok) {
        std::ostringstream os;
        os.precision(9);
        os << "element " << i << ": tessera " << x << ", libtorch " << y;
        return os.str();
      }
    }
    return "";
  }

  void pass() { ++passed; }
  void fail(int id, const char* source, const std::vector<std::string>& inputs, const std::string& why) {
    ++failed;
    failures << "FAIL case " << id << ": " << why << "\n" << source << "\n";
    for (const auto& in : inputs) failures << "  input " << in << "\n";
    failures << "\n";
  }
  int finish() {
    std::cout << failures.str() << passed << " passed, " << failed << " failed\n";
    return failed == 0 ? 0 : 1;
  }
};

}  // namespace difftest
