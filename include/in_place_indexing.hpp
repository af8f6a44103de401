// The indexed writes as Tensor methods, declared in tensor.hpp
// (x.masked_fill_(mask, v), x.index_add_(0, i, src), x.scatter_(1, i, src),
// ...): each forwards to the function of the same name, so the two
// spellings of PyTorch code (torch.masked_fill_ is rare, Tensor.masked_fill_
// common) write the same values and record the same history.
#pragma once
#include <string_view>

#include "advanced_indexing.hpp"
#include "index_writes.hpp"
#include "indexing.hpp"
#include "linalg.hpp"
#include "sampling.hpp"
#include "scatter_reduce.hpp"

namespace tsr {

template <class T> template <class M, class S> Tensor<T>& Tensor<T>::masked_fill_(const M& mask, S value) {
  return tsr::masked_fill_(*this, mask, value);
}
template <class T> template <class M> Tensor<T>& Tensor<T>::masked_scatter_(const M& mask, const Tensor& source) {
  return tsr::masked_scatter_(*this, mask, source);
}
template <class T>
template <class S>
Tensor<T>& Tensor<T>::index_add_(int64_t dim, const Tensor<int64_t>& index, const Tensor& source, S alpha) {
  return tsr::index_add_(*this, dim, index, source, alpha);
}
template <class T>
template <class U>
Tensor<T>& Tensor<T>::index_copy_(int64_t dim, const Tensor<int64_t>& index, const Tensor& source) {
  return tsr::index_copy_(*this, dim, index, source);
}
template <class T>
template <class S>
Tensor<T>& Tensor<T>::index_fill_(int64_t dim, const Tensor<int64_t>& index, S value) {
  return tsr::index_fill_(*this, dim, index, value);
}
template <class T>
template <class V>
Tensor<T>& Tensor<T>::scatter_(int64_t dim, const Tensor<int64_t>& index, const V& src) {
  return tsr::scatter_(*this, dim, index, src);
}
template <class T>
template <class U>
Tensor<T>& Tensor<T>::scatter_add_(int64_t dim, const Tensor<int64_t>& index, const Tensor& src) {
  return tsr::scatter_add_(*this, dim, index, src);
}
template <class T>
template <class U>
Tensor<T>& Tensor<T>::scatter_reduce_(int64_t dim, const Tensor<int64_t>& index, const Tensor& src,
                                      std::string_view reduce, bool include_self) {
  return tsr::scatter_reduce_(*this, dim, index, src, reduce, include_self);
}
template <class T>
template <class A, class B, class Beta, class Alpha>
Tensor<T>& Tensor<T>::addmm_(const A& mat1, const B& mat2, Beta beta, Alpha alpha) {
  return tsr::addmm_(*this, mat1, mat2, beta, alpha);
}
template <class T> template <class U> Tensor<T>& Tensor<T>::bernoulli_(double p) { return tsr::bernoulli_(*this, p); }
template <class T>
template <class U>
Tensor<T>& Tensor<T>::index_put_(const Indices& indices, const Tensor& values, bool accumulate) {
  return tsr::index_put_(*this, indices, values, accumulate);
}
template <class T>
template <Scalar S>
Tensor<T>& Tensor<T>::index_put_(const Indices& indices, S value, bool accumulate) {
  return tsr::index_put_(*this, indices, value, accumulate);
}

}  // namespace tsr
