// The connectionist temporal classification loss (Graves et al., 2006): the
// negative log-likelihood of a target sequence under per-frame class
// log-probabilities, summed over every alignment (the target's labels with
// blanks between and around them, each repeated over frames), by the
// forward (alpha) recursion in log space; the gradient by the backward
// (beta) recursion. Computed on the host, one sample per task on the thread
// pool, as PyTorch's CPU kernel, whose formulas, reductions and errors this
// follows.
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "loss.hpp"

namespace tsr::nn {

struct CTCLossOptions : LossOptionsBase<CTCLossOptions> {
  CTCLossOptions& blank(int64_t v) {
    blank_ = v;
    return *this;
  }
  CTCLossOptions& zero_infinity(bool v) {
    zero_infinity_ = v;
    return *this;
  }
  int64_t blank() const { return blank_; }
  bool zero_infinity() const { return zero_infinity_; }

 private:
  int64_t blank_ = 0;
  bool zero_infinity_ = false;
};

}  // namespace tsr::nn

namespace tsr::detail {

// log(exp(a) + exp(b) + exp(c)), as PyTorch's kernel computes it: shifted
// by the largest term (by 0 when all are -inf, which stays -inf).
template <class T>
T log_sum_exp3(T a, T b, T c) {
  T m = std::max(a, std::max(b, c));
  if (m == -std::numeric_limits<T>::infinity()) m = 0;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

// A batch of CTC problems on the host: the log-probabilities (T, N, C), and
// for each sample its frames, its target's length and where its labels
// start in the flattened targets.
template <class T>
struct CtcBatch {
  Tensor<T> log_probs;  // (T, N, C), contiguous, on the host
  Tensor<int64_t> targets;
  std::vector<int64_t> input_lengths, target_lengths, target_starts;
  int64_t blank = 0, max_extended = 0;  // the longest target with blanks: 2 S + 1

  int64_t frames() const { return log_probs.size(0); }
  int64_t batch() const { return log_probs.size(1); }
  int64_t classes() const { return log_probs.size(2); }
  // Label s of sample n's extended target: blank at even s, the target's
  // labels at odd s.
  int64_t label(int64_t n, int64_t s) const {
    return s % 2 == 0 ? blank : targets.data_ptr()[target_starts[static_cast<std::size_t>(n)] + s / 2];
  }
  T lp(int64_t t, int64_t n, int64_t c) const { return log_probs.data_ptr()[(t * batch() + n) * classes() + c]; }
};

template <class T>
CtcBatch<T> ctc_batch(const Tensor<T>& log_probs, const Tensor<int64_t>& targets, const std::vector<int64_t>& input_lengths,
                      const std::vector<int64_t>& target_lengths, int64_t blank) {
  CtcBatch<T> b{host_contiguous(log_probs), host_contiguous(targets), input_lengths, target_lengths, {}, blank, 0};
  const int64_t n = b.batch();
  check(blank >= 0 && blank < b.classes(), "blank must be in label range");
  check(static_cast<int64_t>(input_lengths.size()) == n, "input_lengths must be of size batch_size");
  check(static_cast<int64_t>(target_lengths.size()) == n, "target_lengths must be of size batch_size");
  int64_t total = 0, longest = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t frames = input_lengths[static_cast<std::size_t>(i)], length = target_lengths[static_cast<std::size_t>(i)];
    // (PyTorch 1.13 reads out of bounds for negative lengths.)
    check(frames >= 0, "ctc_loss: input_lengths must be non-negative, but got ", frames);
    check(length >= 0, "ctc_loss: target_lengths must be non-negative, but got ", length);
    b.target_starts.push_back(targets.dim() == 1 ? total : i * (targets.dim() == 2 ? targets.size(1) : 0));
    total += length;
    longest = std::max(longest, length);
  }
  if (targets.dim() == 1) {
    check(targets.size(0) == total, "Expected tensor to have size ", total, " at dimension 0, but got size ",
          targets.size(0), " for argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
  } else {
    check(targets.dim() == 2 && targets.size(0) == n, "ctc_loss: targets must be (N, S) or the N targets concatenated, "
          "but got ", targets.sizes(), " for a batch of ", n);
    check(targets.size(1) >= longest, "Expected tensor to have size at least ", longest,
          " at dimension 1, but got size ", targets.size(1), " for argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t frames = input_lengths[static_cast<std::size_t>(i)];
    check(frames <= b.frames(), "Expected input_lengths to have value at most ", b.frames(), ", but got value ", frames,
          " (while checking arguments for ctc_loss_cpu)");
    // (PyTorch 1.13 reads out of bounds for labels outside [0, C).)
    for (int64_t s = 0; s < target_lengths[static_cast<std::size_t>(i)]; ++s) {
      const int64_t label = b.targets.data_ptr()[b.target_starts[static_cast<std::size_t>(i)] + s];
      check<IndexError>(label >= 0 && label < b.classes(), "ctc_loss: target label ", label,
                        " is out of range for ", b.classes(), " classes");
    }
  }
  b.max_extended = 2 * longest + 1;
  return b;
}

// The forward recursion: log_alpha (N, T, max_extended) over the extended
// targets, and each sample's negative log-likelihood. A sample without
// frames has the empty alignment only: 0 for an empty target, inf
// otherwise (PyTorch 1.13 reads uninitialized memory there).
template <class T>
std::pair<Tensor<T>, Tensor<T>> ctc_alpha(const CtcBatch<T>& b) {
  constexpr T none = -std::numeric_limits<T>::infinity();
  const int64_t frames = b.frames(), width = b.max_extended;
  Tensor<T> alpha = full<T>({b.batch(), frames, width}, none);
  auto nll = Tensor<T>::allocate({b.batch()});
  ThreadPool::instance().parallel_for(b.batch(), [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const int64_t tn = b.input_lengths[static_cast<std::size_t>(n)], extended = 2 * b.target_lengths[static_cast<std::size_t>(n)] + 1;
      T* a = alpha.data_ptr() + n * frames * width;
      if (tn == 0) {
        nll.data_ptr()[n] = extended == 1 ? T(0) : std::numeric_limits<T>::infinity();
        continue;
      }
      a[0] = b.lp(0, n, b.blank);
      if (extended > 1) a[1] = b.lp(0, n, b.label(n, 1));
      for (int64_t t = 1; t < tn; ++t) {
        const T* prev = a + (t - 1) * width;
        T* row = a + t * width;
        for (int64_t s = 0; s < extended; ++s) {
          const int64_t c = b.label(n, s);
          const T skip = s > 1 && b.label(n, s - 2) != c ? prev[s - 2] : none;
          row[s] = log_sum_exp3(prev[s], s > 0 ? prev[s - 1] : none, skip) + b.lp(t, n, c);
        }
      }
      const T* last = a + (tn - 1) * width;
      nll.data_ptr()[n] = -log_sum_exp3(last[extended - 1], extended > 1 ? last[extended - 2] : none, none);
    }
  });
  return {std::move(alpha), std::move(nll)};
}

// The gradient with respect to the log-probabilities, (T, N, C), given each
// sample's output gradient: PyTorch's formula
//   exp(lp[t, c]) - exp(log sum over s with label c of alpha_t(s) beta_t(s) + nll - lp[t, c]),
// whose first term assumes that the log-probabilities come from a
// log_softmax over C (through its backward the term cancels); frames past
// a sample's length, and infinite losses with zero_infinity, get zero.
template <class T>
Tensor<T> ctc_gradient(const CtcBatch<T>& b, const Tensor<T>& alpha, const Tensor<T>& nll, const Tensor<T>& grad_out,
                       bool zero_infinity) {
  constexpr T none = -std::numeric_limits<T>::infinity();
  const int64_t frames = b.frames(), width = b.max_extended, classes = b.classes(), batch = b.batch();
  const Tensor<T> g = host_contiguous(grad_out);
  Tensor<T> grad = zeros<T>({frames, batch, classes});
  ThreadPool::instance().parallel_for(batch, [&](int64_t n0, int64_t n1) {
    std::vector<T> beta(static_cast<std::size_t>(frames * width)), by_class(static_cast<std::size_t>(classes));
    for (int64_t n = n0; n < n1; ++n) {
      const int64_t tn = b.input_lengths[static_cast<std::size_t>(n)], extended = 2 * b.target_lengths[static_cast<std::size_t>(n)] + 1;
      const T loss = nll.data_ptr()[n], gn = g.data_ptr()[n];
      if (tn == 0 || (zero_infinity && loss == std::numeric_limits<T>::infinity())) continue;
      const T* a = alpha.data_ptr() + n * frames * width;
      std::fill(beta.begin(), beta.end(), none);
      T* last = beta.data() + (tn - 1) * width;
      last[extended - 1] = b.lp(tn - 1, n, b.label(n, extended - 1));
      if (extended > 1) last[extended - 2] = b.lp(tn - 1, n, b.label(n, extended - 2));
      for (int64_t t = tn - 2; t >= 0; --t) {
        const T* next = beta.data() + (t + 1) * width;
        T* row = beta.data() + t * width;
        for (int64_t s = 0; s < extended; ++s) {
          const int64_t c = b.label(n, s);
          const T skip = s < extended - 2 && b.label(n, s + 2) != c ? next[s + 2] : none;
          row[s] = log_sum_exp3(next[s], s < extended - 1 ? next[s + 1] : none, skip) + b.lp(t, n, c);
        }
      }
      for (int64_t t = 0; t < tn; ++t) {
        std::fill(by_class.begin(), by_class.end(), none);
        for (int64_t s = 0; s < extended; ++s) {
          T& sum = by_class[static_cast<std::size_t>(b.label(n, s))];
          sum = log_sum_exp3(sum, a[t * width + s] + beta[static_cast<std::size_t>(t * width + s)], none);
        }
        T* out = grad.data_ptr() + (t * batch + n) * classes;
        for (int64_t c = 0; c < classes; ++c) {
          const T lp = b.lp(t, n, c);
          out[c] = (std::exp(lp) - std::exp(by_class[static_cast<std::size_t>(c)] + loss - lp)) * gn;
        }
      }
    }
  });
  return grad;
}

// Each sample's loss (N), from log-probabilities (T, N, C) on any device;
// the node's backward is PyTorch's, and its result cannot be differentiated
// again (PyTorch defines no derivative for it either).
template <class T>
Tensor<T> ctc_losses(const Tensor<T>& log_probs, const Tensor<int64_t>& targets, const std::vector<int64_t>& input_lengths,
                     const std::vector<int64_t>& target_lengths, int64_t blank, bool zero_infinity) {
  auto batch = std::make_shared<const CtcBatch<T>>(ctc_batch(log_probs, targets, input_lengths, target_lengths, blank));
  auto [alpha, nll] = ctc_alpha(*batch);
  Tensor<T> losses = nll;
  if (zero_infinity) losses = Tensor<T>(where(nll == std::numeric_limits<T>::infinity(), ScalarLeaf<T>(T(0)), nll));
  losses = placed_on(losses, log_probs.device());
  if (records(log_probs)) {
    using autograd::GradRef;
    struct RefusingRule {
      std::vector<GradRef> backward(const Tensor<T>&) const {
        fail<Error>("ctc_loss: its gradient cannot be differentiated again (PyTorch defines no derivative for "
             "_ctc_loss_backward)");
      }
    };
    struct Rule {
      std::shared_ptr<const CtcBatch<T>> batch;  // its log_probs may be the input itself
      Tensor<T> alpha, nll;
      bool zero_infinity;
      autograd::SavedTensor<T> input;  // for the check that it was not written in place since
      std::shared_ptr<autograd::Node> input_edge;
      Device device;
      std::vector<GradRef> backward(const Tensor<T>& grad) const {
        (void)input.get();
        Tensor<T> gx = placed_on(ctc_gradient(*batch, alpha, nll, grad, zero_infinity), device);
        if (grad_mode_flag())  // create_graph: differentiating gx again must fail, not give zero
          autograd::set_rule(gx, "CtcLossBackwardBackward0", RefusingRule{}, {gradient_edge(grad), input_edge});
        return {gx.impl_ptr()};
      }
    };
    std::shared_ptr<autograd::Node> edge = gradient_edge(log_probs);
    // nll detached: it may be the result itself, which must not keep its own node.
    autograd::set_rule(losses, "CtcLossBackward0",
                       Rule{std::move(batch), std::move(alpha), nll.detach(), zero_infinity,
                            autograd::SavedTensor<T>(log_probs), edge, log_probs.device()},
                       {edge});
  }
  return losses;
}

inline std::vector<int64_t> lengths_of(const Tensor<int64_t>& lengths) {
  const Tensor<int64_t> host = host_contiguous(lengths.reshape({-1}));
  return {host.data_ptr(), host.data_ptr() + host.numel()};
}

}  // namespace tsr::detail

namespace tsr::nn {
namespace functional {
using CTCLossFuncOptions = CTCLossOptions;

// log_probs (T, N, C) or unbatched (T, C), normally a log_softmax over C;
// targets (N, S) padded, or the N targets concatenated (1-D), or one
// target (S) when unbatched; input_lengths and target_lengths one per
// sample. The losses per sample (reduction None), their sum, or (Mean)
// each divided by its target's length (at least 1) and averaged.
template <detail::FloatElement T>
Tensor<T> ctc_loss(const Tensor<T>& log_probs, const Tensor<int64_t>& targets, const std::vector<int64_t>& input_lengths,
                   const std::vector<int64_t>& target_lengths, const CTCLossOptions& o = {}) {
  detail::check(log_probs.dim() == 2 || log_probs.dim() == 3,
                "ctc_loss: log_probs must be (T, N, C) or, unbatched, (T, C), but got ", log_probs.sizes());
  const bool batched = log_probs.dim() == 3;
  const Tensor<T> lp = batched ? log_probs : log_probs.unsqueeze(1);
  const Tensor<int64_t> tg = batched ? targets : targets.unsqueeze(0);
  const Tensor<T> losses = detail::ctc_losses(lp, tg, input_lengths, target_lengths, o.blank(), o.zero_infinity());
  switch (o.reduction()) {
    case Reduction::None: return batched ? losses : losses.reshape({});
    case Reduction::Sum: return sum(losses);
    case Reduction::Mean: {
      auto divisors = Tensor<T>::allocate({static_cast<int64_t>(target_lengths.size())});
      for (std::size_t i = 0; i < target_lengths.size(); ++i)
        divisors.data_ptr()[i] = static_cast<T>(std::max<int64_t>(target_lengths[i], 1));
      return mean(losses / detail::placed_on(divisors, losses.device()));
    }
    default: detail::fail<ValueError>("batchmean is not a valid value for reduction (it is kl_div's only)");
  }
}
template <detail::FloatElement T>
Tensor<T> ctc_loss(const Tensor<T>& log_probs, const Tensor<int64_t>& targets, const Tensor<int64_t>& input_lengths,
                   const Tensor<int64_t>& target_lengths, const CTCLossOptions& o = {}) {
  return ctc_loss(log_probs, targets, detail::lengths_of(input_lengths), detail::lengths_of(target_lengths), o);
}
}  // namespace functional

class CTCLossImpl : public LossImpl<CTCLossOptions> {
 public:
  using LossImpl::LossImpl;
  std::string name() const override { return "CTCLoss"; }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& log_probs, const Tensor<int64_t>& targets, const Tensor<int64_t>& input_lengths,
                    const Tensor<int64_t>& target_lengths) const {
    return F::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
  }
  template <detail::FloatElement T>
  Tensor<T> forward(const Tensor<T>& log_probs, const Tensor<int64_t>& targets, const std::vector<int64_t>& input_lengths,
                    const std::vector<int64_t>& target_lengths) const {
    return F::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
  }
};
using CTCLoss = ModuleHolder<CTCLossImpl>;

}  // namespace tsr::nn
