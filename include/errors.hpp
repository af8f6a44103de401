// Exceptions thrown by tessera, with PyTorch's wording.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include "detail/core_linkage.hpp"

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
// A matrix that a linear-algebra function cannot factor: singular for a
// solve or an inverse, not positive-definite for a Cholesky factorization
// (torch.linalg.LinAlgError).
struct LinAlgError : Error {
  using Error::Error;
};
// A device allocation that failed even after the allocator's cache was
// released (torch.cuda.OutOfMemoryError).
struct OutOfMemoryError : Error {
  using Error::Error;
};

namespace detail {

// Messages are built by one function, message(), from parts that each
// carry their printer: every check shares the builder, and each argument
// type adds only its printer. (Built by a fold over the arguments, each
// argument list instantiated a builder of its own, string literals of each
// length apart: 15% of the machine code of a small program.)
struct MessagePart {
  const void* value;
  void (*write)(std::ostream&, const void*);
};
template <class T>
void write_message_part(std::ostream& os, const void* value) {
  os << *static_cast<const T*>(value);
}
inline void write_c_string(std::ostream& os, const void* value) { os << static_cast<const char*>(value); }
template <class T>
[[gnu::always_inline]] inline MessagePart message_part(const T& value) {
  if constexpr (std::is_convertible_v<const T&, const char*>) return {static_cast<const char*>(value), &write_c_string};
  else return {&value, &write_message_part<T>};
}
#if TSR_CORE_DEFINITIONS
[[gnu::noinline]] TSR_CORE_INLINE std::string message(std::initializer_list<MessagePart> parts) {
  std::ostringstream os;
  for (const MessagePart& part : parts) part.write(os, part.value);
  return os.str();
}
#else
std::string message(std::initializer_list<MessagePart> parts);
#endif

// A manipulator (std::hex) as a pointer to it, anything else as itself: a
// function has no address that message_part could point to. (String
// literals need nothing: message_part takes them as C strings.)
template <class T>
[[gnu::always_inline]] inline decltype(auto) message_arg(const T& value) {
  if constexpr (std::is_function_v<T>) return static_cast<std::decay_t<T>>(value);
  else return (value);
}

template <class... Args>
std::string str(const Args&... args) {
  return message({message_part(message_arg(args))...});
}

// Builds the message and throws: kept out of line and cold, so that the
// checks on hot paths inline to one compare and branch. (One per list of
// argument types, but only a call of message(): building the parts at
// the call site, in the cold branch, cost the tiny-op path 16 instructions
// per call.)
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
