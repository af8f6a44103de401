// tessera's optim: optimizers and learning-rate schedulers with the names,
// options and behaviour of libtorch's C++ frontend (torch::optim). Include
// this header (after or instead of tessera.hpp); a program that includes only
// tessera.hpp does not compile any of it.
#pragma once

#include "../tessera.hpp"
#include "optimizer.hpp"
#include "sgd.hpp"
#include "adam.hpp"
#include "rmsprop.hpp"
#include "adagrad.hpp"
#include "adadelta.hpp"
#include "lbfgs.hpp"
#include "lr_scheduler.hpp"
// With -Dprecompiled=true, the common updates come compiled from
// tessera_core (precompiled.hpp).
#include "precompiled.hpp"
