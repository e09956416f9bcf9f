#!/usr/bin/env python3
"""Every converter with scalar or optional arguments, audited against LibTorch.

    converter_audit.py WORK_DIR [--kiln-compile PATH] [--jobs N] [CASE...]

Each case is a small traced module calling one ATen overload with arguments
away from their defaults (bounds, alpha, eps, dims, keepdim, strides,
rounding modes, scales, masks). `kiln-compile --verify` imports it and runs
the imported and the optimized IR through the reference evaluator against
LibTorch on fresh random inputs (fp32: rel L2 1e-5). A converter that drops
or misreads an argument computes something else and fails. A case may
instead expect a refusal: kiln-compile must then exit non-zero with an
error naming what it does not support, never compute a different function.
Exit status: the number of failed cases (0: all pass).
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import warnings

import torch
import torch.nn.functional as F

# Constant index tensors are meant to be constants of the trace.
warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)


class Fn(torch.nn.Module):
    def __init__(self, fn, params=()):
        super().__init__()
        self.fn = fn
        for index, shape in enumerate(params):
            self.register_parameter(f"p{index}", torch.nn.Parameter(torch.randn(*shape)))

    def forward(self, *inputs):
        return self.fn(self, *inputs)


def r(*shape):
    return torch.randn(*shape)


def positive(*shape):
    return torch.rand(*shape) + 0.5


# name: (module, example inputs, expected refusal or None)
def cases():
    torch.manual_seed(0)
    conv = lambda **kw: torch.nn.Conv2d(4, 6, 3, **kw).eval()  # noqa: E731
    mask = torch.rand(4, 8) > 0.5
    return {
        # Elementwise binary: alpha, scalar operands, reversed operands.
        "add_alpha": (Fn(lambda m, x, y: torch.add(x, y, alpha=2.5)), [r(4, 8), r(4, 8)], None),
        "add_scalar_alpha": (Fn(lambda m, x: torch.add(x, 3, alpha=-2)), [r(4, 8)], None),
        "sub_alpha": (Fn(lambda m, x, y: torch.sub(x, y, alpha=0.25)), [r(4, 8), r(8)], None),
        "sub_scalar": (Fn(lambda m, x: x - 1.75), [r(4, 8)], None),
        "rsub_scalar_alpha": (Fn(lambda m, x: torch.rsub(x, 5.0, alpha=3)), [r(4, 8)], None),
        "rsub_tensor_alpha": (Fn(lambda m, x, y: torch.rsub(x, y, alpha=2)), [r(4, 8), r(4, 8)],
                              None),
        "mul_scalar": (Fn(lambda m, x: x * -0.5), [r(4, 8)], None),
        "div_scalar": (Fn(lambda m, x: x / 3.0), [r(4, 8)], None),
        "div_floor": (Fn(lambda m, x, y: torch.div(x * 4, y.abs() + 0.5, rounding_mode="floor")),
                      [r(4, 8), r(4, 8)], "aten::div with a rounding_mode is not supported"),
        "div_trunc": (Fn(lambda m, x, y: torch.div(x * 4, y.abs() + 0.5, rounding_mode="trunc")),
                      [r(4, 8), r(4, 8)], "aten::div with a rounding_mode is not supported"),
        "pow_scalar": (Fn(lambda m, x: torch.pow(x.abs() + 0.5, 2.5)), [r(4, 8)], None),
        "pow_cube": (Fn(lambda m, x: torch.pow(x, 3)), [r(4, 8)], None),
        "pow_tensor": (Fn(lambda m, x, y: torch.pow(x.abs() + 0.5, y)), [r(4, 8), r(4, 8)],
                       None),
        "maximum": (Fn(lambda m, x, y: torch.maximum(x, y)), [r(4, 8), r(8)], None),
        "minimum": (Fn(lambda m, x, y: torch.minimum(x, y)), [r(4, 8), r(4, 8)], None),
        # Clamps and bounded activations.
        "clamp_min": (Fn(lambda m, x: torch.clamp(x, min=-0.3)), [r(4, 8)], None),
        "clamp_max": (Fn(lambda m, x: torch.clamp(x, max=0.7)), [r(4, 8)], None),
        "clamp_both": (Fn(lambda m, x: torch.clamp(x, -0.2, 0.4)), [r(4, 8)], None),
        "clamp_min_op": (Fn(lambda m, x: torch.clamp_min(x, -0.3)), [r(4, 8)], None),
        "clamp_max_op": (Fn(lambda m, x: torch.clamp_max(x, 0.2)), [r(4, 8)], None),
        "normalize": (Fn(lambda m, x: F.normalize(x, dim=-1)), [r(4, 8)], None),
        "vector_norm_dims": (Fn(lambda m, x: torch.linalg.vector_norm(x, dim=(0, 2), keepdim=True)),
                             [r(3, 4, 5)], None),
        "vector_norm_all": (Fn(lambda m, x: torch.linalg.vector_norm(x)), [r(3, 4)], None),
        "vector_norm_l1": (Fn(lambda m, x: torch.linalg.vector_norm(x, ord=1, dim=-1)), [r(3, 4)],
                           None),
        "vector_norm_inf": (Fn(lambda m, x: torch.linalg.vector_norm(x, ord=float("inf"), dim=1)),
                            [r(3, 4)], None),
        "hardtanh_bounds": (Fn(lambda m, x: F.hardtanh(x * 4, -0.5, 2.0)), [r(4, 8)], None),
        "hardtanh_default": (Fn(lambda m, x: F.hardtanh(x * 4)), [r(4, 8)], None),
        "relu6_module": (torch.nn.ReLU6(), [r(4, 8) * 8], None),
        "relu6_inplace": (torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU6(inplace=True)),
                          [r(4, 8) * 8], None),
        "hardsigmoid": (Fn(lambda m, x: F.hardsigmoid(x * 4)), [r(4, 8)], None),
        "hardswish": (Fn(lambda m, x: F.hardswish(x * 4)), [r(4, 8)], None),
        "gelu_tanh": (Fn(lambda m, x: F.gelu(x, approximate="tanh")), [r(4, 8)], None),
        "gelu_erf": (Fn(lambda m, x: F.gelu(x)), [r(4, 8)], None),
        # Normalizations and reductions.
        "softmax_dim0": (Fn(lambda m, x: torch.softmax(x, dim=0)), [r(4, 8)], None),
        "softmax_last": (Fn(lambda m, x: F.softmax(x, dim=-1)), [r(2, 4, 8)], None),
        "log_softmax_dim1": (Fn(lambda m, x: F.log_softmax(x, dim=1)), [r(2, 4, 8)], None),
        "layer_norm_eps_two_dims": (torch.nn.LayerNorm([4, 8], eps=1e-2).eval(), [r(3, 4, 8)],
                                    None),
        "layer_norm_no_affine": (torch.nn.LayerNorm(8, eps=0.5, elementwise_affine=False),
                                 [r(3, 8)], None),
        "rms_norm_eps_two_dims": (Fn(lambda m, x: F.rms_norm(x, [4, 8], x[0] * 0.5 + 1,
                                                              eps=1e-2)), [r(3, 4, 8)], None),
        # eps None: the input type's machine epsilon.
        "rms_norm_default_eps": (Fn(lambda m, x: F.rms_norm(x * 1e-3, [8])), [r(3, 8)], None),
        "sum_dims_keepdim": (Fn(lambda m, x: x.sum(dim=(0, 2), keepdim=True)), [r(3, 4, 5)],
                             None),
        "sum_all": (Fn(lambda m, x: x.sum()), [r(3, 4)], None),
        "mean_dim_negative": (Fn(lambda m, x: x.mean(-1)), [r(3, 4, 5)], None),
        "mean_all": (Fn(lambda m, x: x.mean()), [r(3, 4)], None),
        "batch_norm_eps": (torch.nn.BatchNorm2d(4, eps=0.1).eval(), [r(2, 4, 5, 5)], None),
        # Views and data movement: dims, negative indices, steps.
        "transpose_negative": (Fn(lambda m, x: x.transpose(-1, 0) + 1), [r(2, 3, 4)], None),
        "permute": (Fn(lambda m, x: x.permute(2, 0, 1) * 2), [r(2, 3, 4)], None),
        "flatten_range": (Fn(lambda m, x: torch.flatten(x, 1, 2) + 1), [r(2, 3, 4, 5)], None),
        "unflatten": (Fn(lambda m, x: x.unflatten(1, (2, 6)) + 1), [r(3, 12)], None),
        "squeeze_dim": (Fn(lambda m, x: x.squeeze(1) + 1), [r(3, 1, 4)], None),
        "unsqueeze_negative": (Fn(lambda m, x: x.unsqueeze(-1) + 1), [r(3, 4)], None),
        "expand": (Fn(lambda m, x: x.expand(3, 4, 5) + 1), [r(4, 1)], None),
        "chunk_dim1": (Fn(lambda m, x: torch.chunk(x, 3, dim=1)[2] * 2), [r(2, 9)], None),
        "split_sizes": (Fn(lambda m, x: torch.split(x, [2, 5], dim=-1)[1] * 2), [r(3, 7)], None),
        "unbind": (Fn(lambda m, x: x.unbind(1)[2] + 1), [r(2, 3, 4)], None),
        "select_negative": (Fn(lambda m, x: x[:, -1] + 1), [r(3, 4, 5)], None),
        "slice_step": (Fn(lambda m, x: x[:, -7::2] + 1), [r(3, 12)], None),
        "cat_negative_dim": (Fn(lambda m, x, y: torch.cat([x, y], dim=-1) * 2),
                             [r(3, 4), r(3, 2)], None),
        "index_select": (Fn(lambda m, x: torch.index_select(x, 0, torch.tensor([3, 0, 3]))),
                         [r(5, 2)], None),
        "index_select_dim1": (Fn(lambda m, x: torch.index_select(x, 1, torch.tensor([3, 0]))),
                              [r(2, 5)], "aten::index_select along dimension 1 is not supported"),
        "masked_fill": (Fn(lambda m, x: x.masked_fill(mask, -3.5)), [r(4, 8)], None),
        "where_scalar_other": (Fn(lambda m, x: torch.where(x > 0.2, x, 2.0)), [r(4, 8)], None),
        "where_scalar_self": (Fn(lambda m, x: torch.where(x > 0.2, 1.5, x)), [r(4, 8)], None),
        "compare_scalars": (Fn(lambda m, x: (x > 0.3).float() + (x <= -0.1).float()
                               + (x != 0.5).float()), [r(4, 8)], None),
        "stack_dim1": (Fn(lambda m, x, y: torch.stack([x, y, x * 2], dim=1) + 1),
                       [r(3, 4), r(3, 4)], None),
        "roll_dims": (Fn(lambda m, x: torch.roll(x, shifts=(2, -1), dims=(1, 0)) * 2),
                      [r(3, 5)], None),
        "roll_flat": (Fn(lambda m, x: torch.roll(x, 4) * 2), [r(3, 5)], None),
        "repeat_new_dims": (Fn(lambda m, x: x.repeat(2, 1, 3) + 1), [r(3, 4)], None),
        "pad_constant": (Fn(lambda m, x: F.pad(x, (1, 2, 0, 3), value=-1.5) * 2), [r(2, 3, 4)],
                         None),
        "pad_crop": (Fn(lambda m, x: F.pad(x, (-1, 2)) * 2), [r(3, 5)], None),
        "pad_reflect": (Fn(lambda m, x: F.pad(x, (2, 1, 1, 2), mode="reflect") * 2),
                        [r(1, 2, 4, 5)], None),
        "pad_replicate": (Fn(lambda m, x: F.pad(x, (3, 1), mode="replicate") * 2),
                          [r(1, 2, 5)], None),
        "pad_circular": (Fn(lambda m, x: F.pad(x, (2, 3), mode="circular") * 2), [r(1, 2, 5)],
                         None),
        "einsum_batched": (Fn(lambda m, x, y: torch.einsum("bij,bjk->bik", x, y)),
                           [r(2, 3, 4), r(2, 4, 5)], None),
        "einsum_heads": (Fn(lambda m, q, k: torch.einsum("bhqd,bhkd->bhqk", q, k) * 0.5),
                         [r(2, 3, 5, 4), r(2, 3, 6, 4)], None),
        "einsum_outer_transpose": (Fn(lambda m, x, y: torch.einsum("i,j->ji", x, y)),
                                   [r(3), r(4)], None),
        "einsum_sum_and_permute": (Fn(lambda m, x: torch.einsum("abc->ca", x)), [r(2, 3, 4)],
                                   None),
        "einsum_contract_free_sum": (Fn(lambda m, x, y: torch.einsum("ijk,jl->il", x, y)),
                                     [r(2, 3, 4), r(3, 5)], None),
        "einsum_ellipsis": (Fn(lambda m, x, y: torch.einsum("...ij,...jk->...ik", x, y)),
                            [r(2, 3, 4), r(2, 4, 5)], "'...' is not supported"),
        # Tensors made in the graph.
        "full_like": (Fn(lambda m, x: x + torch.full_like(x, 2.5)), [r(4, 8)], None),
        "new_full": (Fn(lambda m, x: x * x.new_full((4, 8), -1.5)), [r(4, 8)], None),
        "zeros_ones": (Fn(lambda m, x: x + torch.ones(8) - torch.zeros(4, 8)), [r(4, 8)], None),
        # GEMMs: bias, beta and alpha.
        "linear_no_bias": (torch.nn.Linear(8, 5, bias=False), [r(3, 8)], None),
        "addmm_beta_alpha": (Fn(lambda m, x, w, b: torch.addmm(b, x, w, beta=0.5, alpha=2.0)),
                             [r(3, 8), r(8, 5), r(5)], None),
        "addmm_weight_beta0": (Fn(lambda m, x: torch.addmm(m.p1, x, m.p0, beta=0, alpha=-1.5),
                                  params=[(8, 5), (5,)]), [r(3, 8)], None),
        "matmul_batched": (Fn(lambda m, x, y: torch.matmul(x, y)), [r(2, 3, 8), r(8, 4)], None),
        "bmm": (Fn(lambda m, x, y: torch.bmm(x, y)), [r(2, 3, 8), r(2, 8, 4)], None),
        # Convolution and pooling arguments.
        "conv_stride_pad_dilation": (conv(stride=2, padding=(1, 2), dilation=2), [r(1, 4, 11, 9)],
                                     None),
        "conv_groups_no_bias": (torch.nn.Conv2d(4, 6, 3, groups=2, bias=False).eval(),
                                [r(1, 4, 7, 7)], None),
        "conv_padding_same": (torch.nn.Conv2d(4, 6, 3, padding="same", dilation=2).eval(),
                              [r(1, 4, 8, 8)], None),
        "conv1d_stride_pad_dilation_groups": (torch.nn.Conv1d(4, 6, 3, stride=2, padding=2,
                                                              dilation=2, groups=2).eval(),
                                              [r(2, 4, 19)], None),
        "conv1d_padding_same": (torch.nn.Conv1d(4, 6, 4, padding="same").eval(), [r(1, 4, 9)],
                                None),
        "max_pool_ceil_pad": (torch.nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
                              [r(1, 4, 8, 8)], None),
        "avg_pool_exclude_pad": (torch.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                                    count_include_pad=False), [r(1, 4, 8, 8)],
                                 None),
        "adaptive_avg_pool": (torch.nn.AdaptiveAvgPool2d(1), [r(2, 4, 5, 7)], None),
        # Attention: scale, causal, masks.
        "sdpa_scale_causal": (Fn(lambda m, q, k, v: F.scaled_dot_product_attention(
            q, k, v, is_causal=True, scale=0.3)), [r(1, 2, 6, 8), r(1, 2, 6, 8), r(1, 2, 6, 8)],
            None),
        "sdpa_float_mask": (Fn(lambda m, q, k, v, a: F.scaled_dot_product_attention(
            q, k, v, attn_mask=a)), [r(1, 2, 5, 8), r(1, 2, 7, 8), r(1, 2, 7, 8), r(1, 1, 5, 7)],
            None),
        # Element types.
        "to_half_and_back": (Fn(lambda m, x: x.to(torch.float16).to(torch.float32) * 3),
                             [r(4, 8)], None),
    }


def trace(name, case, work):
    module, inputs, _ = case
    path = os.path.join(work, f"{name}.pt")
    with torch.no_grad():
        torch.jit.save(torch.jit.trace(module, tuple(inputs), check_trace=False), path)
    return path


def run_case(name, refusal, path, work, kiln_compile):
    out = subprocess.run([kiln_compile, path, "--verify", "-o", os.path.join(work, f"{name}.mlir")],
                         capture_output=True, text=True)
    text = (out.stdout + out.stderr).strip()
    if refusal is None:
        verified = text.count("(tolerance 1e-05) ok")
        if out.returncode == 0 and verified >= 2 and " FAIL" not in text:
            return True, f"ok ({verified} outputs verified)"
        return False, text[-600:]
    if out.returncode != 0 and refusal in text:
        return True, f"refused as expected: {refusal}"
    return False, f"expected a refusal containing {refusal!r}; got exit {out.returncode}:\n" + \
        text[-600:]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--kiln-compile", default="kiln-compile")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("names", nargs="*")
    args = parser.parse_intermixed_args()
    os.makedirs(args.work, exist_ok=True)
    all_cases = cases()
    unknown = [n for n in args.names if n not in all_cases]
    if unknown:
        print(f"unknown cases: {', '.join(unknown)}", file=sys.stderr)
        return 2
    selected = {n: all_cases[n] for n in (args.names or all_cases)}
    # Traced here, one at a time (tracing is not thread-safe); compiled in
    # parallel.
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {name: pool.submit(run_case, name, case[2], trace(name, case, args.work),
                                     args.work, args.kiln_compile)
                   for name, case in selected.items()}
        for name, future in futures.items():
            passed, detail = future.result()
            failures += not passed
            print(f"{'PASS' if passed else 'FAIL'} {name}: {detail}", flush=True)
    print(f"{len(selected) - failures} of {len(selected)} converter cases pass")
    return min(failures, 125)


if __name__ == "__main__":
    sys.exit(main())
