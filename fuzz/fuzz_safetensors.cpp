// libFuzzer harness: the safetensors reader on arbitrary bytes must load or
// throw tsr::Error, never crash, read out of bounds or allocate what a header claims.
#include <io/safetensors.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    std::vector<std::pair<std::string, std::string>> metadata;
    (void)tsr::io::detail::read_safetensors({data, size}, "input", &metadata);
  } catch (const tsr::Error&) {
  }
  return 0;
}
