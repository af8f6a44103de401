// Python's repr of a float, as PyTorch prints options in reprs and errors.
#pragma once
#include <sstream>
#include <string>

namespace tsr::detail {
// The shortest form that reads back, with ".0" on whole numbers.
inline std::string python_float_repr(double v) {
  std::string s;
  for (int p = 1; p <= 17; ++p) {
    std::ostringstream t;
    t.precision(p);
    t << v;
    s = t.str();
    if (std::stod(s) == v) break;
  }
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}
}  // namespace tsr::detail
