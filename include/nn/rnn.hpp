// Recurrent layers: RNN, LSTM and GRU (multi-layer, bidirectional,
// batch_first, dropout between layers, initial states) and their cells,
// with PyTorch's parameters, names, initialization and formulas.
//
// A layer's input projection x W_ih^T + b is one product for the whole
// sequence; each time step is then one product with W_hh (accumulated onto
// that step's projection) and one or two fused elementwise passes for the
// gates. The backward is autograd's, through those same operations.
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "activation.hpp"  // python_float_repr
#include "dropout.hpp"
#include "holder.hpp"
#include "init.hpp"

namespace tsr::detail {

enum class RecurrentKind { RNN, LSTM, GRU };

constexpr int64_t gate_count(RecurrentKind k) {
  return k == RecurrentKind::LSTM ? 4 : k == RecurrentKind::GRU ? 3 : 1;
}
constexpr const char* recurrent_name(RecurrentKind k) {
  return k == RecurrentKind::LSTM ? "LSTM" : k == RecurrentKind::GRU ? "GRU" : "RNN";
}

// One cell's weights; the biases are undefined for bias = false.
template <class T>
struct CellWeights {
  Tensor<T> w_ih, w_hh, b_ih, b_hh;
};

// x W_ih^T + b for every row of x (a whole sequence at once). LSTM and RNN
// add both biases here, the step's product then accumulates onto it; GRU
// keeps b_hh for the step, since its candidate gate scales W_hn h + b_hn by r.
template <class T>
Tensor<T> input_projection(RecurrentKind kind, const Tensor<T>& x, const CellWeights<T>& w) {
  if (!w.b_ih.defined()) return mm(x, w.w_ih.t());
  if (kind == RecurrentKind::GRU) return addmm(w.b_ih, x, w.w_ih.t());
  return addmm(w.b_ih + w.b_hh, x, w.w_ih.t());
}

// One time step from the step's input projection gx (B, gates H) and the
// state (h, and c for LSTM); returns the new (h, c), PyTorch's formulas:
//   RNN   h' = tanh or relu(gx + W_hh h)
//   LSTM  i, f, g, o = gx + W_hh h;  c' = s(f) c + s(i) tanh(g);  h' = s(o) tanh(c')
//   GRU   r, z = s(gx_rz + W_hrz h + b_hrz);  n = tanh(gx_n + r (W_hn h + b_hn));
//         h' = (1 - z) n + z h = n + z (h - n)
template <class T>
std::pair<Tensor<T>, Tensor<T>> recurrent_step(RecurrentKind kind, bool relu_nonlinearity, const Tensor<T>& gx,
                                               const Tensor<T>& h, const Tensor<T>& c, const CellWeights<T>& w) {
  const int64_t hidden = h.size(-1);
  auto part = [hidden](const Tensor<T>& t, int64_t k) { return t.narrow(-1, k * hidden, hidden); };
  if (kind == RecurrentKind::RNN) {
    const Tensor<T> pre = addmm(gx, h, w.w_hh.t());
    return {relu_nonlinearity ? Tensor<T>(relu(pre)) : Tensor<T>(tanh(pre)), {}};
  }
  if (kind == RecurrentKind::LSTM) {
    const Tensor<T> gates = addmm(gx, h, w.w_hh.t());
    Tensor<T> c1 = sigmoid(part(gates, 1)) * c + sigmoid(part(gates, 0)) * tanh(part(gates, 2));
    Tensor<T> h1 = sigmoid(part(gates, 3)) * tanh(c1);
    return {std::move(h1), std::move(c1)};
  }
  const Tensor<T> gh = w.b_hh.defined() ? addmm(w.b_hh, h, w.w_hh.t()) : mm(h, w.w_hh.t());
  const Tensor<T> n = tanh(part(gx, 2) + sigmoid(part(gx, 0) + part(gh, 0)) * part(gh, 2));
  return {n + sigmoid(part(gx, 1) + part(gh, 1)) * (h - n), {}};
}

template <class T>
struct RecurrentResult {
  Tensor<T> output, h_n, c_n;  // c_n only for LSTM
};

// The stacked layers over x (S, B, in) from h0 (and c0) of shape
// (layers directions, B, H); weights ordered layer by layer, forward
// direction first. Between layers, dropout (in training).
template <class T>
RecurrentResult<T> run_recurrent(RecurrentKind kind, bool relu_nonlinearity, const std::vector<CellWeights<T>>& weights,
                                 int64_t layers, bool bidirectional, double dropout, bool training, const Tensor<T>& x,
                                 const Tensor<T>& h0, const Tensor<T>& c0) {
  const int64_t steps = x.size(0), batch = x.size(1), directions = bidirectional ? 2 : 1, hidden = h0.size(2);
  const int64_t gates = gate_count(kind) * hidden;
  Tensor<T> in = x;
  std::vector<Tensor<T>> h_n, c_n;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<Tensor<T>> outputs;
    for (int64_t d = 0; d < directions; ++d) {
      const int64_t k = l * directions + d;
      const CellWeights<T>& w = weights[static_cast<std::size_t>(k)];
      const Tensor<T> gx = input_projection(kind, in.reshape({steps * batch, in.size(2)}), w).view({steps, batch, gates});
      Tensor<T> h = h0.select(0, k), c = kind == RecurrentKind::LSTM ? c0.select(0, k) : Tensor<T>();
      std::vector<Tensor<T>> hs(static_cast<std::size_t>(steps));
      for (int64_t s = 0; s < steps; ++s) {
        const int64_t t = d == 0 ? s : steps - 1 - s;
        std::tie(h, c) = recurrent_step(kind, relu_nonlinearity, gx.select(0, t), h, c, w);
        hs[static_cast<std::size_t>(t)] = h;
      }
      outputs.push_back(stack(hs, 0));
      h_n.push_back(h);
      if (kind == RecurrentKind::LSTM) c_n.push_back(c);
    }
    in = directions == 1 ? outputs[0] : cat(outputs, 2);
    if (training && dropout > 0 && l + 1 < layers) in = nn::F::dropout(in, dropout, true);
  }
  return {in, stack(h_n, 0), kind == RecurrentKind::LSTM ? stack(c_n, 0) : Tensor<T>()};
}

// Python's tuple repr of a shape: (2, 3, 4).
inline std::string tuple_repr(const Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// Every parameter of a recurrent layer or cell from U(-1/sqrt(H), 1/sqrt(H)),
// in registration order, as PyTorch's reset_parameters.
inline void init_recurrent(const std::vector<AnyTensor>& parameters, int64_t hidden_size) {
  const double bound = hidden_size > 0 ? 1 / std::sqrt(static_cast<double>(hidden_size)) : 0;
  for (const AnyTensor& p : parameters) nn::init::uniform_(p, -bound, bound);
}

}  // namespace tsr::detail

namespace tsr::nn {

using detail::RecurrentKind;

// RNNOptions, LSTMOptions, GRUOptions (libtorch's names and defaults).
template <RecurrentKind K>
struct RecurrentOptions {
  RecurrentOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  RecurrentOptions& num_layers(int64_t v) { num_layers_ = v; return *this; }
  // kTanh (the default) or kReLU; RNN only.
  RecurrentOptions& nonlinearity(init::Nonlinearity v)
    requires(K == RecurrentKind::RNN)
  {
    detail::check<ValueError>(v == init::Nonlinearity::Tanh || v == init::Nonlinearity::ReLU,
                              "Unknown nonlinearity (RNN takes kTanh or kReLU)");
    relu_ = v == init::Nonlinearity::ReLU;
    return *this;
  }
  RecurrentOptions& bias(bool v) { bias_ = v; return *this; }
  RecurrentOptions& batch_first(bool v) { batch_first_ = v; return *this; }
  RecurrentOptions& dropout(double v) { dropout_ = v; return *this; }
  RecurrentOptions& bidirectional(bool v) { bidirectional_ = v; return *this; }
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  int64_t num_layers() const { return num_layers_; }
  bool relu() const { return relu_; }
  bool bias() const { return bias_; }
  bool batch_first() const { return batch_first_; }
  double dropout() const { return dropout_; }
  bool bidirectional() const { return bidirectional_; }

 private:
  int64_t input_size_, hidden_size_, num_layers_ = 1;
  bool relu_ = false, bias_ = true, batch_first_ = false;
  double dropout_ = 0;
  bool bidirectional_ = false;
};
using RNNOptions = RecurrentOptions<RecurrentKind::RNN>;
using LSTMOptions = RecurrentOptions<RecurrentKind::LSTM>;
using GRUOptions = RecurrentOptions<RecurrentKind::GRU>;

// RNN, LSTM and GRU. Parameters per layer l and direction (suffix
// "_reverse" for the backward one): weight_ih_l{l} (gates H, in),
// weight_hh_l{l} (gates H, H), bias_ih_l{l}, bias_hh_l{l}; the gates are
// stacked in PyTorch's order (LSTM: i, f, g, o; GRU: r, z, n).
//
// forward(input, hx): input (S, B, in), (B, S, in) with batch_first, or
// (S, in) unbatched; hx (layers directions, B, H), zeros when not given
// (for LSTM a pair (h0, c0)). Returns the output (S, B, directions H) and
// h_n (for LSTM the pair (h_n, c_n)).
template <RecurrentKind K>
class RecurrentImpl : public Module {
 public:
  explicit RecurrentImpl(const RecurrentOptions<K>& options) : options(options) {
    detail::check<ValueError>(options.dropout() >= 0 && options.dropout() <= 1,
                              "dropout should be a number in range [0, 1] representing the probability of an element "
                              "being zeroed");
    detail::check<ValueError>(options.hidden_size() > 0, "hidden_size must be greater than zero");
    detail::check<ValueError>(options.num_layers() > 0, "num_layers must be greater than zero");
    const int64_t gates = detail::gate_count(K) * options.hidden_size(), directions = options.bidirectional() ? 2 : 1;
    for (int64_t l = 0; l < options.num_layers(); ++l)
      for (int64_t d = 0; d < directions; ++d) {
        const std::string suffix = "_l" + std::to_string(l) + (d ? "_reverse" : "");
        const int64_t in = l == 0 ? options.input_size() : options.hidden_size() * directions;
        weights_.push_back({&register_parameter("weight_ih" + suffix, empty<float>({gates, in})),
                            &register_parameter("weight_hh" + suffix, empty<float>({gates, options.hidden_size()})),
                            options.bias() ? &register_parameter("bias_ih" + suffix, empty<float>({gates})) : nullptr,
                            options.bias() ? &register_parameter("bias_hh" + suffix, empty<float>({gates})) : nullptr});
      }
    reset_parameters();
  }
  RecurrentImpl(int64_t input_size, int64_t hidden_size) : RecurrentImpl(RecurrentOptions<K>(input_size, hidden_size)) {}
  void reset_parameters() { detail::init_recurrent(parameters(), options.hidden_size()); }

  std::string name() const override { return detail::recurrent_name(K); }
  std::string extra_repr() const override {
    std::string s = std::to_string(options.input_size()) + ", " + std::to_string(options.hidden_size());
    if (options.num_layers() != 1) s += ", num_layers=" + std::to_string(options.num_layers());
    if (!options.bias()) s += ", bias=False";
    if (options.batch_first()) s += ", batch_first=True";
    if (options.dropout() != 0) s += ", dropout=" + detail::python_float_repr(options.dropout());
    if (options.bidirectional()) s += ", bidirectional=True";
    return s;
  }

  template <detail::FloatElement T>
  std::tuple<Tensor<T>, Tensor<T>> forward(const Tensor<T>& input, const Tensor<T>& hx = {}) const
    requires(K != RecurrentKind::LSTM)
  {
    auto r = run(input, hx, Tensor<T>());
    return {r.output, r.h_n};
  }
  template <detail::FloatElement T>
  std::tuple<Tensor<T>, std::tuple<Tensor<T>, Tensor<T>>> forward(
      const Tensor<T>& input, const std::optional<std::tuple<std::type_identity_t<Tensor<T>>, std::type_identity_t<Tensor<T>>>>& hx =
          std::nullopt) const
    requires(K == RecurrentKind::LSTM)
  {
    auto r = hx ? run(input, std::get<0>(*hx), std::get<1>(*hx)) : run(input, Tensor<T>(), Tensor<T>());
    return {r.output, {r.h_n, r.c_n}};
  }

  RecurrentOptions<K> options;

 private:
  struct LayerWeights {  // slots of one layer and direction; biases null without
    AnyTensor *w_ih, *w_hh, *b_ih, *b_hh;
  };

  template <class T>
  detail::RecurrentResult<T> run(const Tensor<T>& input, Tensor<T> h0, Tensor<T> c0) const {
    const char* name = detail::recurrent_name(K);
    detail::check(input.dim() == 2 || input.dim() == 3, name, ": Expected input to be 2-D or 3-D but received ",
                  input.dim(), "-D tensor");
    const bool batched = input.dim() == 3;
    const Tensor<T> x = !batched ? input.unsqueeze(1) : options.batch_first() ? input.transpose(0, 1) : input;
    detail::check(x.size(2) == options.input_size(), "input.size(-1) must be equal to input_size. Expected ",
                  options.input_size(), ", got ", x.size(2));
    detail::check(x.size(0) > 0, "Expected sequence length to be larger than 0 in RNN");
    const int64_t directions = options.bidirectional() ? 2 : 1;
    const Shape expected{options.num_layers() * directions, x.size(1), options.hidden_size()};
    auto state = [&](Tensor<T>& s, const char* which) {
      if (!s.defined()) {
        s = zeros<T>(expected);
        return;
      }
      if (batched)
        detail::check(s.dim() == 3, "For batched 3-D input, hx should also be 3-D but got ", s.dim(), "-D tensor");
      else
        detail::check(s.dim() == 2, "For unbatched 2-D input, hx should also be 2-D but got ", s.dim(), "-D tensor");
      if (!batched) s = s.unsqueeze(1);
      detail::check(s.sizes() == expected, "Expected hidden", which, " size ", detail::tuple_repr(expected), ", got ",
                    s.sizes());
    };
    state(h0, K == RecurrentKind::LSTM ? "[0]" : "");
    if (K == RecurrentKind::LSTM) state(c0, "[1]");
    std::vector<detail::CellWeights<T>> w;
    for (const LayerWeights& s : weights_)
      w.push_back({s.w_ih->template as<T>(), s.w_hh->template as<T>(), s.b_ih ? s.b_ih->template as<T>() : Tensor<T>(),
                   s.b_hh ? s.b_hh->template as<T>() : Tensor<T>()});
    auto r = detail::run_recurrent(K, options.relu(), w, options.num_layers(), options.bidirectional(), options.dropout(),
                                   is_training(), x, h0, c0);
    if (!batched) {
      r.output = r.output.squeeze(1), r.h_n = r.h_n.squeeze(1);
      if (r.c_n.defined()) r.c_n = r.c_n.squeeze(1);
    } else if (options.batch_first()) {
      r.output = r.output.transpose(0, 1);
    }
    return r;
  }
  std::vector<LayerWeights> weights_;
};
using RNNImpl = RecurrentImpl<RecurrentKind::RNN>;
using LSTMImpl = RecurrentImpl<RecurrentKind::LSTM>;
using GRUImpl = RecurrentImpl<RecurrentKind::GRU>;
using RNN = ModuleHolder<RNNImpl>;
using LSTM = ModuleHolder<LSTMImpl>;
using GRU = ModuleHolder<GRUImpl>;

// ----- cells ------------------------------------------------------------------------
template <RecurrentKind K>
struct RecurrentCellOptions {
  RecurrentCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  RecurrentCellOptions& bias(bool v) { bias_ = v; return *this; }
  RecurrentCellOptions& nonlinearity(init::Nonlinearity v)
    requires(K == RecurrentKind::RNN)
  {
    detail::check<ValueError>(v == init::Nonlinearity::Tanh || v == init::Nonlinearity::ReLU,
                              "Unknown nonlinearity (RNNCell takes kTanh or kReLU)");
    relu_ = v == init::Nonlinearity::ReLU;
    return *this;
  }
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  bool bias() const { return bias_; }
  bool relu() const { return relu_; }

 private:
  int64_t input_size_, hidden_size_;
  bool bias_ = true, relu_ = false;
};
using RNNCellOptions = RecurrentCellOptions<RecurrentKind::RNN>;
using LSTMCellOptions = RecurrentCellOptions<RecurrentKind::LSTM>;
using GRUCellOptions = RecurrentCellOptions<RecurrentKind::GRU>;

// One step of RNN, LSTM or GRU: weight_ih (gates H, in), weight_hh
// (gates H, H), bias_ih, bias_hh. forward(input (B, in) or (in), hx) gives
// h' (LSTMCell: the pair (h', c')); hx defaults to zeros.
template <RecurrentKind K>
class RecurrentCellImpl : public Module {
 public:
  explicit RecurrentCellImpl(const RecurrentCellOptions<K>& options)
      : options(options),
        weight_ih(register_parameter("weight_ih", empty<float>({gates(), options.input_size()}))),
        weight_hh(register_parameter("weight_hh", empty<float>({gates(), options.hidden_size()}))),
        bias_ih(register_parameter("bias_ih", options.bias() ? AnyTensor(empty<float>({gates()})) : AnyTensor())),
        bias_hh(register_parameter("bias_hh", options.bias() ? AnyTensor(empty<float>({gates()})) : AnyTensor())) {
    reset_parameters();
  }
  RecurrentCellImpl(int64_t input_size, int64_t hidden_size)
      : RecurrentCellImpl(RecurrentCellOptions<K>(input_size, hidden_size)) {}
  void reset_parameters() { detail::init_recurrent(parameters(), options.hidden_size()); }

  std::string name() const override { return std::string(detail::recurrent_name(K)) + "Cell"; }
  std::string extra_repr() const override {
    std::string s = std::to_string(options.input_size()) + ", " + std::to_string(options.hidden_size());
    if (!options.bias()) s += ", bias=False";
    if (options.relu()) s += ", nonlinearity=relu";
    return s;
  }

  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& input, const Tensor<T>& hx = {}) const
    requires(K != RecurrentKind::LSTM)
  {
    return step(input, hx, Tensor<T>()).first;
  }
  template <detail::FloatElement T>
  std::tuple<Tensor<T>, Tensor<T>> forward(const Tensor<T>& input,
                                           const std::optional<std::tuple<std::type_identity_t<Tensor<T>>, std::type_identity_t<Tensor<T>>>>& hx =
          std::nullopt) const
    requires(K == RecurrentKind::LSTM)
  {
    auto [h, c] = hx ? step(input, std::get<0>(*hx), std::get<1>(*hx)) : step(input, Tensor<T>(), Tensor<T>());
    return {h, c};
  }

  RecurrentCellOptions<K> options;
  AnyTensor& weight_ih;
  AnyTensor& weight_hh;
  AnyTensor& bias_ih;
  AnyTensor& bias_hh;

 private:
  int64_t gates() const { return detail::gate_count(K) * options.hidden_size(); }

  template <class T>
  std::pair<Tensor<T>, Tensor<T>> step(const Tensor<T>& input, Tensor<T> h, Tensor<T> c) const {
    const std::string name = this->name();
    detail::check(input.dim() == 1 || input.dim() == 2, name, ": Expected input to be 1-D or 2-D but received ",
                  input.dim(), "-D tensor");
    const bool batched = input.dim() == 2;
    const Tensor<T> x = batched ? input : input.unsqueeze(0);
    detail::check(x.size(1) == options.input_size(), "input has inconsistent input_size: got ", x.size(1), " expected ",
                  options.input_size());
    auto state = [&](Tensor<T>& s, int which) {
      if (!s.defined()) {
        s = zeros<T>({x.size(0), options.hidden_size()});
        return;
      }
      detail::check(s.dim() == input.dim(), name, ": Expected hidden to be ", input.dim(), "-D for ", input.dim(),
                    "-D input but received ", s.dim(), "-D tensor");
      if (!batched) s = s.unsqueeze(0);
      detail::check(s.size(0) == x.size(0), "Input batch size ", x.size(0), " doesn't match hidden", which,
                    " batch size ", s.size(0));
      detail::check(s.size(1) == options.hidden_size(), "hidden", which, " has inconsistent hidden_size: got ", s.size(1),
                    ", expected ", options.hidden_size());
    };
    state(h, 0);
    if (K == RecurrentKind::LSTM) state(c, 1);
    const detail::CellWeights<T> w{weight_ih.as<T>(), weight_hh.as<T>(), bias_ih.defined() ? bias_ih.as<T>() : Tensor<T>(),
                                   bias_hh.defined() ? bias_hh.as<T>() : Tensor<T>()};
    auto [h1, c1] = detail::recurrent_step(K, options.relu(), detail::input_projection(K, x, w), h, c, w);
    if (!batched) {
      h1 = h1.squeeze(0);
      if (c1.defined()) c1 = c1.squeeze(0);
    }
    return {h1, c1};
  }
};
using RNNCellImpl = RecurrentCellImpl<RecurrentKind::RNN>;
using LSTMCellImpl = RecurrentCellImpl<RecurrentKind::LSTM>;
using GRUCellImpl = RecurrentCellImpl<RecurrentKind::GRU>;
using RNNCell = ModuleHolder<RNNCellImpl>;
using LSTMCell = ModuleHolder<LSTMCellImpl>;
using GRUCell = ModuleHolder<GRUCellImpl>;

}  // namespace tsr::nn
