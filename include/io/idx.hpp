// IDX files (the format of MNIST and Fashion-MNIST), plain or gzip-compressed
// (through zlib: link with -lz, or meson's dependency('zlib')).
//
// An IDX file is a 4-byte magic (two zero bytes, the element type, the
// number of dimensions), one big-endian 32-bit size per dimension, then the
// elements, big-endian, in C order. load_idx<T> converts them to T. The
// reader trusts nothing in the header: the data it reads grow with what the
// file holds (never an allocation of what the header claims), and a file
// whose data are shorter or longer than its header says is refused.
#pragma once
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../factories.hpp"
#include "file.hpp"

namespace tsr::io {
namespace detail {

// The whole (decompressed) content of a file; zlib reads files that are not
// gzip-compressed as they are.
inline std::vector<unsigned char> read_maybe_gzip(const std::string& path, const char* who) {
  gzFile f = gzopen(path.c_str(), "rb");
  tsr::detail::check(f != nullptr, who, ": cannot open '", path, "'");
  std::vector<unsigned char> bytes;
  std::vector<unsigned char> chunk(1 << 20);
  for (;;) {
    const int n = gzread(f, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int code = 0;
      const std::string message = gzerror(f, &code);
      gzclose(f);
      tsr::detail::fail<Error>(who, ": corrupt compressed data in '", path, "' (", message, ")");
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + n);
  }
  // A gzip stream cut short reads as a clean end of file to gzread; gzclose
  // reports it.
  const int closed = gzclose(f);
  tsr::detail::check(closed == Z_OK, who, ": '", path, "' is truncated or corrupt (zlib error ", closed, ")");
  return bytes;
}

inline uint32_t big_endian_u32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Element `i` of IDX type `type` at `data`, as double (exact for every IDX type).
inline double idx_element(const unsigned char* data, unsigned type, std::size_t i) {
  switch (type) {
    case 0x08: return data[i];
    case 0x09: return static_cast<signed char>(data[i]);
    case 0x0B: {
      const unsigned char* p = data + 2 * i;
      return static_cast<int16_t>(static_cast<uint16_t>((p[0] << 8) | p[1]));
    }
    case 0x0C: return static_cast<int32_t>(big_endian_u32(data + 4 * i));
    case 0x0D: {
      const uint32_t bits = big_endian_u32(data + 4 * i);
      float v;
      std::memcpy(&v, &bits, 4);
      return v;
    }
    default: {  // 0x0E
      const uint64_t bits = (uint64_t{big_endian_u32(data + 8 * i)} << 32) | big_endian_u32(data + 8 * i + 4);
      double v;
      std::memcpy(&v, &bits, 8);
      return v;
    }
  }
}

inline std::size_t idx_element_size(unsigned type) {
  switch (type) {
    case 0x08: case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C: case 0x0D: return 4;
    case 0x0E: return 8;
    default: return 0;
  }
}

// Parses an IDX file in memory (decompressed; `name` names it in errors).
template <class T>
Tensor<T> read_idx(const unsigned char* bytes, std::size_t size, const std::string& name) {
  const std::string bad = "load_idx: '" + name + "' is not an IDX file";
  tsr::detail::check(size >= 4 && bytes[0] == 0 && bytes[1] == 0, bad, " (bad magic)");
  const unsigned type = bytes[2], dims = bytes[3];
  const std::size_t element = idx_element_size(type);
  tsr::detail::check(element != 0, "load_idx: '", name, "' has an unknown element type 0x", std::hex, type);
  tsr::detail::check(size >= 4 + 4 * std::size_t{dims}, bad, " (truncated header)");
  Shape shape;
  std::size_t count = 1;
  for (unsigned d = 0; d < dims; ++d) {
    const uint32_t n = big_endian_u32(bytes + 4 + 4 * d);
    shape.push_back(static_cast<int64_t>(n));
    // Overflow-checked: a header may claim anything.
    tsr::detail::check(n == 0 || count <= std::numeric_limits<std::size_t>::max() / element / n, bad,
                       " (its sizes overflow)");
    count *= n;
  }
  check_shape(shape, "load_idx: '" + name + "'");
  const std::size_t header = 4 + 4 * std::size_t{dims}, have = size - header;
  tsr::detail::check(have == count * element, "load_idx: '", name, "' holds ", have, " bytes of data, but its header (shape ",
                     shape, ") needs ", count * element);
  Tensor<T> out = empty<T>(shape);
  T* p = out.data_ptr();
  for (std::size_t i = 0; i < count; ++i) p[i] = static_cast<T>(idx_element(bytes + header, type, i));
  return out;
}

}  // namespace detail

// The IDX file at `path` (plain or .gz) as a tensor of T.
template <class T>
Tensor<T> load_idx(const std::string& path) {
  const std::vector<unsigned char> bytes = detail::read_maybe_gzip(path, "load_idx");
  return detail::read_idx<T>(bytes.data(), bytes.size(), path);
}

}  // namespace tsr::io
