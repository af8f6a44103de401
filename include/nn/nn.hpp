// tessera's nn: modules, layers, losses and initializations with the names,
// options and behaviour of libtorch's C++ frontend (torch::nn). Include this
// header (after or instead of tessera.hpp); a program that includes only
// tessera.hpp does not compile any of it.
#pragma once

#include "../tessera.hpp"
#include "../any_tensor.hpp"
#include "module.hpp"
#include "holder.hpp"
#include "init.hpp"
#include "linear.hpp"
#include "activation.hpp"
#include "container.hpp"
#include "loss.hpp"
#include "margin_losses.hpp"
#include "likelihood_losses.hpp"
#include "ctc_loss.hpp"
#include "conv.hpp"
#include "volumetric.hpp"
#include "fold.hpp"
#include "norm.hpp"
#include "dropout.hpp"
#include "embedding.hpp"
#include "embedding_bag.hpp"
#include "resample.hpp"
#include "rnn.hpp"
#include "attention.hpp"
#include "transformer.hpp"
#include "static.hpp"
#include "utils.hpp"
// With -Dprecompiled=true, the layers, losses and updates of the usual
// models come compiled from tessera_core (precompiled.hpp).
#include "precompiled.hpp"
