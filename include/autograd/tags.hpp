// The tags of the operations that record their own node (record_op<Tag>):
// declared here so that an op's header can name its tag; the rules, which
// need the whole library, are in autograd/*_rules.hpp.
#pragma once

namespace tsr::autograd::tag {
// reductions (autograd/reduction_rules.hpp)
struct Sum;
struct Mean;
struct Extremum;
struct Prod;
struct Var;
struct Norm;
struct Logsumexp;
struct Nansum;
struct Softmax;
struct Cumsum;
struct Cumprod;
struct Logcumsumexp;
struct IndexReduce;
// matrix products (autograd/linalg_rules.hpp)
struct Matmul;
struct Addmm;
// shape and indexing ops (autograd/shape_rules.hpp)
struct Cat;
struct IndexSelect;
struct Gather;
struct Scatter;
struct Sort;
struct Flip;
struct Roll;
struct Repeat;
struct Triangle;
struct MaskedSelect;
struct ToCopy;
struct PinMemory;
}  // namespace tsr::autograd::tag
