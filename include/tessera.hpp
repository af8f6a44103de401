// tessera: a header-only C++20 tensor library with PyTorch's semantics and
// expression templates underneath. Include this one header.
#pragma once

// GCC 12 reports the _mm512_undefined_*() placeholders inside its AVX-512
// intrinsics (rounding, conversions, shifts that xsimd uses) as
// "may be used uninitialized" wherever they are inlined: a known false
// positive, which would otherwise appear in every program built with
// -Wall -march=native on an AVX-512 machine. Silenced for code that passes
// through tessera's headers only; users' own code keeps the warning.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

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
#include "math_composite.hpp"
#include "integer_math.hpp"
#include "detail/assign.hpp"
#include "eval.hpp"
#include "random.hpp"
#include "factories.hpp"
#include "reduce.hpp"
#include "reduce_dims.hpp"
#include "statistics.hpp"
#include "index_reduce.hpp"
#include "scan.hpp"
#include "linalg.hpp"
#include "shape_ops.hpp"
#include "indexing.hpp"
#include "stack_split.hpp"
#include "broadcasting.hpp"
#include "view_scatter.hpp"
#include "index_writes.hpp"
#include "advanced_indexing.hpp"
#include "distances.hpp"
#include "sampling.hpp"
#include "cross_product.hpp"
#include "windows.hpp"
#include "sort.hpp"
#include "order_statistics.hpp"
#include "binning.hpp"
#include "unique.hpp"
#include "products.hpp"
#include "integration.hpp"
#include "correlation.hpp"
#include "autograd/tensor_autograd.hpp"
#include "autograd/reduction_rules.hpp"
#include "autograd/linalg_rules.hpp"
#include "autograd/shape_rules.hpp"
#include "autograd/in_place.hpp"
#include "autograd/gradcheck.hpp"
#include "scatter_reduce.hpp"
#include "float_parts.hpp"
#include "special.hpp"
#include "aliases.hpp"
#include "in_place_math.hpp"
#include "in_place_indexing.hpp"
#include "print.hpp"
#include "io/npy.hpp"
#include "detail/precompiled.hpp"

// The CUDA backend, in translation units compiled by nvcc or for the
// emulated device build (detail/config.hpp); nothing of it elsewhere.
#if TSR_CUDA_BACKEND
#include "cuda/elementwise.hpp"
#include "cuda/indexing.hpp"
#include "cuda/matmul.hpp"
#include "cuda/reduce.hpp"
#include "cuda/scan.hpp"
#include "cuda/sort.hpp"
#include "cuda/tensor_backend.hpp"
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
