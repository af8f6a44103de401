// expect: layer_sizes_agree<tsr::nn::sized::Linear<784, 256>, tsr::nn::sized::Linear<300, 10> >
#include <nn/nn.hpp>
// The second Linear takes 300 features, the first gives 256 (through the ReLU).
int main() { tsr::nn::Static<tsr::nn::sized::Linear<784, 256>, tsr::nn::ReLU, tsr::nn::sized::Linear<300, 10>> m; }
