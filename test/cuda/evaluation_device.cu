// Device evaluation over the CPU's evaluator trees, elementwise and full
// reductions: must compile with nvcc (compiled, not executed, on machines
// without a GPU). The expressions cover what the emulated tests run:
// broadcasting, transposed and strided operands, transcendental functions,
// comparisons, where, casts and integer ops; sums, products, extrema, all.
#include <tessera.hpp>  // with the backend: cuda/elementwise.hpp and cuda/reduce.hpp

using tsr::Tensor;

template <class T, class E>
void evaluate(const Tensor<T>& out, const E& e) {
  tsr::detail::cuda::write_elements(out, e, tsr::detail::strided_plan(out.sizes(), out, e));
}

void expressions(const Tensor<float>& a, const Tensor<float>& b, const Tensor<double>& x, const Tensor<float>& f,
                 const Tensor<int32_t>& i, const Tensor<bool>& m) {
  evaluate(f, a * b + 1.f - a.t());
  evaluate(f, exp(sin(a) * 0.5f) + tanh(b) * log1p(abs(a)));
  evaluate(f, tsr::where(a > 0.f, a, -a * 2.f));
  evaluate(i, tsr::cast<int32_t>(a * 3.f) % 4);
  evaluate(m, a >= b);
  evaluate(f, tsr::cast<float>(x * x - 1.0));
}

double reductions(const Tensor<float>& a, const Tensor<float>& b) {
  // Qualified: a using-directive for tsr::detail would make "cuda" ambiguous
  // with CCCL's own ::cuda namespace.
  namespace dev = tsr::detail::cuda;
  using tsr::detail::AllReducer, tsr::detail::MaxReducer, tsr::detail::MinReducer, tsr::detail::ProdReducer,
      tsr::detail::SumReducer;
  return dev::reduce_elements<SumReducer, double>(a * b + 1.f) + dev::reduce_elements<ProdReducer, float>(b * b) +
         dev::reduce_elements<MaxReducer, float>(a - b) + dev::reduce_elements<MinReducer, float>(a.t()) +
         static_cast<double>(dev::reduce_elements<SumReducer, int64_t>(a > 0.f)) +
         static_cast<double>(dev::reduce_elements<AllReducer, bool>(b > 0.f));
}
