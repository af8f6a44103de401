// Printing tensors exactly as PyTorch 1.13 does (torch/_tensor_str.py):
// precision 4, line width 80, summarization above 1000 elements with 3 edge
// items, fixed or scientific notation chosen from the values, integer-valued
// floats printed as "1.", and the dtype suffix where PyTorch prints one.
//
// Only reading the printed elements depends on the element type: they are
// gathered by their offsets (no views, so printing never reaches autograd),
// turned into text once, and laid out by plain functions. A program that
// prints tensors of one type compiles one small loop for it.
#pragma once
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "tensor.hpp"

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

// Whether dim `size` is cut to its edge items ("...") when summarizing.
inline bool is_cut(int64_t size, bool summarize, const PrintOptions& opt) {
  return summarize && size > 2 * opt.edgeitems;
}

// The storage offsets (from the first element) of the elements printed, in
// the order they are printed: every element, or only the edge items of each
// dim when summarizing (PyTorch's get_summarized_data, whose values also
// choose the format).
inline void printed_offsets(const Shape& sizes, const Strides& strides, std::size_t d, int64_t base, bool summarize,
                            const PrintOptions& opt, std::vector<int64_t>& out) {
  if (d == sizes.size()) {
    out.push_back(base);
    return;
  }
  const int64_t n = sizes[d];
  const bool cut = is_cut(n, summarize, opt);
  for (int64_t i = 0; i < n; ++i) {
    if (cut && i == opt.edgeitems) i = n - opt.edgeitems;
    printed_offsets(sizes, strides, d + 1, base + i * strides[d], summarize, opt, out);
  }
}

// The printed elements as text of one width, and that width (PyTorch's
// _Formatter): floating values choose integer, fixed or scientific notation
// from the finite nonzero ones.
struct FormattedElements {
  std::vector<std::string> text;
  std::size_t width = 1;
};

inline FormattedElements format_floating(const std::vector<double>& values, const PrintOptions& opt) {
  FormattedElements f;
  bool int_mode = true, sci_mode = false;
  std::vector<double> finite;
  for (double d : values)
    if (std::isfinite(d) && d != 0) finite.push_back(d);
  if (!finite.empty()) {
    double lo = std::abs(finite[0]), hi = lo;
    for (double d : finite) {
      lo = std::min(lo, std::abs(d));
      hi = std::max(hi, std::abs(d));
      if (d != std::ceil(d)) int_mode = false;
    }
    sci_mode = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode && lo < 1.0e-4);
    for (double d : finite) {
      const std::size_t w = sci_mode   ? format_double("%.*e", opt.precision, d).size()
                            : int_mode ? format_double("%.*f", 0, d).size() + 1
                                       : format_double("%.*f", opt.precision, d).size();
      f.width = std::max(f.width, w);
    }
  }
  for (double d : values) {
    if (std::isnan(d)) f.text.push_back("nan");
    else if (std::isinf(d)) f.text.push_back(d > 0 ? "inf" : "-inf");
    else if (sci_mode) f.text.push_back(format_double("%.*e", opt.precision, d));
    else if (int_mode) f.text.push_back(format_double("%.*f", 0, d) + ".");
    else f.text.push_back(format_double("%.*f", opt.precision, d));
  }
  return f;
}

// Integers and booleans print as they are, padded to the widest.
inline FormattedElements format_plain(std::vector<std::string> text) {
  FormattedElements f;
  f.text = std::move(text);
  for (const auto& s : f.text) f.width = std::max(f.width, s.size());
  return f;
}

// PyTorch's _tensor_str_with_formatter: the nested brackets of dims d and
// on, taking the formatted elements in order from `next`.
inline std::string tensor_body(const Shape& sizes, std::size_t d, int64_t indent, bool summarize,
                               const FormattedElements& f, std::size_t& next, const PrintOptions& opt) {
  const auto element = [&] {
    std::string s = f.text[next++];
    if (s.size() < f.width) s.insert(0, f.width - s.size(), ' ');
    return s;
  };
  if (d == sizes.size()) return element();
  const int64_t n = sizes[d];
  const bool cut = is_cut(n, summarize, opt);
  if (d + 1 == sizes.size()) {
    const int64_t element_length = static_cast<int64_t>(f.width) + 2;
    const int64_t per_line = std::max<int64_t>(1, (opt.linewidth - indent) / element_length);
    std::vector<std::string> data;
    for (int64_t i = 0; i < n; ++i) {
      if (cut && i == opt.edgeitems) {
        data.push_back(" ...");
        i = n - opt.edgeitems;
      }
      data.push_back(element());
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
    slices.push_back(tensor_body(sizes, d + 1, indent + 1, summarize, f, next, opt));
  }
  const std::string sep = "," + std::string(sizes.size() - d - 1, '\n') + std::string(indent + 1, ' ');
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

// What tensor_repr says of a tensor besides its elements.
struct ReprInfo {
  const char* dtype;   // PyTorch's name of the element type
  bool default_dtype;  // float32, int64 and bool print no dtype unless empty
  bool is_float;       // an empty float32 tensor prints no dtype either
  std::string grad_fn;
  bool requires_grad;
  std::string device = {};  // empty for the CPU, else printed as device='cuda:0'
};

// "tensor(...)" around the body (or "[]"), with the size, dtype and
// autograd suffixes PyTorch prints.
inline std::string tensor_repr_of(const Shape& sizes, const FormattedElements& f, const ReprInfo& info,
                                  const PrintOptions& opt) {
  const std::string prefix = "tensor(";
  const auto indent = static_cast<int64_t>(prefix.size());
  const int64_t numel = numel_of(sizes);
  std::vector<std::string> suffixes;
  if (!info.device.empty()) suffixes.push_back("device='" + info.device + "'");
  std::string body;
  if (numel == 0) {
    if (sizes.size() != 1) {
      std::string size = "size=(";
      for (std::size_t d = 0; d < sizes.size(); ++d) size += (d ? ", " : "") + std::to_string(sizes[d]);
      suffixes.push_back(size + ")");
    }
    body = "[]";
  } else {
    std::size_t next = 0;
    body = tensor_body(sizes, 0, indent, numel > opt.threshold, f, next, opt);
  }
  // An empty tensor names every dtype but float32.
  if (numel == 0 ? !info.is_float : !info.default_dtype) suffixes.push_back(std::string("dtype=") + info.dtype);
  // Autograd state last, as PyTorch prints it.
  if (!info.grad_fn.empty()) suffixes.push_back("grad_fn=<" + info.grad_fn + ">");
  else if (info.requires_grad) suffixes.push_back("requires_grad=True");
  return add_suffixes(prefix + body, suffixes, indent, opt);
}

template <class T>
ReprInfo repr_info(const Tensor<T>& t, std::string device) {
  constexpr bool default_dtype = std::is_same_v<T, float> || std::is_same_v<T, int64_t> || std::is_same_v<T, bool>;
  return {dtype_name<T>(), default_dtype, std::is_same_v<T, float>, t.grad_fn_name(), t.requires_grad(),
          std::move(device)};
}

// The printed elements of a tensor on the CPU.
template <class T>
FormattedElements format_elements(const Tensor<T>& t, const PrintOptions& opt) {
  FormattedElements f;
  if (t.numel() > 0) {
    std::vector<int64_t> offsets;
    printed_offsets(t.sizes(), t.strides(), 0, 0, t.numel() > opt.threshold, opt, offsets);
    const T* data = t.data_ptr();
    if constexpr (is_floating_v<T>) {
      std::vector<double> values;
      values.reserve(offsets.size());
      for (int64_t off : offsets) values.push_back(static_cast<double>(acc_t<T>(data[off])));
      f = format_floating(values, opt);
    } else {
      std::vector<std::string> text;
      text.reserve(offsets.size());
      for (int64_t off : offsets) {
        if constexpr (std::is_same_v<T, bool>) text.push_back(data[off] ? "True" : "False");
        else text.push_back(std::to_string(data[off]));
      }
      f = format_plain(std::move(text));
    }
  }
  return f;
}

template <class T>
std::string tensor_repr(const Tensor<T>& t, const PrintOptions& opt = {}) {
  if (!t.device().is_cpu()) {
    // The values print from a copy on the host (as PyTorch's printing
    // reads them); the device and autograd state are the tensor's own.
    const Tensor<T> host = t.copy_to(kCPU);
    FormattedElements f = format_elements(host, opt);
    return tensor_repr_of(t.sizes(), f, repr_info(t, t.device().str()), opt);
  }
  return tensor_repr_of(t.sizes(), format_elements(t, opt), repr_info(t, {}), opt);
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
