// Indexing, scans, sorting, convolutions and pooling on a GPU: the cases
// that test_cuda runs on the emulated device on every test run
// (device_op_cases.hpp), here in CUDA kernels against the CPU. With no GPU
// it reports that it skipped (gpu_main.hpp); nvcc takes minutes on it, so
// the test suite does not build it: docs/cuda.md gives the command.
#include "gpu_main.hpp"
#include "device_op_cases.hpp"
