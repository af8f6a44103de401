// The switch that include/nn/precompiled.hpp and include/optim/precompiled.hpp
// share: the layers, losses and optimizer updates that models use, compiled
// once into tessera_core's second part (src/tessera_nn.cpp). As for the
// core's part (precompiled.hpp, which explains the mechanism), one list is
// read both ways: explicit instantiations there, `extern template` in a
// program built with TSR_PRECOMPILED. A translation unit with the CUDA
// backend compiles its own (the library's copies have no device path), and
// header-only use sees nothing of it.
#pragma once
#include "config.hpp"

#if (defined(TSR_PRECOMPILED) && !TSR_CUDA_BACKEND) || defined(TSR_BUILDING_NN)
#define TSR_NN_PART 1
#ifdef TSR_BUILDING_NN
#define TSR_NN_INSTANCE template
#else
#define TSR_NN_INSTANCE extern template
#endif
#else
#define TSR_NN_PART 0
#endif
