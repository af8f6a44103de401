// The optimizers' updates of one parameter, compiled once into tessera_core
// (Meson: -Dprecompiled=true) with the nn part (../nn/precompiled.hpp says
// why; ../detail/nn_part.hpp holds the switch): SGD, Adam and AdamW, for
// float and double.
#pragma once
#include "../detail/nn_part.hpp"

#if TSR_NN_PART

#define TSR_OPTIM_FLOATING(T)                                                                              \
  namespace tsr::optim {                                                                                   \
  TSR_NN_INSTANCE void SGD::update<T>(const SGDOptions&, Tensor<T>&, ParamState&);                         \
  TSR_NN_INSTANCE void detail::AdamFamily<AdamOptions, false>::update<T>(const AdamOptions&, Tensor<T>&,   \
                                                                        ParamState&);                      \
  TSR_NN_INSTANCE void detail::AdamFamily<AdamWOptions, true>::update<T>(const AdamWOptions&, Tensor<T>&,  \
                                                                        ParamState&);                      \
  }

TSR_OPTIM_FLOATING(float)
TSR_OPTIM_FLOATING(double)

#undef TSR_OPTIM_FLOATING

#endif
