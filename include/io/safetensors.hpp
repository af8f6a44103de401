// safetensors files (the format of Hugging Face's safetensors library): an
// 8-byte little-endian header size N, N bytes of JSON
//   {"__metadata__": {"k": "v"}, "name": {"dtype": "F32", "shape": [2, 3],
//    "data_offsets": [begin, end]}, ...}
// and the tensors' bytes, little-endian, C order, offsets counted from the
// end of the header. Readers map the file and copy each tensor out once.
// As the format's reference implementation, the reader refuses a header over
// 100 MB, offsets that overlap, leave holes or miss the end of the file, and
// a byte count that does not match a tensor's dtype and shape.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pt.hpp"

namespace tsr::io {
namespace detail {

// A JSON value of the header. An object's members are its items, in order,
// each with its key.
struct Json {
  enum class Type { Null, Bool, Integer, Number, String, Array, Object } type = Type::Null;
  int64_t integer = 0;
  std::string text;
  std::string key;          // a member's key
  std::vector<Json> items;  // an array's values, an object's members
};

// A strict JSON parser (RFC 8259) for the header; nesting is bounded.
class JsonParser {
 public:
  JsonParser(const unsigned char* p, std::size_t n, std::string who) : p_(p), n_(n), who_(std::move(who)) {}
  Json parse_document() {
    Json v = value(0);
    space();
    check(i_ == n_, who_, ": its header has bytes after the JSON");
    return v;
  }

 private:
  [[noreturn]] void bad(const char* what) const { fail<Error>(who_, ": its header is not valid JSON (", what, " at byte ", i_, ")"); }
  void space() {
    while (i_ < n_ && (p_[i_] == ' ' || p_[i_] == '\t' || p_[i_] == '\n' || p_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    space();
    if (i_ < n_ && p_[i_] == static_cast<unsigned char>(c)) return ++i_, true;
    return false;
  }
  bool literal(const char* word) {
    const std::size_t k = std::strlen(word);
    if (n_ - i_ < k || std::memcmp(p_ + i_, word, k) != 0) return false;
    i_ += k;
    return true;
  }
  Json value(int depth) {
    if (depth > 32) bad("nesting too deep");
    space();
    if (i_ >= n_) bad("unexpected end");
    Json v;
    const unsigned char c = p_[i_];
    if (c == '{') {
      ++i_;
      v.type = Json::Type::Object;
      if (eat('}')) return v;
      std::unordered_set<std::string> keys;  // (a header may hold a million)
      do {
        space();
        std::string key = string();
        if (!eat(':')) bad("expected ':'");
        check(keys.insert(key).second, who_, ": its header has the key '", key, "' twice");
        v.items.push_back(value(depth + 1));
        v.items.back().key = std::move(key);
      } while (eat(','));
      if (!eat('}')) bad("expected '}'");
    } else if (c == '[') {
      ++i_;
      v.type = Json::Type::Array;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      if (!eat(']')) bad("expected ']'");
    } else if (c == '"') {
      v.type = Json::Type::String;
      v.text = string();
    } else if (literal("true")) {
      v.type = Json::Type::Bool, v.integer = 1;
    } else if (literal("false")) {
      v.type = Json::Type::Bool;
    } else if (literal("null")) {
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number(v);
    } else {
      bad("unexpected character");
    }
    return v;
  }
  void number(Json& v) {
    const std::size_t start = i_;
    const bool negative = p_[i_] == '-';
    if (negative) ++i_;
    if (i_ >= n_ || p_[i_] < '0' || p_[i_] > '9') bad("bad number");
    uint64_t magnitude = 0;
    bool overflow = false;
    while (i_ < n_ && p_[i_] >= '0' && p_[i_] <= '9') {
      overflow |= magnitude > (uint64_t{1} << 62);
      magnitude = magnitude * 10 + (p_[i_++] - '0');
    }
    bool fraction = false;
    if (i_ < n_ && p_[i_] == '.') {
      fraction = true, ++i_;
      if (i_ >= n_ || p_[i_] < '0' || p_[i_] > '9') bad("bad number");
      while (i_ < n_ && p_[i_] >= '0' && p_[i_] <= '9') ++i_;
    }
    if (i_ < n_ && (p_[i_] == 'e' || p_[i_] == 'E')) {
      fraction = true, ++i_;
      if (i_ < n_ && (p_[i_] == '+' || p_[i_] == '-')) ++i_;
      if (i_ >= n_ || p_[i_] < '0' || p_[i_] > '9') bad("bad number");
      while (i_ < n_ && p_[i_] >= '0' && p_[i_] <= '9') ++i_;
    }
    v.text.assign(reinterpret_cast<const char*>(p_ + start), i_ - start);
    if (fraction || overflow) {
      v.type = Json::Type::Number;  // kept as text: the header has no use for it
    } else {
      v.type = Json::Type::Integer;
      v.integer = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    }
  }
  unsigned hex4() {
    if (n_ - i_ < 4) bad("truncated \\u escape");
    unsigned u = 0;
    for (int k = 0; k < 4; ++k) {
      const unsigned char h = p_[i_++];
      u <<= 4;
      if (h >= '0' && h <= '9') u |= h - '0';
      else if (h >= 'a' && h <= 'f') u |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') u |= h - 'A' + 10;
      else bad("bad \\u escape");
    }
    return u;
  }
  std::string string() {
    if (i_ >= n_ || p_[i_] != '"') bad("expected a string");
    ++i_;
    std::string s;
    for (;;) {
      if (i_ >= n_) bad("unterminated string");
      const unsigned char c = p_[i_++];
      if (c == '"') return s;
      if (c < 0x20) bad("control character in a string");
      if (c != '\\') {
        s += static_cast<char>(c);
        continue;
      }
      if (i_ >= n_) bad("unterminated string");
      const unsigned char e = p_[i_++];
      switch (e) {
        case '"': case '\\': case '/': s += static_cast<char>(e); break;
        case 'b': s += '\b'; break;
        case 'f': s += '\f'; break;
        case 'n': s += '\n'; break;
        case 'r': s += '\r'; break;
        case 't': s += '\t'; break;
        case 'u': {
          unsigned u = hex4();
          if (u >= 0xD800 && u < 0xDC00) {  // a surrogate pair
            if (n_ - i_ < 2 || p_[i_] != '\\' || p_[i_ + 1] != 'u') bad("lone surrogate");
            i_ += 2;
            const unsigned low = hex4();
            if (low < 0xDC00 || low >= 0xE000) bad("lone surrogate");
            u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
          } else if (u >= 0xDC00 && u < 0xE000) {
            bad("lone surrogate");
          }
          append_utf8(s, u);
          break;
        }
        default: bad("bad escape");
      }
    }
  }
  static void append_utf8(std::string& s, unsigned u) {
    if (u < 0x80) {
      s += static_cast<char>(u);
    } else if (u < 0x800) {
      s += static_cast<char>(0xC0 | (u >> 6)), s += static_cast<char>(0x80 | (u & 0x3F));
    } else if (u < 0x10000) {
      s += static_cast<char>(0xE0 | (u >> 12)), s += static_cast<char>(0x80 | ((u >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (u & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (u >> 18)), s += static_cast<char>(0x80 | ((u >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((u >> 6) & 0x3F)), s += static_cast<char>(0x80 | (u & 0x3F));
    }
  }

  const unsigned char* p_;
  std::size_t n_, i_ = 0;
  std::string who_;
};

inline void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (const unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\', out += static_cast<char>(c);
    } else if (c < 0x20) {
      const char* digits = "0123456789abcdef";
      out += "\\u00";
      out += digits[c >> 4], out += digits[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

// The tensors of a safetensors file in memory, in the order of their data,
// and its metadata.
inline TensorDict read_safetensors(ByteView file, const std::string& name,
                                   std::vector<std::pair<std::string, std::string>>* metadata = nullptr) {
  const std::string who = "load_safetensors: '" + name + "'";
  check(file.size >= 8, who, " is too short to be a safetensors file");
  const uint64_t n = read_le<uint64_t>(file.data);
  check(n <= 100'000'000, who, ": its header claims ", n, " bytes, over the format's limit of 100 MB");
  check(n <= file.size - 8, who, " is truncated: its header claims ", n, " bytes, the file has ", file.size - 8, " after the size");
  check(n >= 2 && file.data[8] == '{', who, ": its header is not a JSON object");
  const Json header = JsonParser(file.data + 8, static_cast<std::size_t>(n), who).parse_document();
  check(header.type == Json::Type::Object, who, ": its header is not a JSON object");
  const unsigned char* data = file.data + 8 + n;
  const uint64_t data_size = file.size - 8 - n;

  struct Entry {
    std::string name;
    uint64_t begin, end;
    std::string dtype;
    Shape shape;
  };
  std::vector<Entry> entries;
  for (const Json& info : header.items) {
    const std::string& key = info.key;
    if (key == "__metadata__") {
      check(info.type == Json::Type::Object, who, ": __metadata__ is not an object");
      for (const Json& v : info.items) {
        check(v.type == Json::Type::String, who, ": __metadata__ value '", v.key, "' is not a string");
        if (metadata) metadata->emplace_back(v.key, v.text);
      }
      continue;
    }
    check(info.type == Json::Type::Object, who, ": the entry of '", key, "' is not an object");
    const Json *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
    for (const Json& v : info.items) {
      if (v.key == "dtype") dtype = &v;
      else if (v.key == "shape") shape = &v;
      else if (v.key == "data_offsets") offsets = &v;
      // (other fields are ignored, as the reference reader ignores them)
    }
    check(dtype && shape && offsets && dtype->type == Json::Type::String && shape->type == Json::Type::Array &&
              offsets->type == Json::Type::Array && offsets->items.size() == 2,
          who, ": the entry of '", key, "' needs a dtype string, a shape list and two data_offsets");
    Entry e{key, 0, 0, dtype->text, {}};
    for (const Json& s : shape->items) {
      check(s.type == Json::Type::Integer && s.integer >= 0, who, ": the shape of '", key, "' is not a list of sizes");
      e.shape.push_back(s.integer);
    }
    check(e.shape.size() <= 64, who, ": the shape of '", key, "' has too many dimensions");
    check_shape(e.shape, who + ": '" + key + "'");
    for (int k = 0; k < 2; ++k)
      check(offsets->items[k].type == Json::Type::Integer && offsets->items[k].integer >= 0, who, ": the data_offsets of '",
            key, "' are not two offsets");
    e.begin = static_cast<uint64_t>(offsets->items[0].integer);
    e.end = static_cast<uint64_t>(offsets->items[1].integer);
    check(e.begin <= e.end && e.end <= data_size, who, ": the data_offsets [", e.begin, ", ", e.end, "] of '", key,
          "' are outside the file's ", data_size, " bytes of data");
    entries.push_back(std::move(e));
  }
  // The data must be covered exactly: in order of offsets, no overlap, no hole.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  for (const auto& e : entries) {
    check(e.begin == expected, who, ": the data of '", e.name, "' starts at ", e.begin, ", not at ", expected,
          " (tensors overlap or leave a gap)");
    expected = e.end;
  }
  check(expected == data_size, who, ": its tensors cover ", expected, " of its ", data_size, " bytes of data");

  TensorDict out;
  for (const auto& e : entries) {
    AnyTensor t;
    const bool known = with_element_type(e.dtype, [](auto names) { return names.safetensors; }, [&]<class T>(T) {
      uint64_t count = 1;
      for (const int64_t s : e.shape) {
        check(s == 0 || count <= (uint64_t{1} << 62) / static_cast<uint64_t>(s), who, ": the shape of '", e.name, "' is too large");
        count *= static_cast<uint64_t>(s);
      }
      check(count <= (e.end - e.begin) / sizeof(T) && count * sizeof(T) == e.end - e.begin, who, ": '", e.name, "' of dtype ",
            e.dtype, " and shape ", e.shape, " needs ", count, " elements of ", sizeof(T), " bytes, its data_offsets hold ",
            e.end - e.begin, " bytes");
      t = tensor_from_bytes<T>(data + e.begin, static_cast<int64_t>(count)).reshape(e.shape);
    });
    check(known, who, ": '", e.name, "' has dtype ", e.dtype,
          ", which tessera does not have (it reads F32, F64, F16, BF16, I64, I32 and BOOL)");
    out.emplace_back(e.name, std::move(t));
  }
  return out;
}

}  // namespace detail

// Writes tensors (in this order) and string metadata as a safetensors file,
// the header padded with spaces to a multiple of 8 bytes, as the reference
// writer does. The file appears whole or not at all.
inline void save_safetensors(const std::string& path, const TensorDict& tensors,
                             const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (std::size_t i = 0; i < metadata.size(); ++i) {
      if (i) header += ',';
      detail::append_json_string(header, metadata[i].first);
      header += ':';
      detail::append_json_string(header, metadata[i].second);
    }
    header += '}';
  }
  std::vector<AnyTensor> contiguous;
  uint64_t offset = 0;
  std::set<std::string> seen;
  for (const auto& [name, t] : tensors) {
    tsr::detail::check(name != "__metadata__", "save_safetensors: '__metadata__' cannot name a tensor");
    tsr::detail::check(seen.insert(name).second, "save_safetensors: the name '", name, "' is used twice");
    tsr::detail::check(t.defined(), "save_safetensors: '", name, "' is an undefined tensor");
    contiguous.push_back(t.visit([](const auto& x) { return AnyTensor(tsr::detail::host_contiguous(x.detach())); }));
    const uint64_t nbytes = contiguous.back().visit([](const auto& x) {
      return static_cast<uint64_t>(x.numel()) * sizeof(typename std::remove_cvref_t<decltype(x)>::value_type);
    });
    if (header.size() > 1) header += ',';
    detail::append_json_string(header, name);
    header += ":{\"dtype\":\"";
    header += t.visit([]<class T>(const Tensor<T>&) { return detail::FormatNames<T>::safetensors; });
    header += "\",\"shape\":[";
    for (std::size_t d = 0; d < t.sizes().size(); ++d) {
      if (d) header += ',';
      header += std::to_string(t.sizes()[d]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + nbytes) + "]}";
    offset += nbytes;
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');
  detail::AtomicFileWriter out(path, "save_safetensors");
  std::string size;
  detail::append_le<uint64_t>(size, header.size());
  out.write(size);
  out.write(header);
  for (const auto& t : contiguous)
    t.visit([&](const auto& x) {
      if (x.numel() > 0) out.write(x.data_ptr(), static_cast<std::size_t>(x.numel()) * sizeof(*x.data_ptr()));
    });
  out.commit();
}

inline void save_safetensors(const std::string& path, const std::map<std::string, AnyTensor>& tensors) {
  save_safetensors(path, TensorDict(tensors.begin(), tensors.end()));
}

// The tensors of a safetensors file, by name.
inline std::map<std::string, AnyTensor> load_safetensors(const std::string& path) {
  const detail::MappedFile file(path, "load_safetensors");
  const TensorDict d = detail::read_safetensors(file.bytes(), path);
  return {d.begin(), d.end()};
}

// The same in the order of the file's data (the order they were saved in),
// with the file's __metadata__ when `metadata` is given.
inline TensorDict load_safetensors_ordered(const std::string& path,
                                           std::vector<std::pair<std::string, std::string>>* metadata = nullptr) {
  const detail::MappedFile file(path, "load_safetensors");
  return detail::read_safetensors(file.bytes(), path, metadata);
}

}  // namespace tsr::io
