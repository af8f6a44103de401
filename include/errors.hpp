// Exceptions thrown by tessera, with PyTorch's wording.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tsr {

// Every run-time misuse throws Error or one of its subclasses.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// An index or dimension outside its range (Python's IndexError).
struct IndexError : Error {
  using Error::Error;
};
// A value that is out of its domain (Python's ValueError).
struct ValueError : Error {
  using Error::Error;
};
// A device allocation that failed even after the allocator's cache was
// released (torch.cuda.OutOfMemoryError).
struct OutOfMemoryError : Error {
  using Error::Error;
};

namespace detail {

template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// Builds the message and throws: kept out of line and cold, so that the
// checks on hot paths inline to one compare and branch.
template <class E, class... Args>
[[noreturn, gnu::cold, gnu::noinline]] void fail(const Args&... args) {
  throw E(str(args...));
}

// check(cond, parts...) throws E with the parts concatenated; the message is
// only built on failure.
template <class E = Error, class... Args>
[[gnu::always_inline]] inline void check(bool cond, const Args&... args) {
  if (!cond) [[unlikely]]
    fail<E>(args...);
}

}  // namespace detail
}  // namespace tsr
