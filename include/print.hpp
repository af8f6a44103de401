// Printing tensors exactly as PyTorch 1.13 does (torch/_tensor_str.py):
// precision 4, line width 80, summarization above 1000 elements with 3 edge
// items, fixed or scientific notation chosen from the values, integer-valued
// floats printed as "1.", and the dtype suffix where PyTorch prints one.
#pragma once
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "factories.hpp"

namespace tsr {
namespace detail {

struct PrintOptions {
  int precision = 4;
  int64_t threshold = 1000;
  int64_t edgeitems = 3;
  int64_t linewidth = 80;
};

inline std::string format_double(const char* fmt, int precision, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, precision, v);
  return buf;
}

// Python's "{:.Nf}" / "{:.Ne}" / str() for the values a tensor holds.
class Formatter {
 public:
  template <class T>
  Formatter(const std::vector<T>& values, const PrintOptions& opt) : opt_(opt) {
    floating_ = is_floating_v<T>;
    if (!floating_) {
      for (const T& v : values) width_ = std::max(width_, format_plain(v).size());
      return;
    }
    std::vector<double> finite;
    for (const T& v : values) {
      const double d = double(acc_t<T>(v));
      if (std::isfinite(d) && d != 0) finite.push_back(d);
    }
    if (finite.empty()) return;
    double lo = std::abs(finite[0]), hi = lo;
    for (double d : finite) {
      lo = std::min(lo, std::abs(d));
      hi = std::max(hi, std::abs(d));
      if (d != std::ceil(d)) int_mode_ = false;
    }
    if (int_mode_) {
      if (hi / lo > 1000.0 || hi > 1.0e8) {
        sci_mode_ = true;
        for (double d : finite) width_ = std::max(width_, format_double("%.*e", opt_.precision, d).size());
      } else {
        for (double d : finite) width_ = std::max(width_, format_double("%.*f", 0, d).size() + 1);
      }
    } else if (hi / lo > 1000.0 || hi > 1.0e8 || lo < 1.0e-4) {
      sci_mode_ = true;
      for (double d : finite) width_ = std::max(width_, format_double("%.*e", opt_.precision, d).size());
    } else {
      for (double d : finite) width_ = std::max(width_, format_double("%.*f", opt_.precision, d).size());
    }
  }

  std::size_t width() const { return width_; }

  template <class T>
  std::string format(const T& v) const {
    std::string s;
    if (!floating_) {
      s = format_plain(v);
    } else {
      const double d = double(acc_t<T>(v));
      if (std::isnan(d)) s = "nan";
      else if (std::isinf(d)) s = d > 0 ? "inf" : "-inf";
      else if (sci_mode_) s = format_double("%.*e", opt_.precision, d);
      else if (int_mode_) s = format_double("%.*f", 0, d) + ".";
      else s = format_double("%.*f", opt_.precision, d);
    }
    if (s.size() < width_) s.insert(0, width_ - s.size(), ' ');
    return s;
  }

 private:
  template <class T>
  static std::string format_plain(const T& v) {
    if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
    else return std::to_string(v);
  }

  PrintOptions opt_;
  bool floating_ = false;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  std::size_t width_ = 1;
};

// The values the formatter sees when summarizing: the edge items only.
template <class T>
void summarized_values(const Tensor<T>& t, bool summarize, const PrintOptions& opt, std::vector<T>& out) {
  if (t.dim() == 0) {
    out.push_back(t.item());
    return;
  }
  const int64_t n = t.size(0);
  auto visit = [&](int64_t i) {
    if (t.dim() == 1) out.push_back(t(i));
    else summarized_values(t.select(0, i), summarize, opt, out);
  };
  if (summarize && n > 2 * opt.edgeitems) {
    for (int64_t i = 0; i < opt.edgeitems; ++i) visit(i);
    for (int64_t i = n - opt.edgeitems; i < n; ++i) visit(i);
  } else {
    for (int64_t i = 0; i < n; ++i) visit(i);
  }
}

template <class T>
std::string tensor_body(const Tensor<T>& t, int64_t indent, bool summarize, const Formatter& f,
                        const PrintOptions& opt) {
  if (t.dim() == 0) return f.format(t.item());
  const int64_t n = t.size(0);
  const bool cut = summarize && n > 2 * opt.edgeitems;
  if (t.dim() == 1) {
    const int64_t element_length = static_cast<int64_t>(f.width()) + 2;
    const int64_t per_line = std::max<int64_t>(1, (opt.linewidth - indent) / element_length);
    std::vector<std::string> data;
    for (int64_t i = 0; i < n; ++i) {
      if (cut && i == opt.edgeitems) {
        data.push_back(" ...");
        i = n - opt.edgeitems;
      }
      data.push_back(f.format(t(i)));
    }
    std::string s = "[";
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (i > 0) s += i % per_line == 0 ? ",\n" + std::string(indent + 1, ' ') : ", ";
      s += data[i];
    }
    return s + "]";
  }
  std::vector<std::string> slices;
  for (int64_t i = 0; i < n; ++i) {
    if (cut && i == opt.edgeitems) {
      slices.push_back("...");
      i = n - opt.edgeitems;
    }
    slices.push_back(tensor_body(t.select(0, i), indent + 1, summarize, f, opt));
  }
  const std::string sep = "," + std::string(static_cast<std::size_t>(t.dim() - 1), '\n') + std::string(indent + 1, ' ');
  std::string s = "[";
  for (std::size_t i = 0; i < slices.size(); ++i) s += (i ? sep : "") + slices[i];
  return s + "]";
}

// Appends ", suffix" or a line break before it when the line would pass the width.
inline std::string add_suffixes(std::string s, const std::vector<std::string>& suffixes, int64_t indent,
                                const PrintOptions& opt) {
  // Python: len(s) - s.rfind("\n") + 1, where rfind gives -1 for none.
  const auto nl = s.rfind('\n');
  int64_t last_line_len = static_cast<int64_t>(s.size()) - (nl == std::string::npos ? -1 : static_cast<int64_t>(nl)) + 1;
  for (const auto& suffix : suffixes) {
    const auto len = static_cast<int64_t>(suffix.size());
    if (last_line_len + len + 2 > opt.linewidth) {
      s += ",\n" + std::string(indent, ' ') + suffix;
      last_line_len = indent + len;
    } else {
      s += ", " + suffix;
      last_line_len += len + 2;
    }
  }
  return s + ")";
}

template <class T>
std::string tensor_repr(const Tensor<T>& t, const PrintOptions& opt = {}) {
  const std::string prefix = "tensor(";
  const auto indent = static_cast<int64_t>(prefix.size());
  std::vector<std::string> suffixes;
  constexpr bool default_dtype = std::is_same_v<T, float> || std::is_same_v<T, int64_t> || std::is_same_v<T, bool>;
  std::string body;
  if (t.numel() == 0) {
    if (t.dim() != 1) {
      std::string size = "size=(";
      for (int64_t d = 0; d < t.dim(); ++d) size += (d ? ", " : "") + std::to_string(t.size(d));
      suffixes.push_back(size + ")");
    }
    if (!std::is_same_v<T, float>) suffixes.push_back(std::string("dtype=") + dtype_name<T>());
    body = "[]";
  } else {
    if (!default_dtype) suffixes.push_back(std::string("dtype=") + dtype_name<T>());
    const bool summarize = t.numel() > opt.threshold;
    std::vector<T> values;
    summarized_values(t, summarize, opt, values);
    const Formatter f(values, opt);
    body = tensor_body(t, indent, summarize, f, opt);
  }
  // Autograd state last, as PyTorch prints it.
  if (!t.grad_fn_name().empty()) suffixes.push_back("grad_fn=<" + t.grad_fn_name() + ">");
  else if (t.requires_grad()) suffixes.push_back("requires_grad=True");
  return add_suffixes(prefix + body, suffixes, indent, opt);
}

}  // namespace detail

template <class T>
std::ostream& operator<<(std::ostream& os, const Tensor<T>& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  return os << detail::tensor_repr(t);
}

// Prints any expression by evaluating it.
template <Expression E>
  requires(!std::is_same_v<E, Tensor<typename E::value_type>>)
std::ostream& operator<<(std::ostream& os, const E& e) {
  return os << e.eval();
}

}  // namespace tsr
