// The optimizers' fused steps on a GPU: each optimizer (with its main
// options) takes the same steps on a parameter on cuda:0 as on the CPU, its
// state staying on the device. The gradients come from autograd on the
// device. With no GPU it reports that it skipped (gpu_main.hpp); nvcc takes
// minutes on it, so the test suite does not build it: docs/cuda.md gives the
// command. (The emulated build runs the same steps in test_cuda on every
// test run.)
#include <tessera.hpp>
#include <optim/optim.hpp>

#include "gpu_main.hpp"

#include <vector>

namespace {

using tsr::AnyTensor;
using tsr::Tensor;

// Five steps on a weighted quadratic from the same start, on the CPU and on
// cuda:0: the same parameters within float rounding.
template <class MakeOptimizer>
void check_steps_as_on_the_cpu(const MakeOptimizer& make_optimizer) {
  using namespace tsr;
  const Tensor<float> start = sin(arange<float>(0.f, 1000.f));
  const Tensor<float> target = cos(arange<float>(0.f, 1000.f)) * 2.f;
  const Tensor<float> weight = arange<float>(0.f, 1000.f) / 500.f + 0.5f;
  Tensor<float> cpu_p = start.clone().requires_grad_();
  Tensor<float> gpu_p = start.to(tsr::cuda(0)).requires_grad_();
  const Tensor<float> gpu_target = target.to(tsr::cuda(0)), gpu_weight = weight.to(tsr::cuda(0));
  auto cpu_opt = make_optimizer(std::vector<AnyTensor>{AnyTensor(cpu_p)});
  auto gpu_opt = make_optimizer(std::vector<AnyTensor>{AnyTensor(gpu_p)});
  for (int step = 0; step < 5; ++step) {
    cpu_opt.zero_grad();
    gpu_opt.zero_grad();
    sum(square(cpu_p - target) * weight).backward();
    sum(square(gpu_p - gpu_target) * gpu_weight).backward();
    cpu_opt.step();
    gpu_opt.step();
  }
  CHECK(gpu_p.device() == Device(tsr::cuda(0)));
  CHECK(allclose(gpu_p.to(kCPU), cpu_p, 1e-5, 1e-6));
}

}  // namespace

TEST_CASE("the optimizers' fused steps on a GPU give the CPU's parameters") {
  using namespace tsr;
  using P = std::vector<AnyTensor>;
  check_steps_as_on_the_cpu([](P p) { return optim::SGD(p, optim::SGDOptions(0.01)); });
  check_steps_as_on_the_cpu([](P p) { return optim::SGD(p, optim::SGDOptions(0.01).momentum(0.9).nesterov(true)); });
  check_steps_as_on_the_cpu([](P p) { return optim::Adam(p, optim::AdamOptions(0.01).amsgrad(true)); });
  check_steps_as_on_the_cpu([](P p) { return optim::AdamW(p, optim::AdamWOptions(0.01)); });
  check_steps_as_on_the_cpu([](P p) { return optim::RMSprop(p, optim::RMSpropOptions(0.01).centered(true).momentum(0.5)); });
  check_steps_as_on_the_cpu([](P p) { return optim::RMSprop(p, optim::RMSpropOptions(0.01)); });
  check_steps_as_on_the_cpu([](P p) { return optim::Adagrad(p, optim::AdagradOptions(0.1)); });
  check_steps_as_on_the_cpu([](P p) { return optim::Adadelta(p, optim::AdadeltaOptions(1.0)); });
}
