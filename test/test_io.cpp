// Files: .npy (round trips for every dtype, files written by NumPy, Fortran
// order, version 2 headers), PyTorch's checkpoints and safetensors (files
// PyTorch wrote, files PyTorch reads back, nn::save / optim::save), writes
// that survive being killed, and bad files of every kind.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <io/safetensors.hpp>
#include <nn/nn.hpp>
#include <nn/serialize.hpp>
#include <optim/optim.hpp>
#include <optim/serialize.hpp>

#include "common.hpp"

using namespace tsr;

namespace {
std::string tmp_path(const std::string& name) { return "/tmp/tsr_test_" + std::to_string(::getpid()) + "_" + name; }

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A version 1.0 file with the given header dict and data.
std::string npy_v1(std::string dict, const std::string& data) {
  std::size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string s = "\x93NUMPY";
  s += char(1);
  s += char(0);
  s += char(dict.size() & 0xFF);
  s += char(dict.size() >> 8);
  return s + dict + data;
}
}  // namespace

TEST_CASE_TEMPLATE("save_npy / load_npy round trip", T, float, double, int32_t, int64_t, bool, half, bfloat16) {
  const auto path = tmp_path("roundtrip.npy");
  for (Shape shape : {Shape{}, Shape{0}, Shape{5}, Shape{2, 3}, Shape{2, 0, 3}, Shape{3, 1, 4}}) {
    CAPTURE(shape);
    auto src = cast<T>(arange<float>(0.f, float(detail::numel_of(shape))).reshape(shape) * 0.5f - 1.f).eval();
    io::save_npy(path, src);
    const auto back = io::load_npy<T>(path);
    CHECK(back.sizes() == shape);
    CHECK(equal(back, src));
  }
  // A non-contiguous tensor is written in logical order.
  auto m = cast<T>(arange<float>(0.f, 6.f).reshape({2, 3})).eval();
  io::save_npy(path, m.t());
  CHECK(equal(io::load_npy<T>(path), m.t()));
  std::remove(path.c_str());
}

TEST_CASE("files written by NumPy load, with dtype conversion") {
  const auto ints = io::load_npy<int64_t>(test::golden_path("int_a_i32"));  // written by numpy as <i4
  CHECK(ints.sizes() == Shape{41, 8});
  CHECK(ints(0, 0) == -20);
  const auto as_float = io::load_npy<float>(test::golden_path("int_a_i64"));
  CHECK(as_float(40, 7) == 20.f);
  const auto b = io::load_npy<bool>(test::golden_path("print_bool_simple"));
  CHECK(b.to_vector() == std::vector<bool>{true, false, false, true});
}

TEST_CASE("Fortran order and version 2 headers") {
  const auto path = tmp_path("fortran.npy");
  // Column-major 2x3 of 0..5: memory holds columns.
  std::string data;
  for (int32_t v : {0, 3, 1, 4, 2, 5}) data.append(reinterpret_cast<const char*>(&v), 4);
  write_bytes(path, npy_v1("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", data));
  const auto t = io::load_npy<int32_t>(path);
  CHECK(t.sizes() == Shape{2, 3});
  CHECK(t.to_vector() == std::vector<int32_t>{0, 1, 2, 3, 4, 5});

  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
  dict.append((64 - (12 + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string v2 = "\x93NUMPY";
  v2 += char(2);
  v2 += char(0);
  const uint32_t len = static_cast<uint32_t>(dict.size());
  v2.append(reinterpret_cast<const char*>(&len), 4);
  const double vals[] = {1.5, -2.5};
  v2 += dict + std::string(reinterpret_cast<const char*>(vals), sizeof vals);
  write_bytes(path, v2);
  CHECK(io::load_npy<double>(path).to_vector() == std::vector<double>{1.5, -2.5});
  std::remove(path.c_str());
}

TEST_CASE("truncated and malformed files give a clear Error, never a crash") {
  const auto path = tmp_path("bad.npy");
  io::save_npy(path, arange<float>(0.f, 100.f));
  const std::string good = read_bytes(path);
  // Every truncation of a valid file is rejected.
  for (std::size_t cut : {std::size_t{0}, std::size_t{5}, std::size_t{9}, std::size_t{40}, std::size_t{127},
                          good.size() - 1}) {
    CAPTURE(cut);
    write_bytes(path, good.substr(0, cut));
    CHECK_THROWS_AS(io::load_npy<float>(path), Error);
  }
  const std::vector<std::string> bad = {
      "not a numpy file at all",
      npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3) ", ""),
      npy_v1("{'descr': '<f4', 'shape': (2,), }", std::string(8, '\0')),
      npy_v1("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')),
      npy_v1("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0')),
      npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", ""),
      npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", ""),
      npy_v1("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", std::string(4, '\0')),
  };
  for (const auto& b : bad) {
    write_bytes(path, b);
    CHECK_THROWS_AS(io::load_npy<float>(path), Error);
  }
  CHECK_THROWS_WITH_AS(io::load_npy<float>("/nonexistent/x.npy"),
                       "load_npy: cannot open '/nonexistent/x.npy': No such file or directory", Error);
  std::remove(path.c_str());
}

TEST_CASE("a failed save leaves no file behind") {
  CHECK_THROWS_AS(io::save_npy("/nonexistent-dir/x.npy", ones({2})), Error);
  CHECK_FALSE(test::file_exists("/nonexistent-dir/x.npy"));
}

// ----- PyTorch checkpoints and safetensors ---------------------------------------

namespace {
std::string golden_file(const std::string& name) { return std::string(TSR_GOLDEN_DIR) + "/" + name; }

// The tensors tools/make_golden.py saves (_checkpoint_tensors), rebuilt here.
io::TensorDict checkpoint_tensors(bool with_views = true) {
  const Tensor<float> base = arange<float>(0.f, 12.f).reshape({3, 4});
  io::TensorDict d = {
      {"f32", Tensor<float>(arange<float>(0.f, 6.f).reshape({2, 3}) * 0.5f - 1.f)},
      {"f64", Tensor<double>(arange<double>(0., 4.) / 3.)},
      {"f16", Tensor<half>(tensor<float>({0.5f, -1.25f, 65504.f}).to<half>())},
      {"bf16", Tensor<bfloat16>(tensor<float>({1.f, -2.5f, 3.0e38f}).to<bfloat16>())},
      {"i64", tensor<int64_t>({-(int64_t{1} << 40), 0, 7})},
      {"i32", tensor<int32_t>({-5, 6})},
      {"bool", tensor<bool>({true, false, true})},
      {"scalar", full<float>(Shape{}, 3.5f)},
      {"empty", zeros<float>({0, 3})},
      {"base", base},
  };
  if (with_views) {
    d.emplace_back("t", base.t());
    d.emplace_back("row", base.select(0, 1));
    d.emplace_back("strided", base.slice(1, 0, 4, 2));
    d.emplace_back("param", ones<float>({2}).requires_grad_());
  }
  return d;
}

// What tools/read_checkpoint.py prints for each tensor.
std::string describe(const io::TensorDict& d) {
  std::ostringstream os;
  std::vector<std::pair<const void*, std::string>> storages;
  for (const auto& [name, any] : d) {
    any.visit([&]<class T>(const Tensor<T>& t) {
      const void* s = t.storage().get();
      std::string shared = "-";
      for (const auto& [p, n] : storages)
        if (p == s) shared = n;
      if (shared == "-") storages.emplace_back(s, name);
      auto list = [](const auto& v) {
        std::string out = "[";
        for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
        return out + "]";
      };
      os << name << ' ' << std::string(detail::dtype_name<T>()).substr(6) << ' ' << list(t.sizes()) << ' '
         << list(t.strides()) << ' ' << t.storage_offset() << ' ' << shared << ' ';
      const auto values = Tensor<double>(cast<double>(t.detach())).contiguous().to_vector();
      for (std::size_t i = 0; i < values.size(); ++i) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", values[i]);
        os << (i ? " " : "") << buf;
      }
      os << '\n';
    });
  }
  return os.str();
}

// tools/read_checkpoint.py's output for `path`, or "" when Python with
// PyTorch is not installed (the check is then skipped, saying so).
std::string read_in_python(const std::string& path) {
  if (std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") != 0) {
    MESSAGE("PyTorch (Debian's python3-torch) is not installed: not checking that Python reads " << path);
    return "";
  }
  const std::string cmd = "/usr/bin/python3 " + golden_file("../../tools/read_checkpoint.py") + " " + path + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  CHECK(::pclose(p) == 0);
  return out;
}

void check_same(const io::TensorDict& got, const io::TensorDict& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(want[i].first);
    CHECK(got[i].first == want[i].first);
    CHECK(std::string(got[i].second.dtype_name()) == want[i].second.dtype_name());
    CHECK(got[i].second.sizes() == want[i].second.sizes());
    got[i].second.visit([&]<class T>(const Tensor<T>& g) { CHECK(equal(g, want[i].second.as<T>())); });
  }
}

io::TensorDict find_all(const io::TensorDict& d, const std::vector<std::string>& names) {
  io::TensorDict out;
  for (const auto& n : names)
    for (const auto& [k, v] : d)
      if (k == n) out.emplace_back(k, v);
  return out;
}

std::string bytes_of(const std::string& path) { return read_bytes(path); }
io::detail::ByteView view(const std::string& s) {
  return {reinterpret_cast<const unsigned char*>(s.data()), s.size()};
}
}  // namespace

TEST_CASE("a file torch.save wrote loads: every dtype, views sharing a storage, a Parameter") {
  const io::TensorDict d = io::to_tensor_dict(io::load_pt(golden_file("torch_tensors.pt")), "torch_tensors.pt");
  check_same(d, checkpoint_tensors());
  auto get = [&](const std::string& name) { return find_all(d, {name}).at(0).second; };
  // The views keep PyTorch's geometry and share the base's storage, as torch.load gives them.
  const Tensor<float> base = get("base").as<float>();
  for (const char* view : {"t", "row", "strided"}) {
    CAPTURE(view);
    CHECK(get(view).as<float>().is_alias_of(base));
  }
  CHECK(get("t").as<float>().strides() == Strides{1, 4});
  CHECK(get("row").as<float>().storage_offset() == 4);
  CHECK(get("strided").as<float>().strides() == Strides{4, 2});
  CHECK(get("param").requires_grad());
  CHECK_FALSE(get("f32").requires_grad());
  // The loaded views are tensors of their own: writing one writes the others.
  get("row").as<float>().fill_(-1.f);
  CHECK(base(1, 2) == -1.f);
  CHECK(get("t").as<float>()(2, 1) == -1.f);
}

TEST_CASE("save_pt writes what torch.load reads, storages shared as they were") {
  const std::string path = tmp_path("tensors.pt");
  const io::TensorDict d = checkpoint_tensors();
  io::save_pt(path, io::tensor_dict_value(d));
  const io::TensorDict back = io::to_tensor_dict(io::load_pt(path), path);
  check_same(back, d);
  CHECK(back[10].second.as<float>().is_alias_of(back[9].second.as<float>()));  // t and base
  const std::string python = read_in_python(path);
  if (!python.empty()) CHECK(python == describe(d));
  std::remove(path.c_str());
}

TEST_CASE("safetensors: the reference file loads; ours is the format Python parses") {
  std::vector<std::pair<std::string, std::string>> metadata;
  const io::TensorDict d = io::load_safetensors_ordered(golden_file("reference.safetensors"), &metadata);
  check_same(d, checkpoint_tensors(false));
  CHECK(metadata == std::vector<std::pair<std::string, std::string>>{{"format", "pt"}, {"note", "caf\xc3\xa9"}});
  const auto by_name = io::load_safetensors(golden_file("reference.safetensors"));
  CHECK(by_name.size() == d.size());
  CHECK(by_name.at("i64").as<int64_t>()(0) == -(int64_t{1} << 40));

  const std::string path = tmp_path("ours.safetensors");
  io::save_safetensors(path, checkpoint_tensors(false), {{"format", "pt"}, {"note", "caf\xc3\xa9"}});
  // The reference writer's layout, byte for byte: the same header, padding and data.
  CHECK(bytes_of(path) == bytes_of(golden_file("reference.safetensors")));
  const std::string python = read_in_python(path);
  if (!python.empty()) CHECK(python == "metadata format pt\nmetadata note caf\xc3\xa9\n" + describe(checkpoint_tensors(false)));
  // Views and non-contiguous tensors are written in logical order.
  const io::TensorDict views = checkpoint_tensors();
  io::save_safetensors(path, std::map<std::string, AnyTensor>(views.begin(), views.end()));
  const auto back = io::load_safetensors(path);
  CHECK(equal(back.at("t").as<float>(), arange<float>(0.f, 12.f).reshape({3, 4}).t()));
  CHECK(back.at("t").as<float>().is_contiguous());
  std::remove(path.c_str());
}

TEST_CASE("a PyTorch model's state_dict loads into the same model and gives PyTorch's output") {
  nn::Sequential model(nn::Linear(4, 3), nn::BatchNorm1d(3), nn::ReLU(), nn::Linear(3, 2));
  nn::load(model, golden_file("torch_model.pt"));
  model->eval();
  const Tensor<float> x = linspace<float>(-1.f, 1.f, 20).reshape({5, 4});
  const Tensor<float> y = model->forward(x);
  CHECK(test::worst_ulp<float>(y, test::golden<float>("torch_model_out")) <= 8);
  CHECK(model->state_dict()[6].second.as<int64_t>().item() == 3);  // num_batches_tracked

  // Both formats round-trip through nn::save / nn::load, holders and all.
  for (const char* ext : {".pt", ".safetensors"}) {
    CAPTURE(ext);
    const std::string path = tmp_path(std::string("model") + ext);
    nn::save(model, path);
    nn::Sequential other(nn::Linear(4, 3), nn::BatchNorm1d(3), nn::ReLU(), nn::Linear(3, 2));
    nn::load(other, path);
    other->eval();
    CHECK(equal(other->forward(x), y));
    std::remove(path.c_str());
  }
  // A model defined at compile time has the same keys: its checkpoint loads into the Sequential.
  nn::Static<nn::sized::Linear<4, 3>, nn::ReLU, nn::sized::Linear<3, 2>> fixed;
  const std::string fixed_path = tmp_path("static.safetensors");
  nn::save(fixed, fixed_path);
  nn::Sequential dynamic(nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2));
  nn::load(dynamic, fixed_path);
  CHECK(equal(dynamic->forward(x), Tensor<float>(fixed(x))));
  std::remove(fixed_path.c_str());
  // A mismatch is load_state_dict's error, and the model is left as it was.
  nn::Sequential smaller(nn::Linear(4, 2));
  const Tensor<float> before = smaller->state_dict()[0].second.as<float>().clone();
  CHECK_THROWS_WITH_AS(nn::load(smaller, golden_file("torch_model.pt")),
                       doctest::Contains("Error(s) in loading state_dict for Sequential:"), Error);
  CHECK(equal(smaller->state_dict()[0].second.as<float>(), before));
  CHECK_THROWS_WITH_AS(nn::save(model, "model.ckpt.json"),
                       "nn::save: cannot tell the format of 'model.ckpt.json' from its extension (use .pt or .pth for "
                       "PyTorch's format, .safetensors for safetensors)",
                       Error);
}

TEST_CASE("an optimizer's state: PyTorch's loads and the next step is PyTorch's; ours round-trips") {
  Tensor<float> w = io::to_tensor_dict(io::load_pt(golden_file("torch_adam_param.pt")), "param").at(0).second.as<float>();
  w.requires_grad_();
  optim::Adam adam({w}, optim::AdamOptions(0.5).betas({0.5, 0.5}));  // options come from the file
  optim::load(adam, golden_file("torch_adam_state.pt"));
  CHECK(adam.param_groups()[0].options().get_lr() == 0.1);
  w.mutable_grad() = Tensor<float>(cos(arange<float>(0.f, 6.f) + 2.f)).reshape({2, 3});
  adam.step();
  CHECK(test::worst_ulp<float>(w, test::golden<float>("torch_adam_after")) <= 4);

  // Saved and loaded into a fresh optimizer, the state steps as the original.
  const std::string path = tmp_path("adam.pt");
  optim::save(adam, path);
  Tensor<float> w2 = w.detach().clone().requires_grad_();
  optim::Adam fresh({w2}, optim::AdamOptions(0.5));
  optim::load(fresh, path);
  const std::string python = read_in_python(path);
  if (!python.empty()) {
    CHECK(python.find("param_groups [{'lr': 0.1, 'betas': (0.8, 0.9), 'eps': 1e-08, 'weight_decay': 0.0, 'amsgrad': True, "
                      "'maximize': False, 'params': [0]}]\n") == 0);
    CHECK(python.find("state.0.max_exp_avg_sq float32 [2, 3]") != std::string::npos);
  }
  w.mutable_grad() = full<float>({2, 3}, 0.25f);
  w2.mutable_grad() = full<float>({2, 3}, 0.25f);
  adam.step();
  fresh.step();
  CHECK(equal(w2, w));
  CHECK_THROWS_WITH_AS(optim::save(adam, tmp_path("adam.safetensors")),
                       doctest::Contains("an optimizer's state is saved in PyTorch's format"), Error);
  std::remove(path.c_str());
}

TEST_CASE("bad checkpoints give a clear Error, never a crash") {
  // Every truncation of a valid file, with and without the CRC check.
  for (const char* name : {"torch_tensors.pt", "reference.safetensors"}) {
    CAPTURE(name);
    const std::string good = bytes_of(golden_file(name));
    const bool pt = std::string(name).ends_with(".pt");
    for (std::size_t cut = 0; cut < good.size(); ++cut) {
      const std::string part = good.substr(0, cut);
      if (pt) {
        CHECK_THROWS_AS(io::detail::read_pt(view(part), name), Error);
        CHECK_THROWS_AS(io::detail::read_pt(view(part), name, false), Error);
      } else {
        CHECK_THROWS_AS(io::detail::read_safetensors(view(part), name), Error);
      }
    }
    // Every single-byte change loads or is refused, and a change in a
    // record's data fails its CRC-32.
    for (std::size_t at = 0; at < good.size(); ++at) {
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ 0x5A);
      try {
        if (pt) (void)io::detail::read_pt(view(bad), name, false);
        else (void)io::detail::read_safetensors(view(bad), name);
      } catch (const Error&) {
      }
    }
  }
  const std::string pt = bytes_of(golden_file("torch_tensors.pt"));
  std::string flipped = pt;
  const auto at = pt.rfind(std::string("\x00\x00\x80\xbf\x00\x00\x00\xbf", 8));  // f32's -1, -0.5
  REQUIRE(at != std::string::npos);
  flipped[at + 3] ^= 1;
  CHECK_THROWS_WITH_AS(io::detail::read_pt(view(flipped), "x.pt"), doctest::Contains("fails its CRC-32 check"), Error);

  // Pickles that would run code are refused, whatever the rest holds.
  auto zip_with_pickle = [](const std::string& pickle) {
    const std::string path = tmp_path("evil.pt");
    {
      io::detail::AtomicFileWriter out(path, "test");
      io::detail::ZipWriter zip(out);
      zip.add("archive/data.pkl", pickle.data(), pickle.size());
      zip.finish();
      out.commit();
    }
    return path;
  };
  // (string literals with NULs: their length is taken whole)
  auto pickle = []<std::size_t N>(const char (&s)[N]) { return std::string(s, N - 1); };
  std::string path = zip_with_pickle(pickle("\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00ls\x85R."));
  CHECK_THROWS_WITH_AS(io::load_pt(path),
                       doctest::Contains("names the global 'os.system', which is not one that PyTorch checkpoints use"),
                       Error);
  path = zip_with_pickle(pickle("\x80\x02\x81."));  // NEWOBJ
  CHECK_THROWS_WITH_AS(io::load_pt(path), doctest::Contains("pickle opcode 0x81 at byte 2"), Error);
  path = zip_with_pickle(pickle("\x80\x02]q\x00" "h\x00" "a."));  // a list holding itself
  CHECK_THROWS_WITH_AS(io::load_pt(path), doctest::Contains("nest too deeply"), Error);
  path = zip_with_pickle(pickle("\x80\x02K\x05."));
  CHECK_THROWS_WITH_AS(io::to_tensor_dict(io::load_pt(path), "five"), "'five' holds a int, not a state_dict (a dict of tensors)",
                       Error);
  std::remove(path.c_str());
  // torch.save's legacy (pre-1.6) format and compressed zip records are named as such.
  CHECK_THROWS_WITH_AS(io::detail::read_pt(view(std::string("\x80\x02\x8a\x0a") + "l\xfc\x9c" "F\xf9 j\xa8P\x19."), "old.pt"),
                       doctest::Contains("legacy format"), Error);
  std::string compressed = pt;
  const auto cd = compressed.find("PK\x01\x02");
  compressed[cd + 10] = 8;  // deflate
  CHECK_THROWS_WITH_AS(io::detail::read_pt(view(compressed), "c.pt"), doctest::Contains("is compressed"), Error);

  // safetensors: a header larger than the format allows or than the file,
  // offsets that overlap or leave a gap, a byte count that does not match.
  auto st = [](const std::string& header, std::size_t data_bytes) {
    std::string s;
    io::detail::append_le<uint64_t>(s, header.size());
    return s + header + std::string(data_bytes, '\0');
  };
  auto st_error = [&](const std::string& bytes) {
    try {
      (void)io::detail::read_safetensors(view(bytes), "s");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  std::string huge;
  io::detail::append_le<uint64_t>(huge, uint64_t{1} << 40);
  CHECK(st_error(huge + "{}") == "load_safetensors: 's': its header claims 1099511627776 bytes, over the format's limit of 100 MB");
  CHECK(st_error(st("{}", 0).substr(0, 9)).find("is truncated") != std::string::npos);
  CHECK(st_error(st(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8)) ==
        "load_safetensors: 's': the data of 'b' starts at 4, not at 8 (tensors overlap or leave a gap)");
  CHECK(st_error(st(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8)) ==
        "load_safetensors: 's': the data of 'a' starts at 4, not at 0 (tensors overlap or leave a gap)");
  CHECK(st_error(st(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8)) ==
        "load_safetensors: 's': 'a' of dtype F32 and shape [3] needs 3 elements of 4 bytes, its data_offsets hold 8 bytes");
  CHECK(st_error(st(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 8)) ==
        "load_safetensors: 's': its tensors cover 4 of its 8 bytes of data");
  CHECK(st_error(st(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1)) ==
        "load_safetensors: 's': 'a' has dtype U8, which tessera does not have (it reads F32, F64, F16, BF16, I64, I32 and BOOL)");
  CHECK(st_error(st(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,99]}})", 4)).find("outside the file") != std::string::npos);
  CHECK(st_error(st(R"({"a":[)", 0)).find("not valid JSON") != std::string::npos);
  CHECK(st_error(st(std::string(40, '[') + std::string(40, ']'), 0)).find("its header is not a JSON object") != std::string::npos);
  CHECK(st_error(st("{" + std::string(40, '[') , 0)).find("not valid JSON") != std::string::npos);
  CHECK_THROWS_WITH_AS(io::load_safetensors("/nonexistent/x.safetensors"),
                       "load_safetensors: cannot open '/nonexistent/x.safetensors': No such file or directory", Error);
}

TEST_CASE("a write killed midway leaves the previous file intact") {
  const std::string path = tmp_path("killed.pt");
  const int64_t n = int64_t{1} << 22;  // 16 MB: each save takes several milliseconds
  io::save_pt(path, io::tensor_dict_value({{"w", full<float>({n}, 1.f)}}));
  // The child rewrites the file without end, with tensors made before the
  // fork.
  const std::vector<Tensor<float>> versions = {full<float>({n}, 2.f), full<float>({n}, 3.f)};
  // The files of path's folder whose names start with `prefix`.
  const auto files_starting = [dir = std::filesystem::path(path).parent_path()](const std::string& prefix) {
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().string().rfind(prefix, 0) == 0) found.push_back(entry.path());
    return found;
  };
  for (int attempt = 0; attempt < 4; ++attempt) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // The pool's workers stayed in the parent: the child runs its loops serially.
      const detail::ThreadPool::SerialScope serial;
      for (int k = 0;; ++k) io::save_pt(path, io::tensor_dict_value({{"w", versions[k % 2]}}));
    }
    // Killed once the child is writing (its first temporary file, named
    // after its pid, exists), a little later at each attempt: how long the
    // child takes to get there depends on the machine (under a sanitizer,
    // the 30 to 81 ms after the fork that this test used to wait could all
    // pass before the first save began).
    const std::string child_tmp = path + ".tmp-" + std::to_string(child) + "-";
    for (int waited_ms = 0; waited_ms < 10000 && files_starting(child_tmp).empty(); ++waited_ms) ::usleep(1000);
    ::usleep(static_cast<useconds_t>(3000 * attempt));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status));
    // Whole: one version, every element of it.
    const Tensor<float> w = io::to_tensor_dict(io::load_pt(path), path).at(0).second.as<float>();
    REQUIRE(w.numel() == n);
    const float v = w(0);
    CHECK((v == 1.f || v == 2.f || v == 3.f));
    CHECK(equal(w, full<float>({n}, v)));
  }
  // The killed writers' temporary files are all that is left over: the
  // kills landed inside saves (a save is nearly all of the child's time).
  const std::vector<std::filesystem::path> leftovers = files_starting(path + ".tmp-");
  for (const auto& file : leftovers) std::filesystem::remove(file);
  CHECK(leftovers.size() >= 1);
  std::remove(path.c_str());
}
