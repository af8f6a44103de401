// A vector that keeps up to N elements inline and spills to the heap beyond.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <vector>

namespace tsr::detail {

template <class T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable values");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() {}  // user-provided: the inline buffer stays uninitialized
  SmallVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
  explicit SmallVector(std::size_t n, T value = T{}) {
    resize(n, value);
  }
  template <class It>
  SmallVector(It first, It last) { assign(first, last); }
  SmallVector(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit on purpose
  SmallVector(const SmallVector& o) {
    if (o.size_ <= N) copy_inline(o);
    else assign(o.begin(), o.end());
  }
  SmallVector(SmallVector&& o) noexcept { steal(std::move(o)); }
  SmallVector& operator=(const SmallVector& o) {
    if (this == &o) return *this;
    if (o.size_ <= N && !heap_) copy_inline(o);
    else assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) steal(std::move(o));
    return *this;
  }

  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  void reserve(std::size_t n) {
    if (n <= capacity()) return;
    auto grown = std::make_unique<T[]>(n);
    std::copy(begin(), end(), grown.get());
    heap_ = std::move(grown);
    heap_capacity_ = n;
  }
  void resize(std::size_t n, T value = T{}) {
    reserve(n);
    for (std::size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }
  void push_back(T v) {
    if (size_ == capacity()) reserve(std::max<std::size_t>(2 * capacity(), N));
    data()[size_++] = v;
  }
  void insert(std::size_t pos, T v) {
    push_back(v);
    std::rotate(begin() + pos, end() - 1, end());
  }
  void erase(std::size_t pos) {
    std::copy(begin() + pos + 1, end(), begin() + pos);
    --size_;
  }
  void clear() { size_ = 0; }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    // A plain loop: shapes are short, and std::equal's call to memcmp costs
    // more than the comparison in tiny ops.
    if (a.size_ != b.size_) return false;
    const T* pa = a.data();
    const T* pb = b.data();
    for (std::size_t i = 0; i < a.size_; ++i)
      if (pa[i] != pb[i]) return false;
    return true;
  }

 private:
  std::size_t capacity() const { return heap_ ? heap_capacity_ : N; }
  template <class It>
  void assign(It first, It last) {
    size_ = 0;
    reserve(static_cast<std::size_t>(std::distance(first, last)));
    for (; first != last; ++first) data()[size_++] = static_cast<T>(*first);
  }
  // Copies every inline slot, used or not: a fixed-size copy compiles to a
  // few vector moves, where a loop over size_ elements becomes a call to
  // memmove, which costs more than a tiny op's shape handling. (o's buffer
  // holds at least N elements wherever it lives.)
  void copy_inline(const SmallVector& o) {
    std::memcpy(inline_, o.data(), sizeof(inline_));
    size_ = o.size_;
  }
  void steal(SmallVector&& o) {
    if (o.heap_) {
      heap_ = std::move(o.heap_);
      heap_capacity_ = o.heap_capacity_;
    } else {
      heap_.reset();
      std::memcpy(inline_, o.inline_, sizeof(inline_));
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T inline_[N];  // left uninitialized: only [0, size_) is ever read
  std::unique_ptr<T[]> heap_;
  std::size_t heap_capacity_ = 0;
  std::size_t size_ = 0;
};

}  // namespace tsr::detail
