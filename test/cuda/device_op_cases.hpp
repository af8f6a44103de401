// Operations on cuda:0 against the CPU: index_select, integer indexing,
// gather, scatter (repeated indices included), masks, nonzero, one_hot,
// flip, roll, cumsum, cumprod, sort, argsort and topk (ties and NaN),
// convolutions and pooling, and gradients through them and through an
// embedding. Shared by test_cuda (the emulated device build, on every test
// run) and gpu_device_ops.cu (a GPU, by hand).
#pragma once
#include <doctest/doctest.h>

#include <tessera.hpp>
#include <nn/nn.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace {
// Evaluated on cuda:0 and copied back: the CPU's values, NaN where NaN.
template <class T>
bool same_values(const tsr::Tensor<T>& device_result, const tsr::Tensor<T>& cpu_result) {
  if (device_result.device() != tsr::Device(tsr::cuda(0)) || device_result.sizes() != cpu_result.sizes()) return false;
  const std::vector<T> a = device_result.to_vector(), b = cpu_result.to_vector();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (a[i] != a[i] && b[i] != b[i]) continue;
    }
    if (a[i] != b[i]) return false;
  }
  return true;
}
}  // namespace

TEST_CASE("device tensors: indexing (index_select, gather, scatter, masks, flip, roll) as on the CPU") {
  using namespace tsr;
  const Device dev = tsr::cuda(0);
  const Tensor<float> x = Tensor<float>(sin(arange<float>(0.f, 60.f)) * 10.f).view({3, 4, 5});
  const Tensor<float> dx = x.to(dev);
  const Tensor<int64_t> rows = tensor<int64_t>({2, 0, 2, 1});  // a repeat
  for (int64_t dim = 0; dim < 3; ++dim) {
    CAPTURE(dim);
    CHECK(same_values(index_select(dx, dim, rows.to(dev)), index_select(x, dim, rows)));
    CHECK(same_values(index_select(dx.transpose(0, 2), dim, rows.to(dev)), index_select(x.transpose(0, 2), dim, rows)));
    CHECK(same_values(flip(dx, {dim}), flip(x, {dim})));
    CHECK(same_values(roll(dx, 2, dim), roll(x, 2, dim)));
  }
  const Tensor<int64_t> negative = tensor<int64_t>({-1, 0, -4}).view({3, 1});
  CHECK(same_values(index(dx, 1, negative.to(dev)), index(x, 1, negative)));
  // gather from a transposed x; scatter, scatter of a value, and
  // scatter_add with repeated indices (sums in index order, as on the CPU).
  const Tensor<int64_t> where_to = Tensor<int64_t>(remainder(arange<int64_t>(0, 24) * 7, int64_t(4))).view({4, 3, 2});
  const Tensor<int64_t> picks = remainder(where_to, int64_t(3));
  CHECK(same_values(gather(dx.transpose(0, 1), 1, picks.to(dev)), gather(x.transpose(0, 1), 1, picks)));
  const Tensor<float> src = Tensor<float>(cos(arange<float>(0.f, 24.f)) * 0.1f).view({4, 3, 2});
  for (int64_t dim = 0; dim < 3; ++dim) {
    CAPTURE(dim);
    const Tensor<int64_t> idx = remainder(where_to.narrow(0, 0, 3), x.size(dim));
    Tensor<float> a = x.clone(), da = dx.clone();
    CHECK(same_values(scatter_add_(da, dim, idx.to(dev), src.to(dev)), scatter_add_(a, dim, idx, src)));
    CHECK(same_values(scatter_(da, dim, idx.to(dev), src.to(dev)), scatter_(a, dim, idx, src)));
    CHECK(same_values(scatter_(da, dim, idx.to(dev), 7.f), scatter_(a, dim, idx, 7.f)));
    CHECK(same_values(scatter_add(dx, dim, idx.to(dev), src.to(dev)), scatter_add(x, dim, idx, src)));
  }
  // Masks, nonzero and one_hot: the host finds the positions.
  const Tensor<bool> mask = x > 2.f;
  CHECK(same_values(masked_select(dx, mask.to(dev)), masked_select(x, mask)));
  CHECK(same_values(masked_select(dx, dx.select(0, 1) < 0.f), masked_select(x, x.select(0, 1) < 0.f)));  // broadcast
  CHECK(same_values(masked_fill(dx, mask.to(dev), -1.f), masked_fill(x, mask, -1.f)));
  const Tensor<float> source = x * 2.f;  // as many elements as the mask
  CHECK(same_values(masked_scatter(dx, mask.to(dev), source.to(dev)), masked_scatter(x, mask, source)));
  CHECK_THROWS_WITH_AS(masked_scatter(dx, mask, source.to(dev)), doctest::Contains("Expected all tensors to be on the same device"), Error);
  CHECK(same_values(nonzero(dx > 2.f), nonzero(x > 2.f)));
  CHECK(same_values(where(dx > 2.f)[2], where(x > 2.f)[2]));
  CHECK(same_values(one_hot(rows.to(dev), 5), one_hot(rows, 5)));
  // A bad index: PyTorch's error, and nothing written.
  Tensor<float> before = dx.clone();
  CHECK_THROWS_WITH_AS(scatter_(before, 1, tensor<int64_t>({0, 4}, {1, 1, 2}).to(dev), 1.f),
                       "index 4 is out of bounds for dimension 1 with size 4", IndexError);
  CHECK(same_values(before, x));
  CHECK_THROWS_WITH_AS(index_select(dx, 0, tensor<int64_t>({3}).to(dev)), "index out of range in self", IndexError);
  CHECK_THROWS_WITH_AS(gather(dx, 0, picks), doctest::Contains("Expected all tensors to be on the same device"), Error);
}

TEST_CASE("device tensors: gradients through indexing, and an embedding, on the device") {
  using namespace tsr;
  const Device dev = tsr::cuda(0);
  const Tensor<float> w0 = Tensor<float>(cos(arange<float>(0.f, 20.f))).view({5, 4});
  const Tensor<int64_t> ids = tensor<int64_t>({1, 0, 4, 4, 4, 0}, {2, 3});
  // The loss of one use of w, on the CPU and on the device: the same value
  // and the same gradient, made on the device.
  const auto check_both = [&](const auto& loss_of) {
    Tensor<float> cw = w0.clone().requires_grad_();
    Tensor<float> gw = w0.to(dev).requires_grad_();
    const Tensor<float> cl = loss_of(cw, kCPU), gl = loss_of(gw, dev);
    CHECK(allclose(gl.to(kCPU), cl, 1e-6, 1e-6));
    cl.backward();
    gl.backward();
    REQUIRE(gw.grad().defined());
    CHECK(gw.grad().device() == dev);
    CHECK(allclose(gw.grad().to(kCPU), cw.grad(), 1e-6, 1e-6));
  };
  const Tensor<float> scale = arange<float>(1.f, 25.f).view({2, 3, 4});
  check_both([&](const Tensor<float>& w, Device d) {
    return sum(nn::functional::embedding(ids.to(d), w, 0) * scale.to(d));  // repeats add up; padding row 0 gets none
  });
  check_both([&](const Tensor<float>& w, Device d) {
    return sum(gather(w, 1, tensor<int64_t>({3, 3, 0, 1, 2, 2}, {3, 2}).to(d)) * arange<float>(1.f, 7.f).view({3, 2}).to(d));
  });
  check_both([&](const Tensor<float>& w, Device) { return sum(square(masked_select(w, w.detach() > 0.f))); });
  check_both([&](const Tensor<float>& w, Device d) { return sum(flip(w, {0}) * scale.view({6, 4}).narrow(0, 0, 5).to(d)); });
  check_both([&](const Tensor<float>& w, Device d) {
    return sum(std::get<0>(topk(w, 2, 1)) * arange<float>(1.f, 3.f).to(d));
  });
  check_both([&](const Tensor<float>& w, Device d) { return sum(cumsum(w, 0) * scale.view({6, 4}).narrow(0, 1, 5).to(d)); });
  check_both([&](const Tensor<float>& w, Device d) { return sum(cumprod(w, 1) * scale.view({6, 4}).narrow(0, 0, 5).to(d)); });
}

TEST_CASE("device tensors: cumsum, cumprod, sort, argsort and topk as on the CPU") {
  using namespace tsr;
  const Device dev = tsr::cuda(0);
  // Ties and NaN: sorted as on the CPU (stable; NaN greatest).
  Tensor<float> x = Tensor<float>(remainder(arange<float>(0.f, 60.f) * 7.f, 11.f) - 5.f).view({3, 4, 5});
  x.select(1, 2).select(1, 3).fill_(std::numeric_limits<float>::quiet_NaN());
  const Tensor<float> dx = x.to(dev);
  const Tensor<int64_t> n = Tensor<int64_t>(remainder(arange<int64_t>(0, 60) * 5, int64_t(7)) - 3).view({3, 4, 5});
  const Tensor<int64_t> dn = n.to(dev);
  for (int64_t dim = -3; dim < 3; ++dim) {
    CAPTURE(dim);
    CHECK(same_values(cumsum(dx, dim), cumsum(x, dim)));
    CHECK(same_values(cumsum(dn, dim), cumsum(n, dim)));
    CHECK(same_values(cumprod(dx.transpose(0, 2) * 0.5f, dim), cumprod(x.transpose(0, 2) * 0.5f, dim)));
    CHECK(same_values(cumprod(dn, dim), cumprod(n, dim)));
    for (const bool descending : {false, true}) {
      const auto [v, i] = sort(x, dim, descending);
      const auto [dv, di] = sort(dx, dim, descending);
      CHECK(same_values(dv, v));
      CHECK(same_values(di, i));
      CHECK(same_values(argsort(dn.transpose(0, 1), dim, descending), argsort(n.transpose(0, 1), dim, descending)));
      const auto [tv, ti] = topk(x, 2, dim, descending);
      const auto [dtv, dti] = topk(dx, 2, dim, descending);
      CHECK(same_values(dtv, tv));
      CHECK(same_values(dti, ti));
    }
  }
  const auto [sv, si] = sort(dx.select(0, 0).select(0, 0).select(0, 0));  // 0-d
  CHECK(same_values(sv, x.select(0, 0).select(0, 0).select(0, 0)));
  CHECK(si.dim() == 0);
  CHECK(same_values(std::get<1>(topk(zeros<float>({0, 3}, dev), 0)), std::get<1>(topk(zeros<float>({0, 3}), 0))));
}

namespace {
// f(inputs) on the CPU and on cuda:0, with inputs that require grad: the
// same values within float rounding (exactly, with `exact`), and the same
// gradients of a weighted sum of the result, made on the device. Those
// gradients are sums over the batch and positions that the two sides add in
// different orders: an entry that cancels to near zero keeps the rounding
// error of the large terms it summed (a convolution's weight gradient of
// -0.1046 differed by 2.4e-6 in the portable build, its largest entry being
// 1.28), so their absolute tolerance scales with the gradient's magnitude.
template <class F>
void check_layer_on_device(const std::vector<tsr::Tensor<float>>& inputs, const F& f, bool exact = false) {
  using namespace tsr;
  std::vector<Tensor<float>> cpu, dev;
  for (const auto& t : inputs) {
    cpu.push_back(t.clone().requires_grad_());
    dev.push_back(t.to(tsr::cuda(0)).requires_grad_());
  }
  const Tensor<float> cpu_out = f(cpu), dev_out = f(dev);
  if (exact) CHECK(same_values(dev_out, cpu_out));
  else CHECK(allclose(dev_out.to(kCPU), cpu_out, 1e-5, 1e-6));
  const Tensor<float> weights = Tensor<float>(sin(arange<float>(0.f, float(cpu_out.numel())))).view(cpu_out.sizes());
  sum(cpu_out * weights).backward();
  sum(dev_out * weights.to(tsr::cuda(0))).backward();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    CAPTURE(i);
    REQUIRE(dev[i].grad().defined());
    CHECK(dev[i].grad().device() == Device(tsr::cuda(0)));
    const double magnitude = max(abs(cpu[i].grad())).item();
    CHECK(allclose(dev[i].grad().to(kCPU), cpu[i].grad(), 1e-5, 1e-5 * std::max(magnitude, 0.1)));
  }
}
}  // namespace

TEST_CASE("device tensors: convolutions and pooling, values and gradients as on the CPU") {
  using namespace tsr;
  namespace F = nn::functional;
  using V = std::vector<Tensor<float>>;
  const Tensor<float> x = Tensor<float>(sin(arange<float>(0.f, 2.f * 4 * 7 * 6) * 0.37f)).view({2, 4, 7, 6});
  const Tensor<float> w = Tensor<float>(cos(arange<float>(0.f, 6.f * 4 * 3 * 3) * 0.11f)).view({6, 4, 3, 3});
  const Tensor<float> b = arange<float>(0.f, 6.f) * 0.1f;
  check_layer_on_device(V{x, w, b}, [](const V& v) { return F::conv2d(v[0], v[1], v[2]); });
  check_layer_on_device(V{x, w, b}, [](const V& v) {
    return F::conv2d(v[0], v[1], v[2], F::Conv2dFuncOptions().stride({2, 1}).padding({1, 2}).dilation({2, 1}));
  });
  check_layer_on_device(V{x, w.narrow(1, 0, 2)}, [](const V& v) {
    return F::conv2d(v[0], v[1], {}, F::Conv2dFuncOptions().padding(1).groups(2));
  });
  check_layer_on_device(V{x.narrow(1, 0, 4), w.transpose(0, 1).narrow(1, 0, 3)}, [](const V& v) {
    return F::conv_transpose2d(v[0], v[1], {}, F::ConvTranspose2dFuncOptions().stride(2).padding(1).output_padding(1));
  });
  check_layer_on_device(V{x}, [](const V& v) { return F::max_pool2d(v[0], nn::MaxPool2dOptions(3).stride(2).padding(1)); },
                        true);
  check_layer_on_device(V{x}, [](const V& v) { return F::max_pool2d(v[0], nn::MaxPool2dOptions(2).stride(1).dilation(2)); },
                        true);
  check_layer_on_device(V{x}, [](const V& v) {
    return F::avg_pool2d(v[0], nn::AvgPool2dOptions({3, 2}).stride(2).padding(1).count_include_pad(false));
  });
  check_layer_on_device(V{x}, [](const V& v) { return F::adaptive_avg_pool2d(v[0], {3, 4}); });
  // A layer moved to the device.
  nn::Conv2d conv(nn::Conv2dOptions(4, 3, 3).padding(1));
  const Tensor<float> on_cpu = conv->forward(x);
  conv->to(tsr::cuda(0));
  CHECK(allclose(conv->forward(x.to(tsr::cuda(0))).to(kCPU), on_cpu, 1e-5, 1e-6));
}

TEST_CASE("device tensors: half and bfloat16 expressions, reductions and sorting as on the CPU (float arithmetic)") {
  using namespace tsr;
  const auto check_type = [](auto zero) {
    using H = decltype(zero);
    const Tensor<H> x = cast<H>(Tensor<float>(sin(arange<float>(0.f, 24.f)) * 3.f).view({4, 6}));
    const Tensor<H> dx = x.to(tsr::cuda(0));
    CHECK(same_values(Tensor<H>(dx * dx + H(1.f) - exp(dx.t().t())), Tensor<H>(x * x + H(1.f) - exp(x))));
    CHECK(same_values(Tensor<float>(cast<float>(dx) * 0.5f), Tensor<float>(cast<float>(x) * 0.5f)));
    // Sums in float, rounded once to H: the same within H's rounding
    // whatever the order of the float additions.
    const auto as_float = [](const Tensor<H>& t) { return Tensor<float>(cast<float>(t.to(kCPU))); };
    CHECK(allclose(as_float(sum(dx, Shape{1})), as_float(sum(x, Shape{1})), 1e-2, 1e-2));
    CHECK(allclose(as_float(sum(dx)), as_float(sum(x)), 1e-2, 1e-2));
    CHECK(same_values(amax(dx, Shape{0}), amax(x, Shape{0})));
    CHECK(same_values(std::get<1>(sort(dx, 1)), std::get<1>(sort(x, 1))));
  };
  check_type(tsr::half(0.f));  // (qualified: CUDA has a half of its own)
  check_type(tsr::bfloat16(0.f));
}
