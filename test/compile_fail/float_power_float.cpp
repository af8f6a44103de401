// expect: the base given to float_power_ has a dtype other than Double
// PyTorch: "the base given to float_power_ has dtype Float but the operation's result requires dtype Double".
#include <tessera.hpp>
int main() { auto x = tsr::ones<float>({2}); x.float_power_(2); }
