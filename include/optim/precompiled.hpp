// The optimizers' updates of one parameter, compiled once into tessera_core
// (Meson: -Dprecompiled=true) with the nn part (../nn/precompiled.hpp, which
// says why): SGD, Adam and AdamW, for float and double.
#pragma once
#include "../detail/config.hpp"

#if (defined(TSR_PRECOMPILED) && !TSR_CUDA_BACKEND) || defined(TSR_BUILDING_NN)

#ifdef TSR_BUILDING_NN
#define TSR_OPTIM_INSTANCE template
#else
#define TSR_OPTIM_INSTANCE extern template
#endif

#define TSR_OPTIM_FLOATING(T)                                                                              \
  namespace tsr::optim {                                                                                   \
  TSR_OPTIM_INSTANCE void SGD::update<T>(const SGDOptions&, Tensor<T>&, ParamState&);                      \
  TSR_OPTIM_INSTANCE void detail::AdamFamily<AdamOptions, false>::update<T>(const AdamOptions&, Tensor<T>&, \
                                                                           ParamState&);                   \
  TSR_OPTIM_INSTANCE void detail::AdamFamily<AdamWOptions, true>::update<T>(const AdamWOptions&,           \
                                                                           Tensor<T>&, ParamState&);       \
  }

TSR_OPTIM_FLOATING(float)
TSR_OPTIM_FLOATING(double)

#undef TSR_OPTIM_FLOATING
#undef TSR_OPTIM_INSTANCE

#endif
