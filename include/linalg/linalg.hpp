// tessera's torch.linalg: linear systems, inverses, determinants and the
// Cholesky factorization of batches of matrices (linalg/functions.hpp), the
// LU factorization and its solves (linalg/lu.hpp), tensorinv and
// tensorsolve (linalg/tensor_solves.hpp), the QR factorization
// (linalg/qr.hpp), symmetric eigendecompositions (linalg/eigh.hpp), the SVD
// (linalg/svd.hpp) and the norms, cond, rank and pseudoinverse made of it
// (linalg/norms.hpp), least squares (linalg/lstsq.hpp), the matrix
// exponential and vecdot (linalg/matrix_exp.hpp), and einsum
// (linalg/einsum.hpp), each differentiable.
// Include this header after or instead of tessera.hpp; a program that
// includes only tessera.hpp compiles none of it.
#pragma once

#include "../tessera.hpp"
#include "functions.hpp"
#include "lu.hpp"
#include "tensor_solves.hpp"
#include "einsum.hpp"
#include "qr.hpp"
#include "householder.hpp"
#include "eigh.hpp"
#include "svd.hpp"
#include "norms.hpp"
#include "lstsq.hpp"
#include "matrix_exp.hpp"
