// Shape operations, indexing, sorting, binning and unique against PyTorch
// 1.13 (tools/make_golden.py: shape_ops, shape_more, binning,
// join_split_scatter, index_writes_names), on
// contiguous, transposed, sliced and expanded inputs, with PyTorch's error
// texts.
#include <algorithm>
#include <array>

#include "common.hpp"

using namespace tsr;
using test::check_close;
using test::error_of;

namespace {

template <class F>
bool raises_index_error(F&& f) {
  try {
    f();
  } catch (const IndexError&) {
    return true;
  } catch (...) {
  }
  return false;
}

std::vector<int64_t> sizes_along(const std::vector<Tensor<float>>& parts, int64_t dim) {
  std::vector<int64_t> out;
  for (const auto& p : parts) out.push_back(p.size(dim));
  return out;
}

const Tensor<float>& x() {
  static const auto t = test::golden<float>("so_x");
  return t;
}
Tensor<float> xt() { return x().transpose(0, 2); }
Tensor<float> xe() { return x().slice(1, 0, 1).expand({3, 4, 5}); }

}  // namespace

TEST_CASE("cat and stack") {
  const auto a = test::golden<float>("so_a"), b = test::golden<float>("so_b");
  check_close(cat({a, b, zeros<float>({0})}, 0), test::golden("so_cat0"), 0, 0, "cat skips (0,) tensors");
  check_close(cat({a.t(), b.t()}, 1), test::golden("so_cat1_t"), 0, 0, "cat of transposed");
  check_close(cat({x(), xe(), xt().transpose(0, 2)}, -1), test::golden("so_cat_neg"), 0, 0, "cat dim -1");
  for (int d : {0, 1, 2, -1})
    check_close(stack({a, Tensor<float>(a * 2.f), b.slice(0, 0, 2)}, d),
                test::golden("so_stack" + std::to_string(d)), 0, 0, "stack");
  CHECK(error_of([] { cat(std::vector<Tensor<float>>{}); }) == "torch.cat(): expected a non-empty list of Tensors");
  CHECK(error_of([&] { cat({a, ones<float>({2, 4})}, 0); }) ==
        "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1 in "
        "the list.");
  CHECK(error_of([&] { cat({a, ones<float>({3})}); }) == "Tensors must have same number of dimensions: got 2 and 1");
  CHECK(raises_index_error([&] { cat({a, a}, 2); }));
  CHECK(error_of([] { stack(std::vector<Tensor<float>>{}); }) == "stack expects a non-empty TensorList");
  CHECK(error_of([&] { stack({a, ones<float>({2, 4})}); }) ==
        "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 1");
}

TEST_CASE("split and chunk give views with PyTorch's piece sizes") {
  // Piece sizes as torch.split / torch.chunk return them (checked in Python).
  const auto v6 = arange<float>(6), v5 = arange<float>(5);
  CHECK(sizes_along(chunk(v6, 4), 0) == std::vector<int64_t>{2, 2, 2});
  CHECK(sizes_along(chunk(v5, 3), 0) == std::vector<int64_t>{2, 2, 1});
  CHECK(sizes_along(split(v5, 2), 0) == std::vector<int64_t>{2, 2, 1});
  CHECK(sizes_along(split(x(), {1, 3}, 1), 1) == std::vector<int64_t>{1, 3});
  CHECK(sizes_along(split(zeros<float>({0}), 0), 0) == std::vector<int64_t>{0});
  auto parts = split(x(), 2, -1);
  REQUIRE(parts.size() == 3);
  CHECK(equal(parts[1], x().slice(2, 2, 4)));
  CHECK(parts[2].is_alias_of(x()));
  CHECK(error_of([&] { split(x(), {1, 1}, 1); }) ==
        "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at dimension 1), but got "
        "split_sizes=[1, 1]");
  CHECK(error_of([&] { split(x(), 0, 1); }) ==
        "split_size can only be 0 if dimension size is 0, but got dimension size of 4");
  CHECK(error_of([&] { split(x(), -1, 1); }) == "split expects split_size be non-negative, but got split_size=-1");
  CHECK(error_of([&] { chunk(x(), 0, 1); }) == "chunk expects `chunks` to be greater than 0, got: 0");
}

TEST_CASE("flip, roll, repeat and tile") {
  check_close(flip(x(), {0, 2}), test::golden("so_flip02"), 0, 0, "flip");
  check_close(flip(xt(), {1}), test::golden("so_flip_t1"), 0, 0, "flip of transposed");
  check_close(flip(xe(), {-1, 1}), test::golden("so_flip_e"), 0, 0, "flip of expanded");
  check_close(roll(x(), {1, -2}, {0, 2}), test::golden("so_roll"), 0, 0, "roll");
  check_close(roll(xt(), {7}), test::golden("so_roll_flat"), 0, 0, "roll flattened");
  check_close(roll(xt(), 7), test::golden("so_roll_flat"), 0, 0, "roll(x, shift) flattens, as torch::roll(x, 7)");
  check_close(roll(x(), -13, 1), test::golden("so_roll_big"), 0, 0, "roll by more than the size");
  const auto a = test::golden<float>("so_a");
  check_close(repeat(a, {2, 1, 3}), test::golden("so_repeat"), 0, 0, "repeat");
  check_close(repeat(a.t(), {2, 2}), test::golden("so_repeat_t"), 0, 0, "repeat of transposed");
  check_close(tile(a, {2}), test::golden("so_tile1"), 0, 0, "tile with short reps");
  check_close(tile(xt(), {2, 1, 1, 2}), test::golden("so_tile3"), 0, 0, "tile");
  const auto f = flip(x(), {});
  CHECK(!f.is_alias_of(x()));
  CHECK(error_of([&] { flip(x(), {0, 0}); }) == "dim 0 appears multiple times in the list of dims");
  CHECK(error_of([&] { roll(x(), {1}, {0, 1}); }) == "shifts and dimensions must align. shifts: 1, dims:2");
  CHECK(error_of([&] { repeat(a, {2}); }) ==
        "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  CHECK(error_of([&] { repeat(a, {-1, 2}); }) == "Trying to create tensor with negative dimension -2: [-2, 6]");
  CHECK(roll(zeros<float>({0, 3}), 1, 0).sizes() == Shape{0, 3});
}

TEST_CASE("index_select, integer indexing and gather") {
  const auto idx = tensor<int64_t>({3, 0, 0, 2});
  check_close(index_select(x(), 1, idx), test::golden("so_index_select1"), 0, 0, "index_select");
  check_close(index_select(xt(), 0, idx), test::golden("so_index_select_t"), 0, 0, "index_select of transposed");
  check_close(index(x(), 1, tensor<int64_t>({0, -1, 2, -4}).view({2, 2})), test::golden("so_index_2d"), 0, 0,
              "2-D integer index");
  check_close(index(xt(), -1, tensor<int64_t>({2, -3})), test::golden("so_index_last"), 0, 0, "index last dim");
  const auto gi1 = test::golden<int64_t>("so_gather_i1"), gi2 = test::golden<int64_t>("so_gather_i2");
  check_close(gather(x(), 1, gi1), test::golden("so_gather1"), 0, 0, "gather dim 1");
  check_close(gather(x(), 2, gi2), test::golden("so_gather2"), 0, 0, "gather with a smaller index");
  check_close(gather(xt(), 0, gi1.transpose(0, 2).slice(0, 0, 3)), test::golden("so_gather_t"), 0, 0,
              "gather of transposed with a non-contiguous index");
  CHECK(error_of([&] { index_select(x(), 0, tensor<int64_t>({3})); }) == "index out of range in self");
  CHECK(raises_index_error([&] { index_select(x(), 0, tensor<int64_t>({-1})); }));
  CHECK(error_of([&] { index_select(x(), 0, zeros<int64_t>({1, 1})); }) ==
        "index_select(): Index is supposed to be a vector");
  CHECK(error_of([&] { index(x(), 1, tensor<int64_t>({4})); }) ==
        "index 4 is out of bounds for dimension 1 with size 4");
  CHECK(raises_index_error([&] { index(x(), 0, tensor<int64_t>({-4})); }));
  const auto m = arange<float>(6).view({2, 3});
  CHECK(error_of([&] { gather(m, 1, full<int64_t>({1, 1}, 3)); }) ==
        "index 3 is out of bounds for dimension 1 with size 3");
  CHECK(raises_index_error([&] { gather(m, 1, full<int64_t>({1, 1}, -1)); }));
  CHECK(error_of([&] { gather(m, 1, zeros<int64_t>({1})); }) ==
        "Index tensor must have the same number of dimensions as input tensor");
  CHECK(error_of([&] { gather(m, 1, zeros<int64_t>({3, 1})); }) ==
        "Size does not match at dimension 0 expected index [3, 1] to be smaller than self [2, 3] apart from "
        "dimension 1");
}

TEST_CASE("scatter and scatter_add") {
  const auto src = test::golden<float>("so_scatter_src");
  const auto si = tensor<int64_t>({4, 0, 1, 3, 2, 2}).view({3, 2});
  check_close(scatter(zeros<float>({3, 5}), 1, si.slice(1, 0, 1).contiguous(), src.slice(1, 0, 1)),
              test::golden("so_scatter"), 0, 0, "scatter");
  check_close(scatter(zeros<float>({3, 5}), 1, tensor<int64_t>({4, 0, 1, 3, 2, 1}).view({3, 2}), 2.5),
              test::golden("so_scatter_val"), 0, 0, "scatter a value");
  check_close(scatter_add(ones<float>({3, 5}), 1, si, src), test::golden("so_scatter_add"), 0, 0,
              "scatter_add with a repeated index");
  check_close(scatter_add(zeros<float>({4, 2}), 0, tensor<int64_t>({3, 0, 3, 3, 0, 1}).view({3, 2}), src),
              test::golden("so_scatter_add0"), 1e-7, 0, "scatter_add along dim 0");
  // A bad index leaves the target untouched.
  auto target = ones<float>({2, 3});
  const auto bad = tensor<int64_t>({0, 3}).view({1, 2});
  CHECK(error_of([&] { scatter_(target, 1, bad, ones<float>({1, 2})); }) ==
        "index 3 is out of bounds for dimension 1 with size 3");
  CHECK(equal(target, ones<float>({2, 3})));
  CHECK(error_of([&] { scatter_add_(target, 1, zeros<int64_t>({1, 4}), ones<float>({1, 3})); }) ==
        "Expected index [1, 4] to be smaller than self [2, 3] apart from dimension 1 and to be smaller size than src "
        "[1, 3]");
}

TEST_CASE("masks: masked_fill, masked_select, nonzero, where, one_hot") {
  const auto mask = test::golden<bool>("so_mask");
  check_close(masked_fill(x(), mask, -7.0), test::golden("so_masked_fill"), 0, 0, "masked_fill broadcasts the mask");
  auto filled = x().clone();
  masked_fill_(filled, mask, -7.0);
  check_close(filled, test::golden("so_masked_fill"), 0, 0, "masked_fill_");
  CHECK(masked_select(ones<float>({3, 4, 5}), zeros<bool>({3, 4, 5})).sizes() == Shape{0});
  const auto ints = test::golden<int64_t>("so_ints");
  check_close(nonzero(ints), test::golden("so_nonzero"), 0, 0, "nonzero");
  const auto nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const auto special = tensor<float>({0.f, nan, -0.f, inf, 0.f, 1e-30f}).view({2, 3});
  check_close(nonzero(special), test::golden("so_nonzero_special"), 0, 0, "NaN is nonzero, -0 is zero");
  const auto w = where(ints != int64_t{0});
  REQUIRE(w.size() == 2);
  CHECK(equal(w[1], nonzero(ints).select(1, 1)));
  const auto w0 = where(full<bool>({}, true));
  REQUIRE(w0.size() == 1);
  CHECK(w0[0].sizes() == Shape{1});
  const auto oh = tensor<int64_t>({0, 2, 1, 3}).view({2, 2});
  check_close(one_hot(oh), test::golden("so_one_hot"), 0, 0, "one_hot");
  check_close(one_hot(oh, 5), test::golden("so_one_hot5"), 0, 0, "one_hot with num_classes");
  CHECK(error_of([&] { one_hot(oh, 3); }) == "Class values must be smaller than num_classes.");
  CHECK(error_of([&] { one_hot(tensor<int64_t>({-1}), 3); }) == "Class values must be non-negative.");
  CHECK(error_of([&] { one_hot(zeros<int64_t>({0})); }) == "Can not infer total number of classes from empty tensor.");
  CHECK(error_of([&] { masked_fill(arange<float>(6).view({2, 3}), zeros<bool>({3, 2}), 1.0); }) ==
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1");
}

TEST_CASE("masked_select broadcasts x against the mask") {
  const auto sel = test::golden<bool>("so_msel_mask");
  check_close(masked_select(x().select(0, 0), sel), test::golden("so_masked_select"), 0, 0, "masked_select");
  check_close(masked_select(xt().select(2, 0).t(), sel), test::golden("so_masked_select"), 0, 0,
              "masked_select of a transposed x");
}

TEST_CASE("sort, argsort and topk") {
  const auto ties = test::golden<int64_t>("so_ties");
  for (const char* sfx : {"a", "d"}) {
    const bool desc = sfx[0] == 'd';
    const std::string s = sfx;
    auto [v, i] = sort(ties, 1, desc);
    check_close(v, test::golden("so_sort_ties_" + s), 0, 0, "sort values (ties)");
    check_close(i, test::golden("so_sort_ties_" + s + "i"), 0, 0, "stable sort indices");
    auto [vt, it] = sort(ties.t(), 0, desc);
    check_close(vt, test::golden("so_sort_ties_t" + s), 0, 0, "sort of transposed");
    check_close(it, test::golden("so_sort_ties_t" + s + "i"), 0, 0, "stable sort indices of transposed");
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const auto sp = tensor<float>({1.f, nan, 3.f, -inf, 3.f, inf, -0.f, nan});
    auto [sv, si] = sort(sp, -1, desc);
    check_close(sv, test::golden("so_sort_special_" + s), 0, 0, "sort with NaN and inf");
    check_close(si, test::golden("so_sort_special_" + s + "i"), 0, 0, "sort indices with NaN and inf");
    CHECK(equal(argsort(sp, -1, desc), si));
  }
  auto [lv, li] = topk(x(), 2, 1);
  check_close(lv, test::golden("so_topk_l"), 0, 0, "topk largest");
  check_close(li, test::golden("so_topk_li"), 0, 0, "topk largest indices");
  auto [sv, si] = topk(xt(), 3, -1, false);
  check_close(sv, test::golden("so_topk_s"), 0, 0, "topk smallest of transposed");
  check_close(si, test::golden("so_topk_si"), 0, 0, "topk smallest indices");
  CHECK(std::get<0>(topk(x(), 0, 1)).sizes() == Shape{3, 0, 5});
  CHECK(error_of([&] { topk(x(), 6); }) == "selected index k out of range");
  CHECK(raises_index_error([&] { sort(x(), 3); }));
}

TEST_CASE("tril, triu and diagonal") {
  for (int k : {0, 1, -2}) {
    check_close(tril(x(), k), test::golden("so_tril" + std::to_string(k)), 0, 0, "tril");
    check_close(triu(xt(), k), test::golden("so_triu" + std::to_string(k)), 0, 0, "triu of transposed");
  }
  CHECK(raises_index_error([] { tril(ones<float>({3})); }));
  for (auto [off, d1, d2] : {std::array<int, 3>{0, 0, 2}, {1, 1, 2}, {-1, 2, 0}, {7, 0, 1}}) {
    const std::string name =
        "so_diag_" + std::to_string(off) + "_" + std::to_string(d1) + "_" + std::to_string(d2);
    check_close(diagonal(x(), off, d1, d2), test::golden(name), 0, 0, name);
  }
  // diagonal is a view: writes go through.
  auto m = zeros<float>({3, 3});
  diagonal(m).fill_(1.f);
  CHECK(equal(m, eye<float>(3)));
  CHECK(error_of([&] { diagonal(m, 0, 0, 0); }) == "diagonal dimensions cannot be identical 0, 0");
}

TEST_CASE("empty tensors and size-1 dims, with NaN and inf") {
  const auto a = test::golden<float>("so_a");
  const auto e03 = zeros<float>({0, 3}), e30 = zeros<float>({3, 0});
  check_close(cat({e03, a}, 0), test::golden("so_e_cat"), 0, 0, "cat with an empty tensor");
  check_close(stack({zeros<float>({0}), zeros<float>({0})}, 1), test::golden("so_e_stack"), 0, 0, "stack of empties");
  check_close(repeat(e03, {2, 2}), test::golden("so_e_repeat"), 0, 0, "repeat of empty");
  check_close(index_select(e30, 0, tensor<int64_t>({2, 0})), test::golden("so_e_index_select"), 0, 0,
              "index_select of empty rows");
  check_close(gather(x().select(0, 0), 1, zeros<int64_t>({4, 0})), test::golden("so_e_gather"), 0, 0, "empty gather");
  check_close(std::get<0>(sort(e30, 1)), test::golden("so_e_sort"), 0, 0, "sort of empty lines");
  check_close(nonzero(zeros<float>({0})), test::golden("so_e_nonzero"), 0, 0, "nonzero of empty");
  check_close(diagonal(e03), test::golden("so_e_diag"), 0, 0, "diagonal of empty");
  check_close(tril(e30), test::golden("so_e_tril"), 0, 0, "tril of empty");
  const auto one = test::golden<float>("so_one");
  check_close(std::get<0>(topk(one, 1, 1)), test::golden("so_1_topk"), 0, 0, "topk over a size-1 dim");
  auto [sv, si] = sort(one, 0);
  check_close(sv, test::golden("so_1_sort"), 0, 0, "sort with NaN and inf");
  check_close(si, test::golden("so_1_sorti"), 0, 0, "sort indices with NaN and inf");
  check_close(flip(one, {0, 1}), test::golden("so_1_flip"), 0, 0, "flip with a size-1 dim");
  check_close(roll(one, 1, 0), test::golden("so_1_roll"), 0, 0, "roll");
  check_close(tile(one, {1, 3}), test::golden("so_1_tile"), 0, 0, "tile of a column");
  check_close(cat({one, one.t().t()}, 1), test::golden("so_1_cat"), 0, 0, "cat of columns");
  check_close(mm(one.slice(0, 2, 3), ones<float>({1, 4})), test::golden("so_1_mm"), 0, 0, "mm with k = 1");
  check_close(masked_fill(one, full<bool>({1}, true), 0.5), test::golden("so_1_masked_fill"), 0, 0,
              "masked_fill with a size-1 mask");
}

TEST_CASE("inputs sliced with a step") {
  const auto xs = x().slice(1, 0, 4, 2).slice(2, 1, 5, 2);  // x[:, ::2, 1::2]
  check_close(cat({xs, x().slice(1, 1, 4, 2).slice(2, 0, 5, 2)}, 2), test::golden("so_step_cat"), 0, 0, "cat");
  check_close(std::get<0>(sort(x().slice(2, 0, 5, 2), 2, true)), test::golden("so_step_sort"), 0, 0, "sort");
  check_close(flip(xs, {1}), test::golden("so_step_flip"), 0, 0, "flip");
  const auto gi = tensor<int64_t>({1, 0, 1, 1}, {1, 2, 2}).expand({3, 2, 2}).contiguous();
  check_close(gather(xs, 2, gi), test::golden("so_step_gather"), 0, 0, "gather");
  check_close(repeat(xs, {1, 2, 1}), test::golden("so_step_repeat"), 0, 0, "repeat");
}

TEST_CASE("movedim, unbind, trace, diag and diff") {
  const auto x3 = test::golden<float>("sm_x");
  const auto x3t = x3.transpose(0, 2);
  const auto moved = movedim(x3, 0, -1);
  CHECK(moved.is_alias_of(x3));
  check_close(moved, test::golden("sm_movedim"), 0, 0, "movedim");
  check_close(movedim(x3t, {0, 1}, {2, 0}), test::golden("sm_movedim_t"), 0, 0, "movedim of several dims");
  check_close(moveaxis(x3, -1, 0), test::golden("sm_moveaxis"), 0, 0, "moveaxis");
  CHECK(equal(swapaxes(x3, 0, 2), x3t));
  CHECK(equal(swapdims(x3, -1, 0), x3t));
  CHECK(error_of([&] { movedim(x3, {0, 0}, {1, 2}); }) == "movedim: repeated dim in `source` ([0, 0])");
  CHECK(error_of([&] { movedim(x3, {0, 1}, {1, -2}); }) == "movedim: repeated dim in `destination` ([1, -2])");
  CHECK(error_of([&] { movedim(x3, {0, 1}, {1}); }) ==
        "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the same number of dims as "
        "destination ([1] dims)");
  CHECK(raises_index_error([&] { movedim(x3, 0, 3); }));

  const auto pieces = unbind(x3t, 1);
  REQUIRE(pieces.size() == 4);
  check_close(pieces[2], test::golden("sm_unbind"), 0, 0, "unbind");
  CHECK(pieces[2].is_alias_of(x3));
  CHECK(error_of([] { unbind(full<float>({}, 1.f)); }) == "Dimension specified as 0 but tensor has no dimensions");

  const auto m = test::golden<float>("sm_m");
  check_close(trace(m), test::golden("sm_trace"), 1e-6, 1e-6, "trace of a wide matrix");
  check_close(trace(x3t.select(0, 1)), test::golden("sm_trace_t"), 1e-6, 1e-6, "trace of a strided matrix");
  const auto tr = trace(test::golden<int64_t>("sm_mi"));
  static_assert(std::is_same_v<decltype(tr)::value_type, int64_t>);
  check_close(tr, test::golden("sm_trace_int"), 0, 0, "trace of an integer matrix");
  CHECK(error_of([&] { trace(x3); }) == "trace: expected a matrix, but got tensor with dim 3");

  const auto v = test::golden<float>("sm_v");
  for (int k : {0, 2, -1}) check_close(diag(v, k), test::golden("sm_diag_v" + std::to_string(k)), 0, 0, "diag of a vector");
  for (int k : {0, 1, -2, 5}) check_close(diag(m, k), test::golden("sm_diag_m" + std::to_string(k)), 0, 0, "diag of a matrix");
  CHECK(diag(m, 9).sizes() == Shape{0});  // (PyTorch 1.13 fails here with an overflow)
  check_close(diag(x3t.select(1, 1).select(1, 0), -1), test::golden("sm_diag_t"), 0, 0, "diag of a strided vector");
  const auto dm = diag(x3t.select(1, 1), 1);
  check_close(dm, test::golden("sm_diag_mt"), 0, 0, "diag of a strided matrix");
  CHECK(!dm.is_alias_of(x3));  // a new tensor, as in PyTorch
  CHECK(error_of([&] { diag(x3); }) == "matrix or a vector expected");

  check_close(diff(x3), test::golden("sm_diff"), 0, 0, "diff");
  check_close(diff(x3t, 2, 0), test::golden("sm_diff_t2"), 1e-6, 1e-6, "second difference of a transposed x");
  check_close(diff(m, 1, 0, m.narrow(0, 0, 2), ones<float>({1, 5})), test::golden("sm_diff_pa"), 0, 0,
              "diff with prepend and append");
  check_close(diff(test::golden<int64_t>("sm_mi"), 1, 1), test::golden("sm_diff_int"), 0, 0, "diff of integers");
  check_close(diff(test::golden<bool>("sm_bools")), test::golden("sm_diff_bool"), 0, 0, "diff of bools is xor");
  check_close(diff(v, 5), test::golden("sm_diff_long"), 0, 0, "more differences than elements");
  CHECK(equal(diff(v, 0), v));
  CHECK(error_of([] { diff(full<float>({}, 1.f)); }) == "diff expects input to be at least one-dimensional");
  CHECK(error_of([&] { diff(m, 1, -1, ones<float>({5})); }) ==
        "diff expects prepend or append to be the same dimension as input");
  CHECK(error_of([&] { diff(m, 1, -1, Tensor<float>(), ones<float>({3, 1})); }) ==
        "diff expects the shape of tensor to prepend or append to match that of input except along the "
        "differencing dimension; input.size(0) = 4, but got tensor.size(0) = 3");
}

TEST_CASE("kthvalue, median and nanmedian") {
  const auto r = test::golden<float>("sm_r");
  auto same = [](const auto& got, const std::string& name) {
    check_close(std::get<0>(got), test::golden("sm_" + name), 0, 0, name);
    check_close(std::get<1>(got), test::golden("sm_" + name + "i"), 0, 0, name + " indices");
  };
  same(kthvalue(r, 3, 1), "kth3_1");
  same(kthvalue(r, 1, -1, true), "kth1_last_keep");
  same(kthvalue(r.transpose(0, 2), 5, 0), "kth5_t");
  same(median(r, 0), "median0");
  same(median(r.transpose(1, 2), 2, true), "median_t_keep");
  same(nanmedian(r, 1), "nanmedian1");
  check_close(median(r), test::golden("sm_median_all"), 0, 0, "median of all");
  check_close(median(r.narrow(2, 0, 4)), test::golden("sm_median_even"), 0, 0, "the lower middle of an even count");
  check_close(nanmedian(r), test::golden("sm_median_all"), 0, 0, "nanmedian without NaN is median");

  // Ties, infinities and NaN. Where equal elements tie (two 4s in row 2 for
  // the 4th smallest; four NaNs in row 3 for nanmedian), PyTorch's position
  // comes from its selection algorithm; tessera's is the stable sort's.
  const auto sp = test::golden<float>("sm_special");
  same(median(sp, 1), "median_sp");
  const auto [nv, ni] = nanmedian(sp, 1);
  check_close(nv, test::golden("sm_nanmedian_sp"), 0, 0, "nanmedian with NaN");
  check_close(ni.narrow(0, 0, 3), test::golden("sm_nanmedian_spi").narrow(0, 0, 3), 0, 0, "nanmedian indices");
  CHECK(ni.to_vector() == std::vector<int64_t>{2, 1, 3, 0, 1});
  const auto [kv, ki] = kthvalue(sp, 4, 1);
  check_close(kv, test::golden("sm_kth4_sp"), 0, 0, "4th smallest: NaN is largest");
  CHECK(ki.to_vector() == std::vector<int64_t>{0, 3, 2, 3, 2});  // PyTorch: 0, 3, 0, 3, 2
  check_close(median(sp), test::golden("sm_median_sp_all"), 0, 0, "median of all with NaN");
  check_close(nanmedian(sp), test::golden("sm_nanmedian_sp_all"), 0, 0, "nanmedian of all with NaN");
  check_close(nanmedian(sp.narrow(0, 0, 3)), test::golden("sm_nanmedian_sp_first"), 0, 0, "nanmedian of rows 0-2");

  const auto ints = test::golden<int64_t>("sm_ints");
  check_close(std::get<0>(median(ints, 1)), test::golden("sm_median_int"), 0, 0, "median of integers");
  check_close(median(ints), test::golden("sm_median_int_all"), 0, 0, "median of all integers");
  check_close(std::get<0>(kthvalue(ints, 2, 0)), test::golden("sm_kth_int"), 0, 0, "kthvalue of integers");

  // 0-d and empty inputs, and PyTorch's errors.
  const auto s = full<float>({}, 2.f);
  CHECK(std::get<0>(kthvalue(s, 1)).item() == 2.f);
  CHECK(std::get<1>(median(s, 0)).item() == 0);
  CHECK(std::isnan(median(zeros<float>({0})).item()));
  CHECK(std::get<0>(median(zeros<float>({0, 3}), 1)).sizes() == Shape{0});
  CHECK(raises_index_error([] { median(zeros<float>({3, 0}), 1); }));
  CHECK(error_of([] { nanmedian(zeros<float>({3, 0}), 1); }) == "median(): Expected reduction dim 1 to have non-zero size.");
  CHECK(error_of([&] { kthvalue(sp, 5, 1); }) == "kthvalue(): selected number k out of range for dimension 1");
  CHECK(error_of([&] { kthvalue(sp, 0); }) == "kthvalue(): selected number k out of range for dimension 1");
  CHECK(error_of([] { median(zeros<int64_t>({0})); }) ==
        "median() of an empty integer tensor: it has no value (PyTorch returns an arbitrary one)");
  CHECK(raises_index_error([&] { median(sp, 2); }));
}

TEST_CASE("searchsorted and bucketize") {
  const auto seq = test::golden<float>("bn_seq"), vals = test::golden<float>("bn_vals");
  static_assert(std::is_same_v<decltype(searchsorted(seq, vals)), Tensor<int64_t>>);
  check_close(searchsorted(seq, vals), test::golden("bn_ss_left"), 0, 0, "left");
  check_close(searchsorted(seq, vals, true), test::golden("bn_ss_right"), 0, 0, "right");
  check_close(searchsorted(seq, vals.t(), "right"), test::golden("bn_ss_t"), 0, 0, "transposed values, side");
  const auto rows = test::golden<double>("bn_rows"), qs = test::golden<double>("bn_qs");
  check_close(searchsorted(rows, qs), test::golden("bn_ss_rows"), 0, 0, "one sequence per row");
  check_close(searchsorted(rows, qs, true), test::golden("bn_ss_rows_right"), 0, 0, "one sequence per row, right");
  const auto shuffled = test::golden<float>("bn_shuffled"), q = test::golden<float>("bn_q");
  const auto order = test::golden<int64_t>("bn_order");
  check_close(searchsorted(shuffled, q, false, order), test::golden("bn_ss_sorter"), 0, 0, "through a sorter");
  check_close(searchsorted(shuffled, q, "right", order), test::golden("bn_ss_sorter_right"), 0, 0, "sorter, right");
  check_close(searchsorted(test::golden<int64_t>("bn_iseq"), tensor<float>({-3.5f, 0.f, 0.5f, 7.f, 8.f})),
              test::golden("bn_ss_int_float"), 0, 0, "float values in an integer sequence");
  check_close(searchsorted(seq, tensor<int64_t>({-1, 0, 1, 3, 4}), true), test::golden("bn_ss_float_int"), 0, 0,
              "integer values in a float sequence");
  const auto one = searchsorted(seq, 1.0);
  CHECK(one.dim() == 0);
  check_close(one, test::golden("bn_ss_scalar"), 0, 0, "a scalar value");
  const auto as_int32 = searchsorted<int32_t>(seq, vals);
  static_assert(std::is_same_v<decltype(as_int32), const Tensor<int32_t>>);
  check_close(as_int32, test::golden("bn_ss_left"), 0, 0, "int32 positions");
  check_close(bucketize(vals, seq), test::golden("bn_bucket"), 0, 0, "bucketize");
  check_close(bucketize(vals, seq, true), test::golden("bn_bucket_right"), 0, 0, "bucketize, right");
  check_close(bucketize(0.5, seq), test::golden("bn_bucket_scalar"), 0, 0, "bucketize of a scalar");

  // NaN in the sequence is where sort puts it, last (hand-checked: NaN
  // values go before the sequence's NaN on the left, after it on the right).
  const auto with_nan = tensor<float>({1.f, 2.f, NAN});
  CHECK(searchsorted(with_nan, tensor<float>({NAN, 5.f, 2.f})).to_vector() == std::vector<int64_t>{2, 2, 1});
  CHECK(searchsorted(with_nan, tensor<float>({NAN, 5.f, 2.f}), true).to_vector() == std::vector<int64_t>{3, 2, 2});
  CHECK(searchsorted(zeros<float>({0}), tensor<float>({1.f, -1.f})).to_vector() == std::vector<int64_t>{0, 0});
  CHECK(searchsorted(seq, zeros<float>({0, 3})).sizes() == Shape{0, 3});

  CHECK(error_of([] { searchsorted(full<float>({}, 1.f), tensor<float>({1.f})); }) ==
        "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
  CHECK(error_of([] { searchsorted(zeros<float>({2, 2}), zeros<float>({3, 2})); }) ==
        "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
        "tensor and input value tensor must match, but we got boundaries tensor [2, 2] and input value tensor [3, 2]");
  CHECK(error_of([] { searchsorted(zeros<float>({2, 2}), 1.5); }) ==
        "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got "
        "boundaries tensor dim(2) and input value's dim(0) numel(1)");
  CHECK(error_of([&] { searchsorted(seq, vals, "middle"); }) ==
        "torch.searchsorted(): side can only be 'left' or 'right' but got middle");
  CHECK(error_of([&] { searchsorted(shuffled, q, false, tensor<int64_t>({0, 1})); }) ==
        "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor [7] and got "
        "sorter tensor [2]");
  CHECK(error_of([] { searchsorted(tensor<float>({1.f, 2.f}), 1.f, false, tensor<int64_t>({0, 2})); }) ==
        "torch.searchsorted(): sorter index out of range");
  CHECK(error_of([&] { bucketize(vals, zeros<float>({1, 1})); }) == "boundaries tensor must be 1 dimension, but got dim(2)");
}

TEST_CASE("bincount and histc") {
  const auto in = test::golden<int64_t>("bn_counts_in");
  const auto w = test::golden<float>("bn_w");
  check_close(bincount(in), test::golden("bn_bincount"), 0, 0, "counts");
  check_close(bincount(in, 12), test::golden("bn_bincount_min"), 0, 0, "counts, minlength");
  const auto wf = bincount(in, w);
  static_assert(std::is_same_v<decltype(wf), const Tensor<float>>);
  check_close(wf, test::golden("bn_bincount_w"), 0, 0, "float weights, added in order as PyTorch");
  check_close(bincount(in, cast<double>(w), 3), test::golden("bn_bincount_wd"), 0, 0, "double weights");
  const auto wi = bincount(cast<int32_t>(in), arange<int32_t>(40));
  static_assert(std::is_same_v<decltype(wi), const Tensor<double>>);
  check_close(wi, test::golden("bn_bincount_wi"), 0, 0, "integer weights sum in double");
  CHECK(bincount(zeros<int64_t>({0}), 3).to_vector() == std::vector<int64_t>{0, 0, 0});
  CHECK(bincount(zeros<int64_t>({0})).numel() == 0);
  CHECK(error_of([] { bincount(tensor<int64_t>({-1, 3})); }) == "bincount only supports 1-d non-negative integral inputs.");
  CHECK(error_of([] { bincount(full<int64_t>({}, 3)); }) == "bincount only supports 1-d non-negative integral inputs.");
  CHECK(error_of([] { bincount(tensor<int64_t>({1, 3}), -1); }) == "minlength should be >= 0");
  CHECK(error_of([] { bincount(tensor<int64_t>({1, 3}), tensor<float>({1.f, 2.f, 3.f})); }) ==
        "weights should be 1-d and have the same length as input");

  const auto h = test::golden<float>("bn_h");
  check_close(histc(h, 7), test::golden("bn_histc"), 0, 0, "the data's range");
  check_close(histc(h, 10, -1.0, 1.5), test::golden("bn_histc_range"), 0, 0, "a given range");
  check_close(histc(tensor<float>({0.f, 0.5f, 1.f, 1.5f, 2.f, 2.f, -0.01f, 2.01f}), 4, 0, 2), test::golden("bn_histc_edges"),
              0, 0, "elements on the edges, outside the range");
  check_close(histc(full<float>({5}, 2.f), 4), test::golden("bn_histc_const"), 0, 0, "one value: widened by 1");
  check_close(histc(zeros<float>({0}), 3), test::golden("bn_histc_empty"), 0, 0, "no elements");
  check_close(histc(Tensor<double>(cast<double>(h)).t(), 9, -2, 2), test::golden("bn_histc_double"), 0, 0, "doubles, transposed");
  // NaN is left out (hand-checked: 1 falls in bin 1 of [0, 2], and 2, the
  // right edge, in the last bin too).
  CHECK(histc(tensor<float>({1.f, NAN, 2.f}), 2, 0, 2).to_vector() == std::vector<float>{0.f, 2.f});
  CHECK(error_of([&] { histc(h, 0); }) == "torch.histogram(): bins must be > 0, but got 0 for dimension 0");
  CHECK(error_of([&] { histc(h, 4, 3, 1); }) == "torch.histc: max must be larger than min");
  CHECK(error_of([] { histc(tensor<float>({1.f, 2.f, INFINITY}), 4); }) == "torch.histc: range of [1, inf] is not finite");
  CHECK(error_of([] { histc(tensor<float>({1.f, NAN}), 4); }).rfind("torch.histc: range of [", 0) == 0);
}

TEST_CASE("unique and unique_consecutive") {
  auto same = [](const auto& got, const std::string& name) {
    check_close(std::get<0>(got), test::golden("bn_" + name), 0, 0, name);
    check_close(std::get<1>(got), test::golden("bn_" + name + "_inv"), 0, 0, name + " inverse");
    check_close(std::get<2>(got), test::golden("bn_" + name + "_cnt"), 0, 0, name + " counts");
  };
  const auto u = test::golden<int64_t>("bn_u");
  same(unique(u, true, true, true), "unique");
  same(unique(u.t(), true, true, true), "unique_t");
  same(unique_consecutive(u, true, true), "consec");
  check_close(unique(u), test::golden("bn_unique"), 0, 0, "values alone");
  const auto rows = test::golden<int64_t>("bn_rowsu");
  const auto ud = test::golden<float>("bn_ud");
  same(unique_dim(rows, 0, true, true, true), "udim0");
  same(unique_dim(ud, 1, true, true, true), "udim1");
  same(unique_dim(ud, -1, true, true, true), "udim_last");
  same(unique_dim(test::golden<float>("bn_order3"), 2, true, true, true), "udim_order");  // PyTorch's slice order
  same(unique_consecutive(rows, true, true, 0), "cdim0");
  same(unique_consecutive(ud, true, true, 1), "cdim1");
  const auto fl = test::golden<float>("bn_fl");
  const auto ufl = unique(fl);
  check_close(ufl, test::golden("bn_unique_fl"), 0, 0, "infinities and signed zeros");
  CHECK(std::signbit(ufl.to_vector()[2]));  // -0.0 and 0.0 are one value, the first one kept
  check_close(std::get<0>(unique_consecutive(fl)), test::golden("bn_consec_fl"), 0, 0, "consecutive floats");

  // Every NaN is its own value, sorted last (hand-checked; PyTorch 1.13
  // returns counts of 0 here).
  const auto [nv, ni, nc] = unique(tensor<float>({3.f, NAN, 1.f, NAN, 3.f}), true, true, true);
  const auto values = nv.to_vector();
  CHECK(values.size() == 4);
  CHECK((values[0] == 1.f && values[1] == 3.f && std::isnan(values[2]) && std::isnan(values[3])));
  CHECK(ni.to_vector() == std::vector<int64_t>{1, 2, 0, 3, 1});
  CHECK(nc.to_vector() == std::vector<int64_t>{1, 2, 1, 1});
  CHECK(unique(tensor<bool>({true, false, true})).to_vector() == std::vector<bool>{false, true});

  // 0-d and empty inputs; results not asked for are empty, as in libtorch.
  const auto [sv, si, sc] = unique(full<float>({}, 5.f), true, true, true);
  CHECK((sv.sizes() == Shape{1} && si.dim() == 0 && si.item() == 0 && sc.to_vector() == std::vector<int64_t>{1}));
  const auto [ev, ei, ec] = unique(u, true, false, false);
  check_close(ev, test::golden("bn_unique"), 0, 0, "values without inverse and counts");
  CHECK((ei.sizes() == Shape{0} && ec.sizes() == Shape{0}));
  CHECK(std::get<0>(unique_dim(zeros<float>({0, 3}), 0)).sizes() == Shape{0, 3});
  CHECK(unique(zeros<float>({0})).sizes() == Shape{0});
  CHECK(error_of([] { unique_dim(zeros<float>({3, 0}), 0); }) ==
        "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
  CHECK(error_of([] { unique_consecutive(zeros<float>({3, 0}), false, false, 0); }) ==
        "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
  CHECK(raises_index_error([&] { unique_dim(rows, 2); }));
  CHECK(raises_index_error([] { unique_dim(full<float>({}, 5.f), 0); }));
}

TEST_CASE("meshgrid and cartesian_prod") {
  const auto a = test::golden<float>("bn_a"), b = test::golden<float>("bn_b");
  const auto c = full<float>({}, 2.5f);
  for (const std::string indexing : {"ij", "xy"}) {
    const auto grids = meshgrid({a, b, c}, indexing);
    REQUIRE(grids.size() == 3);
    for (int i = 0; i < 3; ++i)
      check_close(grids[static_cast<std::size_t>(i)], test::golden("bn_mesh_" + indexing + std::to_string(i)), 0, 0,
                  "meshgrid " + indexing);
    CHECK(grids[0].is_alias_of(a));  // views, as in PyTorch
  }
  check_close(cartesian_prod({a, b, tensor<float>({7.f, 8.f})}), test::golden("bn_cart"), 0, 0, "cartesian_prod");
  CHECK(cartesian_prod({a}).is_alias_of(a));

  // Gradients: every element of a meets each of b's 4 (hand-checked).
  const auto x = a.clone().requires_grad_(), y = b.clone().requires_grad_();
  sum(cartesian_prod({x, y})).backward();
  CHECK(x.grad().to_vector() == std::vector<float>(3, 4.f));
  CHECK(y.grad().to_vector() == std::vector<float>(4, 3.f));

  CHECK(error_of([] { meshgrid(std::vector<Tensor<float>>{}); }) == "meshgrid expects a non-empty TensorList");
  CHECK(error_of([&] { meshgrid({a}, "ab"); }) == "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ab");
  CHECK(error_of([] { meshgrid({zeros<float>({1, 2})}); }) ==
        "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of shape [1, 2]");
  CHECK(error_of([&] { cartesian_prod({a, zeros<float>({1, 2})}); }) == "Expect a 1D vector, but got shape [1, 2]");
}

TEST_CASE("block_diag, rot90, take_along_dim, vander, tril_indices, triu_indices and atleast_nd") {
  const auto ka = test::golden<float>("ps_ka"), kb = test::golden<float>("ps_kb");
  check_close(block_diag({ka, tensor<float>({5.f, 6.f}), full<float>({}, 7.f), zeros<float>({0, 3}), kb.select(0, 0)}),
              test::golden("ps_block_diag"), 0, 0, "block_diag of 2-D, 1-D, 0-D and empty blocks");
  CHECK(block_diag(std::vector<Tensor<float>>{}).sizes() == Shape{1, 0});

  const auto ar = arange<float>(24).reshape({2, 3, 4});
  check_close(rot90(ar, 1, {0, 1}), test::golden("ps_rot90_1_01"), 0, 0, "rot90");
  check_close(rot90(ar, 2, {1, 2}), test::golden("ps_rot90_2_12"), 0, 0, "rot90 twice");
  check_close(rot90(ar, -1, {2, 0}), test::golden("ps_rot90_m1_20"), 0, 0, "rot90 backwards");
  check_close(rot90(ar, 7, {0, -1}), test::golden("ps_rot90_7_0m1"), 0, 0, "rot90 seven times, a negative dim");
  const auto same = rot90(ar, 0);
  check_close(same, test::golden("ps_rot90_0_01"), 0, 0, "no turn");
  CHECK(!same.is_alias_of(ar));  // a copy, as in PyTorch

  check_close(take_along_dim(ar, tensor<int64_t>({1, 0, 2, 3, 3, 0}, {2, 3, 1}), 2), test::golden("ps_tad"), 0, 0,
              "take_along_dim");
  check_close(take_along_dim(ar, tensor<int64_t>({2, 0}, {1, 2, 1}), 1), test::golden("ps_tad_bcast"), 0, 0,
              "take_along_dim broadcasts");
  check_close(take_along_dim(ar, tensor<int64_t>({23, 0, 5})), test::golden("ps_tad_flat"), 0, 0,
              "take_along_dim of the flattened tensor");

  const auto xv = test::golden<float>("ps_xv");
  check_close(vander(xv), test::golden("ps_vander"), 0, 0, "vander");
  check_close(vander(xv, 3, true), test::golden("ps_vander_inc3"), 0, 0, "vander, increasing, 3 columns");
  const auto vi = vander(tensor<int32_t>({2, -1, 3}), 5);
  static_assert(std::is_same_v<decltype(vi), const Tensor<int64_t>>, "integer vander gives int64");
  check_close(vi, test::golden("ps_vander_int"), 0, 0, "integer vander");
  CHECK(vander(xv, 0).sizes() == Shape{4, 0});

  for (const auto& [rows, cols, off] : std::vector<std::array<int64_t, 3>>{{3, 4, 1}, {4, 3, -1}, {5, 5, 0}, {3, 3, -5},
                                                                          {0, 3, 0}, {2, 6, 3}}) {
    std::string suffix = std::to_string(rows) + "_" + std::to_string(cols) + "_" + std::to_string(off);
    std::replace(suffix.begin(), suffix.end(), '-', 'm');
    check_close(tril_indices(rows, cols, off), test::golden("ps_tril_" + suffix), 0, 0, "tril_indices " + suffix);
    check_close(triu_indices(rows, cols, off), test::golden("ps_triu_" + suffix), 0, 0, "triu_indices " + suffix);
  }

  const auto v2 = tensor<float>({1.f, 2.f});
  CHECK(atleast_1d(full<float>({}, 1.f)).sizes() == Shape{1});
  CHECK(atleast_2d(v2).sizes() == Shape{1, 2});
  CHECK(atleast_3d(v2).sizes() == Shape{1, 2, 1});
  CHECK(atleast_3d(ka).sizes() == Shape{2, 3, 1});
  CHECK(atleast_3d(full<float>({}, 1.f)).sizes() == Shape{1, 1, 1});
  CHECK(atleast_2d(ka).is_alias_of(ka));

  CHECK(error_of([] { block_diag({ones<float>({2, 2, 2})}); }) ==
        "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 0 has 3 dimensions");
  CHECK(error_of([&] { rot90(ar, 1, {0, 0}); }) == "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0");
  CHECK(error_of([&] { rot90(ar, 1, {0}); }) == "expected total rotation dims == 2, but got dims = 1");
  CHECK(error_of([] { rot90(arange<float>(3)); }) == "expected total dims >= 2, but got total dims = 1");
  CHECK(error_of([&] { take_along_dim(ar, tensor<int64_t>({2, 0}), 1); }) ==
        "torch.take_along_dim(): input and indices should have the same number of dimensions, but got 3 dimensions for "
        "input, and 1 dimensions for indices");
  CHECK(raises_index_error([&] { take_along_dim(ar, tensor<int64_t>({-1}, {1, 1, 1}), 2); }));
  CHECK(error_of([] { vander(ones<float>({1, 3})); }) == "x must be a one-dimensional tensor.");
  CHECK(error_of([&] { vander(xv, -1); }) == "N must be non-negative.");
  CHECK(error_of([] { tril_indices(-1, 3); }) == "row must be non-negative, got -1");
  CHECK(error_of([] { triu_indices(3, -2); }) == "col must be non-negative, got -2");
}

// The pieces of a split as PyTorch's goldens hold them: their sizes, one row
// each, and their elements flattened and joined.
static void check_pieces(const std::vector<Tensor<float>>& pieces, const std::string& name) {
  std::vector<int64_t> sizes;
  std::vector<Tensor<float>> flat;
  for (const auto& p : pieces) {
    sizes.insert(sizes.end(), p.sizes().begin(), p.sizes().end());
    flat.push_back(p.reshape({-1}));
  }
  const auto rank = static_cast<int64_t>(pieces.front().dim());
  check_close(tensor<int64_t>(sizes, {static_cast<int64_t>(pieces.size()), rank}),
              test::golden("js_split_" + name + "_sizes"), 0, 0, name + " sizes");
  check_close(cat(flat), test::golden("js_split_" + name + "_flat"), 0, 0, name + " elements");
}

TEST_CASE("hstack, vstack, dstack, column_stack, tensor_split, hsplit, vsplit, dsplit, broadcast_to and "
          "broadcast_tensors") {
  const auto a = test::golden<float>("js_a"), v = test::golden<float>("js_v"), s = test::golden<float>("js_s"),
             c = test::golden<float>("js_c");
  check_close(hstack({a, a.narrow(1, 0, 1)}), test::golden("js_hstack"), 0, 0, "hstack");
  check_close(hstack({s, v, v.narrow(0, 0, 1)}), test::golden("js_hstack_1d"), 0, 0, "hstack of 0-D and 1-D");
  check_close(vstack({v, a, s.expand({3})}), test::golden("js_vstack"), 0, 0, "vstack");
  check_close(row_stack({v, a, s.expand({3})}), test::golden("js_vstack"), 0, 0, "row_stack");
  check_close(dstack({a, Tensor<float>(a * 2.f)}), test::golden("js_dstack"), 0, 0, "dstack");
  check_close(dstack({v, s.expand({3})}), test::golden("js_dstack_1d"), 0, 0, "dstack of 1-D");
  check_close(column_stack({c, a, s.expand({2})}), test::golden("js_column_stack"), 0, 0, "column_stack");

  const auto x = arange<float>(24).reshape({2, 3, 4});
  check_pieces(tensor_split(x, 3, 2), "sections");
  check_pieces(tensor_split(x, {1, -1, 9}, -1), "indices");
  check_pieces(tensor_split(x, {2, 1}, 1), "backwards");
  check_pieces(hsplit(x, 3), "hsplit");
  check_pieces(vsplit(x, {1}), "vsplit");
  check_pieces(dsplit(x, 2), "dsplit");
  for (const auto& piece : tensor_split(x, 2, 1)) CHECK(piece.is_alias_of(x));  // views, as split's
  CHECK(hsplit(arange<float>(6), 3).size() == 3);  // 1-D: along the first dim

  const auto wide = broadcast_to(c.reshape({2, 1}), {3, -1, 4});
  check_close(wide, test::golden("js_broadcast_to"), 0, 0, "broadcast_to");
  CHECK(wide.is_alias_of(c));
  const auto both = broadcast_tensors({a, ones<float>({4, 1, 1})});
  CHECK(both[0].sizes() == Shape{4, 2, 3});
  CHECK(both[1].sizes() == Shape{4, 2, 3});
  CHECK(both[0].is_alias_of(a));
  CHECK(broadcast_shapes({{2, 1}, {3}, {}}) == Shape{2, 3});

  CHECK(error_of([] { hstack(std::vector<Tensor<float>>{}); }) == "hstack expects a non-empty TensorList");
  CHECK(error_of([] { column_stack(std::vector<Tensor<float>>{}); }) == "column_stack expects a non-empty TensorList");
  CHECK(error_of([&] { vstack({s, v}); }) ==
        "Sizes of tensors must match except in dimension 0. Expected size 1 but got size 3 for tensor number 1 in the "
        "list.");
  CHECK(error_of([&] { tensor_split(x, 0); }) == "number of sections must be larger than 0, got 0");
  CHECK(error_of([&] { tensor_split(s, 2); }) ==
        "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  CHECK(error_of([&] { hsplit(a, 2); }) ==
        "torch.hsplit attempted to split along dimension 1, but the size of the dimension 3 is not divisible by the "
        "split_size 2!");
  CHECK(error_of([&] { hsplit(a, 0); }) ==
        "torch.hsplit attempted to split along dimension 1, but the size of the dimension 3 is not divisible by the "
        "split_size 0!");
  CHECK(error_of([&] { hsplit(s, 1); }) ==
        "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 dimensions!");
  CHECK(error_of([&] { vsplit(v, {1}); }) ==
        "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!");
  CHECK(error_of([&] { dsplit(a, 1); }) ==
        "torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with 2 dimensions!");
  CHECK(error_of([&] { broadcast_to(a, {2, 2}); }) ==
        "The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 1.  Target "
        "sizes: [2, 2].  Tensor sizes: [2, 3]");
  CHECK(error_of([&] { broadcast_tensors({a, ones<float>({4, 2})}); }) ==
        "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1");
  CHECK(error_of([] { broadcast_shapes({{2, 1}, {3, 4}}); }) ==
        "Shape mismatch: objects cannot be broadcast to a single shape");
}

TEST_CASE("repeat_interleave, fliplr, flipud, diag_embed, diagflat, argwhere and combinations") {
  const auto a = test::golden<float>("js_a"), v = test::golden<float>("js_v"), c = test::golden<float>("js_c");
  check_close(repeat_interleave(a, 2, 1), test::golden("js_ri_int"), 0, 0, "repeat_interleave along a dim");
  check_close(repeat_interleave(a, 3), test::golden("js_ri_flat"), 0, 0, "repeat_interleave flattened");
  check_close(repeat_interleave(a, tensor<int64_t>({0, 2, 1}), -1), test::golden("js_ri_tensor"), 0, 0,
              "repeat_interleave, one count per slice");
  check_close(repeat_interleave(a, tensor<int64_t>({2}), 0), test::golden("js_ri_one"), 0, 0,
              "repeat_interleave, one count for all");
  check_close(repeat_interleave(tensor<int64_t>({3, 0, 1, 2})), test::golden("js_ri_indices"), 0, 0,
              "repeat_interleave of counts");
  CHECK(repeat_interleave(a, tensor<int64_t>({2, 1}), 0, 3).sizes() == Shape{3, 3});
  CHECK(repeat_interleave(full<float>({}, 1.f), 3).sizes() == Shape{3});
  CHECK(repeat_interleave(tensor<int64_t>(std::vector<int64_t>{})).numel() == 0);

  const auto x = arange<float>(24).reshape({2, 3, 4});
  check_close(fliplr(x), test::golden("js_fliplr"), 0, 0, "fliplr");
  check_close(flipud(x), test::golden("js_flipud"), 0, 0, "flipud");

  check_close(diag_embed(a), test::golden("js_diag_embed"), 0, 0, "diag_embed");
  check_close(diag_embed(a, -2, 0, 2), test::golden("js_diag_embed_off"), 0, 0, "diag_embed, offset -2, dims 0 and 2");
  check_close(diag_embed(v, 1, 1, 0), test::golden("js_diag_embed_pos"), 0, 0, "diag_embed, dims swapped");
  check_close(diagflat(a, 2), test::golden("js_diagflat"), 0, 0, "diagflat");
  check_close(diagflat(v, -1), test::golden("js_diagflat_neg"), 0, 0, "diagflat below the diagonal");
  CHECK(diagflat(full<float>({}, 3.f)).sizes() == Shape{1, 1});

  check_close(argwhere(test::golden<float>("js_z")), test::golden("js_argwhere"), 0, 0, "argwhere (NaN is nonzero)");
  CHECK(argwhere(full<float>({}, 2.f)).sizes() == Shape{1, 0});
  CHECK(argwhere(full<float>({}, 0.f)).sizes() == Shape{0, 0});

  check_close(combinations(v), test::golden("js_comb2"), 0, 0, "combinations");
  check_close(combinations(cat({v, c}), 3), test::golden("js_comb3"), 0, 0, "combinations of 3");
  check_close(combinations(v, 2, true), test::golden("js_comb2_rep"), 0, 0, "combinations with replacement");
  check_close(combinations(c, 3, true), test::golden("js_comb3_rep"), 0, 0, "3 of 2 with replacement");
  check_close(combinations(v, 1), test::golden("js_comb1"), 0, 0, "combinations of 1");
  CHECK(combinations(v, 0).sizes() == Shape{0});
  CHECK(combinations(v, 4).sizes() == Shape{0, 4});
  CHECK(combinations(empty<float>({0}), 2, true).sizes() == Shape{0, 2});

  CHECK(error_of([&] { repeat_interleave(a, -1); }) == "repeats can not be negative");
  CHECK(error_of([&] { repeat_interleave(a, tensor<int64_t>({1, -2}), 0); }) == "repeats can not be negative");
  CHECK(error_of([&] { repeat_interleave(a, tensor<int64_t>({1, 2, 3}), 0); }) ==
        "repeats must have the same size as input along dim");
  CHECK(error_of([&] { repeat_interleave(a, tensor<int64_t>({2}, {1, 1})); }) == "repeats must be 0-dim or 1-dim tensor");
  CHECK(error_of([] { repeat_interleave(tensor<int64_t>({1, 0, 3}, {1, 3})); }) ==
        "repeat_interleave only accept 1D vector as repeat");
  CHECK(error_of([&] { repeat_interleave(a, tensor<int64_t>({2, 1}), 0, 4); }) ==
        "allocated size does not match required size");
  CHECK(raises_index_error([] { repeat_interleave(full<float>({}, 1.f), 3, 0); }));
  CHECK(raises_index_error([&] { repeat_interleave(a, 2, 2); }));
  CHECK(error_of([] { fliplr(arange<float>(3)); }) == "Input must be >= 2-d.");
  CHECK(error_of([] { flipud(full<float>({}, 1.f)); }) == "Input must be >= 1-d.");
  CHECK(error_of([&] { diag_embed(a, 0, -1, 2); }) == "diagonal dimensions cannot be identical -1, 2");
  CHECK(raises_index_error([&] { diag_embed(a, 0, 0, 3); }));
  CHECK(raises_index_error([] { diag_embed(full<float>({}, 1.f)); }));
  CHECK(error_of([&] { combinations(a); }) == "Expect a 1D vector, but got shape [2, 3]");
  CHECK(error_of([&] { combinations(v, -1); }) == "Expect a non-negative number, but got -1");
}

TEST_CASE("select_scatter, slice_scatter and diagonal_scatter") {
  const auto a = test::golden<float>("js_a");
  const auto x = arange<float>(24).reshape({2, 3, 4});
  check_close(select_scatter(x, a * 10.f, 2, -1), test::golden("js_select_scatter"), 0, 0, "select_scatter");
  check_close(slice_scatter(x, ones<float>({2, 3, 2}), 2, 0, std::nullopt, 2), test::golden("js_slice_scatter"), 0, 0,
              "slice_scatter with a step");
  check_close(slice_scatter(x, ones<float>({2, 1, 4}), 1, -1, 3), test::golden("js_slice_scatter_neg"), 0, 0,
              "slice_scatter from a negative start");
  check_close(slice_scatter(x, zeros<float>({1, 3, 4}), 0, 1, 2), test::golden("js_slice_scatter_dim0"), 0, 0,
              "slice_scatter along dim 0");
  check_close(diagonal_scatter(x, ones<float>({4, 2}), 1, 0, 1), test::golden("js_diagonal_scatter"), 0, 0,
              "diagonal_scatter");
  check_close(diagonal_scatter(x, -ones<float>({2, 3}), -1, 2, 1), test::golden("js_diagonal_scatter_neg"), 0, 0,
              "diagonal_scatter below the diagonal");
  const auto out = select_scatter(x, full<float>({2, 4}, 7.f), 1, 0);
  CHECK(!out.is_alias_of(x));
  CHECK(out(0, 0, 0) == 7.f);
  CHECK(x(0, 0, 0) == 0.f);  // x itself is not written

  CHECK(error_of([&] { select_scatter(x, ones<float>({2}), 0, 1); }) ==
        "expected src to have a size equal to the slice of self. src size = [2], slice size = [3, 4]");
  CHECK(error_of([&] { slice_scatter(x, ones<float>({2, 3, 4}), 2, 0, 4, 2); }) ==
        "expected src to have a size equal to the slice of self. src size = [2, 3, 4], slice size = [2, 3, 2]");
  CHECK(error_of([&] { slice_scatter(x, ones<float>({2, 3, 2}), 2, 0, 4, 0); }) == "slice step must be positive");
  CHECK(error_of([&] { diagonal_scatter(x, ones<float>({4, 2}), 0, 1, 1); }) ==
        "diagonal dimensions cannot be identical 1, 1");
  CHECK(raises_index_error([&] { select_scatter(x, ones<float>({3, 4}), 0, 5); }));
}

TEST_CASE("index_add, index_copy, index_fill, masked_scatter, isin and msort") {
  const auto x = test::golden<float>("iw_x"), s2 = test::golden<float>("iw_s2"), s1 = test::golden<float>("iw_s1");
  const auto i = tensor<int64_t>({2, 0});
  check_close(index_add(x, 0, i, s2), test::golden("iw_index_add"), 0, 0, "index_add");
  // PyTorch's kernel multiplies and adds in one rounding (a fused multiply-add).
  check_close(index_add(x, 0, i, s2, -2.5), test::golden("iw_index_add_alpha"), 1e-6, 1e-6, "index_add with alpha");
  check_close(index_add(x, 1, tensor<int64_t>({3, 3}), s1), test::golden("iw_index_add_repeat"), 1e-6, 0,
              "index_add with a repeated index");
  check_close(index_add(x.t(), 1, i, s2.slice(1, 0, 1).t()), test::golden("iw_index_add_bcast").t(), 0, 0,
              "index_add of a transposed self, the source's slices broadcast");
  check_close(index_add(arange<int64_t>(12).view({3, 4}), 1, tensor<int64_t>({0, 2}),
                        tensor<int64_t>({1, 2, 3, 4, 5, 6}).view({3, 2}), 3),
              test::golden("iw_index_add_int"), 0, 0, "index_add of integers");
  check_close(index_copy(x, 0, i, s2), test::golden("iw_index_copy"), 0, 0, "index_copy");
  check_close(index_copy(x, -1, tensor<int64_t>({1, 0}), s1), test::golden("iw_index_copy_dim1"), 0, 0,
              "index_copy along the last dim");
  check_close(index_fill(x, 1, tensor<int64_t>({-1, 1}), -7.5), test::golden("iw_index_fill"), 0, 0,
              "index_fill with a negative index");
  check_close(index_fill(x, 0, full<int64_t>({}, 1), 2.0), test::golden("iw_index_fill_0d"), 0, 0,
              "index_fill with a 0-d index");
  const auto m = test::golden<bool>("iw_mask");
  const auto src = arange<float>(10);
  check_close(masked_scatter(x, m, src), test::golden("iw_masked_scatter"), 0, 0, "masked_scatter");
  check_close(masked_scatter(x, m.select(0, 1), src), test::golden("iw_masked_scatter_bcast"), 0, 0,
              "masked_scatter with the mask broadcast");
  check_close(masked_scatter(x.select(0, 0), m, src), test::golden("iw_masked_scatter_row"), 0, 0,
              "masked_scatter with self broadcast");

  // In place: the same values, written into self.
  Tensor<float> y = x.clone();
  CHECK(&index_add_(y, 0, i, s2) == &y);
  check_close(y, test::golden("iw_index_add"), 0, 0, "index_add_");
  y = x.clone();
  index_copy_(y, -1, tensor<int64_t>({1, 0}), s1);
  check_close(y, test::golden("iw_index_copy_dim1"), 0, 0, "index_copy_");
  y = x.clone();
  index_fill_(y, 1, tensor<int64_t>({-1, 1}), -7.5);
  check_close(y, test::golden("iw_index_fill"), 0, 0, "index_fill_");
  y = x.clone();
  masked_scatter_(y, m.select(0, 1), src);
  check_close(y, test::golden("iw_masked_scatter_bcast"), 0, 0, "masked_scatter_");
  // 0-d targets (hand-checked: one slice, the source's value).
  CHECK(index_add(zeros<float>({}), 0, tensor<int64_t>({0}), full<float>({}, 2.f)).item() == 2.f);
  CHECK(index_copy(zeros<float>({3}), 0, full<int64_t>({}, 1), full<float>({}, 4.f)).to_vector() ==
        std::vector<float>{0, 4, 0});

  // PyTorch's errors.
  CHECK(raises_index_error([&] { index_add(x, 0, tensor<int64_t>({3, 0}), s2); }));
  CHECK(error_of([&] { index_add(x, 0, tensor<int64_t>({-1, 0}), s2); }) == "index out of range in self");
  CHECK(error_of([&] { index_add(x, 0, tensor<int64_t>({1, 0}).view({1, 2}), s2); }) ==
        "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: Long and size: [1, 2]");
  CHECK(error_of([&] { index_add(x, 0, tensor<int64_t>({1, 0, 2}), s2); }) ==
        "index_add_(): Number of indices (3) should be equal to source.size(dim): (2), for dim: 0");
  CHECK(error_of([&] { index_copy(x, 0, tensor<int64_t>({-1, 0}), s2); }) ==
        "index_copy_(): index -1 is out of bounds for dimension 0 with size 3");
  CHECK(error_of([&] { index_copy(x, 0, i, ones<float>({2, 3})); }) ==
        "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: 4 at "
        "dimension 0 and source slice shape: 3 at dimension 0.");
  CHECK(error_of([&] { index_copy(x, 0, i, ones<float>({2, 4, 1})); }) ==
        "index_copy_(): When source and destination are not scalars, their dimensionality must match. Source "
        "dimensionality (3), destination dimensionality (2)");
  CHECK(error_of([&] { index_copy(x, 0, tensor<int64_t>({1, 0, 2}), s2); }) ==
        "index_copy_(): Number of indices (3) should be equal to source.size(dim) (2)");
  CHECK(error_of([&] { index_fill(x, 1, tensor<int64_t>({-5}), 1.0); }) ==
        "index -5 is out of bounds for dimension 1 with size 4");
  CHECK(error_of([&] { index_fill(x, 1, tensor<int64_t>({1}).view({1, 1}), 1.0); }) ==
        "Index has to be a vector/scalar");
  CHECK(error_of([&] { masked_scatter(x, m, arange<float>(5)); }) ==
        "Number of elements of source < number of ones in mask");
  y = x.clone();
  CHECK(error_of([&] { index_fill_(y, 1, tensor<int64_t>({4}), 1.0); }) ==
        "index 4 is out of bounds for dimension 1 with size 4");
  check_close(y, x, 0, 0, "a refused index_fill_ writes nothing");

  const auto e = tensor<int64_t>({1, 2, 5, 3, 4, 2}).view({2, 3});
  const auto t = tensor<float>({2.f, NAN, 5.f, 2.f});
  check_close(isin(e, t), test::golden("iw_isin"), 0, 0, "isin");
  check_close(isin(e, t, false, true), test::golden("iw_isin_invert"), 0, 0, "isin, inverted");
  check_close(isin(tensor<float>({1.f, NAN, -0.f, 3.f}), tensor<float>({NAN, 0.f, 3.f})),
              test::golden("iw_isin_nan"), 0, 0, "isin: NaN is never found, -0 is 0");
  CHECK(isin(e, 2.5).to_vector() == std::vector<bool>(6, false));  // compared in float
  CHECK(isin(e, int64_t{2}, false, true).to_vector() == std::vector<bool>{true, false, true, true, true, false});
  CHECK(isin(2, tensor<int>({2, 3})).item());
  check_close(msort(x), test::golden("iw_msort"), 0, 0, "msort");
}

TEST_CASE("scatter_reduce reduces src into self with PyTorch's values and gradients") {
  using V = std::vector<Tensor<double>>;
  const auto index1 = test::golden<int64_t>("sr_index1");
  const auto index0 = test::golden<int64_t>("sr_index0").narrow(1, 0, 4);
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (const bool with_self : {true, false}) {
      const std::string tag = std::string(reduce) + (with_self ? "_self" : "_noself");
      if (!(std::string(reduce) == "prod" && !with_self))
        test::check_forward_backward<double>("sr_d1_" + tag, 2, [&](const V& v) {
          return scatter_reduce(v[0], 1, index1, v[1], reduce, with_self);
        }, 1e-12);
      test::check_forward_backward<double>("sr_d0_" + tag, 2, [&](const V& v) {
        return scatter_reduce(v[0], 0, index0, v[1], reduce, with_self);
      }, 1e-12);
    }
  }
  // A src wider than index: its unread column takes no part (and gets a zero gradient).
  const auto self = test::golden<double>("sr_self"), src = test::golden<double>("sr_src");
  check_close(scatter_reduce(self, 1, index1, src, "amin"), test::golden("sr_wide_amin"), 0, 0, "wide src");
  auto s = src.clone().requires_grad_();
  sum(scatter_reduce(self, 1, index1, s, "sum")).backward();
  CHECK(equal(s.grad().select(1, 4), zeros<double>({3})));
  CHECK(equal(s.grad().narrow(1, 0, 4), ones<double>({3, 4})));
  // Integers: the mean rounds down, as PyTorch's.
  const auto si = tensor<int64_t>({1, -2, 3, 4, 5, 6, -7, 8}).reshape({2, 4});
  const auto srci = tensor<int64_t>({-5, 6, 7, 8, 9, 10, -11, 12, 13, -14}).reshape({2, 5});
  const auto idxi = tensor<int64_t>({0, 0, 1, 1, 3, 3, 3, 2}).reshape({2, 4});
  CHECK(equal(scatter_reduce(si, 1, idxi, srci, "mean"), test::golden<int64_t>("sr_int_mean_self")));
  CHECK(equal(scatter_reduce(si, 1, idxi, srci, "mean", false), test::golden<int64_t>("sr_int_mean_noself")));
  auto inplace = si.clone();
  scatter_reduce_(inplace, 1, idxi, srci, "prod", false);
  CHECK(equal(inplace, test::golden<int64_t>("sr_int_prod")));
  CHECK(error_of([&] { (void)scatter_reduce(si, 1, idxi, srci, "max"); }) ==
        "reduce argument must be either sum, prod, mean, amax or amin.");
  CHECK(error_of([&] { (void)scatter_reduce(si, 1, Tensor<int64_t>(idxi + int64_t{5}), srci, "sum"); }) ==
        "index 5 is out of bounds for dimension 1 with size 4");
  // prod's second derivative is refused where two zeros of src meet, as in PyTorch.
  auto zs = tensor<double>({0, 0, 2}).requires_grad_();
  const auto prod_zeros = scatter_reduce(ones<double>({2}), 0, tensor<int64_t>({0, 0, 1}), zs, "prod");
  CHECK(error_of([&] { (void)autograd::grad({sum(prod_zeros)}, {zs}, {}, false, /*create_graph=*/true); }) ==
        "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are scattered to the same "
        "position. Please use reduce='sum' or 'mean' instead.");
}

TEST_CASE("indexing with several index tensors: x[i, :, j] and x[i, :, j] = v") {
  using V = std::vector<Tensor<double>>;
  const auto i = test::golden<int64_t>("ai_i"), j = test::golden<int64_t>("ai_j"), k = test::golden<int64_t>("ai_k");
  const std::vector<std::pair<std::string, std::function<Tensor<double>(const V&)>>> cases = {
      {"first", [&](const V& v) { return index(v[0], {i}); }},
      {"adjacent", [&](const V& v) { return index(v[0], {std::nullopt, j, k}); }},  // the broadcast dims stay in place
      {"apart", [&](const V& v) { return index(v[0], {k, std::nullopt, j}); }},     // ... or come first
      {"all", [&](const V& v) { return index(v[0], {k, j, k}); }},
      {"put_adjacent", [&](const V& v) { return index_put(v[0], {std::nullopt, j, k}, v[1]); }},
      {"put_apart", [&](const V& v) { return index_put(v[0], {k, std::nullopt, j}, v[1]); }},
      {"put_accumulate", [&](const V& v) { return index_put(v[0], {test::golden<int64_t>("ai_dup")}, v[1], true); }},
  };
  for (const auto& [name, f] : cases)
    test::check_forward_backward<double>("ai_" + name, name.rfind("put", 0) == 0 ? 2 : 1, f, 1e-12);

  // In place, without autograd: only the indexed elements are written, into a view too.
  auto x = zeros<float>({3, 4});
  auto column = x.t();
  index_put_(column, {tensor<int64_t>({1, 1, 3})}, full<float>({3}, 2.f), /*accumulate=*/true);
  CHECK(equal(x.select(1, 1), full<float>({3}, 4.f)));
  CHECK(equal(x.select(1, 3), full<float>({3}, 2.f)));
  CHECK(equal(sum(x), full<float>({}, 18.f)));
  index_put_(x, {tensor<int64_t>({0, 2}), tensor<int64_t>({-1, 0})}, tensor<float>({7.f, 8.f}));
  CHECK(x(0, 3) == 7.f);
  CHECK(x(2, 0) == 8.f);
  // Two indexed dims of a transposed view cannot merge into one: the whole is written back through the view.
  index_put_(column, {tensor<int64_t>({0}), tensor<int64_t>({1})}, full<float>({}, -1.f));
  CHECK(x(1, 0) == -1.f);
  CHECK(equal(sum(x), full<float>({}, 30.f)));  // 18 - 2 + 7 + 8 - 1: the rest unchanged
  // x[i] = x[j]: the values are read before anything is written.
  auto y = arange<float>(0.f, 4.f);
  index_put_(y, {tensor<int64_t>({1, 2, 3})}, y.narrow(0, 0, 3));
  CHECK(equal(y, tensor<float>({0.f, 0.f, 1.f, 2.f})));

  const auto m = zeros<float>({3, 4});
  CHECK(error_of([&] { (void)index(m, {i, i, i}); }) == "too many indices for tensor of dimension 2 (got 3)");
  CHECK(error_of([&] { (void)index(m, {tensor<int64_t>({3})}); }) == "index 3 is out of bounds for dimension 0 with size 3");
  CHECK(error_of([&] { (void)index(m, {tensor<int64_t>({0, 1}), tensor<int64_t>({0, 1, 2})}); }) ==
        "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]");
  CHECK(error_of([&] { (void)index_put(m, {tensor<int64_t>({0, 1})}, ones<float>({3})); }) ==
        "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2, 4]");
  CHECK(index(m, {std::nullopt}).is_alias_of(m));  // all whole: x itself, as x[:]
}

TEST_CASE("indexing with bool masks: x[mask] and x[mask] = v") {
  using V = std::vector<Tensor<double>>;
  const auto m34 = test::golden<bool>("ai_m34"), m45 = test::golden<bool>("ai_m45");
  const auto m3 = test::golden<bool>("ai_m3"), m4 = test::golden<bool>("ai_m4");
  const auto k = test::golden<int64_t>("ai_k"), j2 = test::golden<int64_t>("ai_j2");
  const std::vector<std::pair<std::string, std::function<Tensor<double>(const V&)>>> cases = {
      {"mask_first", [&](const V& v) { return index(v[0], {m34}); }},
      {"mask_after_whole", [&](const V& v) { return index(v[0], {std::nullopt, m45}); }},
      {"mask_with_index", [&](const V& v) { return index(v[0], {k, m4}); }},
      {"mask_apart", [&](const V& v) { return index(v[0], {m3, std::nullopt, j2}); }},
      {"put_mask", [&](const V& v) { return index_put(v[0], {m34}, v[1]); }},
      {"put_mask_accumulate", [&](const V& v) { return index_put(v[0], {m34}, v[1], true); }},
  };
  for (const auto& [name, f] : cases)
    test::check_forward_backward<double>("ai_" + name, name.rfind("put", 0) == 0 ? 2 : 1, f, 1e-12);

  // A mask is its true elements' coordinates: the same as indexing with nonzero's columns, also when
  // written as an expression; x[x > 0] = 0 in place, and an all-false mask selects nothing.
  auto x = tensor<float>({1.f, -2.f, 3.f, -4.f, 5.f, -6.f}).reshape({2, 3});
  const auto where_negative = nonzero(x < 0.f);
  CHECK(equal(index(x, {x < 0.f}), index(x, {where_negative.select(1, 0), where_negative.select(1, 1)})));
  CHECK(equal(index(x, {x < 0.f}), tensor<float>({-2.f, -4.f, -6.f})));
  index_put_(x, {x > 0.f}, 0);
  CHECK(equal(x, tensor<float>({0.f, -2.f, 0.f, -4.f, 0.f, -6.f}).reshape({2, 3})));
  index_put_(x, {std::nullopt, tensor<bool>({true, false, true})}, 1.5f, /*accumulate=*/true);
  CHECK(equal(x, tensor<float>({1.5f, -2.f, 1.5f, -2.5f, 0.f, -4.5f}).reshape({2, 3})));
  CHECK(index(x, {zeros<bool>({2, 3})}).sizes() == Shape{0});

  // PyTorch's messages: the mask's dims are checked against those it covers.
  const auto t = zeros<float>({2, 3, 4});
  CHECK(index(t, {std::nullopt, zeros<bool>({3}), tensor<int64_t>({1})}).sizes() == Shape{2, 0});
  CHECK(error_of([&] { (void)index(t, {tensor<bool>({true, false, true})}); }) ==
        "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [2, 3, 4] at index 0");
  CHECK(error_of([&] { (void)index(t, {tensor<int64_t>({0}), ones<bool>({1, 4})}); }) ==
        "The shape of the mask [1, 4] at index 0 does not match the shape of the indexed tensor [2, 3, 4] at index 1");
  CHECK(error_of([&] { (void)index(t, {ones<bool>({2, 3, 4, 5})}); }) ==
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  CHECK(error_of([&] { (void)index_put(t, {ones<bool>({2, 3})}, zeros<float>({3, 4})); }) ==
        "shape mismatch: value tensor of shape [3, 4] cannot be broadcast to indexing result of shape [6, 4]");
  CHECK(error_of([&] { (void)index(t, {ones<bool>({})}); }).rfind("a 0-dim bool mask cannot index", 0) == 0);
}
