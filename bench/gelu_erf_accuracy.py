#!/usr/bin/env python3
"""How far kiln's erf GELU for fp16 and bf16 results lies from the exact
GELU, over every fp16 input in [-8, 8] (the linear's result is rounded to
fp16 before its GELU, as PyTorch rounds it).

    gelu_erf_accuracy.py

Two forms of Abramowitz and Stegun 7.1.26: "through 1 + erf" is
kiln::approx::gelu_erf (codegen/cuda/kiln_common.cuh); "as a tail" writes
Phi as erfc(|x| / sqrt 2) / 2 below 0 and 1 minus it above, so that no
1 + erf cancels, with the constants folded (bench/NOTES.md, 2026-12-05: more
accurate and 14% fewer instructions in a GEMM's epilogue, but ptxas spilled
GELU + residual epilogues of 128-accumulator matmul tiles with it). And
"half2", kiln::approx::gelu_erf_half2, which GEMM epilogues run on packed
pairs of fp16 results: the tail as 2^Q(|x|), Q a quintic whose fp16
coefficients were fitted to this script's measure, every step rounded to
fp16 (ex2.approx.f16x2 taken as correctly rounded; the hardware's is up to
2^-9.9 relative off, which the GPU test GeluOverEveryHalf measures). The
tanh GELU's two forms (kiln::approx::gelu_tanh in fp32 and
gelu_tanh_half2) are measured against the tanh formula itself.

The device code is emulated in fp32 numpy arithmetic (the hardware's
rcp.approx and ex2.approx, a few fp32 ulps off, as exact); the exact GELU
comes from math.erfc in double precision. For each form: the largest error
in fp16 ulps of the exact result (the subnormal step below 2^-14) and how
many fp16 results differ from the correctly rounded one. Runs without a GPU.
"""
import math

import numpy as np

f = np.float32
INV_SQRT2 = 0.70710678118654752
# Abramowitz and Stegun 7.1.26: erf(z) ~ 1 - t P(t) exp(-z^2), t = 1 / (1 + p z).
P = 0.3275911
A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def horner(t, coefficients):
    value = np.zeros_like(t)
    for c in reversed(coefficients):
        value = (value + f(c)) * t
    return value


def through_one_plus_erf(x):
    """0.5 x (1 + erf(x / sqrt 2)), erf's sign restored by copysign."""
    z = x * f(INV_SQRT2)
    a = np.abs(z)
    t = f(1) / (f(1) + f(P) * a)
    erf = np.copysign(f(1) - horner(t, A) * np.exp(-(a * a).astype(np.float64)).astype(f), z)
    return f(0.5) * x * (f(1) + erf)


def as_a_tail(x):
    """x Phi(x) = max(x, 0) - |x| h, h = erfc(|x| / sqrt 2) / 2."""
    t = f(1) / (f(1) + f(P * INV_SQRT2) * np.abs(x))
    gauss = np.exp2((x * (x * f(-0.5 / math.log(2)))).astype(np.float64)).astype(f)
    tail = horner(t, [0.5 * a for a in A]) * gauss
    # max(x, 0) - |x| tail: one FFMA on the device (rounded once there).
    return (np.maximum(x, f(0)).astype(np.float64) -
            np.abs(x).astype(np.float64) * tail.astype(np.float64)).astype(f)


# kiln::approx::gelu_erf_half2's and gelu_tanh_half2's quintics, highest
# power first, and their cap.
HALF2_ERF_Q = (-0.00020766258239746094, 0.004547119140625, -0.043182373046875,
               -0.47216796875, -1.14453125, -1.001953125)
HALF2_TANH_Q = (0.0005350112915039062, -0.013031005859375, 0.0187835693359375,
                -0.54736328125, -1.11328125, -1.0009765625)
HALF2_CAP = 5.8984375


def half2(x, coefficients=HALF2_ERF_Q):
    """max(x, 0) - a 2^Q(a), a = min(|x|, cap), in fp16 arithmetic (FMAs
    rounded once)."""
    h = np.float16
    x = x.astype(h)

    def fma(a, b, c):
        return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(h)

    a = np.minimum(np.abs(x), h(HALF2_CAP))
    q = np.full_like(a, h(coefficients[0]))
    for c in coefficients[1:]:
        q = fma(q, a, np.full_like(a, h(c)))
    tail = np.exp2(q.astype(np.float64)).astype(h)
    return fma(-a, tail, np.maximum(x, h(0))).astype(f)


def tanh_fp32(x):
    """kiln::approx::gelu_tanh: x / (1 + exp(-2u)), u = sqrt(2 / pi) (x +
    0.044715 x^3), in fp32 arithmetic."""
    inner = f(0.7978845608028654) * (x + f(0.044715) * x * x * x)
    with np.errstate(over="ignore"):
        e = np.exp((f(-2) * inner).astype(np.float64)).astype(f)
    return x * (f(1) / (f(1) + e))


def exact_tanh_gelu(wide):
    """The tanh GELU in float64, as x sigma(2u) (no cancellation below 0)."""
    inner = 0.7978845608028654 * (wide + 0.044715 * wide ** 3)
    with np.errstate(over="ignore"):
        return wide / (1 + np.exp(-2 * inner))


def fp16_ulp(value):
    magnitude = np.maximum(np.abs(value), 2.0 ** -14)
    return 2.0 ** (np.floor(np.log2(magnitude)) - 10)


def main():
    halves = np.arange(65536, dtype=np.uint16).view(np.float16)
    halves = halves[np.isfinite(halves) & (np.abs(halves.astype(f)) <= 8)]
    x = halves.astype(f)
    wide = halves.astype(np.float64)
    exact = wide * 0.5 * np.array([math.erfc(-v * INV_SQRT2) for v in wide])
    exact_tanh = exact_tanh_gelu(wide)
    for name, form, reference in (
            ("through 1 + erf", through_one_plus_erf, exact), ("as a tail", as_a_tail, exact),
            ("half2", half2, exact),
            ("tanh GELU in fp32", tanh_fp32, exact_tanh),
            ("tanh GELU in half2", lambda v: half2(v, HALF2_TANH_Q), exact_tanh)):
        exact, correctly_rounded = reference, reference.astype(np.float16)
        y = form(x).astype(np.float64)
        error = np.abs(y - exact) / fp16_ulp(exact)
        worst = int(np.argmax(error))
        differ = int(np.sum(y.astype(np.float16) != correctly_rounded))
        above = float(np.max(error[wide >= -3]))
        print(f"{name}: at most {error[worst]:.2f} fp16 ulp (x = {x[worst]}; {above:.2f} for "
              f"x >= -3), {differ} of {len(x)} fp16 results off the correctly rounded one")


if __name__ == "__main__":
    main()
