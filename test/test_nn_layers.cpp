// nn, second part: convolutions, pooling, normalization, embeddings,
// padding and interpolation, against PyTorch 1.13 (tools/make_golden.py:
// nn_layers, nn_resample).
#include <fstream>
#include <nn/nn.hpp>

#include "common.hpp"

using namespace tsr;
using test::bitwise_equal;
using test::check_close;
using test::check_forward_backward;
using test::error_of;
using test::keys_of;

// ----- convolutions, pooling, normalization, embeddings ---------------------------

// The patch matrix and its adjoint against their definitions, written as
// direct loops: geometries with rows of 1 to 37 outputs (one, two and three
// AVX-512 registers), strides 1 and 2, padding on both sides (once wider
// than the output row, so that some taps read nothing), dilation; and the
// adjoint identity <im2col(x), y> = <x, col2im(y)>.
TEST_CASE("im2col and col2im follow their definitions") {
  struct Case {
    int64_t c, h, w, kh, kw, sh, sw, top, left, dh, dw;
  };
  const Case cases[] = {{2, 5, 37, 3, 5, 1, 1, 1, 2, 1, 1}, {3, 4, 17, 2, 3, 1, 1, 0, 1, 1, 2},
                        {1, 6, 40, 5, 5, 2, 2, 2, 2, 1, 1}, {2, 3, 1, 2, 1, 1, 1, 1, 0, 1, 1},
                        {2, 7, 14, 5, 5, 1, 1, 2, 2, 1, 1}, {1, 4, 20, 3, 3, 1, 1, 3, 4, 1, 1},
                        {2, 2, 1, 1, 5, 1, 1, 0, 2, 1, 1}};
  for (const Case& k : cases) {
    const int64_t oh = (k.h + 2 * k.top - k.dh * (k.kh - 1) - 1) / k.sh + 1;
    const int64_t ow = (k.w + 2 * k.left - k.dw * (k.kw - 1) - 1) / k.sw + 1;
    const detail::Window2d g{k.kh, k.kw, k.sh, k.sw, k.top, k.left, k.dh, k.dw, k.h, k.w, oh, ow};
    CAPTURE(k.w);
    CAPTURE(k.sw);
    const int64_t n = 2, rows = k.c * k.kh * k.kw, cols = n * oh * ow;
    const Tensor<double> x = randn<double>({n, k.c, k.h, k.w});
    const Tensor<double> y = randn<double>({rows, cols});
    // The definition: entry (c kh + i) kw + j, b oh ow + oy ow + ox reads
    // x[b, c, oy sh - top + i dh, ox sw - left + j dw], or the fill (-1
    // here; max pooling's is -inf) outside.
    auto expected = full<double>({rows, cols}, -1.0);
    auto adjoint = zeros<double>({n, k.c, k.h, k.w});
    for (int64_t b = 0; b < n; ++b)
      for (int64_t c = 0; c < k.c; ++c)
        for (int64_t i = 0; i < k.kh; ++i)
          for (int64_t j = 0; j < k.kw; ++j)
            for (int64_t oy = 0; oy < oh; ++oy)
              for (int64_t ox = 0; ox < ow; ++ox) {
                const int64_t yy = oy * k.sh - k.top + i * k.dh, xx = ox * k.sw - k.left + j * k.dw;
                if (yy < 0 || yy >= k.h || xx < 0 || xx >= k.w) continue;
                const int64_t r = (c * k.kh + i) * k.kw + j, l = (b * oh + oy) * ow + ox;
                expected.data_ptr()[r * cols + l] = x.data_ptr()[((b * k.c + c) * k.h + yy) * k.w + xx];
                adjoint.data_ptr()[((b * k.c + c) * k.h + yy) * k.w + xx] += y.data_ptr()[r * cols + l];
              }
    CHECK(bitwise_equal(detail::im2col(x, g, -1.0), expected));
    check_close(detail::col2im(y, g, k.c), adjoint, 1e-14, 1e-14, "col2im, double");
    // float rows: twice as many lanes a vector (and AVX-512's masked adjoint)
    const Tensor<float> xf = x.to<float>(), yf = y.to<float>();
    CHECK(bitwise_equal(detail::im2col(xf, g, -1.f), expected.to<float>()));
    check_close(detail::col2im(yf, g, k.c), adjoint.to<float>(), 1e-5, 1e-5, "col2im, float");
    CHECK(sum(detail::im2col(x, g, 0.0) * y).item() == doctest::Approx(sum(x * detail::col2im(y, g, k.c)).item()));
  }
}

TEST_CASE("convolutions initialize as PyTorch's for the same seed") {
  manual_seed(0);
  nn::Conv2d c2(nn::Conv2dOptions(1, 16, 5).padding(2));
  nn::Conv1d c1(2, 4, 3);
  CHECK(bitwise_equal(c2->weight.as<float>(), test::golden<float>("nn_init_conv2d_weight")));
  CHECK(bitwise_equal(c2->bias.as<float>(), test::golden<float>("nn_init_conv2d_bias")));
  CHECK(bitwise_equal(c1->weight.as<float>(), test::golden<float>("nn_init_conv1d_weight")));
  CHECK(bitwise_equal(c1->bias.as<float>(), test::golden<float>("nn_init_conv1d_bias")));
}

template <class T>
void check_layers(const std::string& tag, double rtol) {
  namespace F = nn::functional;
  using V = std::vector<Tensor<T>>;
  auto check_layer = [&](const std::string& tag_, const std::string& name, int inputs,
                         const std::function<Tensor<T>(const V&)>& f, double tol) {
    check_forward_backward<T>("nn_layer_" + tag_ + "_" + name, inputs, f, tol);
  };
  check_layer(tag, "conv2d_basic", 3, [](const V& v) { return F::conv2d(v[0], v[1], v[2]); }, rtol);
  check_layer(tag, "conv2d_options", 3, [](const V& v) {
    return F::conv2d(v[0], v[1], v[2], F::Conv2dFuncOptions().stride({2, 1}).padding({1, 2}).dilation({2, 1}).groups(2));
  }, rtol);
  check_layer(tag, "conv2d_same_even", 2, [](const V& v) {
    return F::conv2d(v[0], v[1], {}, F::Conv2dFuncOptions().padding(kSame));
  }, rtol);
  check_layer(tag, "conv2d_unbatched_strided_input", 2, [](const V& v) {
    return F::conv2d(v[0].transpose(1, 2), v[1], {}, F::Conv2dFuncOptions().stride(2));
  }, rtol);
  check_layer(tag, "conv1d", 3, [](const V& v) { return F::conv1d(v[0], v[1], v[2], 2, 1, 2); }, rtol);
  check_layer(tag, "max_pool2d", 1, [](const V& v) {
    return F::max_pool2d(v[0], nn::MaxPool2dOptions(3).stride(2).padding(1).ceil_mode(true));
  }, rtol);
  check_layer(tag, "max_pool2d_dilated", 1, [](const V& v) {
    return F::max_pool2d(v[0], nn::MaxPool2dOptions(2).stride(1).dilation(2));
  }, rtol);
  check_layer(tag, "avg_pool2d", 1, [](const V& v) {
    return F::avg_pool2d(v[0], nn::AvgPool2dOptions(3).stride(2).padding(1).ceil_mode(true));
  }, rtol);
  check_layer(tag, "avg_pool2d_exclude_pad", 1, [](const V& v) {
    return F::avg_pool2d(v[0], nn::AvgPool2dOptions({3, 2}).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
  }, rtol);
  check_layer(tag, "max_pool1d", 1, [](const V& v) { return F::max_pool1d(v[0], nn::MaxPool1dOptions(3).stride(2).padding(1)); }, rtol);
  check_layer(tag, "avg_pool1d", 1, [](const V& v) {
    return F::avg_pool1d(v[0], nn::AvgPool1dOptions(4).stride(3).padding(2).count_include_pad(false));
  }, rtol);
  check_layer(tag, "adaptive_avg_pool2d", 1, [](const V& v) { return F::adaptive_avg_pool2d(v[0], {3, 4}); }, rtol);
  check_layer(tag, "batch_norm_train", 3, [](const V& v) {
    return F::batch_norm(v[0], zeros<T>({3}), ones<T>({3}), v[1], v[2], true, 0.1, 1e-5);
  }, rtol);
  check_layer(tag, "batch_norm_eval", 3, [](const V& v) {
    return F::batch_norm(v[0], full<T>({3}, T(0.5)), full<T>({3}, T(2)), v[1], v[2], false, 0.1, 1e-5);
  }, rtol);
  check_layer(tag, "layer_norm", 3, [](const V& v) { return F::layer_norm(v[0], {4, 5}, v[1], v[2]); }, rtol);
  check_layer(tag, "group_norm", 3, [](const V& v) { return F::group_norm(v[0], 3, v[1], v[2]); }, rtol);
  check_layer(tag, "embedding", 1, [](const V& v) {
    return F::embedding(tensor<int64_t>({1, 0, 4, 4, 9, 0}).view({2, 3}), v[0], 0);
  }, rtol);

  // BatchNorm2d's running statistics after two training steps.
  nn::BatchNorm2d bn(3);
  if constexpr (std::is_same_v<T, double>) bn->to<double>();
  bn(test::golden<T>("nn_layer_" + tag + "_bn_x1"));
  bn(test::golden<T>("nn_layer_" + tag + "_bn_x2"));
  check_close(bn->running_mean.as<T>(), test::golden<T>("nn_layer_" + tag + "_bn_running_mean"), rtol, rtol, "running_mean");
  check_close(bn->running_var.as<T>(), test::golden<T>("nn_layer_" + tag + "_bn_running_var"), rtol, rtol, "running_var");
  CHECK(bn->num_batches_tracked.as<int64_t>().item() == 2);
}

TEST_CASE("convolutions, pooling, normalization, embeddings: values and gradients as PyTorch's") {
  check_layers<float>("f32", 2e-5);
  check_layers<double>("f64", 1e-11);
}

TEST_CASE("layers: a CNN's repr and state_dict keys as PyTorch's") {
  nn::Sequential cnn(nn::Conv2d(nn::Conv2dOptions(1, 16, 5).padding(2)));
  cnn->push_back(nn::ReLU());
  cnn->push_back(nn::MaxPool2d(2));
  cnn->push_back(nn::BatchNorm2d(16));
  cnn->push_back(nn::Conv2d(nn::Conv2dOptions(16, 32, {3, 5}).stride(2).padding(1).dilation(2).groups(4).bias(false)));
  cnn->push_back(nn::AvgPool2d(nn::AvgPool2dOptions(2).ceil_mode(true)));
  cnn->push_back(nn::AdaptiveAvgPool2d(nn::ExpandingArray<2>{3, 4}));
  cnn->push_back(nn::Flatten());
  cnn->push_back(nn::Dropout(0.25));
  cnn->push_back(nn::Unflatten(nn::UnflattenOptions(1, {2, 192})));
  cnn->push_back(nn::LayerNorm(Shape{192}));
  cnn->push_back(nn::GroupNorm(2, 2));
  cnn->push_back(nn::Conv1d(nn::Conv1dOptions(2, 2, 3).padding(kSame)));
  cnn->push_back(nn::MaxPool1d(3));
  cnn->push_back(nn::AvgPool1d(2));
  cnn->push_back(nn::BatchNorm1d(nn::BatchNormOptions(2).momentum(std::nullopt)));
  cnn->push_back(nn::Embedding(nn::EmbeddingOptions(5, 2).padding_idx(-1)));
  std::ifstream in(std::string(TSR_GOLDEN_DIR) + "/nn_layers.txt");
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  std::ostringstream repr;
  repr << cnn;
  CHECK("=== repr\n" + repr.str() + "\n=== state_dict\n" + keys_of(cnn->state_dict()) + "\n=== end\n" == text);
}

TEST_CASE("functional options under libtorch's names (F::MaxPool2dFuncOptions, F::PadFuncOptions, ...)") {
  namespace F = nn::functional;
  static_assert(std::is_same_v<F::CrossEntropyFuncOptions, nn::CrossEntropyLossOptions>);
  static_assert(std::is_same_v<F::BinaryCrossEntropyWithLogitsFuncOptions, nn::BCEWithLogitsLossOptions>);
  static_assert(std::is_same_v<F::AvgPool2dFuncOptions, nn::AvgPool2dOptions>);
  static_assert(std::is_same_v<F::InterpolateFuncOptions, nn::InterpolateFuncOptions>);
  // 0..15 as a 4 x 4 image: the 2 x 2 maxima are 5, 7, 13, 15; padded by
  // reflection on the left and right, a row 0 1 2 3 reads 1 0 1 2 3 2.
  const Tensor<float> x = arange<float>(0.f, 16.f).reshape({1, 1, 4, 4});
  CHECK(F::max_pool2d(x, F::MaxPool2dFuncOptions(2)).to_vector() == std::vector<float>{5, 7, 13, 15});
  const Tensor<float> padded = F::pad(x, F::PadFuncOptions({1, 1, 0, 0}).mode(kReflect));
  CHECK(padded.select(2, 0).to_vector() == std::vector<float>{1, 0, 1, 2, 3, 2});
  CHECK(F::cross_entropy(Tensor<float>(zeros({2, 4})), tensor<int64_t>({1, 3}), F::CrossEntropyFuncOptions().reduction(kSum))
            .item() == doctest::Approx(2 * std::log(4.0)));
}

TEST_CASE("layers: errors as PyTorch's") {
  const auto x = randn({1, 3, 5, 5});
  CHECK(error_of([&] { nn::F::conv2d(x, randn({4, 2, 3, 3})); }) ==
        "Given groups=1, weight of size [4, 2, 3, 3], expected input[1, 3, 5, 5] to have 2 channels, but got 3 channels instead");
  CHECK(error_of([&] { nn::F::conv2d(x, randn({4, 3, 7, 7})); }) ==
        "Calculated padded input size per channel: (5 x 5). Kernel size: (7 x 7). Kernel size can't be greater than actual input size");
  CHECK(error_of([&] { nn::F::conv2d(x, randn({4, 3, 3, 3}), {}, nn::F::Conv2dFuncOptions().stride(2).padding(kSame)); }) ==
        "padding='same' is not supported for strided convolutions");
  CHECK(error_of([&] {
    nn::F::conv_transpose2d(randn({1, 4, 3, 3}), randn({4, 3, 3, 3}), {}, nn::F::ConvTranspose2dFuncOptions().output_padding(1));
  }) == "output padding must be smaller than either stride or dilation, but got output_padding_height: 1 output_padding_width: 1 "
        "stride_height: 1 stride_width: 1 dilation_height: 1 dilation_width: 1");
  CHECK(error_of([&] { nn::F::conv_transpose2d(randn({1, 5, 3, 3}), randn({4, 3, 3, 3})); }) ==
        "Given transposed=1, weight of size [4, 3, 3, 3], expected input[1, 5, 3, 3] to have 4 channels, but got 5 channels instead");
  CHECK(error_of([&] { nn::BatchNorm1d bn(3); bn(randn({1, 3})); }) ==
        "Expected more than 1 value per channel when training, got input size torch.Size([1, 3])");
  CHECK(error_of([&] { nn::F::layer_norm(randn({2, 3}), {4}); }) ==
        "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]");
  CHECK(error_of([&] { nn::Dropout d(1.5); }) == "dropout probability has to be between 0 and 1, but got 1.5");
  CHECK(error_of([&] { nn::F::max_pool2d(x, nn::MaxPool2dOptions(2).padding(2)); }) ==
        "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1");
}

TEST_CASE("layers: dropout, training and evaluation modes") {
  manual_seed(5);
  nn::Dropout drop(0.25);
  const auto x = ones({1000});
  const Tensor<float> y = drop(x);
  const auto kept = sum(cast<float>(y != 0.f)).item();
  CHECK(kept > 650);
  CHECK(kept < 850);
  CHECK(amax(y).item() == doctest::Approx(1 / 0.75));
  // Double tensors are scaled by 1 / (1 - p) in double, as PyTorch's.
  CHECK(amax(nn::F::dropout(ones<double>({100}), 0.3)).item() == 1 / 0.7);
  drop->eval();
  CHECK(bitwise_equal(drop(x), x));

  nn::BatchNorm1d bn(2);
  const auto batch = tensor<float>({1, 10, 3, 20}).view({2, 2});
  bn(batch);
  bn->eval();
  // Evaluation uses the running statistics: 0.9 * 0 + 0.1 * mean, 0.9 * 1 + 0.1 * unbiased var.
  const Tensor<float> y_eval = bn(batch);
  const float mean0 = 0.1f * 2.f, var0 = 0.9f + 0.1f * 2.f;
  CHECK(y_eval(0, 0) == doctest::Approx((1 - mean0) / std::sqrt(var0 + 1e-5f)));
}

// Each channel of each instance (planes over the dims after the batch and
// channel dims) must be zeroed whole or kept whole and scaled by 1 / (1 - p).
template <class T>
void check_whole_channels(const Tensor<T>& y, int64_t planes, T scale) {
  const Tensor<T> flat = y.reshape({planes, -1});
  int64_t dropped = 0;
  for (int64_t i = 0; i < planes; ++i) {
    const Tensor<T> plane = flat.select(0, i);
    const T first = plane(0);
    CHECK((first == T(0) || first == scale));
    CHECK(bitwise_equal(plane, full<T>(plane.sizes(), first)));
    dropped += first == T(0);
  }
  CHECK(dropped > 0);       // with 200 planes and p = 0.5, each side is certain
  CHECK(dropped < planes);  // but for a chance of 2^-199
}

TEST_CASE("channel dropout: Dropout1d, Dropout2d, Dropout3d drop whole channels") {
  manual_seed(3);
  nn::Dropout2d drop2(0.5);
  auto x = ones({20, 10, 3, 4}).requires_grad_();
  const Tensor<float> y = drop2(x);
  check_whole_channels(y, 200, 2.f);
  sum(y).backward();
  CHECK(bitwise_equal(x.grad(), y));  // the gradient of sum(x * mask) is the mask
  drop2->eval();
  CHECK(bitwise_equal(drop2(x.detach()), x.detach()));
  // Unbatched inputs: one mask entry per channel.
  check_whole_channels(nn::Dropout1d(0.5)(ones({200, 7})), 200, 2.f);
  check_whole_channels(nn::Dropout3d(0.5)(ones({200, 2, 3, 2})), 200, 2.f);
  check_whole_channels(nn::Dropout1d(0.5)(ones({4, 50, 6})), 200, 2.f);
  // The same seed gives the same mask; p = 0 and p = 1 as PyTorch.
  manual_seed(9);
  const Tensor<float> a = nn::F::dropout2d(ones({4, 50, 2, 2}), 0.5);
  manual_seed(9);
  CHECK(bitwise_equal(nn::F::dropout2d(ones({4, 50, 2, 2}), 0.5), a));
  CHECK(bitwise_equal(nn::F::dropout2d(ones({2, 3, 2}), 0.0), ones({2, 3, 2})));
  CHECK(bitwise_equal(nn::F::dropout3d(ones({2, 3, 2, 2, 2}), 1.0), zeros({2, 3, 2, 2, 2})));
  CHECK(nn::Dropout1d()->repr() == "Dropout1d(p=0.5, inplace=False)");
  CHECK(nn::Dropout2d(0.3)->repr() == "Dropout2d(p=0.3, inplace=False)");
  CHECK(nn::Dropout3d()->repr() == "Dropout3d(p=0.5, inplace=False)");
  CHECK(error_of([] { nn::F::dropout1d(ones({1, 2, 3, 4})); }) ==
        "dropout1d: Expected 2D or 3D input, but received a 4D input. Note that dropout1d exists to provide channel-wise dropout "
        "on inputs with 1 spatial dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).");
  CHECK(error_of([] { nn::Dropout2d d(-0.1); }) == "dropout probability has to be between 0 and 1, but got -0.1");
}

TEST_CASE("AlphaDropout and FeatureAlphaDropout keep SELU's mean and variance; RReLU's slopes") {
  // With p = 0.5: a = 1 / sqrt((alpha'^2 p + 1)(1 - p)), alpha' = 1.7580993408473766, and b = a alpha' p; kept
  // elements become a x + b, dropped ones a (-alpha') + b (Klambauer et al.; PyTorch's formula).
  const double saturation = 1.7580993408473766, a = 1 / std::sqrt((saturation * saturation * 0.5 + 1) * 0.5);
  const double b = a * saturation * 0.5, dropped_value = a * saturation * (0.5 - 1);
  manual_seed(11);
  auto x = randn<double>({100000}).requires_grad_();
  nn::AlphaDropout drop(0.5);
  const Tensor<double> y = drop(x);
  const auto dropped = y == dropped_value;
  const double dropped_share = sum(cast<double>(dropped)).item() / 100000;
  CHECK(dropped_share == doctest::Approx(0.5).epsilon(0.02));
  CHECK(allclose(where(dropped, x.detach() * a + b, y), x.detach() * a + b, 1e-14, 1e-14));
  // A standard normal input keeps mean 0 and variance 1 (SELU's fixed point), within sampling error.
  CHECK(std::abs(mean(y).item()) < 0.02);
  CHECK(var(y).item() == doctest::Approx(1).epsilon(0.02));
  sum(y).backward();
  CHECK(bitwise_equal(x.grad(), Tensor<double>(where(dropped, zeros<double>({100000}), full<double>({100000}, a)))));
  drop->eval();
  CHECK(bitwise_equal(drop(x.detach()), x.detach()));
  CHECK(bitwise_equal(nn::F::alpha_dropout(x.detach(), 0.5), x.detach()));  // training = false by default, as PyTorch
  CHECK(bitwise_equal(nn::F::alpha_dropout(ones({3}), 1.0, true), zeros({3})));
  // Feature alpha dropout: every channel of every instance dropped or kept whole.
  const Tensor<float> channels = nn::FeatureAlphaDropout(0.5)(ones({20, 10, 3}));
  const Tensor<float> first = channels.narrow(2, 0, 1);
  CHECK(bitwise_equal(channels, first.expand({20, 10, 3})));
  const auto first_dropped = sum(cast<float>(first == float(dropped_value))).item();
  CHECK(first_dropped > 0);
  CHECK(first_dropped < 200);
  CHECK(error_of([] { nn::F::feature_alpha_dropout(ones({3}), 0.5, true); }) ==
        "Feature dropout requires at least 2 dimensions in the input");
  CHECK(error_of([] { nn::F::alpha_dropout(ones({3}), 1.5, true); }) ==
        "dropout probability has to be between 0 and 1, but got 1.5");
  CHECK(nn::AlphaDropout()->repr() == "AlphaDropout(p=0.5, inplace=False)");
  CHECK(nn::FeatureAlphaDropout(0.2)->repr() == "FeatureAlphaDropout(p=0.2, inplace=False)");

  // RReLU in training: each non-positive element gets its own slope in [lower, upper], which is its gradient.
  nn::RReLU rrelu(nn::RReLUOptions().lower(0.1).upper(0.3));
  auto v = cat({Tensor<double>(-rand<double>({1000}) - 0.1), zeros<double>({1}), rand<double>({10})}).requires_grad_();
  const Tensor<double> r = rrelu(v);
  sum(r).backward();
  const Tensor<double> slopes = v.grad().narrow(0, 0, 1000);
  CHECK(amin(slopes).item() >= 0.1);
  CHECK(amax(slopes).item() <= 0.3);
  CHECK(amax(slopes).item() - amin(slopes).item() > 0.15);  // spread over the interval, not one slope
  CHECK(allclose(r.narrow(0, 0, 1000), v.detach().narrow(0, 0, 1000) * slopes, 0, 0));
  CHECK(v.grad()(1000) >= 0.1);  // at 0 the slope's side, as PyTorch
  CHECK(bitwise_equal(v.grad().narrow(0, 1001, 10), ones<double>({10})));
  CHECK(bitwise_equal(r.narrow(0, 1001, 10), v.detach().narrow(0, 1001, 10)));
  // In evaluation, the mean slope: PyTorch gives rrelu(-1) = -0.2292 with the default bounds.
  CHECK(nn::F::rrelu(tensor<double>({-1.0})).item() == doctest::Approx(-(1.0 / 8 + 1.0 / 3) / 2));
  rrelu->eval();
  CHECK(bitwise_equal(rrelu(v.detach()), Tensor<double>(nn::F::leaky_relu(v.detach(), 0.2))));
  CHECK(nn::RReLU()->repr() == "RReLU(lower=0.125, upper=0.3333333333333333)");
  CHECK(error_of([] { nn::F::rrelu(ones({2}), 0.5, 0.2); }) == "Lower bound should be less than or equal to the upper bound");
}

TEST_CASE_TEMPLATE("dropout, channel dropout, alpha dropout, RReLU and bernoulli draw PyTorch's masks for a seed", T, float,
                   double) {
  const std::string tag = std::is_same_v<T, float> ? "f32" : "f64";
  const auto x = test::golden<T>("rl_in_" + tag);
  const std::map<std::string, std::function<Tensor<T>()>> cases = {
      {"dropout", [&] { return nn::F::dropout(x, 0.3); }},
      {"dropout_p1", [&] { return nn::F::dropout(x, 0.9); }},
      {"dropout2d", [&] { return nn::F::dropout2d(x, 0.4); }},
      {"alpha", [&] { return nn::F::alpha_dropout(x, 0.2, true); }},
      {"feature_alpha", [&] { return nn::F::feature_alpha_dropout(x, 0.35, true); }},
      {"rrelu", [&] { return nn::F::rrelu(x, 0.1, 0.4, true); }},
  };
  for (const auto& [name, f] : cases) {
    manual_seed(21);
    check_close(f(), test::golden<T>("rl_" + name + "_" + tag), 0, 0, name);
  }
  manual_seed(22);
  check_close(bernoulli(linspace<T>(0, 1, 60).reshape({6, 10})), test::golden<T>("rl_bernoulli_" + tag), 0, 0,
              "bernoulli");
}

TEST_CASE_TEMPLATE("gumbel_softmax draws PyTorch's sample for a seed, soft and hard, with its gradient", T, float,
                   double) {
  const std::string tag = std::is_same_v<T, float> ? "f32" : "f64";
  const auto x = test::golden<T>("rl_in_" + tag);  // a NaN in its first row
  const Tensor<T> weights = linspace<T>(-1, 2, x.numel()).reshape(x.sizes());
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  const std::map<std::string, nn::F::GumbelSoftmaxFuncOptions> cases = {
      {"soft", {}},
      {"tau", nn::F::GumbelSoftmaxFuncOptions().tau(0.5).dim(1)},
      {"hard", nn::F::GumbelSoftmaxFuncOptions().hard(true)},
  };
  for (const auto& [name, options] : cases) {
    const Tensor<T> logits = x.clone().requires_grad_();
    manual_seed(31);
    const Tensor<T> y = nn::F::gumbel_softmax(logits, options);
    sum(y * weights).backward();
    check_close(y.detach(), test::golden<T>("rl_gumbel_" + name + "_" + tag), tol, tol, name);
    check_close(logits.grad(), test::golden<T>("rl_gumbel_" + name + "_grad_" + tag), tol, tol, name + " grad");
  }
}

TEST_CASE("a small CNN trains") {
  manual_seed(0);
  // Two classes: a bright square in the top left or the bottom right.
  Tensor<float> images = randn({32, 1, 8, 8}) * 0.1f;
  auto labels = zeros<int64_t>({32});
  for (int64_t i = 0; i < 32; ++i) {
    const int64_t c = i % 2, at = c ? 4 : 0;
    labels(i) = c;
    images.select(0, i).slice(1, at, at + 4).slice(2, at, at + 4) += 1.f;
  }
  nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)));
  model->push_back(nn::BatchNorm2d(4));
  model->push_back(nn::ReLU());
  model->push_back(nn::MaxPool2d(2));
  model->push_back(nn::Flatten());
  model->push_back(nn::Linear(64, 2));
  nn::CrossEntropyLoss criterion;
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    const Tensor<float> loss = criterion(model(images), labels);
    (step == 0 ? first : last) = loss.item();
    model->zero_grad();
    loss.backward();
    const NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.as<float>() -= 0.1f * p.as<float>().grad();
  }
  CHECK(last < 0.2f * first);
  model->eval();
  CHECK(mean(cast<float>(argmax(model(images), 1) == labels)).item() == 1.f);
}

template <class T>
void check_more_losses(const std::string& tag, double rtol) {
  auto g = [&](const std::string& n) { return test::golden<T>("nn_loss2_" + tag + "_" + n); };
  const auto a = g("a"), b = g("b"), c = g("c"), sign = g("sign"), logp = g("logp"), target = g("target");
  namespace F = nn::functional;
  using R = nn::Reduction;
  const Tensor<T> log_target = log(target + T(0.1));
  const std::map<std::string, std::function<Tensor<T>(const Tensor<T>&, R)>> cases = {
      {"kl_div", [&](const Tensor<T>& i, R r) { return F::kl_div(i, target, nn::KLDivLossOptions().reduction(r)); }},
      {"kl_div_log_target", [&](const Tensor<T>& i, R r) {
         return F::kl_div(i, log_target, nn::KLDivLossOptions().log_target(true).reduction(r));
       }},
      {"cosine_embedding", [&](const Tensor<T>& i, R r) {
         return F::cosine_embedding_loss(i, b, sign, nn::CosineEmbeddingLossOptions().margin(0.2).reduction(r));
       }},
      {"margin_ranking", [&](const Tensor<T>& i, R r) {
         return F::margin_ranking_loss(i.select(1, 0), b.select(1, 0), sign, nn::MarginRankingLossOptions().margin(0.3).reduction(r));
       }},
      {"triplet", [&](const Tensor<T>& i, R r) {
         return F::triplet_margin_loss(i, b, c, nn::TripletMarginLossOptions().margin(0.5).reduction(r));
       }},
      {"triplet_swap_p1", [&](const Tensor<T>& i, R r) {
         return F::triplet_margin_loss(i, b, c, nn::TripletMarginLossOptions().p(1).swap(true).reduction(r));
       }},
      {"triplet_distance", [&](const Tensor<T>& i, R r) {
         return nn::TripletMarginWithDistanceLoss(nn::TripletMarginWithDistanceLossOptions().margin(0.7).reduction(r))(i, b, c);
       }},
      {"triplet_distance_l1_swap", [&](const Tensor<T>& i, R r) {
         const auto l1 = [](const auto& x, const auto& y) { return sum(abs(x - y), -1); };
         return F::triplet_margin_with_distance_loss(
             i, b, c, F::TripletMarginWithDistanceLossFuncOptions().distance_function(l1).swap(true).reduction(r));
       }},
  };
  const std::pair<const char*, R> reductions[] = {{"none", R::None}, {"mean", R::Mean}, {"sum", R::Sum}, {"batchmean", R::BatchMean}};
  for (const auto& [name, f] : cases) {
    for (const auto& [rname, r] : reductions) {
      if (r == R::BatchMean && name.rfind("kl_div", 0) != 0) continue;
      const auto i = (name.rfind("kl_div", 0) == 0 ? logp : a).clone().requires_grad_();
      const Tensor<T> out = f(i, r);
      out.backward(ones_like(out));
      const std::string key = "nn_loss2_" + tag + "_" + name + "_" + rname;
      check_close(out, test::golden<T>(key), rtol, rtol, key);
      check_close(i.grad(), test::golden<T>(key + "_gx"), rtol, rtol, key + " gradient");
    }
  }
}

TEST_CASE("losses: KL divergence, cosine embedding, margin ranking, triplet margin (with a distance) as PyTorch's") {
  check_more_losses<float>("f32", 2e-5);
  check_more_losses<double>("f64", 1e-12);
  CHECK(error_of([] { nn::F::mse_loss(ones({2}), ones({2}), nn::MSELossOptions().reduction(kBatchMean)); }) ==
        "batchmean is not a valid value for reduction (it is kl_div's only)");
  // PyTorch's module holds its default distance as a child; a given function is no module.
  CHECK(nn::TripletMarginWithDistanceLoss()->repr() ==
        "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)");
  // A distance for float tensors alone: double ones are refused.
  struct FloatL1 {
    Tensor<float> operator()(const Tensor<float>& x, const Tensor<float>& y) const { return sum(abs(x - y), -1); }
    void operator()(const Tensor<double>&, const Tensor<double>&) const = delete;
  };
  const nn::TripletMarginWithDistanceLoss custom(nn::TripletMarginWithDistanceLossOptions().distance_function(FloatL1{}));
  CHECK(custom->repr() == "TripletMarginWithDistanceLoss()");
  CHECK(custom(ones({2, 3}), zeros({2, 3}), ones({2, 3})).item() == 4.f);  // max(3 - 0 + 1, 0) per row
  CHECK(error_of([&] { custom(ones<double>({2, 3}), zeros<double>({2, 3}), zeros<double>({2, 3})); }) ==
        "triplet_margin_with_distance_loss: the distance function takes no 'Double' tensors");
}

// ----- padding, interpolation, adaptive max pooling, bilinear ---------------------

template <class T>
void check_resample(const std::string& tag, double rtol) {
  namespace F = nn::functional;
  using V = std::vector<Tensor<T>>;
  auto run = [&](const std::string& name, int inputs, const std::function<Tensor<T>(const V&)>& f) {
    check_forward_backward<T>("nn_rs_" + tag + "_" + name, inputs, f, rtol);
  };
  run("pad_constant", 1, [](const V& v) { return F::pad(v[0], nn::PadFuncOptions({1, 2, -1, 3}).value(0.5)); });
  run("pad_reflect", 1, [](const V& v) { return F::pad(v[0], nn::PadFuncOptions({2, 3, 3, 1}).mode(kReflect)); });
  run("pad_replicate", 1, [](const V& v) { return F::pad(v[0], nn::PadFuncOptions({3, 1, 0, 2}).mode(kReplicate)); });
  run("nearest_size", 1, [](const V& v) { return F::interpolate(v[0], nn::InterpolateFuncOptions().size({7, 8})); });
  run("nearest_scale", 1, [](const V& v) { return F::interpolate(v[0], nn::InterpolateFuncOptions().scale_factor({1.7})); });
  run("bilinear_size", 1, [](const V& v) {
    return F::interpolate(v[0], nn::InterpolateFuncOptions().size({7, 3}).mode(kBilinear).align_corners(false));
  });
  run("bilinear_corners", 1, [](const V& v) {
    return F::interpolate(v[0], nn::InterpolateFuncOptions().size({6, 9}).mode(kBilinear).align_corners(true));
  });
  run("bilinear_scale", 1, [](const V& v) {
    return F::interpolate(v[0], nn::InterpolateFuncOptions().scale_factor({2.5}).mode(kBilinear));
  });
  run("adaptive_max_pool2d", 1, [](const V& v) { return F::adaptive_max_pool2d(v[0], {3, 2}); });
  run("bilinear_layer", 4, [](const V& v) { return F::bilinear(v[0], v[1], v[2], v[3]); });
  run("conv_transpose2d", 3, [](const V& v) {
    return F::conv_transpose2d(v[0], v[1], v[2], F::ConvTranspose2dFuncOptions().stride(2).padding(1).output_padding(1).groups(2));
  });
  run("conv_transpose2d_dilated", 2, [](const V& v) {
    return F::conv_transpose2d(v[0].transpose(1, 2), v[1], {},
                               F::ConvTranspose2dFuncOptions().stride({1, 2}).padding({0, 1}).dilation({2, 1}));
  });
}

template <class T>
void check_resample_modes(const std::string& tag, double rtol) {
  namespace F = nn::functional;
  using V = std::vector<Tensor<T>>;
  using O = nn::InterpolateFuncOptions;
  auto run = [&](const std::string& name, const std::function<Tensor<T>(const V&)>& f) {
    check_forward_backward<T>("nn_rs2_" + tag + "_" + name, 1, f, rtol);
  };
  run("pad_circular", [](const V& v) { return F::pad(v[0], nn::PadFuncOptions({4, 2, 1, 3}).mode(kCircular)); });
  run("pad_circular_crop", [](const V& v) { return F::pad(v[0], nn::PadFuncOptions({-2, 3}).mode(kCircular)); });
  run("nearest_exact", [](const V& v) { return F::interpolate(v[0], O().size({7, 2}).mode(kNearestExact)); });
  run("nearest_exact_scale", [](const V& v) { return F::interpolate(v[0], O().scale_factor({1.7}).mode(kNearestExact)); });
  run("linear", [](const V& v) { return F::interpolate(v[0], O().size({8}).mode(kLinear)); });
  run("linear_corners", [](const V& v) { return F::interpolate(v[0], O().size({3}).mode(kLinear).align_corners(true)); });
  run("bicubic", [](const V& v) { return F::interpolate(v[0], O().size({7, 3}).mode(kBicubic)); });
  run("bicubic_corners", [](const V& v) { return F::interpolate(v[0], O().size({6, 9}).mode(kBicubic).align_corners(true)); });
  run("bicubic_scale", [](const V& v) { return F::interpolate(v[0], O().scale_factor({2.5}).mode(kBicubic)); });
  run("trilinear", [](const V& v) { return F::interpolate(v[0], O().size({5, 2, 3}).mode(kTrilinear)); });
  run("nearest_3d", [](const V& v) { return F::interpolate(v[0], O().scale_factor({2.0, 1.5, 0.5})); });
  run("area", [](const V& v) { return F::interpolate(v[0], O().size({3, 4}).mode(kArea)); });
  run("area_1d", [](const V& v) { return F::interpolate(v[0], O().size({4}).mode(kArea)); });
  run("avg_pool2d_divisor", [](const V& v) {
    return F::avg_pool2d(v[0], nn::AvgPool2dOptions(3).stride(2).padding(1).ceil_mode(true).divisor_override(5));
  });
}

TEST_CASE("circular padding, every interpolation mode, average pooling's divisor_override: values and gradients as PyTorch's") {
  check_resample_modes<float>("f32", 2e-5);
  check_resample_modes<double>("f64", 1e-12);
  namespace F = nn::functional;
  using O = nn::InterpolateFuncOptions;
  // PyTorch's messages; where a crop leaves less than the circular padding
  // PyTorch reads memory it never wrote, and tessera refuses.
  CHECK(error_of([] { F::pad(randn({1, 1, 4}), nn::PadFuncOptions({5, 0}).mode(kCircular)); }) ==
        "Padding value causes wrapping around more than once.");
  CHECK(error_of([] { F::pad(randn({1, 1, 4}), nn::PadFuncOptions({-4, 2}).mode(kCircular)); }) ==
        "Padding value causes wrapping around more than once.");
  CHECK(equal(F::pad(arange<float>(4).view({1, 1, 4}), nn::PadFuncOptions({4, 4}).mode(kCircular)).view({12}),
              tensor<float>({0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3})));
  CHECK(error_of([] { F::interpolate(randn({1, 2, 4, 5}), O().size({3}).mode(kLinear)); }) == "Got 4D input, but linear mode needs 3D input");
  CHECK(error_of([] { F::interpolate(randn({1, 2, 4}), O().size({3}).mode(kTrilinear)); }) ==
        "Got 3D input, but trilinear mode needs 5D input");
  CHECK(error_of([] { F::interpolate(randn({1, 2, 4}), O().size({3}).mode(kBicubic)); }) ==
        "Input Error: Only 3D, 4D and 5D input Tensors supported (got 3D) for the modes: nearest | linear | bilinear | bicubic | "
        "trilinear | area | nearest-exact (got bicubic)");
  CHECK(error_of([] { F::interpolate(randn({2, 4}), O().size({3}).mode(kArea)); }) ==
        "Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D) for the modes: nearest | linear | bilinear | bicubic | "
        "trilinear | area | nearest-exact (got area)");
  CHECK(error_of([] { F::interpolate(randn({1, 1, 4}), O().size({3}).mode(kArea).align_corners(true)); }) ==
        "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear");
  CHECK(error_of([] { O().mode(kReLU); }) ==
        "interpolate: the mode must be kNearest, kLinear, kBilinear, kBicubic, kTrilinear, kArea or kNearestExact");
  // Upsample is interpolate as a module, and prints as PyTorch's.
  nn::Sequential up(nn::Upsample(nn::UpsampleOptions().size({7, 3}).mode(kBicubic)));
  check_close(up->forward(test::golden<float>("nn_rs2_f32_bicubic_in0")), test::golden<float>("nn_rs2_f32_bicubic_out"), 2e-5, 2e-5,
              "Upsample");
  CHECK(nn::Upsample(nn::UpsampleOptions().scale_factor({2}))->repr() == "Upsample(scale_factor=2.0, mode=nearest)");
  CHECK(nn::Upsample(nn::UpsampleOptions().size({4, 5}).mode(kBilinear).align_corners(true))->repr() ==
        "Upsample(size=(4, 5), mode=bilinear)");
  CHECK(nn::Upsample(nn::UpsampleOptions().scale_factor({2, 1.5}).mode(kNearestExact))->repr() ==
        "Upsample(scale_factor=(2.0, 1.5), mode=nearest-exact)");
  CHECK(nn::Upsample(nn::UpsampleOptions().size({7}).mode(kLinear))->repr() == "Upsample(size=7, mode=linear)");
  CHECK(error_of([] { F::avg_pool2d(randn({1, 1, 4, 4}), nn::AvgPool2dOptions(2).divisor_override(0)); }) == "divisor must be not zero");
  CHECK(error_of([] { F::max_pool2d(randn({1, 1, 4, 4}), nn::MaxPool2dOptions(2).divisor_override(3)); }) ==
        "max_pool2d has no divisor_override (average pooling's option)");
}

template <class T>
void check_more_activations(const std::string& tag, double rtol) {
  namespace F = nn::functional;
  using V = std::vector<Tensor<T>>;
  auto run = [&](const std::string& name, int inputs, const std::function<Tensor<T>(const V&)>& f) {
    check_forward_backward<T>("nn_act2_" + tag + "_" + name, inputs, f, rtol);
  };
  run("logsigmoid", 1, [](const V& v) { return Tensor<T>(F::logsigmoid(v[0])); });
  run("softsign", 1, [](const V& v) { return Tensor<T>(F::softsign(v[0])); });
  run("tanhshrink", 1, [](const V& v) { return Tensor<T>(F::tanhshrink(v[0])); });
  run("celu", 1, [](const V& v) { return Tensor<T>(F::celu(v[0], 0.75)); });
  run("softshrink", 1, [](const V& v) { return Tensor<T>(F::softshrink(v[0], 0.8)); });
  run("hardshrink", 1, [](const V& v) { return Tensor<T>(F::hardshrink(v[0], 0.8)); });
  run("threshold", 1, [](const V& v) { return Tensor<T>(F::threshold(v[0], 0.3, -2.0)); });
  run("glu", 1, [](const V& v) { return Tensor<T>(F::glu(v[0], 1)); });
  run("softmin", 1, [](const V& v) { return Tensor<T>(F::softmin(v[0], 1)); });
  run("prelu_one", 2, [](const V& v) { return Tensor<T>(F::prelu(v[0], v[1])); });
  run("prelu_channels", 2, [](const V& v) { return Tensor<T>(F::prelu(v[0], v[1])); });
  run("pixel_shuffle", 1, [](const V& v) { return F::pixel_shuffle(v[0], 2); });
  run("pixel_unshuffle", 1, [](const V& v) { return F::pixel_unshuffle(v[0], 2); });
}

TEST_CASE("LogSigmoid, Softsign, Tanhshrink, CELU, the shrinks, Threshold, GLU, Softmin, PReLU, PixelShuffle: as PyTorch's") {
  check_more_activations<float>("f32", 2e-5);
  check_more_activations<double>("f64", 1e-12);
  namespace F = nn::functional;
  // The modules run their functional forms on the module's own weight; they
  // print as PyTorch's.
  nn::PReLU prelu(nn::PReLUOptions().num_parameters(3).init(0.1));
  CHECK(equal(prelu->weight.as<float>(), full<float>({3}, 0.1f)));
  const auto x = test::golden<float>("nn_act2_f32_prelu_channels_in0");
  prelu->weight.as<float>().detach().copy_(test::golden<float>("nn_act2_f32_prelu_channels_in1"));
  check_close(prelu->forward(x), test::golden<float>("nn_act2_f32_prelu_channels_out"), 2e-5, 2e-5, "PReLU");
  nn::Sequential seq(nn::PixelUnshuffle(2), nn::PixelShuffle(2));
  const auto y = test::golden<float>("nn_act2_f32_pixel_unshuffle_in0");
  CHECK(equal(seq->forward(y), y));
  CHECK(nn::LogSigmoid()->repr() == "LogSigmoid()");
  CHECK(nn::Softsign()->repr() == "Softsign()");
  CHECK(nn::Tanhshrink()->repr() == "Tanhshrink()");
  CHECK(nn::CELU(nn::CELUOptions().alpha(0.5))->repr() == "CELU(alpha=0.5)");
  CHECK(nn::Softshrink()->repr() == "Softshrink(0.5)");
  CHECK(nn::Hardshrink(0.3)->repr() == "Hardshrink(0.3)");
  CHECK(nn::Threshold(0.1, 20.0)->repr() == "Threshold(threshold=0.1, value=20.0)");
  // Python's float repr (PyTorch's reprs and messages), from Python itself.
  CHECK(detail::python_float_repr(1e-5) == "1e-05");
  CHECK(detail::python_float_repr(1e16) == "1e+16");
  CHECK(detail::python_float_repr(2.5e17) == "2.5e+17");
  CHECK(detail::python_float_repr(-1.5e-7) == "-1.5e-07");
  CHECK(detail::python_float_repr(1e15) == "1000000000000000.0");
  CHECK(detail::python_float_repr(-0.0003) == "-0.0003");
  CHECK(detail::python_float_repr(12345678901234567.0) == "1.2345678901234568e+16");
  CHECK(detail::python_float_repr(1.0 / 3) == "0.3333333333333333");
  CHECK(nn::GLU()->repr() == "GLU(dim=-1)");
  CHECK(nn::Softmin(1)->repr() == "Softmin(dim=1)");
  CHECK(nn::PReLU()->repr() == "PReLU(num_parameters=1)");
  CHECK(nn::PixelShuffle(2)->repr() == "PixelShuffle(upscale_factor=2)");
  CHECK(nn::PixelUnshuffle(3)->repr() == "PixelUnshuffle(downscale_factor=3)");
  // PyTorch's messages.
  CHECK(error_of([] { Tensor<float>(F::glu(randn({2, 3}), 1)); }) == "Halving dimension must be even, but dimension 1 is size 3");
  CHECK(error_of([] { Tensor<float>(F::celu(randn({2, 3}), 0.0)); }) == "ZeroDivisionError: alpha cannot be 0 for CELU");
  CHECK(error_of([] { Tensor<float>(F::softshrink(randn({2, 3}), -1.0)); }) ==
        "lambda must be greater or equal to 0, but found to be -1.");
  CHECK(error_of([] { Tensor<float>(F::prelu(randn({2, 3}), ones({2}))); }) ==
        "Mismatch of parameter numbers and input channel size. Found parameter numbers = 2 and channel size = 3.");
  CHECK(error_of([] { F::pixel_shuffle(randn({1, 3, 2, 2}), 2); }) ==
        "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but "
        "input.size(-3)=3 is not divisible by 4");
  CHECK(error_of([] { F::pixel_unshuffle(randn({1, 1, 3, 4}), 2); }) ==
        "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=3 is not divisible by 2");
  // At 0, LogSigmoid's derivative is 1/2 (as PyTorch's), not a one-sided limit.
  auto z = zeros({3}).requires_grad_();
  sum(F::logsigmoid(z)).backward();
  CHECK(equal(z.grad(), full<float>({3}, 0.5f)));
}

template <class T>
void check_norms_distances(const std::string& tag, double rtol) {
  namespace F = nn::functional;
  using V = std::vector<Tensor<T>>;
  auto run = [&](const std::string& name, int inputs, const std::function<Tensor<T>(const V&)>& f) {
    check_forward_backward<T>("nn_nd_" + tag + "_" + name, inputs, f, rtol);
  };
  run("instance_norm_affine", 3, [](const V& v) { return F::instance_norm(v[0], {}, {}, v[1], v[2]); });
  run("instance_norm_2d", 1, [](const V& v) { return F::instance_norm(v[0], {}, {}, {}, {}, true, 0.1, 1e-3); });
  run("pairwise_distance", 2, [](const V& v) { return F::pairwise_distance(v[0], v[1]); });
  run("pairwise_distance_p1", 2, [](const V& v) {
    return F::pairwise_distance(v[0], v[1], F::PairwiseDistanceFuncOptions().p(1).keepdim(true));
  });
  run("cosine_similarity", 2, [](const V& v) { return F::cosine_similarity(v[0], v[1]); });
  run("cosine_similarity_dim0", 2, [](const V& v) { return F::cosine_similarity(v[0], v[1], F::CosineSimilarityFuncOptions().dim(0)); });
  run("normalize", 1, [](const V& v) { return F::normalize(v[0]); });
  run("normalize_p1", 1, [](const V& v) { return F::normalize(v[0], F::NormalizeFuncOptions().p(1).dim(-1)); });
  // Running statistics: updated by a training pass, then used in place of
  // the instances' own.
  const std::string k = "nn_nd_" + tag + "_running_";
  const auto x = test::golden<T>(k + "x");
  auto rm = test::golden<T>(k + "mean0").clone(), rv = test::golden<T>(k + "var0").clone();
  check_close(F::instance_norm(x, rm, rv, {}, {}, true, 0.2), test::golden<T>(k + "train"), rtol, rtol, k + "train");
  check_close(rm, test::golden<T>(k + "mean1"), rtol, rtol, k + "mean");
  check_close(rv, test::golden<T>(k + "var1"), rtol, rtol, k + "var");
  check_close(F::instance_norm(x, rm, rv, {}, {}, false), test::golden<T>(k + "eval"), rtol, rtol, k + "eval");
}

TEST_CASE("instance norm, pairwise distance, cosine similarity, normalize: as PyTorch's") {
  check_norms_distances<float>("f32", 2e-5);
  check_norms_distances<double>("f64", 1e-12);
  namespace F = nn::functional;
  // The modules: InstanceNorm with running statistics tracks them in
  // training and uses them in evaluation, as F::instance_norm above.
  nn::InstanceNorm1d in(nn::InstanceNormOptions(2).momentum(0.2).track_running_stats(true));
  in->running_mean.as<float>().copy_(test::golden<float>("nn_nd_f32_running_mean0"));
  in->running_var.as<float>().copy_(test::golden<float>("nn_nd_f32_running_var0"));
  const auto x = test::golden<float>("nn_nd_f32_running_x");
  check_close(in->forward(x), test::golden<float>("nn_nd_f32_running_train"), 2e-5, 2e-5, "InstanceNorm1d train");
  in->eval();
  check_close(in->forward(x), test::golden<float>("nn_nd_f32_running_eval"), 2e-5, 2e-5, "InstanceNorm1d eval");
  CHECK(in->num_batches_tracked.as<int64_t>().item() == 1);
  CHECK(nn::InstanceNorm2d(3)->repr() == "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)");
  CHECK(nn::InstanceNorm2d(3)->parameters().empty());
  CHECK(nn::PairwiseDistance()->repr() == "PairwiseDistance()");
  CHECK(nn::CosineSimilarity()->repr() == "CosineSimilarity()");
  const auto a = test::golden<float>("nn_nd_f32_cosine_similarity_in0"), b = test::golden<float>("nn_nd_f32_cosine_similarity_in1");
  check_close(nn::CosineSimilarity()->forward(a, b), test::golden<float>("nn_nd_f32_cosine_similarity_out"), 2e-5, 2e-5, "module");
  CHECK(error_of([] { F::instance_norm(randn({2, 3, 1})); }) ==
        "Expected more than 1 spatial element when training, got input size torch.Size([2, 3, 1])");
  CHECK(error_of([] { nn::InstanceNorm2d(3)->forward(randn({2, 3, 4})); }) == "no error");  // (C, H, W)
  CHECK(error_of([] { nn::InstanceNorm2d(3)->forward(randn({3, 4})); }) == "expected 3D or 4D input (got 2D input)");
}

template <class T>
void check_padding_modules(const std::string& tag, double rtol) {
  using V = std::vector<Tensor<T>>;
  auto run = [&](const std::string& name, const nn::Sequential& m) {
    check_forward_backward<T>("nn_pm_" + tag + "_" + name, 1, [&](const V& v) { return m->forward(v[0]); }, rtol);
  };
  run("zero_pad2d", nn::Sequential(nn::ZeroPad2d(nn::ZeroPad2dOptions({1, 1, 2, 0}))));
  run("constant_pad1d", nn::Sequential(nn::ConstantPad1d(nn::ConstantPad1dOptions({3, 1}, 3.5))));
  run("constant_pad2d", nn::Sequential(nn::ConstantPad2d(2, -1.0)));
  run("reflection_pad1d", nn::Sequential(nn::ReflectionPad1d(nn::ReflectionPad1dOptions({3, 1}))));
  run("reflection_pad2d", nn::Sequential(nn::ReflectionPad2d(nn::ReflectionPad2dOptions({1, 2, 3, 0}))));
  run("replication_pad1d", nn::Sequential(nn::ReplicationPad1d(2)));
  run("replication_pad2d", nn::Sequential(nn::ReplicationPad2d(nn::ReplicationPad2dOptions({1, 1, 2, 0}))));
  run("adaptive_avg_pool1d", nn::Sequential(nn::AdaptiveAvgPool1d(4)));
  run("adaptive_max_pool1d", nn::Sequential(nn::AdaptiveMaxPool1d(3)));
  run("constant_pad3d", nn::Sequential(nn::ConstantPad3d(nn::ConstantPad3dOptions({1, 0, 2, 1, 0, 1}, 3.5))));
  run("reflection_pad3d", nn::Sequential(nn::ReflectionPad3d(nn::ReflectionPad3dOptions({1, 2, 3, 0, 2, 1}))));
  run("replication_pad3d", nn::Sequential(nn::ReplicationPad3d(2)));
}

TEST_CASE("padding modules, 1-d adaptive pooling: values, gradients and reprs as PyTorch's") {
  check_padding_modules<float>("f32", 2e-5);
  check_padding_modules<double>("f64", 1e-12);
  CHECK(nn::ZeroPad2d(2)->repr() == "ZeroPad2d((2, 2, 2, 2))");
  CHECK(nn::ConstantPad1d(2, 3.5)->repr() == "ConstantPad1d(padding=(2, 2), value=3.5)");
  CHECK(nn::ConstantPad2d(nn::ConstantPad2dOptions({1, 0, 2, 1}, 0.0))->repr() == "ConstantPad2d(padding=(1, 0, 2, 1), value=0.0)");
  CHECK(nn::ReflectionPad1d(nn::ReflectionPad1dOptions({3, 1}))->repr() == "ReflectionPad1d((3, 1))");
  CHECK(nn::ReplicationPad2d(nn::ReplicationPad2dOptions({1, 1, 2, 0}))->repr() == "ReplicationPad2d((1, 1, 2, 0))");
  CHECK(nn::AdaptiveAvgPool1d(3)->repr() == "AdaptiveAvgPool1d(output_size=3)");
  CHECK(nn::AdaptiveMaxPool1d(4)->repr() == "AdaptiveMaxPool1d(output_size=4)");
  CHECK(nn::ReflectionPad3d(1)->repr() == "ReflectionPad3d((1, 1, 1, 1, 1, 1))");
  CHECK(nn::ReplicationPad3d(nn::ReplicationPad3dOptions({1, 2, 0, 1, 2, 0}))->repr() == "ReplicationPad3d((1, 2, 0, 1, 2, 0))");
  CHECK(nn::ConstantPad3d(2, 3.5)->repr() == "ConstantPad3d(padding=(2, 2, 2, 2, 2, 2), value=3.5)");
  CHECK(nn::ConstantPad3d(nn::ConstantPad3dOptions({1, 0, 2, 0, 0, 1}, -1.0))->repr() ==
        "ConstantPad3d(padding=(1, 0, 2, 0, 0, 1), value=-1.0)");
  // The non-constant modes pad 1, 2 or 3 dims of a batched or unbatched input (circular: batched), as PyTorch's.
  const std::string only = "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now";
  CHECK(error_of([] { nn::ReflectionPad3d(1)->forward(zeros({2, 3, 4})); }) == only);
  CHECK(error_of([] { nn::F::pad(zeros({1, 2, 3, 4}), nn::F::PadFuncOptions({1, 1}).mode(kReplicate)); }) == only);
  CHECK(error_of([] { nn::F::pad(zeros({4}), nn::F::PadFuncOptions({1, 1}).mode(kReflect)); }) == only);
  CHECK(error_of([] { nn::F::pad(zeros({2, 3, 4}), nn::F::PadFuncOptions({1, 1, 1, 1}).mode(kCircular)); }) ==
        "Invalid padding size, expected 2 but got 4");
  CHECK(error_of([] { nn::F::pad(zeros({3, 4}), nn::F::PadFuncOptions({1, 1}).mode(kCircular)); }) ==
        "Invalid padding size, expected 0 but got 2");
  CHECK(error_of([] { nn::F::pad(zeros({2, 3, 4}), nn::F::PadFuncOptions({1, 1, 2, 2, 1, 0}).mode(kReplicate)); }) == only);
  CHECK(nn::F::pad(zeros({2, 3, 4, 5}), nn::F::PadFuncOptions({1, 1, 2, 2, 1, 0}).mode(kReplicate)).sizes() ==
        Shape{2, 4, 8, 7});
}

TEST_CASE("padding, interpolation, adaptive max pooling, Bilinear, transposed convolution: values and gradients as PyTorch's") {
  check_resample<float>("f32", 2e-5);
  check_resample<double>("f64", 1e-12);
  CHECK(error_of([] { nn::F::pad(randn({1, 2, 3}), nn::PadFuncOptions({3, 3}).mode(kReflect)); }) ==
        "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (3, 3) at dimension 2 of input [1, 2, 3]");
}

TEST_CASE("init: Bilinear's and ConvTranspose2d's weights, dirac_ and orthogonal_") {
  manual_seed(2);
  nn::Bilinear bl(3, 4, 2);
  CHECK(bitwise_equal(bl->weight.as<float>(), test::golden<float>("nn_init_bilinear_weight")));
  CHECK(bitwise_equal(bl->bias.as<float>(), test::golden<float>("nn_init_bilinear_bias")));
  nn::ConvTranspose2d ct(nn::ConvTranspose2dOptions(4, 6, 3).groups(2));
  CHECK(bitwise_equal(ct->weight.as<float>(), test::golden<float>("nn_init_conv_transpose2d_weight")));
  CHECK(bitwise_equal(ct->bias.as<float>(), test::golden<float>("nn_init_conv_transpose2d_bias")));
  CHECK(ct->repr() == "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(1, 1), groups=2)");
  CHECK(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 6, {3, 2}).stride(2).padding(1).output_padding(1).dilation(2).bias(false))
            ->repr() ==
        "ConvTranspose2d(4, 6, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), dilation=(2, 2), output_padding=(1, 1), bias=False)");
  auto w = empty<float>({6, 2, 3, 3});
  nn::init::dirac_(w, 2);
  CHECK(bitwise_equal(w, test::golden<float>("nn_init_dirac")));
  for (const Shape& shape : {Shape{5, 3}, Shape{3, 5}, Shape{4, 2, 3}}) {
    auto q = empty<double>(shape);
    nn::init::orthogonal_(q, 2.0);
    const Tensor<double> m = q.reshape({shape[0], -1});
    // Rows (wide) or columns (tall) orthogonal, each of norm `gain`.
    const Tensor<double> gram = m.size(0) < m.size(1) ? matmul(m, m.t()) : matmul(m.t(), m);
    check_close(gram, eye<double>(gram.size(0)) * 4.0, 1e-12, 1e-12, "orthogonal_ Gram matrix");
  }
}

// Every layer's analytic Jacobian, for its input and its parameters (given
// to the functional form as inputs), against finite differences in double.
TEST_CASE("layers: gradcheck in double, inputs and parameters") {
  namespace F = nn::functional;
  using V = std::vector<Tensor<double>>;
  using Fn = std::function<Tensor<double>(const V&)>;
  manual_seed(11);
  auto r = [](Shape s) { return randn<double>(s); };
  const std::vector<std::tuple<const char*, Fn, V>> cases = {
      {"linear", [](const V& v) { return F::linear(v[0], v[1], v[2]); }, {r({2, 3, 4}), r({5, 4}), r({5})}},
      {"bilinear", [](const V& v) { return F::bilinear(v[0], v[1], v[2], v[3]); }, {r({3, 2}), r({3, 4}), r({2, 2, 4}), r({2})}},
      {"conv1d", [](const V& v) { return F::conv1d(v[0], v[1], v[2], 2, 1, 1, 2); }, {r({2, 4, 7}), r({6, 2, 3}), r({6})}},
      {"conv2d", [](const V& v) {
         return F::conv2d(v[0], v[1], v[2], F::Conv2dFuncOptions().stride({2, 1}).padding({1, 0}).dilation({1, 2}).groups(2));
       }, {r({2, 4, 5, 6}), r({2, 2, 3, 2}), r({2})}},
      {"conv_transpose2d", [](const V& v) {
         return F::conv_transpose2d(v[0], v[1], v[2], F::ConvTranspose2dFuncOptions().stride(2).padding(1).output_padding(1));
       }, {r({1, 2, 3, 3}), r({2, 3, 3, 3}), r({3})}},
      {"max_pool2d", [](const V& v) { return F::max_pool2d(v[0], nn::MaxPool2dOptions(3).stride(2).padding(1).ceil_mode(true)); }, {r({1, 2, 5, 6})}},
      {"avg_pool2d", [](const V& v) {
         return F::avg_pool2d(v[0], nn::AvgPool2dOptions(3).stride(2).padding(1).count_include_pad(false));
       }, {r({1, 2, 5, 6})}},
      {"max_pool1d", [](const V& v) { return F::max_pool1d(v[0], nn::MaxPool1dOptions(2)); }, {r({2, 3, 8})}},
      {"avg_pool1d", [](const V& v) { return F::avg_pool1d(v[0], nn::AvgPool1dOptions(3).stride(2)); }, {r({2, 3, 8})}},
      {"adaptive_avg_pool2d", [](const V& v) { return F::adaptive_avg_pool2d(v[0], {2, 3}); }, {r({1, 2, 5, 7})}},
      {"adaptive_max_pool2d", [](const V& v) { return F::adaptive_max_pool2d(v[0], {2, 3}); }, {r({1, 2, 5, 7})}},
      {"batch_norm", [](const V& v) { return F::batch_norm(v[0], zeros<double>({3}), ones<double>({3}), v[1], v[2], true, 0.1, 1e-5); },
       {r({4, 3, 2}), r({3}), r({3})}},
      {"layer_norm", [](const V& v) { return F::layer_norm(v[0], {4}, v[1], v[2]); }, {r({3, 4}), r({4}), r({4})}},
      {"group_norm", [](const V& v) { return F::group_norm(v[0], 2, v[1], v[2]); }, {r({2, 4, 3}), r({4}), r({4})}},
      // (Without padding_idx, whose row gets no gradient by definition.)
      {"embedding", [](const V& v) { return F::embedding(tensor<int64_t>({1, 0, 3, 3}), v[0]); }, {r({4, 3})}},
      {"pad_reflect", [](const V& v) { return F::pad(v[0], nn::PadFuncOptions({2, 1, 1, 0}).mode(kReflect)); }, {r({1, 2, 3, 4})}},
      {"pad_replicate", [](const V& v) { return F::pad(v[0], nn::PadFuncOptions({2, 3}).mode(kReplicate)); }, {r({2, 2, 3})}},
      {"interpolate_bilinear", [](const V& v) {
         return F::interpolate(v[0], nn::InterpolateFuncOptions().size({5, 3}).mode(kBilinear).align_corners(true));
       }, {r({1, 2, 3, 4})}},
      {"interpolate_nearest", [](const V& v) {
         return F::interpolate(v[0], nn::InterpolateFuncOptions().scale_factor({2.0, 1.5}).mode(kNearest));
       }, {r({1, 1, 2, 2})}},
      {"activations", [](const V& v) {
         const Tensor<double>& x = v[0];
         return Tensor<double>(F::elu(x) + F::selu(x) + F::gelu(x) + F::gelu(x, true) + F::silu(x) + F::mish(x) +
                               F::softplus(x, 2.0) + F::leaky_relu(x, 0.2) + F::hardswish(x) + F::tanh(x) + F::sigmoid(x) +
                               F::relu6(x * 4.0) + F::relu(x));
       }, {r({3, 5})}},
      {"softmax", [](const V& v) { return Tensor<double>(F::softmax(v[0], 1) + F::log_softmax(v[0], 0)); }, {r({3, 4})}},
  };
  for (const auto& [name, f, inputs] : cases) {
    INFO(std::string(name));
    CHECK(autograd::gradcheck(f, inputs));
  }
}

// ----- activations fused into the product before them -------------------------------
namespace F = nn::functional;

// The model's output and every gradient, for sum(model(x) * weights).
template <class T, class M>
std::vector<Tensor<T>> outputs_and_gradients(M& model, const Tensor<T>& x_in, const Tensor<T>& r) {
  Tensor<T> x = x_in.detach();
  x.requires_grad_(true);
  model->zero_grad();
  const Tensor<T> out = model(x);
  sum(out * r).backward();
  std::vector<Tensor<T>> all{out, x.grad()};
  for (auto& p : model->parameters()) all.push_back(p.template as<T>().grad());
  return all;
}

// The fused model against the same layers apart: an Identity between the
// product and its activation keeps the activation out of the epilogue.
template <class T, class Layer, class Act>
void check_fused_against_apart(Layer layer, const Tensor<T>& x, const Tensor<T>& r, double rtol) {
  if constexpr (std::is_same_v<T, double>) layer->template to<double>();
  nn::Sequential fused(layer, Act()), apart(layer, nn::Identity(), Act());
  const auto got = outputs_and_gradients(fused, x, r), want = outputs_and_gradients(apart, x, r);
  const char* what[] = {"output", "input gradient", "weight gradient", "bias gradient"};
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) check_close(got[i], want[i], rtol, rtol, what[i]);
}

template <class T, class Act>
void check_fused_activation(const char* act_name, double rtol) {
  INFO(act_name);
  manual_seed(5);
  // Shapes that reach every product path: packed tiles with ragged edges
  // (37 x 33), few outputs (7: dot products), one output (a matrix-vector
  // product), one row (batch 1), and a batch of sequences (3-D input).
  const std::vector<std::pair<Shape, int64_t>> linear_cases = {
      {{37, 20}, 33}, {{37, 20}, 7}, {{37, 20}, 1}, {{1, 20}, 33}, {{2, 5, 20}, 33}};
  for (const auto& [shape, out_features] : linear_cases) {
    INFO("Linear to " << out_features << " on " << shape);
    Shape out_shape = shape;
    out_shape.back() = out_features;
    for (const bool bias : {true, false})
      check_fused_against_apart<T, nn::Linear, Act>(nn::Linear(nn::LinearOptions(20, out_features).bias(bias)),
                                                    randn<T>(shape), randn<T>(out_shape), rtol);
  }
  // Conv2d (one group: the product per image) followed by the activation.
  for (const bool bias : {true, false}) {
    INFO("Conv2d, bias " << bias);
    check_fused_against_apart<T, nn::Conv2d, Act>(nn::Conv2d(nn::Conv2dOptions(3, 5, 3).padding(1).stride({1, 2}).bias(bias)),
                                                  randn<T>({6, 3, 7, 8}), randn<T>({6, 5, 7, 4}), rtol);
  }
  // A wider image: the product per image (5 filters, K = 27, 128 columns)
  // takes the unpacked short-K path where there are 32 vector registers,
  // whose whole tiles (4 rows) and edge tiles (the fifth row) each run the
  // epilogue.
  INFO("Conv2d, 8 x 16 image");
  check_fused_against_apart<T, nn::Conv2d, Act>(nn::Conv2d(nn::Conv2dOptions(3, 5, 3).padding(1)),
                                                randn<T>({2, 3, 8, 16}), randn<T>({2, 5, 8, 16}), rtol);
}

TEST_CASE("Linear and Conv2d followed by ReLU, Tanh or Sigmoid: the fused forward and backward equal the layers apart") {
  check_fused_activation<float, nn::ReLU>("ReLU", 1e-6);
  check_fused_activation<float, nn::Tanh>("Tanh", 1e-5);
  check_fused_activation<float, nn::Sigmoid>("Sigmoid", 1e-5);
  check_fused_activation<double, nn::ReLU>("ReLU", 1e-13);
  check_fused_activation<double, nn::Tanh>("Tanh", 1e-12);
  check_fused_activation<double, nn::Sigmoid>("Sigmoid", 1e-12);
  // ReLU in the epilogue is exact: the same values bit for bit.
  manual_seed(2);
  nn::Linear linear(64, 40);
  const Tensor<float> x = randn({50, 64});
  CHECK(bitwise_equal(nn::Sequential(linear, nn::ReLU())(x), Tensor<float>(F::relu(linear(x)))));
  // The node names are the activations' (the product's node is behind them).
  Tensor<float> xg = x.detach();
  xg.requires_grad_(true);
  CHECK(nn::Sequential(linear, nn::ReLU())(xg).grad_fn_name() == "ReluBackward0");
  CHECK(nn::Sequential(linear, nn::Sigmoid())(xg).grad_fn_name() == "SigmoidBackward0");
  nn::Static<nn::sized::Linear<64, 40>, nn::Tanh> fixed;
  CHECK(fixed(xg).grad_fn_name() == "TanhBackward0");
}

TEST_CASE("fused layers and the per-image convolution: gradcheck and gradgradcheck in double") {
  using V = std::vector<Tensor<double>>;
  using Fn = std::function<Tensor<double>(const V&)>;
  manual_seed(12);
  auto r = [](Shape s) { return randn<double>(s); };
  const auto conv = F::Conv2dFuncOptions().stride({2, 1}).padding({1, 2}).dilation({1, 2});
  const std::vector<std::tuple<const char*, Fn, V>> cases = {
      {"conv2d, one group", [=](const V& v) { return F::conv2d(v[0], v[1], v[2], conv); }, {r({5, 2, 5, 6}), r({3, 2, 3, 2}), r({3})}},
      {"conv2d, unbatched", [](const V& v) { return F::conv2d(v[0], v[1]); }, {r({2, 4, 4}), r({3, 2, 2, 2})}},
      {"conv2d + tanh", [=](const V& v) { return detail::conv2d_activated(v[0], v[1], v[2], conv, detail::Activation::tanh); },
       {r({2, 2, 5, 6}), r({3, 2, 3, 2}), r({3})}},
      {"linear + sigmoid", [](const V& v) { return detail::linear_activated(v[0], v[1], v[2], detail::Activation::sigmoid); },
       {r({4, 3}), r({5, 3}), r({5})}},
      {"linear + relu", [](const V& v) { return detail::linear_activated(v[0], v[1], Tensor<double>(), detail::Activation::relu); },
       {r({2, 4, 3}), r({5, 3})}},
      {"max_pool2d", [](const V& v) { return F::max_pool2d(v[0], nn::MaxPool2dOptions({2, 3}).stride(2).padding(1).dilation({2, 1})); },
       {r({2, 2, 6, 7})}},
  };
  for (const auto& [name, f, inputs] : cases) {
    INFO(std::string(name));
    CHECK(autograd::gradcheck(f, inputs));
    CHECK(autograd::gradgradcheck(f, inputs));
  }
}

TEST_CASE("max_pool2d: the 2 x 2 stride-2 path gives each window's maximum and its position") {
  // Odd sizes: the last row and column belong to no window.
  manual_seed(3);
  Tensor<float> x = randn<float>({2, 3, 9, 11});
  x.requires_grad_(true);
  const Tensor<float> y = F::max_pool2d(x, nn::MaxPool2dOptions(2));
  const Tensor<float> windows = x.detach().slice(2, 0, 8).slice(3, 0, 10).contiguous().view({2, 3, 4, 2, 5, 2});
  CHECK(equal(y.detach(), amax(windows, {3, 5})));
  // The gradient lands on each window's maximum (random values: no ties).
  y.backward(ones<float>({2, 3, 4, 5}));
  const std::vector<float> xs = x.detach().contiguous().to_vector(), gs = x.grad().contiguous().to_vector();
  std::vector<float> want(xs.size(), 0.f);
  for (int64_t p = 0; p < 6; ++p)
    for (int64_t oy = 0; oy < 4; ++oy)
      for (int64_t ox = 0; ox < 5; ++ox) {
        int64_t best = p * 99 + 2 * oy * 11 + 2 * ox;
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            const int64_t at = p * 99 + (2 * oy + i) * 11 + 2 * ox + j;
            if (xs[static_cast<std::size_t>(at)] > xs[static_cast<std::size_t>(best)]) best = at;
          }
        want[static_cast<std::size_t>(best)] = 1.f;
      }
  CHECK(gs == want);
}

TEST_CASE("max_pool2d: ties go to the first element of the window, NaN wins, as PyTorch's") {
  // Hand-checked: PyTorch scans each window row by row and moves to a later
  // element only when it is larger or NaN.
  Tensor<float> x = tensor<float>({1, 3, 3, 0, /**/ 3, 2, 0, NAN, /**/ 0, 0, 5, 5, /**/ 0, 0, 5, 5}).view({1, 1, 4, 4});
  x.requires_grad_(true);
  const Tensor<float> y = F::max_pool2d(x, nn::MaxPool2dOptions(2));
  CHECK(y.view({4}).to_vector()[0] == 3.0f);
  CHECK(std::isnan(y.view({4}).to_vector()[1]));
  y.backward(ones<float>({1, 1, 2, 2}));
  CHECK(x.grad().view({16}).to_vector() ==
        std::vector<float>{0, 1, 0, 0, /**/ 0, 0, 0, 1, /**/ 1, 0, 1, 0, /**/ 0, 0, 0, 0});
}

TEST_CASE("margin and likelihood losses: PyTorch's values and gradients, as functions and modules") {
  namespace F = nn::functional;
  using V = std::vector<Tensor<double>>;
  const auto sign = test::golden<double>("ml_sign"), multi_hot = test::golden<double>("ml_multi_hot");
  const auto classes = test::golden<int64_t>("ml_classes");
  const auto weight = test::golden<double>("ml_weight");
  const std::vector<std::pair<std::string, nn::Reduction>> reductions = {
      {"none", nn::Reduction::None}, {"mean", nn::Reduction::Mean}, {"sum", nn::Reduction::Sum}};
  for (const auto& [tag, r] : reductions) {
    const auto red = r;
    check_forward_backward<double>("ml_soft_margin_" + tag, 1, [&](const V& v) {
      return F::soft_margin_loss(v[0], sign, nn::SoftMarginLossOptions().reduction(red));
    }, 1e-12);
    check_forward_backward<double>("ml_multilabel_" + tag, 1, [&](const V& v) {
      return F::multilabel_soft_margin_loss(v[0], multi_hot, nn::MultiLabelSoftMarginLossOptions().reduction(red));
    }, 1e-12);
    check_forward_backward<double>("ml_hinge_" + tag, 1, [&](const V& v) {
      return F::hinge_embedding_loss(v[0], sign, nn::HingeEmbeddingLossOptions().margin(0.7).reduction(red));
    }, 1e-12);
    check_forward_backward<double>("ml_multi_margin_" + tag, 1, [&](const V& v) {
      return F::multi_margin_loss(v[0], classes, nn::MultiMarginLossOptions().reduction(red));
    }, 1e-12);
  }
  check_forward_backward<double>("ml_multilabel_weight", 1, [&](const V& v) {
    return nn::MultiLabelSoftMarginLoss(nn::MultiLabelSoftMarginLossOptions().weight(weight))->forward(v[0], multi_hot);
  }, 1e-12);
  check_forward_backward<double>("ml_multi_margin_p2", 1, [&](const V& v) {
    return nn::MultiMarginLoss(nn::MultiMarginLossOptions().p(2).margin(0.5).weight(weight))->forward(v[0], classes);
  }, 1e-12);
  check_forward_backward<double>("ml_multi_margin_1d", 1, [&](const V& v) {
    return F::multi_margin_loss(v[0], classes.narrow(0, 0, 1).reshape({}),
                                nn::MultiMarginLossOptions().reduction(nn::Reduction::None));
  }, 1e-12);
  const auto counts = test::golden<double>("ml_counts"), target = test::golden<double>("ml_target");
  check_forward_backward<double>("ml_poisson_log", 1, [&](const V& v) {
    return nn::PoissonNLLLoss()->forward(v[0], counts);
  }, 1e-12);
  check_forward_backward<double>("ml_poisson_full", 1, [&](const V& v) {
    return F::poisson_nll_loss(v[0], counts,
                               nn::PoissonNLLLossOptions().log_input(false).full(true).reduction(nn::Reduction::None));
  }, 1e-12);
  check_forward_backward<double>("ml_gaussian", 2, [&](const V& v) {
    return nn::GaussianNLLLoss()->forward(v[0], target, v[1]);
  }, 1e-12);
  check_forward_backward<double>("ml_gaussian_full_row", 2, [&](const V& v) {
    return F::gaussian_nll_loss(v[0], target, v[1], nn::GaussianNLLLossOptions().full(true).reduction(nn::Reduction::Sum));
  }, 1e-12);
  check_forward_backward<double>("ml_gaussian_last1", 2, [&](const V& v) {
    return F::gaussian_nll_loss(v[0], target, v[1], nn::GaussianNLLLossOptions().reduction(nn::Reduction::None));
  }, 1e-12);
  const auto x = test::golden<double>("ml_x");
  CHECK(error_of([&] { (void)F::gaussian_nll_loss(x, target, ones<double>({4, 2})); }) == "var is of incorrect size");
  CHECK(error_of([&] { (void)F::gaussian_nll_loss(x, target, full<double>({4}, -1.)); }) ==
        "var has negative entry/entries");
  CHECK(error_of([&] { (void)F::multi_margin_loss(x, classes, nn::MultiMarginLossOptions().p(3)); }) ==
        "only p == 1 and p == 2 supported");
  CHECK(error_of([&] { (void)F::multi_margin_loss(x, tensor<int64_t>({0, 1, 5, 0})); }) == "target out of range");
  // Multi-label margin: targets up to the first -1 (tools/make_golden.py: nn_multilabel_margin).
  const auto labels = test::golden<int64_t>("mm_target");
  for (const auto& [tag, red] : {std::pair{"none", nn::Reduction::None}, {"mean", nn::Reduction::Mean},
                                 {"sum", nn::Reduction::Sum}}) {
    check_forward_backward<double>(std::string("mm_") + tag, 1, [&](const V& v) {
      return F::multilabel_margin_loss(v[0], labels, nn::MultiLabelMarginLossOptions().reduction(red));
    }, 1e-12);
  }
  check_forward_backward<double>("mm_1d", 1, [&](const V& v) {
    return nn::MultiLabelMarginLoss(nn::MultiLabelMarginLossOptions().reduction(nn::Reduction::None))
        ->forward(v[0], labels.select(0, 1));
  }, 1e-12);
  // Hand-checked, as PyTorch: targets {3, 0} against classes {1, 2}: (1.1 + 1.3 + 0.4 + 0.6) / 4.
  CHECK(F::multilabel_margin_loss(tensor<double>({0.1, 0.2, 0.4, 0.8}), tensor<int64_t>({3, 0, -1, 1})).item() ==
        doctest::Approx(0.85));
  CHECK(F::multilabel_margin_loss(tensor<double>({0.5, 0.5}).unsqueeze(0), tensor<int64_t>({0, 0}).unsqueeze(0))
            .item() == 1.0);  // a class listed twice counts twice
  CHECK(F::multilabel_margin_loss(full<double>({}, 0.5), full<int64_t>({}, 0)).item() == 0.0);
  CHECK(nn::MultiLabelMarginLoss()->repr() == "MultiLabelMarginLoss()");
  CHECK(error_of([&] { (void)F::multilabel_margin_loss(x, tensor<int64_t>({3, 0, -1, 5}).expand({4, 4})); }) ==
        "inconsistent size [4, 4] for argument #2 'target'");
  CHECK(error_of([&] { (void)F::multilabel_margin_loss(x, Tensor<int64_t>(labels + int64_t{1})); }) ==
        "argument #2 'target' is out of range");
  CHECK(error_of([&] { (void)F::multilabel_margin_loss(x, full<int64_t>({4, 5}, -2)); }) ==
        "argument #2 'target' is out of range");
  CHECK(error_of([&] { (void)F::multilabel_margin_loss(zeros<double>({2, 3, 4}), zeros<int64_t>({2, 3, 4})); }) ==
        "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 3, 4]");
  // Far past exp's range the soft margin loss stays finite: -y x itself.
  CHECK(F::soft_margin_loss(tensor<float>({-200.f}), tensor<float>({1.f})).item() == 200.f);
}

TEST_CASE("F::unfold and F::fold, nn::Unfold and nn::Fold: PyTorch's values, gradients, reprs and errors") {
  namespace F = nn::functional;
  using V = std::vector<Tensor<double>>;
  check_forward_backward<double>("fo_unfold", 1, [](const V& v) { return F::unfold(v[0], F::UnfoldFuncOptions(2)); }, 1e-12);
  check_forward_backward<double>(
      "fo_unfold_options", 1,
      [](const V& v) { return F::unfold(v[0], F::UnfoldFuncOptions({2, 3}).dilation({1, 2}).padding(1).stride({2, 1})); },
      1e-12);
  check_forward_backward<double>("fo_unfold_unbatched", 1,
                                 [](const V& v) { return F::unfold(v[0], F::UnfoldFuncOptions(3).padding(1).stride(2)); },
                                 1e-12);
  check_forward_backward<double>("fo_fold", 1, [](const V& v) { return F::fold(v[0], F::FoldFuncOptions({5, 6}, 2)); },
                                 1e-12);
  check_forward_backward<double>(
      "fo_fold_options", 1,
      [](const V& v) {
        return F::fold(v[0], F::FoldFuncOptions({5, 6}, {2, 3}).dilation({1, 2}).padding(1).stride({2, 1}));
      },
      1e-12);
  check_forward_backward<double>(
      "fo_fold_unbatched", 1, [](const V& v) { return F::fold(v[0], F::FoldFuncOptions(4, 3).padding(1).stride(2)); },
      1e-12);
  // fold(unfold(x)) counts how many windows cover each pixel: 1 2 2 1 along
  // a side of 4 with a 2-wide window, so 4 at the centre, 1 at the corners.
  const auto x = ones<double>({1, 1, 4, 4});
  const Tensor<double> cover = F::fold(nn::Unfold(2)(x), F::FoldFuncOptions(4, 2));
  CHECK(cover.reshape({-1}).to_vector() == std::vector<double>{1, 2, 2, 1, 2, 4, 4, 2, 2, 4, 4, 2, 1, 2, 2, 1});
  CHECK(autograd::gradgradcheck([](const V& v) { return Tensor<double>(square(F::unfold(v[0], F::UnfoldFuncOptions(2)))); },
                                {randn<double>({1, 2, 3, 3})}));
  CHECK(nn::Unfold(nn::UnfoldOptions(2).padding(1))->repr() == "Unfold(kernel_size=2, dilation=1, padding=1, stride=1)");
  CHECK(nn::Unfold(nn::UnfoldOptions({2, 3}).dilation(2).padding({1, 0}).stride({1, 2}))->repr() ==
        "Unfold(kernel_size=(2, 3), dilation=2, padding=(1, 0), stride=(1, 2))");
  CHECK(nn::Fold(nn::FoldOptions({5, 6}, 2))->repr() ==
        "Fold(output_size=(5, 6), kernel_size=2, dilation=1, padding=0, stride=1)");

  const auto img = zeros<float>({2, 3, 5, 6});
  CHECK(error_of([&] { (void)F::unfold(img, F::UnfoldFuncOptions(7)); }) ==
        "Given input with spatial size (5, 6), kernel_size=(7, 7), dilation=(1, 1), padding=(0, 0), calculated shape "
        "of the array of sliding blocks as (-1, 0), but its components must be at least one.");
  CHECK(error_of([&] { (void)F::unfold(img, F::UnfoldFuncOptions(0)); }) ==
        "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 0");
  CHECK(error_of([&] { (void)F::unfold(img, F::UnfoldFuncOptions(2).stride(0)); }) ==
        "stride should be greater than zero, but got stride_height: 0 stride_width: 0");
  CHECK(error_of([&] { (void)F::unfold(img, F::UnfoldFuncOptions(2).padding(-1)); }) ==
        "padding should be non-negative, but got pad_height: -1 pad_width: -1");
  CHECK(error_of([&] { (void)F::unfold(img, F::UnfoldFuncOptions(2).dilation(0)); }) ==
        "dilation should be greater than zero, but got dilation_height: 0 dilation_width: 0");
  CHECK(error_of([] { (void)F::unfold(zeros<float>({5, 6}), F::UnfoldFuncOptions(2)); }) ==
        "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, "
        "but got: [5, 6]");
  const auto patches = zeros<float>({2, 12, 20});
  CHECK(error_of([&] { (void)F::fold(patches, F::FoldFuncOptions({5, 6}, 3)); }) ==
        "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
        "input.size(1)=12 and kernel_size=(3, 3).");
  CHECK(error_of([] { (void)F::fold(zeros<float>({2, 12, 19}), F::FoldFuncOptions({5, 6}, 2)); }) ==
        "Given output_size=(5, 6), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1), expected size "
        "of input's dimension 2 to match the calculated number of sliding blocks 4 * 5 = 20, but got input.size(2)=19.");
  CHECK(error_of([&] { (void)F::fold(patches.unsqueeze(0), F::FoldFuncOptions({5, 6}, 2)); }) ==
        "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for "
        "input, but got: [1, 2, 12, 20]");
}

TEST_CASE("ConvTranspose1d: PyTorch's initial weights, repr, values and gradients") {
  namespace F = nn::functional;
  using V = std::vector<Tensor<double>>;
  manual_seed(9);
  nn::ConvTranspose1d m(nn::ConvTranspose1dOptions(4, 6, 3).groups(2));
  CHECK(bitwise_equal(m->weight.as<float>(), test::golden<float>("ct_init_weight")));
  CHECK(bitwise_equal(m->bias.as<float>(), test::golden<float>("ct_init_bias")));
  std::ifstream file(std::string(TSR_GOLDEN_DIR) + "/nn_conv_transpose1d.txt");
  std::string first, second;
  std::getline(file, first);
  std::getline(file, second);
  CHECK(m->repr() == first);
  CHECK(nn::ConvTranspose1d(nn::ConvTranspose1dOptions(4, 6, 3).stride(2).padding(1).output_padding(1).dilation(2).bias(false))
            ->repr() == second);
  check_forward_backward<double>("ct_plain", 3, [](const V& v) { return F::conv_transpose1d(v[0], v[1], v[2]); }, 1e-12);
  check_forward_backward<double>("ct_options", 3, [](const V& v) {
    return F::conv_transpose1d(v[0], v[1], v[2], F::ConvTranspose1dFuncOptions().stride(2).padding(1).output_padding(1).groups(2));
  }, 1e-12);
  check_forward_backward<double>("ct_dilated_unbatched", 2, [](const V& v) {
    return F::conv_transpose1d(v[0], v[1], {}, F::ConvTranspose1dFuncOptions().stride(3).dilation(2));
  }, 1e-12);
  // The module runs the functional form with its weights.
  const Tensor<float> x = randn<float>({2, 4, 5});
  CHECK(equal(m(x), F::conv_transpose1d(x, m->weight.as<float>(), m->bias.as<float>(), F::ConvTranspose1dFuncOptions().groups(2))));
  CHECK(error_of([] { (void)F::conv_transpose1d(zeros<float>({1, 2, 3, 4}), zeros<float>({2, 1, 3})); }) ==
        "Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but got input of size: [1, 2, 3, 4]");
}

TEST_CASE("EmbeddingBag and F::embedding_bag: PyTorch's bags, gradients, repr and errors") {
  namespace F = nn::functional;
  using V = std::vector<Tensor<double>>;
  const auto idx = test::golden<int64_t>("eb_idx");
  const auto offsets = test::golden<int64_t>("eb_offsets"), offsets_last = test::golden<int64_t>("eb_offsets_last");
  const std::vector<std::pair<std::string, nn::EmbeddingBagMode>> modes = {
      {"sum", nn::EmbeddingBagMode::Sum}, {"mean", nn::EmbeddingBagMode::Mean}, {"max", nn::EmbeddingBagMode::Max}};
  for (const auto& [name, mode] : modes) {
    CAPTURE(name);
    const auto o = F::EmbeddingBagFuncOptions<double>().mode(mode);
    check_forward_backward<double>("eb_" + name, 1, [&](const V& v) {
      return F::embedding_bag(idx, v[0], F::EmbeddingBagFuncOptions<double>(o).offsets(offsets));
    }, 1e-12);
    check_forward_backward<double>("eb_" + name + "_padding", 1, [&](const V& v) {
      return F::embedding_bag(idx, v[0], F::EmbeddingBagFuncOptions<double>(o).offsets(offsets).padding_idx(4));
    }, 1e-12);
    check_forward_backward<double>("eb_" + name + "_last", 1, [&](const V& v) {
      return F::embedding_bag(idx, v[0], F::EmbeddingBagFuncOptions<double>(o).offsets(offsets_last).include_last_offset(true));
    }, 1e-12);
    check_forward_backward<double>("eb_" + name + "_2d", 1, [&](const V& v) {
      return F::embedding_bag(idx.view({2, 4}), v[0], o);
    }, 1e-12);
  }
  check_forward_backward<double>("eb_weighted", 2, [&](const V& v) {
    return F::embedding_bag(idx, v[0], F::EmbeddingBagFuncOptions<double>().mode(kSum).offsets(offsets).per_sample_weights(v[1]));
  }, 1e-12);
  // The module: its weight through the functional form; the mode's name in the repr.
  nn::EmbeddingBag bag(nn::EmbeddingBagOptions(6, 3).mode(kMax).padding_idx(-2));
  CHECK(bag->repr() == "EmbeddingBag(6, 3, mode=max, padding_idx=4)");
  CHECK(nn::EmbeddingBag(10, 3)->repr() == "EmbeddingBag(10, 3, mode=mean)");
  CHECK(equal(bag(idx, offsets),
              F::embedding_bag(idx, bag->weight.as<float>(), F::EmbeddingBagFuncOptions<float>().mode(kMax).offsets(offsets).padding_idx(4))));
  CHECK(equal(bag->weight.as<float>().select(0, 4), zeros<float>({3})));

  const auto w = zeros<double>({6, 2});
  CHECK(error_of([&] { (void)F::embedding_bag(idx, w); }) == "offsets has to be a 1D Tensor but got None");
  CHECK(error_of([&] { (void)F::embedding_bag(idx.view({2, 4}), w, F::EmbeddingBagFuncOptions<double>().offsets(offsets)); }) ==
        "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. "
        "However, found offsets of type Tensor");
  CHECK(error_of([&] { (void)F::embedding_bag(idx, w, F::EmbeddingBagFuncOptions<double>().offsets(tensor<int64_t>({1, 3}))); }) ==
        "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got 1");
  CHECK(error_of([&] { (void)F::embedding_bag(idx, w, F::EmbeddingBagFuncOptions<double>().offsets(tensor<int64_t>({0, 3, 9}))); }) ==
        "offsets[-1] can not be greater than input's length 8 but got offsets[-1] of 9");
  CHECK(error_of([&] { (void)F::embedding_bag(idx, w, F::EmbeddingBagFuncOptions<double>().offsets(tensor<int64_t>({0, 5, 3}))); }) ==
        "offsets must be non-decreasing, but offsets[2] = 3 is less than offsets[1] = 5");
  CHECK(error_of([&] {
          (void)F::embedding_bag(idx, w, F::EmbeddingBagFuncOptions<double>().offsets(offsets).per_sample_weights(ones<double>({8})));
        }) == "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got "
              "mode='mean'). Please open a feature request on GitHub.");
  CHECK(error_of([&] {
          (void)F::embedding_bag(idx, w, F::EmbeddingBagFuncOptions<double>().mode(kSum).offsets(offsets).per_sample_weights(ones<double>({7})));
        }) == "embedding_bag: If per_sample_weights ([7]) is not None, then it must have the same shape as the input ([8])");
  CHECK(error_of([] { (void)nn::EmbeddingBagOptions(6, 3).mode(kNone); }) == "mode has to be one of sum, mean or max");
  CHECK(error_of([] { (void)nn::EmbeddingBag(nn::EmbeddingBagOptions(10, 3).padding_idx(20)); }) ==
        "padding_idx must be within num_embeddings");
}

TEST_CASE("LocalResponseNorm: PyTorch's values, gradients and repr") {
  namespace F = nn::functional;
  using V = std::vector<Tensor<double>>;
  check_forward_backward<double>("lrn_3d", 1, [](const V& v) { return F::local_response_norm(v[0], 2); }, 1e-12);
  check_forward_backward<double>("lrn_4d", 1, [](const V& v) {
    return F::local_response_norm(v[0], F::LocalResponseNormFuncOptions(3).alpha(0.5).beta(1.5).k(2));
  }, 1e-12);
  check_forward_backward<double>("lrn_5d", 1, [](const V& v) {
    return F::local_response_norm(v[0], F::LocalResponseNormFuncOptions(5).alpha(0.1));
  }, 1e-12);
  CHECK(nn::LocalResponseNorm(2)->repr() == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)");
  CHECK(F::local_response_norm(zeros<float>({0, 3, 4}), 2).sizes() == Shape{0, 3, 4});
  CHECK(error_of([] { (void)F::local_response_norm(zeros<float>({2, 3}), 2); }) ==
        "Expected 3D or higher dimensionality input (got 2 dimensions)");
}

TEST_CASE("Conv1d, Conv2d, Conv3d with padding_mode reflect, replicate and circular as PyTorch's") {
  using V = std::vector<Tensor<double>>;
  auto check_module = [](const std::string& name, auto module) {
    module->template to<double>();
    for (auto& [pname, p] : module->named_parameters())
      p.template as<double>().detach().copy_(test::golden<double>("cpm_" + name + "_" + pname));
    check_forward_backward<double>("cpm_" + name, 1, [&](const V& v) { return module(v[0]); }, 1e-12);
    for (auto& [pname, p] : module->named_parameters())
      check_close(p.template as<double>().grad(), test::golden<double>("cpm_" + name + "_p_" + pname), 1e-12, 1e-12,
                  name + " " + pname);
    return module->repr();
  };
  std::string reprs;
  reprs += check_module("conv2d_reflect", nn::Conv2d(nn::Conv2dOptions(2, 3, {3, 2}).padding({1, 2}).padding_mode(kReflect))) + "\n";
  reprs += check_module("conv1d_circular_same",
                        nn::Conv1d(nn::Conv1dOptions(2, 3, 4).padding(kSame).dilation(2).padding_mode(kCircular))) + "\n";
  reprs += check_module("conv3d_replicate",
                        nn::Conv3d(nn::Conv3dOptions(2, 2, 2).stride(2).padding(1).bias(false).padding_mode(kReplicate))) + "\n";
  reprs += check_module("conv2d_unbatched_reflect", nn::Conv2d(nn::Conv2dOptions(2, 3, 3).padding(1).padding_mode(kReflect))) + "\n";
  std::ifstream in(std::string(TSR_GOLDEN_DIR) + "/nn_conv_padding_modes.txt");
  CHECK(reprs == std::string(std::istreambuf_iterator<char>(in), {}));
  // kZeros is the default; circular padding of an unbatched input is refused, as PyTorch refuses it.
  CHECK(nn::Conv2d(nn::Conv2dOptions(2, 3, 3).padding_mode(kZeros))->repr() == "Conv2d(2, 3, kernel_size=(3, 3), stride=(1, 1))");
  CHECK(error_of([] { nn::Conv2d(nn::Conv2dOptions(2, 3, 3).padding(1).padding_mode(kCircular))->forward(zeros({2, 4, 4})); }) ==
        "Invalid padding size, expected 2 but got 4");
  // A Sequential runs Conv2d + ReLU in one product with the activation in its epilogue: the padding applies there too.
  manual_seed(3);
  nn::Conv2d conv(nn::Conv2dOptions(2, 3, 3).padding(1).padding_mode(kReplicate));
  nn::Sequential seq(conv);
  seq->push_back(nn::ReLU());
  const Tensor<float> x = randn({1, 2, 4, 5});
  CHECK(allclose(seq(x), relu(conv(x)), 1e-6, 1e-6));
}

TEST_CASE("3-d layers: Conv3d, ConvTranspose3d, MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d, BatchNorm3d, InstanceNorm3d as PyTorch's") {
  namespace F = nn::functional;
  using V = std::vector<Tensor<double>>;
  using O = F::Conv3dFuncOptions;
  check_forward_backward<double>("l3_conv", 3, [](const V& v) {
    return F::conv3d(v[0], v[1], v[2], O().stride({2, 1, 2}).padding({1, 0, 1}).dilation({1, 2, 1}).groups(2));
  }, 1e-12);
  check_forward_backward<double>("l3_conv_same", 2, [](const V& v) {
    return F::conv3d(v[0], v[1], {}, O().padding(kSame).dilation({2, 1, 1}));
  }, 1e-12);
  check_forward_backward<double>("l3_conv_unbatched", 3, [](const V& v) { return F::conv3d(v[0], v[1], v[2]); }, 1e-12);
  check_forward_backward<float>("l3_conv_f32", 2, [](const std::vector<Tensor<float>>& v) {
    return F::conv3d(v[0], v[1], {}, O().padding(1));
  }, 2e-5, 1e-5);
  check_forward_backward<double>("l3_max", 1, [](const V& v) {
    return nn::MaxPool3d(nn::MaxPool3dOptions({2, 3, 3}).stride({1, 2, 2}).padding(1).dilation({2, 1, 1}).ceil_mode(true))
        ->forward(v[0]);
  }, 1e-12);
  // Ties (zeros after a ReLU): the gradient goes to the first in (depth, row, column) order, as PyTorch's.
  check_forward_backward<double>("l3_max_ties", 1, [](const V& v) { return F::max_pool3d(v[0], nn::MaxPool3dOptions(2)); }, 0);
  check_forward_backward<double>("l3_avg", 1, [](const V& v) {
    return F::avg_pool3d(v[0], nn::AvgPool3dOptions(3).stride(2).padding({1, 1, 0}).ceil_mode(true).count_include_pad(false));
  }, 1e-12);
  check_forward_backward<double>("l3_avg_pad", 1, [](const V& v) {
    return nn::AvgPool3d(nn::AvgPool3dOptions({2, 3, 3}).stride({1, 2, 2}).padding(1).ceil_mode(true))->forward(v[0]);
  }, 1e-12);
  check_forward_backward<double>("l3_avg_divisor", 1, [](const V& v) {
    return F::avg_pool3d(v[0], nn::AvgPool3dOptions(2).divisor_override(5));
  }, 1e-12);
  check_forward_backward<double>("l3_adaptive", 1, [](const V& v) { return nn::AdaptiveAvgPool3d(nn::ExpandingArray<3>({2, 3, 4}))(v[0]); }, 1e-12);
  check_forward_backward<double>("l3_adaptive_max", 1, [](const V& v) { return nn::AdaptiveMaxPool3d(nn::ExpandingArray<3>({2, 3, 4}))(v[0]); }, 1e-12);
  // Ties at zero in overlapping windows: each window's gradient goes to its first maximum, as PyTorch's.
  check_forward_backward<double>("l3_adaptive_max_ties", 1, [](const V& v) { return F::adaptive_max_pool3d(v[0], 3); }, 1e-12);
  check_forward_backward<double>("l3_adaptive_max_unbatched", 1, [](const V& v) { return F::adaptive_max_pool3d(v[0], {2, 2, 3}); }, 1e-12);
  using OT = F::ConvTranspose3dFuncOptions;
  check_forward_backward<double>("l3_convt", 3, [](const V& v) {
    return F::conv_transpose3d(v[0], v[1], v[2], OT().stride({2, 1, 2}).padding({1, 0, 1}).output_padding({1, 0, 1}).groups(2).dilation({1, 2, 1}));
  }, 1e-12);
  check_forward_backward<double>("l3_convt_unbatched", 2, [](const V& v) {
    return F::conv_transpose3d(v[0], v[1], {}, OT().padding({2, 1, 0}).dilation({2, 1, 1}));
  }, 1e-12);
  check_forward_backward<float>("l3_convt_f32", 3, [](const std::vector<Tensor<float>>& v) {
    return F::conv_transpose3d(v[0], v[1], v[2], OT().stride(2));
  }, 2e-5, 1e-5);
  {
    // The module runs the same function on its parameters.
    nn::ConvTranspose3d module(nn::ConvTranspose3dOptions(3, 2, {3, 2, 2}).stride(2));
    module->weight.as<float>().detach().copy_(test::golden<float>("l3_convt_f32_in1"));
    module->bias.as<float>().detach().copy_(test::golden<float>("l3_convt_f32_in2"));
    check_close(module(test::golden<float>("l3_convt_f32_in0")), test::golden<float>("l3_convt_f32_out"), 2e-5, 1e-5,
                "ConvTranspose3d");
    manual_seed(12);
    nn::ConvTranspose3d convt(nn::ConvTranspose3dOptions(2, 4, {1, 2, 3}));
    CHECK(bitwise_equal(convt->weight.as<float>(), test::golden<float>("l3_convt_init_weight")));
    CHECK(bitwise_equal(convt->bias.as<float>(), test::golden<float>("l3_convt_init_bias")));
    const std::string reprs = convt->repr() + "\n" +
        nn::ConvTranspose3d(nn::ConvTranspose3dOptions(2, 4, {2, 3, 3}).stride({1, 2, 1}).padding(1).output_padding({0, 1, 0})
                                .groups(2).bias(false).dilation({2, 1, 1}))->repr() + "\n";
    std::ifstream in(std::string(TSR_GOLDEN_DIR) + "/nn_layers_3d_convt.txt");
    CHECK(reprs == std::string(std::istreambuf_iterator<char>(in), {}));
    CHECK(error_of([] { (void)F::conv_transpose3d(zeros({1, 2, 3, 4, 4}), zeros({2, 3, 3, 3, 3}), {}, OT().stride(2).output_padding({2, 0, 0})); }) ==
          "output padding must be smaller than either stride or dilation, but got output_padding_depth: 2 "
          "output_padding_height: 0 output_padding_width: 0 stride_depth: 2 stride_height: 2 stride_width: 2 "
          "dilation_depth: 1 dilation_height: 1 dilation_width: 1");
    CHECK(error_of([] { (void)F::conv_transpose3d(zeros({1, 2, 1, 1, 1}), zeros({2, 3, 1, 1, 1}), {}, OT().padding(2)); }) ==
          "Given input size per channel: (1 x 1 x 1). Calculated output size per channel: (-3 x -3 x -3). Output size is too small");
    CHECK(error_of([] { (void)F::conv_transpose3d(zeros({1, 2, 3, 4, 4}), zeros({3, 3, 3, 3, 3})); }) ==
          "Given transposed=1, weight of size [3, 3, 3, 3, 3], expected input[1, 2, 3, 4, 4] to have 3 channels, but got 2 "
          "channels instead");
  }

  // The norms as modules: output, input and parameter gradients, running statistics.
  auto check_norm = [](const std::string& prefix, auto module) {
    module->template to<double>();
    module->weight.template as<double>().detach().copy_(test::golden<double>(prefix + "_weight"));
    module->bias.template as<double>().detach().copy_(test::golden<double>(prefix + "_bias"));
    check_forward_backward<double>(prefix, 1, [&](const V& v) { return module(v[0]); }, 1e-12);
    check_close(module->weight.template as<double>().grad(), test::golden<double>(prefix + "_p_weight"), 1e-12, 1e-12, prefix);
    check_close(module->bias.template as<double>().grad(), test::golden<double>(prefix + "_p_bias"), 1e-12, 1e-12, prefix);
  };
  nn::BatchNorm3d bn(3);
  check_norm("l3_batch_norm", bn);
  check_close(bn->running_mean.as<double>(), test::golden<double>("l3_batch_norm_running_mean"), 1e-12, 1e-12, "mean");
  check_close(bn->running_var.as<double>(), test::golden<double>("l3_batch_norm_running_var"), 1e-12, 1e-12, "var");
  check_norm("l3_instance_norm", nn::InstanceNorm3d(nn::InstanceNormOptions(3).affine(true)));

  // Conv3d's initial weights for a seed are PyTorch's, and the reprs.
  manual_seed(11);
  nn::Conv3d conv(nn::Conv3dOptions(2, 4, {1, 2, 3}));
  CHECK(bitwise_equal(conv->weight.as<float>(), test::golden<float>("l3_init_weight")));
  CHECK(bitwise_equal(conv->bias.as<float>(), test::golden<float>("l3_init_bias")));
  std::vector<std::shared_ptr<nn::Module>> modules{
      conv.ptr(),
      nn::Conv3d(nn::Conv3dOptions(2, 4, 3).stride({2, 1, 1}).padding(1).dilation({1, 2, 1}).groups(2).bias(false)).ptr(),
      nn::Conv3d(nn::Conv3dOptions(2, 4, 3).padding(kSame)).ptr(),
      nn::MaxPool3d(2).ptr(),
      nn::MaxPool3d(nn::MaxPool3dOptions({2, 3, 3}).stride({1, 2, 2}).padding(1).dilation(2).ceil_mode(true)).ptr(),
      nn::AvgPool3d(3).ptr(),
      nn::AvgPool3d(nn::AvgPool3dOptions({2, 3, 3}).stride(1).padding({0, 1, 1})).ptr(),
      nn::AdaptiveAvgPool3d(2).ptr(),
      nn::AdaptiveAvgPool3d(nn::ExpandingArray<3>({1, 2, 3})).ptr(),
      nn::BatchNorm3d(3).ptr(),
      nn::InstanceNorm3d(3).ptr(),
      nn::AdaptiveMaxPool3d(2).ptr(),
      nn::AdaptiveMaxPool3d(nn::ExpandingArray<3>({1, 2, 3})).ptr()};
  std::string reprs;
  for (const auto& m : modules) reprs += m->repr() + "\n";
  std::ifstream in(std::string(TSR_GOLDEN_DIR) + "/nn_layers_3d.txt");
  CHECK(reprs == std::string(std::istreambuf_iterator<char>(in), {}));

  // Adaptive max pooling: an empty batch and a zero output size give empty results, as in PyTorch.
  CHECK(F::adaptive_max_pool3d(zeros({0, 2, 3, 4, 4}), 2).sizes() == Shape{0, 2, 2, 2, 2});
  CHECK(F::adaptive_max_pool3d(zeros({1, 2, 3, 4, 4}), {0, 1, 1}).sizes() == Shape{1, 2, 0, 1, 1});
  CHECK(F::adaptive_max_pool2d(zeros({1, 2, 3, 4}), {0, 1}).sizes() == Shape{1, 2, 0, 1});

  // PyTorch's messages.
  CHECK(error_of([] { (void)F::adaptive_max_pool3d(zeros({2, 3, 4}), 2); }) ==
        "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: [2, 3, 4]");
  CHECK(error_of([] { (void)F::adaptive_max_pool2d(zeros({2, 3}), 2); }) ==
        "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [2, 3]");
  CHECK(error_of([] { (void)F::adaptive_max_pool3d(zeros({1, 2, 0, 4, 4}), 2); }) ==
        "adaptive_max_pool3d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
        "[1, 2, 0, 4, 4] with dimension 2 being empty");
  CHECK(error_of([] { (void)F::adaptive_max_pool3d(zeros({1, 2, 3, 4, 4}), {-1, 1, 1}); }) ==
        "Trying to create tensor with negative dimension -1: [1, 2, -1, 1, 1]");
  CHECK(error_of([] { (void)F::conv3d(zeros({1, 2, 3, 4, 4}), zeros({2, 3, 1, 1, 1})); }) ==
        "Given groups=1, weight of size [2, 3, 1, 1, 1], expected input[1, 2, 3, 4, 4] to have 3 channels, but got 2 "
        "channels instead");
  CHECK(error_of([] { (void)F::conv3d(zeros({1, 2, 3, 4, 4, 4}), zeros({2, 2, 1, 1, 1})); }) ==
        "Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: [1, 2, 3, 4, 4, 4]");
  CHECK(error_of([] { (void)F::conv3d(zeros({1, 2, 3, 4, 4}), zeros({2, 2, 4, 1, 1})); }) ==
        "Calculated padded input size per channel: (3 x 4 x 4). Kernel size: (4 x 1 x 1). Kernel size can't be greater "
        "than actual input size");
  CHECK(error_of([] { (void)F::max_pool3d(zeros({2, 3, 4}), nn::MaxPool3dOptions(2)); }) ==
        "non-empty 4D or 5D (batch mode) tensor expected for input");
  CHECK(error_of([] { (void)F::max_pool3d(zeros({1, 2, 3, 4, 4}), nn::MaxPool3dOptions(2).padding(2)); }) ==
        "pad should be at most half of kernel size, but got pad=2 and kernel_size=2");
  CHECK(error_of([] { (void)F::max_pool3d(zeros({1, 2, 1, 4, 4}), nn::MaxPool3dOptions(2)); }) ==
        "Given input size: (2x1x4x4). Calculated output size: (2x0x2x2). Output size is too small");
  // A window taller than the input: no output (the count rounds down), as PyTorch; never a read past the input.
  CHECK(error_of([] { (void)F::max_pool2d(zeros({1, 1, 1, 4}), nn::MaxPool2dOptions(2)); }) ==
        "Given input size: (1x1x4). Calculated output size: (1x0x2). Output size is too small");
  CHECK(error_of([] { (void)F::avg_pool3d(zeros({1, 2, 1, 4, 4}), nn::AvgPool3dOptions(2)); }) ==
        "input image (T: 1 H: 4 W: 4) smaller than kernel size (kT: 2 kH: 2 kW: 2)");
  CHECK(error_of([] { (void)F::adaptive_avg_pool3d(zeros({2, 3, 4}), {2, 2, 2}); }) ==
        "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got [2, 3, 4]");
  CHECK(error_of([] { (void)nn::BatchNorm3d(3)(zeros({2, 3, 4, 4})); }) == "expected 5D input (got 4D input)");
}
