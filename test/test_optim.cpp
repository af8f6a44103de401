// optim: optimizers against PyTorch 1.13's trajectories (tools/make_golden.py:
// optim_trajectories), their state_dicts, errors and the fused update.
#include <nn/nn.hpp>
#include <optim/optim.hpp>

#include "common.hpp"

using namespace tsr;
using test::check_close;
using test::error_of;

namespace {

using Groups = std::vector<optim::OptimizerParamGroup>;
using Factory = std::function<std::unique_ptr<optim::Optimizer>(Groups)>;

template <class Opt, class Options>
Factory make(Options options) {
  return [options](Groups groups) { return std::make_unique<Opt>(std::move(groups), options); };
}
// Two groups, [w1, b1] with the optimizer's defaults and [w2, b2] with `second`.
template <class Opt, class Options>
Factory make_groups(Options defaults, Options second) {
  return [defaults, second](Groups groups) {
    Groups two;
    two.emplace_back(std::vector<AnyTensor>{groups[0].params()[0], groups[0].params()[1]});
    two.emplace_back(std::vector<AnyTensor>{groups[0].params()[2], groups[0].params()[3]},
                     std::make_unique<Options>(second));
    return std::make_unique<Opt>(std::move(two), defaults);
  };
}

// The cases of make_golden.py's OPTIM_CASES, with the same options.
const std::vector<std::pair<std::string, Factory>>& optim_cases() {
  using namespace optim;
  static const std::vector<std::pair<std::string, Factory>> cases = {
      {"sgd", make<SGD>(SGDOptions(0.1))},
      {"sgd_momentum", make<SGD>(SGDOptions(0.1).momentum(0.9))},
      {"sgd_dampening_decay", make<SGD>(SGDOptions(0.1).momentum(0.9).dampening(0.5).weight_decay(0.01))},
      {"sgd_nesterov", make<SGD>(SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.01))},
      {"sgd_maximize", make<SGD>(SGDOptions(0.01).momentum(0.5).maximize(true))},
      {"sgd_groups", make_groups<SGD>(SGDOptions(0.05), SGDOptions(0.1).momentum(0.9))},
      {"adam", make<Adam>(AdamOptions(0.01))},
      {"adam_amsgrad_decay", make<Adam>(AdamOptions(0.01).amsgrad(true).weight_decay(0.1))},
      {"adam_betas_maximize", make<Adam>(AdamOptions(0.01).betas({0.8, 0.99}).eps(1e-6).maximize(true))},
      {"adam_groups", make_groups<Adam>(AdamOptions(0.01), AdamOptions(0.02).betas({0.5, 0.9}))},
      {"adamw", make<AdamW>(AdamWOptions(0.01))},
      {"adamw_amsgrad_decay", make<AdamW>(AdamWOptions(0.01).amsgrad(true).weight_decay(0.1))},
      {"rmsprop", make<RMSprop>(RMSpropOptions(0.01))},
      {"rmsprop_centered", make<RMSprop>(RMSpropOptions(0.01).centered(true))},
      {"rmsprop_momentum", make<RMSprop>(RMSpropOptions(0.01).momentum(0.5))},
      {"rmsprop_centered_momentum_decay", make<RMSprop>(RMSpropOptions(0.01).centered(true).momentum(0.9).weight_decay(0.01))},
      {"adagrad", make<Adagrad>(AdagradOptions(0.1))},
      {"adagrad_decay_initial",
       make<Adagrad>(AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.01).initial_accumulator_value(0.1))},
      {"adadelta", make<Adadelta>(AdadeltaOptions(1.0))},
      {"adadelta_rho_decay_maximize", make<Adadelta>(AdadeltaOptions(0.5).rho(0.8).weight_decay(0.01).maximize(true))},
      {"lbfgs", make<LBFGS>(LBFGSOptions(1.0).max_iter(5))},
      {"lbfgs_history", make<LBFGS>(LBFGSOptions(0.5).max_iter(8).history_size(3))},
      {"lbfgs_strong_wolfe", make<LBFGS>(LBFGSOptions(1.0).max_iter(10).line_search_fn("strong_wolfe"))},
  };
  return cases;
}

// The golden model's parameters (w1, b1, w2, b2) in T, as leaves.
template <class T>
std::vector<Tensor<T>> initial_params() {
  std::vector<Tensor<T>> out;
  for (const char* name : {"optim_w1", "optim_b1", "optim_w2", "optim_b2"}) {
    Tensor<T> p = cast<T>(test::golden<double>(name));
    p.requires_grad_(true);
    out.push_back(p);
  }
  return out;
}

template <class T>
Tensor<T> golden_loss(const std::vector<Tensor<T>>& p, const Tensor<T>& x, const Tensor<T>& y) {
  const Tensor<T> hidden = tanh(matmul(x, p[0].t()) + p[1]);
  const Tensor<T> diff = matmul(hidden, p[2].t()) + p[3] - y;
  return mean(diff * diff);
}

template <class T>
Tensor<T> flat(const std::vector<Tensor<T>>& params) {
  std::vector<Tensor<T>> parts;
  for (const auto& p : params) parts.push_back(p.detach().reshape({-1}));
  return cat(parts);
}

// 25 steps of the case's optimizer on the golden model (LBFGS: 4 steps with
// a closure, as make_golden.py's); the final parameters.
template <class T>
Tensor<T> run_trajectory(const std::string& name, const Factory& factory) {
  auto params = initial_params<T>();
  const Tensor<T> x = cast<T>(test::golden<double>("optim_x")), y = cast<T>(test::golden<double>("optim_y"));
  auto opt = factory(Groups{optim::OptimizerParamGroup(std::vector<AnyTensor>(params.begin(), params.end()))});
  if (name.starts_with("lbfgs")) {
    for (int i = 0; i < 4; ++i)
      opt->step([&] {
        opt->zero_grad();
        Tensor<T> loss = golden_loss(params, x, y);
        loss.backward();
        return loss;
      });
    return flat(params);
  }
  for (int i = 0; i < 25; ++i) {
    opt->zero_grad();
    golden_loss(params, x, y).backward();
    opt->step();
  }
  return flat(params);
}

}  // namespace

TEST_CASE("every optimizer follows PyTorch's trajectory (25 steps; LBFGS 4 closure steps)") {
  for (const auto& [name, factory] : optim_cases()) {
    SUBCASE(name.c_str()) {
      if (name.starts_with("lbfgs")) {
        // LBFGS amplifies rounding (PyTorch's own float and double runs
        // differ by up to 1e-3 here), so float runs cannot agree to 1e-5;
        // ours must be about as close to the double trajectory as PyTorch's
        // float run is: within 4 times its distance (the dot products' sums
        // run in a different order on each SIMD width; a baseline x86-64
        // build's lbfgs case is 2.1 times).
        const Tensor<double> exact = test::golden<double>("optim_" + name + "_f64");
        const double torch_float_error = amax(abs(test::golden<double>("optim_" + name + "_f32") - exact)).item();
        check_close(run_trajectory<float>(name, factory), exact, 0, 4 * torch_float_error, name + " float");
      } else {
        check_close(run_trajectory<float>(name, factory), test::golden<float>("optim_" + name + "_f32"), 1e-5, 1e-6,
                    name + " float");
      }
      check_close(run_trajectory<double>(name, factory), test::golden<double>("optim_" + name + "_f64"), 1e-10, 1e-12,
                  name + " double");
    }
  }
}

TEST_CASE("a state_dict taken midway continues the same trajectory") {
  // 10 steps, state_dict, a new optimizer on copies of the parameters loads
  // it, 15 more steps: PyTorch's 25-step result (steps, moments, buffers and
  // the groups' options all carried over).
  for (const char* name : {"sgd_groups", "adam_amsgrad_decay", "adam_groups", "rmsprop_centered_momentum_decay",
                           "adagrad_decay_initial", "adadelta"}) {
    CAPTURE(name);
    const Factory* factory = nullptr;
    for (const auto& [n, f] : optim_cases())
      if (n == name) factory = &f;
    REQUIRE(factory);
    auto params = initial_params<double>();
    const Tensor<double> x = test::golden<double>("optim_x"), y = test::golden<double>("optim_y");
    auto first = (*factory)(Groups{optim::OptimizerParamGroup(std::vector<AnyTensor>(params.begin(), params.end()))});
    for (int i = 0; i < 10; ++i) {
      first->zero_grad();
      golden_loss(params, x, y).backward();
      first->step();
    }
    const optim::OptimizerStateDict sd = first->state_dict();
    std::vector<Tensor<double>> copies;
    for (const auto& p : params) copies.push_back(Tensor<double>(p.detach().clone()).requires_grad_(true));
    // A fresh optimizer whose own options differ: load_state_dict restores them.
    auto second = (*factory)(Groups{optim::OptimizerParamGroup(std::vector<AnyTensor>(copies.begin(), copies.end()))});
    for (auto& g : second->param_groups()) g.options().set_lr(123.0);
    second->load_state_dict(sd);
    first.reset();  // the loaded state must not share the first optimizer's tensors
    for (int i = 0; i < 15; ++i) {
      second->zero_grad();
      golden_loss(copies, x, y).backward();
      second->step();
    }
    check_close(flat(copies), test::golden<double>(std::string("optim_") + name + "_f64"), 1e-10, 1e-12, name);
  }
}

TEST_CASE("state_dict lists PyTorch's state names and group options") {
  auto params = initial_params<float>();
  optim::Adam adam(std::vector<AnyTensor>(params.begin(), params.end()), optim::AdamOptions(0.01).amsgrad(true));
  CHECK(adam.state_dict().state.empty());  // no state before the first step
  golden_loss(params, Tensor<float>(cast<float>(test::golden<double>("optim_x"))),
              Tensor<float>(cast<float>(test::golden<double>("optim_y")))).backward();
  params[3].mutable_grad() = {};  // a parameter without a gradient is skipped, as in PyTorch
  adam.step();
  const auto sd = adam.state_dict();
  REQUIRE(sd.state.size() == 3);
  CHECK(sd.state[2].first == 2);
  std::string names;
  for (const auto& [k, v] : sd.state[0].second.entries()) names += k + " ";
  CHECK(names == "step exp_avg exp_avg_sq max_exp_avg_sq ");
  CHECK(std::get<AnyTensor>(sd.state[0].second.at("step")).as<float>().item() == 1.0f);
  std::string options;
  for (const auto& [k, v] : sd.param_groups[0].options) options += k + " ";
  CHECK(options == "lr betas eps weight_decay amsgrad maximize ");
  CHECK(sd.param_groups[0].params == std::vector<int64_t>{0, 1, 2, 3});

  // Adagrad's state exists from construction, as PyTorch's.
  optim::Adagrad adagrad(std::vector<AnyTensor>(params.begin(), params.end()), optim::AdagradOptions().initial_accumulator_value(0.5));
  REQUIRE(adagrad.state_dict().state.size() == 4);
  CHECK(adagrad.state(0, 1).tensor<float>("sum").sizes() == Shape{4});
  CHECK(adagrad.state(0, 1).tensor<float>("sum").to_vector() == std::vector<float>(4, 0.5f));
}

TEST_CASE("optimizers refuse bad options and parameters with PyTorch's messages") {
  Tensor<float> w = randn<float>({3});
  w.requires_grad_(true);
  const std::vector<AnyTensor> ps{w};
  using namespace optim;
  CHECK(error_of([&] { SGD(ps, SGDOptions(-0.1)); }) == "Invalid learning rate: -0.1");
  CHECK(error_of([&] { SGD(ps, SGDOptions(0.1).momentum(-1)); }) == "Invalid momentum value: -1.0");
  CHECK(error_of([&] { SGD(ps, SGDOptions(0.1).nesterov(true)); }) == "Nesterov momentum requires a momentum and zero dampening");
  CHECK(error_of([&] { Adam(ps, AdamOptions(0.1).betas({1.0, 0.9})); }) == "Invalid beta parameter at index 0: 1.0");
  CHECK(error_of([&] { Adam(ps, AdamOptions(0.1).eps(-1e-8)); }) == "Invalid epsilon value: -1e-08");
  CHECK(error_of([&] { AdamW(ps, AdamWOptions().weight_decay(-1)); }) == "Invalid weight_decay value: -1.0");
  CHECK(error_of([&] { Adadelta(ps, AdadeltaOptions().rho(1.5)); }) == "Invalid rho value: 1.5");
  CHECK(error_of([&] { SGD(std::vector<AnyTensor>{}, SGDOptions(0.1)); }) == "optimizer got an empty parameter list");
  CHECK(error_of([&] {
          Groups groups;
          groups.emplace_back(std::vector<AnyTensor>{w});
          groups.emplace_back(std::vector<AnyTensor>{w});
          SGD(std::move(groups), SGDOptions(0.1));
        }) == "some parameters appear in more than one parameter group");
  const Tensor<float> non_leaf = w * 2.0f;
  CHECK(error_of([&] { SGD(std::vector<AnyTensor>{non_leaf}, SGDOptions(0.1)); }) == "can't optimize a non-leaf Tensor");
  CHECK(error_of([&] { SGD(std::vector<AnyTensor>{Tensor<int64_t>(zeros<int64_t>({2}))}, SGDOptions(0.1)); }) ==
        "optimizer can only optimize Tensors of floating point dtype, but one of the params is torch.int64");

  SGD sgd(ps, SGDOptions(0.1));
  OptimizerStateDict sd = sgd.state_dict();
  sd.param_groups.push_back(sd.param_groups[0]);
  CHECK(error_of([&] { sgd.load_state_dict(sd); }) == "loaded state dict has a different number of parameter groups");
  sd.param_groups.pop_back();
  sd.param_groups[0].params.push_back(1);
  CHECK(error_of([&] { sgd.load_state_dict(sd); }) ==
        "loaded state dict contains a parameter group that doesn't match the size of optimizer's group");
}

TEST_CASE("the fused update matches the formulas written as separate tensor operations") {
  // Adam with decay and amsgrad on sizes that exercise the batch tail and the
  // threaded split (over 2^16 elements), on 1 and 2 threads, against the
  // same step written as PyTorch writes it, one tensor operation at a time.
  for (const int64_t n : {int64_t{1}, int64_t{17}, int64_t{1000}, int64_t{200003}}) {
    CAPTURE(n);
    manual_seed(5);
    const Tensor<double> start = randn<double>({n}), grad = randn<double>({n});
    auto run_fused = [&](int threads) {
      const int before = get_num_threads();
      set_num_threads(threads);
      Tensor<double> p = start.clone();
      p.requires_grad_(true);
      optim::Adam adam(std::vector<AnyTensor>{p}, optim::AdamOptions(0.1).weight_decay(0.1).amsgrad(true));
      for (int i = 0; i < 3; ++i) {
        p.mutable_grad() = grad * double(i + 1);
        adam.step();
      }
      set_num_threads(before);
      return Tensor<double>(p.detach());
    };
    Tensor<double> p = start.clone(), m = zeros<double>({n}), v = zeros<double>({n}), v_max = zeros<double>({n});
    for (int i = 0; i < 3; ++i) {
      const Tensor<double> g = grad * double(i + 1) + 0.1 * p;
      m = m * 0.9 + 0.1 * g;
      v = v * 0.999 + 0.001 * g * g;
      v_max = maximum(v_max, v);
      const double bc1 = 1 - std::pow(0.9, i + 1), bc2 = 1 - std::pow(0.999, i + 1);
      p = p + (-0.1 / bc1) * m / (sqrt(v_max) / std::sqrt(bc2) + 1e-8);
    }
    const Tensor<double> one = run_fused(1), two = run_fused(2);
    CHECK(test::bitwise_equal(one, two));
    check_close(one, p, 1e-14, 1e-15, "fused Adam");
  }
}

TEST_CASE("optimizers update a model's parameters in place, whatever their layout") {
  manual_seed(0);
  nn::Linear linear(4, 3);
  optim::SGD sgd(linear->parameters(), optim::SGDOptions(0.5));
  const Tensor<float> before = linear->weight.as<float>().detach().clone();
  const Tensor<float> x = randn<float>({2, 4});
  sum(linear(x)).backward();
  const Tensor<float> grad = linear->weight.as<float>().grad().clone();
  sgd.step();
  check_close(linear->weight.as<float>(), before - 0.5f * grad, 1e-6, 1e-7, "Linear weight after a step");

  // zero_grad(false) zeroes in place; the default unsets.
  sgd.zero_grad(false);
  REQUIRE(linear->weight.as<float>().grad().defined());
  CHECK(sum(abs(linear->weight.as<float>().grad())).item() == 0.0f);
  sgd.zero_grad();
  CHECK_FALSE(linear->weight.as<float>().grad().defined());

  // A non-contiguous leaf (a transposed parameter) is updated through a copy
  // and written back; its version moves, as any in-place write's does.
  Tensor<double> base = randn<double>({3, 5});
  Tensor<double> p = base.t();
  p.requires_grad_(true);
  p.mutable_grad() = ones<double>({5, 3});
  optim::SGD plain(std::vector<AnyTensor>{p}, optim::SGDOptions(0.25).momentum(0.9));
  const Tensor<double> expected = p.detach().clone() - 0.25;
  plain.step();
  check_close(p, expected, 0, 0, "transposed parameter");
  check_close(base.t(), expected, 0, 0, "its base");
}

namespace {
using SchedulerFactory = std::function<std::shared_ptr<optim::LRScheduler>(optim::Optimizer&)>;

// make_golden.py's lr_schedules optimizer: SGD on two groups (lr 0.1 and
// 0.05), momentum 0.9.
struct TwoGroups {
  Tensor<float> p1 = Tensor<float>(zeros<float>({2})).requires_grad_(true);
  Tensor<float> p2 = Tensor<float>(zeros<float>({3})).requires_grad_(true);
  optim::SGD sgd = make();
  optim::SGD make() {
    Groups groups;
    groups.emplace_back(std::vector<AnyTensor>{p1});
    groups.emplace_back(std::vector<AnyTensor>{p2}, std::make_unique<optim::SGDOptions>(optim::SGDOptions(0.05).momentum(0.9)));
    return optim::SGD(std::move(groups), optim::SGDOptions(0.1).momentum(0.9));
  }
  std::vector<double> lrs() { return {sgd.param_groups()[0].options().get_lr(), sgd.param_groups()[1].options().get_lr()}; }
  std::vector<double> momenta() {
    return {static_cast<optim::SGDOptions&>(sgd.param_groups()[0].options()).momentum(),
            static_cast<optim::SGDOptions&>(sgd.param_groups()[1].options()).momentum()};
  }
};

// Values equal to PyTorch's within a few ulps of double (the formulas are
// PyTorch's; only libm's cos may differ in the last bit).
void check_sequence(const std::vector<double>& got, const std::string& golden) {
  check_close(tensor<double>(got, {static_cast<int64_t>(got.size() / 2), 2}), test::golden<double>(golden),
              1e-13, 1e-15, golden);
}
}  // namespace

TEST_CASE("every scheduler gives PyTorch's learning rates over 100 steps") {
  using namespace optim;
  const std::vector<std::pair<std::string, SchedulerFactory>> cases = {
      {"step", [](Optimizer& o) { return std::make_shared<StepLR>(o, 7, 0.5); }},
      {"multistep", [](Optimizer& o) { return std::make_shared<MultiStepLR>(o, std::vector<int64_t>{10, 30, 30, 60}, 0.3); }},
      {"exponential", [](Optimizer& o) { return std::make_shared<ExponentialLR>(o, 0.97); }},
      {"linear", [](Optimizer& o) { return std::make_shared<LinearLR>(o, 0.25, 1.0, 40); }},
      {"linear_default", [](Optimizer& o) { return std::make_shared<LinearLR>(o); }},
      {"cosine", [](Optimizer& o) { return std::make_shared<CosineAnnealingLR>(o, 30, 0.001); }},
      {"cosine_restarts", [](Optimizer& o) { return std::make_shared<CosineAnnealingWarmRestarts>(o, 10, 2, 0.001); }},
      {"onecycle", [](Optimizer& o) { return std::make_shared<OneCycleLR>(o, OneCycleLROptions({0.5, 1.0}, 100)); }},
      {"onecycle_linear_three_phase",
       [](Optimizer& o) {
         return std::make_shared<OneCycleLR>(o, OneCycleLROptions(0.5, 100).pct_start(0.25).anneal_strategy("linear").three_phase(true)
                                                    .div_factor(10.0).final_div_factor(100.0));
       }},
      {"lambda", [](Optimizer& o) { return std::make_shared<LambdaLR>(o, [](int64_t e) { return std::pow(0.95, double(e)); }); }},
      {"sequential",
       [](Optimizer& o) {
         return std::make_shared<SequentialLR>(
             o, std::vector<std::shared_ptr<LRScheduler>>{std::make_shared<LinearLR>(o, 0.1, 1.0, 10), std::make_shared<ExponentialLR>(o, 0.95)},
             std::vector<int64_t>{10});
       }},
      {"sequential_three",
       [](Optimizer& o) {
         return std::make_shared<SequentialLR>(
             o, std::vector<std::shared_ptr<LRScheduler>>{std::make_shared<StepLR>(o, 5, 0.5), std::make_shared<CosineAnnealingLR>(o, 20),
                                                          std::make_shared<CosineAnnealingWarmRestarts>(o, 7)},
             std::vector<int64_t>{30, 60});
       }},
  };
  for (const auto& [name, make] : cases) {
    CAPTURE(name);
    TwoGroups model;
    auto scheduler = make(model.sgd);
    std::vector<double> lrs = model.lrs(), momenta = model.momenta();
    for (int t = 0; t < 100; ++t) {
      model.sgd.step();
      scheduler->step();
      for (double v : model.lrs()) lrs.push_back(v);
      for (double v : model.momenta()) momenta.push_back(v);
    }
    check_sequence(lrs, "sched_" + name + "_lr");
    if (name.starts_with("onecycle")) check_sequence(momenta, "sched_" + name + "_momentum");
  }

  // ReduceLROnPlateau follows a metric (negated in "max" mode, as the golden's).
  const std::vector<double> metric = test::golden<double>("sched_metric").to_vector();
  for (const bool max_mode : {false, true}) {
    TwoGroups model;
    ReduceLROnPlateau plateau(model.sgd, max_mode ? ReduceLROnPlateauOptions().mode("max").threshold_mode("abs").threshold(0.1).patience(2).factor(0.7)
                                                  : ReduceLROnPlateauOptions().patience(3).cooldown(2).factor(0.5).min_lr({1e-3, 1e-4}));
    std::vector<double> lrs = model.lrs();
    for (int64_t t = 0; t < 100; ++t) {
      model.sgd.step();
      const double m = metric[static_cast<std::size_t>(t)];
      plateau.step(max_mode ? -m : m);
      for (double v : model.lrs()) lrs.push_back(v);
    }
    check_sequence(lrs, max_mode ? "sched_plateau_max_abs_lr" : "sched_plateau_lr");
  }

  // OneCycleLR cycles Adam's beta1, and refuses a step past total_steps.
  Tensor<float> p = Tensor<float>(zeros<float>({2})).requires_grad_(true);
  Adam adam(std::vector<AnyTensor>{p}, AdamOptions(0.1).betas({0.9, 0.99}));
  OneCycleLR one_cycle(adam, OneCycleLROptions(0.3, 50));
  std::vector<double> beta1{std::get<0>(static_cast<AdamOptions&>(adam.param_groups()[0].options()).betas())};
  for (int t = 0; t < 50; ++t) {
    adam.step();
    one_cycle.step();
    beta1.push_back(std::get<0>(static_cast<AdamOptions&>(adam.param_groups()[0].options()).betas()));
  }
  check_close(tensor<double>(beta1, {51}), test::golden<double>("sched_onecycle_adam_beta1"), 1e-13, 1e-15, "beta1");
  CHECK(error_of([&] { one_cycle.step(); }) == "Tried to step 51 times. The specified number of total steps is 50");
  CHECK(error_of([&] { OneCycleLR(adam, OneCycleLROptions(0.3, 50).anneal_strategy("cosine")); }) ==
        "anneal_strategy must by one of 'cos' or 'linear', instead got cosine");
  CHECK(error_of([&] { LinearLR(adam, 0.0); }) ==
        "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.");
  CHECK(error_of([&] { ReduceLROnPlateau(adam, ReduceLROnPlateauOptions().factor(1.0)); }) == "Factor should be < 1.0.");
}

TEST_CASE("gradient clipping and parameter vectors follow torch.nn.utils") {
  auto with_golden_grads = [] {
    std::vector<Tensor<float>> ps;
    for (const char* name : {"clip_grad0", "clip_grad1"}) {
      const Tensor<float> g = test::golden<float>(name);
      Tensor<float> p = zeros<float>(g.sizes());
      p.requires_grad_(true);
      p.mutable_grad() = g.clone();
      ps.push_back(p);
    }
    return ps;
  };
  const std::vector<double> norms = test::golden<double>("clip_norms").to_vector();
  const std::vector<std::pair<double, double>> cases = {{1.0, 2.0}, {0.5, INFINITY}, {100.0, 1.0}, {2.0, 3.0}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    auto ps = with_golden_grads();
    const double total = nn::utils::clip_grad_norm_({ps[0], ps[1]}, cases[i].first, cases[i].second);
    CHECK(total == doctest::Approx(norms[i]).epsilon(1e-6));
    const std::string prefix = "clip_norm" + std::to_string(i);
    check_close(ps[0].grad(), test::golden<float>(prefix + "_grad0"), 1e-6, 1e-7, prefix);
    check_close(ps[1].grad(), test::golden<float>(prefix + "_grad1"), 1e-6, 1e-7, prefix);
  }
  auto ps = with_golden_grads();
  nn::utils::clip_grad_value_({ps[0], ps[1]}, 0.7);
  check_close(ps[0].grad(), test::golden<float>("clip_value_grad0"), 0, 0, "clip_grad_value_");
  check_close(ps[1].grad(), test::golden<float>("clip_value_grad1"), 0, 0, "clip_grad_value_");

  ps[1].mutable_grad() = full<float>({5}, INFINITY);
  CHECK(error_of([&] { nn::utils::clip_grad_norm_({ps[0], ps[1]}, 1.0, 2.0, true); }) ==
        "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. To disable "
        "this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`");

  // parameters_to_vector and back: the same values, written in place.
  manual_seed(3);
  nn::Linear linear(3, 2);
  const AnyTensor flat_params = nn::utils::parameters_to_vector(linear->parameters());
  CHECK(flat_params.sizes() == Shape{8});
  const Tensor<float> doubled = flat_params.as<float>() * 2.0f;
  const Tensor<float> weight = linear->weight.as<float>();
  nn::utils::vector_to_parameters(doubled, linear->parameters());
  check_close(linear->weight.as<float>().reshape({-1}), doubled.narrow(0, 0, 6), 0, 0, "weight");
  check_close(linear->bias.as<float>(), doubled.narrow(0, 6, 2), 0, 0, "bias");
  CHECK(weight.is_alias_of(linear->weight.as<float>()));  // in place
  CHECK(error_of([&] { nn::utils::vector_to_parameters(doubled.narrow(0, 0, 7), linear->parameters()); }) ==
        "vector_to_parameters: the vector has 7 elements, but the parameters have 8");
}

TEST_CASE("LBFGS needs a closure and one parameter group, and keeps its history in the state") {
  auto params = initial_params<double>();
  const Tensor<double> x = test::golden<double>("optim_x"), y = test::golden<double>("optim_y");
  optim::LBFGS lbfgs(std::vector<AnyTensor>(params.begin(), params.end()), optim::LBFGSOptions(1.0).max_iter(5));
  CHECK(error_of([&] { lbfgs.step(); }) == "LBFGS::step needs a closure that re-evaluates the loss");
  auto closure = [&] {
    lbfgs.zero_grad();
    Tensor<double> loss = golden_loss(params, x, y);
    loss.backward();
    return loss;
  };
  const double first = lbfgs.step(closure).as<double>().item();
  const double second = lbfgs.step(closure).as<double>().item();
  CHECK(second < first);
  optim::ParamState& state = lbfgs.state(0, 0);
  CHECK(state.integer("n_iter") == 10);
  CHECK(std::get<std::vector<AnyTensor>>(state.at("old_dirs")).size() == std::get<std::vector<AnyTensor>>(state.at("ro")).size());
  // PyTorch's state after the same two steps: n_iter, func_evals, the
  // history's length, H_diag, t, prev_loss.
  const std::vector<double> torch_state = test::golden<double>("optim_lbfgs_state").to_vector();
  CHECK(state.integer("n_iter") == int64_t(torch_state[0]));
  CHECK(state.integer("func_evals") == int64_t(torch_state[1]));
  CHECK(std::get<std::vector<AnyTensor>>(state.at("old_dirs")).size() == std::size_t(torch_state[2]));
  CHECK(state.tensor<double>("H_diag").item() == doctest::Approx(torch_state[3]).epsilon(1e-10));
  CHECK(std::get<double>(state.at("t")) == doctest::Approx(torch_state[4]).epsilon(1e-12));
  CHECK(std::get<double>(state.at("prev_loss")) == doctest::Approx(torch_state[5]).epsilon(1e-10));
  const auto options = lbfgs.state_dict().param_groups[0].options;
  CHECK(std::get<int64_t>(options[2].second) == 6);  // max_eval = max_iter * 5 / 4, fixed at construction

  Groups groups;
  groups.emplace_back(std::vector<AnyTensor>{params[0]});
  groups.emplace_back(std::vector<AnyTensor>{params[1]});
  CHECK(error_of([&] { optim::LBFGS(std::move(groups), optim::LBFGSOptions()); }) ==
        "LBFGS doesn't support per-parameter options (parameter groups)");
  CHECK(error_of([&] { optim::LBFGS(std::vector<AnyTensor>{params[0]}, optim::LBFGSOptions().line_search_fn("wolfe")); }) ==
        "only 'strong_wolfe' is supported");
}
