// libFuzzer harness: PyTorch checkpoints (zip, pickle, tensor geometry) on
// arbitrary bytes must load or throw tsr::Error, never crash, run anything
// or allocate what the file claims. CRC checks are skipped so that mutated
// inputs reach the pickle and tensor parsers behind them.
#include <io/pt.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const tsr::io::PickleValue v = tsr::io::detail::read_pt({data, size}, "input", /*verify_crc=*/false);
    (void)tsr::io::to_tensor_dict(v, "input");
  } catch (const tsr::Error&) {
  }
  return 0;
}
