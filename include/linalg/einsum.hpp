// einsum: Einstein summation over any number of tensors, with torch.einsum's
// equations (PyTorch 1.13): subscripts in [a-zA-Z], one ellipsis per
// operand for its broadcast dims, an optional "->" output (without it, the
// ellipsis dims and then the subscripts that appear once, in alphabetical
// order), repeated subscripts in one operand for its diagonal, and spaces
// anywhere. Computed as PyTorch computes it: the operands are aligned on
// one order of all subscripts, then contracted left to right, each pair by
// one batched matrix product (bmm) after summing the subscripts that only
// one side still has. Every step is a differentiable op, so the result is.
#pragma once
#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "../tessera.hpp"

namespace tsr::detail {

// Subscripts as numbers: 'A'..'Z' are 0..25, 'a'..'z' 26..51 (so that
// sorting them sorts as PyTorch's implicit output does); kEllipsis marks
// where an operand's ellipsis dims stand.
inline constexpr int kEinsumLabels = 52;
inline constexpr int kEllipsis = kEinsumLabels;

inline int einsum_label(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c - 'a' + 26; }
inline char einsum_char(int label) { return static_cast<char>(label < 26 ? 'A' + label : 'a' + label - 26); }
inline bool is_einsum_subscript(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

// The subscripts of each operand and of the output, as written.
struct EinsumEquation {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
  bool explicit_output = false;
};

// Parses one side: a list of operands (the inputs) or one (the output). At
// a '.', the rest of an ellipsis must follow, once per operand.
inline EinsumEquation parse_einsum(std::string_view eq) {
  EinsumEquation parsed;
  const std::size_t arrow = eq.find("->");
  const std::size_t lhs_end = arrow == std::string_view::npos ? eq.size() : arrow;
  parsed.inputs.emplace_back();
  auto read = [&](std::size_t begin, std::size_t end, bool output) {
    for (std::size_t i = begin; i < end; ++i) {
      const char c = eq[i];
      if (c == ' ') continue;
      if (!output && c == ',') {
        parsed.inputs.emplace_back();
        continue;
      }
      std::vector<int>& labels = output ? parsed.output : parsed.inputs.back();
      if (c == '.') {  // (the operand's name is built here only, not per subscript)
        const std::string who = output ? std::string("for output") : str("for operand ", parsed.inputs.size() - 1);
        check(std::find(labels.begin(), labels.end(), kEllipsis) == labels.end(), "einsum(): found '.' ", who,
              output ? " but an ellipsis (...) was already found" : " for which an ellipsis was already found");
        check(i + 2 < end && eq[i + 1] == '.' && eq[i + 2] == '.', "einsum(): found '.' ", who,
              " that is not part of any ellipsis");
        labels.push_back(kEllipsis);
        i += 2;
        continue;
      }
      check(is_einsum_subscript(c), "einsum(): invalid subscript given at index ", i,
            " in the equation string, subscripts must be in [a-zA-Z]");
      labels.push_back(einsum_label(c));
    }
  };
  read(0, lhs_end, false);
  if (arrow != std::string_view::npos) {
    parsed.explicit_output = true;
    read(arrow + 2, eq.size(), true);
  }
  return parsed;
}

// left and right (of one rank, aligned) multiplied and summed over the dims
// in sum: a dim both have is contracted by bmm, one that only one side has
// (size above 1) is summed on that side first; the others are batch dims of
// the product (both sides have them) or its rows (left only) or columns
// (right only). The summed dims stay, with size 1. (PyTorch's
// sumproduct_pair.)
template <class T>
Tensor<T> einsum_pair(Tensor<T> left, Tensor<T> right, const std::vector<bool>& sum) {
  const int64_t rank = left.dim();
  std::vector<int64_t> batch, rows, cols, contracted, ones;
  for (int64_t d = 0; d < rank; ++d) {
    const bool l = left.size(d) > 1, r = right.size(d) > 1;
    if (sum[static_cast<std::size_t>(d)] && l && r) {
      contracted.push_back(d);
      continue;
    }
    if (sum[static_cast<std::size_t>(d)]) {
      if (l) left = tsr::sum(left, Shape{d}, true);
      if (r) right = tsr::sum(right, Shape{d}, true);
      ones.push_back(d);
    } else {
      (l && r ? batch : l ? rows : r ? cols : ones).push_back(d);
    }
  }
  auto joined = [](std::initializer_list<const std::vector<int64_t>*> groups) {
    Shape dims;
    for (const auto* g : groups)
      for (const int64_t d : *g) dims.push_back(d);
    return dims;
  };
  auto size_of = [](const Tensor<T>& t, const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (const int64_t d : dims) n *= t.size(d);
    return n;
  };
  const int64_t nb = size_of(left, batch), nr = size_of(left, rows), nc = size_of(right, cols),
                nk = size_of(left, contracted);
  const Tensor<T> product =
      bmm(left.permute(joined({&batch, &rows, &contracted, &cols, &ones})).reshape({nb, nr, nk}),
          right.permute(joined({&batch, &contracted, &cols, &rows, &ones})).reshape({nb, nk, nc}));
  // Back to the aligned dims: batch, rows and columns at their own, size 1
  // at the others.
  const Shape order = joined({&batch, &rows, &cols, &contracted, &ones});
  Shape grouped, inverse(static_cast<std::size_t>(rank));
  for (const int64_t d : batch) grouped.push_back(left.size(d));
  for (const int64_t d : rows) grouped.push_back(left.size(d));
  for (const int64_t d : cols) grouped.push_back(right.size(d));
  grouped.resize(static_cast<std::size_t>(rank), 1);
  for (int64_t i = 0; i < rank; ++i) inverse[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = i;
  return product.reshape(grouped).permute(inverse);
}

}  // namespace tsr::detail

namespace tsr {

// torch.einsum(equation, *operands): "ij,jk->ik" is a matrix product,
// "bij,bjk->bik" a batched one, "ii->i" a diagonal, "ii" a trace, "i,j->ij"
// an outer product, "...ij->...ji" a transpose of the last two dims.
template <class T>
Tensor<T> einsum(std::string_view equation, const std::vector<Tensor<T>>& operands) {
  using namespace detail;
  const EinsumEquation eq = parse_einsum(equation);
  check(eq.inputs.size() <= operands.size(), "einsum(): fewer operands were provided than specified in the equation");
  check(eq.inputs.size() >= operands.size(), "einsum(): more operands were provided than specified in the equation");
  // Each operand's dims: its subscripts, an ellipsis standing for the dims
  // it leaves unnamed; the widest ellipsis sets the common one.
  std::array<int, kEinsumLabels> count{};  // occurrences over all inputs
  int64_t ellipsis_dims = 0;
  bool any_ellipsis = false;
  for (std::size_t k = 0; k < operands.size(); ++k) {
    const auto& labels = eq.inputs[k];
    const bool has_ellipsis = std::find(labels.begin(), labels.end(), kEllipsis) != labels.end();
    const int64_t named = static_cast<int64_t>(labels.size()) - (has_ellipsis ? 1 : 0), dims = operands[k].dim();
    if (has_ellipsis) {
      check(named <= dims, "einsum(): the number of subscripts in the equation (", named,
            ") is more than the number of dimensions (", dims, ") for operand ", k);
      ellipsis_dims = std::max(ellipsis_dims, dims - named);
      any_ellipsis = true;
    } else {
      check(named == dims, "einsum(): the number of subscripts in the equation (", named,
            ") does not match the number of dimensions (", dims, ") for operand ", k, " and no ellipsis was given");
    }
    for (const int label : labels)
      if (label != kEllipsis) ++count[static_cast<std::size_t>(label)];
  }
  // The output: as written, or the ellipsis and the subscripts seen once.
  std::vector<int> output = eq.output;
  if (eq.explicit_output) {
    std::array<bool, kEinsumLabels> seen{};
    for (const int label : output) {
      if (label == kEllipsis) continue;
      check(count[static_cast<std::size_t>(label)] > 0, "einsum(): output subscript ", einsum_char(label),
            " does not appear in the equation for any input operand");
      check(!seen[static_cast<std::size_t>(label)], "einsum(): output subscript ", einsum_char(label),
            " appears more than once in the output");
      seen[static_cast<std::size_t>(label)] = true;
    }
  } else {
    if (any_ellipsis) output.push_back(kEllipsis);
    for (int label = 0; label < kEinsumLabels; ++label)
      if (count[static_cast<std::size_t>(label)] == 1) output.push_back(label);
  }
  const bool output_ellipsis = std::find(output.begin(), output.end(), kEllipsis) != output.end();
  // The aligned order: the output's dims as written (the ellipsis as its
  // dims), then the subscripts summed over, then (when the output has none)
  // the ellipsis dims, summed too.
  std::vector<int> aligned;  // a label, or kEllipsis + i for ellipsis dim i
  for (const int label : output) {
    if (label == kEllipsis)
      for (int64_t i = 0; i < ellipsis_dims; ++i) aligned.push_back(kEllipsis + static_cast<int>(i));
    else
      aligned.push_back(label);
  }
  const std::size_t kept = aligned.size();
  for (int label = 0; label < kEinsumLabels; ++label)
    if (count[static_cast<std::size_t>(label)] > 0 && std::find(output.begin(), output.end(), label) == output.end())
      aligned.push_back(label);
  if (!output_ellipsis)
    for (int64_t i = 0; i < ellipsis_dims; ++i) aligned.push_back(kEllipsis + static_cast<int>(i));
  const int64_t rank = static_cast<int64_t>(aligned.size());
  // Each operand on the aligned order: its repeated subscripts as their
  // diagonal, its dims permuted, size 1 for what it lacks; the sizes of a
  // subscript broadcast across operands.
  Shape sizes(static_cast<std::size_t>(rank), 1);
  std::vector<Tensor<T>> aligned_operands;
  for (std::size_t k = 0; k < operands.size(); ++k) {
    Tensor<T> t = operands[k];
    // The key of each of t's dims; its ellipsis dims are the last ones of
    // the common ellipsis (they broadcast from the right).
    const int64_t unnamed = t.dim() - static_cast<int64_t>(eq.inputs[k].size()) + 1;
    std::vector<int> keys;
    for (const int label : eq.inputs[k]) {
      if (label != kEllipsis) keys.push_back(label);
      else
        for (int64_t i = 0; i < unnamed; ++i) keys.push_back(kEllipsis + static_cast<int>(ellipsis_dims - unnamed + i));
    }
    // A repeated subscript: the diagonal of its two dims, appended last.
    for (bool repeated = true; repeated;) {
      repeated = false;
      for (std::size_t i = 0; i < keys.size() && !repeated; ++i)
        for (std::size_t j = i + 1; j < keys.size() && !repeated; ++j) {
          if (keys[i] != keys[j]) continue;
          const int64_t di = static_cast<int64_t>(i), dj = static_cast<int64_t>(j);
          check(t.size(di) == t.size(dj), "einsum(): subscript ", einsum_char(keys[i]), " is repeated for operand ", k,
                " but the sizes don't match, ", t.size(dj), " != ", t.size(di));
          t = diagonal(t, 0, di, dj);
          const int key = keys[i];
          keys.erase(keys.begin() + static_cast<std::ptrdiff_t>(j));
          keys.erase(keys.begin() + static_cast<std::ptrdiff_t>(i));
          keys.push_back(key);
          repeated = true;
        }
    }
    Shape order, shape(static_cast<std::size_t>(rank), 1);
    for (int64_t d = 0; d < rank; ++d) {
      const int key = aligned[static_cast<std::size_t>(d)];
      const auto it = std::find(keys.begin(), keys.end(), key);
      if (it == keys.end()) continue;
      const int64_t dim = it - keys.begin(), n = t.size(dim);
      order.push_back(dim);
      shape[static_cast<std::size_t>(d)] = n;
      int64_t& seen = sizes[static_cast<std::size_t>(d)];
      if (n != 1 && seen != 1 && n != seen) {
        if (key >= kEllipsis)  // (PyTorch's text, without a space before "has")
          fail<Error>("einsum(): dimension ", key - kEllipsis - (ellipsis_dims - unnamed),
                      " covered by ellipsis in operand ", k, "has size ", n,
                      " which does not broadcast with previously seen ellipsis with size ", seen,
                      " for the respective dimension");
        fail<Error>("einsum(): subscript ", einsum_char(key), " has size ", n, " for operand ", k,
                    " which does not broadcast with previously seen size ", seen);
      }
      if (n != 1) seen = n;
    }
    aligned_operands.push_back(t.permute(order).reshape(shape));
  }
  // Left to right: each product sums the dims beyond the output that no
  // later operand has (with a size above 1).
  Tensor<T> result = aligned_operands[0];
  for (std::size_t k = 1; k < aligned_operands.size(); ++k) {
    std::vector<bool> sum_now(static_cast<std::size_t>(rank), false);
    for (int64_t d = static_cast<int64_t>(kept); d < rank; ++d) {
      bool later = false;
      for (std::size_t j = k + 1; j < aligned_operands.size(); ++j) later = later || aligned_operands[j].size(d) > 1;
      sum_now[static_cast<std::size_t>(d)] = !later;
    }
    result = einsum_pair(result, aligned_operands[k], sum_now);
  }
  // What is left to sum: a single operand's, or dims only it had.
  Shape rest;
  for (int64_t d = static_cast<int64_t>(kept); d < rank; ++d)
    if (result.size(d) > 1) rest.push_back(d);
  if (!rest.empty()) result = tsr::sum(result, rest, true);
  return result.reshape(Shape(result.sizes().begin(), result.sizes().begin() + static_cast<std::ptrdiff_t>(kept)));
}

// einsum over operands given one by one: einsum("ij,jk->ik", a, b).
template <Expression E0, Expression... E>
auto einsum(std::string_view equation, const E0& first, const E&... rest) {
  using T = typename E0::value_type;
  static_assert((std::is_same_v<T, typename E::value_type> && ...),
                "einsum needs operands of one dtype (PyTorch: expected scalar type Float but found Double); cast "
                "with tsr::cast<T>");
  return einsum<T>(equation, std::vector<Tensor<T>>{Tensor<T>(first), Tensor<T>(rest)...});
}

}  // namespace tsr
