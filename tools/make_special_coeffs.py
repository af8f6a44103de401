#!/usr/bin/python3
"""Prints the series coefficients that include/detail/special_gamma.hpp embeds,
computed with mpmath at 50 digits (run with /usr/bin/python3).

- digamma's Taylor series about its positive zero x0 = 1.4616...: psi^(k)(x0) / k!
- log Gamma(1 + a)'s Taylor series about 0: (-1)^k zeta(k) / k for k >= 2
- log Gamma(2 + b)'s about 0: (-1)^k (zeta(k) - 1) / k for k >= 2
"""
import mpmath

mpmath.mp.dps = 50


def show(name, values, per_line=3):
    print(f"  constexpr double {name}[] = {{")
    for i in range(0, len(values), per_line):
        print("      " + ", ".join(repr(float(v)) for v in values[i:i + per_line]) + ",")
    print("  };")


x0 = mpmath.findroot(mpmath.digamma, 1.46)
print("// x0 =", repr(float(x0)), "+", repr(float(x0 - mpmath.mpf(float(x0)))))
show("kDigammaAtRoot", [mpmath.polygamma(k, x0) / mpmath.factorial(k) for k in range(1, 45)])
show("kLgamma1p", [(-1) ** k * mpmath.zeta(k) / k for k in range(2, 58)])
show("kLgamma2p", [(-1) ** k * (mpmath.zeta(k) - 1) / k for k in range(2, 32)])
