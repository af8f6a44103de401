// libFuzzer harness: the IDX reader (MNIST's format, after zlib has
// decompressed it) on arbitrary bytes must load or throw tsr::Error, never
// crash, read out of bounds or allocate what a header claims.
#include <io/idx.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tsr::io::detail::read_idx<float>(data, size, "input");
  } catch (const tsr::Error&) {
  }
  return 0;
}
