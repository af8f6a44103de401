// nn, sequence models: RNN, LSTM, GRU and their cells, attention and the
// transformer encoder, against PyTorch 1.13 (tools/make_golden.py:
// nn_recurrent, nn_attention).
#include <fstream>
#include <nn/nn.hpp>

#include "common.hpp"

using namespace tsr;
using test::bitwise_equal;
using test::check_close;
using test::error_of;
using test::keys_of;

namespace {

std::string golden_text(const std::string& file) {
  std::ifstream in(std::string(TSR_GOLDEN_DIR) + "/" + file);
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

// Case `prefix` of make_golden.py's _save_module_case: f(inputs)'s value,
// the inputs' gradients and every parameter's gradient.
template <class T, class Holder>
void check_module_case(const std::string& prefix, const Holder& model, int inputs,
                       const std::function<Tensor<T>(const std::vector<Tensor<T>>&)>& f, double rtol) {
  test::check_forward_backward<T>(prefix, inputs, f, rtol);
  for (const auto& [name, p] : model->named_parameters())
    check_close(p.template as<T>().grad(), test::golden<T>(prefix + "_p_" + name), rtol, rtol, prefix + " grad of " + name);
}

template <class Holder>
Holder seeded(uint64_t seed, const std::function<Holder()>& make) {
  manual_seed(seed);
  return make();
}

template <class T>
Tensor<T> flat(std::initializer_list<Tensor<T>> parts) {
  std::vector<Tensor<T>> flattened;
  for (const Tensor<T>& p : parts) flattened.push_back(p.flatten());
  return cat(flattened);
}

}  // namespace

TEST_CASE("recurrent layers initialize as PyTorch's, with its names and reprs") {
  manual_seed(3);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  nn::GRU gru(nn::GRUOptions(3, 4).bias(false));
  nn::LSTMCell cell(3, 4);
  std::string text;
  auto add = [&](const std::string& key, const nn::Module& m) {
    text += "=== " + key + "\n" + m.repr() + "\n" + keys_of(m.state_dict()) + "\n";
    for (const auto& [name, p] : m.named_parameters())
      CHECK_MESSAGE(bitwise_equal(p.as<float>(), test::golden<float>("nn_init_" + key + "_" + name)), std::string(key + "." + name));
  };
  add("lstm", *lstm);
  add("gru", *gru);
  add("lstm_cell", *cell);
  CHECK(text + "=== end\n" == golden_text("nn_recurrent.txt"));
  CHECK(nn::RNNCell(nn::RNNCellOptions(3, 4).bias(false).nonlinearity(kReLU))->repr() ==
        "RNNCell(3, 4, bias=False, nonlinearity=relu)");
  CHECK(nn::RNN(nn::RNNOptions(3, 4).nonlinearity(kReLU).batch_first(true).dropout(0.5))->repr() ==
        "RNN(3, 4, batch_first=True, dropout=0.5)");
}

template <class T>
void check_recurrent(const std::string& tag, double rtol) {
  using V = std::vector<Tensor<T>>;
  auto prefix = [&](const std::string& name) { return "nn_rec_" + tag + "_" + name; };
  auto make = [](auto holder) {
    holder->template to<T>();
    return holder;
  };
  {
    auto m = make(seeded<nn::LSTM>(50, [] { return nn::LSTM(nn::LSTMOptions(3, 5).num_layers(2).bidirectional(true)); }));
    check_module_case<T>(prefix("lstm_bidirectional"), m, 3, [&](const V& v) {
      auto [out, state] = m(v[0], std::make_tuple(v[1], v[2]));
      return flat<T>({out, std::get<0>(state), std::get<1>(state)});
    }, rtol);
  }
  {
    auto m = make(seeded<nn::GRU>(51, [] { return nn::GRU(nn::GRUOptions(3, 4).batch_first(true)); }));
    check_module_case<T>(prefix("gru_batch_first"), m, 1, [&](const V& v) {
      auto [out, h] = m(v[0].transpose(0, 1));
      return flat<T>({out, h});
    }, rtol);
  }
  {
    auto m = make(seeded<nn::RNN>(52, [] {
      return nn::RNN(nn::RNNOptions(3, 4).num_layers(2).nonlinearity(kReLU).bias(false));
    }));
    check_module_case<T>(prefix("rnn_relu_unbatched"), m, 2, [&](const V& v) {
      auto [out, h] = m(v[0], v[1]);
      return flat<T>({out, h});
    }, rtol);
  }
  {
    auto m = make(seeded<nn::RNN>(53, [] { return nn::RNN(2, 3); }));
    check_module_case<T>(prefix("rnn_tanh"), m, 1, [&](const V& v) {
      auto [out, h] = m(v[0]);
      return flat<T>({out, h});
    }, rtol);
  }
  {
    auto m = make(seeded<nn::GRU>(54, [] { return nn::GRU(nn::GRUOptions(2, 3).num_layers(2).bidirectional(true)); }));
    check_module_case<T>(prefix("gru_bidirectional"), m, 2, [&](const V& v) {
      auto [out, h] = m(v[0], v[1]);
      return flat<T>({out, h});
    }, rtol);
  }
  {
    auto m = make(seeded<nn::LSTMCell>(55, [] { return nn::LSTMCell(3, 4); }));
    check_module_case<T>(prefix("lstm_cell"), m, 3, [&](const V& v) {
      auto [h, c] = m(v[0], std::make_tuple(v[1], v[2]));
      return flat<T>({h, c});
    }, rtol);
  }
  {
    auto m = make(seeded<nn::GRUCell>(56, [] { return nn::GRUCell(3, 4); }));
    check_module_case<T>(prefix("gru_cell_unbatched"), m, 2, [&](const V& v) { return m(v[0], v[1]); }, rtol);
  }
  {
    auto m = make(seeded<nn::RNNCell>(57, [] { return nn::RNNCell(3, 4); }));
    check_module_case<T>(prefix("rnn_cell"), m, 1, [&](const V& v) { return m(v[0]); }, rtol);
  }
}

TEST_CASE("recurrent layers and cells: values and gradients as PyTorch's, float and double") {
  check_recurrent<float>("f32", 2e-5);
  check_recurrent<double>("f64", 1e-11);
}

TEST_CASE("recurrent layers: dropout between layers only in training, gradcheck, errors") {
  manual_seed(7);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).dropout(0.5));
  const auto x = randn({5, 2, 3});
  lstm->eval();
  const Tensor<float> evaluated = std::get<0>(lstm(x));
  CHECK(bitwise_equal(evaluated, std::get<0>(lstm(x))));  // no randomness in evaluation
  lstm->train();
  CHECK(!bitwise_equal(evaluated, std::get<0>(lstm(x))));

  // The analytic Jacobian of a whole bidirectional GRU against finite differences.
  manual_seed(8);
  nn::GRU gru(nn::GRUOptions(2, 3).bidirectional(true));
  gru->to<double>();
  const auto w = gru->named_parameters();
  CHECK(autograd::gradcheck([&](const std::vector<Tensor<double>>& v) { return std::get<0>(gru(v[0], v[1])); },
                            {randn<double>({3, 2, 2}), randn<double>({2, 2, 3})}));
  manual_seed(9);
  nn::LSTMCell cell(2, 3);
  cell->to<double>();
  CHECK(autograd::gradcheck(
      [&](const std::vector<Tensor<double>>& v) { return std::get<1>(cell(v[0], std::make_tuple(v[1], v[2]))); },
      {randn<double>({2, 2}), randn<double>({2, 3}), randn<double>({2, 3})}));

  nn::LSTM two(nn::LSTMOptions(3, 4).num_layers(2));
  nn::RNN rnn(3, 4);
  CHECK(error_of([&] { two(randn({5, 2, 6})); }) == "input.size(-1) must be equal to input_size. Expected 3, got 6");
  CHECK(error_of([&] { two(randn({5, 2, 3, 1})); }) == "LSTM: Expected input to be 2-D or 3-D but received 4-D tensor");
  CHECK(error_of([&] { two(randn({5, 2, 3}), std::make_tuple(randn({1, 2, 4}), randn({2, 2, 4}))); }) ==
        "Expected hidden[0] size (2, 2, 4), got [1, 2, 4]");
  CHECK(error_of([&] { two(randn({5, 2, 3}), std::make_tuple(randn({2, 2, 4}), randn({2, 3, 4}))); }) ==
        "Expected hidden[1] size (2, 2, 4), got [2, 3, 4]");
  CHECK(error_of([&] { rnn(randn({5, 2, 3}), randn({1, 3, 4})); }) == "Expected hidden size (1, 2, 4), got [1, 3, 4]");
  CHECK(error_of([&] { rnn(randn({5, 3}), randn({1, 3, 4})); }) ==
        "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor");
  CHECK(error_of([&] { nn::LSTMCell(3, 4)(randn({5, 2, 3})); }) ==
        "LSTMCell: Expected input to be 1-D or 2-D but received 3-D tensor");
  CHECK(error_of([&] { nn::LSTMCell(3, 4)(randn({5, 4})); }) == "input has inconsistent input_size: got 4 expected 3");
  CHECK(error_of([&] { nn::GRUCell(3, 4)(randn({5, 3}), randn({4, 4})); }) ==
        "Input batch size 5 doesn't match hidden0 batch size 4");
  CHECK(error_of([&] { nn::RNNCell(3, 4)(randn({5, 3}), randn({5, 3})); }) ==
        "hidden0 has inconsistent hidden_size: got 3, expected 4");
  CHECK(error_of([&] { nn::LSTM(nn::LSTMOptions(3, 4).dropout(1.5)); }) ==
        "dropout should be a number in range [0, 1] representing the probability of an element being zeroed");
}

// ----- attention and transformers (make_golden.py: nn_attention) ---------------------

TEST_CASE("attention and transformer layers initialize as PyTorch's, with its names and reprs") {
  manual_seed(4);
  nn::MultiheadAttention mha(8, 2);
  nn::TransformerEncoder encoder(nn::TransformerEncoderOptions(
                                     nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16)), 2)
                                     .norm(nn::LayerNorm(nn::LayerNormOptions({8}))));
  // The encoder's copies of its layer moved nothing in the random stream.
  CHECK(bitwise_equal(rand<float>({3}), test::golden<float>("nn_init_after_encoder")));
  std::string text;
  auto add = [&](const std::string& key, const nn::Module& m) {
    text += "=== " + key + "\n" + m.repr() + "\n" + keys_of(m.state_dict()) + "\n";
    for (const auto& [name, t] : m.state_dict())
      CHECK_MESSAGE(bitwise_equal(t.as<float>(), test::golden<float>("nn_init_" + key + "_" + name)), std::string(key + "." + name));
  };
  add("mha", *mha);
  add("encoder", *encoder);
  CHECK(text + "=== end\n" == golden_text("nn_attention.txt"));
}

template <class T>
void check_attention(const std::string& tag, double rtol) {
  namespace F = nn::functional;
  using V = std::vector<Tensor<T>>;
  auto prefix = [&](const std::string& name) { return "nn_attn_" + tag + "_" + name; };
  auto mask = [](const std::string& name) { return Tensor<bool>(test::golden<double>("nn_attn_mask_" + name) > 0.5); };
  auto make = [](auto holder) {
    holder->template to<T>();
    return holder;
  };
  auto fn = [&](const std::string& name, int inputs, const std::function<Tensor<T>(const V&)>& f) {
    test::check_forward_backward<T>(prefix(name), inputs, f, rtol);
  };
  fn("sdpa", 3, [](const V& v) { return F::scaled_dot_product_attention(v[0], v[1], v[2]); });
  fn("sdpa_bool_mask", 3, [&](const V& v) { return F::scaled_dot_product_attention(v[0], v[1], v[2], mask("take")); });
  fn("sdpa_float_mask", 4, [](const V& v) { return F::scaled_dot_product_attention(v[0], v[1], v[2], v[3]); });
  fn("sdpa_causal", 3, [](const V& v) { return F::scaled_dot_product_attention(v[0], v[1], v[2], {}, 0.0, true); });
  {
    auto m = make(seeded<nn::MultiheadAttention>(70, [] { return nn::MultiheadAttention(8, 2); }));
    check_module_case<T>(prefix("mha_self"), m, 1, [&](const V& v) {
      auto [out, w] = m(v[0], v[0], v[0], mask("padding"));
      return flat<T>({out, w});
    }, rtol);
  }
  {
    auto m = make(seeded<nn::MultiheadAttention>(71, [] {
      return nn::MultiheadAttention(nn::MultiheadAttentionOptions(6, 3).batch_first(true));
    }));
    check_module_case<T>(prefix("mha_cross_batch_first"), m, 4, [&](const V& v) {
      auto [out, w] = m(v[0], v[1], v[2], AnyTensor(), true, v[3], false);
      return flat<T>({out, w});
    }, rtol);
  }
  {
    auto m = make(seeded<nn::MultiheadAttention>(72, [] {
      return nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 1).bias(false));
    }));
    check_module_case<T>(prefix("mha_unbatched_bool_mask"), m, 2, [&](const V& v) {
      auto [out, w] = m(v[0], v[1], v[1], AnyTensor(), false, mask("masked"));
      CHECK(!w.defined());
      return out;
    }, rtol);
  }
  {
    auto m = make(seeded<nn::TransformerEncoderLayer>(73, [] {
      return nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0));
    }));
    // The causal mask as an additive float mask.
    auto causal = zeros<T>({5, 5});
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = i + 1; j < 5; ++j) causal(i, j) = -std::numeric_limits<T>::infinity();
    check_module_case<T>(prefix("encoder_layer"), m, 1, [&](const V& v) { return m(v[0], causal); }, rtol);
  }
  {
    auto m = make(seeded<nn::TransformerEncoderLayer>(74, [] {
      return nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2)
                                             .dim_feedforward(16)
                                             .dropout(0)
                                             .activation(kGELU)
                                             .batch_first(true)
                                             .norm_first(true));
    }));
    check_module_case<T>(prefix("encoder_layer_norm_first_gelu"), m, 1,
                         [&](const V& v) { return m(v[0], AnyTensor(), mask("padding")); }, rtol);
  }
  {
    auto m = make(seeded<nn::TransformerEncoder>(75, [] {
      return nn::TransformerEncoder(
          nn::TransformerEncoderOptions(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0)),
                                        2)
              .norm(nn::LayerNorm(nn::LayerNormOptions({8}))));
    }));
    check_module_case<T>(prefix("encoder"), m, 1, [&](const V& v) { return m(v[0]); }, rtol);
  }
}

TEST_CASE("attention, multi-head attention, transformer encoder: values and gradients as PyTorch's, float and double") {
  check_attention<float>("f32", 5e-5);
  check_attention<double>("f64", 1e-11);
}

TEST_CASE("attention: gradcheck, dropout and errors") {
  namespace F = nn::functional;
  CHECK(autograd::gradcheck(
      [](const std::vector<Tensor<double>>& v) { return F::scaled_dot_product_attention(v[0], v[1], v[2], {}, 0.0, true); },
      {randn<double>({2, 3, 2}), randn<double>({2, 3, 2}), randn<double>({2, 3, 2})}));
  manual_seed(12);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 2).dropout(0.5));
  mha->to<double>();
  mha->eval();  // no dropout: the same function at every call
  CHECK(autograd::gradcheck(
      [&](const std::vector<Tensor<double>>& v) { return std::get<0>(mha(v[0], v[1], v[1])); },
      {randn<double>({3, 1, 4}), randn<double>({2, 1, 4})}));
  // Dropout on the attention weights in training only.
  const auto x = randn({3, 2, 4});
  mha->to<float>();
  mha->train();
  const Tensor<float> trained = std::get<0>(mha(x, x, x));
  mha->eval();
  const Tensor<float> evaluated = std::get<0>(mha(x, x, x));
  CHECK(bitwise_equal(evaluated, std::get<0>(mha(x, x, x))));
  CHECK(!bitwise_equal(evaluated, trained));

  nn::MultiheadAttention m(8, 2);
  const auto q = randn({5, 3, 8});
  CHECK(error_of([&] { m(randn({5, 3, 6}), q, q); }) == "was expecting embedding dimension of 8, but got 6");
  CHECK(error_of([&] { m(q, q, q, AnyTensor(), true, Tensor<bool>(ones({4, 4}) > 0)); }) ==
        "The shape of the 2D attn_mask is torch.Size([4, 4]), but should be (5, 5).");
  CHECK(error_of([&] { m(q, q, q, Tensor<bool>(ones({3, 4}) > 0)); }) ==
        "expecting key_padding_mask shape of (3, 5), but got torch.Size([3, 4])");
  CHECK(error_of([&] { m(randn({1, 5, 3, 8}), q, q); }) ==
        "query should be unbatched 2D or batched 3D tensor but received 4-D query tensor");
  CHECK(error_of([&] { nn::MultiheadAttention(8, 3); }) == "embed_dim must be divisible by num_heads");
  CHECK(error_of([&] { F::scaled_dot_product_attention(q, q, q, Tensor<bool>(ones({5, 5}) > 0), 0.0, true); }) ==
        "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  CHECK(error_of([] { nn::init::calculate_gain(kGELU); }) == "Unsupported nonlinearity gelu");
}

// ----- transformer decoder and Transformer (make_golden.py: nn_transformer_decoder) ----

TEST_CASE("TransformerDecoder and Transformer initialize as PyTorch's, with its names and reprs") {
  manual_seed(5);
  nn::TransformerDecoder decoder(
      nn::TransformerDecoderOptions(nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16)), 2)
          .norm(nn::LayerNorm(nn::LayerNormOptions({8}))));
  nn::Transformer transformer(nn::TransformerOptions(8, 2, 2, 1).dim_feedforward(16));
  CHECK(bitwise_equal(rand<float>({3}), test::golden<float>("td_init_after")));
  std::string text;
  auto add = [&](const std::string& key, const nn::Module& m) {
    text += "=== " + key + "\n" + m.repr() + "\n" + keys_of(m.state_dict()) + "\n";
    for (const auto& [name, t] : m.state_dict())
      CHECK_MESSAGE(bitwise_equal(t.as<float>(), test::golden<float>("td_init_" + key + "_" + name)), std::string(key + "." + name));
  };
  add("decoder", *decoder);
  add("transformer", *transformer);
  CHECK(text + "=== end\n" == golden_text("nn_transformer_decoder.txt"));
  CHECK(equal(nn::TransformerImpl::generate_square_subsequent_mask(4), test::golden<float>("td_causal")));
}

template <class T>
void check_decoders(const std::string& tag, double rtol) {
  using V = std::vector<Tensor<T>>;
  auto prefix = [&](const std::string& name) { return "td_" + tag + "_" + name; };
  auto mask = [](const std::string& name) { return Tensor<bool>(test::golden<double>("td_" + name) > 0.5); };
  auto make = [](auto holder) {
    holder->template to<T>();
    return holder;
  };
  const Tensor<T> causal = nn::TransformerImpl::generate_square_subsequent_mask<T>(4);
  {
    auto m = make(seeded<nn::TransformerDecoderLayer>(80, [] {
      return nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16).dropout(0));
    }));
    check_module_case<T>(prefix("decoder_layer"), m, 2, [&](const V& v) { return m(v[0], v[1], causal); }, rtol);
  }
  {
    auto m = make(seeded<nn::TransformerDecoderLayer>(81, [] {
      return nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(8, 2)
                                             .dim_feedforward(16)
                                             .dropout(0)
                                             .activation(kGELU)
                                             .batch_first(true)
                                             .norm_first(true));
    }));
    check_module_case<T>(prefix("decoder_layer_norm_first_gelu"), m, 2, [&](const V& v) {
      return m(v[0], v[1], AnyTensor(), AnyTensor(), mask("tgt_padding"), mask("memory_padding"));
    }, rtol);
  }
  {
    auto m = make(seeded<nn::TransformerDecoder>(82, [] {
      return nn::TransformerDecoder(
          nn::TransformerDecoderOptions(nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16).dropout(0)),
                                        2)
              .norm(nn::LayerNorm(nn::LayerNormOptions({8}))));
    }));
    check_module_case<T>(prefix("decoder"), m, 2, [&](const V& v) { return m(v[0], v[1]); }, rtol);
  }
  {
    auto m = make(seeded<nn::Transformer>(83, [] {
      return nn::Transformer(nn::TransformerOptions(8, 2, 2, 1).dim_feedforward(16).dropout(0));
    }));
    check_module_case<T>(prefix("transformer"), m, 2, [&](const V& v) { return m(v[0], v[1], AnyTensor(), causal); }, rtol);
  }
}

TEST_CASE("transformer decoder and Transformer: values and gradients as PyTorch's, float and double; errors") {
  check_decoders<float>("f32", 5e-5);
  check_decoders<double>("f64", 1e-11);
  nn::Transformer t(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16));
  CHECK(error_of([&] { (void)t(zeros<float>({5, 2, 8}), zeros<float>({4, 3, 8})); }) ==
        "the batch number of src and tgt must be equal");
  CHECK(error_of([&] { (void)t(zeros<float>({5, 2, 8}), zeros<float>({4, 2, 6})); }) ==
        "the feature number of src and tgt must be equal to d_model");
  CHECK(error_of([] { (void)nn::TransformerDecoder(nn::TransformerDecoderLayer(8, 2), 0); }) == "num_layers must be positive");
}

TEST_CASE("CTCLoss: PyTorch's losses and gradients, every target layout and reduction; errors") {
  namespace F = nn::F;
  using V = std::vector<Tensor<double>>;
  using test::check_forward_backward;
  const auto targets = test::golden<int64_t>("ctc_targets"), concatenated = test::golden<int64_t>("ctc_concatenated");
  const auto input_lengths = test::golden<int64_t>("ctc_input_lengths");
  const auto target_lengths = test::golden<int64_t>("ctc_target_lengths");
  for (const auto& [tag, red] : {std::pair{"none", nn::Reduction::None}, {"mean", nn::Reduction::Mean},
                                 {"sum", nn::Reduction::Sum}}) {
    check_forward_backward<double>(std::string("ctc_") + tag, 1, [&](const V& v) {
      return F::ctc_loss(log_softmax(v[0], 2), targets, input_lengths, target_lengths,
                         nn::CTCLossOptions().reduction(red));
    }, 1e-12);
  }
  // The log-probabilities' own gradient is PyTorch's formula, which assumes a log_softmax before.
  check_forward_backward<double>("ctc_raw", 1, [&](const V& v) {
    return nn::CTCLoss(nn::CTCLossOptions().reduction(nn::Reduction::Sum))
        ->forward(v[0], targets, input_lengths, target_lengths);
  }, 1e-12);
  check_forward_backward<double>("ctc_concat", 1, [&](const V& v) {
    return F::ctc_loss(log_softmax(v[0], 2), concatenated, std::vector<int64_t>{12, 9, 7, 10},
                       std::vector<int64_t>{5, 3, 0, 4}, nn::CTCLossOptions().reduction(nn::Reduction::None));
  }, 1e-12);
  check_forward_backward<double>("ctc_blank_last", 1, [&](const V& v) {
    return F::ctc_loss(log_softmax(v[0], 2), test::golden<int64_t>("ctc_targets_blank_last"), input_lengths,
                       target_lengths, nn::CTCLossOptions().blank(5).reduction(nn::Reduction::None));
  }, 1e-12);
  check_forward_backward<double>("ctc_unbatched", 1, [&](const V& v) {
    return F::ctc_loss(log_softmax(v[0], 1), targets.select(0, 0), input_lengths.select(0, 0),
                       target_lengths.select(0, 0), nn::CTCLossOptions().reduction(nn::Reduction::None));
  }, 1e-12);
  const auto short_lengths = test::golden<int64_t>("ctc_short_lengths");
  check_forward_backward<double>("ctc_zero_infinity", 1, [&](const V& v) {
    return F::ctc_loss(log_softmax(v[0], 2), targets, short_lengths, target_lengths,
                       nn::CTCLossOptions().zero_infinity(true).reduction(nn::Reduction::None));
  }, 1e-12);
  check_forward_backward<float>("ctc_f32", 1, [&](const std::vector<Tensor<float>>& v) {
    return F::ctc_loss(log_softmax(v[0], 2), targets, input_lengths, target_lengths);
  }, 2e-5);

  // A target that cannot fit its frames: an infinite loss whose gradient is NaN, as PyTorch's, unless
  // zero_infinity.
  const auto lp = log_softmax(test::golden<double>("ctc_none_in0"), 2).eval().requires_grad_();
  const Tensor<double> impossible =
      F::ctc_loss(lp, targets, short_lengths, target_lengths, nn::CTCLossOptions().reduction(nn::Reduction::None));
  CHECK(std::isinf(impossible(0)));
  sum(impossible).backward();
  CHECK(all(isnan(lp.grad().narrow(0, 0, 3).select(1, 0))).item());
  CHECK(all(lp.grad().narrow(0, 3, 9).select(1, 0) == 0.0).item());  // frames past the input's length
  // No frames: the empty alignment only (PyTorch 1.13 reads uninitialized memory here).
  const Tensor<double> empty = F::ctc_loss(lp, targets, std::vector<int64_t>{0, 9, 0, 10},
                                           std::vector<int64_t>{0, 3, 1, 4}, nn::CTCLossOptions().reduction(nn::Reduction::None));
  CHECK(empty(0) == 0.0);
  CHECK(std::isinf(empty(2)));
  // A hand-worked case: one frame, one label: the loss is -lp[0, label].
  const auto one = log_softmax(tensor<double>({0.5, -1.0, 2.0}).reshape({1, 1, 3}), 2).eval();
  CHECK(F::ctc_loss(one, tensor<int64_t>({2}), std::vector<int64_t>{1}, std::vector<int64_t>{1},
                    nn::CTCLossOptions().reduction(nn::Reduction::Sum)).item() == doctest::Approx(-one(0, 0, 2)));
  // Its gradient cannot be differentiated again, as in PyTorch.
  const Tensor<double> loss = F::ctc_loss(lp, targets, input_lengths, target_lengths);
  const auto grads = autograd::grad({loss}, {lp}, {}, false, /*create_graph=*/true);
  CHECK(error_of([&] { (void)autograd::grad({sum(grads[0])}, {lp}); }).rfind("ctc_loss: its gradient cannot be differentiated again", 0) == 0);
  CHECK(nn::CTCLoss()->repr() == "CTCLoss()");

  const auto x = test::golden<double>("ctc_none_in0");
  auto error = [&](const Tensor<int64_t>& tg, std::vector<int64_t> il, std::vector<int64_t> tl, int64_t blank = 0) {
    return error_of([&] { (void)F::ctc_loss(x, tg, il, tl, nn::CTCLossOptions().blank(blank)); });
  };
  const std::vector<int64_t> il{12, 9, 7, 10}, tl{5, 3, 0, 4};
  CHECK(error(targets, il, tl, 6) == "blank must be in label range");
  CHECK(error(targets, il, tl, -1) == "blank must be in label range");
  CHECK(error(targets, {12}, tl) == "input_lengths must be of size batch_size");
  CHECK(error(targets, il, {5, 3}) == "target_lengths must be of size batch_size");
  CHECK(error(targets, {13, 9, 7, 10}, tl) ==
        "Expected input_lengths to have value at most 12, but got value 13 (while checking arguments for ctc_loss_cpu)");
  CHECK(error(targets, il, {6, 3, 0, 4}) == "Expected tensor to have size at least 6 at dimension 1, but got size 5 "
                                            "for argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
  CHECK(error(concatenated.narrow(0, 0, 11), il, tl) == "Expected tensor to have size 12 at dimension 0, but got size "
                                                        "11 for argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
  CHECK(error(targets, {-1, 9, 7, 10}, tl) == "ctc_loss: input_lengths must be non-negative, but got -1");
  CHECK(error(Tensor<int64_t>(targets + int64_t{1}), il, tl) == "ctc_loss: target label 6 is out of range for 6 classes");
  CHECK(error_of([&] { (void)F::ctc_loss(x.select(0, 0).select(0, 0), targets, il, tl); }) ==
        "ctc_loss: log_probs must be (T, N, C) or, unbatched, (T, C), but got [6]");
}
