#!/usr/bin/python3
"""Writes PyTorch 1.13's answers into test/golden/ (run with /usr/bin/python3).

Every expected value the tests compare against comes from here: the outputs
of torch on fixed inputs, stored as .npy (read back by tessera's own reader)
plus a text file for printing. Re-run after changing a case; commit the files.
"""
import collections
import math
import os
import sys

import mpmath
import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "golden")
os.makedirs(OUT, exist_ok=True)


def save(name, t):
    a = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    np.save(os.path.join(OUT, name + ".npy"), a)


# ----- inputs ------------------------------------------------------------------
def float_grid(dtype):
    fi = torch.finfo(dtype)
    special = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), fi.tiny, -fi.tiny, fi.tiny / 4,
               -fi.tiny / 4, fi.max, -fi.max, fi.eps, 1e-30, 1e-10, 1e-5, 1e-3, 0.1, 0.25, 0.5, 0.75, 1.0,
               1.5, 2.0, 2.5, 3.0, 3.5, -0.5, -1.0, -1.5, -2.0, -2.5, -3.5, 10.0, 20.0, 30.0, 50.0, 88.0,
               89.0, 100.0, 709.0, 710.0, 1e10, 1e20, -1e10, 0.9999, 1.0001, -0.9999, 3.14159265, -3.14159265]
    dense = torch.linspace(-12, 12, 241, dtype=torch.float64).tolist()
    g = torch.Generator().manual_seed(1234)
    logs = (torch.rand(64, generator=g, dtype=torch.float64) * 60 - 30)
    signs = torch.where(torch.rand(64, generator=g) < 0.5, -1.0, 1.0).double()
    wide = (signs * torch.pow(10.0, logs)).tolist()
    return torch.tensor(special + dense + wide, dtype=torch.float64).to(dtype)


UNARY_FLOAT = {
    "abs": torch.abs, "neg": torch.neg, "sign": torch.sign, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "square": torch.square, "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1, "log": torch.log,
    "log2": torch.log2, "log10": torch.log10, "log1p": torch.log1p, "sin": torch.sin, "cos": torch.cos,
    "tan": torch.tan, "asin": torch.asin, "acos": torch.acos, "atan": torch.atan, "sinh": torch.sinh,
    "cosh": torch.cosh, "tanh": torch.tanh, "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh,
    "sigmoid": torch.sigmoid, "relu": torch.relu, "gelu": torch.nn.functional.gelu,
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"), "silu": torch.nn.functional.silu,
    "softplus": torch.nn.functional.softplus, "erf": torch.erf, "erfc": torch.erfc, "floor": torch.floor,
    "ceil": torch.ceil, "round": torch.round, "trunc": torch.trunc, "frac": torch.frac,
    "reciprocal": torch.reciprocal, "isnan": torch.isnan, "isinf": torch.isinf, "isfinite": torch.isfinite,
    "nan_to_num": torch.nan_to_num, "pow2": lambda x: torch.pow(x, 2), "pow3": lambda x: torch.pow(x, 3),
    "pow_half": lambda x: torch.pow(x, 0.5), "pow_m1": lambda x: torch.pow(x, -1),
    "pow_1_7": lambda x: torch.pow(x, 1.7), "logical_not": torch.logical_not,
    "clamp": lambda x: torch.clamp(x, -1.5, 2.0),
    "sgn": torch.sgn, "signbit": torch.signbit, "deg2rad": torch.deg2rad, "rad2deg": torch.rad2deg,
}

BINARY_FLOAT = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "remainder": torch.remainder,
    "fmod": torch.fmod, "floor_divide": torch.floor_divide, "atan2": torch.atan2, "pow": torch.pow,
    "maximum": torch.maximum, "minimum": torch.minimum, "eq": torch.eq, "ne": torch.ne, "lt": torch.lt,
    "le": torch.le, "gt": torch.gt, "ge": torch.ge, "logical_and": torch.logical_and,
    "logical_or": torch.logical_or, "logical_xor": torch.logical_xor,
    "lerp": lambda a, b: torch.lerp(a, b, torch.full_like(a, 0.3)),
    "hypot": torch.hypot, "logaddexp": torch.logaddexp, "logaddexp2": torch.logaddexp2,
    "heaviside": torch.heaviside, "isclose": lambda a, b: torch.isclose(a, b, rtol=1e-3, atol=1e-2),
    "isclose_nan": lambda a, b: torch.isclose(a, b, equal_nan=True),
    "addcmul": lambda a, b: torch.addcmul(a, a, b, value=0.5), "addcdiv": lambda a, b: torch.addcdiv(b, a, b, value=2),
}


# Exact values (50 digits, then rounded to the dtype) for the math functions,
# so that where PyTorch is inaccurate (overflow in sinh/cosh/log1p near the
# top of the range, cancellation in gelu) the tests can tell.
mpmath.mp.dps = 50
_sqrt_half = mpmath.sqrt(mpmath.mpf(0.5))
EXACT = {
    "exp": mpmath.exp, "exp2": lambda v: mpmath.power(2, v), "expm1": mpmath.expm1, "log": mpmath.log,
    "log2": lambda v: mpmath.log(v, 2), "log10": mpmath.log10, "log1p": mpmath.log1p, "sin": mpmath.sin,
    "cos": mpmath.cos, "tan": mpmath.tan, "asin": mpmath.asin, "acos": mpmath.acos, "atan": mpmath.atan,
    "sinh": mpmath.sinh, "cosh": mpmath.cosh, "tanh": mpmath.tanh, "asinh": mpmath.asinh,
    "acosh": mpmath.acosh, "atanh": mpmath.atanh, "erf": mpmath.erf, "erfc": mpmath.erfc,
    "sigmoid": lambda v: 1 / (1 + mpmath.exp(-v)), "silu": lambda v: v / (1 + mpmath.exp(-v)),
    "gelu": lambda v: v / 2 * mpmath.erfc(-v * _sqrt_half),
    "gelu_tanh": lambda v: v / (1 + mpmath.exp(-2 * mpmath.sqrt(2 / mpmath.pi) * (v + mpmath.mpf("0.044715") * v ** 3))),
    "softplus": lambda v: v if v > 20 else mpmath.log1p(mpmath.exp(v)),
    "pow_1_7": lambda v: mpmath.power(v, mpmath.mpf(1.7)) if v >= 0 else mpmath.nan,
}


def exact(f, x):
    out = []
    for v in x.double().tolist():
        if math.isnan(v) or math.isinf(v):
            out.append(float("nan"))  # special values: PyTorch's answer is the reference
            continue
        try:
            r = f(mpmath.mpf(v))
            out.append(float(r.real) if isinstance(r, mpmath.mpc) and r.imag == 0 else
                       float("nan") if isinstance(r, mpmath.mpc) else float(r))
        except (ValueError, ZeroDivisionError, OverflowError):
            out.append(float("nan"))
    return torch.tensor(out, dtype=torch.float64).to(x.dtype)


EXACT_BINARY = {
    "fmod": lambda a, b: mpmath.mpf(math.fmod(float(a), float(b))),
    "remainder": lambda a, b: mpmath.mpf(float(a) % float(b)),
    "floor_divide": lambda a, b: mpmath.mpf(float(a) // float(b)),
    "pow": lambda a, b: mpmath.power(a, b) if a >= 0 or b == int(b) else mpmath.nan,
    "atan2": mpmath.atan2,
    "hypot": lambda a, b: mpmath.sqrt(a * a + b * b),
    "logaddexp": lambda a, b: mpmath.log(mpmath.exp(a) + mpmath.exp(b)),
    "logaddexp2": lambda a, b: mpmath.log(mpmath.power(2, a) + mpmath.power(2, b), 2),
}


def exact2(f, a, b):
    out = []
    for u, v in zip(a.double().flatten().tolist(), b.double().flatten().tolist()):
        if not (math.isfinite(u) and math.isfinite(v)):
            out.append(float("nan"))
            continue
        try:
            r = f(mpmath.mpf(u), mpmath.mpf(v))
            out.append(float(r))
        except (ValueError, ZeroDivisionError, OverflowError, TypeError):
            out.append(float("nan"))
    return torch.tensor(out, dtype=torch.float64).reshape(a.shape).to(a.dtype)


def elementwise():
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        x = float_grid(dtype)
        save(f"unary_in_{tag}", x)
        for name, f in UNARY_FLOAT.items():
            save(f"unary_{name}_{tag}", f(x))
            if name in EXACT:
                save(f"exact_{name}_{tag}", exact(EXACT[name], x))
        # Binary ops on a grid of pairs: a row-vector against a column-vector.
        b_vals = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.0, -7.0, 1e-3, 1e10, float("inf"),
                               float("-inf"), float("nan"), 2.0, -3.0], dtype=dtype)
        a_vals = float_grid(dtype)[::3]
        A = a_vals[:, None].expand(-1, b_vals.numel()).contiguous()
        B = b_vals[None, :].expand(a_vals.numel(), -1).contiguous()
        save(f"binary_a_{tag}", A)
        save(f"binary_b_{tag}", B)
        for name, f in BINARY_FLOAT.items():
            save(f"binary_{name}_{tag}", f(A, B))
            if name in EXACT_BINARY:
                save(f"exact_binary_{name}_{tag}", exact2(EXACT_BINARY[name], A, B))

    # Integer ops (no zero divisors: PyTorch raises there).
    a = torch.arange(-20, 21, dtype=torch.int64)
    A = a[:, None].expand(-1, 8).contiguous()
    B = torch.tensor([1, -1, 2, -2, 3, -3, 7, -7], dtype=torch.int64)[None, :].expand(a.numel(), -1).contiguous()
    for dtype, tag in [(torch.int32, "i32"), (torch.int64, "i64")]:
        Ai, Bi = A.to(dtype), B.to(dtype)
        save(f"int_a_{tag}", Ai)
        save(f"int_b_{tag}", Bi)
        for name, f in {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
                        "remainder": torch.remainder, "fmod": torch.fmod, "floor_divide": torch.floor_divide,
                        "maximum": torch.maximum, "minimum": torch.minimum, "bitwise_and": torch.bitwise_and,
                        "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
                        "pow": lambda x, y: torch.pow(x, y.abs() % 5), "lt": torch.lt, "eq": torch.eq}.items():
            save(f"int_{name}_{tag}", f(Ai, Bi))
        for name, f in {"abs": torch.abs, "neg": torch.neg, "sign": torch.sign, "square": torch.square,
                        "sin": torch.sin, "sqrt": torch.sqrt, "exp": torch.exp, "bitwise_not": torch.bitwise_not,
                        "sigmoid": torch.sigmoid, "relu": torch.relu, "div_scalar": lambda x: x / 4,
                        "mul_float_scalar": lambda x: x * 2.5, "add_int_scalar": lambda x: x + 3,
                        "pow_scalar": lambda x: torch.pow(x, 2), "remainder_scalar": lambda x: x % 3}.items():
            save(f"int_unary_{name}_{tag}", f(Ai))

    # 16-bit floats: conversion of every float32 grid value, bit patterns.
    x = float_grid(torch.float32)
    save("f16_from_f32", x.to(torch.float16).view(torch.int16).to(torch.int32))
    save("bf16_from_f32", x.to(torch.bfloat16).view(torch.int16).to(torch.int32))
    # Round-to-nearest-even ties and all binary16 values back to float.
    all16 = torch.arange(0, 65536, dtype=torch.int32).to(torch.int16)
    save("f16_all_to_f32", all16.view(torch.float16).float())
    save("bf16_all_to_f32", all16.view(torch.bfloat16).float())
    h = torch.tensor([0.1, 0.2, 1.5, -3.25, 1000.0], dtype=torch.float16)
    save("f16_arith_add", (h + h[[1, 2, 3, 4, 0]]).view(torch.int16).to(torch.int32))
    save("f16_arith_mul", (h * h[[1, 2, 3, 4, 0]]).view(torch.int16).to(torch.int32))


def bounds():
    """Ops with bounds or limits (clamp, lerp, fmax/fmin, hardtanh, threshold) with NaN,
    infinite and signed-zero values in every operand position."""
    vals = [-1.0, 0.5, 2.0, -0.0, 0.0, float("inf"), float("-inf"), float("nan")]
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        v = torch.tensor(vals, dtype=dtype)
        x, lo, hi = v.view(-1, 1, 1), v.view(1, -1, 1), v.view(1, 1, -1)
        save(f"bounds_in_{tag}", v)
        save(f"bounds_clamp_tensor_{tag}", torch.clamp(x, lo, hi))
        # Scalar bounds: one clamp per (lo, hi) pair, laid out [x, lo, hi] as above.
        save(f"bounds_clamp_scalar_{tag}",
             torch.stack([torch.clamp(v, a, b) for a in vals for b in vals], dim=1).view(len(vals), len(vals), -1))
        save(f"bounds_clamp_min_{tag}", torch.stack([torch.clamp_min(v, a) for a in vals], dim=1))
        save(f"bounds_clamp_max_{tag}", torch.stack([torch.clamp_max(v, b) for b in vals], dim=1))
        # lerp over every (a, b, w) triple of these values (its branch on w
        # decides infinities: lerp(a, -inf, -inf) is +inf), laid out [a, b, w].
        save(f"bounds_lerp_{tag}", torch.lerp(x, lo, hi))
        # fmax/fmin (NaN loses), hardtanh and threshold, laid out [x, y] / [x].
        save(f"bounds_fmax_{tag}", torch.fmax(v.view(-1, 1), v.view(1, -1)))
        save(f"bounds_fmin_{tag}", torch.fmin(v.view(-1, 1), v.view(1, -1)))
        save(f"bounds_hardtanh_{tag}", torch.nn.functional.hardtanh(v))
        save(f"bounds_hardtanh_wide_{tag}", torch.nn.functional.hardtanh(v, -0.5, 1.5))
        save(f"bounds_threshold_{tag}", torch.nn.functional.threshold(v, 0.5, -7.0))
        # Their gradients (of the sum), where ties and bounds decide: each at
        # every element of v (and every pair for fmax/fmin).
        # (hardtanh's over v repeated 8 times: PyTorch's gradient at NaN is 0 in
        # its vectorized loop, which runs on all 64, but 1 in its scalar tail.)
        for name, fn in [("hardtanh", torch.nn.functional.hardtanh),
                         ("threshold", lambda t: torch.nn.functional.threshold(t, 0.5, -7.0))]:
            t = v.repeat(8).requires_grad_()
            fn(t).sum().backward()
            save(f"bounds_{name}_grad_{tag}", t.grad)
        for name, fn in [("fmax", torch.fmax), ("fmin", torch.fmin)]:
            a_, b_ = v.view(-1, 1).clone().requires_grad_(), v.view(1, -1).clone().requires_grad_()
            fn(a_, b_).sum().backward()
            save(f"bounds_{name}_grad_a_{tag}", a_.grad)
            save(f"bounds_{name}_grad_b_{tag}", b_.grad)
        # lerp over random weights in [-2, 2], where the branch decides the last bit.
        g = torch.Generator().manual_seed(11)
        abw = (torch.rand(3, 4096, generator=g, dtype=torch.float64) * 4 - 2).to(dtype)
        save(f"bounds_lerp_abw_{tag}", abw)
        save(f"bounds_lerp_rand_{tag}", torch.lerp(abw[0], abw[1], abw[2]))


DTYPES = [torch.bool, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64]


def promotion():
    code = {d: i for i, d in enumerate(DTYPES)}
    tt = np.zeros((len(DTYPES), len(DTYPES)), dtype=np.int64)
    for i, a in enumerate(DTYPES):
        for j, b in enumerate(DTYPES):
            tt[i, j] = code[torch.promote_types(a, b)]
    save("promote_tensor_tensor", tt)
    ts = np.zeros((len(DTYPES), 3), dtype=np.int64)
    for i, a in enumerate(DTYPES):
        for j, s in enumerate([True, 2, 2.5]):
            ts[i, j] = code[torch.result_type(torch.ones(2, dtype=a), s)]
    save("promote_tensor_scalar", ts)
    # Ops that change the category: true division and unary float functions.
    div = np.zeros((len(DTYPES), len(DTYPES)), dtype=np.int64)
    for i, a in enumerate(DTYPES):
        for j, b in enumerate(DTYPES):
            div[i, j] = code[(torch.ones(2, dtype=a) / torch.ones(2, dtype=b)).dtype]
    save("promote_div", div)


def printing():
    cases = {}
    g = torch.Generator().manual_seed(0)
    cases["f32_simple"] = torch.tensor([[1.0, 2.5], [3.0, 4.0]])
    cases["f32_int_valued"] = torch.tensor([1.0, 2.0, -3.0])
    cases["f32_zeros"] = torch.zeros(3)
    cases["f32_sci_small"] = torch.tensor([1e-5, 1.0, 2.0])
    cases["f32_sci_large"] = torch.tensor([1e9, 1.0])
    cases["f32_int_sci"] = torch.tensor([1.0, 1e5])
    cases["f32_nan_inf"] = torch.tensor([float("nan"), 1.0, float("inf"), -float("inf")])
    cases["f32_nan_frac"] = torch.tensor([float("nan"), 1.5, -float("inf")])
    cases["f32_all_nan"] = torch.tensor([float("nan"), float("nan")])
    cases["f32_neg"] = torch.tensor([-1.25, 0.5, 100.125])
    cases["f32_scalar"] = torch.tensor(3.0)
    cases["f32_scalar_frac"] = torch.tensor(-2.71828)
    cases["f32_randn_3d"] = torch.randn(2, 3, 4, generator=g)
    cases["f32_randn_4d"] = torch.randn(2, 2, 2, 3, generator=g)
    cases["f32_wrap"] = torch.randn(30, generator=g)
    cases["f32_wrap_2d"] = torch.randn(3, 20, generator=g)
    cases["f32_summarize_1d"] = torch.arange(2000, dtype=torch.float32) / 7
    cases["f32_summarize_2d"] = torch.randn(40, 50, generator=g)
    cases["f32_summarize_3d"] = torch.arange(8 * 9 * 20, dtype=torch.float32).reshape(8, 9, 20)
    cases["f32_empty"] = torch.zeros(0)
    cases["f32_empty_2d"] = torch.zeros(0, 3)
    cases["f32_tiny"] = torch.tensor([1e-30, 2e-30])
    cases["f64_simple"] = torch.tensor([1.0, 2.25], dtype=torch.float64)
    cases["f64_scalar"] = torch.tensor(2.5, dtype=torch.float64)
    cases["f64_precise"] = torch.tensor([1 / 3, 2 / 3, 1e-3], dtype=torch.float64)
    cases["i64_simple"] = torch.tensor([[1, -2, 3], [40, 5, -600]])
    cases["i64_empty"] = torch.zeros(0, dtype=torch.int64)
    cases["i64_summarize"] = torch.arange(1500).reshape(30, 50)
    cases["i32_simple"] = torch.tensor([7, -8, 9], dtype=torch.int32)
    cases["i32_long_line"] = torch.arange(-100000, 100000, 4000, dtype=torch.int32)
    cases["bool_simple"] = torch.tensor([[True, False], [False, True]])
    cases["bool_scalar"] = torch.tensor(True)
    cases["f32_row_matrix"] = torch.randn(1, 12, generator=g)
    cases["f32_large_mix"] = torch.tensor([123456.0, 0.001, 5.5])
    cases["f16_simple"] = torch.tensor([[1.5, 2.0, 0.1], [-3.25, 1000.0, 0.0]], dtype=torch.float16)
    cases["bf16_simple"] = torch.tensor([1.5, 2.0, 0.1, -300.0], dtype=torch.bfloat16)
    with open(os.path.join(OUT, "print_cases.txt"), "w") as f:
        for name, t in cases.items():
            # NumPy has no bfloat16: those values are stored as float32 (exact).
            save("print_" + name, t.float() if t.dtype == torch.bfloat16 else t)
            f.write(f"=== {name}\n{str(t)}\n")


def random_and_ranges():
    torch.manual_seed(0)
    save("rand_seed0_f32", torch.rand(1000))
    torch.manual_seed(42)
    save("rand_seed42_f64", torch.rand(100, dtype=torch.float64))
    save("arange_f32", torch.arange(-1.5, 2.7, 0.25))
    save("arange_f64_fine", torch.arange(-1.5, 2.7, 0.3, dtype=torch.float64))
    save("arange_f64", torch.arange(0, 1, 0.1, dtype=torch.float64))
    save("arange_i64", torch.arange(-5, 17, 3))
    save("linspace_f32", torch.linspace(-1, 1, 9))
    save("linspace_f32_b", torch.linspace(0, 10, 7))
    save("linspace_f64", torch.linspace(-3, 7, 13, dtype=torch.float64))


def reductions():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(3, 1000, generator=g)
    save("reduce_in", x)
    save("reduce_sum", x.sum())
    save("reduce_mean", x.mean())
    save("reduce_prod", (x[:, :50] * 0.5 + 1).prod())
    save("reduce_amax", x.amax())
    save("reduce_amin", x.amin())
    save("reduce_sum_tiny_pairs", torch.full((1 << 24,), 0.1).sum())


# Reductions over dims (issue 3): one input, four layouts, every dims list.
RD_DIMS = {"0": [0], "1": [1], "2": [2], "02": [0, 2], "12": [1, 2], "m1": [-1], "all": []}
RD_OPS = {
    "sum": lambda x, d: x.sum(d),
    "mean": lambda x, d: x.mean(d),
    "prod": lambda x, d: (1 + 0.1 * x).prod(d[0]) if len(d) == 1 else (1 + 0.1 * x).prod(),
    "amax": lambda x, d: x.amax(d),
    "amin": lambda x, d: x.amin(d),
    "var": lambda x, d: x.var(d),
    "std0": lambda x, d: x.std(d, correction=0),
    "norm2": lambda x, d: torch.linalg.vector_norm(x, 2, d),
    "norm1": lambda x, d: torch.linalg.vector_norm(x, 1, d),
    "norminf": lambda x, d: torch.linalg.vector_norm(x, float("inf"), d),
    "norm3_5": lambda x, d: torch.linalg.vector_norm(x, 3.5, d),
    "norm0": lambda x, d: torch.linalg.vector_norm((x > 0.5) * x, 0, d),
    "logsumexp": lambda x, d: torch.logsumexp(x, d if d else [0, 1, 2]),
    "count_nonzero": lambda x, d: torch.count_nonzero((x > 0.5) * x, d if d else None),
}
RD_DIM_OPS = {
    "softmax": lambda x, d: torch.softmax(x, d), "log_softmax": lambda x, d: torch.log_softmax(x, d),
    "maxv": lambda x, d: x.max(d).values, "maxi": lambda x, d: x.max(d).indices,
    "minv": lambda x, d: x.min(d).values, "mini": lambda x, d: x.min(d).indices,
    "argmax": lambda x, d: x.argmax(d), "cumsum": lambda x, d: x.cumsum(d),
    "cumprod": lambda x, d: (1 + 0.1 * x).cumprod(d),
}


def reduction_layouts():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(5, 6, 7, generator=g)
    b = torch.randn(1, 6, 1, generator=g)
    save("rd_x", x)
    save("rd_b", b)
    return {"c": x, "t": x.transpose(0, 2), "s": x[:, ::2, 1:], "e": b.expand(5, 6, 7)}


def reductions_dims():
    layouts = reduction_layouts()
    for lname, x in layouts.items():
        for op, f in RD_OPS.items():
            for dname, d in RD_DIMS.items():
                if op == "prod" and len(d) > 1:
                    continue
                save(f"rd_{op}_{lname}_{dname}", f(x, d))
        for op, f in RD_DIM_OPS.items():
            for d in (0, 1, 2):
                save(f"rd_{op}_{lname}_{d}", f(x, d))
    x = layouts["c"]
    save("rd_sum_keepdim", x.sum([0, 2], keepdim=True))
    save("rd_int_sum", torch.arange(24, dtype=torch.int32).reshape(2, 3, 4).sum(1))
    special = torch.tensor([[1.0, float("nan"), 3.0, float("nan")], [2.0, 3.0, 3.0, -1.0],
                            [float("inf"), 1.0, float("-inf"), 0.0]])
    save("rd_special", special)
    save("rd_special_maxv", special.max(1).values)
    save("rd_special_maxi", special.max(1).indices)
    save("rd_special_mini", special.min(1).indices)
    save("rd_special_amax0", special.amax(0))
    save("rd_special_sum1", special.sum(1))
    save("rd_special_lse1", torch.logsumexp(special, 1))
    big = torch.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]])
    save("rd_big", big)
    save("rd_big_softmax", torch.softmax(big, 1))
    save("rd_big_log_softmax", torch.log_softmax(big, 1))
    save("rd_big_lse", torch.logsumexp(big, 1))


def linalg():
    g = torch.Generator().manual_seed(7)

    def r(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g, dtype=dtype)

    # matmul on every rank combination, with edge tiles and K above one block.
    cases = {
        "mm": (r(37, 53), r(53, 29)),
        "mm_deep": (r(70, 300), r(300, 45)),
        "vv": (r(17), r(17)),
        "mv": (r(23, 19), r(19)),
        "vm": (r(19), r(19, 23)),
        "bmm": (r(3, 7, 5), r(3, 5, 9)),
        "bcast": (r(2, 1, 4, 6), r(3, 6, 5)),
        "b3_2": (r(2, 4, 6), r(6, 5)),
        "b3_1": (r(2, 4, 6), r(6)),
        "b1_3": (r(4), r(2, 4, 6)),
        "b2_3": (r(4, 6), r(2, 6, 3)),
        "empty_k": (r(3, 0), r(0, 4)),
        "empty_m": (r(0, 3), r(3, 4)),
        "empty_batch": (r(0, 2, 3), r(3, 4)),
        "f64": (r(33, 41, dtype=torch.float64), r(41, 18, dtype=torch.float64)),
    }
    special = r(6, 5)
    special[0, 1], special[2, 3], special[4, 0] = float("nan"), float("inf"), float("-inf")
    cases["special"] = (special, r(5, 7))
    for name, (a, b) in cases.items():
        save(f"la_{name}_a", a)
        save(f"la_{name}_b", b)
        save(f"la_{name}_out", torch.matmul(a, b))
    ints = torch.randint(-9, 10, (5, 6), generator=g), torch.randint(-9, 10, (6, 4), generator=g)
    save("la_int_a", ints[0])
    save("la_int_b", ints[1])
    save("la_int_out", torch.mm(*ints))
    # Non-contiguous operands: transposed, sliced with a step, expanded.
    a, b, c = r(40, 30), r(50, 40), r(30, 60)
    save("la_nc_a", a)
    save("la_nc_b", b)
    save("la_nc_c", c)
    save("la_nc_tt", a.t() @ b.t())
    save("la_nc_step", a[::2, :] @ c[:, ::3])
    save("la_nc_expand", a[:1].expand(20, 30) @ c)
    save("la_nc_mv_expand", a @ c[0, :1].expand(30))
    save("la_nc_bmm_t", torch.bmm(c.reshape(3, 20, 30).transpose(1, 2), a.reshape(3, 20, 20)[:, :, ::2]))
    # addmm with broadcast c, beta/alpha, and beta = 0 ignoring NaN in c.
    m1, m2, bias = r(8, 11), r(11, 6), r(6)
    save("la_addmm_m1", m1)
    save("la_addmm_m2", m2)
    save("la_addmm_bias", bias)
    save("la_addmm", torch.addmm(bias, m1, m2, beta=0.5, alpha=2.0))
    save("la_addmm_beta0", torch.addmm(torch.full((8, 6), float("nan")), m1, m2, beta=0.0, alpha=1.5))
    x, w, bb = r(2, 5, 3), r(4, 3), r(4)
    save("la_lin_x", x)
    save("la_lin_w", w)
    save("la_lin_b", bb)
    save("la_lin", torch.nn.functional.linear(x, w, bb))
    save("la_lin_nobias", torch.nn.functional.linear(x, w))
    u, v = r(7), r(5, dtype=torch.float64)
    save("la_outer_u", u)
    save("la_outer_v", v)
    save("la_outer", torch.outer(u, v))
    save("la_dot_int", torch.dot(ints[0][0], ints[0][1]))


def shape_ops():
    g = torch.Generator().manual_seed(11)

    def r(*shape):
        return torch.randn(*shape, generator=g)

    x = r(3, 4, 5)
    save("so_x", x)
    xt = x.transpose(0, 2)  # (5, 4, 3), non-contiguous
    xe = x[:, :1, :].expand(3, 4, 5)  # broadcast strides
    a, b = r(2, 3), r(4, 3)
    save("so_a", a)
    save("so_b", b)
    save("so_cat0", torch.cat([a, b, torch.ones(0)], 0))
    save("so_cat1_t", torch.cat([a.t(), b.t()], 1))
    save("so_cat_neg", torch.cat([x, xe, xt.transpose(0, 2)], -1))
    for d in (0, 1, 2, -1):
        save(f"so_stack{d}", torch.stack([a, a * 2, b[:2]], d))
    save("so_flip02", torch.flip(x, [0, 2]))
    save("so_flip_t1", torch.flip(xt, [1]))
    save("so_flip_e", torch.flip(xe, [-1, 1]))
    save("so_roll", torch.roll(x, (1, -2), (0, 2)))
    save("so_roll_flat", torch.roll(xt, 7))
    save("so_roll_big", torch.roll(x, -13, 1))
    save("so_repeat", a.repeat(2, 1, 3))
    save("so_repeat_t", a.t().repeat(2, 2))
    save("so_tile1", torch.tile(a, (2,)))
    save("so_tile3", torch.tile(xt, (2, 1, 1, 2)))
    idx = torch.tensor([3, 0, 0, 2])
    save("so_index_select1", torch.index_select(x, 1, idx))
    save("so_index_select_t", torch.index_select(xt, 0, idx))
    idx2 = torch.tensor([[0, -1], [2, -4]])
    save("so_index_2d", x[:, idx2])
    save("so_index_last", xt[..., torch.tensor([2, -3])])
    gi1 = torch.randint(0, 4, (3, 2, 5), generator=g)
    gi2 = torch.randint(0, 5, (2, 3, 4), generator=g)
    save("so_gather_i1", gi1)
    save("so_gather_i2", gi2)
    save("so_gather1", torch.gather(x, 1, gi1))
    save("so_gather2", torch.gather(x, 2, gi2))
    save("so_gather_t", torch.gather(xt, 0, gi1.transpose(0, 2)[:3]))
    si = torch.tensor([[4, 0], [1, 3], [2, 2]])
    src = r(3, 2)
    save("so_scatter_src", src)
    save("so_scatter", torch.zeros(3, 5).scatter(1, si[:, :1].expand(3, 1).contiguous(), src[:, :1]))
    save("so_scatter_val", torch.zeros(3, 5).scatter(1, torch.tensor([[4, 0], [1, 3], [2, 1]]), 2.5))
    save("so_scatter_add", torch.ones(3, 5).scatter_add(1, si, src))
    save("so_scatter_add0", torch.zeros(4, 2).scatter_add(0, torch.tensor([[3, 0], [3, 3], [0, 1]]), src))
    mask = r(4, 5) > 0
    save("so_mask", mask)
    save("so_masked_fill", x.masked_fill(mask, -7.0))
    sel_mask = r(3, 4, 5) > 0.3
    save("so_msel_mask", sel_mask)
    save("so_masked_select", torch.masked_select(x[0], sel_mask))
    save("so_masked_select_mask", torch.masked_select(torch.ones(3, 4, 5), torch.zeros(3, 4, 5).bool()))
    ints = torch.randint(-1, 2, (3, 4), generator=g)
    save("so_ints", ints)
    save("so_nonzero", torch.nonzero(ints))
    special = torch.tensor([[0.0, float("nan"), -0.0], [float("inf"), 0.0, 1e-30]])
    save("so_nonzero_special", torch.nonzero(special))
    save("so_topk_l", torch.topk(x, 2, 1).values)
    save("so_topk_li", torch.topk(x, 2, 1).indices)
    save("so_topk_s", torch.topk(xt, 3, -1, largest=False).values)
    save("so_topk_si", torch.topk(xt, 3, -1, largest=False).indices)
    ties = torch.randint(0, 3, (4, 7), generator=g)
    save("so_ties", ties)
    for desc in (False, True):
        sfx = "d" if desc else "a"
        sv, si_ = torch.sort(ties, dim=1, descending=desc, stable=True)
        save(f"so_sort_ties_{sfx}", sv)
        save(f"so_sort_ties_{sfx}i", si_)
        sv, si_ = torch.sort(ties.t(), dim=0, descending=desc, stable=True)
        save(f"so_sort_ties_t{sfx}", sv)
        save(f"so_sort_ties_t{sfx}i", si_)
        sp = torch.tensor([1.0, float("nan"), 3.0, float("-inf"), 3.0, float("inf"), -0.0, float("nan")])
        sv, si_ = torch.sort(sp, descending=desc, stable=True)
        save(f"so_sort_special_{sfx}", sv)
        save(f"so_sort_special_{sfx}i", si_)
    for k in (0, 1, -2):
        save(f"so_tril{k}", torch.tril(x, k))
        save(f"so_triu{k}", torch.triu(xt, k))
    for off, d1, d2 in ((0, 0, 2), (1, 1, 2), (-1, 2, 0), (7, 0, 1)):
        save(f"so_diag_{off}_{d1}_{d2}", torch.diagonal(x, off, d1, d2))
    # Sliced with a step (non-unit inner stride).
    xs = x[:, ::2, 1::2]  # (3, 2, 2)
    save("so_step_cat", torch.cat([xs, x[:, 1::2, ::2]], 2))
    save("so_step_sort", torch.sort(x[:, :, ::2], 2, descending=True).values)
    save("so_step_flip", torch.flip(xs, [1]))
    save("so_step_gather", torch.gather(xs, 2, torch.tensor([[[1, 0], [1, 1]]] * 3)))
    save("so_step_repeat", xs.repeat(1, 2, 1))
    # Empty tensors and size-1 dims.
    e03, e30 = torch.zeros(0, 3), torch.zeros(3, 0)
    one = torch.tensor([[float("nan")], [float("inf")], [-1.0]])  # (3, 1) with NaN and inf
    save("so_one", one)
    save("so_e_cat", torch.cat([e03, a], 0))
    save("so_e_stack", torch.stack([torch.zeros(0), torch.zeros(0)], 1))
    save("so_e_repeat", e03.repeat(2, 2))
    save("so_e_index_select", torch.index_select(e30, 0, torch.tensor([2, 0])))
    save("so_e_gather", torch.gather(x[0], 1, torch.zeros(4, 0, dtype=torch.long)))
    save("so_e_sort", torch.sort(e30, 1).values)
    save("so_e_nonzero", torch.nonzero(torch.zeros(0)))
    save("so_e_diag", torch.diagonal(e03))
    save("so_e_tril", torch.tril(e30))
    save("so_1_topk", torch.topk(one, 1, 1).values)
    save("so_1_sort", torch.sort(one, 0).values)
    save("so_1_sorti", torch.sort(one, 0).indices)
    save("so_1_flip", torch.flip(one, [0, 1]))
    save("so_1_roll", torch.roll(one, 1, 0))
    save("so_1_tile", torch.tile(one, (1, 3)))
    save("so_1_cat", torch.cat([one, one.t().t()], 1))
    save("so_1_mm", torch.mm(one[2:], torch.ones(1, 4)))
    save("so_1_masked_fill", one.masked_fill(torch.tensor([True]), 0.5))
    oh = torch.tensor([[0, 2], [1, 3]])
    save("so_one_hot", torch.nn.functional.one_hot(oh))
    save("so_one_hot5", torch.nn.functional.one_hot(oh, 5))



def shape_more():
    """movedim, unbind, trace, diag, diff, and the order statistics (kthvalue,
    median, nanmedian), aminmax, var_mean, std_mean, cummax and cummin (sm_*)."""
    g = torch.Generator().manual_seed(19)
    nan, inf = float("nan"), float("inf")
    x = torch.randn(3, 4, 5, generator=g)
    xt = x.transpose(0, 2)  # (5, 4, 3), non-contiguous
    save("sm_x", x)
    save("sm_movedim", torch.movedim(x, 0, -1))
    save("sm_movedim_t", torch.movedim(xt, (0, 1), (2, 0)))
    save("sm_moveaxis", torch.moveaxis(x, -1, 0))
    save("sm_unbind", torch.unbind(xt, 1)[2])
    m = torch.randn(4, 5, generator=g)
    save("sm_m", m)
    save("sm_trace", torch.trace(m))
    save("sm_trace_t", torch.trace(xt[1]))
    mi = torch.randint(-5, 6, (3, 3), generator=g)
    save("sm_mi", mi)
    save("sm_trace_int", torch.trace(mi))
    v = torch.randn(4, generator=g)
    save("sm_v", v)
    for k in (0, 2, -1):
        save(f"sm_diag_v{k}", torch.diag(v, k))
    for k in (0, 1, -2, 5):  # (PyTorch 1.13 fails past the edge, k > 5: "numel: integer multiplication overflow")
        save(f"sm_diag_m{k}", torch.diag(m, k))
    save("sm_diag_t", torch.diag(xt[:, 1, 0], -1))
    save("sm_diag_mt", torch.diag(xt[:, 1], 1))
    save("sm_diff", torch.diff(x))
    save("sm_diff_t2", torch.diff(xt, 2, 0))
    save("sm_diff_pa", torch.diff(m, 1, 0, prepend=m[:2], append=torch.ones(1, 5)))
    save("sm_diff_int", torch.diff(mi, 1, 1))
    bools = torch.tensor([[True, False, False, True], [False, False, True, True]])
    save("sm_bools", bools)
    save("sm_diff_bool", torch.diff(bools))
    save("sm_diff_long", torch.diff(v, 5))
    # Order statistics: values without ties (the positions of equal values
    # depend on PyTorch's selection algorithm), then ties and NaN.
    r = torch.randn(4, 6, 5, generator=g)
    save("sm_r", r)
    for name, (vals, idx) in {
        "kth3_1": torch.kthvalue(r, 3, 1), "kth1_last_keep": torch.kthvalue(r, 1, -1, keepdim=True),
        "kth5_t": torch.kthvalue(r.transpose(0, 2), 5, 0), "median0": torch.median(r, 0),
        "median_t_keep": torch.median(r.transpose(1, 2), 2, keepdim=True), "nanmedian1": torch.nanmedian(r, 1),
    }.items():
        save(f"sm_{name}", vals)
        save(f"sm_{name}i", idx)
    save("sm_median_all", torch.median(r))
    save("sm_median_even", torch.median(r[:, :, :4]))
    special = torch.tensor([[3.0, 1.0, 2.0, 2.0], [nan, 1.0, 5.0, nan], [4.0, -inf, 4.0, 0.0], [nan, nan, nan, nan],
                            [inf, 0.5, nan, -1.0]])
    save("sm_special", special)
    for name, (vals, idx) in {"median_sp": torch.median(special, 1), "nanmedian_sp": torch.nanmedian(special, 1),
                              "kth4_sp": torch.kthvalue(special, 4, 1)}.items():
        save(f"sm_{name}", vals)
        save(f"sm_{name}i", idx)
    save("sm_median_sp_all", torch.median(special))
    save("sm_nanmedian_sp_all", torch.nanmedian(special))
    save("sm_nanmedian_sp_first", torch.nanmedian(special[:3]))
    ints = torch.randint(-20, 20, (3, 7), generator=g)
    save("sm_ints", ints)
    save("sm_median_int", torch.median(ints, 1).values)
    save("sm_median_int_all", torch.median(ints))
    save("sm_kth_int", torch.kthvalue(ints, 2, 0).values)
    # aminmax, var_mean, std_mean.
    for name, (lo, hi) in {"aminmax_all": torch.aminmax(special[:3]), "aminmax_d1": torch.aminmax(special, dim=1),
                           "aminmax_t_keep": torch.aminmax(r.transpose(0, 1), dim=0, keepdim=True),
                           "aminmax_int": torch.aminmax(ints, dim=0)}.items():
        save(f"sm_{name}_min", lo)
        save(f"sm_{name}_max", hi)
    for name, (a, b) in {"var_mean": torch.var_mean(r, (0, 2)), "var_mean_all": torch.var_mean(r),
                         "std_mean_keep": torch.std_mean(r, 1, unbiased=False, keepdim=True),
                         "std_mean_all": torch.std_mean(r)}.items():
        save(f"sm_{name}_0", a)
        save(f"sm_{name}_1", b)
    # cummax and cummin: ties take the later position, NaN propagates.
    seq = torch.tensor([[1.0, 3.0, 3.0, 2.0, nan, 5.0, nan], [2.0, 2.0, -1.0, -1.0, 0.0, -inf, -inf],
                        [nan, 3.0, nan, 5.0, 1.0, 1.0, 0.0]])
    save("sm_seq", seq)
    for fn in ("cummax", "cummin"):
        f = getattr(torch, fn)
        for name, (vals, idx) in {"seq": f(seq, 1), "seq0": f(seq, 0), "r_t": f(r.transpose(0, 2), 1),
                                  "ints": f(ints, 1)}.items():
            save(f"sm_{fn}_{name}", vals)
            save(f"sm_{fn}_{name}i", idx)

def binning():
    """searchsorted, bucketize, bincount, histc, unique, unique_consecutive,
    meshgrid and cartesian_prod (bn_*)."""
    g = torch.Generator().manual_seed(23)
    nan, inf = float("nan"), float("inf")
    # A sorted sequence with repeats and infinities; values that hit its
    # elements exactly, fall between and beyond them, and NaN. (Not NaN in
    # the sequence: PyTorch's binary search treats it as smaller than every
    # value, so where it lands depends on the search's path.)
    seq = torch.tensor([-inf, -2.0, -0.5, -0.5, 0.0, 1.0, 1.0, 1.0, 3.5, inf])
    vals = torch.tensor([[-inf, -3.0, -2.0, -0.5, 0.25], [1.0, 2.0, 3.5, 10.0, inf], [nan, -0.5, 0.0, 1.0, -2.5]])
    save("bn_seq", seq)
    save("bn_vals", vals)
    save("bn_ss_left", torch.searchsorted(seq, vals))
    save("bn_ss_right", torch.searchsorted(seq, vals, right=True))
    save("bn_ss_t", torch.searchsorted(seq, vals.t(), side="right"))
    rows = torch.sort(torch.randint(-4, 5, (3, 6), generator=g).double(), dim=1).values
    qs = torch.randint(-5, 6, (3, 4), generator=g).double()
    save("bn_rows", rows)
    save("bn_qs", qs)
    save("bn_ss_rows", torch.searchsorted(rows, qs))
    save("bn_ss_rows_right", torch.searchsorted(rows, qs, right=True))
    shuffled = torch.randn(7, generator=g)
    order = torch.argsort(shuffled)
    q = torch.randn(2, 3, generator=g)
    save("bn_shuffled", shuffled)
    save("bn_order", order)
    save("bn_q", q)
    save("bn_ss_sorter", torch.searchsorted(shuffled, q, sorter=order))
    save("bn_ss_sorter_right", torch.searchsorted(shuffled, q, right=True, sorter=order))
    iseq = torch.tensor([-3, 0, 0, 2, 7])
    save("bn_iseq", iseq)
    save("bn_ss_int_float", torch.searchsorted(iseq, torch.tensor([-3.5, 0.0, 0.5, 7.0, 8.0])))
    save("bn_ss_float_int", torch.searchsorted(seq, torch.tensor([-1, 0, 1, 3, 4]), right=True))
    save("bn_ss_scalar", torch.searchsorted(seq, 1.0))
    save("bn_bucket", torch.bucketize(vals, seq))
    save("bn_bucket_right", torch.bucketize(vals, seq, right=True))
    save("bn_bucket_scalar", torch.bucketize(0.5, seq))
    # bincount: counts, minlength, and weights of each type.
    counts_in = torch.randint(0, 9, (40,), generator=g)
    w = torch.randn(40, generator=g)
    save("bn_counts_in", counts_in)
    save("bn_w", w)
    save("bn_bincount", torch.bincount(counts_in))
    save("bn_bincount_min", torch.bincount(counts_in, minlength=12))
    save("bn_bincount_w", torch.bincount(counts_in, w))
    save("bn_bincount_wd", torch.bincount(counts_in, w.double(), minlength=3))
    save("bn_bincount_wi", torch.bincount(counts_in.int(), torch.arange(40, dtype=torch.int32)))
    # histc: the data's own range, a given range (elements outside left out,
    # the last edge in the last bin), constant data, doubles.
    h = torch.randn(6, 50, generator=g)
    save("bn_h", h)
    save("bn_histc", torch.histc(h, 7))
    save("bn_histc_range", torch.histc(h, 10, min=-1.0, max=1.5))
    # (Not NaN: PyTorch 1.13 converts it to a bin position, undefined in C++,
    # and counts it in bin 0 on x86; its documentation, and later versions,
    # leave it out.)
    save("bn_histc_edges", torch.histc(torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 2.0, -0.01, 2.01]), 4, min=0, max=2))
    save("bn_histc_const", torch.histc(torch.full((5,), 2.0), 4))
    save("bn_histc_empty", torch.histc(torch.tensor([]), 3))
    save("bn_histc_double", torch.histc(h.double().t(), 9, min=-2, max=2))
    # unique and unique_consecutive, flat and along a dim.
    u = torch.randint(-3, 4, (4, 6), generator=g)
    save("bn_u", u)
    for name, (v, inv, cnt) in {"unique": torch.unique(u, return_inverse=True, return_counts=True),
                                "unique_t": torch.unique(u.t(), return_inverse=True, return_counts=True),
                                "consec": torch.unique_consecutive(u, return_inverse=True, return_counts=True)}.items():
        save(f"bn_{name}", v)
        save(f"bn_{name}_inv", inv)
        save(f"bn_{name}_cnt", cnt)
    rowsu = torch.tensor([[1, 2, 0], [0, 5, 1], [1, 2, 0], [1, 1, 9], [0, 5, 1], [0, 5, 1]])
    save("bn_rowsu", rowsu)
    ud = torch.randint(0, 2, (2, 5, 3), generator=g).float()
    save("bn_ud", ud)
    for name, (v, inv, cnt) in {"udim0": torch.unique(rowsu, dim=0, return_inverse=True, return_counts=True),
                                "udim1": torch.unique(ud, dim=1, return_inverse=True, return_counts=True),
                                "udim_last": torch.unique(ud, dim=-1, return_inverse=True, return_counts=True),
                                "cdim0": torch.unique_consecutive(rowsu, dim=0, return_inverse=True, return_counts=True),
                                "cdim1": torch.unique_consecutive(ud, dim=1, return_inverse=True,
                                                                  return_counts=True)}.items():
        save(f"bn_{name}", v)
        save(f"bn_{name}_inv", inv)
        save(f"bn_{name}_cnt", cnt)
    # Slices compare in the order of x.transpose(0, dim): here (unlike in
    # movedim's order) the second slice sorts first.
    order = torch.tensor([[[0.5, 0.5], [0.5, 0.75]], [[2.0, 0.75], [2.75, -2.0]]])
    save("bn_order3", order)
    for name, t in zip(("", "_inv", "_cnt"), torch.unique(order, dim=2, return_inverse=True, return_counts=True)):
        save(f"bn_udim_order{name}", t)
    fl = torch.tensor([2.5, -1.0, 2.5, -0.0, 0.0, inf, -inf, 2.5])
    save("bn_fl", fl)
    save("bn_unique_fl", torch.unique(fl))
    save("bn_consec_fl", torch.unique_consecutive(fl))
    # meshgrid and cartesian_prod.
    a, b, c = torch.randn(3, generator=g), torch.randn(4, generator=g), torch.tensor(2.5)
    save("bn_a", a)
    save("bn_b", b)
    for indexing in ("ij", "xy"):
        for i, m in enumerate(torch.meshgrid(a, b, c, indexing=indexing)):
            save(f"bn_mesh_{indexing}{i}", m)
    save("bn_cart", torch.cartesian_prod(a, b, torch.tensor([7.0, 8.0])))


def products_shapes():
    """addmv, addr, addbmm, baddbmm, tensordot, kron, logdet, block_diag,
    rot90, take_along_dim, vander, tril_indices, triu_indices (ps_*)."""
    g = torch.Generator().manual_seed(29)
    nan = float("nan")

    def r(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g, dtype=dtype)

    m, v, c = r(4, 5), r(5), r(4)
    for name, t in {"m": m, "v": v, "c": c}.items():
        save(f"ps_{name}", t)
    save("ps_addmv", torch.addmv(c, m, v, beta=0.5, alpha=2))
    save("ps_addmv_t", torch.addmv(c[:1], m.t()[:, :4].t(), v, beta=1, alpha=-1))  # a strided matrix, c of size 1
    save("ps_addmv_beta0", torch.addmv(torch.full((4,), nan), m, v, beta=0))
    u, w = r(4), r(5)
    save("ps_u", u)
    save("ps_w", w)
    save("ps_addr", torch.addr(m, u, w, beta=2, alpha=0.5))
    save("ps_addr_bcast", torch.addr(c[:1], u, w))
    b1, b2, cm = r(3, 4, 6), r(3, 6, 2), r(4, 2)
    for name, t in {"b1": b1, "b2": b2, "cm": cm}.items():
        save(f"ps_{name}", t)
    save("ps_addbmm", torch.addbmm(cm, b1, b2, beta=0.5, alpha=1.5))
    save("ps_baddbmm", torch.baddbmm(cm, b1, b2, beta=-1, alpha=0.25))
    save("ps_baddbmm_beta0", torch.baddbmm(torch.full((3, 4, 2), nan), b1, b2, beta=0))
    ints = torch.randint(-4, 5, (2, 3), generator=g)
    save("ps_ints", ints)
    save("ps_addmv_int", torch.addmv(torch.tensor([1, 2]), ints, torch.tensor([3, -1, 2]), beta=2, alpha=3))
    x3, y3 = r(2, 3, 4), r(4, 3, 5)
    save("ps_x3", x3)
    save("ps_y3", y3)
    save("ps_td_lists", torch.tensordot(x3, y3, dims=([1, 2], [1, 0])))
    save("ps_td_1", torch.tensordot(x3, y3, dims=1))
    save("ps_td_0", torch.tensordot(x3[:, :, :2], y3[0, :2], dims=0))
    save("ps_td_neg", torch.tensordot(x3, y3.transpose(0, 1), dims=([-2], [0])))
    ka, kb = r(2, 3), r(3, 1, 2)
    save("ps_ka", ka)
    save("ps_kb", kb)
    save("ps_kron", torch.kron(ka, kb))
    save("ps_kron_int", torch.kron(ints, torch.tensor([1.0, 10.0])))
    sq = r(3, 4, 4, dtype=torch.float64)
    sq[2] = torch.tensor([[1.0, 2.0, 0, 0], [2.0, 4.0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=torch.float64)
    save("ps_sq", sq)
    save("ps_logdet", torch.logdet(sq))
    spd = sq[0] @ sq[0].t() + torch.eye(4, dtype=torch.float64)
    save("ps_spd", spd)
    save("ps_logdet_spd", torch.logdet(spd))
    save("ps_block_diag", torch.block_diag(ka, torch.tensor([5.0, 6.0]), torch.tensor(7.0), torch.zeros(0, 3), kb[0]))
    ar = torch.arange(24.0).reshape(2, 3, 4)
    for k, dims in ((1, [0, 1]), (2, [1, 2]), (-1, [2, 0]), (7, [0, -1]), (0, [0, 1])):
        save(f"ps_rot90_{k}_{dims[0]}{dims[1]}".replace("-", "m"), torch.rot90(ar, k, dims))
    idx = torch.tensor([[[1], [0], [2]], [[3], [3], [0]]])
    save("ps_tad", torch.take_along_dim(ar, idx, 2))
    save("ps_tad_bcast", torch.take_along_dim(ar, torch.tensor([[[2], [0]]]), 1))
    save("ps_tad_flat", torch.take_along_dim(ar, torch.tensor([23, 0, 5])))
    xv = torch.tensor([1.5, -2.0, 0.5, 3.0])
    save("ps_xv", xv)
    save("ps_vander", torch.vander(xv))
    save("ps_vander_inc3", torch.vander(xv, 3, increasing=True))
    save("ps_vander_int", torch.vander(torch.tensor([2, -1, 3], dtype=torch.int32), 5))
    for rows, cols, off in ((3, 4, 1), (4, 3, -1), (5, 5, 0), (3, 3, -5), (0, 3, 0), (2, 6, 3)):
        save(f"ps_tril_{rows}_{cols}_{off}".replace("-", "m"), torch.tril_indices(rows, cols, off))
        save(f"ps_triu_{rows}_{cols}_{off}".replace("-", "m"), torch.triu_indices(rows, cols, off))


def statistics_more():
    """quantile, nanquantile, logcumsumexp, trapezoid, cumulative_trapezoid,
    cov, corrcoef, dist, renorm and ldexp (st_*)."""
    g = torch.Generator().manual_seed(31)
    nan, inf = float("nan"), float("inf")
    x = torch.randn(3, 5, 4, generator=g)
    save("st_x", x)
    q = torch.tensor([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
    save("st_q", q)
    save("st_quantile_all", torch.quantile(x, 0.3))
    save("st_quantile_q", torch.quantile(x, q, dim=1))
    save("st_quantile_keep", torch.quantile(x, q, dim=-1, keepdim=True))
    save("st_quantile_all_keep", torch.quantile(x, 0.7, keepdim=True))
    save("st_quantile_t", torch.quantile(x.transpose(0, 2), 0.35, dim=0))
    for mode in ("lower", "higher", "midpoint", "nearest"):
        save(f"st_quantile_{mode}", torch.quantile(x, q, dim=1, interpolation=mode))
    sp = torch.tensor([[1.0, 5.0, nan, 2.0, 8.0], [nan, nan, nan, nan, nan], [3.0, -inf, 0.0, 1.0, inf],
                       [2.0, 2.0, 2.0, nan, 7.0]])
    save("st_sp", sp)
    save("st_quantile_sp", torch.quantile(sp, q, dim=1))
    save("st_nanquantile_sp", torch.nanquantile(sp, q, dim=1))
    save("st_nanquantile_all", torch.nanquantile(sp, 0.4))
    save("st_nanquantile_nearest", torch.nanquantile(sp, q, dim=1, interpolation="nearest"))
    save("st_quantile_double", torch.quantile(x.double(), q.double(), dim=0))
    # logcumsumexp: infinities, NaN, large values, a transposed input.
    lc = torch.tensor([[1.0, -inf, inf, 2.0, inf], [-inf, -inf, 0.5, -inf, 3.0], [100.0, 101.0, nan, 1.0, 2.0],
                       [-100.0, -99.0, -98.5, 90.0, 89.0]])
    save("st_lc", lc)
    save("st_lcse", torch.logcumsumexp(lc, 1))
    save("st_lcse0", torch.logcumsumexp(lc, 0))
    save("st_lcse_t", torch.logcumsumexp(x.transpose(0, 2), 1))
    save("st_lcse_double", torch.logcumsumexp(x.double(), 2))
    # trapezoid and cumulative_trapezoid.
    y = torch.randn(3, 6, generator=g)
    xs = torch.sort(torch.randn(6, generator=g)).values
    x2 = torch.sort(torch.randn(3, 6, generator=g), dim=1).values
    for name, t in {"y": y, "xs": xs, "x2": x2}.items():
        save(f"st_{name}", t)
    save("st_trap", torch.trapezoid(y))
    save("st_trap_dx0", torch.trapezoid(y, dx=0.5, dim=0))
    save("st_trap_x", torch.trapezoid(y, xs))
    save("st_trap_x2", torch.trapezoid(y, x2, dim=1))
    save("st_trap_int", torch.trapezoid(torch.tensor([[1, 2, 4], [0, 1, 1]])))
    save("st_ctrap", torch.cumulative_trapezoid(y))
    save("st_ctrap_dx0", torch.cumulative_trapezoid(y, dx=0.25, dim=0))
    save("st_ctrap_x", torch.cumulative_trapezoid(y, xs))
    save("st_ctrap_x2", torch.cumulative_trapezoid(y.t(), x2.t(), dim=0))
    # cov and corrcoef.
    obs = torch.randn(3, 7, generator=g)
    fw = torch.randint(0, 4, (7,), generator=g)
    aw = torch.rand(7, generator=g)
    for name, t in {"obs": obs, "fw": fw, "aw": aw}.items():
        save(f"st_{name}", t)
    save("st_cov", torch.cov(obs))
    save("st_cov_c0", torch.cov(obs, correction=0))
    save("st_cov_fw", torch.cov(obs, fweights=fw))
    save("st_cov_aw", torch.cov(obs, aweights=aw))
    save("st_cov_both", torch.cov(obs, correction=2, fweights=fw, aweights=aw))
    save("st_cov_1d", torch.cov(obs[0]))
    save("st_cov_t", torch.cov(obs.t()[:4].t()))
    save("st_cov_int", torch.cov(torch.tensor([[1, 2, 4], [0, 1, 1]])))
    save("st_corrcoef", torch.corrcoef(obs))
    save("st_corrcoef_const", torch.corrcoef(torch.tensor([[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [2.0, 0.5, -1.0]])))
    save("st_corrcoef_1d", torch.corrcoef(obs[1]))
    # dist, renorm, ldexp.
    a, b = torch.randn(4, 5, generator=g), torch.randn(5, generator=g)
    save("st_a", a)
    save("st_b", b)
    for p in (2, 1, 3.5, 0, inf):
        save(f"st_dist_{p}".replace(".", "_"), torch.dist(a, b, p))
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 2.5), (inf, 0, 0.5), (3, -1, 10.0)):
        save(f"st_renorm_{p}_{dim}".replace("-", "m"), torch.renorm(a, p, dim, maxnorm))
    e = torch.tensor([[3, -1, 0, 10, -130], [1, 2, -2, 200, -1]])
    save("st_e", e)
    save("st_ldexp", torch.ldexp(a[:2], e))
    save("st_ldexp_int", torch.ldexp(torch.tensor([1, -2, 3]), torch.tensor([3, -1, 0])))


def join_split_scatter():
    """hstack, vstack, dstack, column_stack, tensor_split, broadcast_to,
    broadcast_tensors, repeat_interleave, fliplr, flipud, diag_embed, diagflat,
    argwhere, combinations, select_scatter, slice_scatter, diagonal_scatter
    (js_*)."""
    g = torch.Generator().manual_seed(31)

    def r(*shape):
        return torch.randn(*shape, generator=g)

    a, v, s, c = r(2, 3), r(3), r(()), r(2)
    for name, t in {"a": a, "v": v, "s": s, "c": c}.items():
        save(f"js_{name}", t)
    save("js_hstack", torch.hstack([a, a[:, :1]]))
    save("js_hstack_1d", torch.hstack([s, v, v[:1]]))
    save("js_vstack", torch.vstack([v, a, s.expand(3)]))
    save("js_dstack", torch.dstack([a, a * 2]))
    save("js_dstack_1d", torch.dstack([v, s.expand(3)]))
    save("js_column_stack", torch.column_stack([c, a, s.expand(2)]))
    x = torch.arange(24.0).reshape(2, 3, 4)
    save("js_x", x)
    for name, pieces in {"sections": torch.tensor_split(x, 3, dim=2),
                         "indices": torch.tensor_split(x, [1, -1, 9], dim=-1),
                         "backwards": torch.tensor_split(x, [2, 1], dim=1),
                         "hsplit": torch.hsplit(x, 3), "vsplit": torch.vsplit(x, [1]),
                         "dsplit": torch.dsplit(x, 2)}.items():
        save(f"js_split_{name}_sizes", np.array([list(p.shape) for p in pieces]))
        save(f"js_split_{name}_flat", torch.cat([p.reshape(-1) for p in pieces]))
    save("js_broadcast_to", torch.broadcast_to(c.reshape(2, 1), (3, -1, 4)))
    save("js_ri_int", torch.repeat_interleave(a, 2, dim=1))
    save("js_ri_flat", torch.repeat_interleave(a, 3))
    save("js_ri_tensor", torch.repeat_interleave(a, torch.tensor([0, 2, 1]), dim=-1))
    save("js_ri_one", torch.repeat_interleave(a, torch.tensor([2]), dim=0))
    save("js_ri_indices", torch.repeat_interleave(torch.tensor([3, 0, 1, 2])))
    save("js_fliplr", torch.fliplr(x))
    save("js_flipud", torch.flipud(x))
    save("js_diag_embed", torch.diag_embed(a))
    save("js_diag_embed_off", torch.diag_embed(a, -2, 0, 2))
    save("js_diag_embed_pos", torch.diag_embed(v, 1, 1, 0))
    save("js_diagflat", torch.diagflat(a, 2))
    save("js_diagflat_neg", torch.diagflat(v, -1))
    z = torch.tensor([[0.0, 1.5, 0.0], [-2.0, 0.0, float("nan")]])
    save("js_z", z)
    save("js_argwhere", torch.argwhere(z))
    save("js_comb2", torch.combinations(v))
    save("js_comb3", torch.combinations(torch.cat([v, c]), 3))
    save("js_comb2_rep", torch.combinations(v, 2, with_replacement=True))
    save("js_comb3_rep", torch.combinations(c, 3, with_replacement=True))
    save("js_comb1", torch.combinations(v, 1))
    save("js_select_scatter", torch.select_scatter(x, a * 10, 2, -1))
    save("js_slice_scatter", torch.slice_scatter(x, torch.ones(2, 3, 2), 2, 0, None, 2))
    save("js_slice_scatter_neg", torch.slice_scatter(x, torch.ones(2, 1, 4), 1, -1, 3, 1))
    save("js_slice_scatter_dim0", torch.slice_scatter(x, torch.zeros(1, 3, 4), 0, 1, 2, 1))
    save("js_diagonal_scatter", torch.diagonal_scatter(x, torch.ones(4, 2), 1, 0, 1))
    save("js_diagonal_scatter_neg", torch.diagonal_scatter(x, -torch.ones(2, 3), -1, 2, 1))


def index_writes_names():
    """index_add, index_copy, index_fill, masked_scatter, isin, logspace,
    window functions, cross, and PyTorch's other function names
    (copysign, div with rounding_mode, inner, ...) (iw_*)."""
    g = torch.Generator().manual_seed(37)

    def r(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g, dtype=dtype)

    x, s2, s1 = r(3, 4), r(2, 4), r(3, 2)
    for name, t in {"x": x, "s2": s2, "s1": s1}.items():
        save(f"iw_{name}", t)
    i = torch.tensor([2, 0])
    save("iw_index_add", torch.index_add(x, 0, i, s2))
    save("iw_index_add_alpha", torch.index_add(x, 0, i, s2, alpha=-2.5))
    save("iw_index_add_repeat", torch.index_add(x, 1, torch.tensor([3, 3]), s1))
    save("iw_index_add_bcast", torch.index_add(x, 0, i, s2[:, :1]))
    save("iw_index_add_int", torch.index_add(torch.arange(12).view(3, 4), 1, torch.tensor([0, 2]),
                                             torch.tensor([[1, 2], [3, 4], [5, 6]]), alpha=3))
    save("iw_index_copy", torch.index_copy(x, 0, i, s2))
    save("iw_index_copy_dim1", torch.index_copy(x, -1, torch.tensor([1, 0]), s1))
    save("iw_index_fill", torch.index_fill(x, 1, torch.tensor([-1, 1]), -7.5))
    save("iw_index_fill_0d", torch.index_fill(x, 0, torch.tensor(1), 2.0))
    m = torch.tensor([[True, False, True, False], [False, False, False, True], [True, True, True, True]])
    save("iw_mask", m)
    save("iw_src", torch.arange(10.0))
    save("iw_masked_scatter", torch.masked_scatter(x, m, torch.arange(10.0)))
    save("iw_masked_scatter_bcast", torch.masked_scatter(x, m[1], torch.arange(10.0)))
    save("iw_masked_scatter_row", torch.masked_scatter(x[0], m, torch.arange(10.0)))
    e, t = torch.tensor([[1, 2, 5], [3, 4, 2]]), torch.tensor([2.0, float("nan"), 5.0, 2.0])
    save("iw_isin", torch.isin(e, t))
    save("iw_isin_invert", torch.isin(e, t, invert=True))
    z = torch.tensor([1.0, float("nan"), -0.0, 3.0])
    save("iw_isin_nan", torch.isin(z, torch.tensor([float("nan"), 0.0, 3.0])))
    save("iw_logspace", torch.logspace(-1.5, 2.25, 7))
    save("iw_logspace_base", torch.logspace(0, 10, 11, base=2.0, dtype=torch.float64))
    save("iw_logspace_int", torch.logspace(0, 3, 4, dtype=torch.int64))
    save("iw_logspace_one", torch.logspace(1.5, 9, 1))
    for n in (0, 1, 2, 7, 10):
        for periodic in (True, False):
            tag = f"{n}_{int(periodic)}"
            save(f"iw_hann_{tag}", torch.hann_window(n, periodic))
            save(f"iw_hamming_{tag}", torch.hamming_window(n, periodic))
            save(f"iw_bartlett_{tag}", torch.bartlett_window(n, periodic))
            save(f"iw_blackman_{tag}", torch.blackman_window(n, periodic))
            save(f"iw_kaiser_{tag}", torch.kaiser_window(n, periodic))
    save("iw_hamming_ab", torch.hamming_window(9, False, alpha=0.6, beta=0.3, dtype=torch.float64))
    save("iw_kaiser_beta", torch.kaiser_window(9, True, beta=4.5, dtype=torch.float64))
    a, b = r(2, 3, 4), r(1, 3, 4)
    save("iw_a", a)
    save("iw_b", b)
    save("iw_cross", torch.cross(a, b))
    save("iw_linalg_cross", torch.linalg.cross(a.transpose(1, 2), b.transpose(1, 2)))
    p, q = r(5), r(5)
    save("iw_p", p)
    save("iw_q", q)
    save("iw_copysign", torch.copysign(p, q))
    save("iw_copysign_int", torch.copysign(torch.tensor([1, -2, 0, 3]), torch.tensor([-0.0, 1.0, -1.0, float("-nan")])))
    n1, n2 = torch.tensor([-7, 7, -8, 0, 9, -1]), torch.tensor([2, -2, 2, 3, 3, 5])
    save("iw_div_trunc_int", torch.div(n1, n2, rounding_mode="trunc"))
    save("iw_div_floor_int", torch.div(n1, n2, rounding_mode="floor"))
    save("iw_div_trunc", torch.div(p * 4, q, rounding_mode="trunc"))
    save("iw_div_floor", torch.div(p * 4, q, rounding_mode="floor"))
    save("iw_add_alpha", torch.add(p, q, alpha=-1.5))
    save("iw_sub_alpha", torch.sub(p, q, alpha=3))
    save("iw_rsub", torch.rsub(p, q, alpha=2))
    save("iw_inner", torch.inner(x, s2))
    save("iw_inner_vec", torch.inner(p, q))
    save("iw_msort", torch.msort(x))
    save("iw_posneginf", torch.stack([torch.isposinf(torch.tensor([1.0, float("inf"), -float("inf"), float("nan")])),
                                      torch.isneginf(torch.tensor([1.0, float("inf"), -float("inf"), float("nan")]))]))


def autograd_cases():
    g = torch.Generator().manual_seed(13)

    def leaf(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g, dtype=dtype).requires_grad_()

    def run(name, inputs, f, grad=None):
        for i, t in enumerate(inputs):
            save(f"ag_{name}_in{i}", t)
        out = f(*inputs)
        save(f"ag_{name}_out", out)
        if grad is None:
            out.backward()
        else:
            save(f"ag_{name}_gradout", grad)
            out.backward(grad)
        for i, t in enumerate(inputs):
            save(f"ag_{name}_grad{i}", t.grad)

    run("basic", [leaf(3, 4), leaf(4)],
        lambda x, y: ((x * y + torch.sin(x)) * torch.exp(-y) / (1 + x * x)).sum())
    run("twice", [leaf(5)], lambda x: (x * x * x - torch.tanh(x)).sum())
    z = leaf(6)
    with torch.no_grad():
        z[0] = 0.0
    run("edges", [z], lambda x: (2.5 * x - x / 3 + torch.sqrt(torch.abs(x) + 1) + torch.relu(x) + torch.abs(x)).sum())
    y = leaf(2, 3)
    with torch.no_grad():
        y.abs_().add_(0.5)
    run("mean", [leaf(2, 3), y], lambda x, y: (torch.sigmoid(x) * torch.log(y) - torch.cos(x)).mean())
    run("views", [leaf(3, 4), leaf(4, 3), leaf(2, 4)],
        lambda x, w, z: (x.t() * w).sum() + (x[:, 1:3] ** 2).sum() + x.reshape(12)[::2].sum()
        + (x[1].expand(2, 4) * z).sum())
    run("chain", [leaf(4)], lambda x: ((torch.exp(x) * x) - torch.exp(x)).mean())
    run("cast", [leaf(3, dtype=torch.float64), leaf(3)], lambda x, y: (x * y.double()).sum())
    run("where", [leaf(7)], lambda x: torch.where(x > 0, x * x, -x).sum())
    run("pow", [leaf(4)], lambda x: (torch.pow(x, 3) + torch.pow(x, 0) + torch.pow(x * x + 1, 0.5)).sum())
    run("gradout", [leaf(2, 3), leaf(3)], lambda x, y: x * y, torch.randn(2, 3, generator=g))


def autograd_ops():
    """Gradients of the ops with their own backward: reductions over dims,
    matrix products, shape and indexing ops (ago_* files)."""
    g = torch.Generator().manual_seed(17)

    def leaf(*shape):
        return torch.randn(*shape, generator=g).requires_grad_()

    def given(values):
        return torch.tensor(values, dtype=torch.float32).requires_grad_()

    def run(name, inputs, f):
        for i, t in enumerate(inputs):
            save(f"ago_{name}_in{i}", t)
        out = f(*inputs)
        save(f"ago_{name}_out", out)
        grad = torch.randn(out.shape, generator=g)
        save(f"ago_{name}_gradout", grad)
        out.backward(grad)
        for i, t in enumerate(inputs):
            save(f"ago_{name}_grad{i}", t.grad if t.grad is not None else torch.zeros_like(t))

    ties = [[1.0, 3.0, 3.0, 0.5], [2.0, 2.0, 0.0, 2.0], [-1.0, -4.0, -1.0, -2.0]]
    zeros = [[2.0, 0.0, 3.0, 1.5], [0.0, 0.0, 3.0, 1.0], [1.0, 2.0, 3.0, -0.5]]
    with_zero_row = [[1.0, -2.0, 2.0, 0.5], [0.0, 0.0, 0.0, 0.0], [3.0, 1.0, -1.0, 2.0]]
    run("sum_dims", [leaf(3, 4, 5)], lambda x: (torch.sin(x) * 2).sum((0, 2)))
    run("mean_keep", [leaf(3, 4, 5)], lambda x: x.mean(1, keepdim=True))
    run("amax_ties", [given(ties)], lambda x: x.amax(1))
    run("amin_full", [given(ties)], lambda x: x.amin().reshape(1))
    run("max_full_ties", [given(ties)], lambda x: x.max().reshape(1))
    run("max_dim", [given(ties)], lambda x: x.max(0)[0])
    run("min_dim_keep", [given(ties)], lambda x: x.min(1, keepdim=True)[0])
    run("prod_zeros", [given(zeros)], lambda x: x.prod(1))
    run("prod_full", [leaf(2, 3)], lambda x: x.prod().reshape(1))
    run("var", [leaf(3, 5)], lambda x: x.var(1))
    run("std_const_row", [given([[2.0, 2.0, 2.0], [1.0, 3.0, 0.0]])], lambda x: x.std(1))
    run("var_c0", [leaf(4, 3)], lambda x: x.var(0, unbiased=False))
    for p, tag in [(2, "2"), (1, "1"), (float("inf"), "inf"), (3, "3")]:
        run(f"norm{tag}", [given(with_zero_row)], lambda x, p=p: torch.linalg.vector_norm(x, p, dim=1))
    run("logsumexp", [leaf(3, 5)], lambda x: torch.logsumexp(x * 3, 1))
    run("softmax", [leaf(3, 5)], lambda x: torch.softmax(x, 1))
    run("log_softmax", [leaf(4, 3)], lambda x: torch.log_softmax(x, 0))
    run("cumsum", [leaf(3, 5)], lambda x: torch.cumsum(x, 1))
    run("matmul_bcast", [leaf(2, 1, 3, 4), leaf(5, 4, 2)], torch.matmul)
    run("matmul_vec_mat", [leaf(4), leaf(2, 4, 3)], torch.matmul)
    run("mm", [leaf(5, 7), leaf(7, 3)], torch.mm)
    run("mv", [leaf(5, 7), leaf(7)], torch.mv)
    run("dot", [leaf(7), leaf(7)], lambda a, b: torch.dot(a, b).reshape(1))
    run("addmm", [leaf(3), leaf(2, 4), leaf(4, 3)], lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0))
    run("linear3d", [leaf(2, 3, 4), leaf(5, 4), leaf(5)], torch.nn.functional.linear)
    run("cat", [leaf(2, 3), leaf(2, 1)], lambda a, b: torch.cat([a, b, a], 1))
    run("stack", [leaf(2, 3), leaf(2, 3)], lambda a, b: torch.stack([a, b], 2))
    run("index_select", [leaf(3, 4)], lambda x: x.index_select(1, torch.tensor([3, 0, 3, 1])))
    run("index_neg", [leaf(3, 4)], lambda x: x[:, torch.tensor([[-1, 0], [0, 2]])])
    run("gather", [leaf(3, 4)], lambda x: x.gather(0, torch.tensor([[0, 2, 1, 1], [2, 2, 0, 0]])))
    run("scatter", [leaf(3, 4), leaf(2, 4)], lambda x, s: x.scatter(0, torch.tensor([[0, 2, 1, 1], [2, 1, 0, 0]]), s))
    run("scatter_add", [leaf(3, 4), leaf(2, 4)],
        lambda x, s: x.scatter_add(0, torch.tensor([[0, 2, 1, 1], [0, 2, 0, 0]]), s))
    run("sort", [leaf(3, 5)], lambda x: x.sort(1, descending=True)[0])
    run("topk", [leaf(5, 3)], lambda x: x.topk(2, 0)[0])
    run("flip", [leaf(3, 4)], lambda x: x.flip(0, 1))
    run("roll", [leaf(3, 4)], lambda x: x.roll((1, -1), (0, 1)))
    run("repeat", [leaf(2, 3)], lambda x: x.repeat(2, 1, 3))
    run("tril", [leaf(4, 3)], lambda x: x.tril(-1))
    # The remaining elementwise rules, at their edges.
    nan, inf = float("nan"), float("inf")
    run("clamp_edges", [given([-2.0, 0.0, 1.0, 2.0, 3.0, nan]), given([-1.0, 0.0, 1.0, 2.5, 4.0, 0.0]),
                        given([1.0, 0.0, 1.0, 2.0, 3.5, 1.0])], torch.clamp)
    run("clamp_scalars", [given([-2.0, -1.0, 0.0, 1.0, 2.0])], lambda x: torch.clamp(x, -1.0, 1.0))
    run("pow_edges", [given([0.0, 0.0, 0.0, 2.0, -1.0, 1.5]), given([2.0, 0.0, -1.0, 0.5, 2.0, -0.5])], torch.pow)
    run("gelu", [leaf(9)], torch.nn.functional.gelu)
    run("gelu_tanh", [leaf(9)], lambda x: torch.nn.functional.gelu(x, approximate="tanh"))
    run("acosh_edges", [given([1.0, 2.0, 0.5, 3.0])], torch.acosh)
    run("nan_to_num", [given([nan, inf, -inf, 1.0])], torch.nan_to_num)
    run("atan2", [leaf(5), leaf(5)], torch.atan2)
    run("lerp", [leaf(4), leaf(4), leaf(4)], torch.lerp)
    run("rem_fmod", [given([5.5, -5.5, 3.0, -7.25]), given([2.0, 2.0, -1.5, -2.0])],
        lambda a, b: torch.remainder(a, b) + torch.fmod(a, b))
    run("rounding", [leaf(6)], lambda x: torch.floor(x) + torch.ceil(x) + torch.round(x) + torch.trunc(x)
        + torch.sign(x) + torch.frac(x))
    # (Added later: at the end, so the inputs drawn above stay as they were.)
    run("cumprod", [given(zeros)], lambda x: torch.cumprod(x, 1))  # no zero, one, two per line
    run("cumprod_dim0", [given(zeros)], lambda x: torch.cumprod(x * 1.5, 0))
    run("masked_select", [leaf(3, 4)], lambda x: torch.masked_select(x, torch.tensor([True, False, True, True])))
    run("logaddexp", [given([0.5, 1.0, -2.0, 3.0, inf, -inf]), given([0.5, 3.0, 4.0, -30.0, 1.0, 2.0])],
        lambda a, b: torch.logaddexp(a, b) + torch.logaddexp2(a * 0.5, b))
    run("hypot", [given([3.0, 0.0, -1e-3, 2.0]), given([4.0, 1.0, 5.0, -2.0])], torch.hypot)
    run("addcmul_addcdiv", [leaf(3, 4), leaf(4), leaf(3, 1)],
        lambda t, a, b: torch.addcmul(t, a, b, value=0.5) + torch.addcdiv(t, a, b.exp(), value=-2))
    run("movedim", [leaf(2, 3, 4)], lambda x: torch.movedim(x, (0, 2), (1, 0)) * 1)
    run("trace", [leaf(4, 3)], lambda x: torch.trace(x).reshape(1))
    run("diag_vec", [leaf(4)], lambda x: torch.diag(x, -1))
    run("diag_mat", [leaf(4, 5)], lambda x: torch.diag(x, 1))
    run("diff", [leaf(3, 5), leaf(3, 2)], lambda x, p: torch.diff(x, 2, 1, prepend=p))
    run("kthvalue", [leaf(4, 5)], lambda x: torch.kthvalue(x, 2, 1)[0])
    run("median_dim", [leaf(5, 3)], lambda x: torch.median(x, 0, keepdim=True)[0])
    run("median_all_ties", [given(ties)], lambda x: torch.median(x).reshape(1))
    run("nanmedian", [given([[nan, 1.0, 5.0, nan], [2.0, nan, -1.0, 0.5], [nan, 3.0, nan, nan]])],
        lambda x: torch.nanmedian(x, 1)[0])
    run("nanmedian_all", [given([[nan, 1.0, 5.0, 1.0], [2.0, nan, -1.0, 0.5]])], lambda x: torch.nanmedian(x).reshape(1))
    run("cummax", [given([[1.0, 3.0, 3.0, 2.0, 5.0], [2.0, 2.0, -1.0, -1.0, 0.0]])], lambda x: torch.cummax(x, 1)[0])
    run("cummin", [leaf(4, 3)], lambda x: torch.cummin(x, 0)[0])


def autograd_inplace_views():
    """In-place writes into views of tensors with history (PyTorch's CopySlices)."""
    g = torch.Generator().manual_seed(29)

    def leaf(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float32).requires_grad_()

    def run(name, inputs, f):
        for i, t in enumerate(inputs):
            save(f"agv_{name}_in{i}", t)
        out = f(*inputs)
        save(f"agv_{name}_out", out)
        out.backward()
        for i, t in enumerate(inputs):
            save(f"agv_{name}_grad{i}", t.grad if t.grad is not None else torch.zeros_like(t))

    def slice_add(x, w):  # a slice of a result, added into
        y = x * 2
        y[1:3] += w * 3
        return (y * y).sum()

    def into_plain(x):  # writes into a buffer that needs no grad
        buf = torch.zeros(6)
        buf[0:3].copy_(x)
        buf[3:6] = x * x
        return (buf * torch.arange(6.0)).sum()

    def siblings(x):  # a sibling view read after another one was written
        y = x.clone()
        a = y[0]
        b = y[1:]
        b.mul_(2)
        return (a * 3).sum() + (y * y).sum()

    def transposed_select(x):  # select of a transposed view, filled with a constant
        y = x * 1
        y.t()[1].fill_(0)
        return (y.exp()).sum()

    def base_with_views(x):  # the base written while a view of it lives
        y = x * 2
        v = y[0:2]
        y += x * x
        return (v * v).sum() + y.sum()

    def nested(x, w):  # a view of a view
        y = x.sin()
        y[1:][0:2].mul_(w)
        return (y * torch.arange(1.0, 5.0)).sum()

    def masked(x):
        y = x * 3
        y[:, 0].masked_fill_(y[:, 0] > 0, 0.5)
        return (y * y).sum()

    def reads_itself(x):  # the written value reads the view itself and its base
        y = x + 1
        y[1:3] = y[1:3] * 2 + y[0:2]
        return (y * torch.arange(1.0, 5.0)).sum()

    run("slice_add", [leaf(4), leaf(2)], slice_add)
    run("into_plain", [leaf(3)], into_plain)
    run("siblings", [leaf(3, 2)], siblings)
    run("transposed_select", [leaf(3, 4)], transposed_select)
    run("base_with_views", [leaf(4)], base_with_views)
    run("nested", [leaf(4), leaf(2)], nested)
    run("masked", [leaf(4, 3)], masked)
    run("reads_itself", [leaf(4)], reads_itself)


def autograd_second_order():
    """Second derivatives through create_graph (float64): Hessian-vector
    products of composite functions, a gradient penalty, an MLP's HVP."""
    g = torch.Generator().manual_seed(31)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    def hvp(name, inputs, f):
        """Saves the inputs, v, f's gradient and the Hessian-vector product."""
        xs = [t.clone().requires_grad_() for t in inputs]
        for i, t in enumerate(xs):
            save(f"ag2_{name}_in{i}", t)
        vs = [rand(*t.shape) for t in xs]
        for i, v in enumerate(vs):
            save(f"ag2_{name}_v{i}", v)
        out = f(*xs)
        grads = torch.autograd.grad(out, xs, create_graph=True)
        for i, gr in enumerate(grads):
            save(f"ag2_{name}_grad{i}", gr)
        dot = sum((gr * v).sum() for gr, v in zip(grads, vs))
        second = torch.autograd.grad(dot, xs, allow_unused=True)
        for i, h in enumerate(second):
            save(f"ag2_{name}_hvp{i}", h if h is not None else torch.zeros_like(xs[i]))

    hvp("elementwise", [rand(3, 4), rand(4).abs() + 0.5],
        lambda x, y: (torch.sin(x) * y + torch.tanh(x * y) + torch.exp(-x * x) / y + torch.sqrt(y) * x.sigmoid()).sum())
    hvp("pow_where", [rand(5), rand(5).abs() + 0.5],
        lambda x, y: (torch.where(x > 0, x.pow(3), y.pow(x)) + torch.maximum(x, y) ** 2 + x.abs() * y).sum())
    hvp("reductions", [rand(3, 5)],
        lambda x: ((x.var(1) * x.std(0).sum()).sum() + x.logsumexp(1).sum() + x.norm(dim=1).prod() + x.amax(1).pow(2).sum()))
    hvp("softmax", [rand(4, 6)],
        lambda x: (torch.softmax(x, 1) * torch.log_softmax(x * 2, 0)).sum() + (x.mean(0) ** 2).sum())
    hvp("matmul", [rand(3, 4), rand(4, 2), rand(2)],
        lambda a, b, c: (torch.tanh(a @ b + c) ** 2).sum() + (a.t() @ a).trace() * (b @ c).sum())
    hvp("views_and_shapes", [rand(4, 3)],
        lambda x: (torch.cat([x.t(), x[1:3].t() * 2], 1).pow(2).sum(0) * torch.arange(1.0, 7.0, dtype=torch.float64)).sum()
        + x.reshape(2, 6).exp().cumsum(1).sum() + x.cumprod(0).sum()
        + (x.index_select(0, torch.tensor([2, 0, 2])) ** 3).sum()
        + (x.gather(1, torch.tensor([[0, 2], [1, 1], [2, 0], [0, 0]])) ** 2).sum()
        + x.max(1)[0].pow(3).sum() + x.sort(1)[0][:, 0].pow(2).sum()
        + x.unsqueeze(0).expand(2, 4, 3).pow(2).sum())

    # A gradient penalty (WGAN-GP): the norm of dD/dx per sample, pushed to 1.
    x = rand(5, 3).requires_grad_()
    w1, b1, w2 = rand(4, 3).requires_grad_(), rand(4).requires_grad_(), rand(4).requires_grad_()
    for name, t in [("x", x), ("w1", w1), ("b1", b1), ("w2", w2)]:
        save(f"ag2_gp_{name}", t)
    d = (torch.relu(x @ w1.t() + b1) * w2).sum(1)
    (dx,) = torch.autograd.grad(d.sum(), x, create_graph=True)
    gp = ((dx.norm(dim=1) - 1) ** 2).mean()
    save("ag2_gp_out", gp)
    gp.backward()
    for name, t in [("x", x), ("w1", w1), ("b1", b1), ("w2", w2)]:
        save(f"ag2_gp_grad_{name}", t.grad)

    # An MLP's Hessian-vector product with respect to its weights:
    # cross-entropy (log_softmax against one-hot labels) of tanh layers.
    x = rand(6, 4)
    onehot = torch.nn.functional.one_hot(torch.tensor([0, 2, 1, 2, 0, 1]), 3).double()
    save("ag2_mlp_x", x)
    save("ag2_mlp_onehot", onehot)
    hvp("mlp", [rand(5, 4) * 0.5, rand(5) * 0.1, rand(3, 5) * 0.5, rand(3) * 0.1],
        lambda w1, b1, w2, b2: -(torch.log_softmax(torch.tanh(x @ w1.t() + b1) @ w2.t() + b2, 1) * onehot).sum(1).mean())


# ----- torch.special ---------------------------------------------------------------
# One file per function, sp_<name>.npy, a (7, n) float64 array with rows:
# input (x, or a), second input (b; zeros for unary functions), PyTorch's
# float64 result, PyTorch's float32 result, the exact value at the float64
# input, the exact value at the float32-rounded input (rounded to float32),
# and the condition number |x f'(x) / f(x)| (summed over both inputs), which
# the tests use to tell ill-conditioned points (near zeros of the function)
# from the rest. Exact values are mpmath at 50 digits; where mpmath has no
# value (infinite or NaN inputs, poles) PyTorch's float64 result stands in,
# except for the limits listed in SPECIAL_LIMITS.
def _mp_ndtri(p):
    if p > 0.5:
        return -_mp_ndtri(1 - p)
    if p == 0.5:
        return mpmath.mpf(0)
    start = -mpmath.sqrt(-2 * mpmath.log(p)) + 0.5 if p < 0.1 else mpmath.mpf(0)
    return mpmath.findroot(lambda t: mpmath.log(mpmath.ncdf(t)) - mpmath.log(p), start)


def _mp_zeta(s, q):  # mpmath's own zeta(s, q) is inaccurate for large s and q (checked by quadrature)
    if s <= 1 or (q <= 0 and q == int(q)) or (q < 0 and s != int(s)):
        raise ValueError
    n = max(0, int(40 + s - q))
    w = q + n
    t = sum((q + k) ** (-s) for k in range(n)) + w ** (1 - s) / (s - 1) + w ** (-s) / 2
    r = s
    for j in range(1, 20):
        t += mpmath.bernoulli(2 * j) / mpmath.factorial(2 * j) * r * w ** (-s - 2 * j + 1)
        r *= (s + 2 * j - 1) * (s + 2 * j)
    return t


def _mp_polygamma(n):
    def f(x):
        if x <= 0 and x == int(x):
            raise ValueError
        return mpmath.polygamma(n, x)
    return f


def _mp_digamma(x):
    if x <= 0 and x == int(x):
        raise ValueError
    return mpmath.digamma(x)


def _mp_gammaln(x):
    if x <= 0 and x == int(x):
        raise ValueError
    return mpmath.log(abs(mpmath.gamma(x)))


def _mp_igam_domain(a, x):  # the incomplete gamma functions are real only here
    if a <= 0 or x < 0:
        raise ValueError
    return a


_mp = mpmath
SPECIAL_UNARY = {
    "erf": (torch.special.erf, _mp.erf),
    "erfc": (torch.special.erfc, _mp.erfc),
    "erfcx": (torch.special.erfcx, lambda x: _mp.exp(x * x) * _mp.erfc(x)),
    "erfinv": (torch.special.erfinv, _mp.erfinv),
    "exp2": (torch.special.exp2, lambda x: _mp.power(2, x)),
    "expit": (torch.special.expit, lambda x: 1 / (1 + _mp.exp(-x))),
    "expm1": (torch.special.expm1, _mp.expm1),
    "log1p": (torch.special.log1p, _mp.log1p),
    "ndtr": (torch.special.ndtr, _mp.ncdf),
    "log_ndtr": (torch.special.log_ndtr, lambda x: _mp.log1p(-_mp.ncdf(-x)) if x > 0 else _mp.log(_mp.ncdf(x))),
    "ndtri": (torch.special.ndtri, _mp_ndtri),
    "digamma": (torch.special.digamma, _mp_digamma),
    "gammaln": (torch.special.gammaln, _mp_gammaln),
    "i0": (torch.special.i0, lambda x: _mp.besseli(0, x)),
    "i0e": (torch.special.i0e, lambda x: _mp.besseli(0, x) * _mp.exp(-abs(x))),
    "i1": (torch.special.i1, lambda x: _mp.besseli(1, x)),
    "i1e": (torch.special.i1e, lambda x: _mp.besseli(1, x) * _mp.exp(-abs(x))),
    "sinc": (torch.special.sinc, lambda x: _mp.sinpi(x) / (_mp.pi * x) if x != 0 else _mp.mpf(1)),
    "entr": (torch.special.entr, lambda x: -x * _mp.log(x) if x > 0 else (_mp.mpf(0) if x == 0 else -_mp.inf)),
    "logit": (torch.special.logit, lambda x: _mp.log(x / (1 - x))),
    "spherical_bessel_j0": (torch.special.spherical_bessel_j0, lambda x: _mp.sin(x) / x if x != 0 else _mp.mpf(1)),
    "bessel_j0": (torch.special.bessel_j0, lambda x: _mp.besselj(0, x)),
    "bessel_j1": (torch.special.bessel_j1, lambda x: _mp.besselj(1, x)),
    "scaled_modified_bessel_k0": (torch.special.scaled_modified_bessel_k0, lambda x: _mp.besselk(0, x) * _mp.exp(x)),
    "scaled_modified_bessel_k1": (torch.special.scaled_modified_bessel_k1, lambda x: _mp.besselk(1, x) * _mp.exp(x)),
    "airy_ai": (torch.special.airy_ai, _mp.airyai),
    "polygamma1": (lambda x: torch.special.polygamma(1, x), _mp_polygamma(1)),
    "polygamma2": (lambda x: torch.special.polygamma(2, x), _mp_polygamma(2)),
    "polygamma3": (lambda x: torch.special.polygamma(3, x), _mp_polygamma(3)),
    "multigammaln3": (lambda x: torch.special.multigammaln(x, 3),
                      lambda x: 3 * 2 / 4 * _mp.log(_mp.pi) + sum(_mp.loggamma(x - _mp.mpf(j) / 2) for j in range(3))),
}
SPECIAL_BINARY = {
    "xlogy": (torch.special.xlogy, lambda x, y: _mp.mpf(0) if x == 0 else x * _mp.log(y)),
    "xlog1py": (torch.special.xlog1py, lambda x, y: _mp.mpf(0) if x == 0 else x * _mp.log1p(y)),
    "zeta": (torch.special.zeta, _mp_zeta),
    "gammainc": (torch.special.gammainc, lambda a, x: _mp.gammainc(_mp_igam_domain(a, x), 0, x, regularized=True)),
    "gammaincc": (torch.special.gammaincc,
                  lambda a, x: _mp.gammainc(_mp_igam_domain(a, x), x, _mp.inf, regularized=True)),
}
# Limits where PyTorch returns something else (docs/special.md lists them).
SPECIAL_LIMITS = {
    ("i0", math.inf): math.inf, ("i0", -math.inf): math.inf,
    ("i1", math.inf): math.inf, ("i1", -math.inf): -math.inf,
    ("sinc", math.inf): math.nan, ("sinc", -math.inf): math.nan,
    ("bessel_j0", math.inf): 0.0, ("bessel_j0", -math.inf): 0.0,
    ("bessel_j1", math.inf): 0.0, ("bessel_j1", -math.inf): -0.0,
    ("airy_ai", math.inf): 0.0, ("airy_ai", -math.inf): 0.0,
    ("polygamma1", -1.0): math.inf, ("polygamma1", -2.0): math.inf, ("polygamma1", -3.0): math.inf,
    ("polygamma1", -10.0): math.inf,
}


def _special_grid(name):
    lin = lambda a, b, n: torch.linspace(a, b, n, dtype=torch.float64).tolist()
    logs = lambda a, b, n: torch.logspace(a, b, n, dtype=torch.float64).tolist()
    g = torch.Generator().manual_seed(hash(name) % 1000 if False else sum(map(ord, name)))
    rnd = lambda a, b, n: (torch.rand(n, generator=g, dtype=torch.float64) * (b - a) + a).tolist()
    edges = [0.0, -0.0, math.inf, -math.inf, math.nan]
    grids = {
        "erf": lin(-6, 6, 241) + rnd(-6, 6, 100) + logs(-300, 0, 40),
        "erfc": lin(-6, 27, 331) + rnd(-2, 27, 100) + logs(-300, 0, 40),
        "erfcx": lin(-26.5, 30, 226) + rnd(-26, 30, 100) + logs(1, 300, 60) + [-x for x in logs(-300, 0, 30)],
        "erfinv": lin(-1, 1, 201) + rnd(-1, 1, 100) + [1 - x for x in logs(-16, -1, 60)] + logs(-300, -2, 30) + [1.5, -2.0],
        "exp2": lin(-1080, 1030, 211) + rnd(-20, 20, 100) + logs(-300, 0, 30),
        "expit": lin(-750, 40, 159) + rnd(-40, 40, 150) + logs(-300, 0, 30),
        "expm1": lin(-40, 710, 151) + rnd(-2, 2, 100) + logs(-300, 0, 40) + [-x for x in logs(-300, 0, 40)],
        "log1p": rnd(-1, 10, 150) + logs(-300, 300, 121) + [-x for x in logs(-300, -1e-9, 60)] + [-1.0, -2.0],
        "ndtr": lin(-39, 10, 197) + rnd(-39, 10, 150) + logs(-300, 0, 30),
        "log_ndtr": lin(-40, 10, 201) + rnd(-40, 40, 100) + [-x for x in logs(0, 150, 61)] + logs(0, 1.4, 30),
        "ndtri": lin(0, 1, 201) + rnd(0, 1, 100) + logs(-300, -1, 60) + [1 - x for x in logs(-16, -1, 60)] + [-0.5, 1.5],
        "digamma": lin(-20.25, 20, 324) + rnd(-20, 20, 100) + logs(-10, 10, 41) + [-3.0, -2.0, -1.0],
        "gammaln": lin(-20.25, 30, 202) + rnd(0, 30, 100) + logs(-10, 300, 63) + [-3.0, -1.0],
        "i0": lin(-30, 30, 241) + rnd(-700, 700, 100) + logs(-300, 2.85, 60),
        "i0e": lin(-60, 60, 241) + rnd(-60, 60, 100) + logs(-300, 300, 61),
        "i1": lin(-30, 30, 241) + rnd(-700, 700, 100) + logs(-300, 2.85, 60),
        "i1e": lin(-60, 60, 241) + rnd(-60, 60, 100) + logs(-300, 300, 61),
        "sinc": lin(-20, 20, 321) + rnd(-20, 20, 100) + logs(-300, 15, 64),
        "entr": logs(-300, 300, 121) + rnd(0, 5, 100) + [-1.0, -1e-10],
        "logit": lin(0, 1, 201) + rnd(0, 1, 100) + logs(-300, -1, 60) + [1 - x for x in logs(-16, -1, 30)] + [-0.5, 1.5],
        "spherical_bessel_j0": lin(-100, 100, 401) + rnd(-100, 100, 100) + logs(-300, 300, 61),
        "bessel_j0": lin(-40, 40, 321) + rnd(-100, 100, 100) + logs(-300, 300, 61),
        "bessel_j1": lin(-40, 40, 321) + rnd(-100, 100, 100) + logs(-300, 300, 61),
        "scaled_modified_bessel_k0": lin(0, 20, 201) + logs(-300, 300, 121) + [-1.0],
        "scaled_modified_bessel_k1": lin(0, 20, 201) + logs(-300, 300, 121) + [-1.0],
        "airy_ai": lin(-30, 30, 241) + rnd(-10, 2, 100) + [-x for x in logs(0, 6, 61)] + logs(-300, 2.2, 60),
        "polygamma1": lin(-20.25, 20, 324) + rnd(-20, 20, 100) + logs(-10, 10, 41) + [-3.0, -2.0, -1.0, -10.0],
        "polygamma2": lin(-20.25, 20, 324) + rnd(-20, 20, 100) + logs(-10, 10, 41) + [-3.0, -2.0, -1.0],
        "polygamma3": lin(-20.25, 20, 324) + rnd(-20, 20, 100) + logs(-10, 10, 41) + [-3.0, -2.0, -1.0],
        "multigammaln3": lin(1.01, 50, 100) + rnd(1.001, 100, 100) + logs(2, 200, 40),
    }
    return grids[name] + ([] if name == "multigammaln3" else edges)  # (multigammaln rejects those)


def _special_pairs(name):
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    rnd = lambda a, b, n: (torch.rand(n, generator=g, dtype=torch.float64) * (b - a) + a).tolist()
    logr = lambda a, b, n: [10 ** v for v in rnd(a, b, n)]
    edges_a = [0.0, 1.0, 2.5, math.inf, -math.inf, math.nan, -1.0, 0.0, 3.0, -2.5, 2.0, 2.0]
    edges_b = [1.0, 0.0, math.nan, 1.0, 2.0, 1.0, 1.0, math.nan, -2.0, 2.0, -3.0, -2.5]
    if name in ("xlogy", "xlog1py"):
        lo = -0.999 if name == "xlog1py" else 0
        a = rnd(-10, 10, 200) + [0.0] * 20 + rnd(-1, 1, 100)
        b = rnd(lo, 10, 200) + rnd(lo, 5, 20) + logr(-300, 300, 100)
    elif name == "zeta":
        a = rnd(1.001, 40, 200) + [2.0, 3.0, 4.0, 5.0] * 25 + rnd(1.001, 3, 100)
        b = logr(-3, 3, 200) + rnd(-10, -0.01, 100) + logr(-6, 6, 100)
    else:
        a = logr(-2, 2, 250) + logr(-5, 3, 200) + rnd(50, 200, 100)
        b = logr(-3, 2.3, 250) + logr(-5, 3.3, 200) + rnd(40, 250, 100)
    return a + edges_a, b + edges_b


def _mp_value(f, args):
    if not all(math.isfinite(v) for v in args):
        return None
    try:
        r = f(*[mpmath.mpf(v) for v in args])
        if isinstance(r, mpmath.mpc) or not mpmath.isfinite(r):
            return None  # PyTorch's value stands in
        return r
    except (ValueError, ZeroDivisionError, OverflowError, TypeError, mpmath.libmp.libhyper.NoConvergence):
        return None


def _mp_cond(f, args, value):
    if value is None or value == 0 or not mpmath.isfinite(value):
        return math.inf if value == 0 else 0.0
    total = mpmath.mpf(0)
    for i in range(len(args)):
        if args[i] == 0:
            continue
        h = mpmath.mpf(10) ** -25
        moved = [mpmath.mpf(v) for v in args]
        moved[i] *= 1 + h
        try:
            total += abs((f(*moved) - value) / (h * value))
        except (ValueError, ZeroDivisionError, OverflowError):
            return math.inf
    return float(total)


def special():
    mpmath.mp.dps = 50
    table = [(n, f, m, 1) for n, (f, m) in SPECIAL_UNARY.items()] + \
            [(n, f, m, 2) for n, (f, m) in SPECIAL_BINARY.items()]
    for name, torch_f, mp_f, arity in table:
        if arity == 1:
            a = _special_grid(name)
            b = [0.0] * len(a)
        else:
            a, b = _special_pairs(name)
        A, B = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
        args64 = (A,) if arity == 1 else (A, B)
        t64 = torch_f(*args64)
        t32 = torch_f(*[t.float() for t in args64]).double()
        exact64, exact32, cond = [], [], []
        np.seterr(over="ignore")
        for i in range(len(a)):
            xs = [a[i]] if arity == 1 else [a[i], b[i]]
            xs32 = [float(np.float32(v)) for v in xs]
            v64 = _mp_value(mp_f, xs)
            v32 = _mp_value(mp_f, xs32)
            limit = SPECIAL_LIMITS.get((name, a[i])) if arity == 1 else None
            limit32 = SPECIAL_LIMITS.get((name, xs32[0])) if arity == 1 else None
            exact64.append(limit if limit is not None else float(v64) if v64 is not None else t64[i].item())
            exact32.append(limit32 if limit32 is not None else
                           float(np.float32(float(v32))) if v32 is not None else t32[i].item())
            cond.append(_mp_cond(mp_f, xs, v64))
        rows = [a, b, t64.tolist(), t32.tolist(), exact64, exact32, cond]
        save(f"sp_{name}", np.array(rows, dtype=np.float64))
    # round(x, decimals) (exact: it must match PyTorch bit for bit), and
    # integer inputs, which compute in float.
    g = torch.Generator().manual_seed(7)
    x = torch.cat([torch.randn(200, generator=g, dtype=torch.float64) * 10 ** torch.randint(-3, 6, (200,), generator=g),
                   torch.tensor([0.125, 2.5, -2.5, 0.5, 1.5, 1234.5, 1250.0, -0.0, math.inf, math.nan])])
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        xt = x.to(dtype)
        save(f"sp_round_in_{tag}", xt)
        for d in (2, -1, 3):
            save(f"sp_round_{d}_{tag}".replace("-", "m"), torch.special.round(xt, decimals=d))
    i = torch.arange(-5, 6, dtype=torch.int32)
    save("sp_int_in", i)
    save("sp_int_expit", torch.special.expit(i))
    save("sp_int_digamma", torch.special.digamma(i))
    save("sp_int_xlogy", torch.special.xlogy(i, i.abs() + 1))
    mpmath.mp.dps = 50


def nn_cases():
    """nn: initial weights after manual_seed (bit-exact for uniform-based
    initializations), activations and losses (output and input gradient,
    float and double), state_dict keys and reprs."""
    import torch.nn as nn
    import torch.nn.functional as F

    # Initial weights: layers built one per statement, in this order.
    torch.manual_seed(0)
    l1 = nn.Linear(5, 3)
    l2 = nn.Linear(3, 2, bias=False)
    save("nn_init_l1_weight", l1.weight)
    save("nn_init_l1_bias", l1.bias)
    save("nn_init_l2_weight", l2.weight)
    torch.manual_seed(1)
    w = torch.empty(4, 6)
    nn.init.xavier_uniform_(w, gain=nn.init.calculate_gain("tanh"))
    save("nn_init_xavier_uniform", w)
    w = torch.empty(3, 4, 2, 2)
    nn.init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu")
    save("nn_init_kaiming_uniform_fan_out", w)
    w = torch.empty(2000)
    nn.init.trunc_normal_(w, mean=0.5, std=2.0, a=-1.0, b=3.0)
    save("nn_init_trunc_normal", w)
    # Normal-based: PyTorch's normal_fill (16 values or more).
    torch.manual_seed(2)
    w = torch.empty(6, 5, dtype=torch.float64)
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    save("nn_init_kaiming_normal_f64", w)
    save("nn_init_embedding", nn.Embedding(10, 4).weight)

    # Activations: x is a transposed (non-contiguous) view; values around
    # the kinks and the softplus threshold included.
    g = torch.Generator().manual_seed(7)
    acts = {
        "relu": nn.ReLU(), "relu6": nn.ReLU6(), "leaky_relu": nn.LeakyReLU(0.2), "elu": nn.ELU(0.7),
        "selu": nn.SELU(), "gelu": nn.GELU(), "gelu_tanh": nn.GELU(approximate="tanh"), "silu": nn.SiLU(),
        "mish": nn.Mish(), "hardtanh": nn.Hardtanh(-0.5, 1.5), "hardswish": nn.Hardswish(),
        "hardsigmoid": nn.Hardsigmoid(), "tanh": nn.Tanh(), "sigmoid": nn.Sigmoid(),
        "softplus": nn.Softplus(beta=2.0, threshold=5.0), "softmax": nn.Softmax(dim=1),
        "log_softmax": nn.LogSoftmax(dim=0),
    }
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        base = (torch.randn(6, 4, generator=g, dtype=torch.float64) * 4).to(dtype)
        gout = torch.randn(4, 6, generator=g, dtype=torch.float64).to(dtype)
        save(f"nn_act_{tag}_x", base)
        save(f"nn_act_{tag}_gout", gout)
        for name, m in acts.items():
            x = base.clone().requires_grad_()
            y = m(x.t())
            y.backward(gout)
            save(f"nn_act_{tag}_{name}_y", y)
            save(f"nn_act_{tag}_{name}_gx", x.grad)

    # Losses, each reduction: the loss and the input's gradient.
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        x = torch.randn(6, 5, generator=g, dtype=torch.float64).to(dtype)
        y = torch.randn(6, 5, generator=g, dtype=torch.float64).to(dtype)
        p = torch.rand(6, 5, generator=g, dtype=torch.float64).to(dtype) * 0.98 + 0.01
        t01 = torch.rand(6, 5, generator=g, dtype=torch.float64).to(dtype)
        cls = torch.tensor([0, 4, 2, 2, 1, 3])
        cls_ign = torch.tensor([0, 4, -100, 2, 1, 3])
        w = torch.rand(5, generator=g, dtype=torch.float64).to(dtype) + 0.5
        pw = torch.rand(5, generator=g, dtype=torch.float64).to(dtype) + 0.5
        img = torch.randn(2, 5, 3, 2, generator=g, dtype=torch.float64).to(dtype)
        img_t = torch.randint(0, 5, (2, 3, 2), generator=g)
        probs = torch.softmax(torch.randn(6, 5, generator=g, dtype=torch.float64), 1).to(dtype)
        for name, v in [("x", x), ("y", y), ("p", p), ("t01", t01), ("w", w), ("pw", pw), ("img", img),
                        ("probs", probs)]:
            save(f"nn_loss_{tag}_{name}", v)
        save(f"nn_loss_{tag}_cls", cls)
        save(f"nn_loss_{tag}_cls_ign", cls_ign)
        save(f"nn_loss_{tag}_img_t", img_t)
        cases = {
            "mse": lambda i, r: F.mse_loss(i, y, reduction=r),
            "l1": lambda i, r: F.l1_loss(i, y, reduction=r),
            "smooth_l1": lambda i, r: F.smooth_l1_loss(i, y, reduction=r, beta=0.5),
            "huber": lambda i, r: F.huber_loss(i, y, reduction=r, delta=0.7),
            "nll": lambda i, r: F.nll_loss(F.log_softmax(i, 1), cls_ign, reduction=r),
            "nll_w": lambda i, r: F.nll_loss(F.log_softmax(i, 1), cls_ign, weight=w, reduction=r),
            "ce": lambda i, r: F.cross_entropy(i, cls, reduction=r),
            "ce_w_ign_ls": lambda i, r: F.cross_entropy(i, cls_ign, weight=w, reduction=r, label_smoothing=0.2),
            "ce_ign_ls": lambda i, r: F.cross_entropy(i, cls_ign, reduction=r, label_smoothing=0.1),
            "ce_probs": lambda i, r: F.cross_entropy(i, probs, reduction=r),
            "ce_probs_w_ls": lambda i, r: F.cross_entropy(i, probs, weight=w, reduction=r, label_smoothing=0.3),
            "bce": lambda i, r: F.binary_cross_entropy(torch.sigmoid(i), t01, reduction=r),
            "bce_w": lambda i, r: F.binary_cross_entropy(torch.sigmoid(i), t01, weight=w, reduction=r),
            "bce_logits": lambda i, r: F.binary_cross_entropy_with_logits(i * 8, t01, reduction=r),
            "bce_logits_pw": lambda i, r: F.binary_cross_entropy_with_logits(i * 8, t01, weight=w, pos_weight=pw,
                                                                             reduction=r),
        }
        for name, f in cases.items():
            for r in ["none", "mean", "sum"]:
                i = x.clone().requires_grad_()
                out = f(i, r)
                out.backward(torch.ones_like(out))
                save(f"nn_loss_{tag}_{name}_{r}", out)
                save(f"nn_loss_{tag}_{name}_{r}_gx", i.grad)
        for r in ["none", "mean", "sum"]:
            i = img.clone().requires_grad_()
            out = F.cross_entropy(i, img_t, reduction=r, label_smoothing=0.1)
            out.backward(torch.ones_like(out))
            save(f"nn_loss_{tag}_ce_spatial_{r}", out)
            save(f"nn_loss_{tag}_ce_spatial_{r}_gx", i.grad)

    # Module trees: state_dict keys and repr.
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.LeakyReLU(0.2), nn.Identity())
            self.heads = nn.ModuleList([nn.Linear(8, 3), nn.Linear(8, 2, bias=False)])
            self.acts = nn.ModuleDict({"gelu": nn.GELU(approximate="tanh"), "soft": nn.Softmax(dim=1)})
            self.loss = nn.CrossEntropyLoss(weight=torch.ones(3))
            self.register_buffer("scale", torch.ones(1))

    net = Net()
    with open(os.path.join(OUT, "nn_modules.txt"), "w") as f:
        f.write("=== repr\n" + repr(net) + "\n")
        f.write("=== state_dict\n" + "\n".join(net.state_dict().keys()) + "\n")
        f.write("=== parameters\n" + "\n".join(k for k, _ in net.named_parameters()) + "\n")
        f.write("=== modules\n" + "\n".join(k for k, _ in net.named_modules()) + "\n")
        try:
            net.features.load_state_dict({"1.weight": torch.zeros(2, 3), "1.bias": torch.zeros(8), "x": torch.zeros(1)})
        except RuntimeError as e:
            f.write("=== load_error\n" + str(e) + "\n")
        f.write("=== end\n")


def _save_forward_backward(prefix, tensors, f, g):
    """f's inputs, output, a random output gradient from g, and the inputs'
    gradients, as prefix_in0, prefix_out, prefix_gout, prefix_grad0, ..."""
    leaves = [t.clone().requires_grad_() for t in tensors]
    out = f(*leaves)
    gout = torch.randn(out.shape, generator=g, dtype=torch.float64).to(out.dtype)
    out.backward(gout)
    for i, t in enumerate(tensors):
        save(f"{prefix}_in{i}", t)
        save(f"{prefix}_grad{i}", leaves[i].grad)
    save(f"{prefix}_gout", gout)
    save(f"{prefix}_out", out)


def linalg_qr():
    """torch.linalg.qr: Q and R in each mode (float and double; tall, square,
    wide and batched), and A's gradient for gradients of Q and R together
    and of each alone (qr_*)."""
    g = torch.Generator().manual_seed(59)
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        for shape in [(5, 3), (4, 4), (3, 5), (2, 4, 3)]:
            name = f"qr_{tag}_" + "x".join(map(str, shape))
            a = torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
            for mode in ("reduced", "complete", "r"):
                q, r = torch.linalg.qr(a, mode)
                save(f"{name}_{mode}_q", q)
                save(f"{name}_{mode}_r", r)

            def both(x):
                q, r = torch.linalg.qr(x)
                return torch.cat([q.reshape(-1), r.reshape(-1)])

            _save_forward_backward(f"{name}_both", [a], both, g)
            _save_forward_backward(f"{name}_qonly", [a], lambda x: torch.linalg.qr(x)[0], g)
            _save_forward_backward(f"{name}_ronly", [a], lambda x: torch.linalg.qr(x)[1], g)


def linalg_householder():
    """torch.geqrf, torch.linalg.householder_product (with the gradients of
    the reflectors and tau, fewer reflectors than columns included) and
    torch.ormqr on each side, transposed or not (hh_*)."""
    g = torch.Generator().manual_seed(61)
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
        for shape in [(5, 3), (4, 4), (3, 5), (2, 4, 3)]:
            name = f"hh_{tag}_" + "x".join(map(str, shape))
            a = r(*shape)
            h, tau = torch.geqrf(a)
            save(f"{name}_a", a)
            save(f"{name}_geqrf", h)
            save(f"{name}_tau", tau)
            m, n = shape[-2], shape[-1]
            for left in (True, False):
                for transpose in (False, True):
                    c = r(*shape[:-2], m, 2) if left else r(*shape[:-2], 2, m)
                    side = ("left" if left else "right") + ("_t" if transpose else "")
                    save(f"{name}_ormqr_{side}_c", c)
                    save(f"{name}_ormqr_{side}", torch.ormqr(h, tau, c, left=left, transpose=transpose))
            if m >= n:
                _save_forward_backward(f"{name}_hp", [h, tau], torch.linalg.householder_product, g)
                _save_forward_backward(f"{name}_hp_short", [h, tau[..., :n - 1]], torch.linalg.householder_product, g)


def linalg_eigh():
    """torch.linalg.eigh and eigvalsh of symmetric matrices (float and
    double, single and batched): eigenvalues, eigenvectors (unique up to
    sign), and A's gradient for a loss of the values and the squared
    vectors, which the signs do not change (eigh_*)."""
    g = torch.Generator().manual_seed(61)
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        for shape in [(1, 1), (4, 4), (7, 7), (2, 3, 3)]:
            name = f"eigh_{tag}_" + "x".join(map(str, shape))
            m = torch.randn(*shape, generator=g, dtype=torch.float64)
            a = (m + m.transpose(-1, -2)).to(dtype)
            values, vectors = torch.linalg.eigh(a)
            save(f"{name}_values", values)
            save(f"{name}_vectors", vectors)
            save(f"{name}_values_upper", torch.linalg.eigvalsh(torch.triu(a), "U"))

            def loss(x):
                v, w = torch.linalg.eigh(x)
                return torch.cat([v.reshape(-1), (w * w).reshape(-1)])

            _save_forward_backward(f"{name}_grad", [a], loss, g)


def linalg_svd():
    """torch.linalg.svd and svdvals (float and double; tall, square, wide and
    batched): singular values, the singular vectors (unique up to a common
    sign per pair), and A's gradient for a loss of S and the squared
    vectors, which the signs do not change (svd_*)."""
    g = torch.Generator().manual_seed(67)
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        for shape in [(5, 3), (4, 4), (3, 5), (2, 4, 2)]:
            name = f"svd_{tag}_" + "x".join(map(str, shape))
            a = torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
            u, s, vh = torch.linalg.svd(a, full_matrices=False)
            save(f"{name}_u", u)
            save(f"{name}_s", s)
            save(f"{name}_vh", vh)
            save(f"{name}_svdvals", torch.linalg.svdvals(a))

            def loss(x):
                u, s, vh = torch.linalg.svd(x, full_matrices=False)
                return torch.cat([s.reshape(-1), (u * u).reshape(-1), (vh * vh).reshape(-1)])

            _save_forward_backward(f"{name}_grad", [a], loss, g)


def views_overlapping():
    """Tensor.unfold and overlapping as_strided views: the view and its input's
    gradient, where overlapping elements' gradients add (vo_*); sum_to_size;
    retain_grad's kept gradients, with hooks, in-place writes and two
    backwards."""
    g = torch.Generator().manual_seed(67)
    x = torch.randn(3, 5, generator=g, dtype=torch.float64)
    for name, f in {"unfold_step1": lambda t: t.unfold(1, 2, 1),
                    "unfold_dim0": lambda t: t.unfold(0, 2, 1),
                    "unfold_gap": lambda t: t.unfold(-1, 2, 3),
                    "unfold_whole": lambda t: t.unfold(1, 5, 1),
                    "strided_overlap": lambda t: t.as_strided([4, 3], [1, 1], 2),
                    "strided_two_dims": lambda t: t.as_strided([2, 3, 3], [3, 2, 1], 1),
                    "sum_to_size": lambda t: t.reshape(3, 1, 5).expand(2, 3, 4, 5).sum_to_size(3, 1, 5),
                    "sum_to_size_lead": lambda t: t.sum_to_size(1, 5)}.items():
        _save_forward_backward(f"vo_{name}", [x], f, g)
    # retain_grad: a hook registered before it changes what is kept, one after it does not.
    a = torch.randn(4, generator=g, dtype=torch.float64, requires_grad=True)
    save("vo_rg_a", a.detach())
    b = a * 2
    b.register_hook(lambda t: t * 10)
    b.retain_grad()
    c = b.sin()
    c.retain_grad()
    c.register_hook(lambda t: t * 3)
    (c * c).sum().backward()
    save("vo_rg_b_grad", b.grad)
    save("vo_rg_c_grad", c.grad)
    save("vo_rg_a_grad", a.grad)
    # In place after retain_grad: the kept gradient is the new value's.
    a.grad = None
    d = a * 2
    d.retain_grad()
    d.add_(a * a)
    (d * a).sum().backward()
    save("vo_rg_inplace_grad", d.grad)
    save("vo_rg_inplace_a_grad", a.grad)
    # Two backwards accumulate.
    e = a.exp()
    e.retain_grad()
    f = (e * e).sum()
    f.backward(retain_graph=True)
    f.backward()
    save("vo_rg_twice_grad", e.grad)


def scatter_reduce_cases():
    """torch.scatter_reduce for each reduction, with and without self, along
    both dims of a matrix, and its gradients; ties for amax/amin and zeros,
    lone and repeated, for prod (sr_*). Also gcd, lcm, in-range shifts,
    nextafter and frexp (ip_*)."""
    g = torch.Generator().manual_seed(71)
    self_ = (torch.randn(3, 4, generator=g, dtype=torch.float64) * 2).round() / 2
    src = (torch.randn(3, 5, generator=g, dtype=torch.float64) * 2).round() / 2
    self_[0, 1] = 0.0
    src[1, 0] = 0.0  # a lone zero ...
    src[2, 3] = src[2, 4] = 0.0  # ... and two that may meet
    index1 = torch.tensor([[0, 1, 0, 3], [2, 2, 1, 0], [3, 3, 3, 1]])  # along dim 1 (index narrower than src)
    index0 = torch.tensor([[2, 0, 1, 1, 0], [0, 0, 2, 1, 2]])  # along dim 0
    save("sr_self", self_)
    save("sr_src", src)
    save("sr_index1", index1)
    save("sr_index0", index0)
    src0 = src[:2, :4]  # index0 (first 4 columns) has 2 rows, self 4 columns
    save("sr_src0", src0)
    for reduce in ["sum", "prod", "mean", "amax", "amin"]:
        for inc in [True, False]:
            tag = f"{reduce}_{'self' if inc else 'noself'}"
            if not (reduce == "prod" and not inc):
                _save_forward_backward(f"sr_d1_{tag}", [self_, src[:, :4]],
                                       lambda a, b: a.scatter_reduce(1, index1, b, reduce, include_self=inc), g)
            idx0 = index0[:, :4]
            _save_forward_backward(f"sr_d0_{tag}", [self_, src0],
                                   lambda a, b: a.scatter_reduce(0, idx0, b, reduce, include_self=inc), g)
    # src wider than index (its extra column unread): values only, since
    # PyTorch's backward refuses the shape (tessera gives the unread ones 0).
    save("sr_wide_amin", self_.scatter_reduce(1, index1, src, "amin"))
    si = torch.tensor([[1, -2, 3, 4], [5, 6, -7, 8]])
    srci = torch.tensor([[-5, 6, 7, 8, 9], [10, -11, 12, 13, -14]])
    idxi = torch.tensor([[0, 0, 1, 1], [3, 3, 3, 2]])
    save("sr_int_mean_self", si.scatter_reduce(1, idxi, srci, "mean"))
    save("sr_int_mean_noself", si.scatter_reduce(1, idxi, srci, "mean", include_self=False))
    save("sr_int_prod", si.scatter_reduce(1, idxi, srci, "prod", include_self=False))

    a = torch.tensor([12, -12, 0, 0, 7, 2**40, -9, 35], dtype=torch.int64)
    b = torch.tensor([18, 18, 0, -5, 0, 2**36 * 3, 6, -49], dtype=torch.int64)
    save("ip_a", a)
    save("ip_b", b)
    save("ip_gcd", torch.gcd(a, b))
    save("ip_lcm", torch.lcm(a, b))
    x = torch.tensor([1, -1, 5, -5, 3, -8, 2**30, -7], dtype=torch.int32)
    n = torch.tensor([0, 1, 31, 2, 4, 3, 1, 30], dtype=torch.int32)
    save("ip_x", x)
    save("ip_n", n)
    save("ip_shl", torch.bitwise_left_shift(x, n))
    save("ip_shr", torch.bitwise_right_shift(x, n))
    f = torch.tensor([1.0, 0.0, -0.0, float("inf"), -float("inf"), 3.5, -2.25, 1e-40, float("nan")])
    t = torch.tensor([2.0, -1.0, 1.0, 0.0, 0.0, 3.5, -10.0, 0.0, 1.0])
    save("ip_f", f)
    save("ip_t", t)
    save("ip_nextafter", torch.nextafter(f, t))
    save("ip_nextafter_f64", torch.nextafter(f.double(), t.double()))
    m, e = torch.frexp(f)
    save("ip_frexp_m", m)
    save("ip_frexp_e", e)


def advanced_indexing():
    """x[i, j] and x[i, j] = v with several index tensors (torch.index and
    index_put): adjacent and separated indexed dims, broadcasting indices,
    negative ones, bool masks, accumulation over repeats, and gradients
    (ai_*)."""
    g = torch.Generator().manual_seed(73)
    x = torch.randn(3, 4, 5, generator=g, dtype=torch.float64)
    i = torch.tensor([[0, 2], [-1, 1]])
    j = torch.tensor([3, -2, 0])
    k = torch.tensor([[2], [-2]])
    save("ai_i", i)
    save("ai_j", j)
    save("ai_k", k)
    cases = {
        "first": lambda t: t[i],
        "adjacent": lambda t: t[:, j, k],
        "apart": lambda t: t[k, :, j],
        "all": lambda t: t[k, j, k],
    }
    for name, f in cases.items():
        _save_forward_backward(f"ai_{name}", [x], f, g)
    v_adj = torch.randn(2, 3, generator=g, dtype=torch.float64)  # broadcasts to t[:, j, k]'s (3, 2, 3)
    v_apart = torch.randn(4, generator=g, dtype=torch.float64)  # broadcasts to t[k, :, j]'s (2, 3, 4)
    dup = torch.tensor([1, 0, 1, 1])
    v_dup = torch.randn(4, 5, generator=g, dtype=torch.float64)
    # index_put with a whole dim: torch.index_put takes no None, so x[:, j, k] = v is written with Tensor.__setitem__.
    def put(index, accumulate):
        def f(t, v):
            out = t.clone()
            if accumulate:
                return out.index_put(index, v, accumulate=True)
            out[index] = v
            return out
        return f
    _save_forward_backward("ai_put_adjacent", [x, v_adj], put((slice(None), j, k), False), g)
    _save_forward_backward("ai_put_apart", [x, v_apart], put((k, slice(None), j), False), g)
    save("ai_dup", dup)
    _save_forward_backward("ai_put_accumulate", [x, v_dup], lambda t, v: t.index_put((dup,), v, accumulate=True), g)
    # Bool masks: each stands for its true elements' coordinates, over as many dims as it has.
    m34 = torch.rand(3, 4, generator=g) < 0.5
    m45 = torch.rand(4, 5, generator=g) < 0.5
    m3 = torch.tensor([True, False, True])
    m4 = torch.tensor([True, False, True, True])
    j2 = torch.tensor([4, -1])
    for name, mask in [("m34", m34), ("m45", m45), ("m3", m3), ("m4", m4), ("j2", j2)]:
        save(f"ai_{name}", mask)
    mask_cases = {
        "mask_first": lambda t: t[m34],
        "mask_after_whole": lambda t: t[:, m45],
        "mask_with_index": lambda t: t[k, m4],  # k (2, 1) broadcasts with m4's 3 positions
        "mask_apart": lambda t: t[m3, :, j2],
    }
    for name, f in mask_cases.items():
        _save_forward_backward(f"ai_{name}", [x], f, g)
    v_row = torch.randn(5, generator=g, dtype=torch.float64)
    v_each = torch.randn(int(m34.sum()), 5, generator=g, dtype=torch.float64)
    _save_forward_backward("ai_put_mask", [x, v_row], put((m34,), False), g)
    _save_forward_backward("ai_put_mask_accumulate", [x, v_each], put((m34,), True), g)


def distances():
    """torch.cdist for p = 0, 1, 2, 3 and inf over broadcast batches, one
    with more than 25 rows, a zero distance, and pdist, with gradients
    (cd_*)."""
    g = torch.Generator().manual_seed(79)
    x1 = torch.randn(2, 3, 4, generator=g, dtype=torch.float64)
    x2 = torch.randn(1, 5, 4, generator=g, dtype=torch.float64)
    for p, tag in [(0, "p0"), (1, "p1"), (2, "p2"), (3, "p3"), (float("inf"), "pinf")]:
        _save_forward_backward(f"cd_{tag}", [x1, x2], lambda a, b: torch.cdist(a, b, p=p), g)
    big1 = torch.randn(30, 3, generator=g, dtype=torch.float64)
    big2 = torch.randn(27, 3, generator=g, dtype=torch.float64)
    _save_forward_backward("cd_big", [big1, big2], lambda a, b: torch.cdist(a, b), g)
    same = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    other = torch.tensor([[0.0, 0.0], [3.0, 4.0]], dtype=torch.float64)
    _save_forward_backward("cd_zero", [same, other], lambda a, b: torch.cdist(a, b), g)
    rows = torch.randn(5, 3, generator=g, dtype=torch.float64)
    for p, tag in [(2, "p2"), (1, "p1"), (float("inf"), "pinf")]:
        _save_forward_backward(f"cd_pdist_{tag}", [rows], lambda a: torch.pdist(a, p=p), g)


def linalg_matrix_exp():
    """torch.linalg.matrix_exp (float and double; a norm that needs scaling,
    a batch, zeros) with gradients, and linalg.vecdot (me_*)."""
    g = torch.Generator().manual_seed(83)
    for dtype, tag in [(torch.float64, "f64"), (torch.float32, "f32")]:
        small = torch.randn(3, 3, generator=g, dtype=torch.float64).to(dtype)
        large = (torch.randn(4, 4, generator=g, dtype=torch.float64) * 6).to(dtype)  # 1-norm far above 5.37
        batch = torch.randn(2, 3, 2, 2, generator=g, dtype=torch.float64).to(dtype)
        for name, a in {"small": small, "large": large, "batch": batch}.items():
            _save_forward_backward(f"me_{tag}_{name}", [a], torch.linalg.matrix_exp, g)
    x = torch.randn(3, 4, generator=g, dtype=torch.float64)
    y = torch.randn(4, generator=g, dtype=torch.float64)
    _save_forward_backward("me_vecdot", [x, y], lambda a, b: torch.linalg.vecdot(a, b), g)
    _save_forward_backward("me_vecdot_dim0", [x, x * 2], lambda a, b: torch.linalg.vecdot(a, b, dim=0), g)


def linalg_lu():
    """torch.linalg.lu_factor, lu, lu_solve (each side, adjoint or not) and
    torch.lu_unpack / torch.lu_solve: factors, pivots and gradients, for
    square, tall, wide and batched matrices in float and double (lu_*)."""
    g = torch.Generator().manual_seed(97)
    for dtype, tag in [(torch.float64, "f64"), (torch.float32, "f32")]:
        for shape in [(4, 4), (5, 3), (3, 5), (2, 3, 3)]:
            name = f"lu_{tag}_" + "x".join(map(str, shape))
            a = torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
            packed, pivots = torch.linalg.lu_factor(a)
            save(f"{name}_pivots", pivots)
            _save_forward_backward(f"{name}_factor", [a], lambda x: torch.linalg.lu_factor(x)[0], g)
            batch = shape[:-2]

            def flat_lu(x):
                p, l, u = torch.linalg.lu(x)
                return torch.cat([p.reshape(*batch, -1), l.reshape(*batch, -1), u.reshape(*batch, -1)], -1)

            _save_forward_backward(f"{name}_lu", [a], flat_lu, g)
            _save_forward_backward(f"{name}_lu_l", [a], lambda x: torch.linalg.lu(x)[1], g)
            _save_forward_backward(f"{name}_lu_u", [a], lambda x: torch.linalg.lu(x)[2], g)

            def flat_unpack(x):
                p, l, u = torch.lu_unpack(x, pivots)
                return torch.cat([p.reshape(*batch, -1), l.reshape(*batch, -1), u.reshape(*batch, -1)], -1)

            _save_forward_backward(f"{name}_unpack", [packed], flat_unpack, g)
        # lu_solve on a well-conditioned matrix's factors, B broadcast over a batch.
        a = (torch.randn(2, 4, 4, generator=g, dtype=torch.float64) + 3 * torch.eye(4, dtype=torch.float64)).to(dtype)
        packed, pivots = torch.linalg.lu_factor(a)
        save(f"lu_{tag}_solve_pivots", pivots)
        for left in (True, False):
            for adjoint in (False, True):
                b = torch.randn(3, 1, *((4, 2) if left else (2, 4)), generator=g, dtype=torch.float64).to(dtype)
                _save_forward_backward(f"lu_{tag}_solve_{int(left)}{int(adjoint)}", [packed, b],
                                       lambda x, y: torch.linalg.lu_solve(x, pivots, y, left=left, adjoint=adjoint), g)
        b = torch.randn(2, 4, 3, generator=g, dtype=torch.float64).to(dtype)
        _save_forward_backward(f"lu_{tag}_old_solve", [b, packed], lambda y, x: torch.lu_solve(y, x, pivots), g)
    # A singular matrix: lu_factor_ex's info and factors (no error).
    singular = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=torch.float64)
    packed, pivots, info = torch.linalg.lu_factor_ex(singular)
    save("lu_singular_in", singular)
    save("lu_singular_packed", packed)
    save("lu_singular_pivots", pivots)
    save("lu_singular_info", info)


def linalg_lstsq():
    """torch.linalg.lstsq: solutions and their gradients (tall, wide, square,
    batched with broadcasting, vectors, rank-deficient; float and double),
    and the residuals, rank and singular values each driver fills (ls_*)."""
    g = torch.Generator().manual_seed(101)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    deficient = rand(5, 2) @ rand(2, 3)
    cases = {"tall": (rand(5, 3), rand(5, 2)), "wide": (rand(3, 5), rand(3, 2)), "square": (rand(4, 4), rand(4, 3)),
             "batch": (rand(2, 5, 3), rand(1, 5, 2)), "vector": (rand(2, 5, 3), rand(2, 5)),
             "deficient": (deficient, rand(5, 2))}
    for dtype, tag in [(torch.float64, "f64"), (torch.float32, "f32")]:
        for name, (a, b) in cases.items():
            # (PyTorch 1.13's backward fails for vectors, "mat1 and mat2 shapes
            # cannot be multiplied": their gradient is taken as one column's.)
            _save_forward_backward(f"ls_{tag}_{name}", [a.to(dtype), b.to(dtype)],
                                   lambda x, y: torch.linalg.lstsq(x, y.unsqueeze(-1)).solution.squeeze(-1)
                                   if name == "vector" else torch.linalg.lstsq(x, y).solution, g)
    for name, (a, b) in cases.items():
        for driver in ("gels", "gelsy", "gelsd", "gelss"):
            if driver == "gels" and name == "deficient":
                continue  # LAPACK divides by a rounding-level pivot there
            r = torch.linalg.lstsq(a, b, driver=driver)
            save(f"ls_{name}_{driver}_solution", r.solution)
            save(f"ls_{name}_{driver}_residuals", r.residuals)
            save(f"ls_{name}_{driver}_rank", r.rank)
            save(f"ls_{name}_{driver}_singular_values", r.singular_values)
    r = torch.linalg.lstsq(cases["tall"][0], cases["tall"][1], rcond=0.9, driver="gelsd")
    save("ls_tall_rcond_solution", r.solution)
    save("ls_tall_rcond_rank", r.rank)


def linalg_tensor_solves():
    """torch.linalg.solve with left=False, tensorinv and tensorsolve (with
    dims): values and gradients (ts_*)."""
    g = torch.Generator().manual_seed(103)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    a = rand(2, 4, 4) + 3 * torch.eye(4, dtype=torch.float64)
    _save_forward_backward("ts_solve_right", [a, rand(3, 1, 2, 4)], lambda x, y: torch.linalg.solve(x, y, left=False), g)
    _save_forward_backward("ts_tensorinv", [rand(4, 6, 8, 3)], lambda x: torch.linalg.tensorinv(x, ind=2), g)
    _save_forward_backward("ts_tensorinv_ind1", [rand(6, 2, 3)], lambda x: torch.linalg.tensorinv(x, ind=1), g)
    _save_forward_backward("ts_tensorsolve", [rand(2, 3, 6), rand(2, 3)], lambda x, y: torch.linalg.tensorsolve(x, y), g)
    _save_forward_backward("ts_tensorsolve_dims", [rand(2, 6, 3), rand(6)],
                           lambda x, y: torch.linalg.tensorsolve(x, y, dims=(0, 2)), g)


def nn_fold():
    """F.unfold and F.fold with their options, batched and not: values and
    gradients (fo_*)."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(107)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    _save_forward_backward("fo_unfold", [rand(2, 3, 5, 6)], lambda x: F.unfold(x, 2), g)
    _save_forward_backward("fo_unfold_options", [rand(2, 3, 5, 6)],
                           lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), g)
    _save_forward_backward("fo_unfold_unbatched", [rand(3, 4, 4)], lambda x: F.unfold(x, 3, padding=1, stride=2), g)
    _save_forward_backward("fo_fold", [rand(2, 12, 20)], lambda x: F.fold(x, (5, 6), 2), g)
    _save_forward_backward("fo_fold_options", [rand(2, 18, 12)],
                           lambda x: F.fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), g)
    _save_forward_backward("fo_fold_unbatched", [rand(27, 4)], lambda x: F.fold(x, (4, 4), 3, padding=1, stride=2), g)


def nn_margin_likelihood_losses():
    """soft_margin, multilabel_soft_margin, hinge_embedding, multi_margin,
    poisson_nll and gaussian_nll losses: outputs and input gradients, with
    their options and reductions (ml_*)."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(89)
    x = torch.randn(4, 5, generator=g, dtype=torch.float64)
    sign = torch.randint(0, 2, (4, 5), generator=g).double() * 2 - 1
    multi_hot = torch.randint(0, 2, (4, 5), generator=g).double()
    classes = torch.tensor([2, 0, 4, 4])
    weight = torch.rand(5, generator=g, dtype=torch.float64) + 0.5
    save("ml_x", x)
    save("ml_sign", sign)
    save("ml_multi_hot", multi_hot)
    save("ml_classes", classes)
    save("ml_weight", weight)
    for red in ["none", "mean", "sum"]:
        _save_forward_backward(f"ml_soft_margin_{red}", [x], lambda a: F.soft_margin_loss(a, sign, reduction=red), g)
        _save_forward_backward(f"ml_multilabel_{red}", [x],
                               lambda a: F.multilabel_soft_margin_loss(a, multi_hot, reduction=red), g)
        _save_forward_backward(f"ml_hinge_{red}", [x],
                               lambda a: F.hinge_embedding_loss(a, sign, margin=0.7, reduction=red), g)
        _save_forward_backward(f"ml_multi_margin_{red}", [x],
                               lambda a: F.multi_margin_loss(a, classes, reduction=red), g)
    _save_forward_backward("ml_multilabel_weight", [x],
                           lambda a: F.multilabel_soft_margin_loss(a, multi_hot, weight=weight), g)
    _save_forward_backward("ml_multi_margin_p2", [x],
                           lambda a: F.multi_margin_loss(a, classes, p=2, margin=0.5, weight=weight), g)
    _save_forward_backward("ml_multi_margin_1d", [x[0]],
                           lambda a: F.multi_margin_loss(a, classes[:1].reshape(()), reduction="none"), g)
    rates = torch.rand(4, 5, generator=g, dtype=torch.float64) * 3
    counts = torch.poisson(rates * 2, generator=g)
    save("ml_counts", counts)
    _save_forward_backward("ml_poisson_log", [x], lambda a: F.poisson_nll_loss(a, counts), g)
    _save_forward_backward("ml_poisson_full", [rates], lambda a: F.poisson_nll_loss(a, counts, log_input=False, full=True,
                                                                                 reduction="none"), g)
    target = torch.randn(4, 5, generator=g, dtype=torch.float64)
    var = torch.rand(4, 5, generator=g, dtype=torch.float64)
    var[0, 0] = 1e-9  # below eps: clamped, the gradient passing through
    save("ml_target", target)
    _save_forward_backward("ml_gaussian", [x, var], lambda a, v: F.gaussian_nll_loss(a, target, v), g)
    _save_forward_backward("ml_gaussian_full_row", [x, var[:, 0]],
                           lambda a, v: F.gaussian_nll_loss(a, target, v, full=True, reduction="sum"), g)
    _save_forward_backward("ml_gaussian_last1", [x, var[:, :1]],
                           lambda a, v: F.gaussian_nll_loss(a, target, v, reduction="none"), g)


def nn_multilabel_margin():
    """multilabel_margin_loss: targets ending at the first -1 (entries after
    it ignored), a class listed twice, no targets, every class a target;
    each reduction, an unbatched input, and input gradients (mm_*)."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(97)
    x = torch.randn(4, 5, generator=g, dtype=torch.float64)
    target = torch.tensor([[3, 0, -1, 1, 2], [4, 4, 1, -1, -1], [-1, 2, 2, 2, 2], [0, 1, 2, 3, 4]])
    save("mm_target", target)
    for red in ["none", "mean", "sum"]:
        _save_forward_backward(f"mm_{red}", [x], lambda a: F.multilabel_margin_loss(a, target, reduction=red), g)
    _save_forward_backward("mm_1d", [x[1]], lambda a: F.multilabel_margin_loss(a, target[1], reduction="none"), g)


def nn_ctc_loss():
    """ctc_loss: padded and concatenated targets, repeated labels, an empty
    target, inputs shorter than the frames, the blank last, unbatched,
    zero_infinity, each reduction, float and double; gradients through a
    log_softmax and of the log-probabilities themselves, PyTorch's formula
    (ctc_*)."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(101)
    logits = torch.randn(12, 4, 6, generator=g, dtype=torch.float64)
    targets = torch.tensor([[1, 2, 2, 5, 3], [4, 4, 4, 0, 0], [0, 0, 0, 0, 0], [5, 1, 3, 1, 2]])
    input_lengths = torch.tensor([12, 9, 7, 10])
    target_lengths = torch.tensor([5, 3, 0, 4])
    concatenated = torch.cat([targets[i, :target_lengths[i]] for i in range(4)])
    save("ctc_targets", targets)
    save("ctc_concatenated", concatenated)
    save("ctc_input_lengths", input_lengths)
    save("ctc_target_lengths", target_lengths)
    for red in ["none", "mean", "sum"]:
        _save_forward_backward(f"ctc_{red}", [logits], lambda a: F.ctc_loss(
            a.log_softmax(2), targets, input_lengths, target_lengths, reduction=red), g)
    _save_forward_backward("ctc_raw", [logits.log_softmax(2)], lambda lp: F.ctc_loss(
        lp, targets, input_lengths, target_lengths, reduction="sum"), g)
    _save_forward_backward("ctc_concat", [logits], lambda a: F.ctc_loss(
        a.log_softmax(2), concatenated, input_lengths, target_lengths, reduction="none"), g)
    last = targets.clamp_max(4)  # labels 0-4, blank 5
    save("ctc_targets_blank_last", last)
    _save_forward_backward("ctc_blank_last", [logits], lambda a: F.ctc_loss(
        a.log_softmax(2), last, input_lengths, target_lengths, blank=5, reduction="none"), g)
    _save_forward_backward("ctc_unbatched", [logits[:, 0]], lambda a: F.ctc_loss(
        a.log_softmax(1), targets[0], input_lengths[0], target_lengths[0], reduction="none"), g)
    short = torch.tensor([3, 9, 7, 10])  # sample 0 cannot fit its 5 labels into 3 frames
    save("ctc_short_lengths", short)
    _save_forward_backward("ctc_zero_infinity", [logits], lambda a: F.ctc_loss(
        a.log_softmax(2), targets, short, target_lengths, reduction="none", zero_infinity=True), g)
    _save_forward_backward("ctc_f32", [logits.float()], lambda a: F.ctc_loss(
        a.log_softmax(2), targets, input_lengths, target_lengths), g)


def nn_parameter_containers():
    """nn.ParameterList and nn.ParameterDict: reprs (float, double, 0-d,
    one and several entries, empty, nested) and state_dict keys, as text."""
    import torch.nn as nn
    P = nn.Parameter
    plist = nn.ParameterList([P(torch.zeros(2, 3)), P(torch.zeros(4, dtype=torch.float64)), P(torch.zeros(()))])
    pdict = nn.ParameterDict({"scale": P(torch.zeros(2)), "shift": P(torch.zeros(1, 2, dtype=torch.float64))})
    owner = nn.Module()
    owner.weights = plist
    owner.by_name = pdict
    with open(os.path.join(OUT, "nn_parameter_containers.txt"), "w") as f:
        f.write("=== list\n" + repr(plist) + "\n")
        f.write("=== dict\n" + repr(pdict) + "\n")
        f.write("=== one\n" + repr(nn.ParameterList([P(torch.zeros(3))])) + "\n")
        f.write("=== empty\n" + repr(nn.ParameterList()) + " " + repr(nn.ParameterDict()) + "\n")
        f.write("=== owner\n" + repr(owner) + "\n")
        f.write("=== state_dict\n" + "\n".join(owner.state_dict().keys()) + "\n")
        f.write("=== end\n")


def in_place_methods():
    """The tensor methods that write in place (x.exp_(), x.pow_(y),
    x.addcdiv_(t1, t2, value=...), x.cumprod_(0), ...): each method's result
    on float32 and int64 tensors (rows of ip_*_out, named one per line in
    ip_*_names.txt), and gradients through chains of in-place writes on a
    non-leaf and on a view of one (ip_chain_*)."""
    x = torch.tensor([-2.5, -1.0, -0.3, 0.0, 0.2, 0.5, 0.9, 1.0, 1.7, 3.2, float("inf"), float("nan")])
    y = torch.tensor([1.5, -2.0, 0.7, 3.0, -0.4, 2.0, 0.25, -1.0, 1.7, 0.5, 2.0, 1.0])
    z = torch.tensor([0.5, 1.0, -2.0, 4.0, 0.3, -0.8, 2.5, 1.0, -1.5, 3.0, 0.1, 2.0])
    unary = ["abs", "absolute", "neg", "negative", "sign", "sgn", "square", "sqrt", "rsqrt", "reciprocal", "exp",
             "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
             "cosh", "tanh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
             "sigmoid", "relu", "ceil", "floor", "round", "trunc", "fix", "frac", "erf", "erfc", "erfinv", "lgamma",
             "digamma", "sinc", "deg2rad", "rad2deg", "logit", "nan_to_num", "logical_not"]
    calls = [(n, lambda t, n=n: getattr(t, n + "_")()) for n in unary]
    binary = ["pow", "atan2", "arctan2", "remainder", "fmod", "hypot", "copysign", "nextafter", "xlogy", "ldexp",
              "multiply", "divide", "true_divide", "floor_divide", "logical_and", "logical_or", "logical_xor", "eq",
              "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater", "greater_equal",
              "heaviside"]
    calls += [(n, lambda t, n=n: getattr(t, n + "_")(y)) for n in binary]
    calls += [
        ("igamma", lambda t: t.abs_().igamma_(y.abs())), ("igammac", lambda t: t.abs_().igammac_(y.abs())),
        ("pow_scalar", lambda t: t.pow_(3)), ("add_alpha", lambda t: t.add_(y, alpha=2)),
        ("sub_alpha", lambda t: t.sub_(y, alpha=0.5)), ("subtract_alpha", lambda t: t.subtract_(y, alpha=-1.5)),
        ("clamp_min", lambda t: t.clamp_min_(0.1)), ("clamp_max", lambda t: t.clamp_max_(y)),
        ("clip", lambda t: t.clip_(-1, 1)), ("lerp", lambda t: t.lerp_(y, 0.25)), ("lerp_tensor", lambda t: t.lerp_(y, z)),
        ("addcmul", lambda t: t.addcmul_(y, z, value=0.5)), ("addcdiv", lambda t: t.addcdiv_(y, z, value=2)),
        ("div_floor", lambda t: t.div_(y, rounding_mode="floor")), ("div_trunc", lambda t: t.div_(y, rounding_mode="trunc")),
        ("divide_floor", lambda t: t.divide_(z, rounding_mode="floor")), ("round_decimals", lambda t: t.round_(decimals=1)),
        ("logit_eps", lambda t: t.logit_(0.1)), ("nan_to_num_args", lambda t: t.nan_to_num_(1.0, 5.0, -5.0)),
        ("i0", lambda t: t.clamp_(-50, 50).i0_()), ("polygamma", lambda t: t.add_(0.25).polygamma_(1)),
        ("mvlgamma", lambda t: t.abs_().add_(1).mvlgamma_(2)),
        ("chained", lambda t: t.mul_(2).add_(1).tanh_()),
    ]
    save("ip_float_in", x)
    save("ip_float_other", y)
    save("ip_float_third", z)
    save("ip_float_out", torch.stack([f(x.clone()) for _, f in calls]))
    with open(os.path.join(OUT, "ip_float_names.txt"), "w") as f:
        f.write("".join(n + "\n" for n, _ in calls))

    i = torch.tensor([-7, -3, -1, 0, 1, 2, 5, 12, 30, -16])
    j = torch.tensor([2, 5, -3, 4, 1, 3, -2, 8, 7, 3])
    icalls = [(n, lambda t, n=n: getattr(t, n + "_")()) for n in ["abs", "neg", "sign", "square", "relu", "bitwise_not", "logical_not"]]
    icalls += [(n, lambda t, n=n: getattr(t, n + "_")(j)) for n in
               ["remainder", "fmod", "floor_divide", "gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor",
                "eq", "lt", "ge", "logical_and", "multiply"]]
    icalls += [("shift_left", lambda t: t.bitwise_left_shift_(2)), ("shift_right", lambda t: t.bitwise_right_shift_(1)),
               ("pow_scalar", lambda t: t.pow_(2)), ("div_floor", lambda t: t.div_(j, rounding_mode="floor")),
               ("div_trunc", lambda t: t.div_(j, rounding_mode="trunc")), ("add_alpha", lambda t: t.add_(j, alpha=3)),
               ("clamp_min", lambda t: t.clamp_min_(-2)), ("cumsum", lambda t: t.cumsum_(0))]
    save("ip_int_in", i)
    save("ip_int_other", j)
    save("ip_int_out", torch.stack([f(i.clone()) for _, f in icalls]))
    with open(os.path.join(OUT, "ip_int_names.txt"), "w") as f:
        f.write("".join(n + "\n" for n, _ in icalls))

    # Along or across dims, and float_power_ of a double tensor.
    g = torch.Generator().manual_seed(107)
    m = torch.randn(3, 4, generator=g, dtype=torch.float64)
    save("ip_dims_in", m)
    save("ip_dims_tril", m.clone().tril_())
    save("ip_dims_triu", m.clone().triu_(1))
    save("ip_dims_cumsum", m.clone().cumsum_(1))
    save("ip_dims_cumprod", m.clone().cumprod_(0))
    save("ip_dims_renorm", m.clone().renorm_(2, 0, 1.0))
    save("ip_dims_float_power", m.clone().abs_().float_power_(m))
    save("ip_fill_diagonal_wrap", torch.zeros(7, 3).fill_diagonal_(2, wrap=True))
    save("ip_fill_diagonal_tall", torch.zeros(7, 3).fill_diagonal_(2))
    save("ip_fill_diagonal_wide", torch.zeros(3, 5).fill_diagonal_(-1.5, wrap=True))
    save("ip_fill_diagonal_cube", torch.zeros(3, 3, 3).fill_diagonal_(4))
    save("ip_fill_diagonal_view", torch.zeros(5, 4).t().fill_diagonal_(3, wrap=True).t())
    x = m.clone().requires_grad_()
    y = x * 2
    y.fill_diagonal_(5)
    (y * y).sum().backward()
    save("ip_fill_diagonal_grad", x.grad)

    # Gradients through chains of in-place writes on a non-leaf (and a view).
    w = torch.randn(3, 4, generator=g, dtype=torch.float64)
    chains = {
        "a": lambda y, x: y.sin_().pow_(2).addcdiv_(x, x.exp(), value=0.5).clamp_min_(0.05).sqrt_(),
        "b": lambda y, x: y.mul_(x).lerp_(x, 0.3).cumprod_(1),
        "c": lambda y, x: (y.renorm_(2, 0, 1.5).triu_(0).xlogy_(x.abs() + 1), y[1].exp_(), y)[-1],
    }
    for name, chain in chains.items():
        x = m.clone().requires_grad_()
        y = chain(x * 1, x)
        (y * w).sum().backward()
        save(f"ip_chain_{name}_out", y)
        save(f"ip_chain_{name}_grad", x.grad)
    save("ip_chain_w", w)


def special_multigammaln_domain():
    """multigammaln (mvlgamma) at and below (p - 1) / 2, at poles, NaN and
    infinities, where PyTorch 1.13 computes its sum of lgamma terms rather
    than refusing the input (sp_multigammaln_domain_*)."""
    x = torch.tensor([-5.0, -1.5, 0.2, 0.5, 1.0, 1.2, 2.0, float("nan"), float("inf"), float("-inf")],
                     dtype=torch.float64)
    save("sp_multigammaln_domain_in", x)
    for p in (1, 2, 3):
        save(f"sp_multigammaln_domain_p{p}", torch.special.multigammaln(x, p))


def random_in_place():
    """PyTorch's in-place samplers for a seed: exponential_, geometric_ (float
    and int64), cauchy_, log_normal_, and normal_ / randn of fewer than 16
    elements (its scalar Box-Muller path), float64 and float32 (rip_*)."""
    cases = {
        "exponential": lambda t: t.exponential_(2.0), "exponential_1": lambda t: t.exponential_(),
        "geometric": lambda t: t.geometric_(0.3), "cauchy": lambda t: t.cauchy_(1.0, 2.0),
        "log_normal": lambda t: t.log_normal_(1.0, 0.5), "normal_small": lambda t: t.view(-1)[:15].normal_(3.0, 2.0),
    }
    for dtype, tag in [(torch.float64, "f64"), (torch.float32, "f32")]:
        for name, f in cases.items():
            torch.manual_seed(11)
            t = torch.empty(6, 7, dtype=dtype)
            f(t)
            save(f"rip_{name}_{tag}", t if name != "normal_small" else t.reshape(-1)[:15])
        torch.manual_seed(12)
        save(f"rip_randn_small_{tag}", torch.randn(3, 5, dtype=dtype))
        # 16 or more: normal_fill, with the last 16 drawn again where the
        # size is not a multiple of 16.
        torch.manual_seed(14)
        save(f"rip_randn_16_{tag}", torch.randn(16, dtype=dtype))
        torch.manual_seed(15)
        save(f"rip_randn_1005_{tag}", torch.randn(5, 201, dtype=dtype))
        torch.manual_seed(16)
        save(f"rip_normal_40_{tag}", torch.empty(40, dtype=dtype).normal_(-2.0, 0.5))
    torch.manual_seed(13)
    save("rip_geometric_i64", torch.empty(5, 8, dtype=torch.int64).geometric_(0.2))
    # random_ without bounds, with one and with two.
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64"), (torch.int64, "i64"), (torch.int32, "i32"),
                       (torch.bool, "b")]:
        torch.manual_seed(19)
        save(f"rip_random_{tag}", torch.empty(12, dtype=dtype).random_().to(torch.float64 if dtype != torch.int64 else dtype))
    torch.manual_seed(20)
    save("rip_random_to_f32", torch.empty(12).random_(7))
    torch.manual_seed(20)
    save("rip_random_from_to_i32", torch.empty(12, dtype=torch.int32).random_(-50, 50))
    # randint: 32 random bits modulo the range, 64 for ranges of 2^32 or more.
    torch.manual_seed(17)
    save("rip_randint", torch.randint(-3, 7, (6, 9)))
    torch.manual_seed(18)
    save("rip_randint_wide", torch.randint(-2**40, 2**41, (20,)))


def random_layers():
    """Dropout (float and double, 2-d channel dropout), alpha dropout and
    feature alpha dropout in training, RReLU's training slopes,
    bernoulli with tensor probabilities, multinomial, poisson, normal with
    tensor parameters and gumbel_softmax, for a seed: PyTorch's draws
    (rl_*)."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(109)
    x64 = torch.randn(4, 3, 5, generator=g, dtype=torch.float64)
    x64[0, 0, :3] = torch.tensor([0.0, -0.0, float("nan")], dtype=torch.float64)
    for dtype, tag in [(torch.float64, "f64"), (torch.float32, "f32")]:
        x = x64.to(dtype)
        save(f"rl_in_{tag}", x)
        for name, f in {"dropout": lambda t: F.dropout(t, 0.3), "dropout_p1": lambda t: F.dropout(t, 0.9),
                        "dropout2d": lambda t: F.dropout2d(t, 0.4), "alpha": lambda t: F.alpha_dropout(t, 0.2, True),
                        "feature_alpha": lambda t: F.feature_alpha_dropout(t, 0.35, True),
                        "rrelu": lambda t: F.rrelu(t, 0.1, 0.4, training=True)}.items():
            torch.manual_seed(21)
            save(f"rl_{name}_{tag}", f(x))
        torch.manual_seed(22)
        probs = torch.linspace(0, 1, 60, dtype=dtype).reshape(6, 10)
        save(f"rl_bernoulli_{tag}", torch.bernoulli(probs))
        # multinomial: without replacement (Exp(1) keys), with it (cumulative
        # search), and one sample with replacement (the keys again).
        w = torch.tensor([[0.1, 0.0, 2.0, 0.7, 0.7, 1.3, 0.05, 0.0, 3.0, 0.4],
                          [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                          [0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 1e-3, 0.0, 0.0, 2.0]], dtype=dtype)
        torch.manual_seed(23)
        save(f"rl_multinomial_{tag}", torch.multinomial(w, 3))
        torch.manual_seed(24)
        save(f"rl_multinomial_replacement_{tag}", torch.multinomial(w, 40, replacement=True))
        torch.manual_seed(25)
        save(f"rl_multinomial_one_{tag}", torch.multinomial(w[0], 1, replacement=True))
        # poisson (below and above rate 10), normal with tensor parameters.
        torch.manual_seed(26)
        save(f"rl_poisson_{tag}", torch.poisson(torch.tensor([0.0, 0.5, 3.0, 9.9, 10.0, 25.0, 200.0] * 3, dtype=dtype)))
        mean = torch.linspace(-2, 2, 21, dtype=dtype)
        std = torch.linspace(0.1, 3, 21, dtype=dtype)
        save(f"rl_normal_mean_{tag}", mean)
        save(f"rl_normal_std_{tag}", std)
        torch.manual_seed(27)
        save(f"rl_normal_tt_{tag}", torch.normal(mean, std))
        torch.manual_seed(28)
        save(f"rl_normal_td_{tag}", torch.normal(mean, 0.7))
        torch.manual_seed(29)
        save(f"rl_normal_dt_{tag}", torch.normal(1.5, std))
        torch.manual_seed(30)
        save(f"rl_normal_small_{tag}", torch.normal(mean[:5], 0.7))
        # gumbel_softmax: soft, a temperature over dim 1, hard (the one-hot
        # plus the soft sample's gradient), on logits with a NaN; the
        # gradient of a weighted sum of the hard sample.
        weights = torch.linspace(-1, 2, x.numel(), dtype=dtype).reshape(x.shape)
        for name, kwargs in {"soft": {}, "tau": {"tau": 0.5, "dim": 1}, "hard": {"hard": True}}.items():
            logits = x.clone().requires_grad_()
            torch.manual_seed(31)
            y = F.gumbel_softmax(logits, **kwargs)
            (y * weights).sum().backward()
            save(f"rl_gumbel_{name}_{tag}", y.detach())
            save(f"rl_gumbel_{name}_grad_{tag}", logits.grad)


def nn_layers_3d():
    """The 3-d layers: conv3d (groups, strides, padding, dilation, 'same',
    unbatched, float), max_pool3d (dilation, ceil_mode, ties at zero),
    avg_pool3d (count_include_pad, ceil_mode, divisor_override),
    adaptive_avg_pool3d, adaptive_max_pool3d, BatchNorm3d and InstanceNorm3d
    modules; outputs and
    every gradient; Conv3d's initial weights for a seed and the reprs (l3_*)."""
    import torch.nn as nn
    F = torch.nn.functional
    g = torch.Generator().manual_seed(103)

    def r(*shape, dtype=torch.float64):
        return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

    _save_forward_backward("l3_conv", [r(2, 4, 5, 6, 5), r(6, 2, 3, 2, 3), r(6)], lambda x, w, b: F.conv3d(
        x, w, b, stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2), g)
    _save_forward_backward("l3_conv_same", [r(1, 2, 4, 5, 6), r(3, 2, 3, 3, 2)], lambda x, w: F.conv3d(
        x, w, padding="same", dilation=(2, 1, 1)), g)
    _save_forward_backward("l3_conv_unbatched", [r(2, 3, 3, 4), r(2, 2, 2, 2, 2), r(2)], lambda x, w, b: F.conv3d(x, w, b), g)
    _save_forward_backward("l3_conv_f32", [r(2, 3, 4, 5, 4, dtype=torch.float32), r(4, 3, 2, 3, 3, dtype=torch.float32)],
                           lambda x, w: F.conv3d(x, w, padding=1), g)
    _save_forward_backward("l3_max", [r(2, 3, 5, 6, 7)], lambda x: F.max_pool3d(
        x, (2, 3, 3), stride=(1, 2, 2), padding=1, dilation=(2, 1, 1), ceil_mode=True), g)
    _save_forward_backward("l3_max_ties", [r(2, 2, 4, 4, 4).clamp_min(0)], lambda x: F.max_pool3d(x, 2), g)
    _save_forward_backward("l3_avg", [r(2, 3, 5, 6, 7)], lambda x: F.avg_pool3d(
        x, 3, stride=2, padding=(1, 1, 0), ceil_mode=True, count_include_pad=False), g)
    _save_forward_backward("l3_avg_pad", [r(1, 2, 4, 5, 5)], lambda x: F.avg_pool3d(x, (2, 3, 3), stride=(1, 2, 2), padding=1,
                                                                                      ceil_mode=True), g)
    _save_forward_backward("l3_avg_divisor", [r(3, 4, 5, 6)], lambda x: F.avg_pool3d(x, 2, divisor_override=5), g)
    _save_forward_backward("l3_adaptive", [r(2, 3, 5, 7, 6)], lambda x: F.adaptive_avg_pool3d(x, (2, 3, 4)), g)
    torch.manual_seed(7)
    bn = nn.BatchNorm3d(3).double()
    bn.weight.data = r(3)
    bn.bias.data = r(3)
    save("l3_batch_norm_weight", bn.weight)
    save("l3_batch_norm_bias", bn.bias)
    _save_module_case("l3_batch_norm", bn, [r(4, 3, 2, 3, 2) * 2 + 1], lambda m, x: m(x), g)
    save("l3_batch_norm_running_mean", bn.running_mean)
    save("l3_batch_norm_running_var", bn.running_var)
    inorm = nn.InstanceNorm3d(3, affine=True).double()
    inorm.weight.data = r(3)
    inorm.bias.data = r(3)
    save("l3_instance_norm_weight", inorm.weight)
    save("l3_instance_norm_bias", inorm.bias)
    _save_module_case("l3_instance_norm", inorm, [r(2, 3, 2, 3, 4)], lambda m, x: m(x), g)
    torch.manual_seed(11)
    conv = nn.Conv3d(2, 4, (1, 2, 3))
    save("l3_init_weight", conv.weight)
    save("l3_init_bias", conv.bias)
    modules = [conv, nn.Conv3d(2, 4, 3, stride=(2, 1, 1), padding=1, dilation=(1, 2, 1), groups=2, bias=False),
               nn.Conv3d(2, 4, 3, padding="same"), nn.MaxPool3d(2),
               nn.MaxPool3d((2, 3, 3), stride=(1, 2, 2), padding=1, dilation=2, ceil_mode=True), nn.AvgPool3d(3),
               nn.AvgPool3d((2, 3, 3), stride=1, padding=(0, 1, 1)), nn.AdaptiveAvgPool3d(2),
               nn.AdaptiveAvgPool3d((1, 2, 3)), nn.BatchNorm3d(3), nn.InstanceNorm3d(3), nn.AdaptiveMaxPool3d(2),
               nn.AdaptiveMaxPool3d((1, 2, 3))]
    with open(os.path.join(OUT, "nn_layers_3d.txt"), "w") as f:
        f.write("\n".join(repr(m) for m in modules) + "\n")
    # adaptive_max_pool3d: overlapping windows, ties at zero (the gradient
    # goes to each window's first maximum), an unbatched input.
    _save_forward_backward("l3_adaptive_max", [r(2, 3, 5, 7, 6)], lambda x: F.adaptive_max_pool3d(x, (2, 3, 4)), g)
    _save_forward_backward("l3_adaptive_max_ties", [r(2, 2, 4, 4, 5).clamp_min(0)],
                           lambda x: F.adaptive_max_pool3d(x, (3, 3, 3)), g)
    _save_forward_backward("l3_adaptive_max_unbatched", [r(3, 5, 4, 6)], lambda x: F.adaptive_max_pool3d(x, (2, 2, 3)), g)
    # conv_transpose3d: groups, strides, padding, output padding, dilation,
    # unbatched, float; ConvTranspose3d's initial weights for a seed.
    _save_forward_backward("l3_convt", [r(2, 4, 3, 4, 3), r(4, 3, 2, 3, 2), r(6)], lambda x, w, b: F.conv_transpose3d(
        x, w, b, stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 1), groups=2, dilation=(1, 2, 1)), g)
    _save_forward_backward("l3_convt_unbatched", [r(2, 3, 2, 4), r(2, 3, 3, 2, 2)], lambda x, w: F.conv_transpose3d(
        x, w, padding=(2, 1, 0), dilation=(2, 1, 1)), g)
    _save_forward_backward("l3_convt_f32", [r(1, 3, 2, 3, 3, dtype=torch.float32), r(3, 2, 3, 2, 2, dtype=torch.float32),
                                            r(2, dtype=torch.float32)], lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2), g)
    torch.manual_seed(12)
    convt = nn.ConvTranspose3d(2, 4, (1, 2, 3))
    save("l3_convt_init_weight", convt.weight)
    save("l3_convt_init_bias", convt.bias)
    with open(os.path.join(OUT, "nn_layers_3d_convt.txt"), "w") as f:
        f.write("\n".join(repr(m) for m in [convt, nn.ConvTranspose3d(2, 4, (2, 3, 3), stride=(1, 2, 1), padding=1,
                output_padding=(0, 1, 0), groups=2, bias=False, dilation=(2, 1, 1))]) + "\n")


def linalg_norms():
    """torch.linalg.vector_norm, matrix_norm, norm, cond, matrix_rank and
    pinv (ln_*)."""
    g = torch.Generator().manual_seed(71)
    a = torch.randn(2, 3, 4, generator=g, dtype=torch.float64)
    save("ln_a", a)
    inf = float("inf")
    for ord in ("fro", "nuc", 1, -1, 2, -2, inf, -inf):
        tag = str(ord).replace("-", "m")
        save(f"ln_matrix_{tag}", torch.linalg.matrix_norm(a, ord))
        save(f"ln_matrix_{tag}_dims", torch.linalg.matrix_norm(a, ord, dim=(2, 0), keepdim=True))
    save("ln_vector_3", torch.linalg.vector_norm(a, 3, dim=(0, 2)))
    save("ln_norm", torch.linalg.norm(a))
    save("ln_norm_dim", torch.linalg.norm(a, dim=(1,)))
    save("ln_norm_matrix_2", torch.linalg.norm(a[0], 2))
    save("ln_norm_vector_inf", torch.linalg.norm(a[0, 0], inf))
    sq = a[:, :, :3]
    for ord in (None, 2, -2, "fro", "nuc", 1, -inf):
        tag = str(ord).replace("-", "m")
        save(f"ln_cond_{tag}", torch.linalg.cond(sq, ord))
    low = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=torch.float64)
    save("ln_low", low)
    save("ln_rank", torch.linalg.matrix_rank(torch.stack([low, torch.eye(3, dtype=torch.float64), torch.zeros(3, 3, dtype=torch.float64)])))
    save("ln_rank_atol", torch.linalg.matrix_rank(a, atol=1.0, rtol=0.0))
    save("ln_pinv", torch.linalg.pinv(a))
    save("ln_pinv_low", torch.linalg.pinv(low))
    _save_forward_backward("ln_grad", [a], lambda x: torch.cat([
        torch.linalg.matrix_norm(x, "nuc"), torch.linalg.matrix_norm(x, 2), torch.linalg.matrix_norm(x, -inf),
        torch.linalg.cond(x).reshape(-1), torch.linalg.pinv(x).reshape(-1)]), g)


def nn_layers():
    """nn: convolutions, pooling, normalization and embeddings (outputs and
    gradients of inputs and parameters, float and double), the convolutions'
    initial weights, and a CNN's repr."""
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    c2 = nn.Conv2d(1, 16, 5, padding=2)
    c1 = nn.Conv1d(2, 4, 3)
    save("nn_init_conv2d_weight", c2.weight)
    save("nn_init_conv2d_bias", c2.bias)
    save("nn_init_conv1d_weight", c1.weight)
    save("nn_init_conv1d_bias", c1.bias)

    g = torch.Generator().manual_seed(11)

    def run(name, tensors, f, tag):
        _save_forward_backward(f"nn_layer_{tag}_{name}", tensors, f, g)

    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
        run("conv2d_basic", [r(2, 3, 7, 6), r(4, 3, 3, 3), r(4)], lambda x, w, b: F.conv2d(x, w, b), tag)
        run("conv2d_options", [r(2, 4, 9, 8), r(6, 2, 3, 2), r(6)],
            lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2), tag)
        run("conv2d_same_even", [r(1, 2, 6, 5), r(3, 2, 4, 2)], lambda x, w: F.conv2d(x, w, padding="same"), tag)
        run("conv2d_unbatched_strided_input", [r(3, 8, 5), r(2, 3, 2, 2)],
            lambda x, w: F.conv2d(x.transpose(1, 2), w, stride=2), tag)
        run("conv1d", [r(2, 3, 10), r(5, 3, 3), r(5)], lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2), tag)
        run("max_pool2d", [r(2, 3, 9, 7)], lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), tag)
        run("max_pool2d_dilated", [r(1, 2, 8, 8)], lambda x: F.max_pool2d(x, 2, stride=1, dilation=2), tag)
        run("avg_pool2d", [r(2, 3, 9, 7)], lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), tag)
        run("avg_pool2d_exclude_pad", [r(2, 3, 9, 7)],
            lambda x: F.avg_pool2d(x, (3, 2), stride=2, padding=1, ceil_mode=True, count_include_pad=False), tag)
        run("max_pool1d", [r(2, 3, 11)], lambda x: F.max_pool1d(x, 3, stride=2, padding=1), tag)
        run("avg_pool1d", [r(2, 3, 11)], lambda x: F.avg_pool1d(x, 4, stride=3, padding=2, count_include_pad=False), tag)
        run("adaptive_avg_pool2d", [r(2, 3, 7, 5)], lambda x: F.adaptive_avg_pool2d(x, (3, 4)), tag)
        run("batch_norm_train", [r(4, 3, 5, 2) * 2 + 1, r(3), r(3)],
            lambda x, w, b: F.batch_norm(x, torch.zeros(3, dtype=dtype), torch.ones(3, dtype=dtype), w, b, True, 0.1, 1e-5), tag)
        run("batch_norm_eval", [r(4, 3), r(3), r(3)],
            lambda x, w, b: F.batch_norm(x, torch.full((3,), 0.5, dtype=dtype), torch.full((3,), 2.0, dtype=dtype), w, b,
                                         False, 0.1, 1e-5), tag)
        run("layer_norm", [r(3, 4, 5), r(4, 5), r(4, 5)], lambda x, w, b: F.layer_norm(x, (4, 5), w, b), tag)
        run("group_norm", [r(2, 6, 3, 2), r(6), r(6)], lambda x, w, b: F.group_norm(x, 3, w, b), tag)
        run("embedding", [r(10, 3)], lambda w: F.embedding(torch.tensor([[1, 0, 4], [4, 9, 0]]), w, padding_idx=0), tag)
        # BatchNorm2d's running statistics after two training steps.
        bn = nn.BatchNorm2d(3).to(dtype)
        x1, x2 = r(4, 3, 2, 2) * 3, r(2, 3, 3, 1) - 1
        bn(x1)
        bn(x2)
        save(f"nn_layer_{tag}_bn_x1", x1)
        save(f"nn_layer_{tag}_bn_x2", x2)
        save(f"nn_layer_{tag}_bn_running_mean", bn.running_mean)
        save(f"nn_layer_{tag}_bn_running_var", bn.running_var)

    cnn = nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.BatchNorm2d(16),
                        nn.Conv2d(16, 32, (3, 5), stride=2, padding=1, dilation=2, groups=4, bias=False),
                        nn.AvgPool2d(2, ceil_mode=True), nn.AdaptiveAvgPool2d((3, 4)), nn.Flatten(), nn.Dropout(0.25),
                        nn.Unflatten(1, (2, 192)), nn.LayerNorm(192), nn.GroupNorm(2, 2), nn.Conv1d(2, 2, 3, padding="same"),
                        nn.MaxPool1d(3), nn.AvgPool1d(2), nn.BatchNorm1d(2, momentum=None), nn.Embedding(5, 2, padding_idx=-1))
    with open(os.path.join(OUT, "nn_layers.txt"), "w") as f:
        f.write("=== repr\n" + repr(cnn) + "\n=== state_dict\n" + "\n".join(cnn.state_dict().keys()) + "\n=== end\n")


def nn_more_losses():
    """nn: KLDiv, CosineEmbedding, MarginRanking, TripletMargin,
    TripletMarginWithDistance (loss and the first input's gradient, every
    reduction, float and double)."""
    import torch.nn.functional as F
    g = torch.Generator().manual_seed(21)
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
        a, b, c = r(5, 4), r(5, 4), r(5, 4)
        sign = torch.tensor([1.0, -1.0, -1.0, 1.0, -1.0], dtype=dtype)
        logp = torch.log_softmax(r(5, 4), 1)
        target = torch.softmax(r(5, 4), 1)
        with torch.no_grad():
            target[0, 1] = 0  # a zero target contributes 0
        for name, v in [("a", a), ("b", b), ("c", c), ("sign", sign), ("logp", logp), ("target", target)]:
            save(f"nn_loss2_{tag}_{name}", v)
        cases = {
            "kl_div": lambda i, red: F.kl_div(i, target, reduction=red),
            "kl_div_log_target": lambda i, red: F.kl_div(i, torch.log(target + 0.1), reduction=red, log_target=True),
            "cosine_embedding": lambda i, red: F.cosine_embedding_loss(i, b, sign, margin=0.2, reduction=red),
            "margin_ranking": lambda i, red: F.margin_ranking_loss(i[:, 0], b[:, 0], sign, margin=0.3, reduction=red),
            "triplet": lambda i, red: F.triplet_margin_loss(i, b, c, margin=0.5, reduction=red),
            "triplet_swap_p1": lambda i, red: F.triplet_margin_loss(i, b, c, p=1, swap=True, reduction=red),
            "triplet_distance": lambda i, red: F.triplet_margin_with_distance_loss(i, b, c, margin=0.7, reduction=red),
            "triplet_distance_l1_swap": lambda i, red: F.triplet_margin_with_distance_loss(
                i, b, c, distance_function=lambda x, y: (x - y).abs().sum(-1), swap=True, reduction=red),
        }
        for name, f in cases.items():
            reductions = ["none", "mean", "sum"] + (["batchmean"] if name.startswith("kl_div") else [])
            for red in reductions:
                i = (logp if name.startswith("kl_div") else a).clone().requires_grad_()
                out = f(i, red)
                out.backward(torch.ones_like(out))
                save(f"nn_loss2_{tag}_{name}_{red}", out)
                save(f"nn_loss2_{tag}_{name}_{red}_gx", i.grad)


def nn_resample():
    """nn: padding, interpolation, adaptive max pooling, Bilinear, transposed
    convolution (values and gradients, float and double), Bilinear's and
    ConvTranspose2d's initial weights, dirac_."""
    import torch.nn as nn
    import torch.nn.functional as F
    torch.manual_seed(2)
    bl = nn.Bilinear(3, 4, 2)
    save("nn_init_bilinear_weight", bl.weight)
    save("nn_init_bilinear_bias", bl.bias)
    ct = nn.ConvTranspose2d(4, 6, 3, groups=2)
    save("nn_init_conv_transpose2d_weight", ct.weight)
    save("nn_init_conv_transpose2d_bias", ct.bias)
    w = torch.empty(6, 2, 3, 3)
    nn.init.dirac_(w, groups=2)
    save("nn_init_dirac", w)

    g = torch.Generator().manual_seed(31)

    def run(name, tensors, f, tag):
        _save_forward_backward(f"nn_rs_{tag}_{name}", tensors, f, g)

    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
        run("pad_constant", [r(2, 3, 4)], lambda x: F.pad(x, (1, 2, -1, 3), value=0.5), tag)
        run("pad_reflect", [r(1, 2, 4, 5)], lambda x: F.pad(x, (2, 3, 3, 1), mode="reflect"), tag)
        run("pad_replicate", [r(1, 2, 3, 4)], lambda x: F.pad(x, (3, 1, 0, 2), mode="replicate"), tag)
        run("nearest_size", [r(1, 2, 5, 3)], lambda x: F.interpolate(x, size=(7, 8), mode="nearest"), tag)
        run("nearest_scale", [r(1, 2, 4)], lambda x: F.interpolate(x, scale_factor=1.7, mode="nearest"), tag)
        run("bilinear_size", [r(2, 1, 4, 5)], lambda x: F.interpolate(x, size=(7, 3), mode="bilinear", align_corners=False), tag)
        run("bilinear_corners", [r(2, 1, 4, 5)], lambda x: F.interpolate(x, size=(6, 9), mode="bilinear", align_corners=True), tag)
        run("bilinear_scale", [r(1, 2, 3, 4)], lambda x: F.interpolate(x, scale_factor=2.5, mode="bilinear"), tag)
        run("adaptive_max_pool2d", [r(2, 3, 7, 5)], lambda x: F.adaptive_max_pool2d(x, (3, 2)), tag)
        run("bilinear_layer", [r(5, 3), r(5, 4), r(2, 3, 4), r(2)], lambda a, b, w, bias: F.bilinear(a, b, w, bias), tag)
        run("conv_transpose2d", [r(2, 4, 3, 4), r(4, 3, 3, 3), r(6)],
            lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2), tag)
        run("conv_transpose2d_dilated", [r(3, 5, 4), r(3, 2, 2, 3)],
            lambda x, w: F.conv_transpose2d(x.transpose(1, 2), w, stride=(1, 2), padding=(0, 1), dilation=(2, 1)), tag)


def nn_resample_modes():
    """nn: circular padding, every interpolation mode (nearest-exact, linear,
    bicubic, trilinear, area; 3-, 4- and 5-d inputs), average pooling with
    divisor_override (values and gradients, float and double)."""
    import torch.nn.functional as F
    g = torch.Generator().manual_seed(37)

    def run(name, tensors, f, tag):
        _save_forward_backward(f"nn_rs2_{tag}_{name}", tensors, f, g)

    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
        run("pad_circular", [r(2, 2, 3, 4)], lambda x: F.pad(x, (4, 2, 1, 3), mode="circular"), tag)
        run("pad_circular_crop", [r(1, 2, 5)], lambda x: F.pad(x, (-2, 3), mode="circular"), tag)
        run("nearest_exact", [r(1, 2, 5, 3)], lambda x: F.interpolate(x, size=(7, 2), mode="nearest-exact"), tag)
        run("nearest_exact_scale", [r(1, 2, 4)], lambda x: F.interpolate(x, scale_factor=1.7, mode="nearest-exact"), tag)
        run("linear", [r(2, 3, 5)], lambda x: F.interpolate(x, size=8, mode="linear"), tag)
        run("linear_corners", [r(2, 3, 5)], lambda x: F.interpolate(x, size=3, mode="linear", align_corners=True), tag)
        run("bicubic", [r(1, 2, 4, 5)], lambda x: F.interpolate(x, size=(7, 3), mode="bicubic"), tag)
        run("bicubic_corners", [r(1, 2, 4, 5)], lambda x: F.interpolate(x, size=(6, 9), mode="bicubic", align_corners=True), tag)
        run("bicubic_scale", [r(1, 1, 3, 4)], lambda x: F.interpolate(x, scale_factor=2.5, mode="bicubic"), tag)
        run("trilinear", [r(1, 2, 3, 4, 2)], lambda x: F.interpolate(x, size=(5, 2, 3), mode="trilinear"), tag)
        run("nearest_3d", [r(1, 1, 2, 3, 4)], lambda x: F.interpolate(x, scale_factor=(2.0, 1.5, 0.5), mode="nearest"), tag)
        run("area", [r(2, 2, 7, 5)], lambda x: F.interpolate(x, size=(3, 4), mode="area"), tag)
        run("area_1d", [r(1, 3, 9)], lambda x: F.interpolate(x, size=4, mode="area"), tag)
        run("avg_pool2d_divisor", [r(2, 3, 7, 6)],
            lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, divisor_override=5), tag)


def nn_activations_more():
    """nn: LogSigmoid, Softsign, Tanhshrink, CELU, Softshrink, Hardshrink,
    Threshold, GLU, Softmin, PReLU (one weight and one per channel),
    PixelShuffle and PixelUnshuffle (values and gradients, float and double)."""
    import torch.nn.functional as F
    g = torch.Generator().manual_seed(41)

    def run(name, tensors, f, tag):
        _save_forward_backward(f"nn_act2_{tag}_{name}", tensors, f, g)

    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return (2 * torch.randn(*shape, generator=g, dtype=torch.float64)).to(dtype)
        run("logsigmoid", [r(4, 5)], F.logsigmoid, tag)
        run("softsign", [r(4, 5)], F.softsign, tag)
        run("tanhshrink", [r(4, 5)], F.tanhshrink, tag)
        # (alpha exact in float: PyTorch's backward rounds alpha to float;
        # docs/differences.md.)
        run("celu", [r(4, 5)], lambda x: F.celu(x, 0.75), tag)
        run("softshrink", [r(4, 5)], lambda x: F.softshrink(x, 0.8), tag)
        run("hardshrink", [r(4, 5)], lambda x: F.hardshrink(x, 0.8), tag)
        run("threshold", [r(4, 5)], lambda x: F.threshold(x, 0.3, -2.0), tag)
        run("glu", [r(3, 4, 5)], lambda x: F.glu(x, 1), tag)
        run("softmin", [r(3, 4)], lambda x: F.softmin(x, 1), tag)
        run("prelu_one", [r(2, 3, 4), r(1)], F.prelu, tag)
        run("prelu_channels", [r(2, 3, 4, 2), r(3)], F.prelu, tag)
        run("pixel_shuffle", [r(2, 8, 3, 2)], lambda x: F.pixel_shuffle(x, 2), tag)
        run("pixel_unshuffle", [r(3, 1, 6, 4)], lambda x: F.pixel_unshuffle(x, 2), tag)


def nn_norms_distances():
    """nn: instance_norm (affine; 2-d; running statistics updated, then used),
    pairwise_distance, cosine_similarity, normalize (values and gradients,
    float and double)."""
    import torch.nn.functional as F
    g = torch.Generator().manual_seed(43)

    def run(name, tensors, f, tag):
        _save_forward_backward(f"nn_nd_{tag}_{name}", tensors, f, g)

    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
        run("instance_norm_affine", [r(2, 3, 5), r(3), r(3)], lambda x, w, b: F.instance_norm(x, weight=w, bias=b), tag)
        run("instance_norm_2d", [r(2, 3, 4, 3)], lambda x: F.instance_norm(x, eps=1e-3), tag)
        run("pairwise_distance", [r(4, 5), r(4, 5)], F.pairwise_distance, tag)
        run("pairwise_distance_p1", [r(4, 5), r(5)], lambda a, b: F.pairwise_distance(a, b, p=1, keepdim=True), tag)
        run("cosine_similarity", [r(4, 5), r(4, 5)], F.cosine_similarity, tag)
        run("cosine_similarity_dim0", [r(3, 4, 2), r(3, 1, 2)], lambda a, b: F.cosine_similarity(a, b, dim=0), tag)
        run("normalize", [r(3, 4)], F.normalize, tag)
        run("normalize_p1", [r(3, 4, 2)], lambda x: F.normalize(x, p=1, dim=-1), tag)
        x, rm, rv = r(3, 2, 6), r(2), r(2).abs() + 0.5
        save(f"nn_nd_{tag}_running_x", x)
        save(f"nn_nd_{tag}_running_mean0", rm)
        save(f"nn_nd_{tag}_running_var0", rv)
        save(f"nn_nd_{tag}_running_train", F.instance_norm(x, rm, rv, use_input_stats=True, momentum=0.2))
        save(f"nn_nd_{tag}_running_mean1", rm)
        save(f"nn_nd_{tag}_running_var1", rv)
        save(f"nn_nd_{tag}_running_eval", F.instance_norm(x, rm, rv, use_input_stats=False))


def nn_padding_modules():
    """nn: the padding modules (1-, 2- and 3-d) and the 1-d adaptive poolings
    (values and gradients, float and double)."""
    import torch.nn as nn
    g = torch.Generator().manual_seed(47)

    def run(name, tensors, f, tag):
        _save_forward_backward(f"nn_pm_{tag}_{name}", tensors, f, g)

    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
        run("zero_pad2d", [r(1, 2, 3, 4)], nn.ZeroPad2d((1, 1, 2, 0)), tag)
        run("constant_pad1d", [r(2, 3, 4)], nn.ConstantPad1d((3, 1), 3.5), tag)
        run("constant_pad2d", [r(2, 3, 4)], nn.ConstantPad2d(2, -1.0), tag)
        run("reflection_pad1d", [r(2, 3, 5)], nn.ReflectionPad1d((3, 1)), tag)
        run("reflection_pad2d", [r(1, 2, 4, 5)], nn.ReflectionPad2d((1, 2, 3, 0)), tag)
        run("replication_pad1d", [r(2, 3, 4)], nn.ReplicationPad1d(2), tag)
        run("replication_pad2d", [r(1, 2, 3, 4)], nn.ReplicationPad2d((1, 1, 2, 0)), tag)
        run("adaptive_avg_pool1d", [r(2, 3, 10)], nn.AdaptiveAvgPool1d(4), tag)
        run("adaptive_max_pool1d", [r(3, 7)], nn.AdaptiveMaxPool1d(3), tag)
    # The 3-d padding modules (batched and unbatched inputs).
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
        run("constant_pad3d", [r(1, 2, 2, 3, 4)], nn.ConstantPad3d((1, 0, 2, 1, 0, 1), 3.5), tag)
        run("reflection_pad3d", [r(2, 3, 4, 4)], nn.ReflectionPad3d((1, 2, 3, 0, 2, 1)), tag)
        run("replication_pad3d", [r(1, 2, 2, 3, 2)], nn.ReplicationPad3d(2), tag)


def linalg_decompositions():
    """torch.linalg: solve, solve_triangular, inv, det, slogdet and cholesky
    (values and gradients, float and double, single matrices, batches and
    broadcast batches), and singular inputs."""
    g = torch.Generator().manual_seed(53)

    def run(name, tensors, f, tag):
        _save_forward_backward(f"la2_{tag}_{name}", tensors, f, g)

    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

        def well(*shape):  # well conditioned: the identity's multiple plus noise
            n = shape[-1]
            return (r(*shape) + 4 * torch.eye(n, dtype=torch.float64).to(dtype)).to(dtype)

        def spd(*shape):
            m = r(*shape)
            n = shape[-1]
            return m @ m.transpose(-1, -2) + n * torch.eye(n, dtype=torch.float64).to(dtype)

        run("solve_matrix", [well(4, 4), r(4, 3)], torch.linalg.solve, tag)
        run("solve_vector", [well(5, 5), r(5)], torch.linalg.solve, tag)
        run("solve_batch_vectors", [well(2, 3, 3), r(2, 3)], torch.linalg.solve, tag)
        run("solve_broadcast", [well(3, 1, 4, 4), r(2, 4, 2)], torch.linalg.solve, tag)
        run("solve_one_vector_batch", [well(2, 3, 3), r(3)], torch.linalg.solve, tag)
        run("solve_large", [well(70, 70), r(70, 5)], torch.linalg.solve, tag)
        run("inv", [well(4, 4)], torch.linalg.inv, tag)
        run("inv_batch", [well(2, 3, 5, 5)], torch.linalg.inv, tag)
        run("inv_large", [well(67, 67)], torch.linalg.inv, tag)
        run("det", [r(4, 4)], torch.linalg.det, tag)
        run("det_batch", [r(3, 2, 2)], torch.linalg.det, tag)
        run("det_large", [well(40, 40) / 4], torch.linalg.det, tag)
        run("slogdet", [r(2, 4, 4)], lambda a: torch.linalg.slogdet(a)[1], tag)
        run("cholesky", [spd(4, 4)], torch.linalg.cholesky, tag)
        run("cholesky_upper", [spd(2, 3, 3)], lambda a: torch.linalg.cholesky(a, upper=True), tag)
        run("cholesky_large", [spd(80, 80)], torch.linalg.cholesky, tag)
        run("solve_triangular_upper", [well(4, 4), r(4, 2)],
            lambda a, b: torch.linalg.solve_triangular(a, b, upper=True), tag)
        run("solve_triangular_lower_unit", [well(4, 4), r(2, 4, 3)],
            lambda a, b: torch.linalg.solve_triangular(a, b, upper=False, unitriangular=True), tag)
        run("solve_triangular_right", [well(3, 3), r(2, 3)],
            lambda a, b: torch.linalg.solve_triangular(a, b, upper=True, left=False), tag)
        run("solve_triangular_right_lower", [well(2, 4, 4), r(5, 4)],
            lambda a, b: torch.linalg.solve_triangular(a, b, upper=False, left=False), tag)
    # Singular and sign cases (double): det and its gradient at singular
    # matrices (zero in PyTorch 1.13), slogdet's signs.
    singular = torch.tensor([[[1., 2.], [2., 4.]], [[0., 1.], [1., 0.]], [[2., 1.], [1., 3.]]], dtype=torch.float64)
    run("det_singular", [singular], torch.linalg.det, "f64")
    signs = torch.tensor([[[-1., 0.], [0., 2.]], [[0., 1.], [1., 0.]], [[1., 2.], [2., 4.]], [[3., 1.], [1., 2.]]],
                         dtype=torch.float64)
    sign, logabs = torch.linalg.slogdet(signs)
    save("la2_slogdet_signs_in", signs)
    save("la2_slogdet_signs_sign", sign)
    save("la2_slogdet_signs_logabs", logabs)


def linalg_compositions():
    """torch.linalg.matrix_power, multi_dot and torch.cholesky_solve (values
    and gradients, float and double)."""
    g = torch.Generator().manual_seed(61)

    def run(name, tensors, f, tag):
        _save_forward_backward(f"la3_{tag}_{name}", tensors, f, g)

    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

        def lower(*shape):  # a Cholesky-like factor: positive diagonal
            n = shape[-1]
            return (torch.tril(r(*shape)) + 3 * torch.eye(n, dtype=torch.float64).to(dtype)).to(dtype)

        run("matrix_power_3", [r(2, 3, 3) / 2], lambda a: torch.linalg.matrix_power(a, 3), tag)
        run("matrix_power_6", [r(4, 4) / 2], lambda a: torch.linalg.matrix_power(a, 6), tag)
        run("matrix_power_m2", [r(3, 3) + 3 * torch.eye(3, dtype=dtype)], lambda a: torch.linalg.matrix_power(a, -2), tag)
        run("multi_dot_4", [r(3, 10), r(10, 2), r(2, 8), r(8, 4)], lambda *m: torch.linalg.multi_dot(m), tag)
        run("multi_dot_vectors", [r(5), r(5, 3), r(3, 6), r(6)], lambda *m: torch.linalg.multi_dot(m), tag)
        run("cholesky_solve", [r(2, 4, 3), lower(4, 4)], lambda b, l: torch.cholesky_solve(b, l), tag)
        run("cholesky_solve_upper", [r(4, 2), lower(3, 4, 4).transpose(-1, -2)],
            lambda b, u: torch.cholesky_solve(b, u, upper=True), tag)


# torch.einsum cases: (name, equation, operand shapes).
EINSUM_CASES = [
    ("matmul", "ij,jk->ik", [(3, 4), (4, 5)]),
    ("implicit", "ij,jk", [(3, 4), (4, 5)]),
    ("bmm_broadcast", "bij,bjk->bik", [(1, 2, 3), (4, 3, 5)]),
    ("trace", "ii", [(4, 4)]),
    ("diagonal", "ii->i", [(4, 4)]),
    ("outer", "i,j->ij", [(3,), (4,)]),
    ("transpose", "ij->ji", [(3, 4)]),
    ("sum_all", "ij->", [(3, 4)]),
    ("chain", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ellipsis", "...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("ellipsis_implicit", "...ij,...jk", [(2, 1, 2, 3), (3, 3, 4)]),
    ("ellipsis_summed", "i...->i", [(3, 2, 4)]),
    ("bilinear", "bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("repeated_with_other", "iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("broadcast_one", "ij,ij->ij", [(2, 3), (1, 3)]),
    ("upper_case", "Ij,jK->IK", [(2, 3), (3, 4)]),
    ("spaces", "i j , j k -> k i", [(2, 3), (3, 4)]),
    ("batch_trace", "bii->b", [(3, 4, 4)]),
    ("contract_two", "ijk,jkl->il", [(2, 3, 4), (3, 4, 5)]),
    ("cyclic_output", "bij,bjk->kbi", [(2, 3, 4), (2, 4, 5)]),
]


def einsum_cases():
    """torch.einsum: values and gradients of every case of EINSUM_CASES, in
    float and double."""
    with open(os.path.join(OUT, "einsum_cases.txt"), "w") as out:  # name|equation|operands, for the test
        for name, equation, shapes in EINSUM_CASES:
            out.write(f"{name}|{equation}|{len(shapes)}\n")
    g = torch.Generator().manual_seed(59)
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        for name, equation, shapes in EINSUM_CASES:
            tensors = [torch.randn(*s, generator=g, dtype=torch.float64).to(dtype) for s in shapes]
            _save_forward_backward(f"es_{tag}_{name}", tensors, lambda *t, e=equation: torch.einsum(e, *t), g)


def _save_module_case(prefix, model, tensors, f, g):
    """_save_forward_backward for f(model, *tensors), plus the gradient of
    every parameter as prefix_p_<name>."""
    _save_forward_backward(prefix, tensors, lambda *leaves: f(model, *leaves), g)
    for name, p in model.named_parameters():
        save(f"{prefix}_p_{name}", p.grad)


def nn_conv_padding_modes():
    """nn: Conv1d, Conv2d and Conv3d with padding_mode reflect, replicate and
    circular (numeric and 'same' padding; output, input and parameter
    gradients, double) and their reprs (cpm_*)."""
    import torch.nn as nn
    g = torch.Generator().manual_seed(67)

    def r(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    cases = {
        "conv2d_reflect": (nn.Conv2d(2, 3, (3, 2), padding=(1, 2), padding_mode="reflect"), (2, 2, 5, 6)),
        "conv1d_circular_same": (nn.Conv1d(2, 3, 4, padding="same", dilation=2, padding_mode="circular"), (2, 2, 9)),
        "conv3d_replicate": (nn.Conv3d(2, 2, 2, stride=2, padding=1, bias=False, padding_mode="replicate"), (1, 2, 3, 4, 3)),
        "conv2d_unbatched_reflect": (nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), (2, 4, 5)),
    }
    reprs = []
    for name, (m, shape) in cases.items():
        m = m.double()
        with torch.no_grad():
            for p in m.parameters():
                p.copy_(r(*p.shape))
        for pname, p in m.named_parameters():
            save(f"cpm_{name}_{pname}", p.detach())
        _save_module_case(f"cpm_{name}", m, [r(*shape)], lambda model, x: model(x), g)
        reprs.append(repr(m))
    with open(os.path.join(OUT, "nn_conv_padding_modes.txt"), "w") as f:
        f.write("\n".join(reprs) + "\n")


def nn_recurrent():
    """nn: RNN, LSTM, GRU and their cells (initial weights for a seed, state_dict
    keys, outputs and the gradients of inputs, states and every parameter,
    float and double)."""
    import torch.nn as nn
    torch.manual_seed(3)
    models = {"lstm": nn.LSTM(3, 4, num_layers=2, bidirectional=True), "gru": nn.GRU(3, 4, bias=False),
              "lstm_cell": nn.LSTMCell(3, 4)}
    with open(os.path.join(OUT, "nn_recurrent.txt"), "w") as out:
        for key, m in models.items():
            out.write(f"=== {key}\n{m!r}\n" + "\n".join(m.state_dict().keys()) + "\n")
            for name, p in m.named_parameters():
                save(f"nn_init_{key}_{name}", p)
        out.write("=== end\n")

    def flat(*ts):
        return torch.cat([t.flatten() for t in ts])

    g = torch.Generator().manual_seed(41)
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

        def run(name, seed, make, tensors, f):
            torch.manual_seed(seed)
            _save_module_case(f"nn_rec_{tag}_{name}", make().to(dtype), tensors, f, g)

        run("lstm_bidirectional", 50, lambda: nn.LSTM(3, 5, num_layers=2, bidirectional=True),
            [r(6, 2, 3), r(4, 2, 5), r(4, 2, 5)], lambda m, x, h, c: flat(m(x, (h, c))[0], *m(x, (h, c))[1]))
        run("gru_batch_first", 51, lambda: nn.GRU(3, 4, batch_first=True),
            [r(5, 2, 3)], lambda m, x: flat(*m(x.transpose(0, 1))))
        run("rnn_relu_unbatched", 52, lambda: nn.RNN(3, 4, num_layers=2, nonlinearity="relu", bias=False),
            [r(5, 3), r(2, 4)], lambda m, x, h: flat(*m(x, h)))
        run("rnn_tanh", 53, lambda: nn.RNN(2, 3), [r(4, 3, 2)], lambda m, x: flat(*m(x)))
        run("gru_bidirectional", 54, lambda: nn.GRU(2, 3, num_layers=2, bidirectional=True),
            [r(4, 2, 2), r(4, 2, 3)], lambda m, x, h: flat(*m(x, h)))
        run("lstm_cell", 55, lambda: nn.LSTMCell(3, 4), [r(2, 3), r(2, 4), r(2, 4)],
            lambda m, x, h, c: flat(*m(x, (h, c))))
        run("gru_cell_unbatched", 56, lambda: nn.GRUCell(3, 4), [r(3), r(4)], lambda m, x, h: m(x, h))
        run("rnn_cell", 57, lambda: nn.RNNCell(3, 4), [r(2, 3)], lambda m, x: m(x))


def nn_attention():
    """nn: scaled dot-product attention (PyTorch 2's semantics, written out in
    1.13's operations), MultiheadAttention, TransformerEncoderLayer and
    TransformerEncoder (initial weights, reprs, state_dict keys, outputs and
    every gradient, float and double)."""
    import math
    import torch.nn as nn
    torch.manual_seed(4)
    mha = nn.MultiheadAttention(8, 2)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16), 2, norm=nn.LayerNorm(8))
    save("nn_init_after_encoder", torch.rand(3))  # the encoder's copies drew nothing
    with open(os.path.join(OUT, "nn_attention.txt"), "w") as out:
        for key, m in [("mha", mha), ("encoder", enc)]:
            out.write(f"=== {key}\n{m!r}\n" + "\n".join(m.state_dict().keys()) + "\n")
            for name, t in m.state_dict().items():
                save(f"nn_init_{key}_{name}", t)
        out.write("=== end\n")

    def sdpa(q, k, v, mask=None, causal=False):
        s = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
        if causal:
            s = s.masked_fill(torch.ones(q.shape[-2], k.shape[-2]).triu(1).bool(), float("-inf"))
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask
        return torch.softmax(s, -1) @ v

    def flat(*ts):
        return torch.cat([t.flatten() for t in ts])

    # Masks (saved as 0/1 doubles): no row masked entirely.
    take = torch.tensor([[1, 0, 1, 1, 0, 1], [1, 1, 0, 0, 1, 1], [0, 1, 1, 1, 1, 0], [1, 1, 1, 0, 0, 0]]).bool()
    padding = torch.tensor([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [0, 1, 0, 0, 1]]).bool()
    masked = torch.tensor([[0, 1, 0, 0, 1], [1, 0, 0, 1, 0], [0, 0, 1, 1, 1]]).bool()
    for name, m in [("take", take), ("padding", padding), ("masked", masked)]:
        save(f"nn_attn_mask_{name}", m.double())
    causal = torch.zeros(5, 5).masked_fill(torch.ones(5, 5).triu(1).bool(), float("-inf"))

    g = torch.Generator().manual_seed(61)
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

        def fn(name, tensors, f):
            _save_forward_backward(f"nn_attn_{tag}_{name}", tensors, f, g)

        def run(name, seed, make, tensors, f):
            torch.manual_seed(seed)
            _save_module_case(f"nn_attn_{tag}_{name}", make().to(dtype), tensors, f, g)

        fn("sdpa", [r(2, 3, 4, 5), r(2, 3, 6, 5), r(2, 3, 6, 7)], lambda q, k, v: sdpa(q, k, v))
        fn("sdpa_bool_mask", [r(3, 4, 5), r(3, 6, 5), r(3, 6, 2)], lambda q, k, v: sdpa(q, k, v, take))
        fn("sdpa_float_mask", [r(2, 4, 3), r(2, 6, 3), r(2, 6, 3), r(4, 6)], lambda q, k, v, m: sdpa(q, k, v, m))
        fn("sdpa_causal", [r(2, 5, 4), r(2, 5, 4), r(2, 5, 3)], lambda q, k, v: sdpa(q, k, v, causal=True))
        run("mha_self", 70, lambda: nn.MultiheadAttention(8, 2), [r(5, 3, 8)],
            lambda m, x: flat(*m(x, x, x, key_padding_mask=padding)))
        run("mha_cross_batch_first", 71, lambda: nn.MultiheadAttention(6, 3, batch_first=True),
            [r(2, 4, 6), r(2, 5, 6), r(2, 5, 6), r(4, 5)],
            lambda m, q, k, v, mask: flat(*m(q, k, v, attn_mask=mask, average_attn_weights=False)))
        run("mha_unbatched_bool_mask", 72, lambda: nn.MultiheadAttention(4, 1, bias=False), [r(3, 4), r(5, 4)],
            lambda m, q, kv: m(q, kv, kv, attn_mask=masked, need_weights=False)[0])
        run("encoder_layer", 73, lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0), [r(5, 3, 8)],
            lambda m, x: m(x, src_mask=causal.to(dtype)))
        run("encoder_layer_norm_first_gelu", 74,
            lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation="gelu", batch_first=True,
                                               norm_first=True),
            [r(3, 5, 8)], lambda m, x: m(x, src_key_padding_mask=padding))
        run("encoder", 75,
            lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0), 2,
                                          norm=nn.LayerNorm(8)),
            [r(4, 2, 8)], lambda m, x: m(x))


def nn_transformer_decoder():
    """nn: TransformerDecoderLayer, TransformerDecoder and Transformer (initial
    weights for a seed, reprs, state_dict keys, outputs and every gradient,
    float and double; td_*)."""
    import torch.nn as nn
    torch.manual_seed(5)
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, dim_feedforward=16), 2, norm=nn.LayerNorm(8))
    tr = nn.Transformer(8, 2, 2, 1, dim_feedforward=16)
    save("td_init_after", torch.rand(3))  # the decoder's copies drew nothing
    with open(os.path.join(OUT, "nn_transformer_decoder.txt"), "w") as out:
        for key, m in [("decoder", dec), ("transformer", tr)]:
            out.write(f"=== {key}\n{m!r}\n" + "\n".join(m.state_dict().keys()) + "\n")
            for name, t in m.state_dict().items():
                save(f"td_init_{key}_{name}", t)
        out.write("=== end\n")
    tgt_padding = torch.tensor([[0, 0, 0, 1], [0, 0, 0, 0], [0, 1, 0, 0]]).bool()
    memory_padding = torch.tensor([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [0, 1, 0, 0, 1]]).bool()
    save("td_tgt_padding", tgt_padding.double())
    save("td_memory_padding", memory_padding.double())
    causal = nn.Transformer.generate_square_subsequent_mask(4)
    save("td_causal", causal)
    g = torch.Generator().manual_seed(113)
    for dtype, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        def r(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

        def run(name, seed, make, tensors, f):
            torch.manual_seed(seed)
            _save_module_case(f"td_{tag}_{name}", make().to(dtype), tensors, f, g)

        run("decoder_layer", 80, lambda: nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0),
            [r(4, 3, 8), r(5, 3, 8)], lambda m, t, mem: m(t, mem, tgt_mask=causal.to(dtype)))
        run("decoder_layer_norm_first_gelu", 81,
            lambda: nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation="gelu",
                                               batch_first=True, norm_first=True),
            [r(3, 4, 8), r(3, 5, 8)],
            lambda m, t, mem: m(t, mem, tgt_key_padding_mask=tgt_padding, memory_key_padding_mask=memory_padding))
        run("decoder", 82,
            lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0), 2,
                                          norm=nn.LayerNorm(8)),
            [r(4, 2, 8), r(5, 2, 8)], lambda m, t, mem: m(t, mem))
        run("transformer", 83, lambda: nn.Transformer(8, 2, 2, 1, dim_feedforward=16, dropout=0.0),
            [r(5, 2, 8), r(4, 2, 8)], lambda m, src, tgt: m(src, tgt, tgt_mask=causal.to(dtype)))


def nn_conv_transpose1d():
    """nn: ConvTranspose1d's initial weights and repr, and F.conv_transpose1d
    with its options: values and gradients (ct_*)."""
    import torch.nn as nn
    F = torch.nn.functional
    torch.manual_seed(9)
    m = nn.ConvTranspose1d(4, 6, 3, groups=2)
    save("ct_init_weight", m.weight)
    save("ct_init_bias", m.bias)
    with open(os.path.join(OUT, "nn_conv_transpose1d.txt"), "w") as out:
        out.write(repr(m) + "\n")
        out.write(repr(nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, dilation=2, bias=False)) + "\n")
    g = torch.Generator().manual_seed(109)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    _save_forward_backward("ct_plain", [rand(2, 4, 5), rand(4, 3, 3), rand(3)],
                           lambda x, w, b: F.conv_transpose1d(x, w, b), g)
    _save_forward_backward("ct_options", [rand(2, 4, 5), rand(4, 3, 3), rand(6)],
                           lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1, groups=2),
                           g)
    _save_forward_backward("ct_dilated_unbatched", [rand(4, 6), rand(4, 2, 2)],
                           lambda x, w: F.conv_transpose1d(x, w, stride=3, dilation=2), g)


def nn_embedding_bag():
    """F.embedding_bag in each mode, with padding_idx, include_last_offset,
    2-D input and per_sample_weights: values and the gradients of weight and
    per_sample_weights (eb_*)."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(127)
    weight = torch.randn(6, 3, generator=g, dtype=torch.float64)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 0])
    save("eb_idx", idx)
    save("eb_offsets", torch.tensor([0, 3, 3, 5]))
    save("eb_offsets_last", torch.tensor([0, 3, 3, 5, 8]))
    for mode in ("sum", "mean", "max"):
        _save_forward_backward(f"eb_{mode}", [weight], lambda w: F.embedding_bag(idx, w, torch.tensor([0, 3, 3, 5]),
                                                                               mode=mode), g)
        _save_forward_backward(f"eb_{mode}_padding", [weight],
                               lambda w: F.embedding_bag(idx, w, torch.tensor([0, 3, 3, 5]), mode=mode, padding_idx=4), g)
        _save_forward_backward(f"eb_{mode}_last", [weight],
                               lambda w: F.embedding_bag(idx, w, torch.tensor([0, 3, 3, 5, 8]), mode=mode,
                                                         include_last_offset=True), g)
        _save_forward_backward(f"eb_{mode}_2d", [weight], lambda w: F.embedding_bag(idx.view(2, 4), w, mode=mode), g)
    psw = torch.randn(8, generator=g, dtype=torch.float64)
    _save_forward_backward("eb_weighted", [weight, psw],
                           lambda w, p: F.embedding_bag(idx, w, torch.tensor([0, 3, 3, 5]), mode="sum",
                                                        per_sample_weights=p), g)


def nn_local_response_norm():
    """F.local_response_norm on 3-D, 4-D and 5-D inputs, odd and even sizes:
    values and gradients (lrn_*)."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(131)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    _save_forward_backward("lrn_3d", [rand(2, 5, 4)], lambda x: F.local_response_norm(x, 2), g)
    _save_forward_backward("lrn_4d", [rand(2, 6, 3, 3)], lambda x: F.local_response_norm(x, 3, alpha=0.5, beta=1.5, k=2.0), g)
    _save_forward_backward("lrn_5d", [rand(1, 4, 2, 3, 2)], lambda x: F.local_response_norm(x, 5, alpha=0.1), g)


# Optimizer trajectories: the same model, data and initial weights, 25 steps
# of each optimizer and option set; the test runs the same steps in tessera.
# (name, optimizer, options for one group, or a list of per-group options for
# groups [w1, b1] and [w2, b2] with the first entry's keys as defaults.)
OPTIM_CASES = [
    ("sgd", "SGD", dict(lr=0.1)),
    ("sgd_momentum", "SGD", dict(lr=0.1, momentum=0.9)),
    ("sgd_dampening_decay", "SGD", dict(lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.01)),
    ("sgd_nesterov", "SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("sgd_maximize", "SGD", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("sgd_groups", "SGD", [dict(lr=0.05), dict(lr=0.1, momentum=0.9)]),
    ("adam", "Adam", dict(lr=0.01)),
    ("adam_amsgrad_decay", "Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("adam_betas_maximize", "Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, maximize=True)),
    ("adam_groups", "Adam", [dict(lr=0.01), dict(lr=0.02, betas=(0.5, 0.9))]),
    ("adamw", "AdamW", dict(lr=0.01)),
    ("adamw_amsgrad_decay", "AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("rmsprop", "RMSprop", dict(lr=0.01)),
    ("rmsprop_centered", "RMSprop", dict(lr=0.01, centered=True)),
    ("rmsprop_momentum", "RMSprop", dict(lr=0.01, momentum=0.5)),
    ("rmsprop_centered_momentum_decay", "RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.01)),
    ("adagrad", "Adagrad", dict(lr=0.1)),
    ("adagrad_decay_initial", "Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.01, initial_accumulator_value=0.1)),
    ("adadelta", "Adadelta", dict(lr=1.0)),
    ("adadelta_rho_decay_maximize", "Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.01, maximize=True)),
    # LBFGS: 4 steps of step(closure), each up to max_iter iterations.
    ("lbfgs", "LBFGS", dict(lr=1.0, max_iter=5)),
    ("lbfgs_history", "LBFGS", dict(lr=0.5, max_iter=8, history_size=3)),
    ("lbfgs_strong_wolfe", "LBFGS", dict(lr=1.0, max_iter=10, line_search_fn="strong_wolfe")),
]


def _optim_loss(params, x, y):
    w1, b1, w2, b2 = params
    return torch.nn.functional.mse_loss(torch.tanh(x @ w1.T + b1) @ w2.T + b2, y)


def optim_trajectories():
    g = torch.Generator().manual_seed(2024)
    init = [torch.randn(4, 5, generator=g, dtype=torch.float64) * 0.5, torch.randn(4, generator=g, dtype=torch.float64) * 0.1,
            torch.randn(3, 4, generator=g, dtype=torch.float64) * 0.5, torch.randn(3, generator=g, dtype=torch.float64) * 0.1]
    x = torch.randn(8, 5, generator=g, dtype=torch.float64)
    y = torch.randn(8, 3, generator=g, dtype=torch.float64)
    for name, t in zip(["w1", "b1", "w2", "b2", "x", "y"], init + [x, y]):
        save("optim_" + name, t)
    for case, opt_name, options in OPTIM_CASES:
        for dtype, suffix in [(torch.float32, "f32"), (torch.float64, "f64")]:
            params = [p.to(dtype).clone().requires_grad_(True) for p in init]
            if isinstance(options, list):
                groups = [dict(params=params[:2]), dict(params=params[2:], **options[1])]
                opt = getattr(torch.optim, opt_name)(groups, **options[0])
            else:
                opt = getattr(torch.optim, opt_name)(params, **options)
            if opt_name == "LBFGS":
                def closure():
                    opt.zero_grad(set_to_none=True)
                    loss = _optim_loss(params, x.to(dtype), y.to(dtype))
                    loss.backward()
                    return loss
                for _ in range(4):
                    opt.step(closure)
            else:
                for _ in range(25):
                    opt.zero_grad(set_to_none=True)
                    _optim_loss(params, x.to(dtype), y.to(dtype)).backward()
                    opt.step()
            save("optim_%s_%s" % (case, suffix), torch.cat([p.detach().reshape(-1) for p in params]))
    # LBFGS's state after 2 steps of the "lbfgs" case in double: n_iter,
    # func_evals, the history's length, H_diag, t and prev_loss.
    params = [p.clone().requires_grad_(True) for p in init]
    opt = torch.optim.LBFGS(params, lr=1.0, max_iter=5)
    def closure():
        opt.zero_grad(set_to_none=True)
        loss = _optim_loss(params, x, y)
        loss.backward()
        return loss
    for _ in range(2):
        opt.step(closure)
    st = opt.state[params[0]]
    save("optim_lbfgs_state", torch.tensor([st["n_iter"], st["func_evals"], len(st["old_dirs"]), float(st["H_diag"]),
                                             float(st["t"]), st["prev_loss"]], dtype=torch.float64))


def lr_schedules():
    """Learning rates (and OneCycleLR's momentum) over 100 steps of each
    scheduler, on two parameter groups (SGD, lr 0.1 and 0.05, momentum 0.9)."""
    S = torch.optim.lr_scheduler
    metric = torch.tensor([max(1.0 - 0.05 * t, 0.3) + 0.01 * (t % 3) for t in range(100)], dtype=torch.float64)
    save("sched_metric", metric)
    cases = [
        ("step", lambda o: S.StepLR(o, step_size=7, gamma=0.5)),
        ("multistep", lambda o: S.MultiStepLR(o, milestones=[10, 30, 30, 60], gamma=0.3)),
        ("exponential", lambda o: S.ExponentialLR(o, gamma=0.97)),
        ("linear", lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=40)),
        ("linear_default", lambda o: S.LinearLR(o)),
        ("cosine", lambda o: S.CosineAnnealingLR(o, T_max=30, eta_min=0.001)),
        ("cosine_restarts", lambda o: S.CosineAnnealingWarmRestarts(o, T_0=10, T_mult=2, eta_min=0.001)),
        ("onecycle", lambda o: S.OneCycleLR(o, max_lr=[0.5, 1.0], total_steps=100)),
        ("onecycle_linear_three_phase",
         lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=100, pct_start=0.25, anneal_strategy="linear",
                                three_phase=True, div_factor=10.0, final_div_factor=100.0)),
        ("lambda", lambda o: S.LambdaLR(o, lambda e: 0.95 ** e)),
        ("sequential", lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=10),
                                                    S.ExponentialLR(o, gamma=0.95)], milestones=[10])),
        ("sequential_three", lambda o: S.SequentialLR(o, [S.StepLR(o, 5, 0.5), S.CosineAnnealingLR(o, T_max=20),
                                                          S.CosineAnnealingWarmRestarts(o, T_0=7)], milestones=[30, 60])),
        ("plateau", lambda o: S.ReduceLROnPlateau(o, patience=3, cooldown=2, factor=0.5, min_lr=[1e-3, 1e-4])),
        ("plateau_max_abs", lambda o: S.ReduceLROnPlateau(o, mode="max", threshold_mode="abs", threshold=0.1,
                                                          patience=2, factor=0.7)),
    ]
    for name, make in cases:
        p1, p2 = torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)
        opt = torch.optim.SGD([dict(params=[p1]), dict(params=[p2], lr=0.05)], lr=0.1, momentum=0.9)
        sched = make(opt)
        lrs, momenta = [], []
        for t in range(101):
            if t > 0:
                opt.step()
                if isinstance(sched, S.ReduceLROnPlateau):
                    sched.step(-metric[t - 1].item() if sched.mode == "max" else metric[t - 1].item())
                else:
                    sched.step()
            lrs.append([g["lr"] for g in opt.param_groups])
            momenta.append([g["momentum"] for g in opt.param_groups])
        save("sched_%s_lr" % name, torch.tensor(lrs, dtype=torch.float64))
        if name.startswith("onecycle"):
            save("sched_%s_momentum" % name, torch.tensor(momenta, dtype=torch.float64))
    # OneCycleLR cycles Adam's beta1.
    p = torch.zeros(2, requires_grad=True)
    opt = torch.optim.Adam([p], lr=0.1, betas=(0.9, 0.99))
    sched = S.OneCycleLR(opt, max_lr=0.3, total_steps=50)
    beta1 = [opt.param_groups[0]["betas"][0]]
    for _ in range(50):
        opt.step()
        sched.step()
        beta1.append(opt.param_groups[0]["betas"][0])
    save("sched_onecycle_adam_beta1", torch.tensor(beta1, dtype=torch.float64))


def clip_grads():
    """nn.utils.clip_grad_norm_ / clip_grad_value_: gradients of two float
    parameters before and after, and the returned norms."""
    g = torch.Generator().manual_seed(77)
    grads = [torch.randn(3, 4, generator=g), torch.randn(5, generator=g) * 3]
    save("clip_grad0", grads[0])
    save("clip_grad1", grads[1])
    norms = []
    for i, (max_norm, norm_type) in enumerate([(1.0, 2.0), (0.5, float("inf")), (100.0, 1.0), (2.0, 3.0)]):
        ps = [torch.zeros_like(t, requires_grad=True) for t in grads]
        for p, t in zip(ps, grads):
            p.grad = t.clone()
        norms.append(torch.nn.utils.clip_grad_norm_(ps, max_norm, norm_type).item())
        save("clip_norm%d_grad0" % i, ps[0].grad)
        save("clip_norm%d_grad1" % i, ps[1].grad)
    save("clip_norms", torch.tensor(norms, dtype=torch.float64))
    ps = [torch.zeros_like(t, requires_grad=True) for t in grads]
    for p, t in zip(ps, grads):
        p.grad = t.clone()
    torch.nn.utils.clip_grad_value_(ps, 0.7)
    save("clip_value_grad0", ps[0].grad)
    save("clip_value_grad1", ps[1].grad)


def data_orders():
    """torch.randperm, samplers, random_split and a shuffling DataLoader's
    order for given seeds (tessera reproduces PyTorch's randperm)."""
    from torch.utils.data import DataLoader, RandomSampler, SubsetRandomSampler, TensorDataset, random_split
    save("data_randperm10_seed0", torch.randperm(10, generator=torch.Generator().manual_seed(0)))
    save("data_randperm1000_seed42", torch.randperm(1000, generator=torch.Generator().manual_seed(42)))
    torch.manual_seed(7)
    save("data_randperm37_global7", torch.randperm(37))
    g = torch.Generator().manual_seed(3)
    save("data_random_sampler_seed3", torch.tensor(list(RandomSampler(range(10), num_samples=25, generator=g))))
    torch.manual_seed(5)
    save("data_random_sampler_global5", torch.tensor(list(RandomSampler(range(12)))))
    from torch.utils.data import WeightedRandomSampler
    g = torch.Generator().manual_seed(2)
    save("data_weighted_sampler_seed2", torch.tensor(list(WeightedRandomSampler([0.0, 1.0, 3.0, 0.0], 10, True, generator=g))))
    g = torch.Generator().manual_seed(2)
    save("data_weighted_sampler_unique_seed2", torch.tensor(list(WeightedRandomSampler([1.0, 2.0, 3.0], 3, False, generator=g))))
    g = torch.Generator().manual_seed(4)
    save("data_random_sampler_replacement_seed4",
         torch.tensor(list(RandomSampler(range(10), replacement=True, num_samples=40, generator=g))))
    g = torch.Generator().manual_seed(11)
    save("data_subset_random_seed11", torch.tensor(list(SubsetRandomSampler([10, 20, 30, 40, 50, 60], generator=g))))
    parts = random_split(range(10), [3, 3, 4], generator=torch.Generator().manual_seed(42))
    save("data_random_split_seed42", torch.tensor([i for p in parts for i in p.indices]))
    # Two epochs of a shuffling DataLoader (batch 4, drop_last) after manual_seed(123):
    # the samples' order.
    ds = TensorDataset(torch.arange(22))
    torch.manual_seed(123)
    loader = DataLoader(ds, batch_size=4, shuffle=True, drop_last=True)
    order = [int(v) for _ in range(2) for (b,) in loader for v in b]
    save("data_loader_order_global123", torch.tensor(order))
    loader = DataLoader(ds, batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(9))
    order = [int(v) for _ in range(2) for (b,) in loader for v in b]
    save("data_loader_order_seed9", torch.tensor(order))


def distributed_sampler():
    """torch.utils.data.DistributedSampler's indices: 10 samples over 3
    replicas, each rank, epochs 0 and 1 (set_epoch), padded and drop_last,
    seed 5; then unshuffled 7 over 3 (padding from the start) and 2 over 5
    (padding repeats the whole list)."""
    from torch.utils.data import DistributedSampler
    out = []
    for drop_last in (False, True):
        for rank in range(3):
            s = DistributedSampler(range(10), num_replicas=3, rank=rank, shuffle=True, seed=5, drop_last=drop_last)
            for epoch in (0, 1):
                s.set_epoch(epoch)
                out += list(s)
    for rank in range(3):
        out += list(DistributedSampler(range(7), num_replicas=3, rank=rank, shuffle=False))
    for rank in range(5):
        out += list(DistributedSampler(range(2), num_replicas=5, rank=rank, shuffle=False))
    save("data_distributed_sampler", torch.tensor(out, dtype=torch.int64))


def _checkpoint_tensors():
    """Every dtype tessera has, views sharing one storage, a non-contiguous
    tensor, a scalar, an empty tensor and a Parameter; values a test can
    recompute (test_io.cpp builds the same ones)."""
    base = torch.arange(12.0).reshape(3, 4)
    d = collections.OrderedDict()
    d["f32"] = torch.arange(6, dtype=torch.float32).reshape(2, 3) * 0.5 - 1
    d["f64"] = torch.arange(4, dtype=torch.float64) / 3
    d["f16"] = torch.tensor([0.5, -1.25, 65504.0], dtype=torch.float16)
    d["bf16"] = torch.tensor([1.0, -2.5, 3.0e38], dtype=torch.bfloat16)
    d["i64"] = torch.tensor([-(2 ** 40), 0, 7], dtype=torch.int64)
    d["i32"] = torch.tensor([-5, 6], dtype=torch.int32)
    d["bool"] = torch.tensor([True, False, True])
    d["scalar"] = torch.tensor(3.5)
    d["empty"] = torch.zeros(0, 3)
    d["base"] = base
    d["t"] = base.t()
    d["row"] = base[1]
    d["strided"] = base[:, ::2]
    d["param"] = torch.nn.Parameter(torch.ones(2))
    return d


def _write_safetensors(path, tensors, metadata):
    """The format's specification, written out by hand (Debian has no
    safetensors package) as its reference writer lays it out: 8-byte
    little-endian header size, compact UTF-8 JSON padded with spaces to a
    multiple of 8, then the data in the header's order."""
    import json
    import struct
    names = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16",
             torch.int64: "I64", torch.int32: "I32", torch.bool: "BOOL"}
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous()
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def checkpoints():
    torch.save(_checkpoint_tensors(), os.path.join(OUT, "torch_tensors.pt"))
    tensors = _checkpoint_tensors()
    for k in ("t", "row", "strided", "param"):
        del tensors[k]
    _write_safetensors(os.path.join(OUT, "reference.safetensors"), tensors, {"format": "pt", "note": "caf\u00e9"})

    # A model PyTorch trained a little, and its output on a fixed input in eval mode.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    x = torch.linspace(-1, 1, 20).reshape(5, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()
    model.eval()
    torch.save(model.state_dict(), os.path.join(OUT, "torch_model.pt"))
    save("torch_model_out", model(x))

    # Adam's state after two steps, the parameter then, and the parameter
    # after a third step from the same state (gradients fixed by formula).
    w = torch.nn.Parameter(torch.linspace(-1, 1, 6).reshape(2, 3))
    adam = torch.optim.Adam([w], lr=0.1, betas=(0.8, 0.9), amsgrad=True)
    for step in range(3):
        if step == 2:
            torch.save(adam.state_dict(), os.path.join(OUT, "torch_adam_state.pt"))
            torch.save({"w": w.detach().clone()}, os.path.join(OUT, "torch_adam_param.pt"))
        w.grad = torch.cos(torch.arange(6.0) + step).reshape(2, 3)
        adam.step()
    save("torch_adam_after", w)


# The statistics of the two memory_summary cases of test_cuda.cpp (the same
# numbers there): small values, and values that take every unit prefix.
CUDA_SUMMARY_CASES = [
    dict(device=0, num_ooms=0, num_alloc_retries=0, stats={
        "allocation": [(2, 3, 5, 3), (0, 1, 1, 1), (2, 2, 4, 2)],
        "segment": [(1, 2, 2, 1), (0, 1, 1, 1), (1, 1, 1, 0)],
        "active": [(2, 3, 5, 3), (0, 1, 1, 1), (2, 2, 4, 2)],
        "inactive_split": [(1, 1, 2, 1), (0, 0, 0, 0), (1, 1, 2, 1)],
        "allocated_bytes": [(4096, 5 << 20, (5 << 20) + 5120, (5 << 20) + 1024), (0, 5 << 20, 5 << 20, 5 << 20),
                            (4096, 4096, 5120, 1024)],
        "reserved_bytes": [(2 << 20, 22 << 20, 22 << 20, 20 << 20), (0, 20 << 20, 20 << 20, 20 << 20),
                           (2 << 20, 2 << 20, 2 << 20, 0)],
        "active_bytes": [(4096, 5 << 20, (5 << 20) + 5120, (5 << 20) + 1024), (0, 5 << 20, 5 << 20, 5 << 20),
                         (4096, 4096, 5120, 1024)],
        "inactive_split_bytes": [((2 << 20) - 4096, (2 << 20) - 512, (2 << 20) - 512, 3584), (0, 0, 0, 0),
                                 ((2 << 20) - 4096, (2 << 20) - 512, (2 << 20) - 512, 3584)],
    }),
    dict(device=3, num_ooms=2, num_alloc_retries=17, stats={
        "allocation": [(812345, 1234567, 98765432, 97953087), (12345, 800000, 5000000, 4987655), (800000, 900000, 93765432, 92965432)],
        "segment": [(700, 800, 900, 200), (500, 600, 700, 200), (200, 200, 200, 0)],
        "active": [(812345, 1234567, 98765432, 97953087), (12345, 800000, 5000000, 4987655), (800000, 900000, 93765432, 92965432)],
        "inactive_split": [(749999, 750000, 750001, 2), (0, 1, 1, 1), (749999, 750000, 750000, 1)],
        "allocated_bytes": [(40 << 30, 70 << 30, 5 << 40, (5 << 40) - (40 << 30)), (39 << 30, 69 << 30, 3 << 40, 3 << 40),
                            (1 << 30, 1 << 30, 2 << 40, 2 << 40)],
        "reserved_bytes": [(786431, 786432, 805306368, 1), (0, 1023, 1024, 1024), (786431, 786431, 805305344, 0)],
        "active_bytes": [(767 * 1024, 768 * 1024, 3 << 50, 1 << 50), (0, 767, 768, 768), (767 * 1024, 768 * 1024, 3 << 50, 1 << 50)],
        "inactive_split_bytes": [(123456789, 987654321, 1 << 33, 1 << 20), (0, 0, 0, 0), (123456789, 987654321, 1 << 33, 1 << 20)],
    }),
]


def cuda_memory_summary():
    """torch.cuda.memory_summary's text for given statistics (its formatting
    only: memory_stats is replaced, so no GPU is needed), with tessera's name
    in the title where PyTorch has its own (the same length)."""
    import torch.cuda.memory as memory
    texts = []
    for case in CUDA_SUMMARY_CASES:
        stats = {"num_ooms": case["num_ooms"], "num_alloc_retries": case["num_alloc_retries"],
                 "oversize_allocations.current": 0, "oversize_allocations.peak": 0,
                 "oversize_allocations.allocated": 0, "oversize_allocations.freed": 0,
                 "oversize_segments.current": 0, "oversize_segments.peak": 0,
                 "oversize_segments.allocated": 0, "oversize_segments.freed": 0}
        for key, pools in case["stats"].items():
            for pool, values in zip(["all", "small_pool", "large_pool"], pools):
                for field, value in zip(["current", "peak", "allocated", "freed"], values):
                    stats[key + "." + pool + "." + field] = value
        saved = memory.memory_stats
        memory.memory_stats = lambda device=None: stats
        try:
            text = memory.memory_summary(device=case["device"])
        finally:
            memory.memory_stats = saved
        texts.append(text.replace("PyTorch CUDA memory summary", "tessera CUDA memory summary"))
    with open(os.path.join(OUT, "cuda_memory_summary.txt"), "w") as f:
        f.write("".join(texts))


if __name__ == "__main__":
    assert torch.__version__.startswith("1.13"), torch.__version__
    if len(sys.argv) > 1:  # only the named groups, e.g. `make_golden.py bounds`
        for group in sys.argv[1:]:
            globals()[group]()
        sys.exit(0)
    elementwise()
    bounds()
    distributed_sampler()
    promotion()
    printing()
    random_and_ranges()
    reductions()
    reductions_dims()
    linalg()
    shape_ops()
    shape_more()
    binning()
    products_shapes()
    statistics_more()
    join_split_scatter()
    index_writes_names()
    linalg_qr()
    linalg_householder()
    linalg_eigh()
    linalg_svd()
    linalg_norms()
    views_overlapping()
    scatter_reduce_cases()
    advanced_indexing()
    distances()
    linalg_matrix_exp()
    linalg_lu()
    linalg_lstsq()
    linalg_tensor_solves()
    nn_margin_likelihood_losses()
    nn_multilabel_margin()
    nn_ctc_loss()
    nn_parameter_containers()
    nn_layers_3d()
    in_place_methods()
    random_in_place()
    random_layers()
    special_multigammaln_domain()
    nn_fold()
    nn_conv_transpose1d()
    nn_embedding_bag()
    nn_local_response_norm()
    autograd_cases()
    autograd_ops()
    autograd_inplace_views()
    special()
    autograd_second_order()
    nn_cases()
    nn_layers()
    nn_more_losses()
    nn_resample()
    nn_resample_modes()
    nn_activations_more()
    nn_norms_distances()
    nn_padding_modules()
    linalg_decompositions()
    einsum_cases()
    linalg_compositions()
    nn_conv_padding_modes()
    nn_recurrent()
    nn_attention()
    nn_transformer_decoder()
    optim_trajectories()
    lr_schedules()
    clip_grads()
    data_orders()
    checkpoints()
    cuda_memory_summary()
    print("golden files written to", os.path.normpath(OUT))
