// tessera's distributed training: torch.distributed's process groups and
// collectives over MPI (launch with mpirun). Include this header (after or
// instead of tessera.hpp) and link MPI; a program that includes only
// tessera.hpp compiles none of it.
#pragma once

#include "../tessera.hpp"
#include "work.hpp"
#include "backend.hpp"
#include "mpi_backend.hpp"
#include "collectives.hpp"
