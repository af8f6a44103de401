// .npy files: round trips for every dtype, files written by NumPy (the
// goldens), Fortran order, version 2 headers, and bad files.
#include <cstdio>

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
  CHECK_THROWS_WITH_AS(io::load_npy<float>("/nonexistent/x.npy"), "load_npy: cannot open '/nonexistent/x.npy'", Error);
  std::remove(path.c_str());
}

TEST_CASE("a failed save leaves no file behind") {
  CHECK_THROWS_AS(io::save_npy("/nonexistent-dir/x.npy", ones({2})), Error);
  CHECK_FALSE(test::file_exists("/nonexistent-dir/x.npy"));
}
