// Views: geometry (sizes, strides, offset), storage sharing, PyTorch's
// reshape rule, writes through temporary views, element references, errors.
#include "common.hpp"

using namespace tsr;

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
