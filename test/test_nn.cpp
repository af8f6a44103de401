// nn: the module system, initializations, activations and losses, against
// PyTorch 1.13 (tools/make_golden.py: nn_cases).
#include <fstream>
#include <nn/nn.hpp>

#include "common.hpp"

using namespace tsr;
using test::check_close;
using test::bitwise_equal;
using test::error_of;
using test::keys_of;

namespace {

// The text between "=== name" and the next "===" line of nn_modules.txt.
std::string module_text(const std::string& section, const std::string& file = "nn_modules.txt") {
  std::ifstream in(std::string(TSR_GOLDEN_DIR) + "/" + file);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("=== ", 0) == 0) {
      if (inside) break;
      inside = line == "=== " + section;
      continue;
    }
    if (inside) out += (out.empty() ? "" : "\n") + line;
  }
  return out;
}


}  // namespace

TEST_CASE("initial weights reproduce PyTorch's for the same seed") {
  manual_seed(0);
  nn::Linear l1(5, 3);
  nn::Linear l2(nn::LinearOptions(3, 2).bias(false));
  CHECK(bitwise_equal(l1->weight.as<float>(), test::golden<float>("nn_init_l1_weight")));
  CHECK(bitwise_equal(l1->bias.as<float>(), test::golden<float>("nn_init_l1_bias")));
  CHECK(bitwise_equal(l2->weight.as<float>(), test::golden<float>("nn_init_l2_weight")));
  CHECK_FALSE(l2->bias.defined());
  CHECK(l1->weight.requires_grad());

  manual_seed(1);
  auto w = empty<float>({4, 6});
  nn::init::xavier_uniform_(w, nn::init::calculate_gain(kTanh));
  CHECK(bitwise_equal(w, test::golden<float>("nn_init_xavier_uniform")));
  auto k = empty<float>({3, 4, 2, 2});
  nn::init::kaiming_uniform_(k, 0, kFanOut, kReLU);
  CHECK(bitwise_equal(k, test::golden<float>("nn_init_kaiming_uniform_fan_out")));
  auto t = empty<float>({2000});
  nn::init::trunc_normal_(t, 0.5, 2.0, -1.0, 3.0);
  // The same uniform draws; erfinv may round differently in the last place.
  check_close(t, test::golden<float>("nn_init_trunc_normal"), 1e-5, 1e-6, "trunc_normal_");
  CHECK(amin(t).item() >= -1.f);
  CHECK(amax(t).item() <= 3.f);

  // Normal-based: PyTorch's draws, to the bit in double; in float within the
  // last bits of the SLEEF functions its AVX2 build uses.
  manual_seed(2);
  auto kn = empty<double>({6, 5});
  nn::init::kaiming_normal_(kn, 0, kFanOut, kReLU);
  CHECK(bitwise_equal(kn, test::golden<double>("nn_init_kaiming_normal_f64")));
  nn::Embedding embedding(10, 4);
  check_close(embedding->weight.as<float>(), test::golden<float>("nn_init_embedding"), 2e-6, 2e-6, "Embedding");
}

TEST_CASE("init: gains, fans and errors") {
  CHECK(nn::init::calculate_gain(kReLU) == doctest::Approx(std::sqrt(2.0)));
  CHECK(nn::init::calculate_gain(kLeakyReLU, 0.2) == doctest::Approx(std::sqrt(2.0 / 1.04)));
  CHECK(nn::init::calculate_gain(kSELU) == 0.75);
  const auto [in, out] = nn::init::calculate_fan_in_and_fan_out(empty<float>({16, 3, 5, 5}));
  CHECK(in == 75);
  CHECK(out == 400);
  CHECK(error_of([] { nn::init::xavier_uniform_(empty<float>({5})); }) ==
        "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  CHECK(error_of([] { nn::init::uniform_(empty<int64_t>({2})); }) ==
        "nn::init::uniform_ expects a floating point tensor, got torch.int64");
  auto e = empty<double>({2, 3});
  nn::init::eye_(e);
  CHECK(e.to_vector() == std::vector<double>{1, 0, 0, 0, 1, 0});
  // A parameter that requires grad is filled without recording.
  auto p = zeros({3}).requires_grad_();
  nn::init::constant_(p, 2.5);
  CHECK(p.is_leaf());
  CHECK(p.to_vector() == std::vector<float>{2.5f, 2.5f, 2.5f});
}

template <class T>
void check_activations(const std::string& tag, double rtol) {
  const std::map<std::string, std::function<Tensor<T>(const Tensor<T>&)>> acts = {
      {"relu", nn::ReLU()}, {"relu6", nn::ReLU6()}, {"leaky_relu", nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))},
      {"elu", nn::ELU(nn::ELUOptions().alpha(0.7))}, {"selu", nn::SELU()}, {"gelu", nn::GELU()},
      {"gelu_tanh", nn::GELU(nn::GELUOptions().approximate("tanh"))}, {"silu", nn::SiLU()}, {"mish", nn::Mish()},
      {"hardtanh", nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(1.5))}, {"hardswish", nn::Hardswish()},
      {"hardsigmoid", nn::Hardsigmoid()}, {"tanh", nn::Tanh()}, {"sigmoid", nn::Sigmoid()},
      {"softplus", nn::Softplus(nn::SoftplusOptions().beta(2.0).threshold(5.0))}, {"softmax", nn::Softmax(1)},
      {"log_softmax", nn::LogSoftmax(0)}};
  const auto base = test::golden<T>("nn_act_" + tag + "_x");
  const auto gout = test::golden<T>("nn_act_" + tag + "_gout");
  for (const auto& [name, act] : acts) {
    const auto x = base.clone().requires_grad_();
    const Tensor<T> y = act(x.t());  // a non-contiguous input
    y.backward(gout);
    const std::string prefix = "nn_act_" + tag + "_" + name;
    check_close(y, test::golden<T>(prefix + "_y"), rtol, rtol, prefix + " forward");
    // PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float,
    // even in double (a relative 1e-8 from the exact derivative we compute).
    const double grad_rtol = name == "hardsigmoid" ? std::max(rtol, 1e-7) : rtol;
    check_close(x.grad(), test::golden<T>(prefix + "_gx"), grad_rtol, grad_rtol, prefix + " backward");
  }
}

TEST_CASE("activations: forward and backward as PyTorch's, float and double") {
  check_activations<float>("f32", 2e-5);
  check_activations<double>("f64", 1e-12);
}

template <class T>
void check_losses(const std::string& tag, double rtol) {
  auto g = [&](const std::string& n) { return test::golden<T>("nn_loss_" + tag + "_" + n); };
  const auto x = g("x"), y = g("y"), p = g("p"), t01 = g("t01"), w = g("w"), pw = g("pw"), img = g("img"), probs = g("probs");
  const auto cls = test::golden<int64_t>("nn_loss_" + tag + "_cls");
  const auto cls_ign = test::golden<int64_t>("nn_loss_" + tag + "_cls_ign");
  const auto img_t = test::golden<int64_t>("nn_loss_" + tag + "_img_t");
  namespace F = nn::functional;
  using R = nn::Reduction;
  const std::map<std::string, std::function<Tensor<T>(const Tensor<T>&, R)>> cases = {
      {"mse", [&](const Tensor<T>& i, R r) { return F::mse_loss(i, y, nn::MSELossOptions().reduction(r)); }},
      {"l1", [&](const Tensor<T>& i, R r) { return F::l1_loss(i, y, nn::L1LossOptions().reduction(r)); }},
      {"smooth_l1", [&](const Tensor<T>& i, R r) { return F::smooth_l1_loss(i, y, nn::SmoothL1LossOptions().beta(0.5).reduction(r)); }},
      {"huber", [&](const Tensor<T>& i, R r) { return F::huber_loss(i, y, nn::HuberLossOptions().delta(0.7).reduction(r)); }},
      {"nll", [&](const Tensor<T>& i, R r) { return F::nll_loss(log_softmax(i, 1), cls_ign, nn::NLLLossOptions().reduction(r)); }},
      {"nll_w", [&](const Tensor<T>& i, R r) { return F::nll_loss(log_softmax(i, 1), cls_ign, nn::NLLLossOptions().weight(w).reduction(r)); }},
      {"ce", [&](const Tensor<T>& i, R r) { return F::cross_entropy(i, cls, nn::CrossEntropyLossOptions().reduction(r)); }},
      {"ce_w_ign_ls", [&](const Tensor<T>& i, R r) {
         return F::cross_entropy(i, cls_ign, nn::CrossEntropyLossOptions().weight(w).label_smoothing(0.2).reduction(r));
       }},
      {"ce_ign_ls", [&](const Tensor<T>& i, R r) {
         return F::cross_entropy(i, cls_ign, nn::CrossEntropyLossOptions().label_smoothing(0.1).reduction(r));
       }},
      {"ce_probs", [&](const Tensor<T>& i, R r) { return F::cross_entropy(i, probs, nn::CrossEntropyLossOptions().reduction(r)); }},
      {"ce_probs_w_ls", [&](const Tensor<T>& i, R r) {
         return F::cross_entropy(i, probs, nn::CrossEntropyLossOptions().weight(w).label_smoothing(0.3).reduction(r));
       }},
      {"bce", [&](const Tensor<T>& i, R r) { return F::binary_cross_entropy(Tensor<T>(sigmoid(i)), t01, nn::BCELossOptions().reduction(r)); }},
      {"bce_w", [&](const Tensor<T>& i, R r) {
         return F::binary_cross_entropy(Tensor<T>(sigmoid(i)), t01, nn::BCELossOptions().weight(w).reduction(r));
       }},
      {"bce_logits", [&](const Tensor<T>& i, R r) {
         return F::binary_cross_entropy_with_logits(Tensor<T>(i * T(8)), t01, nn::BCEWithLogitsLossOptions().reduction(r));
       }},
      {"bce_logits_pw", [&](const Tensor<T>& i, R r) {
         return F::binary_cross_entropy_with_logits(Tensor<T>(i * T(8)), t01,
                                                    nn::BCEWithLogitsLossOptions().weight(w).pos_weight(pw).reduction(r));
       }},
  };
  const std::pair<const char*, R> reductions[] = {{"none", R::None}, {"mean", R::Mean}, {"sum", R::Sum}};
  for (const auto& [name, f] : cases) {
    for (const auto& [rname, r] : reductions) {
      const auto i = x.clone().requires_grad_();
      const Tensor<T> out = f(i, r);
      out.backward(ones_like(out));
      const std::string key = "nn_loss_" + tag + "_" + name + "_" + rname;
      check_close(out, test::golden<T>(key), rtol, rtol, key);
      check_close(i.grad(), test::golden<T>(key + "_gx"), rtol, rtol, key + " gradient");
    }
  }
  for (const auto& [rname, r] : reductions) {
    const auto i = img.clone().requires_grad_();
    nn::CrossEntropyLoss loss(nn::CrossEntropyLossOptions().label_smoothing(0.1).reduction(r));
    const Tensor<T> out = loss(i, img_t);
    out.backward(ones_like(out));
    const std::string key = "nn_loss_" + tag + "_ce_spatial_" + rname;
    check_close(out, test::golden<T>(key), rtol, rtol, key);
    check_close(i.grad(), test::golden<T>(key + "_gx"), rtol, rtol, key + " gradient");
  }
  (void)p;
}

TEST_CASE("losses: values and gradients as PyTorch's, every reduction, float and double") {
  check_losses<float>("f32", 2e-5);
  check_losses<double>("f64", 1e-12);
}

TEST_CASE("losses: errors") {
  const auto x = randn({3, 4});
  CHECK(error_of([&] { nn::F::nll_loss(x, tensor<int64_t>({0, 4, 1})); }) == "Target 4 is out of bounds.");
  CHECK(error_of([&] { nn::F::cross_entropy(x, tensor<int64_t>({0, 1})); }) ==
        "Expected input batch_size (3) to match target batch_size (2).");
  CHECK(error_of([&] { nn::CrossEntropyLossOptions().label_smoothing(1.5); }) ==
        "label_smoothing must be between 0.0 and 1.0. Got: 1.5");
  CHECK(error_of([&] { nn::F::cross_entropy(x, tensor<int64_t>({0, 1, 2}), nn::CrossEntropyLossOptions().weight(ones({3}))); }) ==
        "weight tensor should be defined either for all 4 classes or no classes but got weight tensor of shape: [3]");
}

namespace {
// The model of nn_modules.txt, written as a libtorch user would.
struct NetImpl : nn::Module {
  NetImpl() {
    features = register_module("features", nn::Sequential(nn::Flatten()));
    features->push_back(nn::Linear(12, 8));
    features->push_back(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)));
    features->push_back(nn::Identity());
    heads = register_module("heads", nn::ModuleList(nn::Linear(8, 3)));
    heads->push_back(nn::Linear(nn::LinearOptions(8, 2).bias(false)));
    acts = register_module("acts", nn::ModuleDict());
    acts->insert("gelu", nn::GELU(nn::GELUOptions().approximate("tanh")));
    acts->insert("soft", nn::Softmax(1));
    loss = register_module("loss", nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().weight(ones({3}))));
    register_buffer("scale", ones({1}));
  }
  std::string name() const override { return "Net"; }
  nn::Sequential features = nullptr;
  nn::ModuleList heads = nullptr;
  nn::ModuleDict acts = nullptr;
  nn::CrossEntropyLoss loss = nullptr;
};
using Net = nn::ModuleHolder<NetImpl>;
}  // namespace

TEST_CASE("modules: repr, names and state_dict keys as PyTorch's") {
  Net net;
  std::ostringstream os;
  os << net;
  CHECK(os.str() == module_text("repr"));
  CHECK(keys_of(net->state_dict()) == module_text("state_dict"));
  CHECK(keys_of(net->named_parameters()) == module_text("parameters"));
  CHECK(keys_of(net->named_modules()) == module_text("modules"));
  CHECK(net->parameters().size() == 5);
  CHECK(net->children().size() == 4);
  CHECK(keys_of(net->named_buffers()) == "scale\nloss.weight");
  CHECK(error_of([&] {
          net->features->load_state_dict({{"1.weight", zeros({2, 3})}, {"1.bias", zeros({8})}, {"x", zeros({1})}});
        }) == module_text("load_error"));
}

TEST_CASE("ParameterList and ParameterDict: registered parameters, PyTorch's reprs and keys") {
  auto text = [](const std::string& section) { return module_text(section, "nn_parameter_containers.txt"); };
  nn::ParameterList list(zeros({2, 3}), zeros<double>({4}));
  list->append(zeros({}));
  nn::ParameterDict dict;
  dict->insert("scale", zeros({2}));
  dict->insert("shift", zeros<double>({1, 2}));
  CHECK(list->repr() == text("list"));
  CHECK(dict->repr() == text("dict"));
  CHECK(nn::ParameterList(zeros({3}))->repr() == text("one"));
  CHECK(nn::ParameterList()->repr() + " " + nn::ParameterDict()->repr() == text("empty"));
  struct OwnerImpl : nn::Module {
    nn::ParameterList weights;
    nn::ParameterDict by_name;
    OwnerImpl(nn::ParameterList w, nn::ParameterDict d)
        : weights(register_module("weights", w)), by_name(register_module("by_name", d)) {}
  };
  auto owner = std::make_shared<OwnerImpl>(list, dict);
  CHECK(owner->repr() == text("owner"));
  CHECK(keys_of(owner->state_dict()) == text("state_dict"));

  // Each entry is a leaf that requires grad, seen by the optimizers; inserting a name again replaces it.
  CHECK(list->size() == 3);
  CHECK((*list)[1].as<double>().requires_grad());
  const auto params = owner->parameters();
  CHECK(params.size() == 5);
  sum((*list)[0].as<float>() * 2.f).backward();
  CHECK(bitwise_equal(params[0].as<float>().grad(), full({2, 3}, 2.f)));  // the same tensor
  dict->insert("scale", ones({5}));
  CHECK(dict->size() == 2);
  CHECK((*dict)["scale"].sizes() == Shape{5});
  CHECK((*dict)["scale"].requires_grad());
  CHECK(owner->named_parameters()[3].second.sizes() == Shape{5});  // the registered slot itself
  CHECK(dict->contains("shift"));
  CHECK(dict->keys() == std::vector<std::string>{"scale", "shift"});
  int64_t count = 0;
  for (const AnyTensor& p : *list) count += p.numel();
  CHECK(count == 11);
  CHECK(error_of([&] { (void)(*dict)["bias"]; }) == "ParameterDict has no parameter named 'bias'");
  CHECK(error_of([&] { (void)(*list)[3]; }) == "index 3 is out of range");
  CHECK(error_of([&] { list->append(zeros<int64_t>({2})); }) == "Only Tensors of floating point dtype can require gradients");
}

TEST_CASE("modules: load_state_dict copies, converts, and changes nothing on error") {
  manual_seed(3);
  nn::Sequential a(nn::Linear(4, 3));
  a->push_back(nn::Tanh());
  a->push_back(nn::Linear(3, 2));
  nn::Sequential b(nn::Linear(4, 3));
  b->push_back(nn::Tanh());
  b->push_back(nn::Linear(3, 2));
  const auto before = b->state_dict()[0].second.as<float>().clone();
  // A failed load (a missing key) copies nothing, not even the keys that matched.
  auto partial = a->state_dict();
  partial.pop_back();
  CHECK(error_of([&] { b->load_state_dict(partial); }) ==
        "Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: \"2.bias\". ");
  CHECK(bitwise_equal(b->state_dict()[0].second.as<float>(), before));
  // strict = false loads what matches and reports the rest.
  std::vector<std::string> missing, unexpected;
  b->load_state_dict(partial, false, &missing, &unexpected);
  CHECK(missing == std::vector<std::string>{"2.bias"});
  CHECK(unexpected.empty());
  b->load_state_dict(a->state_dict());
  const auto x = randn({5, 4});
  CHECK(bitwise_equal(a(x), b(x)));
  // The parameters are the same tensors as before (loaded in place), still leaves.
  CHECK(b->at<nn::LinearImpl>(0).weight.as<float>().is_leaf());
  CHECK(b->at<nn::LinearImpl>(0).weight.requires_grad());

  // A float checkpoint into a double model.
  b->to<double>();
  CHECK(b->parameters()[0].is<double>());
  CHECK(b->at<nn::LinearImpl>(2).bias.is<double>());  // the layer's own handle sees it
  b->load_state_dict(a->state_dict());
  const Tensor<double> yd = b(Tensor<double>(cast<double>(x)));
  check_close(yd, a(x), 1e-6, 1e-6, "double model from a float checkpoint");
  CHECK(error_of([&] { b(x); }) == "expected scalar type Float but found Double");
}

TEST_CASE("modules: training mode, zero_grad, apply, registration errors") {
  manual_seed(0);
  nn::Sequential m(nn::Linear(3, 2));
  m->push_back(nn::ReLU());
  CHECK(m->is_training());
  m->eval();
  CHECK_FALSE(m->is_training());
  CHECK_FALSE(m->ptr(0)->is_training());
  m->train();
  CHECK(m->ptr(0)->is_training());

  const Tensor<float> loss = sum(m(randn({4, 3})));
  loss.backward();
  auto& w = m->at<nn::LinearImpl>(0).weight;
  CHECK(w.as<float>().grad().defined());
  m->zero_grad(false);
  CHECK(w.as<float>().grad().to_vector() == std::vector<float>(6, 0.f));
  m->zero_grad();
  CHECK_FALSE(w.as<float>().grad().defined());

  int visited = 0;
  m->apply([&](nn::Module&) { ++visited; });
  CHECK(visited == 3);

  nn::Module plain;
  plain.register_parameter("w", zeros({2}));
  CHECK(error_of([&] { plain.register_parameter("w", zeros({2})); }) == "attribute 'w' already exists");
  CHECK(error_of([&] { plain.register_buffer("a.b", zeros({2})); }) == "buffer name can't contain \".\", got: a.b");
  CHECK(error_of([&] { m->forward_any(tensor<int64_t>({1, 2, 3})); }) == "Sequential: Linear has no forward for a torch.int64 tensor");
  CHECK(error_of([&] { m->at(5); }) == "index 5 is out of range");
  CHECK(error_of([] { nn::Linear empty = nullptr; empty->name(); }) == "Accessing empty ModuleHolder");
}

TEST_CASE("a small classifier trains with nn modules and cross-entropy") {
  manual_seed(0);
  const auto x = randn({64, 4});
  const Tensor<int64_t> labels = argmax(matmul(x, randn({4, 3})), 1);
  nn::Sequential model(nn::Linear(4, 16));
  model->push_back(nn::ReLU());
  model->push_back(nn::Linear(16, 3));
  nn::CrossEntropyLoss criterion;
  float first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    const Tensor<float> loss = criterion(model(x), labels);
    if (step == 0) first = loss.item();
    last = loss.item();
    model->zero_grad();
    loss.backward();
    const NoGradGuard no_grad;
    for (auto& p : model->parameters()) {
      auto& t = p.as<float>();
      t -= 0.5f * t.grad();
    }
  }
  CHECK(last < 0.25f * first);
  const float accuracy = mean(cast<float>(argmax(model(x), 1) == labels)).item();
  CHECK(accuracy > 0.9f);
}

TEST_CASE("nn::Static: PyTorch's weights, names and printing; the same results as Sequential") {
  // Built in order, a layer at a time, as PyTorch builds nn.Sequential: the
  // same initial weights as Linear(5, 3) then Linear(3, 2, bias=False).
  manual_seed(0);
  nn::Static<nn::sized::Linear<5, 3>, nn::Tanh, nn::sized::Linear<3, 2, false>> small;
  CHECK(bitwise_equal(small->at<0>().weight.as<float>(), test::golden<float>("nn_init_l1_weight")));
  CHECK(bitwise_equal(small->at<0>().bias.as<float>(), test::golden<float>("nn_init_l1_bias")));
  CHECK(bitwise_equal(small->at<2>().weight.as<float>(), test::golden<float>("nn_init_l2_weight")));
  CHECK_FALSE(small->at<2>().bias.defined());
  static_assert(decltype(small)::ImplType::size() == 3);

  using MLP = nn::Static<nn::sized::Linear<6, 8>, nn::ReLU, nn::sized::Dropout<0.25>, nn::sized::LayerNorm<8>,
                         nn::GELU, nn::sized::Linear<8, 3>, nn::Tanh>;
  auto dynamic_mlp = [] {
    nn::Sequential m(nn::Linear(6, 8));
    m->push_back(nn::ReLU());
    m->push_back(nn::Dropout(0.25));
    m->push_back(nn::LayerNorm(nn::LayerNormOptions({8})));
    m->push_back(nn::GELU());
    m->push_back(nn::Linear(8, 3));
    m->push_back(nn::Tanh());
    return m;
  };
  manual_seed(1);
  MLP fixed;
  manual_seed(1);
  nn::Sequential dynamic = dynamic_mlp();
  std::ostringstream a, b;
  a << fixed;
  b << dynamic;
  CHECK(a.str() == b.str());
  CHECK(keys_of(fixed->state_dict()) == keys_of(dynamic->state_dict()));
  CHECK(keys_of(fixed->named_parameters()) == "0.weight\n0.bias\n3.weight\n3.bias\n5.weight\n5.bias");
  const auto fixed_state = fixed->state_dict(), dynamic_state = dynamic->state_dict();
  for (std::size_t i = 0; i < fixed_state.size(); ++i)
    CHECK(bitwise_equal(fixed_state[i].second.as<float>(), dynamic_state[i].second.as<float>()));

  // Training mode: the same dropout draws, outputs and gradients (the fused
  // ReLU-dropout pass and the separate ones round alike).
  const auto x = randn({4, 6});
  manual_seed(2);
  const Tensor<float> yf = fixed(x);
  manual_seed(2);
  const Tensor<float> yd = dynamic(x);
  CHECK(bitwise_equal(yf, yd));
  const auto g = randn({4, 3});
  yf.backward(g);
  yd.backward(g);
  for (std::size_t i = 0; i < 6; ++i)
    check_close(fixed->parameters()[i].as<float>().grad(), dynamic->parameters()[i].as<float>().grad(), 1e-6, 1e-7,
                "parameter gradient " + std::to_string(i));
  // Evaluation: dropout is the identity, and the results do not change.
  fixed->eval();
  dynamic->eval();
  CHECK(bitwise_equal(fixed(x), fixed(x)));
  check_close(fixed(x), dynamic(x), 1e-6, 1e-7, "evaluation");

  // A checkpoint moves from one form to the other.
  manual_seed(3);
  MLP other;
  other->load_state_dict(dynamic->state_dict());
  other->eval();
  CHECK(bitwise_equal(other(x), fixed(x)));

  // Double, and the Jacobian against finite differences.
  fixed->to<double>();
  CHECK(autograd::gradcheck([&](const std::vector<Tensor<double>>& v) { return fixed(v[0]); }, {randn<double>({3, 6})}));
}
