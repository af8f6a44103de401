// Evaluation: aliasing (in place when the mapping is identical, through a
// temporary otherwise), in-place rules, thread-count independence, the
// evaluator contract, storage bounds.
#include "common.hpp"

using namespace tsr;

TEST_CASE("x.copy_(x.t()) on a square matrix transposes correctly") {
  for (int64_t n : {2, 3, 17, 100}) {
    CAPTURE(n);
    auto x = arange<float>(0.f, float(n * n)).reshape({n, n});
    const auto expected = x.t().contiguous();
    x.copy_(x.t());
    CHECK(equal(x, expected));
  }
}

TEST_CASE("overlapping shifted slices read the old values") {
  auto x = arange<float>(0.f, 10.f);
  x.slice(0, 1, 10) = x.slice(0, 0, 9) + 100.f;  // forward overlap
  CHECK(x.to_vector() == std::vector<float>{0, 100, 101, 102, 103, 104, 105, 106, 107, 108});
  auto y = arange<float>(0.f, 10.f);
  y.slice(0, 0, 9) = y.slice(0, 1, 10) * 2.f;  // backward overlap
  CHECK(y.to_vector() == std::vector<float>{2, 4, 6, 8, 10, 12, 14, 16, 18, 9});
  auto z = arange<float>(0.f, 6.f).reshape({2, 3});
  z += z.select(0, 0);  // a broadcast row of z itself
  CHECK(z.to_vector() == std::vector<float>{0, 2, 4, 3, 5, 7});
}

TEST_CASE("the identical mapping runs in place") {
  auto x = arange<float>(0.f, 5.f);
  const auto* before = x.data_ptr();
  x += x * 2.f;
  CHECK(x.data_ptr() == before);
  CHECK(x.to_vector() == std::vector<float>{0, 3, 6, 9, 12});
  x.mul_(x);
  CHECK(x.to_vector() == std::vector<float>{0, 9, 36, 81, 144});
  CHECK(detail::destination_use(x, x * 2.f).needs_temporary == false);
  CHECK(detail::destination_use(x, x.slice(0, 0, 5, 1) + 1.f).needs_temporary == false);
  CHECK(detail::destination_use(x.slice(0, 1, 5), x.slice(0, 0, 4)).needs_temporary == true);
  // Whether the expression reads its destination at all (then it is not
  // written around the cache).
  CHECK(detail::destination_use(x, x * 2.f).reads_dst == true);
  CHECK(detail::destination_use(x.slice(0, 1, 5), x.slice(0, 0, 4)).reads_dst == true);
  CHECK(detail::destination_use(x, arange<float>(0.f, 5.f) * 2.f).reads_dst == false);
}

TEST_CASE("the one-row fast path leaves to the general path every leaf it cannot take") {
  // One element of dst's own storage, broadcast: overwritten first, so it
  // must be read through a temporary (a wrong fast path gives 2, 4, 6, ...).
  auto x = arange<float>(1.f, 6.f);
  x.copy_(x.select(0, 0) + x);
  CHECK(x.to_vector() == std::vector<float>{2, 3, 4, 5, 6});
  // The element count of dst, but strided.
  auto m = arange<float>(0.f, 4.f).reshape({2, 2});
  auto out = empty({2, 2});
  out.copy_(m.t() + 0.f);
  CHECK(out.to_vector() == std::vector<float>{0, 2, 1, 3});
  // A contiguous leaf of dst's storage at another offset, and dst's own
  // elements as a leaf (the identical mapping, which stays in place).
  auto y = arange<float>(0.f, 8.f);
  y.narrow(0, 0, 4).copy_(y.narrow(0, 4, 4) + y.narrow(0, 0, 4));
  CHECK(y.to_vector() == std::vector<float>{4, 6, 8, 10, 4, 5, 6, 7});
  // The same with the leaf overlapping dst one element behind: each
  // element would read its left neighbour already overwritten (3, 6, 10, 15
  // instead of 3, 5, 7, 9).
  auto v = arange<float>(1.f, 9.f);
  v.narrow(0, 1, 4).copy_(v.narrow(0, 0, 4) + v.narrow(0, 1, 4));
  CHECK(v.to_vector() == std::vector<float>{1, 3, 5, 7, 9, 6, 7, 8});
  // A leaf whose storage was resized away is an error, not a read.
  auto z = arange<float>(0.f, 3.f);
  auto w = zeros({3});
  z.storage()->resize_(0);
  CHECK_THROWS_AS(w.copy_(z * 2.f), Error);
  CHECK(w.to_vector() == std::vector<float>{0, 0, 0});
}

TEST_CASE("in-place ops broadcast the source but never change the destination's shape") {
  auto x = zeros({2, 3});
  x += arange<float>(0.f, 3.f);
  CHECK(x.to_vector() == std::vector<float>{0, 1, 2, 0, 1, 2});
  CHECK_THROWS_WITH_AS(x.add_(zeros({2, 2, 3})), "output with shape [2, 3] doesn't match the broadcast shape [2, 2, 3]", Error);
  CHECK_THROWS_WITH_AS(x.copy_(zeros({4})), "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1", Error);
  auto e = zeros({3}).expand({2, 3});
  CHECK_THROWS_WITH_AS(e.fill_(1.f),
                       "unsupported operation: more than one element of the written-to tensor refers to a single "
                       "memory location. Please clone() the tensor before performing the operation.",
                       Error);
  auto i = arange<int32_t>(0, 4);
  i *= 3;
  i -= 1;
  CHECK(i.to_vector() == std::vector<int32_t>{-1, 2, 5, 8});
  auto f = ones({2});
  f /= 4;
  CHECK(f.to_vector() == std::vector<float>{0.25f, 0.25f});
  f.clamp_(0.f, 0.1f);
  CHECK(f.to_vector() == std::vector<float>{0.1f, 0.1f});
}

TEST_CASE("results are bitwise identical for 1 and 2 threads") {
  manual_seed(3);
  auto a = randn({1 << 20});
  auto b = randn({1 << 20});
  auto c = randn({512, 2048}).t();  // strided tier
  Tensor<float> r1, r2, s1, s2;
  test::with_threads(1, [&] {
    r1 = a * b + sin(a) - exp(-b);
    s1 = c * 2.f + 1.f;
  });
  test::with_threads(2, [&] {
    r2 = a * b + sin(a) - exp(-b);
    s2 = c * 2.f + 1.f;
  });
  CHECK(std::memcmp(r1.data_ptr(), r2.data_ptr(), sizeof(float) << 20) == 0);
  CHECK(equal(s1, s2));
  CHECK(equal(s1, c.contiguous() * 2.f + 1.f));
}

namespace {
// Sets the output size from which evaluations write around the cache, for
// one scope.
struct StreamingFrom {
  std::size_t saved = detail::streaming_threshold();
  explicit StreamingFrom(std::size_t bytes) { detail::streaming_threshold() = bytes; }
  ~StreamingFrom() { detail::streaming_threshold() = saved; }
};

template <class T>
bool same_bits(const Tensor<T>& x, const Tensor<T>& y) {
  const auto cx = x.contiguous(), cy = y.contiguous();
  return x.sizes() == y.sizes() && std::memcmp(cx.data_ptr(), cy.data_ptr(), sizeof(T) * std::size_t(x.numel())) == 0;
}
}  // namespace

TEST_CASE("outputs written around the cache (streaming stores) hold the same bits") {
  manual_seed(5);
  const int64_t n = 3 * detail::kTile + 37;  // a ragged last tile, chunks and a scalar tail
  const auto a = randn({n}), b = randn({n});
  const auto ad = randn<double>({n});
  const auto m = randn({5001, 7}).t();  // strided leaves, dense 7 x 5001 output
  const auto rows = randn({7, 5001}), col = randn({7, 1});  // a leaf of inner stride 0
  auto evaluate = [&] {
    std::vector<Tensor<float>> f;
    f.push_back(a * b + sin(a) - exp(-b));
    f.push_back(m * 2.f + 1.f);
    f.push_back(rows * col - 1.f);
    // Gradients: the summed derivative of one tensor, and a leaf's gradient
    // expression in an expression of two.
    const auto gx = a.clone().requires_grad_(), gy = b.clone().requires_grad_();
    sum(sin(gx) * gx).backward();
    sum(gx * exp(gy) - gy).backward();
    f.push_back(gx.grad());
    f.push_back(gy.grad());
    auto shifted = zeros({n + 1});  // a destination that is not 64-byte aligned
    shifted.slice(0, 1, n + 1).copy_(a * 3.f - b);
    f.push_back(shifted);
    auto strided = zeros({2 * n});  // not dense: written through the cache
    strided.slice(0, 0, 2 * n, 2).copy_(a - b);
    f.push_back(strided);
    auto x = a.clone();  // in place, the identical mapping
    x.copy_(x * 2.f + 1.f);
    f.push_back(x);
    const Tensor<double> d = exp(ad) * 0.5 - ad;
    const Tensor<int32_t> i = cast<int32_t>(a * 100.f);
    const Tensor<bool> mask = a > b;
    return std::tuple{f, d, i, mask};
  };
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    test::with_threads(threads, [&] {
      const auto cached = evaluate();
      const StreamingFrom every_output(0);
      const auto streamed = evaluate();
      for (std::size_t k = 0; k < std::get<0>(cached).size(); ++k) {
        CAPTURE(k);
        CHECK(same_bits(std::get<0>(cached)[k], std::get<0>(streamed)[k]));
      }
      CHECK(same_bits(std::get<1>(cached), std::get<1>(streamed)));
      CHECK(same_bits(std::get<2>(cached), std::get<2>(streamed)));
      CHECK(same_bits(std::get<3>(cached), std::get<3>(streamed)));
    });
  }
  // And against values computed one by one.
  const StreamingFrom every_output(0);
  const Tensor<float> r = a * 3.f - b;
  const auto av = a.to_vector(), bv = b.to_vector(), rv = r.to_vector();
  bool ok = true;
  for (std::size_t k = 0; k < av.size(); ++k) ok = ok && rv[k] == av[k] * 3.f - bv[k];
  CHECK(ok);
}

TEST_CASE("the pool's workers start with the first job that needs them") {
  // Until then the program has one thread, and glibc lets the C++ library
  // count std::shared_ptr references without locked instructions.
  const auto& pool = detail::ThreadPool::instance();
  test::with_threads(2, [&] {
    CHECK_FALSE(pool.workers_started());
    const Tensor<float> small = arange<float>(0.f, 100.f) + 1.f;  // on the calling thread
    CHECK_FALSE(pool.workers_started());
    const Tensor<float> large = arange<float>(0.f, 1 << 20) + 1.f;  // tiles on the pool
    CHECK(pool.workers_started());
    CHECK(large(1 << 19) == float((1 << 19) + 1));
    CHECK(small(99) == 100.f);
  });
}

TEST_CASE("evaluators are trivially copyable") {
  auto a = ones({3});
  auto e = where(a > 0.f, sin(a) * 2.f, cast<float>(a == 1.f)) + clamp(a, 0.f, 1.f);
  using Ev = decltype(e.evaluator(std::declval<const detail::Plan&>()));
  static_assert(std::is_trivially_copyable_v<Ev>);
  const float want = 2 * std::sin(1.f) + 1;  // where picks sin(1)*2, clamp(1, 0, 1) = 1
  CHECK(e.to_vector() == std::vector<float>{want, want, want});
}

TEST_CASE("expression nodes hold their operands: no dangling after the tensors go") {
  auto make = [] {
    auto a = arange<float>(0.f, 4.f);
    return a * 2.f + a;  // a is held by handle inside the expression
  };
  auto e = make();
  CHECK(e.to_vector() == std::vector<float>{0, 3, 6, 9});
}

TEST_CASE("a tensor whose storage was resized to 0 cannot be read; resized back it can") {
  auto x = arange<float>(0.f, 3.f);
  x.storage()->resize_(0);
  CHECK_THROWS_WITH_AS((void)(x + 1.f).eval(),
                       "setStorage: sizes [3], strides [1], storage offset 0, and itemsize 4 requiring a storage size "
                       "of 12 are out of bounds for storage of size 0",
                       Error);
  CHECK_THROWS_AS(test::repr(x), Error);
  CHECK_THROWS_AS(x(0), Error);
  x.storage()->resize_(12);
  x.fill_(2.f);
  CHECK(x.to_vector() == std::vector<float>{2, 2, 2});
}

TEST_CASE("version counter counts in-place writes") {
  auto x = zeros({4});
  const auto v0 = x.storage()->version();
  x += 1.f;
  x.select(0, 1) = 3.f;
  CHECK(x.storage()->version() == v0 + 2);
}

TEST_CASE("large evaluations with inner dims of every kind") {
  // rows shorter than a tile, a tile-multiple row, and a ragged row.
  for (Shape s : {Shape{40000, 3}, Shape{16, 8192}, Shape{7, 5001}}) {
    CAPTURE(s);
    auto a = rand(s);
    Tensor<float> r = a * 3.f - 1.f;
    auto av = a.to_vector(), rv = r.to_vector();
    bool ok = true;
    for (std::size_t i = 0; i < av.size(); ++i) ok = ok && rv[i] == av[i] * 3.f - 1.f;
    CHECK(ok);
  }
}
