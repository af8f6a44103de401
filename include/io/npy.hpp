// NumPy .npy files (format 1.0, 2.0 and 3.0 headers; little-endian; C or
// Fortran order) for every tessera element type, with dtype conversion on
// load. Reads map the file; writes go to a temporary file that is renamed
// into place, so a failed or killed save never leaves a half-written file.
#pragma once
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../factories.hpp"
#include "file.hpp"

namespace tsr::io {
namespace detail {

struct NpyHeader {
  std::string descr;
  bool fortran = false;
  Shape shape;
  std::size_t data_offset = 0;
};

inline void skip_space(const std::string& h, std::size_t& i) {
  while (i < h.size() && (h[i] == ' ' || h[i] == '\n')) ++i;
}

// Parses the Python dict literal of a .npy header, strictly.
inline NpyHeader parse_header(const std::string& h, const std::string& path) {
  const std::string bad = "load_npy: malformed header in '" + path + "'";
  NpyHeader r;
  bool got_descr = false, got_order = false, got_shape = false;
  std::size_t i = 0;
  skip_space(h, i);
  check(i < h.size() && h[i] == '{', bad);
  ++i;
  for (;;) {
    skip_space(h, i);
    check(i < h.size(), bad);
    if (h[i] == '}') break;
    check(h[i] == '\'', bad);
    const std::size_t key_end = h.find('\'', i + 1);
    check(key_end != std::string::npos, bad);
    const std::string key = h.substr(i + 1, key_end - i - 1);
    i = key_end + 1;
    skip_space(h, i);
    check(i < h.size() && h[i] == ':', bad);
    ++i;
    skip_space(h, i);
    check(i < h.size(), bad);
    if (key == "descr") {
      check(h[i] == '\'', bad);
      const std::size_t end = h.find('\'', i + 1);
      check(end != std::string::npos, bad);
      r.descr = h.substr(i + 1, end - i - 1);
      i = end + 1;
      got_descr = true;
    } else if (key == "fortran_order") {
      if (h.compare(i, 4, "True") == 0) r.fortran = true, i += 4;
      else if (h.compare(i, 5, "False") == 0) r.fortran = false, i += 5;
      else check(false, bad);
      got_order = true;
    } else if (key == "shape") {
      check(h[i] == '(', bad);
      ++i;
      for (;;) {
        skip_space(h, i);
        check(i < h.size(), bad);
        if (h[i] == ')') break;
        check(h[i] >= '0' && h[i] <= '9', bad);
        int64_t v = 0;
        while (i < h.size() && h[i] >= '0' && h[i] <= '9') {
          check(v < (int64_t{1} << 50), bad, " (dimension too large)");
          v = v * 10 + (h[i++] - '0');
        }
        r.shape.push_back(v);
        skip_space(h, i);
        check(i < h.size(), bad);
        if (h[i] == ',') ++i;
      }
      ++i;
      got_shape = true;
    } else {
      check(false, bad, " (unknown key '", key, "')");
    }
    skip_space(h, i);
    check(i < h.size(), bad);
    if (h[i] == ',') ++i;
  }
  check(got_descr && got_order && got_shape, bad, " (missing descr, fortran_order or shape)");
  return r;
}

template <class S, class T>
void convert_into(const char* src, T* dst, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    S v;
    std::memcpy(&v, src + k * sizeof(S), sizeof(S));
    if constexpr (std::is_same_v<S, bool>) dst[k] = tsr::detail::convert<T>(static_cast<bool>(reinterpret_cast<const unsigned char&>(v) != 0));
    else dst[k] = tsr::detail::convert<T>(v);
  }
}

}  // namespace detail

template <class T>
void save_npy(const std::string& path, const Tensor<T>& t) {
  std::string header = "{'descr': '" + std::string(detail::FormatNames<T>::npy) + "', 'fortran_order': False, 'shape': (";
  for (int64_t d = 0; d < t.dim(); ++d) header += std::to_string(t.size(d)) + (t.dim() == 1 ? "," : d + 1 < t.dim() ? ", " : "");
  header += "), }";
  // Pad with spaces so the data starts on a 64-byte boundary; end with '\n'.
  const std::size_t preamble = 10;
  std::size_t total = preamble + header.size() + 1;
  const bool v2 = total + 63 >= 65535 + preamble;
  const std::size_t pre = v2 ? 12 : 10;
  total = pre + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  const auto values = tsr::detail::host_contiguous(t);  // a device tensor is copied to the host
  std::string start = "\x93NUMPY";
  start += static_cast<char>(v2 ? 2 : 1);
  start += '\0';
  if (v2) detail::append_le<uint32_t>(start, static_cast<uint32_t>(header.size()));
  else detail::append_le<uint16_t>(start, static_cast<uint16_t>(header.size()));
  detail::AtomicFileWriter out(path, "save_npy");
  out.write(start);
  out.write(header);
  if (t.numel() > 0) out.write(values.data_ptr(), static_cast<std::size_t>(t.numel()) * sizeof(T));
  out.commit();
}

namespace detail {
// Parses a .npy file in memory (`name` names it in errors).
template <class T>
Tensor<T> read_npy(ByteView file, const std::string& name) {
  const unsigned char* bytes = file.data;
  const std::size_t file_size = file.size;
  const std::string bad = "load_npy: '" + name + "' is not a valid .npy file";
  check(file_size >= 10 && std::memcmp(bytes, "\x93NUMPY", 6) == 0, bad, " (bad magic)");
  const int major = bytes[6];
  check(major >= 1 && major <= 3, bad, " (unsupported version ", major, ")");
  std::size_t header_len, pre;
  if (major == 1) {
    header_len = read_le<uint16_t>(bytes + 8);
    pre = 10;
  } else {
    check(file_size >= 12, bad, " (truncated header)");
    header_len = read_le<uint32_t>(bytes + 8);
    pre = 12;
  }
  check(header_len <= file_size - pre, bad, " (truncated header)");
  auto h = parse_header(std::string(reinterpret_cast<const char*>(bytes) + pre, header_len), name);
  h.data_offset = pre + header_len;
  check_shape(h.shape, "load_npy: '" + name + "'");

  const std::string& d = h.descr;
  check(d.size() >= 3, bad, " (dtype '", d, "')");
  check(d[0] != '>', "load_npy: big-endian data ('", d, "') is not supported");
  const std::string kind = d.substr(1);
  std::size_t itemsize;
  if (kind == "f4" || kind == "i4" || kind == "u4") itemsize = 4;
  else if (kind == "f8" || kind == "i8" || kind == "u8") itemsize = 8;
  else if (kind == "f2" || kind == "V2" || kind == "i2" || kind == "u2") itemsize = 2;
  else if (kind == "b1" || kind == "u1" || kind == "i1") itemsize = 1;
  else throw Error("load_npy: unsupported dtype '" + d + "' in '" + name + "'");

  int64_t numel = 1;
  for (auto s : h.shape) {
    check(s == 0 || numel <= std::numeric_limits<int64_t>::max() / s / 8, bad, " (shape too large)");
    numel *= s;
  }
  const std::size_t nbytes = static_cast<std::size_t>(numel) * itemsize;
  check(nbytes <= file_size - h.data_offset, "load_npy: '", name, "' is truncated: expected ", nbytes,
        " bytes of data, found ", file_size - h.data_offset);

  // Fortran order: the data is the transpose's C order.
  Shape stored = h.shape;
  if (h.fortran) std::reverse(stored.begin(), stored.end());
  auto t = empty<T>(stored);
  const char* src = reinterpret_cast<const char*>(bytes) + h.data_offset;
  T* dst = t.data_ptr();
  const auto n = static_cast<std::size_t>(numel);
  if (kind == "f4") convert_into<float>(src, dst, n);
  else if (kind == "f8") convert_into<double>(src, dst, n);
  else if (kind == "i4") convert_into<int32_t>(src, dst, n);
  else if (kind == "i8") convert_into<int64_t>(src, dst, n);
  else if (kind == "u4") convert_into<uint32_t>(src, dst, n);
  else if (kind == "u8") convert_into<uint64_t>(src, dst, n);
  else if (kind == "i2") convert_into<int16_t>(src, dst, n);
  else if (kind == "u2") convert_into<uint16_t>(src, dst, n);
  else if (kind == "i1") convert_into<int8_t>(src, dst, n);
  else if (kind == "u1") convert_into<uint8_t>(src, dst, n);
  else if (kind == "b1") convert_into<bool>(src, dst, n);
  else if (kind == "f2" || kind == "V2") {
    for (std::size_t k = 0; k < n; ++k) {
      uint16_t bits;
      std::memcpy(&bits, src + 2 * k, 2);
      const float f = kind == "f2" ? float(half::from_bits(bits)) : float(bfloat16::from_bits(bits));
      dst[k] = tsr::detail::convert<T>(f);
    }
  }
  if (!h.fortran) return t;
  Shape perm;
  for (int64_t k = t.dim() - 1; k >= 0; --k) perm.push_back(k);
  return t.permute(perm).contiguous();
}
}  // namespace detail

template <class T>
Tensor<T> load_npy(const std::string& path) {
  const detail::MappedFile file(path, "load_npy");
  return detail::read_npy<T>(file.bytes(), path);
}

}  // namespace tsr::io
