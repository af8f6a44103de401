// The part of nn that a model's translation units share, compiled once into
// tessera_core (Meson: -Dprecompiled=true) beside the core's part
// (../detail/precompiled.hpp explains the mechanism; ../detail/nn_part.hpp
// holds the switch).
//
// A module holds its parameters as AnyTensor and runs on the element type it
// is given, so a translation unit that builds a Sequential compiles every
// layer's forward, backward and loss for float and double, whatever the model
// runs on. Listed here: the layers and losses of the usual classifiers
// (linear, 2-D convolution, max pooling, ReLU, tanh, sigmoid, cross entropy,
// NLL and MSE), as they are reached from Sequential; the optimizers' steps
// are in ../optim/precompiled.hpp. Anything else is compiled where it is
// used, as header-only.
#pragma once
#include "../detail/nn_part.hpp"

#if TSR_NN_PART

// A module type as Sequential calls it (its forward for every element type).
#define TSR_NN_SEQUENTIAL_STEP(...)                                                                        \
  namespace tsr::nn {                                                                                      \
  TSR_NN_INSTANCE AnyTensor SequentialImpl::call<__VA_ARGS__>(Module&, const AnyTensor&);                  \
  }
#define TSR_NN_SEQUENTIAL_FUSED_STEP(...)                                                                  \
  TSR_NN_SEQUENTIAL_STEP(__VA_ARGS__)                                                                      \
  namespace tsr::nn {                                                                                      \
  TSR_NN_INSTANCE AnyTensor SequentialImpl::call_activated<__VA_ARGS__>(Module&, const AnyTensor&,         \
                                                                        detail::Activation);               \
  }

// Per floating type: the products with their epilogues and activations'
// gradients, the losses, the optimizers' updates.
#define TSR_NN_FLOATING(T)                                                                                 \
  namespace tsr::detail {                                                                                  \
  TSR_NN_INSTANCE Tensor<T> linear_activated<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&,      \
                                                Activation);                                               \
  TSR_NN_INSTANCE Tensor<T> activation_grad<T>(const Tensor<T>&, const Tensor<T>&, Activation);            \
  TSR_NN_INSTANCE Tensor<T> conv2d_activated<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&,      \
                                                const nn::functional::Conv2dFuncOptions&, Activation);     \
  }                                                                                                        \
  namespace tsr::nn::functional {                                                                          \
  TSR_NN_INSTANCE Tensor<T> cross_entropy<T>(const Tensor<T>&, const Tensor<int64_t>&,                     \
                                             const CrossEntropyLossOptions&);                              \
  TSR_NN_INSTANCE Tensor<T> nll_loss<T>(const Tensor<T>&, const Tensor<int64_t>&, const NLLLossOptions&);  \
  TSR_NN_INSTANCE Tensor<T> mse_loss<T>(const Tensor<T>&, const Tensor<T>&, const MSELossOptions&);        \
  }

// half and bfloat16's tensor class and autograd runtime, the core's groups
// for float and double (../detail/precompiled.hpp): modules and optimizers
// take the element type at run time, so a model's translation unit reaches
// them too (30% of the code of a three-layer Sequential's training loop
// without these). Here rather than in the core's list, which every program
// parses.
#define TSR_INSTANCE TSR_NN_INSTANCE
TSR_PRECOMPILED_ALL_TYPES(half)
TSR_PRECOMPILED_ALL_TYPES(bfloat16)
TSR_PRECOMPILED_AUTOGRAD_RUNTIME(half)
TSR_PRECOMPILED_AUTOGRAD_RUNTIME(bfloat16)
#undef TSR_INSTANCE
TSR_NN_SEQUENTIAL_FUSED_STEP(LinearImpl)
TSR_NN_SEQUENTIAL_FUSED_STEP(Conv2dImpl)
TSR_NN_SEQUENTIAL_STEP(MaxPool2dImpl)
TSR_NN_SEQUENTIAL_STEP(FlattenImpl)
TSR_NN_SEQUENTIAL_STEP(ElementwiseImpl<activation_fn::ReLU>)
TSR_NN_SEQUENTIAL_STEP(ElementwiseImpl<activation_fn::Tanh>)
TSR_NN_SEQUENTIAL_STEP(ElementwiseImpl<activation_fn::Sigmoid>)
TSR_NN_FLOATING(float)
TSR_NN_FLOATING(double)

#undef TSR_NN_FLOATING
#undef TSR_PRECOMPILED_ALL_TYPES
#undef TSR_PRECOMPILED_AUTOGRAD_RUNTIME
#undef TSR_EVALUATED
#undef TSR_EVALUATED_AND_RECORDED
#undef TSR_WRITTEN_IN_PLACE
#undef TSR_NN_SEQUENTIAL_FUSED_STEP
#undef TSR_NN_SEQUENTIAL_STEP

#endif
