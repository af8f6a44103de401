// Printing: every case of test/golden/print_cases.txt (str() of PyTorch 1.13
// tensors) must come out character for character.
#include <map>

#include "common.hpp"

using namespace tsr;

namespace {
std::map<std::string, std::string> load_cases() {
  std::ifstream in(std::string(TSR_GOLDEN_DIR) + "/print_cases.txt");
  REQUIRE(in.good());
  std::map<std::string, std::string> cases;
  std::string line, name, body;
  while (std::getline(in, line)) {
    if (line.rfind("=== ", 0) == 0) {
      if (!name.empty()) cases[name] = body.substr(0, body.size() - 1);
      name = line.substr(4);
      body.clear();
    } else {
      body += line + "\n";
    }
  }
  if (!name.empty()) cases[name] = body.substr(0, body.size() - 1);
  return cases;
}

template <class T>
std::string print_golden(const std::string& name) {
  return test::repr(io::load_npy<T>(test::golden_path("print_" + name)));
}
}  // namespace

TEST_CASE("printing matches PyTorch 1.13 for every golden case") {
  const auto cases = load_cases();
  REQUIRE(cases.size() >= 30);
  for (const auto& [name, want] : cases) {
    CAPTURE(name);
    std::string got;
    if (name.rfind("f32", 0) == 0) got = print_golden<float>(name);
    else if (name.rfind("f64", 0) == 0) got = print_golden<double>(name);
    else if (name.rfind("i64", 0) == 0) got = print_golden<int64_t>(name);
    else if (name.rfind("i32", 0) == 0) got = print_golden<int32_t>(name);
    else if (name.rfind("bool", 0) == 0) got = print_golden<bool>(name);
    else if (name.rfind("f16", 0) == 0) got = print_golden<half>(name);
    else if (name.rfind("bf16", 0) == 0)
      got = test::repr(io::load_npy<float>(test::golden_path("print_" + name)).to<bfloat16>());
    else FAIL("unknown dtype prefix in case ", name);
    CHECK(got == want);
  }
}

TEST_CASE("expressions print by evaluating; views print their own elements") {
  auto x = arange<float>(0.f, 6.f).reshape({2, 3});
  CHECK(test::repr(x * 2.f) == "tensor([[ 0.,  2.,  4.],\n        [ 6.,  8., 10.]])");
  CHECK(test::repr(x.t()) == "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]])");
  CHECK(test::repr(x > 2.f) == "tensor([[False, False, False],\n        [ True,  True,  True]])");
  CHECK(test::repr(Tensor<float>()) == "[ Tensor (undefined) ]");
}

TEST_CASE("autograd state is printed last, as PyTorch 1.13 prints it") {
  // Texts from torch 1.13; the node names are tessera's (docs/autograd.md).
  auto x = tensor<float>({1.f, 2.f}).requires_grad_();
  CHECK(test::repr(x) == "tensor([1., 2.], requires_grad=True)");
  CHECK(test::repr(tensor<double>({1., 2.}).requires_grad_()) ==
        "tensor([1., 2.], dtype=torch.float64, requires_grad=True)");
  CHECK(test::repr(zeros<float>({0}).requires_grad_()) == "tensor([], requires_grad=True)");
  CHECK(test::repr(Tensor<float>(x * 2.f)) == "tensor([2., 4.], grad_fn=<FusedBackward(mul)>)");
  CHECK(test::repr(sum(x * 2.f)) == "tensor(6., grad_fn=<SumBackward(mul)>)");
  CHECK(test::repr(x.detach()) == "tensor([1., 2.])");
}
