// tessera_core's second part: the layers, losses and optimizer updates that
// models share (include/nn/precompiled.hpp, include/optim/precompiled.hpp),
// compiled once beside src/tessera_core.cpp. It uses the core's part from
// there (TSR_PRECOMPILED), and is linked into a program only if the program
// uses nn or optim.
#define TSR_PRECOMPILED
#define TSR_BUILDING_NN
#include "../include/tessera.hpp"
#include "../include/nn/nn.hpp"
#include "../include/optim/optim.hpp"
