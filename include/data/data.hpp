// tessera's data: datasets, samplers and the DataLoader with the names and
// behaviour of torch.utils.data. Include this header (after or instead of
// tessera.hpp); a program that includes only tessera.hpp compiles none of it.
#pragma once

#include "../tessera.hpp"
#include "dataset.hpp"
#include "sampler.hpp"
#include "dataloader.hpp"
