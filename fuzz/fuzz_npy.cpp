// libFuzzer harness: the .npy reader on arbitrary bytes must load or throw
// tsr::Error, never crash, read out of bounds or allocate what a header claims.
#include <tessera.hpp>  // (io/npy.hpp needs the whole library to link)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tsr::io::detail::read_npy<float>({data, size}, "input");
  } catch (const tsr::Error&) {
  }
  return 0;
}
