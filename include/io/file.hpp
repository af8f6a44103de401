// What every file format's reader and writer shares: a read-only memory map
// of the file being read, a writer that never leaves a half-written file,
// little-endian integers and the CRC-32 that zip records carry.
#pragma once
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "../errors.hpp"
#include "../half.hpp"
#include "../shape.hpp"

namespace tsr::io::detail {
using tsr::detail::check;
using tsr::detail::fail;

// A byte range a reader parses: a memory-mapped file, or a buffer given
// directly (the fuzzing harnesses, tests).
struct ByteView {
  const unsigned char* data = nullptr;
  std::size_t size = 0;
};

// A file mapped read-only: readers take what they need straight from the
// page cache (a 1 GB checkpoint is never read into a second 1 GB buffer), and
// the tensors they make are the only copies.
class MappedFile {
 public:
  MappedFile(const std::string& path, const char* who) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    check(fd >= 0, who, ": cannot open '", path, "': ", std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      fail<Error>(who, ": '", path, "' is not a regular file");
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        fail<Error>(who, ": cannot map '", path, "': ", std::strerror(err));
      }
      data_ = static_cast<const unsigned char*>(p);
    }
    ::close(fd);  // the mapping keeps the file's pages
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
  }
  ByteView bytes() const { return {data_, size_}; }

 private:
  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

// Writes a file so that it appears whole or not at all: the bytes go to a
// temporary file beside it, which commit() flushes to disk and renames over
// `path` (a rename within a directory is atomic). A writer destroyed before
// commit() (an exception, a full disk) removes the temporary file; a process
// killed midway leaves `path` as it was, plus the temporary file.
class AtomicFileWriter {
 public:
  AtomicFileWriter(std::string path, const char* who) : path_(std::move(path)), who_(who) {
    static std::atomic<unsigned> counter{0};
    tmp_ = path_ + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    check(fd_ >= 0, who_, ": cannot open '", tmp_, "' for writing: ", std::strerror(errno));
    buffer_.reserve(kBuffer);
  }
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter() {
    if (fd_ >= 0) {
      ::close(fd_);
      ::unlink(tmp_.c_str());
    }
  }

  void write(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    written_ += n;
    if (buffer_.size() + n <= kBuffer) {
      buffer_.insert(buffer_.end(), p, p + n);
      return;
    }
    flush_buffer();
    if (n < kBuffer) buffer_.insert(buffer_.end(), p, p + n);
    else write_all(p, n);
  }
  void write(std::string_view s) { write(s.data(), s.size()); }
  // Bytes written so far: the offset the next write lands at.
  uint64_t position() const { return written_; }

  // Flushes to disk and renames the file into place.
  void commit() {
    flush_buffer();
    if (::fsync(fd_) != 0) fail_io("flushing");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
      ::unlink(tmp_.c_str());
      fail<Error>(who_, ": failed writing '", tmp_, "': ", std::strerror(errno));
    }
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
      const int err = errno;
      ::unlink(tmp_.c_str());
      fail<Error>(who_, ": cannot rename '", tmp_, "' to '", path_, "': ", std::strerror(err));
    }
  }

 private:
  static constexpr std::size_t kBuffer = std::size_t{1} << 20;

  void flush_buffer() {
    write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  void write_all(const unsigned char* p, std::size_t n) {
    while (n > 0) {
      const ssize_t k = ::write(fd_, p, n);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) fail_io("writing");
      p += k;
      n -= static_cast<std::size_t>(k);
    }
  }
  [[noreturn]] void fail_io(const char* what) {
    fail<Error>(who_, ": failed ", what, " '", tmp_, "': ", std::strerror(errno));
  }

  std::string path_, tmp_;
  const char* who_;
  int fd_ = -1;
  uint64_t written_ = 0;
  std::vector<unsigned char> buffer_;
};

// Each element type's name in the file formats: NumPy's descr (bfloat16 has
// none and is stored as raw 2-byte values), PyTorch's storage type and
// safetensors' dtype.
template <class T>
struct FormatNames;
template <>
struct FormatNames<float> {
  static constexpr const char *npy = "<f4", *storage = "FloatStorage", *safetensors = "F32";
};
template <>
struct FormatNames<double> {
  static constexpr const char *npy = "<f8", *storage = "DoubleStorage", *safetensors = "F64";
};
template <>
struct FormatNames<half> {
  static constexpr const char *npy = "<f2", *storage = "HalfStorage", *safetensors = "F16";
};
template <>
struct FormatNames<bfloat16> {
  static constexpr const char *npy = "<V2", *storage = "BFloat16Storage", *safetensors = "BF16";
};
template <>
struct FormatNames<int64_t> {
  static constexpr const char *npy = "<i8", *storage = "LongStorage", *safetensors = "I64";
};
template <>
struct FormatNames<int32_t> {
  static constexpr const char *npy = "<i4", *storage = "IntStorage", *safetensors = "I32";
};
template <>
struct FormatNames<bool> {
  static constexpr const char *npy = "|b1", *storage = "BoolStorage", *safetensors = "BOOL";
};

// f(T{}) for the element type whose name in a format is `name` (`which`
// picks the format's name from FormatNames<T>); false when none is.
template <class Which, class F>
bool with_element_type(const std::string& name, Which which, F&& f) {
  bool found = false;
  auto try_one = [&]<class T>(T) {
    if (!found && name == which(FormatNames<T>{})) found = true, f(T{});
  };
  try_one(float{}), try_one(double{}), try_one(half{}), try_one(bfloat16{}), try_one(int64_t{}), try_one(int32_t{}),
      try_one(bool{});
  return found;
}

// A shape a file declares, checked before a tensor is made of it: what its
// strides reach (the product of the sizes, a size 0 counting as 1) must fit
// in int64, even when the tensor is empty.
inline void check_shape(const Shape& shape, const std::string& who) {
  constexpr int64_t kLimit = int64_t{1} << 62;
  int64_t reach = 1;
  for (const int64_t s : shape) {
    check(s >= 0 && s < kLimit, who, ": invalid size ", s, " in shape ", shape);
    const int64_t f = s > 1 ? s : 1;
    check(reach <= kLimit / f, who, ": shape ", shape, " is too large");
    reach *= f;
  }
}

// Little-endian integers, as zip, safetensors and .npy store them.
template <class U>
U read_le(const unsigned char* p) {
  U v = 0;
  for (std::size_t k = sizeof(U); k-- > 0;) v = static_cast<U>((v << 8) | p[k]);
  return v;
}
template <class U>
void append_le(std::string& out, U v) {
  for (std::size_t k = 0; k < sizeof(U); ++k) out += static_cast<char>((v >> (8 * k)) & 0xFF);
}

// CRC-32 (the zip polynomial, 0xEDB88320 reflected), eight bytes a step
// ("slicing by 8": table k maps a byte to its CRC contribution k bytes
// further on), about 1 byte per cycle: a checkpoint's records are all
// checksummed when written and when read.
inline constexpr std::array<std::array<uint32_t, 256>, 8> kCrcTables = [] {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[0][i] = c;
  }
  for (int k = 1; k < 8; ++k)
    for (uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  return t;
}();
inline uint32_t crc32(const void* data, std::size_t n, uint32_t crc = 0) {
  const auto& t = kCrcTables;
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    const uint32_t lo = read_le<uint32_t>(p) ^ crc, hi = read_le<uint32_t>(p + 4);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][hi & 0xFF] ^
          t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
  }
  for (; n > 0; --n, ++p) crc = t[0][(crc ^ *p) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

}  // namespace tsr::io::detail
