// Learning-rate schedulers, as torch.optim.lr_scheduler (PyTorch 1.13).
//
// A scheduler sets the learning rate of each of its optimizer's parameter
// groups when step() is called (after optimizer.step(), once per epoch or
// per batch as the schedule is meant). The formulas are PyTorch's chainable
// forms, each new rate computed from the group's current one, so that the
// sequences agree with PyTorch's to the last bit and schedulers compose the
// way PyTorch's do; step(epoch) uses the closed forms where PyTorch has them.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "../detail/python_repr.hpp"
#include "optimizer.hpp"

namespace tsr::optim {

class SequentialLR;

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
    for (auto& group : optimizer_.param_groups()) {
      if (!group.initial_lr()) group.set_initial_lr(group.options().get_lr());
      base_lrs_.push_back(*group.initial_lr());
    }
  }
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;
  virtual ~LRScheduler() = default;

  // The next rate of the schedule.
  virtual void step() {
    ++last_epoch_;
    set_lrs(get_lr());
  }
  // Jumps to `epoch` (PyTorch's deprecated step(epoch), which SequentialLR
  // uses): the closed form where there is one.
  virtual void step(double epoch) {
    last_epoch_ = static_cast<int64_t>(std::floor(epoch));
    set_lrs(closed_form_lr());
  }

  // The rates the last step set, one per group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }

 protected:
  // The rates for last_epoch_ from the groups' current ones.
  virtual std::vector<double> get_lr() = 0;
  // The rates for last_epoch_ from the base rates, where PyTorch has such a
  // form (_get_closed_form_lr); the chainable form elsewhere.
  virtual std::vector<double> closed_form_lr() { return get_lr(); }

  // PyTorch's constructor ends with a first step to epoch 0; derived
  // constructors call this once their own members are set.
  void initial_step() { step(); }

  double group_lr(std::size_t g) const { return optimizer_.param_groups()[g].options().get_lr(); }
  std::size_t groups() const { return optimizer_.param_groups().size(); }
  void set_lrs(const std::vector<double>& lrs) {
    for (std::size_t g = 0; g < lrs.size(); ++g) optimizer_.param_groups()[g].options().set_lr(lrs[g]);
    last_lr_ = lrs;
  }
  // f(base_lr) for every group.
  template <class F>
  std::vector<double> each_base(F&& f) const {
    std::vector<double> out;
    for (double base : base_lrs_) out.push_back(f(base));
    return out;
  }
  // f(current lr) for every group.
  template <class F>
  std::vector<double> each_current(F&& f) const {
    std::vector<double> out;
    for (std::size_t g = 0; g < groups(); ++g) out.push_back(f(group_lr(g)));
    return out;
  }

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = -1;
  std::vector<double> last_lr_;

  friend class SequentialLR;
};

// Multiplies the rate by gamma every step_size steps.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1)
      : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
    tsr::detail::check(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    const bool decay = last_epoch_ != 0 && last_epoch_ % step_size_ == 0;
    return each_current([&](double lr) { return decay ? lr * gamma_ : lr; });
  }
  std::vector<double> closed_form_lr() override {
    return each_base([&](double base) { return base * std::pow(gamma_, static_cast<double>(last_epoch_ / step_size_)); });
  }

 private:
  int64_t step_size_;
  double gamma_;
};

// Multiplies the rate by gamma at each milestone (by gamma^k at a milestone
// listed k times).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1)
      : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
    std::sort(milestones_.begin(), milestones_.end());
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    const auto count = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
    return each_current([&](double lr) { return count == 0 ? lr : lr * std::pow(gamma_, static_cast<double>(count)); });
  }
  std::vector<double> closed_form_lr() override {
    const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
    return each_base([&](double base) { return base * std::pow(gamma_, static_cast<double>(passed)); });
  }

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

// Multiplies the rate by gamma every step.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) { initial_step(); }

 protected:
  std::vector<double> get_lr() override {
    return each_current([&](double lr) { return last_epoch_ == 0 ? lr : lr * gamma_; });
  }
  std::vector<double> closed_form_lr() override {
    return each_base([&](double base) { return base * std::pow(gamma_, static_cast<double>(last_epoch_)); });
  }

 private:
  double gamma_;
};

// Scales the rate by a factor going linearly from start_factor to end_factor
// over total_iters steps.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5)
      : LRScheduler(optimizer), start_(start_factor), end_(end_factor), total_(total_iters) {
    tsr::detail::check(start_factor > 0 && start_factor <= 1,
                       "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.");
    tsr::detail::check(end_factor >= 0 && end_factor <= 1, "Ending multiplicative factor expected to be between 0 and 1.");
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    if (last_epoch_ == 0) return each_current([&](double lr) { return lr * start_; });
    if (last_epoch_ > total_) return each_current([](double lr) { return lr; });
    const double factor =
        1.0 + (end_ - start_) / (static_cast<double>(total_) * start_ + static_cast<double>(last_epoch_ - 1) * (end_ - start_));
    return each_current([&](double lr) { return lr * factor; });
  }
  std::vector<double> closed_form_lr() override {
    const double done = static_cast<double>(std::min(total_, last_epoch_)) / static_cast<double>(total_);
    return each_base([&](double base) { return base * (start_ + (end_ - start_) * done); });
  }

 private:
  double start_, end_;
  int64_t total_;
};

namespace detail {
// Python's a % b for b > 0: never negative.
inline int64_t python_mod(int64_t a, int64_t b) { return ((a % b) + b) % b; }
}  // namespace detail

// Cosine annealing from the base rate to eta_min over T_max steps (and back
// up over the next T_max, as PyTorch's recursive form continues).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0)  // NOLINT: PyTorch's names
      : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
    tsr::detail::check(T_max > 0, "CosineAnnealingLR: T_max must be positive, got ", T_max);
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    const double pi = std::numbers::pi, t_max = static_cast<double>(t_max_), e = static_cast<double>(last_epoch_);
    if (last_epoch_ == 0) return each_current([](double lr) { return lr; });
    if (detail::python_mod(last_epoch_ - 1 - t_max_, 2 * t_max_) == 0) {
      std::vector<double> out;
      for (std::size_t g = 0; g < groups(); ++g)
        out.push_back(group_lr(g) + (base_lrs_[g] - eta_min_) * (1 - std::cos(pi / t_max)) / 2);
      return out;
    }
    return each_current([&](double lr) {
      return (1 + std::cos(pi * e / t_max)) / (1 + std::cos(pi * (e - 1) / t_max)) * (lr - eta_min_) + eta_min_;
    });
  }
  std::vector<double> closed_form_lr() override {
    const double pi = std::numbers::pi;
    return each_base([&](double base) {
      return eta_min_ + (base - eta_min_) * (1 + std::cos(pi * static_cast<double>(last_epoch_) / static_cast<double>(t_max_))) / 2;
    });
  }

 private:
  int64_t t_max_;
  double eta_min_;
};

// Cosine annealing restarted every T_i steps, T_i growing by T_mult.
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult = 1, double eta_min = 0.0)  // NOLINT
      : LRScheduler(optimizer), t_0_(T_0), t_i_(static_cast<double>(T_0)), t_mult_(T_mult), eta_min_(eta_min) {
    tsr::detail::check(T_0 > 0, "Expected positive integer T_0, but got ", T_0);
    tsr::detail::check(T_mult >= 1, "Expected integer T_mult >= 1, but got ", T_mult);
    initial_step();
  }

  void step() override {
    if (last_epoch_ < 0) {
      step(0.0);
      return;
    }
    ++last_epoch_;
    t_cur_ += 1;
    if (t_cur_ >= t_i_) {
      t_cur_ -= t_i_;
      t_i_ *= static_cast<double>(t_mult_);
    }
    set_lrs(get_lr());
  }
  // A fractional epoch places the rate within a cycle (epoch + i / iters).
  void step(double epoch) override {
    tsr::detail::check(epoch >= 0, "Expected non-negative epoch, but got ", tsr::detail::python_float_repr(epoch));
    const double t_0 = static_cast<double>(t_0_), mult = static_cast<double>(t_mult_);
    if (epoch >= t_0) {
      if (t_mult_ == 1) {
        t_cur_ = std::fmod(epoch, t_0);
      } else {
        const double n = std::floor(std::log(epoch / t_0 * (mult - 1) + 1) / std::log(mult));
        t_cur_ = epoch - t_0 * (std::pow(mult, n) - 1) / (mult - 1);
        t_i_ = t_0 * std::pow(mult, n);
      }
    } else {
      t_i_ = t_0;
      t_cur_ = epoch;
    }
    last_epoch_ = static_cast<int64_t>(std::floor(epoch));
    set_lrs(get_lr());
  }

 protected:
  std::vector<double> get_lr() override {
    return each_base([&](double base) {
      return eta_min_ + (base - eta_min_) * (1 + std::cos(std::numbers::pi * t_cur_ / t_i_)) / 2;
    });
  }

 private:
  int64_t t_0_;
  double t_i_;
  int64_t t_mult_;
  double eta_min_;
  double t_cur_ = -1;  // PyTorch's T_cur = last_epoch at construction
};

// The rate is base_lr * lr_lambda(epoch), one function for all groups or one per group.
class LambdaLR : public LRScheduler {
 public:
  using Lambda = std::function<double(int64_t)>;
  LambdaLR(Optimizer& optimizer, Lambda lr_lambda)
      : LambdaLR(optimizer, std::vector<Lambda>(optimizer.param_groups().size(), std::move(lr_lambda))) {}
  LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas) : LRScheduler(optimizer), lambdas_(std::move(lr_lambdas)) {
    tsr::detail::check(lambdas_.size() == groups(), "Expected ", groups(), " lr_lambdas, but got ", lambdas_.size());
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    std::vector<double> out;
    for (std::size_t g = 0; g < groups(); ++g) out.push_back(base_lrs_[g] * lambdas_[g](last_epoch_));
    return out;
  }

 private:
  std::vector<Lambda> lambdas_;
};

// OneCycleLR's options (PyTorch's keyword arguments, same defaults).
struct OneCycleLROptions {
  // One maximum rate for every group, or one per group.
  OneCycleLROptions(double max_lr, int64_t total_steps) : OneCycleLROptions(std::vector<double>{max_lr}, total_steps) {}
  OneCycleLROptions(std::vector<double> max_lr, int64_t total_steps) : max_lr_(std::move(max_lr)), total_steps_(total_steps) {}
  OneCycleLROptions& pct_start(double v) { pct_start_ = v; return *this; }
  OneCycleLROptions& anneal_strategy(std::string v) { anneal_strategy_ = std::move(v); return *this; }
  OneCycleLROptions& cycle_momentum(bool v) { cycle_momentum_ = v; return *this; }
  OneCycleLROptions& base_momentum(double v) { base_momentum_ = v; return *this; }
  OneCycleLROptions& max_momentum(double v) { max_momentum_ = v; return *this; }
  OneCycleLROptions& div_factor(double v) { div_factor_ = v; return *this; }
  OneCycleLROptions& final_div_factor(double v) { final_div_factor_ = v; return *this; }
  OneCycleLROptions& three_phase(bool v) { three_phase_ = v; return *this; }

 private:
  friend class OneCycleLR;
  std::vector<double> max_lr_;
  int64_t total_steps_;
  double pct_start_ = 0.3;
  std::string anneal_strategy_ = "cos";
  bool cycle_momentum_ = true;
  double base_momentum_ = 0.85, max_momentum_ = 0.95;
  double div_factor_ = 25.0, final_div_factor_ = 1e4;
  bool three_phase_ = false;
};

// The 1cycle policy: the rate warms up from max_lr / div_factor to max_lr,
// then anneals to the initial rate / final_div_factor (three phases: back
// to the initial rate first); momentum (SGD's, or Adam's beta1) moves the
// opposite way between max_momentum and base_momentum.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& o) : LRScheduler(optimizer), o_(o) {
    tsr::detail::check(o.total_steps_ > 0, "Expected positive integer total_steps, but got ", o.total_steps_);
    tsr::detail::check(o.pct_start_ >= 0 && o.pct_start_ <= 1, "Expected float between 0 and 1 pct_start, but got ",
                       tsr::detail::python_float_repr(o.pct_start_));
    tsr::detail::check(o.anneal_strategy_ == "cos" || o.anneal_strategy_ == "linear",
                       "anneal_strategy must by one of 'cos' or 'linear', instead got ", o.anneal_strategy_);
    const double total = static_cast<double>(o.total_steps_);
    const double high = o.max_momentum_, low = o.base_momentum_;
    if (o.three_phase_) {
      phases_ = {{o.pct_start_ * total - 1, kInitial, kMax, high, low},
                 {2 * o.pct_start_ * total - 2, kMax, kInitial, low, high},
                 {total - 1, kInitial, kMin, high, high}};
    } else {
      phases_ = {{o.pct_start_ * total - 1, kInitial, kMax, high, low}, {total - 1, kMax, kMin, low, high}};
    }
    std::vector<double> max_lrs = o.max_lr_;
    if (max_lrs.size() == 1) max_lrs.assign(groups(), max_lrs[0]);
    tsr::detail::check(max_lrs.size() == groups(), "expected ", groups(), " values for max_lr, got ", max_lrs.size());
    for (std::size_t g = 0; g < groups(); ++g) {
      rates_.push_back({max_lrs[g] / o.div_factor_, max_lrs[g], max_lrs[g] / o.div_factor_ / o.final_div_factor_});
      optimizer_.param_groups()[g].set_initial_lr(rates_[g][kInitial]);
      base_lrs_[g] = rates_[g][kInitial];
    }
    if (o.cycle_momentum_) {
      bool has_momentum = false;
      for (const auto& [name, value] : optimizer_.defaults().items()) {
        if (name == "betas") use_beta1_ = has_momentum = true;
        if (name == "momentum") has_momentum = true;
      }
      tsr::detail::check(has_momentum, "optimizer must support momentum with `cycle_momentum` option enabled");
      for (std::size_t g = 0; g < groups(); ++g) set_momentum(g, o.max_momentum_);
    }
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    const int64_t step = last_epoch_;
    tsr::detail::check(step <= o_.total_steps_, "Tried to step ", step, " times. The specified number of total steps is ",
                       o_.total_steps_);
    std::vector<double> out;
    for (std::size_t g = 0; g < groups(); ++g) {
      double start = 0;
      for (std::size_t i = 0; i < phases_.size(); ++i) {
        const Phase& phase = phases_[i];
        if (static_cast<double>(step) <= phase.end || i + 1 == phases_.size()) {
          const double pct = (static_cast<double>(step) - start) / (phase.end - start);
          out.push_back(anneal(rates_[g][phase.from], rates_[g][phase.to], pct));
          if (o_.cycle_momentum_) set_momentum(g, anneal(phase.momentum_from, phase.momentum_to, pct));
          break;
        }
        start = phase.end;
      }
    }
    return out;
  }

 private:
  enum Rate { kInitial = 0, kMax = 1, kMin = 2 };
  struct Phase {
    double end;
    Rate from, to;
    double momentum_from, momentum_to;
  };
  double anneal(double start, double end, double pct) const {
    if (o_.anneal_strategy_ == "linear") return (end - start) * pct + start;
    return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
  }
  void set_momentum(std::size_t g, double m) {
    OptimizerOptions& options = optimizer_.param_groups()[g].options();
    if (use_beta1_) {
      for (const auto& [name, value] : options.items())
        if (name == "betas") options.set_item("betas", std::vector<double>{m, std::get<std::vector<double>>(value)[1]});
    } else {
      options.set_item("momentum", m);
    }
  }
  OneCycleLROptions o_;
  std::vector<Phase> phases_;
  std::vector<std::array<double, 3>> rates_;  // per group: initial, max, min
  bool use_beta1_ = false;
};

// Runs schedulers one after another: schedulers[i] from milestones[i - 1] on.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers, std::vector<int64_t> milestones)
      : LRScheduler(optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
    for (std::size_t i = 0; i < schedulers_.size(); ++i)
      tsr::detail::check(&schedulers_[i]->optimizer_ == &optimizer_,
                         "Sequential Schedulers expects all schedulers to belong to the same optimizer, but got "
                         "schedulers at index ", i, " to be different than the optimizer passed in.");
    tsr::detail::check(!schedulers_.empty() && milestones_.size() == schedulers_.size() - 1,
                       "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
                       "milestone points, but got number of schedulers ", schedulers_.size(),
                       " and the number of milestones to be equal to ", milestones_.size());
    last_epoch_ = 0;
    for (auto& group : optimizer_.param_groups()) group.options().set_lr(*group.initial_lr());
    for (auto& s : schedulers_) --s->last_epoch_;  // undo the schedulers' own first steps
    schedulers_[0]->initial_step();
    last_lr_ = schedulers_[0]->get_last_lr();
  }

  void step() override {
    ++last_epoch_;
    const auto idx = static_cast<std::size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) -
                                              milestones_.begin());
    LRScheduler& s = *schedulers_[idx];
    if (idx > 0 && milestones_[idx - 1] == last_epoch_) s.step(0.0);
    else s.step();
    last_lr_ = s.get_last_lr();
  }
  using LRScheduler::step;

 protected:
  std::vector<double> get_lr() override { return last_lr_; }

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

// ReduceLROnPlateau's options (PyTorch's keyword arguments, same defaults).
struct ReduceLROnPlateauOptions {
  ReduceLROnPlateauOptions& mode(std::string v) { mode_ = std::move(v); return *this; }
  ReduceLROnPlateauOptions& factor(double v) { factor_ = v; return *this; }
  ReduceLROnPlateauOptions& patience(int64_t v) { patience_ = v; return *this; }
  ReduceLROnPlateauOptions& threshold(double v) { threshold_ = v; return *this; }
  ReduceLROnPlateauOptions& threshold_mode(std::string v) { threshold_mode_ = std::move(v); return *this; }
  ReduceLROnPlateauOptions& cooldown(int64_t v) { cooldown_ = v; return *this; }
  // One floor for every group, or one per group.
  ReduceLROnPlateauOptions& min_lr(double v) { min_lr_ = {v}; return *this; }
  ReduceLROnPlateauOptions& min_lr(std::vector<double> v) { min_lr_ = std::move(v); return *this; }
  ReduceLROnPlateauOptions& eps(double v) { eps_ = v; return *this; }

 private:
  friend class ReduceLROnPlateau;
  std::string mode_ = "min";
  double factor_ = 0.1;
  int64_t patience_ = 10;
  double threshold_ = 1e-4;
  std::string threshold_mode_ = "rel";
  int64_t cooldown_ = 0;
  std::vector<double> min_lr_{0.0};
  double eps_ = 1e-8;
};

// Multiplies the rate by factor when a metric has stopped improving for
// `patience` steps (then waits `cooldown` steps before counting again).
class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& o = {}) : optimizer_(optimizer), o_(o) {
    tsr::detail::check(o.factor_ < 1.0, "Factor should be < 1.0.");
    tsr::detail::check(o.mode_ == "min" || o.mode_ == "max", "mode ", o.mode_, " is unknown!");
    tsr::detail::check(o.threshold_mode_ == "rel" || o.threshold_mode_ == "abs", "threshold mode ", o.threshold_mode_,
                       " is unknown!");
    const std::size_t n = optimizer.param_groups().size();
    min_lrs_ = o.min_lr_.size() == 1 ? std::vector<double>(n, o.min_lr_[0]) : o.min_lr_;
    tsr::detail::check(min_lrs_.size() == n, "expected ", n, " min_lrs, got ", o.min_lr_.size());
    best_ = worst();
    for (const auto& g : optimizer.param_groups()) last_lr_.push_back(g.options().get_lr());
  }

  void step(double metric) {
    ++last_epoch_;
    if (better(metric)) {
      best_ = metric;
      bad_epochs_ = 0;
    } else {
      ++bad_epochs_;
    }
    if (cooldown_counter_ > 0) {
      --cooldown_counter_;
      bad_epochs_ = 0;
    }
    if (bad_epochs_ > o_.patience_) {
      reduce();
      cooldown_counter_ = o_.cooldown_;
      bad_epochs_ = 0;
    }
    last_lr_.clear();
    for (const auto& g : optimizer_.param_groups()) last_lr_.push_back(g.options().get_lr());
  }

  const std::vector<double>& get_last_lr() const { return last_lr_; }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return bad_epochs_; }

 private:
  double worst() const {
    return o_.mode_ == "min" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  bool better(double a) const {
    const bool rel = o_.threshold_mode_ == "rel";
    if (o_.mode_ == "min") return rel ? a < best_ * (1 - o_.threshold_) : a < best_ - o_.threshold_;
    return rel ? a > best_ * (o_.threshold_ + 1) : a > best_ + o_.threshold_;
  }
  void reduce() {
    for (std::size_t g = 0; g < optimizer_.param_groups().size(); ++g) {
      OptimizerOptions& options = optimizer_.param_groups()[g].options();
      const double old_lr = options.get_lr(), new_lr = std::max(old_lr * o_.factor_, min_lrs_[g]);
      if (old_lr - new_lr > o_.eps_) options.set_lr(new_lr);
    }
  }

  Optimizer& optimizer_;
  ReduceLROnPlateauOptions o_;
  std::vector<double> min_lrs_;
  double best_;
  int64_t bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
  int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace tsr::optim
