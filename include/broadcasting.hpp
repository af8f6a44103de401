// Broadcasting made explicit: broadcast_shapes, broadcast_to,
// broadcast_tensors. Expressions broadcast by themselves; these are for
// code that needs the common shape, or the operands as views of it.
#pragma once

#include <initializer_list>
#include <vector>
#include "views.hpp"

namespace tsr {

// The shape that tensors of the given shapes broadcast to.
inline Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  std::size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes)
    for (std::size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      detail::check(s[i] == o || s[i] == 1 || o == 1, "Shape mismatch: objects cannot be broadcast to a single shape");
      if (o == 1) o = s[i];
    }
  return out;
}
inline Shape broadcast_shapes(std::initializer_list<Shape> shapes) {
  return broadcast_shapes(std::vector<Shape>(shapes));
}

// x as a view of the given shape (expand: -1 keeps a size; new leading dims
// and size-1 dims repeat with stride 0).
template <class T>
Tensor<T> broadcast_to(const Tensor<T>& x, const Shape& shape) {
  return x.expand(shape);
}

// The tensors as views of their common shape.
template <class T>
std::vector<Tensor<T>> broadcast_tensors(const std::vector<Tensor<T>>& tensors) {
  Shape shape;
  for (const auto& t : tensors) shape = detail::broadcast_shapes(shape, t.sizes());
  std::vector<Tensor<T>> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back(t.expand(shape));
  return out;
}
template <class T>
std::vector<Tensor<T>> broadcast_tensors(std::initializer_list<Tensor<T>> tensors) {
  return broadcast_tensors(std::vector<Tensor<T>>(tensors));
}

}  // namespace tsr
