// Python's repr of a float, as PyTorch prints options in reprs and errors.
#pragma once
#include <charconv>
#include <cmath>
#include <string>

namespace tsr::detail {
// The shortest digits that read back, laid out as Python's repr does: fixed
// notation (".0" on whole numbers) for decimal exponents -4 to 15, else
// d.ddde+XX (20.0, 0.0001, 1e-05, 1e+16).
inline std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // The shortest digits that read back as v, in scientific form: [-]d[.ddd]e(+|-)x.
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string sci(buf, end);
  const std::size_t e = sci.find('e');
  const bool negative = sci[0] == '-';
  std::string digits;
  for (std::size_t i = negative ? 1 : 0; i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string s = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {  // Python's repr switches to exponent form here
    s += digits.substr(0, 1);
    if (digits.size() > 1) s.append(".").append(digits, 1);  // not "." + ...: GCC 12 warns falsely there (-Wrestrict)
    const int a = exponent < 0 ? -exponent : exponent;
    return s + (exponent < 0 ? "e-" : "e+") + (a < 10 ? "0" : "") + std::to_string(a);
  }
  if (exponent < 0) return s + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  const auto point = static_cast<std::size_t>(exponent) + 1;  // digits before the point
  if (digits.size() <= point) return s + digits + std::string(point - digits.size(), '0') + ".0";
  return s + digits.substr(0, point) + "." + digits.substr(point);
}

// PyTorch's repr of a shape, torch.Size([2, 3]), as its messages print one.
template <class Sizes>
std::string torch_size(const Sizes& sizes) {
  std::string s = "torch.Size([";
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "])";
}
}  // namespace tsr::detail
