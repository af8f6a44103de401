// Shape and Strides, dimension wrapping and broadcasting of shapes.
#pragma once
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "detail/small_vector.hpp"
#include "errors.hpp"

namespace tsr {

// Sizes of a tensor: up to 8 dimensions without a heap allocation.
using Shape = detail::SmallVector<int64_t, 8>;
// Strides of a tensor, in elements.
using Strides = detail::SmallVector<int64_t, 8>;

namespace detail {

// Prints [2, 3] (found by ADL for Shape and Strides).
inline std::ostream& operator<<(std::ostream& os, const SmallVector<int64_t, 8>& s) {
  os << '[';
  for (std::size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  return os << ']';
}

inline int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

// Row-major strides of a contiguous tensor of shape s (size-0 dims count as
// 1, as in PyTorch), written into st with no temporary: every new tensor
// sets its strides this way.
inline void set_contiguous_strides(const Shape& s, Strides& st) {
  st.resize(s.size());
  int64_t acc = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(s[i], 1);
  }
}
inline Strides contiguous_strides(const Shape& s) {
  Strides st;
  set_contiguous_strides(s, st);
  return st;
}

// Turns a possibly negative dim into [0, ndim); PyTorch's message otherwise.
// A 0-d tensor accepts dims -1 and 0, as in PyTorch.
inline int64_t wrap_dim(int64_t dim, int64_t ndim) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  check<IndexError>(dim >= -n && dim < n, "Dimension out of range (expected to be in range of [", -n,
                    ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

// PyTorch's broadcasting of two shapes, with its error text.
#if TSR_CORE_DEFINITIONS
TSR_CORE_INLINE Shape broadcast_shapes(const Shape& a, const Shape& b) {
  if (a == b) return a;  // the common case, no per-dim work
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  // From the last dim, as PyTorch checks (its error names the last mismatch).
  for (std::size_t i = n; i-- > 0;) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    check(da == db || da == 1 || db == 1, "The size of tensor a (", da,
          ") must match the size of tensor b (", db, ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}
#else
Shape broadcast_shapes(const Shape& a, const Shape& b);
#endif

// The shape of an expression node over several operands. Nearly always one
// operand already has the broadcast shape (equal shapes, or a tensor beside a
// number): the node then names that operand instead of copying its shape,
// which tiny ops would feel. Otherwise it keeps the broadcast shape itself.
// (Safe to refer to: a tensor's geometry never changes after creation, and
// a node's operands live as long as the node.)
class NodeShape {
 public:
  // Two operands (nearly every node): the same answer with fewer compares.
  // Always inlined: every binary node is built through it.
  [[gnu::always_inline]] NodeShape(const Shape& a, const Shape& b) {
    if (&a == &b || b.empty() || a == b) from_ = 0;
    else if (a.empty()) from_ = 1;
    else own_.reset(broadcast_of(a, b));
  }
  template <class... S>
  explicit NodeShape(const S&... operand_shapes) {
    const Shape* shapes[] = {&operand_shapes...};
    for (int i = 0; i < int(sizeof...(S)); ++i) {
      bool all = true;
      for (const Shape* s : shapes) all = all && (s == shapes[i] || s->empty() || *s == *shapes[i]);
      if (all) {
        from_ = i;
        return;
      }
    }
    Shape own = *shapes[0];
    for (const Shape* s : shapes) own = broadcast_shapes(own, *s);
    own_.reset(copy_of(own));
  }
  // The owned shape lives on the heap, out of the node: a node is then 16
  // bytes, not 104, and every expression tree that holds nodes (a backward
  // copies the saved tree's subtrees into each gradient) is smaller to copy
  // and to compile (an inline shape made a 3-parameter fit's code 2-4% larger).
  // The allocation is rare (outer broadcasts) and small beside the strided
  // evaluation such a node goes through. A node's copy and destruction
  // are compiled into the code of every expression type: inline they are
  // one test of a pointer, and the shape is copied and freed out of line.
  NodeShape(const NodeShape& o) : own_(copy_owned(o)), from_(o.from_) {}
  NodeShape(NodeShape&&) noexcept = default;
  NodeShape& operator=(const NodeShape& o) {
    own_ = copy_owned(o);
    from_ = o.from_;
    return *this;
  }
  NodeShape& operator=(NodeShape&&) noexcept = default;
  ~NodeShape() = default;

  // The shape, given the same operands' shapes (in the same order) again.
  template <class... S>
  const Shape& get(const S&... operand_shapes) const {
    const Shape* shapes[] = {&operand_shapes...};
    return own_ ? *own_ : *shapes[from_];
  }

 private:
  [[gnu::noinline]] static Shape* broadcast_of(const Shape& a, const Shape& b) { return new Shape(broadcast_shapes(a, b)); }
  [[gnu::noinline]] static Shape* copy_of(const Shape& s) { return new Shape(s); }
  struct Release {
    [[gnu::noinline]] void operator()(Shape* s) const noexcept { delete s; }
  };

  using Owned = std::unique_ptr<Shape, Release>;
  static Owned copy_owned(const NodeShape& o) { return Owned(o.own_ ? copy_of(*o.own_) : nullptr); }

  // Set only when no operand has the node's shape (a broadcast of every
  // operand): otherwise the node names the operand whose shape it has.
  Owned own_;
  int from_ = 0;  // the operand whose shape is the node's, when own_ is null
};

// Checks that `from` broadcasts to exactly `to` (in-place ops, expand).
inline bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const std::size_t lead = to.size() - from.size();
  for (std::size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[lead + i]) return false;
  return true;
}

}  // namespace detail
}  // namespace tsr
