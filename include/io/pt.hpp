// PyTorch's own checkpoint files, as torch.save writes them since 1.6: a zip
// holding data.pkl (the pickled value: a state_dict, an optimizer's
// state_dict, any nesting of dicts, lists, tuples, numbers, strings and
// tensors), one record data/<key> per tensor storage, and version.
//
//   auto sd = io::to_tensor_dict(io::load_pt("model.pt"), "model.pt");
//   io::save_pt("model.pt", io::tensor_dict_value(sd));  // torch.load reads it
//
// Reading never runs anything the file names (see pickle.hpp). Tensors that
// share a storage in the file share one in tessera, as torch.load gives
// them; a record's bytes are checked against its CRC-32, and every tensor's
// geometry against its storage.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pickle.hpp"
#include "zip.hpp"

namespace tsr::io {

// Named tensors in order: a module's state_dict (nn::StateDict is this type).
using TensorDict = std::vector<std::pair<std::string, AnyTensor>>;

namespace detail {

// A tensor of `numel` elements of T copied out of little-endian bytes (bool
// bytes are normalized: any nonzero byte is true).
template <class T>
Tensor<T> tensor_from_bytes(const unsigned char* src, int64_t numel) {
  Tensor<T> t = empty<T>(Shape{numel});
  if constexpr (std::is_same_v<T, bool>) {
    bool* d = t.data_ptr();
    for (int64_t i = 0; i < numel; ++i) d[i] = src[i] != 0;
  } else if (numel > 0) {
    std::memcpy(static_cast<void*>(t.data_ptr()), src, static_cast<std::size_t>(numel) * sizeof(T));
  }
  return t;
}

// Checks that a view of `sizes`/`strides` from `offset` stays inside a storage
// of `numel` elements (no overflow on the way), as torch's set_ does.
inline void check_geometry(const Shape& sizes, const Strides& strides, int64_t offset, int64_t numel, const std::string& who) {
  check(sizes.size() == strides.size() && sizes.size() <= 64, who, ": a tensor's size ", sizes, " and stride ", strides,
        " do not match");
  check(offset >= 0, who, ": negative storage offset ", offset);
  check_shape(sizes, who);  // valid sizes, whose product fits
  if (tsr::detail::numel_of(sizes) == 0) return;  // reaches nothing
  constexpr int64_t kLimit = int64_t{1} << 62;
  int64_t last = offset;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    int64_t reach = 0;
    const bool overflow =
        strides[d] < 0 || __builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) || reach >= kLimit - last;
    check(!overflow, who, ": size ", sizes, " and stride ", strides, " overflow");
    last += reach;
  }
  check(last < numel, who, ": a tensor of size ", sizes, ", stride ", strides, " and offset ", offset,
        " reaches past its storage of ", numel, " elements");
}

// Parses a checkpoint in memory. verify_crc = false skips the records'
// checksums (only the fuzzing harness does, to reach the parsers behind them).
inline PickleValue read_pt(ByteView file, const std::string& name, bool verify_crc = true) {
  const std::string who = "load_pt: '" + name + "'";
  check(!(file.size >= 2 && file.data[0] == 0x80 && file.data[1] <= 5),
        who, " is a checkpoint in PyTorch's legacy format (torch.save with _use_new_zipfile_serialization=False); "
        "tessera reads the zip format torch.save writes by default since PyTorch 1.6");
  const ZipReader zip(file, name);
  // The records sit in one folder, named after the file by torch.save:
  // <folder>/data.pkl, <folder>/data/<key>, <folder>/version.
  const ZipRecord* pickle = nullptr;
  for (const auto& r : zip.records()) {
    const std::size_t slash = r.name.find('/');
    if (slash != std::string::npos && r.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      pickle = &r;
      break;
    }
  }
  check(pickle != nullptr, who, " is a zip file but not a PyTorch checkpoint (it has no data.pkl)");
  const std::string folder = pickle->name.substr(0, pickle->name.size() - 8);  // with its '/'
  if (verify_crc) {
    // Every record's checksum, the records shared out among the threads
    // (checking is most of a load's time otherwise: about 1 byte per cycle).
    const auto& records = zip.records();
    tsr::detail::ThreadPool::instance().parallel_for(static_cast<int64_t>(records.size()), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) zip.check_crc(records[static_cast<std::size_t>(i)]);
    });
  }

  std::map<std::string, AnyTensor> storages;  // by key, each a 1-D tensor of its elements
  auto build = [&](const TensorRequest& r) -> AnyTensor {
    auto it = storages.find(r.key);
    if (it == storages.end()) {
      const ZipRecord* record = zip.find(folder + "data/" + r.key);
      check(record != nullptr, who, " lacks the record data/", r.key, " of a tensor");
      AnyTensor storage;
      const bool known = with_element_type(r.storage_type, [](auto names) { return names.storage; }, [&]<class T>(T) {
        check(record->size % sizeof(T) == 0 && static_cast<uint64_t>(r.storage_numel) == record->size / sizeof(T), who,
              ": record data/", r.key, " holds ", record->size, " bytes, not the ", r.storage_numel, " elements of ",
              sizeof(T), " bytes its storage declares");
        storage = tensor_from_bytes<T>(zip.data(*record).data, r.storage_numel);
      });
      check(known, who, " holds a tensor of torch.", r.storage_type,
            ", an element type tessera does not have (it has float32, float64, float16, bfloat16, int64, int32 and bool)");
      it = storages.emplace(r.key, storage).first;
    }
    const char* type = it->second.visit([]<class T>(const Tensor<T>&) { return FormatNames<T>::storage; });
    check(type == r.storage_type, who, ": storage ", r.key, " is used as both ", type, " and ", r.storage_type);
    check(r.storage_numel == it->second.numel(), who, ": storage ", r.key, " is declared with two sizes");
    check_geometry(r.sizes, r.strides, r.offset, it->second.numel(), who);
    return it->second.visit([&](const auto& s) { return AnyTensor(s.as_strided(r.sizes, r.strides, r.offset)); });
  };
  return Unpickler(zip.data(*pickle), name, build).load();
}

}  // namespace detail

// The value a PyTorch checkpoint holds (torch.load's result, on the CPU).
inline PickleValue load_pt(const std::string& path) {
  const detail::MappedFile file(path, "load_pt");
  return detail::read_pt(file.bytes(), path);
}

// Writes `value` as torch.save does (a zip torch.load reads). Each storage
// is written once, whole, as PyTorch does: tensors that share one (tied
// weights, views) share it again when loaded. A device's storage is copied
// to the host and written as a CPU storage, so the file loads anywhere
// (torch.load(path, map_location='cpu') gives the same). The file appears
// whole or not at all.
inline void save_pt(const std::string& path, const PickleValue& value) {
  std::vector<Storage> records;  // written as data/0, data/1, ...
  std::map<std::pair<const void*, std::string>, std::string> keys;  // (storage, type) -> key
  auto name = [&](const AnyTensor& any) {
    return any.visit([&]<class T>(const Tensor<T>& t) {
      (void)t.device_data_ptr();  // PyTorch's error where the view reaches past its storage (one freed by resize_(0))
      const Storage& s = t.storage();
      auto [it, fresh] = keys.emplace(std::pair<const void*, std::string>(s.get(), detail::FormatNames<T>::storage), "");
      if (fresh) {
        it->second = std::to_string(records.size());
        const int64_t elements = static_cast<int64_t>(s->nbytes() / sizeof(T));
        records.push_back(t.device().is_cpu() ? s : t.as_strided({elements}, {1}, 0).copy_to(kCPU).storage());
      }
      return detail::Pickler::StorageId{detail::FormatNames<T>::storage, it->second, static_cast<int64_t>(s->nbytes() / sizeof(T)),
                                        t.storage_offset(), t.sizes(), t.strides()};
    });
  };
  const std::string pickle = detail::Pickler(name).dump(value);
  // The storages' checksums first, shared out among the threads.
  std::vector<uint32_t> crcs(records.size());
  tsr::detail::ThreadPool::instance().parallel_for(static_cast<int64_t>(records.size()), [&](int64_t b, int64_t e) {
    for (auto i = static_cast<std::size_t>(b); i < static_cast<std::size_t>(e); ++i)
      crcs[i] = detail::crc32(records[i]->data(), records[i]->nbytes());
  });
  detail::AtomicFileWriter out(path, "save_pt");
  detail::ZipWriter zip(out);
  zip.add("archive/data.pkl", pickle.data(), pickle.size());
  for (std::size_t i = 0; i < records.size(); ++i)
    zip.add("archive/data/" + std::to_string(i), records[i]->data(), records[i]->nbytes(), crcs[i]);
  zip.add("archive/version", "3\n", 2);
  zip.finish();
  out.commit();
}

// A state_dict as the OrderedDict torch.save writes for one.
inline PickleValue tensor_dict_value(const TensorDict& d) {
  PickleValue::Dict out;
  out.ordered = true;
  for (const auto& [k, v] : d) out.items.emplace_back(k, v);
  return out;
}

// A checkpoint's value as a state_dict: a dict of names to tensors, or an
// Error saying what it holds instead. `source` names it in the error.
inline TensorDict to_tensor_dict(const PickleValue& v, const std::string& source) {
  const auto* d = v.get_if<PickleValue::Dict>();
  tsr::detail::check(d != nullptr, "'", source, "' holds a ", v.type_name(), ", not a state_dict (a dict of tensors)");
  TensorDict out;
  for (const auto& [k, x] : d->items) {
    const auto* key = k.get_if<std::string>();
    tsr::detail::check(key != nullptr, "'", source, "' is not a state_dict: it has a key of type ", k.type_name());
    const auto* t = x.get_if<AnyTensor>();
    tsr::detail::check(t != nullptr, "'", source, "' is not a state_dict: '", *key, "' holds a ", x.type_name(), ", not a tensor");
    out.emplace_back(*key, *t);
  }
  return out;
}

}  // namespace tsr::io
