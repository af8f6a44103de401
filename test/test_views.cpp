// Views: geometry (sizes, strides, offset), storage sharing, PyTorch's
// reshape rule, writes through temporary views, element references, errors.
#include "common.hpp"

using namespace tsr;
using test::error_of;

TEST_CASE("views share storage and have PyTorch's strides") {
  auto x = arange<float>(0.f, 24.f).reshape({2, 3, 4});
  CHECK(x.strides() == Strides{12, 4, 1});
  auto t = x.transpose(0, 2);
  CHECK(t.sizes() == Shape{4, 3, 2});
  CHECK(t.strides() == Strides{1, 4, 12});
  CHECK(t.is_alias_of(x));
  CHECK_FALSE(t.is_contiguous());
  CHECK(t(3, 2, 1) == x(1, 2, 3));
  auto p = x.permute({2, 0, 1});
  CHECK(p.sizes() == Shape{4, 2, 3});
  CHECK(p(1, 1, 2) == x(1, 2, 1));
  auto s = x.slice(2, 1, 4, 2);
  CHECK(s.sizes() == Shape{2, 3, 2});
  CHECK(s.strides() == Strides{12, 4, 2});
  CHECK(s.storage_offset() == 1);
  CHECK(s.to_vector() == std::vector<float>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23});
  CHECK(x.slice(0, -1, 100).sizes() == Shape{1, 3, 4});  // Python clamping
  CHECK(x.slice(1, 2, 1).sizes() == Shape{2, 0, 4});
  auto n = x.narrow(1, 1, 2);
  CHECK(n.storage_offset() == 4);
  auto sel = x.select(1, -1);
  CHECK(sel.sizes() == Shape{2, 4});
  CHECK(sel.storage_offset() == 8);
  CHECK(x.unsqueeze(1).sizes() == Shape{2, 1, 3, 4});
  CHECK(x.unsqueeze(-1).strides() == Strides{12, 4, 1, 1});
  CHECK(x.unsqueeze(1).squeeze().sizes() == Shape{2, 3, 4});
  CHECK(x.unsqueeze(0).squeeze(0).sizes() == Shape{2, 3, 4});
  CHECK(x.squeeze(1).sizes() == Shape{2, 3, 4});
  auto e = x.select(0, 0).select(0, 0).expand({5, 4});
  CHECK(e.strides() == Strides{0, 1});
  CHECK(x.flatten().sizes() == Shape{24});
  CHECK(x.flatten(1).sizes() == Shape{2, 12});
}

TEST_CASE("reshape views when it can and copies only when it must") {
  auto x = arange<float>(0.f, 12.f).reshape({3, 4});
  auto v = x.reshape({2, 6});
  CHECK(v.is_alias_of(x));
  CHECK(x.reshape({-1}).sizes() == Shape{12});
  auto t = x.t();
  auto r = t.reshape({12});  // t is not viewable as 1-D: copy
  CHECK_FALSE(r.is_alias_of(x));
  CHECK(r.to_vector() == std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  auto u = t.reshape({2, 2, 3});  // splits the stride-1 dim: a view, strides from PyTorch
  CHECK(u.is_alias_of(x));
  CHECK(u.strides() == Strides{2, 1, 4});
  auto w = t.reshape({4, 3, 1});  // only adds a size-1 dim: a view
  CHECK(w.is_alias_of(x));
  // A sliced tensor whose rows stay contiguous can merge nothing across rows.
  auto s = arange<float>(0.f, 16.f).reshape({4, 4}).slice(1, 0, 2);
  CHECK_THROWS_WITH_AS(s.view({8}),
                       "view size is not compatible with input tensor's size and stride (at least one dimension spans "
                       "across two contiguous subspaces). Use .reshape(...) instead.",
                       Error);
  CHECK(s.view({4, 2, 1}).is_alias_of(s));
}

TEST_CASE("writes through temporary views and element references") {
  auto x = zeros({3, 4});
  x.slice(0, 1, 3) = ones({2, 4}) * 2.f;
  x.select(1, 0) = 5.f;
  x(0, -1) = 7.f;
  x.narrow(1, 1, 2).select(0, 2) = arange<float>(10.f, 12.f);
  CHECK(x.to_vector() == std::vector<float>{5, 0, 0, 7, 5, 2, 2, 2, 5, 10, 11, 2});
  // Assignment to a named tensor rebinds it instead.
  auto y = x;
  y = zeros({1});
  CHECK(x.numel() == 12);
  CHECK(y.numel() == 1);
  // Broadcasting source into a view.
  x.t() = arange<float>(0.f, 3.f);
  CHECK(x.select(1, 2).to_vector() == std::vector<float>{0, 1, 2});
}

TEST_CASE("bad dims, indices and shapes raise PyTorch's errors") {
  auto x = zeros({2, 3});
  CHECK_THROWS_WITH_AS(x.transpose(0, 2), "Dimension out of range (expected to be in range of [-2, 1], but got 2)", IndexError);
  CHECK_THROWS_WITH_AS(x.size(-3), "Dimension out of range (expected to be in range of [-2, 1], but got -3)", IndexError);
  CHECK_THROWS_WITH_AS(x(5, 0), "index 5 is out of bounds for dimension 0 with size 2", IndexError);
  CHECK_THROWS_WITH_AS(x(0, -4), "index -4 is out of bounds for dimension 1 with size 3", IndexError);
  CHECK_THROWS_AS(x(0), IndexError);
  CHECK_THROWS_WITH_AS(x.select(0, 5), "select(): index 5 out of range for tensor of size [2, 3] at dimension 0", IndexError);
  CHECK_THROWS_WITH_AS(x.view({5}), "shape '[5]' is invalid for input of size 6", Error);
  CHECK_THROWS_WITH_AS(x.view({-1, -1}), "only one dimension can be inferred", Error);
  CHECK_THROWS_WITH_AS(zeros({2, 3, 4}).t(), "t() expects a tensor with <= 2 dimensions, but self is 3D", Error);
  CHECK_THROWS_WITH_AS(x.permute({0, 0}), "permute(): duplicate dims are not allowed.", Error);
  CHECK_THROWS_WITH_AS(x.narrow(1, 2, 2), "start (2) + length (2) exceeds dimension size (3).", Error);
  CHECK_THROWS_WITH_AS(x.expand({2, 4}),
                       "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
                       "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2, 3]",
                       Error);
  CHECK_THROWS_WITH_AS(x.slice(1, 0, 2, 0), "slice step cannot be zero", ValueError);
  CHECK_THROWS_WITH_AS(x.unsqueeze(4), "Dimension out of range (expected to be in range of [-3, 2], but got 4)", IndexError);
  CHECK_THROWS_WITH_AS(x.item(), "a Tensor with 6 elements cannot be converted to Scalar", Error);
  CHECK_THROWS_AS(Tensor<float>().sizes(), Error);
}

TEST_CASE("0-d tensors") {
  auto s = full({}, 3.f);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.item() == 3.f);
  CHECK(s() == 3.f);
  CHECK(s.unsqueeze(0).sizes() == Shape{1});
  CHECK(s.reshape({1, 1}).sizes() == Shape{1, 1});
  CHECK(s.flatten().sizes() == Shape{1});
}

TEST_CASE("unfold makes overlapping windows; the *_as views and PyTorch's other names") {
  const auto x = arange<float>(0.f, 7.f);
  const auto w = x.unfold(0, 3, 2);  // windows [0 1 2], [2 3 4], [4 5 6]
  CHECK(w.sizes() == Shape{3, 3});
  CHECK(w.strides() == Strides{2, 1});
  CHECK(w.is_alias_of(x));
  CHECK(w(2, 0) == 4.f);
  CHECK(x.unfold(0, 0, 1).sizes() == Shape{8, 0});
  const auto m = arange<float>(0.f, 12.f).reshape({3, 4});
  CHECK(m.unfold(1, 2, 1).strides() == Strides{4, 1, 1});
  CHECK(m.unfold(0, 2, 1).strides() == Strides{4, 1, 4});
  CHECK(m.unfold(-1, 2, 3).sizes() == Shape{3, 1, 2});  // the last column fits no window
  const auto s = full<float>({}, 3.f);
  CHECK(s.unfold(0, 1, 5).sizes() == Shape{1});
  CHECK(error_of([&] { (void)x.unfold(0, 8, 1); }) == "maximum size for tensor at dimension 0 is 7 but size is 8");
  CHECK(error_of([&] { (void)x.unfold(0, 3, 0); }) == "step is 0 but must be > 0");
  CHECK(error_of([&] { (void)x.unfold(1, 2, 1); }) ==
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  CHECK(error_of([&] { (void)s.unfold(0, 2, 1); }) == "maximum size for tensor at dimension 0 is 1 but size is 2");

  const auto other = zeros<int64_t>({4, 2, 3});
  const auto r = arange<float>(0.f, 6.f).reshape({2, 3});
  CHECK(r.expand_as(other).sizes() == Shape{4, 2, 3});
  CHECK(r.expand_as(other).strides() == Strides{0, 3, 1});
  CHECK(x.unfold(0, 1, 1).reshape_as(x).sizes() == x.sizes());
  CHECK(r.view_as(zeros<bool>({6})).is_alias_of(r));
  CHECK(r.nelement() == 6);
  CHECK(r.ndimension() == 2);
  CHECK(r.is_same_size(zeros<int32_t>({2, 3})));
  CHECK_FALSE(r.is_same_size(zeros<float>({3, 2})));

  // is_nonzero: `if tensor:` in Python; NaN counts as nonzero.
  CHECK(full<float>({1}, std::nanf("")).is_nonzero());
  CHECK_FALSE(zeros<float>({1, 1}).is_nonzero());
  CHECK(full<bool>({}, true).is_nonzero());
  CHECK(error_of([] { (void)zeros<float>({0}).is_nonzero(); }) == "Boolean value of Tensor with no values is ambiguous");
  CHECK(error_of([] { (void)zeros<float>({2}).is_nonzero(); }) ==
        "Boolean value of Tensor with more than one value is ambiguous");
}

TEST_CASE("new_* tensors and type_as take the element type and device they are asked for") {
  const auto d = zeros<double>({2, 3});
  const auto f = d.new_full({2}, 3.5);
  static_assert(std::is_same_v<decltype(f), const Tensor<double>>);
  CHECK(f.sizes() == Shape{2});
  CHECK(f.to_vector() == std::vector<double>{3.5, 3.5});
  CHECK(d.new_zeros({1, 2}).to_vector() == std::vector<double>{0, 0});
  CHECK(d.new_ones({3}).to_vector() == std::vector<double>{1, 1, 1});
  CHECK(d.new_empty({4, 0}).sizes() == Shape{4, 0});
  CHECK_FALSE(d.requires_grad());
  const auto h = arange<float>(0.f, 3.f).requires_grad_();
  CHECK_FALSE(h.new_ones({2}).requires_grad());  // new tensors are leaves without history
  const auto i = full<float>({2}, 2.75f).type_as(zeros<int64_t>({1}));
  static_assert(std::is_same_v<decltype(i), const Tensor<int64_t>>);
  CHECK(i.to_vector() == std::vector<int64_t>{2, 2});
}
