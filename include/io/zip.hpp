// The zip container of PyTorch's checkpoints: uncompressed ("stored")
// records, each record's data aligned to 64 bytes, zip64 where sizes or
// offsets pass 4 GiB. Only what torch.save writes and reads is supported;
// a compressed record is refused, not inflated.
#pragma once
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "../detail/thread_pool.hpp"
#include "file.hpp"

namespace tsr::io::detail {

struct ZipRecord {
  std::string name;
  uint64_t offset = 0;  // of the data, from the start of the file
  uint64_t size = 0;
  uint32_t crc = 0;
};

// Reads a zip's central directory. Every offset and size is checked against
// the file before use, and nothing is allocated from a count the file claims.
class ZipReader {
 public:
  ZipReader(ByteView file, std::string name) : file_(file), name_(std::move(name)) {
    const unsigned char* p = file_.data;
    const std::size_t n = file_.size;
    check(n >= 22, bad(), " (too short for a zip)");
    // The end-of-central-directory record: 22 bytes and a comment of up to
    // 65535 bytes at the very end.
    std::size_t eocd = n - 22;
    const std::size_t lowest = n >= 22 + 65535 ? n - 22 - 65535 : 0;
    while (read_le<uint32_t>(p + eocd) != 0x06054b50) {
      check(eocd > lowest, bad(), " (no end of central directory record)");
      --eocd;
    }
    uint64_t entries = read_le<uint16_t>(p + eocd + 10);
    uint64_t cd_size = read_le<uint32_t>(p + eocd + 12);
    uint64_t cd_offset = read_le<uint32_t>(p + eocd + 16);
    if (entries == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF) {
      // zip64: a locator just before the record points at the zip64 record.
      check(eocd >= 20 && read_le<uint32_t>(p + eocd - 20) == 0x07064b50, bad(), " (missing zip64 locator)");
      const uint64_t z = read_le<uint64_t>(p + eocd - 20 + 8);
      check(n >= 56 && z <= n - 56 && read_le<uint32_t>(p + z) == 0x06064b50, bad(), " (bad zip64 record)");
      entries = read_le<uint64_t>(p + z + 32);
      cd_size = read_le<uint64_t>(p + z + 40);
      cd_offset = read_le<uint64_t>(p + z + 48);
    }
    check(cd_offset <= n && cd_size <= n - cd_offset, bad(), " (central directory out of range)");
    uint64_t at = cd_offset;
    const uint64_t end = cd_offset + cd_size;
    for (uint64_t e = 0; e < entries; ++e) {
      check(end - at >= 46 && read_le<uint32_t>(p + at) == 0x02014b50, bad(), " (bad central directory entry)");
      const uint16_t method = read_le<uint16_t>(p + at + 10);
      ZipRecord r;
      r.crc = read_le<uint32_t>(p + at + 16);
      uint64_t compressed = read_le<uint32_t>(p + at + 20);
      uint64_t size = read_le<uint32_t>(p + at + 24);
      const uint16_t name_len = read_le<uint16_t>(p + at + 28), extra_len = read_le<uint16_t>(p + at + 30),
                     comment_len = read_le<uint16_t>(p + at + 32);
      uint64_t local = read_le<uint32_t>(p + at + 42);
      check(end - at - 46 >= uint64_t{name_len} + extra_len + comment_len, bad(), " (bad central directory entry)");
      r.name.assign(reinterpret_cast<const char*>(p + at + 46), name_len);
      // The zip64 extra field holds, in order, those of the three values
      // that read 0xFFFFFFFF above.
      for (uint64_t x = at + 46 + name_len, xend = x + extra_len; xend - x >= 4;) {
        const uint16_t id = read_le<uint16_t>(p + x), len = read_le<uint16_t>(p + x + 2);
        check(xend - x - 4 >= len, bad(), " (bad extra field)");
        if (id == 0x0001) {
          uint64_t q = x + 4;
          for (uint64_t* v : {&size, &compressed, &local}) {
            if (*v != 0xFFFFFFFF) continue;
            check(x + 4 + len - q >= 8, bad(), " (bad zip64 extra field)");
            *v = read_le<uint64_t>(p + q);
            q += 8;
          }
        }
        x += 4 + uint64_t{len};
      }
      check(method == 0 && compressed == size, "'", name_, "': record '", r.name,
            "' is compressed; PyTorch checkpoints store records uncompressed, and tessera reads only those");
      check(local <= n && n - local >= 30 && read_le<uint32_t>(p + local) == 0x04034b50, bad(), " (bad local header of '",
            r.name, "')");
      r.offset = local + 30 + read_le<uint16_t>(p + local + 26) + read_le<uint16_t>(p + local + 28);
      check(r.offset <= n && size <= n - r.offset, bad(), " (record '", r.name, "' runs past the end of the file)");
      r.size = size;
      by_name_.emplace(r.name, records_.size());
      records_.push_back(std::move(r));
      at += 46 + uint64_t{name_len} + extra_len + comment_len;
    }
  }

  const std::vector<ZipRecord>& records() const { return records_; }
  // The record of that name (the first, if a zip repeats one), or nullptr.
  const ZipRecord* find(const std::string& name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : &records_[it->second];
  }
  // A record's bytes, unchecked (see check_crc).
  ByteView data(const ZipRecord& r) const { return {file_.data + r.offset, static_cast<std::size_t>(r.size)}; }
  // Checks a record's bytes against the CRC-32 the directory holds for them.
  void check_crc(const ZipRecord& r) const {
    check(crc32(file_.data + r.offset, static_cast<std::size_t>(r.size)) == r.crc, "'", name_, "' is corrupt: record '",
          r.name, "' fails its CRC-32 check");
  }

 private:
  std::string bad() const { return "'" + name_ + "' is not a valid zip file"; }
  ByteView file_;
  std::string name_;
  std::vector<ZipRecord> records_;
  std::unordered_map<std::string, std::size_t> by_name_;  // (a lookup per tensor storage)
};

// Writes stored records, as PyTorch's writer does: each record's data starts
// on a 64-byte boundary (padding goes into an extra field), so that readers
// can map tensors in place.
class ZipWriter {
 public:
  explicit ZipWriter(AtomicFileWriter& out) : out_(out) {}

  void add(const std::string& name, const void* data, std::size_t size) { add(name, data, size, crc32(data, size)); }
  // The same with the data's CRC-32 computed already (on other threads).
  void add(const std::string& name, const void* data, std::size_t size, uint32_t crc) {
    constexpr uint64_t kMax32 = 0xFFFFFFFF;
    Entry e{name, out_.position(), size, crc};
    const bool zip64 = size >= kMax32;
    std::string header;
    append_le<uint32_t>(header, 0x04034b50);
    append_le<uint16_t>(header, zip64 ? 45 : 20);  // version needed
    append_le<uint16_t>(header, 0);                // flags
    append_le<uint16_t>(header, 0);                // stored
    append_le<uint32_t>(header, 0);                // time, date
    append_le<uint32_t>(header, e.crc);
    append_le<uint32_t>(header, zip64 ? kMax32 : static_cast<uint32_t>(size));
    append_le<uint32_t>(header, zip64 ? kMax32 : static_cast<uint32_t>(size));
    append_le<uint16_t>(header, static_cast<uint16_t>(name.size()));
    std::string extra;
    if (zip64) {
      append_le<uint16_t>(extra, 0x0001);
      append_le<uint16_t>(extra, 16);
      append_le<uint64_t>(extra, size);
      append_le<uint64_t>(extra, size);
    }
    // Padding: an extra field of id "FB" (PyTorch's) filled with 'Z'.
    const uint64_t unpadded = e.local + header.size() + 2 + name.size() + extra.size();
    std::size_t pad = (64 - (unpadded + 4) % 64) % 64;
    append_le<uint16_t>(extra, 0x4246);
    append_le<uint16_t>(extra, static_cast<uint16_t>(pad));
    extra.append(pad, 'Z');
    append_le<uint16_t>(header, static_cast<uint16_t>(extra.size()));
    out_.write(header);
    out_.write(name);
    out_.write(extra);
    out_.write(data, size);
    entries_.push_back(std::move(e));
  }

  void finish() {
    constexpr uint64_t kMax32 = 0xFFFFFFFF;
    const uint64_t cd_offset = out_.position();
    std::string cd;
    for (const auto& e : entries_) {
      std::string extra;
      const bool big_size = e.size >= kMax32, big_offset = e.local >= kMax32;
      if (big_size || big_offset) {
        append_le<uint16_t>(extra, 0x0001);
        append_le<uint16_t>(extra, static_cast<uint16_t>(8 * (2 * big_size + big_offset)));
        if (big_size) append_le<uint64_t>(extra, e.size), append_le<uint64_t>(extra, e.size);
        if (big_offset) append_le<uint64_t>(extra, e.local);
      }
      append_le<uint32_t>(cd, 0x02014b50);
      append_le<uint16_t>(cd, 45);  // made by
      append_le<uint16_t>(cd, extra.empty() ? 20 : 45);
      append_le<uint16_t>(cd, 0);
      append_le<uint16_t>(cd, 0);
      append_le<uint32_t>(cd, 0);
      append_le<uint32_t>(cd, e.crc);
      append_le<uint32_t>(cd, big_size ? kMax32 : static_cast<uint32_t>(e.size));
      append_le<uint32_t>(cd, big_size ? kMax32 : static_cast<uint32_t>(e.size));
      append_le<uint16_t>(cd, static_cast<uint16_t>(e.name.size()));
      append_le<uint16_t>(cd, static_cast<uint16_t>(extra.size()));
      append_le<uint16_t>(cd, 0);  // comment
      append_le<uint16_t>(cd, 0);  // disk
      append_le<uint16_t>(cd, 0);  // internal attributes
      append_le<uint32_t>(cd, 0);  // external attributes
      append_le<uint32_t>(cd, big_offset ? kMax32 : static_cast<uint32_t>(e.local));
      cd += e.name;
      cd += extra;
    }
    out_.write(cd);
    const uint64_t count = entries_.size(), cd_size = cd.size();
    std::string tail;
    const bool zip64 = count >= 0xFFFF || cd_offset >= kMax32 || cd_size >= kMax32;
    if (zip64) {
      const uint64_t record = out_.position();
      append_le<uint32_t>(tail, 0x06064b50);
      append_le<uint64_t>(tail, 44);  // size of what follows
      append_le<uint16_t>(tail, 45);
      append_le<uint16_t>(tail, 45);
      append_le<uint32_t>(tail, 0);
      append_le<uint32_t>(tail, 0);
      append_le<uint64_t>(tail, count);
      append_le<uint64_t>(tail, count);
      append_le<uint64_t>(tail, cd_size);
      append_le<uint64_t>(tail, cd_offset);
      append_le<uint32_t>(tail, 0x07064b50);  // locator
      append_le<uint32_t>(tail, 0);
      append_le<uint64_t>(tail, record);
      append_le<uint32_t>(tail, 1);
    }
    append_le<uint32_t>(tail, 0x06054b50);
    append_le<uint32_t>(tail, 0);  // disk numbers
    append_le<uint16_t>(tail, zip64 ? 0xFFFF : static_cast<uint16_t>(count));
    append_le<uint16_t>(tail, zip64 ? 0xFFFF : static_cast<uint16_t>(count));
    append_le<uint32_t>(tail, zip64 ? kMax32 : static_cast<uint32_t>(cd_size));
    append_le<uint32_t>(tail, zip64 ? kMax32 : static_cast<uint32_t>(cd_offset));
    append_le<uint16_t>(tail, 0);  // comment
    out_.write(tail);
  }

 private:
  struct Entry {
    std::string name;
    uint64_t local;
    uint64_t size;
    uint32_t crc;
  };
  AtomicFileWriter& out_;
  std::vector<Entry> entries_;
};

}  // namespace tsr::io::detail
