// Backward of the shape and indexing ops: each moves the gradient back to
// where the forward took the elements from (a narrow of the gradient for
// cat, a scatter-add for gather and index_select, a scatter for sort and
// topk, the inverse permutation for flip and roll, a sum over the copies
// for repeat).
#pragma once
#include "../indexing.hpp"
#include "../shape_ops.hpp"
#include "../sort.hpp"
#include "scatter_grad.hpp"

namespace tsr::autograd {
// cat and stack: each input gets its slice of the gradient (a view).
template <>
struct OpRule<tag::Cat> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const std::vector<Tensor<T>>& inputs, int64_t dim, const char* name,
                     bool stacked) {
    struct Rule {
      std::vector<int64_t> sizes;  // along dim; -1 for the (0,)-shaped inputs cat skips
      int64_t dim;
      bool stacked;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        std::vector<GradRef> out;
        int64_t at = 0;
        for (int64_t size : sizes) {
          if (size < 0) {
            out.push_back(Tensor<T>::allocate({0}).impl_ptr());
          } else if (stacked) {
            out.push_back(g.select(dim, at++).impl_ptr());
          } else {
            out.push_back(g.narrow(dim, at, size).impl_ptr());
            at += size;
          }
        }
        return out;
      }
    };
    std::vector<std::shared_ptr<Node>> edges;
    std::vector<int64_t> sizes;
    for (const auto& t : inputs) {
      edges.push_back(tsr::detail::gradient_edge(t));
      sizes.push_back(stacked ? 1 : tsr::detail::skipped_in_cat(t) ? -1 : t.size(dim));
    }
    set_rule(out, name, Rule{std::move(sizes), dim, stacked}, std::move(edges));
  }
};

// index_select and index: the gradient's slices added back at their indices.
template <>
struct OpRule<tag::IndexSelect> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& x, int64_t dim, const Tensor<int64_t>& index,
                     const char* name) {
    struct Rule {
      Shape x_sizes;
      int64_t dim;
      Tensor<int64_t> index;  // 1-D, non-negative
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        if (x_sizes.empty()) return {g.reshape(x_sizes).impl_ptr()};
        Shape gs = x_sizes, line(x_sizes.size(), 1);
        gs[static_cast<std::size_t>(dim)] = line[static_cast<std::size_t>(dim)] = index.numel();
        return {detail_rules::scattered(x_sizes, dim, index.view(line).expand(gs), g.reshape(gs), true).impl_ptr()};
      }
    };
    const int64_t size = x.dim() == 0 ? 1 : x.size(dim);
    // Negative indices (index() allows them) as positions.
    const Tensor<int64_t> positions = Tensor<int64_t>(where(index < int64_t(0), index + size, index)).reshape({-1});
    set_rule(out, name, Rule{x.sizes(), dim, positions}, {tsr::detail::gradient_edge(x)});
  }
};

// masked_select: the gradient goes back to the selected positions (of the
// broadcast shape), then is summed to x's shape where x was broadcast.
template <>
struct OpRule<tag::MaskedSelect> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& x, const Shape& shape, const Tensor<int64_t>& positions) {
    struct Rule {
      Shape x_sizes, shape;      // x's, and the broadcast shape the mask selects from
      Tensor<int64_t> positions; // the selected flat positions, in order, on x's device
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        const Tensor<T> full = detail_rules::scattered({numel_of(shape)}, 0, positions, g, false);
        return {tsr::detail::sum_to(full.view(shape), x_sizes).impl_ptr()};
      }
    };
    set_rule(out, "MaskedSelectBackward0", Rule{x.sizes(), shape, tsr::detail::placed_on(positions, x.device())},
             {tsr::detail::gradient_edge(x)});
  }
};

// gather (and cummax, cummin: the values at their positions): the gradient
// scatter-added back.
template <>
struct OpRule<tag::Gather> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& x, int64_t dim, const Tensor<int64_t>& index,
                     const char* name = "GatherBackward0") {
    struct Rule {
      Shape x_sizes;
      int64_t dim;
      Tensor<int64_t> index;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        if (x_sizes.empty()) return {g.impl_ptr()};
        return {detail_rules::scattered(x_sizes, dim, index, g, true).impl_ptr()};
      }
    };
    set_rule(out, name, Rule{x.sizes(), dim, index}, {tsr::detail::gradient_edge(x)});
  }
};

// scatter (of a tensor or a value) and scatter_add: self's gradient is g
// (zero where scatter overwrote it); src's is g gathered at the indices.
template <>
struct OpRule<tag::Scatter> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index,
                     const Tensor<T>& src, bool add, const char* name = nullptr) {
    make(out, self, dim, index, &src, add, name);
  }
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index,
                     const char* name = nullptr) {
    make<T>(out, self, dim, index, nullptr, false, name);
  }

 private:
  template <class T>
  static void make(const Tensor<T>& out, const Tensor<T>& self, int64_t dim, const Tensor<int64_t>& index,
                   const Tensor<T>* src, bool add, const char* name) {
    struct Rule {
      int64_t dim;
      Tensor<int64_t> index;
      Shape src_sizes;
      bool add, need_self, need_src;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        std::vector<GradRef> out(2);
        if (need_self) {
          if (add) {
            out[0] = g.impl_ptr();
          } else {
            out[0] = scatter(g, dim, index, T(0)).impl_ptr();  // recorded under create_graph
          }
        }
        // src may be larger than index: the elements scatter did not read get 0.
        if (need_src) out[1] = detail_rules::padded_to(gather(g, dim, index), src_sizes).impl_ptr();
        return out;
      }
    };
    auto es = tsr::detail::gradient_edge(self);
    auto ec = src ? tsr::detail::gradient_edge(*src) : nullptr;
    Rule rule{dim, index, src ? src->sizes() : Shape{}, add, es != nullptr, ec != nullptr};
    if (!name) name = add ? "ScatterAddBackward0" : src ? "ScatterBackward0" : "ScatterBackward1";
    set_rule(out, name, std::move(rule), {std::move(es), std::move(ec)});
  }
};

// sort and topk: the values' gradient goes back to where they came from.
template <>
struct OpRule<tag::Sort> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& values, const Tensor<T>& x, int64_t dim, const Tensor<int64_t>& indices,
                     const char* name) {
    struct Rule {
      Shape x_sizes;
      int64_t dim;
      Tensor<int64_t> indices;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        if (x_sizes.empty()) return {g.impl_ptr()};
        return {detail_rules::scattered(x_sizes, dim, indices, g, false).impl_ptr()};
      }
    };
    set_rule(values, name, Rule{x.sizes(), dim, indices}, {tsr::detail::gradient_edge(x)});
  }
};

template <>
struct OpRule<tag::Flip> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& x, const Shape& dims) {
    struct Rule {
      Shape dims;
      std::vector<GradRef> backward(const Tensor<T>& g) const { return {flip(g, dims).impl_ptr()}; }
    };
    set_rule(out, "FlipBackward0", Rule{dims}, {tsr::detail::gradient_edge(x)});
  }
};

// to(device): the gradient copied back to the source's device.
template <>
struct OpRule<tag::ToCopy> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& x) {
    struct Rule {
      Device source;
      std::vector<GradRef> backward(const Tensor<T>& g) const { return {g.to(source).impl_ptr()}; }
    };
    set_rule(out, "ToCopyBackward0", Rule{x.device()}, {tsr::detail::gradient_edge(x)});
  }
};

// pin_memory(): the gradient passes through as it is (PyTorch's
// PinMemoryBackward0; both tensors are on the CPU).
template <>
struct OpRule<tag::PinMemory> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& x) {
    set_rule(out, "PinMemoryBackward0", IdentityRule<T>{}, {tsr::detail::gradient_edge(x)});
  }
};

// roll: rolled back by the opposite shifts.
template <>
struct OpRule<tag::Roll> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& x, const Shape& shifts, const Shape& dims) {
    struct Rule {
      Shape back, dims;
      std::vector<GradRef> backward(const Tensor<T>& g) const { return {roll(g, back, dims).impl_ptr()}; }
    };
    Shape back;
    for (int64_t s : shifts) back.push_back(-s);
    set_rule(out, "RollBackward0", Rule{back, dims}, {tsr::detail::gradient_edge(x)});
  }
};

// repeat and tile: the gradient viewed as (r0, s0, r1, s1, ...) summed over
// the copies r.
template <>
struct OpRule<tag::Repeat> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& x, const Shape& reps) {
    struct Rule {
      Shape x_sizes, pairs, copies;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        return {sum(g.reshape(pairs), copies, false).reshape(x_sizes).impl_ptr()};
      }
    };
    const int64_t n = static_cast<int64_t>(reps.size());
    Shape pairs, copies;
    for (int64_t d = 0; d < n; ++d) {
      const int64_t xd = d - (n - x.dim());
      pairs.push_back(reps[static_cast<std::size_t>(d)]);
      pairs.push_back(xd >= 0 ? x.size(xd) : 1);
      copies.push_back(2 * d);
    }
    set_rule(out, "RepeatBackward0", Rule{x.sizes(), pairs, copies}, {tsr::detail::gradient_edge(x)});
  }
};

// tril and triu: the same triangle of the gradient.
template <>
struct OpRule<tag::Triangle> {
  template <class T> [[gnu::noinline]]
  static void record(const Tensor<T>& out, const Tensor<T>& x, int64_t k, bool lower) {
    struct Rule {
      int64_t k;
      bool lower;
      std::vector<GradRef> backward(const Tensor<T>& g) const {
        return {(lower ? tril(g, k) : triu(g, k)).impl_ptr()};
      }
    };
    set_rule(out, lower ? "TrilBackward0" : "TriuBackward0", Rule{k, lower}, {tsr::detail::gradient_edge(x)});
  }
};

}  // namespace tsr::autograd
