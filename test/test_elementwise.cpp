// Every elementwise op against PyTorch 1.13's results on edge-value grids
// (test/golden, from tools/make_golden.py), for float, double and integers;
// type promotion; and the three evaluation tiers (SIMD, strided, broadcast).
#include <functional>
#include <map>

#include "common.hpp"

using namespace tsr;
using test::golden;

namespace {

// Allowed error in ulps per op, for float and double; exact (0) for anything
// that is a correctly rounded IEEE operation or a comparison. The bounds are
// the worst errors found on the grid, rounded up, and are stated here so a
// regression shows.
struct Tol {
  double f32, f64;
  // gelu for x below this: the result's relative error is about 2(x/sqrt 2)^2
  // times the rounding of x/sqrt 2 (inherent to evaluating in the input's
  // precision), so there it is checked against the exact value with a
  // relative bound of kTailRelative (PyTorch returns 0 there).
  double tail_below = -INFINITY;
};
constexpr double kTailRelative = 1e-4;
const std::map<std::string, Tol> kUnaryTol = {
    {"abs", {0, 0}},       {"neg", {0, 0}},        {"sign", {0, 0}},        {"sqrt", {0, 0}},
    {"rsqrt", {1, 1}},     {"square", {0, 0}},     {"exp", {2, 2}},         {"exp2", {2, 2}},
    {"expm1", {2, 2}},     {"log", {2, 2}},        {"log2", {2, 2}},        {"log10", {2, 2}},
    {"log1p", {2, 2}},     {"sin", {2, 2}},        {"cos", {2, 2}},         {"tan", {3, 3}},
    {"asin", {2, 2}},      {"acos", {2, 2}},       {"atan", {2, 2}},        {"sinh", {3, 3}},
    {"cosh", {3, 3}},      {"tanh", {3, 3}},       {"asinh", {3, 3}},       {"acosh", {3, 3}},
    {"atanh", {3, 3}},     {"sigmoid", {3, 3}},    {"relu", {0, 0}},        {"gelu", {16, 16, -3}},
    {"gelu_tanh", {32, 32, -5}}, {"silu", {4, 4}},       {"softplus", {3, 3}},    {"erf", {2, 2}},
    {"erfc", {4, 4}},      {"floor", {0, 0}},      {"ceil", {0, 0}},        {"round", {0, 0}},
    {"trunc", {0, 0}},     {"frac", {0, 0}},       {"reciprocal", {0, 0}},  {"isnan", {0, 0}},
    {"isinf", {0, 0}},     {"isfinite", {0, 0}},   {"nan_to_num", {0, 0}},  {"pow2", {0, 0}},
    {"pow3", {1, 1}},      {"pow_half", {0, 0}},   {"pow_m1", {0, 0}},      {"pow_1_7", {2, 2}},
    {"logical_not", {0, 0}}, {"clamp", {0, 0}},
    {"sgn", {0, 0}},       {"signbit", {0, 0}},    {"deg2rad", {0, 0}},     {"rad2deg", {0, 0}},
};

template <class T>
std::function<Tensor<double>(const Tensor<T>&)> unary_op(const std::string& name) {
  using F = std::function<Tensor<double>(const Tensor<T>&)>;
  static const std::map<std::string, F> table = {
      {"abs", [](auto& x) { return cast<double>(abs(x)); }},
      {"neg", [](auto& x) { return cast<double>(-x); }},
      {"sign", [](auto& x) { return cast<double>(sign(x)); }},
      {"sqrt", [](auto& x) { return cast<double>(sqrt(x)); }},
      {"rsqrt", [](auto& x) { return cast<double>(rsqrt(x)); }},
      {"square", [](auto& x) { return cast<double>(square(x)); }},
      {"exp", [](auto& x) { return cast<double>(exp(x)); }},
      {"exp2", [](auto& x) { return cast<double>(exp2(x)); }},
      {"expm1", [](auto& x) { return cast<double>(expm1(x)); }},
      {"log", [](auto& x) { return cast<double>(log(x)); }},
      {"log2", [](auto& x) { return cast<double>(log2(x)); }},
      {"log10", [](auto& x) { return cast<double>(log10(x)); }},
      {"log1p", [](auto& x) { return cast<double>(log1p(x)); }},
      {"sin", [](auto& x) { return cast<double>(sin(x)); }},
      {"cos", [](auto& x) { return cast<double>(cos(x)); }},
      {"tan", [](auto& x) { return cast<double>(tan(x)); }},
      {"asin", [](auto& x) { return cast<double>(asin(x)); }},
      {"acos", [](auto& x) { return cast<double>(acos(x)); }},
      {"atan", [](auto& x) { return cast<double>(atan(x)); }},
      {"sinh", [](auto& x) { return cast<double>(sinh(x)); }},
      {"cosh", [](auto& x) { return cast<double>(cosh(x)); }},
      {"tanh", [](auto& x) { return cast<double>(tanh(x)); }},
      {"asinh", [](auto& x) { return cast<double>(asinh(x)); }},
      {"acosh", [](auto& x) { return cast<double>(acosh(x)); }},
      {"atanh", [](auto& x) { return cast<double>(atanh(x)); }},
      {"sigmoid", [](auto& x) { return cast<double>(sigmoid(x)); }},
      {"relu", [](auto& x) { return cast<double>(relu(x)); }},
      {"gelu", [](auto& x) { return cast<double>(gelu(x)); }},
      {"gelu_tanh", [](auto& x) { return cast<double>(gelu(x, true)); }},
      {"silu", [](auto& x) { return cast<double>(silu(x)); }},
      {"softplus", [](auto& x) { return cast<double>(softplus(x)); }},
      {"erf", [](auto& x) { return cast<double>(erf(x)); }},
      {"erfc", [](auto& x) { return cast<double>(erfc(x)); }},
      {"floor", [](auto& x) { return cast<double>(floor(x)); }},
      {"ceil", [](auto& x) { return cast<double>(ceil(x)); }},
      {"round", [](auto& x) { return cast<double>(round(x)); }},
      {"trunc", [](auto& x) { return cast<double>(trunc(x)); }},
      {"frac", [](auto& x) { return cast<double>(frac(x)); }},
      {"reciprocal", [](auto& x) { return cast<double>(reciprocal(x)); }},
      {"isnan", [](auto& x) { return cast<double>(isnan(x)); }},
      {"isinf", [](auto& x) { return cast<double>(isinf(x)); }},
      {"isfinite", [](auto& x) { return cast<double>(isfinite(x)); }},
      {"nan_to_num", [](auto& x) { return cast<double>(nan_to_num(x)); }},
      {"pow2", [](auto& x) { return cast<double>(pow(x, 2)); }},
      {"pow3", [](auto& x) { return cast<double>(pow(x, 3)); }},
      {"pow_half", [](auto& x) { return cast<double>(pow(x, 0.5)); }},
      {"pow_m1", [](auto& x) { return cast<double>(pow(x, -1)); }},
      {"pow_1_7", [](auto& x) { return cast<double>(pow(x, 1.7)); }},
      {"logical_not", [](auto& x) { return cast<double>(!x); }},
      {"clamp", [](auto& x) { return cast<double>(clamp(x, -1.5, 2.0)); }},
      {"sgn", [](auto& x) { return cast<double>(sgn(x)); }},
      {"signbit", [](auto& x) { return cast<double>(signbit(x)); }},
      {"deg2rad", [](auto& x) { return cast<double>(deg2rad(x)); }},
      {"rad2deg", [](auto& x) { return cast<double>(rad2deg(x)); }},
  };
  return table.at(name);
}

template <class T>
std::function<Tensor<double>(const Tensor<T>&, const Tensor<T>&)> binary_op(const std::string& name) {
  using F = std::function<Tensor<double>(const Tensor<T>&, const Tensor<T>&)>;
  static const std::map<std::string, F> table = {
      {"add", [](auto& a, auto& b) { return cast<double>(a + b); }},
      {"sub", [](auto& a, auto& b) { return cast<double>(a - b); }},
      {"mul", [](auto& a, auto& b) { return cast<double>(a * b); }},
      {"div", [](auto& a, auto& b) { return cast<double>(a / b); }},
      {"remainder", [](auto& a, auto& b) { return cast<double>(a % b); }},
      {"fmod", [](auto& a, auto& b) { return cast<double>(fmod(a, b)); }},
      {"floor_divide", [](auto& a, auto& b) { return cast<double>(floor_divide(a, b)); }},
      {"atan2", [](auto& a, auto& b) { return cast<double>(atan2(a, b)); }},
      {"pow", [](auto& a, auto& b) { return cast<double>(pow(a, b)); }},
      {"maximum", [](auto& a, auto& b) { return cast<double>(maximum(a, b)); }},
      {"minimum", [](auto& a, auto& b) { return cast<double>(minimum(a, b)); }},
      {"eq", [](auto& a, auto& b) { return cast<double>(a == b); }},
      {"ne", [](auto& a, auto& b) { return cast<double>(a != b); }},
      {"lt", [](auto& a, auto& b) { return cast<double>(a < b); }},
      {"le", [](auto& a, auto& b) { return cast<double>(a <= b); }},
      {"gt", [](auto& a, auto& b) { return cast<double>(a > b); }},
      {"ge", [](auto& a, auto& b) { return cast<double>(a >= b); }},
      {"logical_and", [](auto& a, auto& b) { return cast<double>(a && b); }},
      {"logical_or", [](auto& a, auto& b) { return cast<double>(a || b); }},
      {"logical_xor", [](auto& a, auto& b) { return cast<double>(logical_xor(a, b)); }},
      {"lerp", [](auto& a, auto& b) { return cast<double>(lerp(a, b, 0.3)); }},
      {"hypot", [](auto& a, auto& b) { return cast<double>(hypot(a, b)); }},
      {"logaddexp", [](auto& a, auto& b) { return cast<double>(logaddexp(a, b)); }},
      {"logaddexp2", [](auto& a, auto& b) { return cast<double>(logaddexp2(a, b)); }},
      {"heaviside", [](auto& a, auto& b) { return cast<double>(heaviside(a, b)); }},
      {"isclose", [](auto& a, auto& b) { return cast<double>(isclose(a, b, 1e-3, 1e-2)); }},
      {"isclose_nan", [](auto& a, auto& b) { return cast<double>(isclose(a, b, 1e-5, 1e-8, true)); }},
      {"addcmul", [](auto& a, auto& b) { return cast<double>(addcmul(a, a, b, 0.5)); }},
      {"addcdiv", [](auto& a, auto& b) { return cast<double>(addcdiv(b, a, b, 2)); }},
  };
  return table.at(name);
}

const std::map<std::string, Tol> kBinaryTol = {
    {"add", {0, 0}},         {"sub", {0, 0}},     {"mul", {0, 0}},     {"div", {0, 0}},
    {"remainder", {0, 0}},   {"fmod", {0, 0}},    {"floor_divide", {0, 0}}, {"atan2", {2, 2}},
    {"pow", {2, 2}},         {"maximum", {0, 0}}, {"minimum", {0, 0}}, {"eq", {0, 0}},
    {"ne", {0, 0}},          {"lt", {0, 0}},      {"le", {0, 0}},      {"gt", {0, 0}},
    {"ge", {0, 0}},          {"logical_and", {0, 0}}, {"logical_or", {0, 0}}, {"logical_xor", {0, 0}},
    // logaddexp's formula, max + log1p(exp(-|a - b|)), as PyTorch's: where the
    // result is near 0 the sum cancels, and each rounding of its terms counts
    // several ulps of the result.
    {"lerp", {1, 1}},        {"hypot", {1, 1}},   {"logaddexp", {9, 4}}, {"logaddexp2", {3, 2}},
    {"heaviside", {0, 0}},   {"isclose", {0, 0}}, {"isclose_nan", {0, 0}}, {"addcmul", {0, 0}},
    {"addcdiv", {0, 0}},
};

template <class T>
void check_unary_goldens(const char* tag) {
  const auto x = golden<T>(std::string("unary_in_") + tag);
  // Strided copy of the input: the same values through the scalar tier.
  auto strided_buf = zeros<T>({x.numel(), 2});
  strided_buf.select(1, 0) = x;
  const auto x_strided = strided_buf.select(1, 0);
  for (const auto& [name, tol] : kUnaryTol) {
    CAPTURE(name);
    const auto want = golden<double>("unary_" + name + "_" + tag);
    const double allowed = std::is_same_v<T, float> ? tol.f32 : tol.f64;
    int64_t at = -1;
    const auto got = unary_op<T>(name)(x);
    const std::string exact_name = "exact_" + name + "_" + tag;
    const bool has_exact = test::file_exists(test::golden_path(exact_name));
    const auto in_tail = (x < tol.tail_below) && isfinite(x);
    auto measure = [&](const Tensor<double>& g) {
      // Tail points are checked against the exact value with kTailUlps.
      const Tensor<double> gm = where(in_tail, 0.0, g), wm = where(in_tail, 0.0, want);
      if (tol.tail_below > -INFINITY) {
        const auto ex = golden<double>(exact_name);
        const double tiny = 16 * double(std::numeric_limits<T>::min());  // underflow
        const auto gv = where(in_tail, g, 0.0).eval().to_vector(), ev = where(in_tail, ex, 0.0).eval().to_vector();
        for (std::size_t i = 0; i < gv.size(); ++i) {
          CAPTURE(i);
          if (std::isnan(ev[i])) continue;  // no exact value known here
          CHECK(std::abs(gv[i] - ev[i]) <= tiny + kTailRelative * std::abs(ev[i]));
        }
      }
      return has_exact ? test::worst_ulp_either<T>(gm, wm, golden<double>(exact_name), &at)
                       : test::worst_ulp<T>(gm, wm, &at);
    };
    const double err = measure(got);
    if (err > allowed) {
      const auto xs = cast<double>(x).eval().to_vector();
      MESSAGE(name, ": x = ", xs[at], " got ", got.to_vector()[at], " want ", want.to_vector()[at]);
    }
    CHECK(err <= allowed);
    const double err_strided = measure(unary_op<T>(name)(x_strided));
    CHECK(err_strided <= allowed);
  }
}

template <class T>
void check_binary_goldens(const char* tag) {
  const auto a = golden<T>(std::string("binary_a_") + tag);
  const auto b = golden<T>(std::string("binary_b_") + tag);
  // The same pairs through broadcasting: a column against a row.
  const auto a_col = a.select(1, 0).unsqueeze(1).contiguous();
  const auto b_row = b.select(0, 0).unsqueeze(0).contiguous();
  for (const auto& [name, tol] : kBinaryTol) {
    CAPTURE(name);
    const auto want = golden<double>("binary_" + name + "_" + tag);
    const double allowed = std::is_same_v<T, float> ? tol.f32 : tol.f64;
    int64_t at = -1;
    const auto got = binary_op<T>(name)(a, b);
    const std::string exact_name = "exact_binary_" + name + "_" + tag;
    const bool has_exact = test::file_exists(test::golden_path(exact_name));
    auto measure = [&](const Tensor<double>& g) {
      return has_exact ? test::worst_ulp_either<T>(g, want, golden<double>(exact_name), &at)
                       : test::worst_ulp<T>(g, want, &at);
    };
    const double err = measure(got);
    if (err > allowed)
      MESSAGE(name, ": a = ", double(a.flatten()(at)), " b = ", double(b.flatten()(at)), " got ",
              got.flatten()(at), " want ", want.flatten()(at));
    CHECK(err <= allowed);
    CAPTURE(at);
    CHECK(measure(binary_op<T>(name)(a_col, b_row)) <= allowed);
  }
}

}  // namespace

TEST_CASE("unary ops match PyTorch on the float32 grid") { check_unary_goldens<float>("f32"); }
TEST_CASE("unary ops match PyTorch on the float64 grid") { check_unary_goldens<double>("f64"); }
TEST_CASE("binary ops match PyTorch on float32 pairs, direct and broadcast") { check_binary_goldens<float>("f32"); }
TEST_CASE("binary ops match PyTorch on float64 pairs, direct and broadcast") { check_binary_goldens<double>("f64"); }

template <class I>
void check_integer_goldens(const char* tag) {
  const auto a = golden<I>(std::string("int_a_") + tag);
  const auto b = golden<I>(std::string("int_b_") + tag);
  auto want = [&](const std::string& n) { return golden<double>("int_" + n + "_" + tag); };
  auto same = [](const auto& got, const Tensor<double>& w) { return equal(cast<double>(got), w); };
  CHECK(same(a + b, want("add")));
  CHECK(same(a - b, want("sub")));
  CHECK(same(a * b, want("mul")));
  CHECK(test::worst_ulp<float>(a / b, want("div")) == 0);
  static_assert(std::is_same_v<typename decltype(a / b)::value_type, float>, "int / int is true division");
  CHECK(same(a % b, want("remainder")));
  CHECK(same(fmod(a, b), want("fmod")));
  CHECK(same(floor_divide(a, b), want("floor_divide")));
  CHECK(same(maximum(a, b), want("maximum")));
  CHECK(same(minimum(a, b), want("minimum")));
  CHECK(same(a & b, want("bitwise_and")));
  CHECK(same(a | b, want("bitwise_or")));
  CHECK(same(a ^ b, want("bitwise_xor")));
  CHECK(same(pow(a, abs(b) % 5), want("pow")));
  CHECK(same(a < b, want("lt")));
  CHECK(same(a == b, want("eq")));
  auto uwant = [&](const std::string& n) { return golden<double>("int_unary_" + n + "_" + tag); };
  CHECK(same(abs(a), uwant("abs")));
  CHECK(same(-a, uwant("neg")));
  CHECK(same(sign(a), uwant("sign")));
  CHECK(same(square(a), uwant("square")));
  CHECK(same(~a, uwant("bitwise_not")));
  CHECK(same(relu(a), uwant("relu")));
  CHECK(same(a + 3, uwant("add_int_scalar")));
  CHECK(same(pow(a, 2), uwant("pow_scalar")));
  CHECK(same(a % 3, uwant("remainder_scalar")));
  CHECK(test::worst_ulp<float>(sin(a), uwant("sin")) <= 2);
  CHECK(test::worst_ulp<float>(sqrt(a), uwant("sqrt")) == 0);
  CHECK(test::worst_ulp<float>(exp(a), uwant("exp")) <= 2);
  CHECK(test::worst_ulp<float>(sigmoid(a), uwant("sigmoid")) <= 3);
  CHECK(test::worst_ulp<float>(a / 4, uwant("div_scalar")) == 0);
  CHECK(test::worst_ulp<float>(a * 2.5, uwant("mul_float_scalar")) == 0);
  static_assert(std::is_same_v<typename decltype(a + 3)::value_type, I>, "an int scalar keeps the int type");
  static_assert(std::is_same_v<typename decltype(a * 2.5)::value_type, float>, "a float scalar makes int float");
  static_assert(std::is_same_v<typename decltype(sin(a))::value_type, float>, "sin of int is float");
  static_assert(std::is_same_v<typename decltype(a < b)::value_type, bool>, "comparisons are bool");
}

TEST_CASE("integer ops match PyTorch (int32, int64)") {
  check_integer_goldens<int32_t>("i32");
  check_integer_goldens<int64_t>("i64");
}

TEST_CASE("integer division by zero gives 0, never a crash") {
  auto a = tensor<int64_t>({5, -5, std::numeric_limits<int64_t>::min()});
  auto z = zeros<int64_t>({3});
  CHECK((a % z).to_vector() == std::vector<int64_t>{0, 0, 0});
  CHECK(floor_divide(a, z).to_vector() == std::vector<int64_t>{0, 0, 0});
  CHECK((a % -1).to_vector() == std::vector<int64_t>{0, 0, 0});
}

TEST_CASE("integer tensors to negative integer powers: refused for a scalar exponent, as PyTorch") {
  auto a = tensor<int32_t>({2, 1, -1});
  CHECK_THROWS_WITH_AS(pow(a, -1), "Integers to negative integer powers are not allowed.", Error);
  CHECK_THROWS_WITH_AS(pow(a, int64_t{-2}), "Integers to negative integer powers are not allowed.", Error);
  CHECK(pow(a, 0).to_vector() == std::vector<int32_t>{1, 1, 1});
  // A tensor of exponents is computed (torch.pow(tensor([2, 1, -1]), tensor([-1, -2, -3])): 0, 1, -1),
  // and a floating exponent promotes (torch.pow(tensor([2]), -1.0): 0.5).
  CHECK(pow(a, tensor<int32_t>({-1, -2, -3})).to_vector() == std::vector<int32_t>{0, 1, -1});
  CHECK(pow(a, -1.0).to_vector() == std::vector<float>{0.5f, 1.f, -1.f});
}

TEST_CASE("scalar operands keep the tensor's category (result_type)") {
  Tensor<float> f = ones({2});
  Tensor<int64_t> l = ones<int64_t>({2});
  Tensor<bool> b = ones<bool>({2});
  static_assert(std::is_same_v<decltype(f * 2.0)::value_type, float>);
  static_assert(std::is_same_v<decltype(l + 2.5)::value_type, float>);
  static_assert(std::is_same_v<decltype(b + 1)::value_type, int64_t>);
  static_assert(std::is_same_v<decltype(b + 1.5)::value_type, float>);
  static_assert(std::is_same_v<decltype(cast<half>(f) * 2.0)::value_type, half>);
  static_assert(std::is_same_v<decltype(f + cast<double>(f))::value_type, double>);
  CHECK(equal(l + 2.5, full({2}, 3.5f)));
}

// PyTorch 1.13: torch.square(b) and torch.pow(b, 2) of b = [True, False]
// are int64 [1, 0], torch.pow(b, 0) is [1, 1], torch.pow(b, -1) raises,
// torch.pow(b, 2.5) is float32 [1., 0.]. (The functions PyTorch refuses for
// bool tensors do not compile: test/compile_fail/bool_*.cpp.)
TEST_CASE("a bool tensor squares and takes integer powers in int64, as in PyTorch") {
  const Tensor<bool> b = tensor<bool>({true, false});
  static_assert(std::is_same_v<decltype(square(b))::value_type, int64_t>);
  static_assert(std::is_same_v<decltype(pow(b, 2))::value_type, int64_t>);
  static_assert(std::is_same_v<decltype(pow(b, 2.5))::value_type, float>);
  CHECK(equal(square(b), tensor<int64_t>({1, 0})));
  CHECK(equal(pow(b, 2), tensor<int64_t>({1, 0})));
  CHECK(equal(pow(b, 0), tensor<int64_t>({1, 1})));
  CHECK(equal(pow(b, 2.5), tensor<float>({1.f, 0.f})));
  CHECK_THROWS_WITH_AS(pow(b, -1), "Integers to negative integer powers are not allowed.", Error);
}

TEST_CASE("elementwise results on sizes that straddle SIMD widths, all tiers") {
  for (int64_t n : {0, 1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 127, 128, 129, 4095, 4097}) {
    CAPTURE(n);
    auto a = arange<float>(0.f, float(n)) * 0.01f - 0.3f;
    auto b = cos(a).eval();
    std::vector<float> va = a.to_vector(), vb = b.to_vector();
    // Contiguous (SIMD tier).
    Tensor<float> r = a * b + exp(-a);
    for (int64_t i = 0; i < n; ++i) REQUIRE(r.to_vector()[i] == doctest::Approx(va[i] * vb[i] + std::exp(-va[i])).epsilon(1e-6));
    // Strided destination and source (scalar tier) must agree to the last bit
    // for ops without SIMD transcendental differences: use + and *.
    auto buf = zeros<float>({n, 3});
    buf.select(1, 1) = a * b + 1.f;
    Tensor<float> contiguous_result = a * b + 1.f;
    CHECK(equal(buf.select(1, 1), contiguous_result));
    // Broadcast scalar-like operand (stride 0).
    auto row = full({1}, 2.f);
    CHECK(equal(a * row.expand({n}), a * 2.f));
  }
}

TEST_CASE("PyTorch's composite elementwise functions on integer and bool tensors, with PyTorch's dtypes") {
  // Expected values from torch 1.13 on the same inputs.
  const auto i = tensor<int64_t>({-2, 0, 3});
  const auto b = tensor<bool>({true, false});
  CHECK(equal(sgn(i), sign(i)));
  CHECK(equal(signbit(i), tensor<bool>({true, false, false})));
  CHECK(equal(signbit(b), tensor<bool>({false, false})));
  CHECK(equal(signbit(tensor<half>({half(-0.0f), half(1.0f)})), tensor<bool>({true, false})));
  CHECK(equal(positive(i), i));
  CHECK(positive(i).data_ptr() == i.data_ptr());  // torch.positive returns its input
  // addcmul truncates a fractional value in an integer computation.
  CHECK(equal(addcmul(i, i, i, 2.5), tensor<int64_t>({6, 0, 21})));
  static_assert(std::is_same_v<decltype(addcmul(ones<float>({1}), i, i))::value_type, float>);
  CHECK(equal(addcmul(full<float>({1}, 1.f), tensor<int64_t>({2}), tensor<int64_t>({3}), 0.5), tensor<float>({4.f})));
  test::check_close(addcdiv(tensor<int64_t>({1}), tensor<float>({2.f}), tensor<int64_t>({3})), tensor<double>({5.0 / 3}),
                    1e-7, 0, "addcdiv of an int input");
  // Angles of integers and bools are float.
  test::check_close(deg2rad(i), tensor<double>({-0.03490658503988659, 0, 0.05235987755982988}), 1e-7, 0, "deg2rad");
  test::check_close(deg2rad(b), tensor<double>({0.017453292519943295, 0}), 1e-7, 0, "deg2rad of bool");
  CHECK(equal(heaviside(i, i), tensor<int64_t>({0, 0, 1})));
  CHECK(equal(heaviside(b, b), tensor<bool>({true, false})));
  // float_power computes in double.
  static_assert(std::is_same_v<decltype(float_power(i, 2))::value_type, double>);
  CHECK(equal(float_power(i, 2), tensor<double>({4, 0, 9})));
  CHECK(equal(float_power(tensor<float>({2.f}), tensor<int64_t>({-1})), tensor<double>({0.5})));
  // isclose of integers compares the distance in float32: 2^62 and 2^62 + 100
  // are one float, so close within atol 50; with no tolerance, exact equality.
  const auto big = tensor<int64_t>({int64_t(1) << 62, 16777217, -20});
  const auto other = tensor<int64_t>({(int64_t(1) << 62) + 100, 16777216, -22});
  CHECK(equal(isclose(big, other, 0.05, 50), tensor<bool>({true, true, true})));
  CHECK(equal(isclose(big, other, 0.05, 0.5), tensor<bool>({true, true, false})));
  CHECK(equal(isclose(big, other, 0, 0), tensor<bool>({false, false, false})));
  CHECK(equal(isclose(b, ~b), tensor<bool>({false, false})));
  CHECK(equal(isclose(b, ~b, 0, 1), tensor<bool>({true, true})));
  CHECK(test::error_of([&] { (void)isclose(i, i, -1); }) == "rtol must be greater than or equal to zero, but got -1");
  CHECK(test::error_of([&] { (void)isclose(i, i, 0, -1); }) == "atol must be greater than or equal to zero, but got -1");
  // Infinities: the same infinity is close to itself, never to a finite value.
  const auto inf = std::numeric_limits<float>::infinity();
  CHECK(equal(isclose(tensor<float>({inf, 1e30f, 1.f}), tensor<float>({inf, inf, 1.f + 1e-6f})),
              tensor<bool>({true, false, true})));
  CHECK(equal(logaddexp(tensor<float>({inf, -inf, 1.f}), tensor<float>({inf, -inf, inf})), tensor<float>({inf, -inf, inf})));
  static_assert(std::is_same_v<decltype(logaddexp(ones<float>({1}), ones<double>({1})))::value_type, double>);
}

TEST_CASE("where, clamp with tensor bounds, lerp, cast") {
  auto x = tensor<float>({-2, -0.5, 0, 0.5, 2});
  auto lo = full({5}, -1.f);
  auto hi = tensor<float>({1, 1, 1, 0.25, 1});
  CHECK(clamp(x, lo, hi).to_vector() == std::vector<float>{-1, -0.5, 0, 0.25, 1});
  CHECK(where(x > 0.f, x, 0.f).to_vector() == std::vector<float>{0, 0, 0, 0.5, 2});
  CHECK(where(x > 0.f, 1, x).to_vector() == std::vector<float>{-2, -0.5, 0, 1, 1});
  CHECK(cast<int32_t>(x * 2.f).to_vector() == std::vector<int32_t>{-4, -1, 0, 1, 4});
  CHECK(cast<bool>(x).to_vector() == std::vector<bool>{true, true, false, true, true});
  CHECK(lerp(zeros({2}), ones({2}), 0.25f).to_vector() == std::vector<float>{0.25f, 0.25f});
  // PyTorch 1.13: clamp(tensor([True, False]), 0, 1) is int64 [1, 0],
  // clamp(tensor([True, False]), min=tensor([False, True])) is [True, True],
  // and lerp takes a weight of any number type (bool clamps and lerps of integer
  // or mixed dtypes do not compile: test/compile_fail).
  const auto b = tensor<bool>({true, false});
  const auto clamped = clamp(b, 0, 1);
  static_assert(std::is_same_v<decltype(clamped)::value_type, int64_t>);
  CHECK(clamped.to_vector() == std::vector<int64_t>{1, 0});
  CHECK(clamp(b, tensor<bool>({false, true})).to_vector() == std::vector<bool>{true, true});
  CHECK(lerp(zeros({2}), ones({2}), 1).to_vector() == std::vector<float>{1, 1});
}

TEST_CASE_TEMPLATE("clamp, lerp, fmax/fmin, hardtanh, threshold with NaN, infinite and signed-zero operands, in every position, as PyTorch", T, float, double) {
  const std::string tag = std::is_same_v<T, float> ? "f32" : "f64";
  const Tensor<T> v = test::golden<T>("bounds_in_" + tag);
  const int64_t n = v.numel();
  const auto x = v.reshape({n, 1, 1}), lo = v.reshape({1, n, 1}), hi = v.reshape({1, 1, n});
  test::check_close(clamp(x, lo, hi), test::golden<T>("bounds_clamp_tensor_" + tag), 0, 0, "tensor bounds");
  test::check_close(lerp(x, lo, hi), test::golden<T>("bounds_lerp_" + tag), 0, 0, "lerp");
  const Tensor<T> abw = test::golden<T>("bounds_lerp_abw_" + tag);
  test::check_close(lerp(abw.select(0, 0), abw.select(0, 1), abw.select(0, 2)), test::golden<T>("bounds_lerp_rand_" + tag),
                    0, 0, "lerp with weights in [-2, 2], bit for bit");
  std::vector<Tensor<T>> scalar, low, high, low1, high1;
  for (int64_t a = 0; a < n; ++a) {
    const T l = v.select(0, a).item();
    low.push_back(clamp_min(v, l));
    high.push_back(clamp_max(v, l));
    low1.push_back(clamp(v, l));  // libtorch's one-bound spellings
    high1.push_back(clamp(v, std::nullopt, l));
    for (int64_t b = 0; b < n; ++b) scalar.push_back(clamp(v, l, T(v.select(0, b).item())));
  }
  test::check_close(stack(scalar, 1).reshape({n, n, n}), test::golden<T>("bounds_clamp_scalar_" + tag), 0, 0,
                    "scalar bounds");
  test::check_close(stack(low, 1), test::golden<T>("bounds_clamp_min_" + tag), 0, 0, "clamp_min");
  test::check_close(stack(high, 1), test::golden<T>("bounds_clamp_max_" + tag), 0, 0, "clamp_max");
  const auto col = v.reshape({n, 1}), row = v.reshape({1, n});
  test::check_close(fmax(col, row), test::golden<T>("bounds_fmax_" + tag), 0, 0, "fmax");
  test::check_close(fmin(col, row), test::golden<T>("bounds_fmin_" + tag), 0, 0, "fmin");
  test::check_close(hardtanh(v), test::golden<T>("bounds_hardtanh_" + tag), 0, 0, "hardtanh");
  test::check_close(hardtanh(v, -0.5, 1.5), test::golden<T>("bounds_hardtanh_wide_" + tag), 0, 0, "hardtanh(-0.5, 1.5)");
  test::check_close(threshold(v, 0.5, -7.0), test::golden<T>("bounds_threshold_" + tag), 0, 0, "threshold");
  // Their gradients, where the bounds, ties and NaN decide who gets g.
  {
    auto t = repeat(v, {8}).requires_grad_();  // PyTorch's vectorized loop on all of them
    sum(hardtanh(t)).backward();
    test::check_close(t.grad(), test::golden<T>("bounds_hardtanh_grad_" + tag), 0, 0, "hardtanh'");
    t = repeat(v, {8}).requires_grad_();
    sum(threshold(t, 0.5, -7.0)).backward();
    test::check_close(t.grad(), test::golden<T>("bounds_threshold_grad_" + tag), 0, 0, "threshold'");
    auto a = col.clone().requires_grad_(), b = row.clone().requires_grad_();
    sum(fmax(a, b)).backward();
    test::check_close(a.grad(), test::golden<T>("bounds_fmax_grad_a_" + tag), 0, 0, "fmax' a");
    test::check_close(b.grad(), test::golden<T>("bounds_fmax_grad_b_" + tag), 0, 0, "fmax' b");
    a = col.clone().requires_grad_(), b = row.clone().requires_grad_();
    sum(fmin(a, b)).backward();
    test::check_close(a.grad(), test::golden<T>("bounds_fmin_grad_a_" + tag), 0, 0, "fmin' a");
    test::check_close(b.grad(), test::golden<T>("bounds_fmin_grad_b_" + tag), 0, 0, "fmin' b");
  }
  test::check_close(stack(low1, 1), test::golden<T>("bounds_clamp_min_" + tag), 0, 0, "clamp(x, lo)");
  test::check_close(stack(high1, 1), test::golden<T>("bounds_clamp_max_" + tag), 0, 0, "clamp(x, nullopt, hi)");
}

TEST_CASE("broadcasting errors use PyTorch's text") {
  auto a = zeros({2, 3});
  auto b = zeros({4});
  CHECK_THROWS_WITH_AS((void)(a + b), "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1", Error);
  CHECK_THROWS_WITH_AS((void)(b + a), "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1", Error);
  CHECK((zeros({3, 1}) + zeros({1, 4})).sizes() == Shape{3, 4});
  // Several mismatching dims: PyTorch names the last one.
  CHECK_THROWS_WITH_AS((void)(zeros({2, 3, 4}) + zeros({3, 3, 5})),
                       "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 2", Error);
}

namespace {
// Floats from 0 to |end| whose bit patterns are 509 apart, with end's sign:
// a walk over every binade of a range for the inlined batch paths below.
std::vector<float> every_509th_float(float end) {
  uint32_t top;
  std::memcpy(&top, &end, sizeof top);
  top &= 0x7fffffffu;
  std::vector<float> out;
  for (uint32_t u = 0; u <= top; u += 509) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    out.push_back(std::copysign(f, end));
  }
  return out;
}
}  // namespace

TEST_CASE("float exp: the inlined batch path is within 1.6 ulp of double-precision libm") {
  // detail/float_exp.hpp computes x in [kExpFastMin, kExpFastMax] itself and
  // hands the rest (subnormal or zero results, overflow, inf, nan) to the C
  // library. Every 509th float of [0, 88.72] and of [-103.98, 0] (about 4.4
  // million), the ends of the fast range and their neighbours, against
  // std::exp in double (PyTorch's own float exp is within 1 ulp of it).
  std::vector<float> xs;
  for (float end : {tsr::detail::kExpFastMax, -103.98f})
    for (float f : every_509th_float(end)) xs.push_back(f);
  for (float f : {tsr::detail::kExpFastMin, tsr::detail::kExpFastMax}) {
    xs.push_back(std::nextafter(f, -INFINITY));
    xs.push_back(f);
    xs.push_back(std::nextafter(f, INFINITY));
  }
  for (float f : {0.f, -0.f, 1.f, -1.f, 89.f, -104.f, -150.f, INFINITY, -INFINITY, NAN}) xs.push_back(f);
  const auto x = tensor<float>(xs);
  std::vector<double> want(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    want[i] = std::exp(static_cast<double>(xs[i]));
    if (want[i] > std::numeric_limits<float>::max()) want[i] = INFINITY;  // the float result overflows
  }
  CHECK(test::worst_ulp<float>(exp(x), tensor<double>(want)) <= 1.6);
  CHECK(exp(tensor<float>({0.f, 0.f, 0.f, 0.f})).eval()(0) == 1.f);
}

TEST_CASE("float sin and cos: the inlined batch path is within 1 ulp of double-precision libm") {
  // detail/float_trig.hpp reduces |x| <= 128 itself and hands larger or
  // non-finite lanes to xsimd. Every 509th float of [0, 128] (about 2.2
  // million; tools/check_float_trig.cpp walks all of them), their
  // negatives, the floats nearest multiples of pi/2, and inf/nan (xsimd's
  // path), against std::sin/std::cos in double rounded to float.
  std::vector<float> xs;
  const float bound = tsr::detail::kFastTrigBound;
  for (float f : every_509th_float(bound)) {
    xs.push_back(f);
    xs.push_back(-f);
  }
  for (int k = 1; k <= 81; ++k) {
    const float m = static_cast<float>(k * 1.5707963267948966);
    for (float f : {std::nextafter(m, 0.f), m, std::nextafter(m, 200.f)}) xs.push_back(f);
  }
  for (float f : {0.f, -0.f, bound, std::nextafter(bound, 0.f), INFINITY, -INFINITY, NAN})
    xs.push_back(f);
  const auto x = tensor<float>(xs);
  std::vector<double> want_sin(xs.size()), want_cos(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    want_sin[i] = static_cast<float>(std::sin(static_cast<double>(xs[i])));
    want_cos[i] = static_cast<float>(std::cos(static_cast<double>(xs[i])));
  }
  CHECK(test::worst_ulp<float>(sin(x), tensor<double>(want_sin)) <= 1);
  CHECK(test::worst_ulp<float>(cos(x), tensor<double>(want_cos)) <= 1);
  // The signs of zero survive (sin is odd, cos(-0) = 1).
  CHECK(std::signbit(sin(tensor<float>({-0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f})).eval()(0)));
}

TEST_CASE("float tanh: the inlined batch path is within 1.4 ulp of double-precision libm") {
  // detail/float_tanh.hpp: a polynomial below |x| = 0.625, 1 - 2 / (e^2|x| + 1)
  // above it with |x| capped at 9. Every 509th float of [0, 20] (about 2.2
  // million) and their negatives, both sides of the switch and of the cap,
  // zeros, inf and nan, against std::tanh in double (worst seen over every
  // 7th float of [-20, 20]: 1.33 ulp).
  std::vector<float> xs;
  for (float f : every_509th_float(20.f)) {
    xs.push_back(f);
    xs.push_back(-f);
  }
  for (float m : {0.625f, 9.f})
    for (float f : {std::nextafter(m, 0.f), m, std::nextafter(m, 20.f)}) xs.push_back(f);
  for (float f : {0.f, -0.f, INFINITY, -INFINITY, NAN}) xs.push_back(f);
  const auto x = tensor<float>(xs);
  std::vector<double> want(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) want[i] = std::tanh(static_cast<double>(xs[i]));
  CHECK(test::worst_ulp<float>(tanh(x), tensor<double>(want)) <= 1.4);
  CHECK(std::signbit(tanh(tensor<float>({-0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f})).eval()(0)));
}

TEST_CASE("PyTorch's other names: add and sub with alpha, rsub, div with a rounding mode, copysign, isposinf") {
  const auto p = golden<float>("iw_p"), q = golden<float>("iw_q");
  test::check_close(add(p, q, -1.5), golden("iw_add_alpha"), 1e-7, 0, "add with alpha");
  test::check_close(sub(p, q, 3), golden("iw_sub_alpha"), 1e-7, 0, "sub with alpha");
  test::check_close(rsub(p, q, 2), golden("iw_rsub"), 1e-7, 0, "rsub");
  const auto n1 = tensor<int64_t>({-7, 7, -8, 0, 9, -1}), n2 = tensor<int64_t>({2, -2, 2, 3, 3, 5});
  CHECK(equal(div(n1, n2, "trunc"), golden<int64_t>("iw_div_trunc_int")));
  CHECK(equal(div(n1, n2, "floor"), golden<int64_t>("iw_div_floor_int")));
  CHECK(equal(div(p * 4.f, q, "trunc"), golden<float>("iw_div_trunc")));
  CHECK(equal(div(p * 4.f, q, "floor"), golden<float>("iw_div_floor")));
  CHECK(test::error_of([&] { div(p, q, "round"); }) ==
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'");
  CHECK(equal(Tensor<float>(copysign(p, q)), golden<float>("iw_copysign")));
  CHECK(equal(Tensor<float>(copysign(tensor<int64_t>({1, -2, 0, 3}), tensor<float>({-0.f, 1.f, -1.f, -NAN}))),
              golden<float>("iw_copysign_int")));
  const auto inf = std::numeric_limits<float>::infinity();
  const auto special = tensor<float>({1.f, inf, -inf, NAN});
  CHECK(equal(stack({Tensor<bool>(isposinf(special)), Tensor<bool>(isneginf(special))}), golden<bool>("iw_posneginf")));
  CHECK(Tensor<bool>(isposinf(tensor<int>({1, 2}))).to_vector() == std::vector<bool>{false, false});
  // The other names are the same expressions (checked on values, exactly).
  CHECK(equal(Tensor<float>(clip(p, -0.5, 0.5)), Tensor<float>(clamp(p, -0.5, 0.5))));
  CHECK(equal(Tensor<bool>(greater_equal(p, q)), Tensor<bool>(p >= q)));
  CHECK(equal(Tensor<float>(max(p, q)), Tensor<float>(maximum(p, q))));
  CHECK(equal(Tensor<float>(arctan2(p, q)), Tensor<float>(atan2(p, q))));
  CHECK(equal(Tensor<float>(true_divide(p, q)), Tensor<float>(p / q)));
}

TEST_CASE("gcd, lcm, the bitwise shifts, nextafter and frexp") {
  const auto a = test::golden<int64_t>("ip_a"), b = test::golden<int64_t>("ip_b");
  CHECK(equal(Tensor<int64_t>(gcd(a, b)), test::golden<int64_t>("ip_gcd")));
  CHECK(equal(Tensor<int64_t>(lcm(a, b)), test::golden<int64_t>("ip_lcm")));
  CHECK(equal(Tensor<int64_t>(gcd(a, int64_t{4})), tensor<int64_t>({4, 4, 4, 4, 1, 4, 1, 1})));  // by hand
  // The most negative value: its magnitude wraps to itself, as in PyTorch.
  CHECK(Tensor<int32_t>(gcd(tensor<int32_t>({INT32_MIN}), 0)).item() == INT32_MIN);
  const auto x = test::golden<int32_t>("ip_x"), n = test::golden<int32_t>("ip_n");
  CHECK(equal(Tensor<int32_t>(bitwise_left_shift(x, n)), test::golden<int32_t>("ip_shl")));
  CHECK(equal(Tensor<int32_t>(bitwise_right_shift(x, n)), test::golden<int32_t>("ip_shr")));
  // Counts outside [0, 32): 0 to the left, the sign to the right (defined as in PyTorch 2).
  const auto big = tensor<int32_t>({32, -1, 40});
  CHECK(equal(Tensor<int32_t>(bitwise_left_shift(tensor<int32_t>({1, 1, 7}), big)), zeros<int32_t>({3})));
  CHECK(equal(Tensor<int32_t>(bitwise_right_shift(tensor<int32_t>({5, -8, -1}), big)), tensor<int32_t>({0, -1, -1})));
  CHECK(equal(Tensor<int64_t>(bitwise_left_shift(tensor<int64_t>({1}), int64_t{40})), tensor<int64_t>({int64_t{1} << 40})));

  const auto f = test::golden<float>("ip_f"), t = test::golden<float>("ip_t");
  CHECK(test::bitwise_equal(Tensor<float>(nextafter(f, t)), test::golden<float>("ip_nextafter")));
  CHECK(test::bitwise_equal(Tensor<double>(nextafter(f.to<double>(), t.to<double>())),
                            test::golden<double>("ip_nextafter_f64")));
  auto fr = f.clone();
  const auto [mantissa, exponent] = frexp(fr);
  CHECK(equal(exponent, test::golden<int32_t>("ip_frexp_e")));
  test::check_close(mantissa, test::golden("ip_frexp_m"), 0, 0, "frexp mantissa");
  // The mantissa's gradient is 2^-exponent (by hand: 8 = 0.5 * 2^4, -2.25 = -0.5625 * 2^2).
  auto v = tensor<double>({8, -2.25, 0}).requires_grad_();
  sum(std::get<0>(frexp(v))).backward();
  CHECK(equal(v.grad(), tensor<double>({1.0 / 16, 0.25, 1})));
}

namespace {
// Each method named in ip_<tag>_names.txt (one per line) applied to a copy
// of x; the result, written in place, is checked against the same row of
// PyTorch's ip_<tag>_out by check(got, want, name).
template <class T, class Check>
void check_in_place_methods(const Tensor<T>& x, const std::string& tag,
                            const std::map<std::string, std::function<void(Tensor<T>&)>>& methods, Check check) {
  const auto want = golden<T>("ip_" + tag + "_out");
  std::ifstream in(std::string(TSR_GOLDEN_DIR) + "/ip_" + tag + "_names.txt");
  int64_t row = 0;
  for (std::string name; std::getline(in, name); ++row) {
    INFO(name);
    REQUIRE(methods.count(name) == 1);
    REQUIRE(row < want.size(0));
    Tensor<T> t = x.clone();
    const T* storage = t.data_ptr();
    methods.at(name)(t);
    CHECK(t.data_ptr() == storage);
    check(t, Tensor<T>(want.select(0, row)), name);
  }
  CHECK(row == want.size(0));
}
}  // namespace

TEST_CASE("in-place methods (x.exp_(), x.pow_(y), x.addcdiv_(...)) write PyTorch's results on float tensors") {
  const auto x = golden<float>("ip_float_in"), y = golden<float>("ip_float_other"), z = golden<float>("ip_float_third");
  using Method = std::function<void(Tensor<float>&)>;
  const std::map<std::string, Method> methods = {
      {"abs", [](auto& t) { t.abs_(); }}, {"absolute", [](auto& t) { t.absolute_(); }},
      {"neg", [](auto& t) { t.neg_(); }}, {"negative", [](auto& t) { t.negative_(); }},
      {"sign", [](auto& t) { t.sign_(); }}, {"sgn", [](auto& t) { t.sgn_(); }},
      {"square", [](auto& t) { t.square_(); }}, {"sqrt", [](auto& t) { t.sqrt_(); }},
      {"rsqrt", [](auto& t) { t.rsqrt_(); }}, {"reciprocal", [](auto& t) { t.reciprocal_(); }},
      {"exp", [](auto& t) { t.exp_(); }}, {"exp2", [](auto& t) { t.exp2_(); }},
      {"expm1", [](auto& t) { t.expm1_(); }}, {"log", [](auto& t) { t.log_(); }},
      {"log2", [](auto& t) { t.log2_(); }}, {"log10", [](auto& t) { t.log10_(); }},
      {"log1p", [](auto& t) { t.log1p_(); }}, {"sin", [](auto& t) { t.sin_(); }},
      {"cos", [](auto& t) { t.cos_(); }}, {"tan", [](auto& t) { t.tan_(); }},
      {"asin", [](auto& t) { t.asin_(); }}, {"acos", [](auto& t) { t.acos_(); }},
      {"atan", [](auto& t) { t.atan_(); }}, {"sinh", [](auto& t) { t.sinh_(); }},
      {"cosh", [](auto& t) { t.cosh_(); }}, {"tanh", [](auto& t) { t.tanh_(); }},
      {"asinh", [](auto& t) { t.asinh_(); }}, {"acosh", [](auto& t) { t.acosh_(); }},
      {"atanh", [](auto& t) { t.atanh_(); }}, {"arcsin", [](auto& t) { t.arcsin_(); }},
      {"arccos", [](auto& t) { t.arccos_(); }}, {"arctan", [](auto& t) { t.arctan_(); }},
      {"arcsinh", [](auto& t) { t.arcsinh_(); }}, {"arccosh", [](auto& t) { t.arccosh_(); }},
      {"arctanh", [](auto& t) { t.arctanh_(); }}, {"sigmoid", [](auto& t) { t.sigmoid_(); }},
      {"relu", [](auto& t) { t.relu_(); }}, {"ceil", [](auto& t) { t.ceil_(); }},
      {"floor", [](auto& t) { t.floor_(); }}, {"round", [](auto& t) { t.round_(); }},
      {"trunc", [](auto& t) { t.trunc_(); }}, {"fix", [](auto& t) { t.fix_(); }},
      {"frac", [](auto& t) { t.frac_(); }}, {"erf", [](auto& t) { t.erf_(); }},
      {"erfc", [](auto& t) { t.erfc_(); }}, {"erfinv", [](auto& t) { t.erfinv_(); }},
      {"lgamma", [](auto& t) { t.lgamma_(); }}, {"digamma", [](auto& t) { t.digamma_(); }},
      {"i0", [](auto& t) { t.clamp_(-50, 50).i0_(); }}, {"sinc", [](auto& t) { t.sinc_(); }},
      {"deg2rad", [](auto& t) { t.deg2rad_(); }}, {"rad2deg", [](auto& t) { t.rad2deg_(); }},
      {"logit", [](auto& t) { t.logit_(); }}, {"nan_to_num", [](auto& t) { t.nan_to_num_(); }},
      {"logical_not", [](auto& t) { t.logical_not_(); }},
      {"pow", [&](auto& t) { t.pow_(y); }}, {"atan2", [&](auto& t) { t.atan2_(y); }},
      {"arctan2", [&](auto& t) { t.arctan2_(y); }}, {"remainder", [&](auto& t) { t.remainder_(y); }},
      {"fmod", [&](auto& t) { t.fmod_(y); }}, {"hypot", [&](auto& t) { t.hypot_(y); }},
      {"copysign", [&](auto& t) { t.copysign_(y); }}, {"nextafter", [&](auto& t) { t.nextafter_(y); }},
      {"xlogy", [&](auto& t) { t.xlogy_(y); }}, {"ldexp", [&](auto& t) { t.ldexp_(y); }},
      {"multiply", [&](auto& t) { t.multiply_(y); }}, {"divide", [&](auto& t) { t.divide_(y); }},
      {"true_divide", [&](auto& t) { t.true_divide_(y); }}, {"floor_divide", [&](auto& t) { t.floor_divide_(y); }},
      {"logical_and", [&](auto& t) { t.logical_and_(y); }}, {"logical_or", [&](auto& t) { t.logical_or_(y); }},
      {"logical_xor", [&](auto& t) { t.logical_xor_(y); }}, {"eq", [&](auto& t) { t.eq_(y); }},
      {"ne", [&](auto& t) { t.ne_(y); }}, {"lt", [&](auto& t) { t.lt_(y); }},
      {"le", [&](auto& t) { t.le_(y); }}, {"gt", [&](auto& t) { t.gt_(y); }},
      {"ge", [&](auto& t) { t.ge_(y); }}, {"not_equal", [&](auto& t) { t.not_equal_(y); }},
      {"less", [&](auto& t) { t.less_(y); }}, {"less_equal", [&](auto& t) { t.less_equal_(y); }},
      {"greater", [&](auto& t) { t.greater_(y); }}, {"greater_equal", [&](auto& t) { t.greater_equal_(y); }},
      {"heaviside", [&](auto& t) { t.heaviside_(y); }},
      {"igamma", [&](auto& t) { t.abs_().igamma_(abs(y)); }}, {"igammac", [&](auto& t) { t.abs_().igammac_(abs(y)); }},
      {"pow_scalar", [](auto& t) { t.pow_(3); }}, {"add_alpha", [&](auto& t) { t.add_(y, 2); }},
      {"sub_alpha", [&](auto& t) { t.sub_(y, 0.5); }}, {"subtract_alpha", [&](auto& t) { t.subtract_(y, -1.5); }},
      {"clamp_min", [](auto& t) { t.clamp_min_(0.1); }}, {"clamp_max", [&](auto& t) { t.clamp_max_(y); }},
      {"clip", [](auto& t) { t.clip_(-1, 1); }}, {"lerp", [&](auto& t) { t.lerp_(y, 0.25); }},
      {"lerp_tensor", [&](auto& t) { t.lerp_(y, z); }}, {"addcmul", [&](auto& t) { t.addcmul_(y, z, 0.5); }},
      {"addcdiv", [&](auto& t) { t.addcdiv_(y, z, 2); }}, {"div_floor", [&](auto& t) { t.div_(y, "floor"); }},
      {"div_trunc", [&](auto& t) { t.div_(y, "trunc"); }}, {"divide_floor", [&](auto& t) { t.divide_(z, "floor"); }},
      {"round_decimals", [](auto& t) { t.round_(1); }}, {"logit_eps", [](auto& t) { t.logit_(0.1); }},
      {"nan_to_num_args", [](auto& t) { t.nan_to_num_(1.0, 5.0, -5.0); }},
      {"polygamma", [](auto& t) { t.add_(0.25).polygamma_(1); }}, {"mvlgamma", [](auto& t) { t.abs_().add_(1).mvlgamma_(2); }},
      {"chained", [](auto& t) { t.mul_(2).add_(1).tanh_(); }},
  };
  check_in_place_methods<float>(x, "float", methods, [](const auto& got, const auto& want, const std::string& name) {
    test::check_close(got, want, 4e-6, 1e-6, name);
  });
}

TEST_CASE("in-place methods on integer tensors, and results that cannot be written back") {
  const auto i = golden<int64_t>("ip_int_in"), j = golden<int64_t>("ip_int_other");
  using Method = std::function<void(Tensor<int64_t>&)>;
  const std::map<std::string, Method> methods = {
      {"abs", [](auto& t) { t.abs_(); }}, {"neg", [](auto& t) { t.neg_(); }},
      {"sign", [](auto& t) { t.sign_(); }}, {"square", [](auto& t) { t.square_(); }},
      {"relu", [](auto& t) { t.relu_(); }}, {"bitwise_not", [](auto& t) { t.bitwise_not_(); }},
      {"logical_not", [](auto& t) { t.logical_not_(); }}, {"remainder", [&](auto& t) { t.remainder_(j); }},
      {"fmod", [&](auto& t) { t.fmod_(j); }}, {"floor_divide", [&](auto& t) { t.floor_divide_(j); }},
      {"gcd", [&](auto& t) { t.gcd_(j); }}, {"lcm", [&](auto& t) { t.lcm_(j); }},
      {"bitwise_and", [&](auto& t) { t.bitwise_and_(j); }}, {"bitwise_or", [&](auto& t) { t.bitwise_or_(j); }},
      {"bitwise_xor", [&](auto& t) { t.bitwise_xor_(j); }}, {"eq", [&](auto& t) { t.eq_(j); }},
      {"lt", [&](auto& t) { t.lt_(j); }}, {"ge", [&](auto& t) { t.ge_(j); }},
      {"logical_and", [&](auto& t) { t.logical_and_(j); }}, {"multiply", [&](auto& t) { t.multiply_(j); }},
      {"shift_left", [](auto& t) { t.bitwise_left_shift_(2); }}, {"shift_right", [](auto& t) { t.bitwise_right_shift_(1); }},
      {"pow_scalar", [](auto& t) { t.pow_(2); }}, {"div_floor", [&](auto& t) { t.div_(j, "floor"); }},
      {"div_trunc", [&](auto& t) { t.div_(j, "trunc"); }}, {"add_alpha", [&](auto& t) { t.add_(j, 3); }},
      {"clamp_min", [](auto& t) { t.clamp_min_(-2); }}, {"cumsum", [](auto& t) { t.cumsum_(0); }},
  };
  check_in_place_methods<int64_t>(i, "int", methods, [](const auto& got, const auto& want, const std::string&) {
    CHECK(test::bitwise_equal(got, want));
  });
  // (An integer tensor's sqrt_ or div_ without a rounding mode, and a float
  // one's float_power_, do not compile: the result type cannot be written
  // back, "result type Float can't be cast to the desired output type Long".)
  // Broadcasting extends the other operand only, as PyTorch's.
  Tensor<float> row = ones<float>({3});
  CHECK(test::error_of([&] { row.add_(ones<float>({2, 3})); }) ==
        "output with shape [3] doesn't match the broadcast shape [2, 3]");
  Tensor<float> grid = zeros<float>({2, 3});
  grid.add_(arange<float>(3));
  CHECK(test::bitwise_equal(grid, Tensor<float>(arange<float>(3).expand({2, 3}).contiguous())));
}

TEST_CASE("in-place methods along dims, float_power_, and gradients through chains of them as PyTorch") {
  const auto m = golden<double>("ip_dims_in");
  test::check_close(m.clone().tril_(), golden<double>("ip_dims_tril"), 0, 0, "tril_");
  test::check_close(m.clone().triu_(1), golden<double>("ip_dims_triu"), 0, 0, "triu_");
  test::check_close(m.clone().cumsum_(1), golden<double>("ip_dims_cumsum"), 1e-15, 1e-15, "cumsum_");
  test::check_close(m.clone().cumprod_(0), golden<double>("ip_dims_cumprod"), 1e-15, 1e-15, "cumprod_");
  test::check_close(m.clone().renorm_(2, 0, 1.0), golden<double>("ip_dims_renorm"), 1e-14, 1e-15, "renorm_");
  test::check_close(m.clone().abs_().float_power_(m), golden<double>("ip_dims_float_power"), 1e-14, 0, "float_power_");
  test::check_close(zeros<float>({7, 3}).fill_diagonal_(2, true), golden<float>("ip_fill_diagonal_wrap"), 0, 0, "wrap");
  test::check_close(zeros<float>({7, 3}).fill_diagonal_(2), golden<float>("ip_fill_diagonal_tall"), 0, 0, "tall");
  test::check_close(zeros<float>({3, 5}).fill_diagonal_(-1.5f, true), golden<float>("ip_fill_diagonal_wide"), 0, 0, "wide");
  test::check_close(zeros<float>({3, 3, 3}).fill_diagonal_(4), golden<float>("ip_fill_diagonal_cube"), 0, 0, "cube");
  Tensor<float> transposed = zeros<float>({5, 4}).t();
  transposed.fill_diagonal_(3, true);
  test::check_close(transposed.t(), golden<float>("ip_fill_diagonal_view"), 0, 0, "through a transposed view");
  {
    Tensor<double> x = m.clone();
    x.requires_grad_();
    Tensor<double> y = x * 2.0;
    y.fill_diagonal_(5);
    Tensor<double>(sum(y * y)).backward();
    test::check_close(x.grad(), golden<double>("ip_fill_diagonal_grad"), 0, 0, "fill_diagonal_ gradient");
  }
  CHECK(test::error_of([] { zeros<float>({3, 2, 3}).fill_diagonal_(1); }) ==
        "all dimensions of input must be of equal length");
  CHECK(test::error_of([] { zeros<float>({3}).fill_diagonal_(1); }) == "dimensions must larger than 1");

  const auto w = golden<double>("ip_chain_w");
  const std::map<std::string, std::function<void(Tensor<double>&, const Tensor<double>&)>> chains = {
      {"a", [](auto& y, const auto& x) { y.sin_().pow_(2).addcdiv_(x, exp(x), 0.5).clamp_min_(0.05).sqrt_(); }},
      {"b", [](auto& y, const auto& x) { y.mul_(x).lerp_(x, 0.3).cumprod_(1); }},
      {"c",
       [](auto& y, const auto& x) {
         y.renorm_(2, 0, 1.5).triu_(0).xlogy_(abs(x) + 1);
         y.select(0, 1).exp_();
       }},
  };
  for (const auto& [name, chain] : chains) {
    INFO(name);
    Tensor<double> x = m.clone();
    x.requires_grad_();
    Tensor<double> y = x * 1.0;
    chain(y, x);
    Tensor<double>(sum(y * w)).backward();
    test::check_close(y, golden<double>("ip_chain_" + name + "_out"), 1e-13, 1e-14, "value");
    test::check_close(x.grad(), golden<double>("ip_chain_" + name + "_grad"), 1e-12, 1e-13, "gradient");
  }
  // An in-place write after one whose node keeps its result: PyTorch raises
  // ("one of the variables needed for gradient computation has been modified
  // by an inplace operation"), tessera's nodes read copies of the values they
  // need. d/dx lerp(tanh(x), x, 0.3) = 0.7 (1 - tanh(x)^2) + 0.3.
  {
    Tensor<double> x = m.clone();
    x.requires_grad_();
    Tensor<double> y = x * 1.0;
    y.tanh_().lerp_(x, 0.3);
    Tensor<double>(sum(y)).backward();
    test::check_close(x.grad(), 0.7 * (1.0 - square(tanh(m))) + 0.3, 1e-15, 1e-15, "tanh_ then lerp_");
  }
  // A leaf that requires grad takes no in-place write outside NoGradGuard.
  Tensor<double> leaf = m.clone();
  leaf.requires_grad_();
  CHECK(test::error_of([&] { leaf.exp_(); }) ==
        "a leaf Variable that requires grad is being used in an in-place operation.");
}

TEST_CASE("the indexed writes as methods write what the functions of the same name write") {
  const Tensor<float> x = arange<float>(12).reshape({3, 4});
  const Tensor<bool> mask = Tensor<bool>(remainder(x, 3.f) == 0.f);
  const Tensor<int64_t> rows = tensor<int64_t>({2, 0}), cols = tensor<int64_t>({3, 1, 0, 2, 0, 0, 1, 1, 2, 3, 3, 0}).reshape({3, 4});
  const Tensor<float> src = arange<float>(100, 112).reshape({3, 4}), two_rows = Tensor<float>(src.slice(0, 0, 2));
  const auto same = [](const Tensor<float>& method, const Tensor<float>& function) { CHECK(test::bitwise_equal(method, function)); };
  {
    Tensor<float> a = x.clone(), b = x.clone();
    same(a.masked_fill_(mask, -1.f), masked_fill_(b, mask, -1.f));
  }
  {
    Tensor<float> a = x.clone(), b = x.clone();
    same(a.masked_scatter_(mask, src), masked_scatter_(b, mask, src));
  }
  {
    Tensor<float> a = x.clone(), b = x.clone();
    same(a.index_add_(0, rows, two_rows, 2), index_add_(b, 0, rows, two_rows, 2));
  }
  {
    Tensor<float> a = x.clone(), b = x.clone();
    same(a.index_copy_(0, rows, two_rows), index_copy_(b, 0, rows, two_rows));
  }
  {
    Tensor<float> a = x.clone(), b = x.clone();
    same(a.index_fill_(1, rows, 7.f), index_fill_(b, 1, rows, 7.f));
  }
  {
    Tensor<float> a = x.clone(), b = x.clone(), c = x.clone(), d = x.clone();
    same(a.scatter_(1, cols, src), scatter_(b, 1, cols, src));
    same(c.scatter_(1, cols, 0.5f), scatter_(d, 1, cols, 0.5f));
  }
  {
    Tensor<float> a = x.clone(), b = x.clone(), c = x.clone(), d = x.clone();
    same(a.scatter_add_(1, cols, src), scatter_add_(b, 1, cols, src));
    same(c.scatter_reduce_(1, cols, src, "amax", false), scatter_reduce_(d, 1, cols, src, "amax", false));
  }
  {
    Tensor<float> a = ones<float>({3, 3}), b = ones<float>({3, 3});
    same(a.addmm_(x, x.t(), 0.5, 2.0), addmm_(b, x, x.t(), 0.5, 2.0));
  }
  {
    Tensor<float> a = x.clone(), b = x.clone(), c = x.clone(), d = x.clone();
    same(a.index_put_({mask}, 0.f), index_put_(b, {mask}, 0.f));
    same(c.index_put_({rows, std::nullopt}, two_rows, true), index_put_(d, {rows, std::nullopt}, two_rows, true));
  }
  {
    Tensor<float> a = x.clone(), b = x.clone();
    manual_seed(3);
    a.bernoulli_(0.3);
    manual_seed(3);
    same(a, bernoulli_(b, 0.3));
  }
}
