// The part of tessera that does not depend on a program's expressions,
// compiled once into the optional tessera_core library.
//
// Every translation unit that materializes an expression, takes a view or
// prints a tensor needs the same machinery for each element type: the
// autograd engine's node types (gradient accumulation, views, in-place
// writes through views), the plain copies and fills, the sums that reduce
// broadcast gradients, printing. Header-only, each translation unit compiles
// all of it again (about two thirds of a hello world's compile time). With
// TSR_PRECOMPILED defined, the declarations below are explicit instantiation
// declarations (`extern template`): translation units use the copies that
// src/tessera_core.cpp instantiated once (Meson: -Dprecompiled=true).
// Without it, nothing here exists and everything works header-only.
//
// The list is written once and read both ways, which needs the one macro
// below: `extern template` in users' code, `template` in the library.
#pragma once
#include "config.hpp"

// (A translation unit with the CUDA backend compiles its own: the
// library's copies have no device path.)
#if (defined(TSR_PRECOMPILED) && !TSR_CUDA_BACKEND) || defined(TSR_BUILDING_CORE)

#ifdef TSR_BUILDING_CORE
#define TSR_INSTANCE template
#else
#define TSR_INSTANCE extern template
#endif

// The three forms of one arithmetic op: between two tensors of one type, and
// between such a tensor and a scalar on either side. M(T, expression type)
// says what to instantiate for each.
#define TSR_OPERAND_FORMS(M, T, Op)                                                                        \
  M(T, Binary<Op, Tensor<T>, Tensor<T>>)                                                                   \
  M(T, Binary<Op, Tensor<T>, ScalarLeaf<T>>)                                                               \
  M(T, Binary<Op, ScalarLeaf<T>, Tensor<T>>)

// An expression type evaluated (the fast path, the general one): the most
// common expressions in programs, and what every backward adds gradients with.
#define TSR_EVALUATED(T, ...)                                                                              \
  namespace tsr::detail {                                                                                  \
  TSR_INSTANCE void assign<T, __VA_ARGS__>(const Tensor<T>&, const __VA_ARGS__&, bool);                    \
  TSR_INSTANCE void assign_general<T, __VA_ARGS__>(const Tensor<T>&, const __VA_ARGS__&, bool);            \
  }
// ... and recorded for autograd (its node and fused backward kernels, or
// with per-op autograd its recording op by op; floating types only: for
// the others recording compiles to nothing). The
// node is listed too, for the nodes that hold one (a full sum's): its
// apply_with, a member template, is not part of the class's instantiation.
#define TSR_EVALUATED_AND_RECORDED(T, ...)                                                                 \
  TSR_EVALUATED(T, __VA_ARGS__)                                                                            \
  namespace tsr::detail {                                                                                  \
  TSR_INSTANCE void record_expression<T, __VA_ARGS__>(const Tensor<T>&, const __VA_ARGS__&);               \
  TSR_INSTANCE bool materialized_op_by_op<T, __VA_ARGS__>(Tensor<T>&, const __VA_ARGS__&);                 \
  }                                                                                                        \
  namespace tsr::autograd {                                                                                \
  TSR_INSTANCE class FusedNode<__VA_ARGS__, true>;                                                         \
  TSR_INSTANCE std::vector<GradRef> FusedNode<__VA_ARGS__, true>::apply_with<Tensor<T>>(const Tensor<T>&)  \
      const;                                                                                               \
  }
// A single op as a recorded backward (create_graph) evaluates it, and its node.
#define TSR_RECORDED_OP(T, ...)                                                                            \
  namespace tsr::autograd {                                                                                \
  TSR_INSTANCE class FusedNode<__VA_ARGS__, false>;                                                        \
  }                                                                                                        \
  namespace tsr::detail {                                                                                  \
  TSR_INSTANCE Tensor<T> record_single_op<__VA_ARGS__>(const __VA_ARGS__&);                                \
  }
// An expression type written into an existing tensor (copy_, fill_, +=, a
// view assigned), with autograd's checks and history for in-place writes.
#define TSR_WRITTEN_IN_PLACE(T, ...)                                                                       \
  namespace tsr::detail {                                                                                  \
  TSR_INSTANCE Tensor<T>& copy_with_history<T, __VA_ARGS__>(Tensor<T>&, const __VA_ARGS__&);               \
  }

// Per integer type: the arithmetic (division gives floats: not listed).
#define TSR_PRECOMPILED_INTEGER(T)                                                                         \
  TSR_OPERAND_FORMS(TSR_EVALUATED, T, ops::Add)                                                            \
  TSR_OPERAND_FORMS(TSR_EVALUATED, T, ops::Sub)                                                            \
  TSR_OPERAND_FORMS(TSR_EVALUATED, T, ops::Mul)

// The sum of all elements (sum(e), mean(e)) of a tensor, or of the product
// of two (a dot product, a masked or weighted loss), and its node.
#define TSR_FULL_SUM(T, ...)                                                                               \
  namespace tsr::detail {                                                                                  \
  TSR_INSTANCE acc_t<T> reduce_all<SumReducer, acc_t<T>, __VA_ARGS__>(const __VA_ARGS__&);                 \
  TSR_INSTANCE void record_full_reduction<T, __VA_ARGS__>(const Tensor<T>&, const __VA_ARGS__&, bool);     \
  }
#define TSR_PRECOMPILED_FULL_SUM(T)                                                                        \
  TSR_FULL_SUM(T, Tensor<T>)                                                                               \
  TSR_FULL_SUM(T, Binary<ops::Mul, Tensor<T>, Tensor<T>>)

// A classifier's matches as T (cast<float>(argmax(logits, 1) == labels)),
// evaluated and summed (their mean is the accuracy); one-hot targets are
// written the same way.
#define TSR_MATCHES(T)                                                                                     \
  TSR_EVALUATED(T, Cast<T, Binary<ops::Eq, Tensor<int64_t>, Tensor<int64_t>>>)                             \
  TSR_FULL_SUM(T, Cast<T, Binary<ops::Eq, Tensor<int64_t>, Tensor<int64_t>>>)

// A hidden layer written by hand: an activation of an affine output,
// relu(mm(x, w) + b), evaluated and recorded.
#define TSR_ACTIVATED_SUMS(T)                                                                              \
  TSR_EVALUATED_AND_RECORDED(T, Unary<ops::Relu, Binary<ops::Add, Tensor<T>, Tensor<T>>>)                  \
  TSR_EVALUATED_AND_RECORDED(T, Unary<ops::Tanh, Binary<ops::Add, Tensor<T>, Tensor<T>>>)                  \
  TSR_EVALUATED_AND_RECORDED(T, Unary<ops::Sigmoid, Binary<ops::Add, Tensor<T>, Tensor<T>>>)

// The update of a hand-written gradient descent step, p -= lr * g.
#define TSR_DESCENT_STEP(T)                                                                                \
  TSR_EVALUATED(T, Binary<ops::Sub, Tensor<T>, Binary<ops::Mul, ScalarLeaf<T>, Tensor<T>>>)                \
  TSR_WRITTEN_IN_PLACE(T, Binary<ops::Sub, Tensor<T>, Binary<ops::Mul, ScalarLeaf<T>, Tensor<T>>>)

// Per element type: the tensor handle and its allocation, copies and
// fills, printing.
#define TSR_PRECOMPILED_ALL_TYPES(T)                                                                       \
  namespace tsr {                                                                                          \
  TSR_INSTANCE class Tensor<T>;                                                                            \
  namespace detail {                                                                                       \
  TSR_INSTANCE void write_tiles<T>(const Tensor<T>&, const Plan&, TileWriter<T>, const void*, bool);       \
  TSR_INSTANCE void assign<T, Tensor<T>>(const Tensor<T>&, const Tensor<T>&, bool);                       \
  TSR_INSTANCE void assign_general<T, Tensor<T>>(const Tensor<T>&, const Tensor<T>&, bool);               \
  TSR_INSTANCE void assign_general<T, ScalarLeaf<T>>(const Tensor<T>&, const ScalarLeaf<T>&, bool);       \
  TSR_INSTANCE std::string tensor_repr<T>(const Tensor<T>&, const PrintOptions&);                         \
  TSR_INSTANCE bool overlaps_differently<T, T>(const Tensor<T>&, const Tensor<T>&);                        \
  TSR_INSTANCE Tensor<T> scalar_tensor<T>(T, Device);                                                      \
  }                                                                                                        \
  TSR_INSTANCE Tensor<T> Tensor<T>::allocate_in<Device>(const Shape&, Device);                             \
  }

// The elementwise functions a recorded backward (create_graph) most often
// meets, over a tensor: those of the usual losses and activations, and the
// ones their derivatives are written with.
#define TSR_RECORDED_UNARY_OPS(T)                                                                          \
  TSR_RECORDED_OP(T, Unary<ops::Neg, Tensor<T>>)                                                           \
  TSR_RECORDED_OP(T, Unary<ops::Square, Tensor<T>>)                                                        \
  TSR_RECORDED_OP(T, Unary<ops::Sqrt, Tensor<T>>)                                                          \
  TSR_RECORDED_OP(T, Unary<ops::Exp, Tensor<T>>)                                                           \
  TSR_RECORDED_OP(T, Unary<ops::Log, Tensor<T>>)                                                           \
  TSR_RECORDED_OP(T, Unary<ops::Sin, Tensor<T>>)                                                           \
  TSR_RECORDED_OP(T, Unary<ops::Cos, Tensor<T>>)                                                           \
  TSR_RECORDED_OP(T, Unary<ops::Tanh, Tensor<T>>)                                                          \
  TSR_RECORDED_OP(T, Unary<ops::Sigmoid, Tensor<T>>)                                                       \
  TSR_RECORDED_OP(T, Unary<ops::Relu, Tensor<T>>)

// Per floating type: the autograd runtime (autograd/runtime.hpp, which
// requires_grad_ switches on), the node types every recorded expression
// reaches and what their constructors and backwards call (gradient edges,
// history, saved versions' checks, broadcast gradients' sums), and the
// in-place writes of a tensor or a scalar with their history. nn's list
// applies it to half and bfloat16 too.
#define TSR_PRECOMPILED_AUTOGRAD_RUNTIME(T)                                                                \
  namespace tsr {                                                                                          \
  namespace autograd {                                                                                     \
  TSR_INSTANCE class AccumulateGrad<T>;                                                                    \
  TSR_INSTANCE class ViewNode<T>;                                                                          \
  TSR_INSTANCE class CopySlices<T>;                                                                        \
  TSR_INSTANCE class FusedNode<Tensor<T>, true>;                                                           \
  TSR_INSTANCE Tensor<T>* direct_grad_slot<T>(const std::shared_ptr<Node>&, const Shape&);                 \
  }                                                                                                        \
  namespace detail {                                                                                       \
  TSR_INSTANCE void enable_autograd_runtime<T>();                                                          \
  TSR_INSTANCE void save_leaf<T>(const Tensor<T>&, SavedVersions&,                                         \
                                 std::vector<std::shared_ptr<autograd::Node>>&);                           \
  TSR_INSTANCE Tensor<T> sum_to<T>(const Tensor<T>&, const Shape&);                                        \
  TSR_INSTANCE Tensor<T> materialize_gradient<T, Tensor<T>>(const Tensor<T>&);                             \
  TSR_INSTANCE Tensor<T> sum_over_broadcast_dims<T>(const Tensor<T>&, const Shape&);                       \
  TSR_INSTANCE void record_view<T>(const Tensor<T>&, const Tensor<T>&);                                    \
  TSR_INSTANCE void record_view_node<T>(const Tensor<T>&, const Tensor<T>&);                               \
  TSR_INSTANCE Tensor<T> reduce_dims<T, SumReducer, acc_t<T>, Tensor<T>>(const Tensor<T>&, const Shape&,   \
                                                                        bool);                             \
  TSR_INSTANCE void check_saved_version<T>(const Tensor<T>&, uint64_t);                                    \
  TSR_INSTANCE Tensor<T> dense_or_single<T>(const Tensor<T>&);                                             \
  TSR_INSTANCE void set_history<T>(const Tensor<T>&, std::shared_ptr<autograd::Node>);                     \
  TSR_INSTANCE std::shared_ptr<autograd::Node> gradient_edge<T>(const Tensor<T>&);                         \
  TSR_INSTANCE Tensor<T> copy_of_value<T>(const Tensor<T>&);                                               \
  }                                                                                                        \
  }                                                                                                        \
  TSR_WRITTEN_IN_PLACE(T, ScalarLeaf<T>)                                                                   \
  TSR_WRITTEN_IN_PLACE(T, Tensor<T>)                                                                       \
  TSR_EVALUATED_AND_RECORDED(T, Binary<ops::Add, Tensor<T>, Tensor<T>>)

// The gradient kernels that the arithmetic ops' rules build over a
// tensor-valued gradient g: g itself (a sum's operands), g * s and g / s (a
// multiple of an operand: every scaled term of an expression, a stencil's
// weights, an optimizer's running averages), g * b and g / b (a product's
// and a quotient's first operand), -g (a difference's second); each
// materialized, and summed down to a broadcast leaf's shape. The nodes above
// compile them in the core anyway; listed, the gradients of a program's own
// expressions that come to one of these forms (those of `alpha * (...)`, of
// a product of two tensors) link the core's kernels instead of compiling
// their own.
#define TSR_GRADIENT_OF_FORM(T, ...)                                                                       \
  namespace tsr::detail {                                                                                  \
  TSR_INSTANCE Tensor<T> materialize_gradient<T, __VA_ARGS__>(const __VA_ARGS__&);                         \
  TSR_INSTANCE Tensor<T> reduce_to_shape<T, __VA_ARGS__>(const __VA_ARGS__&, const Shape&);                \
  }
#define TSR_SIMPLE_GRADIENTS(T)                                                                            \
  TSR_GRADIENT_OF_FORM(T, Binary<ops::Mul, Tensor<T>, ScalarLeaf<T>>)                                      \
  TSR_GRADIENT_OF_FORM(T, Binary<ops::Div, Tensor<T>, ScalarLeaf<T>>)                                      \
  TSR_GRADIENT_OF_FORM(T, Binary<ops::Mul, Tensor<T>, Tensor<T>>)                                          \
  TSR_GRADIENT_OF_FORM(T, Binary<ops::Div, Tensor<T>, Tensor<T>>)                                          \
  TSR_GRADIENT_OF_FORM(T, Unary<ops::Neg, Tensor<T>>)                                                      \
  namespace tsr::detail {                                                                                  \
  TSR_INSTANCE Tensor<T> reduce_to_shape<T, Tensor<T>>(const Tensor<T>&, const Shape&);                    \
  }

// Per floating type: the runtime, the node of expressions linear in their
// tensors, the arithmetic and full sums, evaluated and recorded, the random
// fills (rand, randn, uniform_, normal_), and the hidden layers and accuracy
// of hand-written models.
#define TSR_PRECOMPILED_FLOATING(T)                                                                        \
  TSR_PRECOMPILED_AUTOGRAD_RUNTIME(T)                                                                      \
  namespace tsr::autograd {                                                                                \
  TSR_INSTANCE class LinearNode<T, true>;                                                                  \
  TSR_INSTANCE class LinearNode<T, false>;                                                                 \
  }                                                                                                        \
  namespace tsr::detail {                                                                                  \
  TSR_INSTANCE void assign_general<T, Cast<T, Tensor<T>>>(const Tensor<T>&, const Cast<T, Tensor<T>>&, bool); \
  TSR_INSTANCE void fill_uniform<T>(Tensor<T>&, double, double, bool);                                     \
  TSR_INSTANCE void fill_normal<T>(Tensor<T>&, double, double, bool);                                      \
  }                                                                                                        \
  TSR_RECORDED_OP(T, Ternary<ops::Where, Tensor<bool>, Tensor<T>, ScalarLeaf<T>>)                          \
  TSR_RECORDED_UNARY_OPS(T)                                                                                \
  TSR_OPERAND_FORMS(TSR_RECORDED_OP, T, ops::Add)                                                          \
  TSR_OPERAND_FORMS(TSR_RECORDED_OP, T, ops::Sub)                                                          \
  TSR_OPERAND_FORMS(TSR_RECORDED_OP, T, ops::Mul)                                                          \
  TSR_OPERAND_FORMS(TSR_RECORDED_OP, T, ops::Div)                                                          \
  TSR_EVALUATED_AND_RECORDED(T, Binary<ops::Add, Tensor<T>, ScalarLeaf<T>>)                                 \
  TSR_EVALUATED_AND_RECORDED(T, Binary<ops::Add, ScalarLeaf<T>, Tensor<T>>)                                 \
  TSR_OPERAND_FORMS(TSR_EVALUATED_AND_RECORDED, T, ops::Sub)                                               \
  TSR_OPERAND_FORMS(TSR_EVALUATED_AND_RECORDED, T, ops::Mul)                                               \
  TSR_OPERAND_FORMS(TSR_EVALUATED_AND_RECORDED, T, ops::Div)                                               \
  TSR_OPERAND_FORMS(TSR_WRITTEN_IN_PLACE, T, ops::Add)                                                     \
  TSR_OPERAND_FORMS(TSR_WRITTEN_IN_PLACE, T, ops::Sub)                                                     \
  TSR_OPERAND_FORMS(TSR_WRITTEN_IN_PLACE, T, ops::Mul)                                                     \
  TSR_OPERAND_FORMS(TSR_WRITTEN_IN_PLACE, T, ops::Div)                                                     \
  TSR_PRECOMPILED_FULL_SUM(T)                                                                              \
  TSR_DESCENT_STEP(T)                                                                                      \
  TSR_ACTIVATED_SUMS(T)                                                                                    \
  TSR_MATCHES(T)                                                                                           \
  TSR_SIMPLE_GRADIENTS(T)

// Per floating type: the ops over tensors (not fused into expressions) that
// training programs use, with their nodes: matrix products, softmax and
// log_softmax, sums and maxima over dims, argmax and argmin.
#define TSR_PRECOMPILED_TENSOR_OPS(T)                                                                      \
  namespace tsr {                                                                                          \
  namespace autograd {                                                                                     \
  TSR_INSTANCE void OpRule<tag::Matmul>::record<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&,   \
                                                   const char*);                                           \
  TSR_INSTANCE void OpRule<tag::Softmax>::record<T, Tensor<T>>(const Tensor<T>&, const Tensor<T>&, int64_t, \
                                                              bool);                                       \
  TSR_INSTANCE void OpRule<tag::Sum>::record<T, Tensor<T>>(const Tensor<T>&, const Tensor<T>&, const Shape&, \
                                                          bool, const char*);                              \
  TSR_INSTANCE void OpRule<tag::Extremum>::record<T, Tensor<T>>(const Tensor<T>&, const Tensor<T>&,        \
                                                               const Shape&, const char*, bool);           \
  }                                                                                                        \
  namespace detail {                                                                                       \
  TSR_INSTANCE Tensor<T> matmul_impl<T>(const Tensor<T>&, const Tensor<T>&);                               \
  TSR_INSTANCE Tensor<T> mm_impl<T>(const Tensor<T>&, const Tensor<T>&);                                   \
  TSR_INSTANCE Tensor<T> softmax_forward<false, Tensor<T>>(const Tensor<T>&, int64_t);                     \
  TSR_INSTANCE Tensor<T> softmax_forward<true, Tensor<T>>(const Tensor<T>&, int64_t);                      \
  TSR_INSTANCE Tensor<T> reduce_dims<T, MaxReducer, T, Tensor<T>>(const Tensor<T>&, const Shape&, bool);   \
  TSR_INSTANCE Tensor<T> reduce_dims<T, MinReducer, T, Tensor<T>>(const Tensor<T>&, const Shape&, bool);   \
  TSR_INSTANCE std::tuple<Tensor<T>, Tensor<int64_t>> index_reduce_unrecorded<true, Tensor<T>>(            \
      const Tensor<T>&, int64_t, bool, const char*);                                                       \
  TSR_INSTANCE std::tuple<Tensor<T>, Tensor<int64_t>> index_reduce_unrecorded<false, Tensor<T>>(           \
      const Tensor<T>&, int64_t, bool, const char*);                                                       \
  }                                                                                                        \
  }

TSR_PRECOMPILED_ALL_TYPES(float)
TSR_PRECOMPILED_ALL_TYPES(double)
TSR_PRECOMPILED_ALL_TYPES(int32_t)
TSR_PRECOMPILED_ALL_TYPES(int64_t)
TSR_PRECOMPILED_ALL_TYPES(bool)
TSR_PRECOMPILED_FLOATING(float)
TSR_PRECOMPILED_FLOATING(double)
TSR_PRECOMPILED_TENSOR_OPS(float)
TSR_PRECOMPILED_TENSOR_OPS(double)
TSR_PRECOMPILED_INTEGER(int32_t)
TSR_PRECOMPILED_INTEGER(int64_t)

// The groups nn's list applies to half and bfloat16 (nn/precompiled.hpp,
// which undefines them) stay defined; TSR_INSTANCE, which they expand to at
// their use, does not.
#undef TSR_PRECOMPILED_FLOATING
#undef TSR_PRECOMPILED_INTEGER
#undef TSR_PRECOMPILED_TENSOR_OPS
#undef TSR_PRECOMPILED_FULL_SUM
#undef TSR_FULL_SUM
#undef TSR_DESCENT_STEP
#undef TSR_ACTIVATED_SUMS
#undef TSR_MATCHES
#undef TSR_SIMPLE_GRADIENTS
#undef TSR_GRADIENT_OF_FORM
#undef TSR_OPERAND_FORMS
#undef TSR_RECORDED_OP
#undef TSR_RECORDED_UNARY_OPS
#undef TSR_INSTANCE

#endif
