// L-BFGS, as torch.optim.LBFGS (PyTorch 1.13): a quasi-Newton method that
// keeps the last history_size steps and gradient changes, with an optional
// strong-Wolfe line search. step(closure) re-evaluates the model up to
// max_iter times (max_eval evaluations); the closure computes the loss, calls
// backward() and returns the loss. All parameters are one group and one
// element type; they are treated as one flat vector.
//
// The arithmetic follows PyTorch's step by step: dot products and the
// quantities derived from them (ys, H_diag, ro, al) in the parameters' type,
// as PyTorch keeps them in 0-dim tensors; the loss and the step length in
// double, as PyTorch keeps them in Python floats.
#pragma once
#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <string>

#include "sgd.hpp"  // detail::check_option

namespace tsr::optim {

struct LBFGSOptions : OptimizerCloneableOptions<LBFGSOptions> {
  LBFGSOptions(double lr = 1) : lr_(lr) {}  // NOLINT: as libtorch's
  LBFGSOptions& lr(double v) { lr_ = v; return *this; }
  double lr() const { return lr_; }
  LBFGSOptions& max_iter(int64_t v) { max_iter_ = v; return *this; }
  int64_t max_iter() const { return max_iter_; }
  // Unset: max_iter * 5 / 4, fixed when the optimizer is built (as PyTorch).
  LBFGSOptions& max_eval(std::optional<int64_t> v) { max_eval_ = v; return *this; }
  std::optional<int64_t> max_eval() const { return max_eval_; }
  LBFGSOptions& tolerance_grad(double v) { tolerance_grad_ = v; return *this; }
  double tolerance_grad() const { return tolerance_grad_; }
  LBFGSOptions& tolerance_change(double v) { tolerance_change_ = v; return *this; }
  double tolerance_change() const { return tolerance_change_; }
  LBFGSOptions& history_size(int64_t v) { history_size_ = v; return *this; }
  int64_t history_size() const { return history_size_; }
  // Unset (a fixed step of lr) or "strong_wolfe".
  LBFGSOptions& line_search_fn(std::optional<std::string> v) { line_search_fn_ = std::move(v); return *this; }
  const std::optional<std::string>& line_search_fn() const { return line_search_fn_; }

  static constexpr auto fields() {  // in PyTorch's order
    using O = LBFGSOptions;
    return std::tuple{detail::field("lr", &O::lr_), detail::field("max_iter", &O::max_iter_),
                      detail::field("max_eval", &O::max_eval_), detail::field("tolerance_grad", &O::tolerance_grad_),
                      detail::field("tolerance_change", &O::tolerance_change_),
                      detail::field("history_size", &O::history_size_),
                      detail::field("line_search_fn", &O::line_search_fn_)};
  }

 private:
  double lr_;
  int64_t max_iter_ = 20;
  std::optional<int64_t> max_eval_;
  double tolerance_grad_ = 1e-7;
  double tolerance_change_ = 1e-9;
  int64_t history_size_ = 100;
  std::optional<std::string> line_search_fn_;
};

namespace detail {
// The minimizer of the cubic through (x1, f1, slope g1) and (x2, f2, g2),
// clamped to the bounds (the interval's ends when none are given).
inline double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                                std::optional<std::pair<double, double>> bounds = std::nullopt) {
  const auto [lo, hi] = bounds ? *bounds : (x1 <= x2 ? std::pair{x1, x2} : std::pair{x2, x1});
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square < 0) return (lo + hi) / 2.;
  const double d2 = std::sqrt(d2_square);
  const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                  : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
  return std::min(std::max(min_pos, lo), hi);
}
}  // namespace detail

// A class template with one defaulted argument only so that a translation
// unit compiles LBFGS where it uses it: as a plain class, its step (a virtual
// function, so compiled wherever the class is defined) was a fifth of what
// including optim costs every program (docs/design.md).
template <class = void>
class BasicLBFGS : public Optimizer {
 public:
  BasicLBFGS(std::vector<OptimizerParamGroup> groups, const LBFGSOptions& defaults)
      : Optimizer(std::move(groups), std::make_unique<LBFGSOptions>(resolved(defaults))) {
    tsr::detail::check(param_groups_.size() == 1, "LBFGS doesn't support per-parameter options (parameter groups)");
    auto& options = static_cast<LBFGSOptions&>(param_groups_[0].options());
    options = resolved(options);
    const auto& params = param_groups_[0].params();
    for (const auto& p : params)
      tsr::detail::check(std::string(p.dtype_name()) == params[0].dtype_name(),
                         "LBFGS: all parameters must have one element type, found ", params[0].dtype_name(), " and ",
                         p.dtype_name());
  }
  BasicLBFGS(std::vector<AnyTensor> params, const LBFGSOptions& defaults = {})
      : BasicLBFGS(one_group(std::move(params)), defaults) {}

  // PyTorch's LBFGS requires a closure.
  AnyTensor step(LossClosure closure = nullptr) override {
    tsr::detail::check(closure != nullptr, "LBFGS::step needs a closure that re-evaluates the loss");
    AnyTensor first = param_groups_[0].params()[0];
    return tsr::detail::visit_float_or_double(first, kFloatOrDouble, [&]<class T>(Tensor<T>&) { return run<T>(closure); });
  }

 private:
  static LBFGSOptions resolved(LBFGSOptions o) {
    detail::check_option(o.lr(), "learning rate");
    if (!o.max_eval()) o.max_eval(o.max_iter() * 5 / 4);
    tsr::detail::check(!o.line_search_fn() || *o.line_search_fn() == "strong_wolfe", "only 'strong_wolfe' is supported");
    return o;
  }

  // The working state of one run of step(), in the parameters' type T.
  template <class T>
  struct Work {
    Tensor<T> d, prev_flat_grad;
    double t = 0, prev_loss = 0;
    std::deque<Tensor<T>> old_dirs, old_stps;
    std::deque<T> ro;
    T h_diag = T(1);
  };

  template <class T>
  std::vector<Tensor<T>> params() {
    std::vector<Tensor<T>> out;
    for (auto& p : param_groups_[0].params()) out.push_back(p.as<T>());
    return out;
  }
  template <class T>
  Tensor<T> flat_grad() {
    std::vector<Tensor<T>> views;
    for (auto& p : params<T>())
      views.push_back(p.grad().defined() ? Tensor<T>(p.grad().detach().reshape({-1})) : Tensor<T>(zeros<T>({p.numel()}, p.device())));
    return cat(views);
  }
  // The step's vectors are computed unrecorded, with the library's own
  // evaluation (tsr::detail::materialize, assign, reduce_all): they run under
  // no-grad, and the recorded forms would compile a node and its backward
  // for each of their expressions, in every translation unit that includes
  // optim (4 s of compile).

  // p += step * update, slice by slice.
  template <class T>
  void add_grad(double step, const Tensor<T>& update) {
    int64_t offset = 0;
    for (auto& p : params<T>()) {
      const Tensor<T> data = p.detach();
      tsr::detail::assign(data, data + T(step) * update.narrow(0, offset, p.numel()).reshape(p.sizes()), true);
      offset += p.numel();
    }
  }
  static double loss_value(const AnyTensor& loss) {
    return loss.visit([]<class U>(const Tensor<U>& l) -> double {
      if constexpr (is_floating_v<U>) return double(l.item());
      else tsr::detail::fail<Error>("LBFGS: the closure must return a floating loss");
    });
  }
  template <class T, class E>
  static T max_abs(const E& v) { return T(tsr::detail::reduce_all<tsr::detail::MaxReducer, acc_t<T>>(abs(v))); }

  template <class T>
  AnyTensor run(const LossClosure& closure) {
    const auto& o = static_cast<const LBFGSOptions&>(param_groups_[0].options());
    ParamState& state = state_[0][0];
    if (!state.has("func_evals")) state.set("func_evals", int64_t{0});
    if (!state.has("n_iter")) state.set("n_iter", int64_t{0});
    Work<T> w = load<T>(state);

    const AnyTensor orig_loss = evaluate(closure);
    double loss = loss_value(orig_loss);
    int64_t current_evals = 1;
    ++state.integer("func_evals");
    Tensor<T> g = flat_grad<T>();
    bool opt_cond = double(max_abs<T>(g)) <= o.tolerance_grad();
    if (opt_cond) return orig_loss;

    const NoGradGuard no_grad;
    for (int64_t n_iter = 1;; ++n_iter) {
      const int64_t global_iter = ++state.integer("n_iter");
      if (global_iter == 1) {
        w.d = tsr::detail::materialize<T>(-g);
        w.old_dirs.clear();
        w.old_stps.clear();
        w.ro.clear();
        w.h_diag = T(1);
      } else {
        const Tensor<T> y = tsr::detail::materialize<T>(g - w.prev_flat_grad);
        const Tensor<T> s = w.d * T(w.t);
        const T ys = dot(y, s).item();
        if (double(ys) > 1e-10) {
          if (static_cast<int64_t>(w.old_dirs.size()) == o.history_size()) {
            w.old_dirs.pop_front();
            w.old_stps.pop_front();
            w.ro.pop_front();
          }
          w.old_dirs.push_back(y);
          w.old_stps.push_back(s);
          w.ro.push_back(T(1) / ys);
          w.h_diag = ys / dot(y, y).item();
        }
        // The two-loop recursion: d = -H g.
        const std::size_t num_old = w.old_dirs.size();
        std::vector<T> al(num_old);
        const Tensor<T> q = tsr::detail::materialize<T>(-g);
        for (std::size_t i = num_old; i-- > 0;) {
          al[i] = dot(w.old_stps[i], q).item() * w.ro[i];
          tsr::detail::assign(q, q + T(-al[i]) * w.old_dirs[i], true);
        }
        const Tensor<T> r = q * w.h_diag;
        for (std::size_t i = 0; i < num_old; ++i) {
          const T be_i = dot(w.old_dirs[i], r).item() * w.ro[i];
          tsr::detail::assign(r, r + T(al[i] - be_i) * w.old_stps[i], true);
        }
        w.d = r;
      }
      w.prev_flat_grad = g.clone();
        w.prev_loss = loss;
      // The first step is scaled by the gradient's size; later ones are lr.
      if (global_iter == 1) {
        const T abs_sum = T(tsr::detail::reduce_all<tsr::detail::SumReducer, acc_t<T>>(abs(g)));
        w.t = std::min(1., double(T(1) / abs_sum)) * o.lr();
      } else {
        w.t = o.lr();
      }
      const T gtd = dot(g, w.d).item();
      if (double(gtd) > -o.tolerance_change()) break;

      int64_t ls_func_evals = 0;
      if (o.line_search_fn()) {
        std::vector<Tensor<T>> x_init;
        for (auto& p : params<T>()) x_init.push_back(p.detach().clone());
        auto [new_loss, new_grad, t, evals] = strong_wolfe<T>(closure, x_init, w.t, w.d, loss, g, double(gtd), o.tolerance_change());
        loss = new_loss;
        g = new_grad;
        w.t = t;
        ls_func_evals = evals;
        add_grad(w.t, w.d);
        opt_cond = double(max_abs<T>(g)) <= o.tolerance_grad();
      } else {
        add_grad(w.t, w.d);
        if (n_iter != o.max_iter()) {
          loss = loss_value(evaluate(closure));
          g = flat_grad<T>();
          opt_cond = double(max_abs<T>(g)) <= o.tolerance_grad();
          ls_func_evals = 1;
        }
      }
      current_evals += ls_func_evals;
      state.integer("func_evals") += ls_func_evals;
      if (n_iter == o.max_iter() || current_evals >= *o.max_eval() || opt_cond) break;
      if (double(max_abs<T>(w.d * T(w.t))) <= o.tolerance_change()) break;
      if (std::abs(loss - w.prev_loss) < o.tolerance_change()) break;
    }
    save(state, w);
    return orig_loss;
  }

  // Loss and flat gradient at x + t d (the parameters are put back to x).
  template <class T>
  std::pair<double, Tensor<T>> directional_evaluate(const LossClosure& closure, const std::vector<Tensor<T>>& x, double t,
                                                    const Tensor<T>& d) {
    add_grad(t, d);
    const double loss = loss_value(evaluate(closure));
    Tensor<T> g = flat_grad<T>();
    auto ps = params<T>();
    for (std::size_t i = 0; i < ps.size(); ++i) ps[i].detach().copy_(x[i]);
    return {loss, g};
  }

  // PyTorch's _strong_wolfe: a bracketing phase, then zoom by cubic
  // interpolation. Returns the loss, flat gradient, step and evaluations.
  template <class T>
  std::tuple<double, Tensor<T>, double, int64_t> strong_wolfe(const LossClosure& closure, const std::vector<Tensor<T>>& x,
                                                               double t, const Tensor<T>& d, double f, const Tensor<T>& g,
                                                               double gtd, double tolerance_change) {
    constexpr double c1 = 1e-4, c2 = 0.9;
    constexpr int max_ls = 25;
    const double d_norm = double(max_abs<T>(d));
    auto [f_new, g_new] = directional_evaluate<T>(closure, x, t, d);
    int64_t evals = 1;
    double gtd_new = double(dot(g_new, d).item());
    double t_prev = 0, f_prev = f, gtd_prev = gtd;
    Tensor<T> g_prev = g.clone();
    bool done = false;
    int ls_iter = 0;
    std::vector<double> bracket, bracket_f, bracket_gtd;
    std::vector<Tensor<T>> bracket_g;
    while (ls_iter < max_ls) {
      if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
        bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, g_new.clone()}, bracket_gtd = {gtd_prev, gtd_new};
        break;
      }
      if (std::abs(gtd_new) <= -c2 * gtd) {
        bracket = {t}, bracket_f = {f_new}, bracket_g = {g_new};
        done = true;
        break;
      }
      if (gtd_new >= 0) {
        bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, g_new.clone()}, bracket_gtd = {gtd_prev, gtd_new};
        break;
      }
      const double min_step = t + 0.01 * (t - t_prev), max_step = t * 10;
      const double tmp = t;
      t = detail::cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, std::pair{min_step, max_step});
      t_prev = tmp, f_prev = f_new, g_prev = g_new.clone(), gtd_prev = gtd_new;
      std::tie(f_new, g_new) = directional_evaluate<T>(closure, x, t, d);
      ++evals;
      gtd_new = double(dot(g_new, d).item());
      ++ls_iter;
    }
    if (ls_iter == max_ls) bracket = {0, t}, bracket_f = {f, f_new}, bracket_g = {g, g_new};

    // Zoom until the interval is small or a point meets the strong Wolfe conditions.
    bool insufficient_progress = false;
    std::size_t low = bracket_f.front() <= bracket_f.back() ? 0 : 1, high = 1 - low;
    while (!done && ls_iter < max_ls) {
      if (std::abs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
      t = detail::cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]);
      const double b_max = std::max(bracket[0], bracket[1]), b_min = std::min(bracket[0], bracket[1]);
      const double eps = 0.1 * (b_max - b_min);
      if (std::min(b_max - t, t - b_min) < eps) {
        if (insufficient_progress || t >= b_max || t <= b_min) {
          t = std::abs(t - b_max) < std::abs(t - b_min) ? b_max - eps : b_min + eps;
          insufficient_progress = false;
        } else {
          insufficient_progress = true;
        }
      } else {
        insufficient_progress = false;
      }
      std::tie(f_new, g_new) = directional_evaluate<T>(closure, x, t, d);
      ++evals;
      gtd_new = double(dot(g_new, d).item());
      ++ls_iter;
      if (f_new > f + c1 * t * gtd || f_new >= bracket_f[low]) {
        bracket[high] = t, bracket_f[high] = f_new, bracket_g[high] = g_new.clone(), bracket_gtd[high] = gtd_new;
        low = bracket_f[0] <= bracket_f[1] ? 0 : 1;
        high = 1 - low;
      } else {
        if (std::abs(gtd_new) <= -c2 * gtd) {
          done = true;
        } else if (gtd_new * (bracket[high] - bracket[low]) >= 0) {
          bracket[high] = bracket[low], bracket_f[high] = bracket_f[low], bracket_g[high] = bracket_g[low];
          bracket_gtd[high] = bracket_gtd[low];
        }
        bracket[low] = t, bracket_f[low] = f_new, bracket_g[low] = g_new.clone(), bracket_gtd[low] = gtd_new;
      }
    }
    return {bracket_f[low], bracket_g[low], bracket[low], evals};
  }

  // The working state to and from the parameter state, under PyTorch's names.
  template <class T>
  static Work<T> load(ParamState& state) {
    Work<T> w;
    if (!state.has("d")) return w;
    w.d = state.tensor<T>("d");
    w.t = std::get<double>(state.at("t"));
    for (const auto& t : std::get<std::vector<AnyTensor>>(state.at("old_dirs"))) w.old_dirs.push_back(t.as<T>());
    for (const auto& t : std::get<std::vector<AnyTensor>>(state.at("old_stps"))) w.old_stps.push_back(t.as<T>());
    for (const auto& t : std::get<std::vector<AnyTensor>>(state.at("ro"))) w.ro.push_back(t.as<T>().item());
    w.h_diag = state.tensor<T>("H_diag").item();
    w.prev_flat_grad = state.tensor<T>("prev_flat_grad");
    w.prev_loss = std::get<double>(state.at("prev_loss"));
    return w;
  }
  template <class T>
  static void save(ParamState& state, const Work<T>& w) {
    if (!w.d.defined()) return;
    auto list = [](const auto& tensors) {
      std::vector<AnyTensor> out(tensors.begin(), tensors.end());
      return out;
    };
    std::vector<AnyTensor> ro;
    for (T v : w.ro) ro.emplace_back(full<T>(Shape{}, v));
    state.set("d", AnyTensor(w.d));
    state.set("t", w.t);
    state.set("old_dirs", list(w.old_dirs));
    state.set("old_stps", list(w.old_stps));
    state.set("ro", std::move(ro));
    state.set("H_diag", AnyTensor(full<T>(Shape{}, w.h_diag)));
    state.set("prev_flat_grad", AnyTensor(w.prev_flat_grad));
    state.set("prev_loss", w.prev_loss);
  }
};
using LBFGS = BasicLBFGS<>;

}  // namespace tsr::optim
