// tessera: a header-only C++20 tensor library with PyTorch's semantics and
// expression templates underneath. Include this one header.
#pragma once

#include "errors.hpp"
#include "shape.hpp"
#include "half.hpp"
#include "dtype.hpp"
#include "device.hpp"
#include "storage.hpp"
#include "expr.hpp"
#include "tensor.hpp"
#include "views.hpp"
#include "ops.hpp"
#include "math.hpp"
#include "detail/assign.hpp"
#include "eval.hpp"
#include "random.hpp"
#include "factories.hpp"
#include "reduce.hpp"
#include "print.hpp"
#include "io/npy.hpp"
