// The reference: the same hello world with Eigen.
#include <Eigen/Dense>

#include <iostream>

int main() {
  Eigen::VectorXf a(3), b(3);
  a << 1, 2, 3;
  b << 10, 20, 30;
  const Eigen::VectorXf c = a + b;
  std::cout << c.transpose() << "\n";
}
