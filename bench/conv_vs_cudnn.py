#!/usr/bin/env python3
"""Every convolution of a torchvision CNN, as kiln runs it inside the whole
model, against cuDNN running the same convolution alone.

    conv_vs_cudnn.py PROFILE.txt... [--markdown OUT.md] [--json OUT.json]
                     [--launches 100] [--dry-run]

Each PROFILE is a file MODEL_bBATCH.txt (resnet50_b32.txt,
efficientnet_b0_b32.txt) holding `kiln-run --profile`'s output followed by
kiln-compile's per-launch report, as models_vs_torch.py --raw-dir writes
them. For each one:

- kiln's side: the launches whose ops contain conv2d, each timed alone as
  cuDNN is (kiln-run --time-launches: back-to-back launches of it replayed
  from one CUDA graph), and inside the model (the mean device time of its
  kernel in the profile: the whole model run many times, each launch
  between two events of its own; kernels are de-duplicated, so launches of
  one kernel share its mean). A profile without the launches timed alone
  gives the in-model times alone;
- PyTorch's side: the torchvision model (random weights, eval, fp16,
  channels_last) runs one forward with hooks on every nn.Conv2d, which record
  each convolution's shapes and parameters in execution order;
- the two are matched in order by FLOPs and result shape: a launch covers
  one convolution, or two that kiln fused into it (their FLOPs add up), and
  may take any of the next 3 convolutions not matched yet, since kiln may
  order independent branches (ResNet's downsample) differently;
- each convolution is timed alone as F.conv2d on channels_last fp16
  tensors, cuDNN's autotuner on, as the mean device time per call of
  --launches calls captured in one CUDA graph and replayed between two CUDA
  events (timing.graph_ms): issued from Python one by one, a small
  convolution would measure Python's dispatch (~20 us), not cuDNN. Without a
  bias by default, so cuDNN's column is the convolution alone while kiln's
  kernel also adds the bias (the folded BatchNorm) and runs the epilogue;
  --bias gives cuDNN the bias too (PyTorch may add it in a kernel of its
  own);
- like for like: a launch whose epilogue cuDNN can fuse (bias; bias and
  ReLU; bias, a residual add and ReLU) is also timed as that cuDNN call
  (F.conv2d with the bias, cudnn_convolution_relu,
  cudnn_convolution_add_relu). A residual epilogue reads a tensor as large
  as the output, traffic the convolution alone does not have; the summary
  compares kiln with the faster of these and the convolution alone.

Pooling launches (kind `pooling`) are matched in order, by result shape,
to the model's nn.MaxPool2d / nn.AvgPool2d modules and timed beside
F.max_pool2d / F.avg_pool2d on channels-last fp16 the same way (a table
of their own, and `pools` in the JSON summary).

Prints, per model, a table of every conv launch (kiln and cuDNN in µs,
their ratio, kiln's TFLOP/s on the convolutions' FLOPs, 2*N*Ho*Wo*Cout*
Cin/groups*kh*kw, without the epilogue's, and the launch's bytes floor:
the bytes kiln-compile's report says it moves, at the GPU's peak memory
rate) and a summary: the sums, the layers within 1.2x of cuDNN, those over
it whose 1.2x of cuDNN's time is under their bytes floor (a residual add
moves a tensor as large as the output, which cuDNN's convolution alone
does not), the 5 worst by ratio and the 5 that lose the most µs, and
depthwise and dense convolutions apart. A model whose launches do not
match is reported and left out.

Run on the GPU machine after `scripts/gpu-bench.sh cnn`, which writes the
profiles to $OUT/raw/:
    python3 bench/conv_vs_cudnn.py $OUT/raw/*_b32.txt --markdown $OUT/conv.md \\
        --json $OUT/conv.json
--dry-run needs no GPU: it builds the models on the CPU in fp32 and prints
the matching alone (each launch, its convolutions and their MFLOP).
--retable EARLIER.json needs no GPU either: it writes an earlier run's
tables again from its timings and the same profiles, with the bytes
floors at --memory-rate (the GPU's peak, which the earlier JSON names
where it was written with one).
"""
import argparse
import itertools
import json
import os
import sys
import warnings

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_profile import ProfileError, parse_profile  # noqa: E402
from timing import graph_ms  # noqa: E402

warnings.filterwarnings("ignore")

METHOD = ("cuDNN: mean device time per call of N calls replayed back to back from one CUDA "
          "graph between two CUDA events; kiln: the same for each launch of the model alone "
          "(kiln-run --time-launches), bias and epilogue included; 'in model' is the launch's "
          "kernel's mean inside the whole model (kiln-run --profile: each launch between two "
          "events of its own, without the programmatic overlap of an unprofiled run)")
METHOD_IN_MODEL = ("cuDNN: mean device time per call of N calls replayed back to back from one "
                   "CUDA graph between two CUDA events; kiln: mean per launch from kiln-run "
                   "--profile inside the whole model, bias and epilogue included")
WINDOW = 3        # kiln may run independent convolutions out of PyTorch's order
MAX_FUSED = 2     # convolutions one launch may cover
REL_TOL = 0.03
ABS_TOL = 0.5     # MFLOP, for the tiny squeeze-and-excitation convolutions
NEAR = 1.2        # "within 1.2x of cuDNN"


def peak_memory_rate(properties):
    """Bytes a second at the GPU's peak: the memory clock (kHz; double data
    rate) times the bus width (bits). H100 SXM: 2619 MHz x 5120 bits, 3.35
    TB/s."""
    return 2 * properties.memory_clock_rate * 1e3 * properties.memory_bus_width / 8


def bytes_floor_us(launch_bytes, memory_rate):
    """The least time a launch that moves `launch_bytes` can take, in µs."""
    return launch_bytes / memory_rate * 1e6



def hooked_forward(name, device, dtype, types, record):
    """Runs the torchvision model (random weights, eval, channels_last) once
    at batch 1 (cheap on the CPU) with record(qualname, module, inputs,
    output) hooked on every module of `types`: in execution order."""
    # Here, not at the top: --retable needs neither torchvision nor a GPU.
    import torchvision
    if name not in torchvision.models.__dict__:
        raise ProfileError(f"torchvision.models has no '{name}'")
    torch.manual_seed(0)
    model = torchvision.models.__dict__[name](weights=None).eval().to(device, dtype)
    model = model.to(memory_format=torch.channels_last)
    handles = [module.register_forward_hook(
        lambda module, inputs, output, qualname=qualname: record(qualname, module, inputs,
                                                                 output))
        for qualname, module in model.named_modules() if isinstance(module, types)]
    x = torch.randn(1, 3, 224, 224, device=device, dtype=dtype)
    with torch.no_grad():
        model(x.contiguous(memory_format=torch.channels_last))
    for handle in handles:
        handle.remove()


def record_convs(name, batch, device, dtype):
    """Every nn.Conv2d of the torchvision model in execution order, the
    batch scaled from the forward's 1."""
    convs = []

    def record(qualname, module, inputs, output):
        n, c, h, w = inputs[0].shape
        _, co, ho, wo = output.shape
        assert n == 1
        convs.append({
            "module": qualname, "input": (batch, c, h, w), "out_channels": co,
            "kernel_size": tuple(module.kernel_size), "stride": tuple(module.stride),
            "padding": module.padding if isinstance(module.padding, str)
            else tuple(module.padding),
            "dilation": tuple(module.dilation), "groups": module.groups,
            "bias": module.bias is not None, "output": (batch, co, ho, wo),
            "padding_mode": module.padding_mode})

    hooked_forward(name, device, dtype, torch.nn.Conv2d, record)
    for conv in convs:
        conv["mflop"] = conv_mflop(conv)
    return convs


def conv_mflop(conv):
    n, cin, _, _ = conv["input"]
    _, cout, ho, wo = conv["output"]
    kh, kw = conv["kernel_size"]
    return 2 * n * ho * wo * cout * (cin // conv["groups"]) * kh * kw / 1e6


def record_pools(name, batch, device, dtype):
    """Every nn.MaxPool2d and nn.AvgPool2d of the torchvision model in
    execution order, as record_convs."""
    pools = []

    def pair(value):
        return tuple(value) if isinstance(value, (tuple, list)) else (value, value)

    def record(qualname, module, inputs, output):
        _, c, h, w = inputs[0].shape
        _, _, ho, wo = output.shape
        pools.append({
            "module": qualname, "kind": "max" if isinstance(module, torch.nn.MaxPool2d)
            else "avg", "input": (batch, c, h, w), "output_nhwc": (batch, ho, wo, c),
            "kernel_size": pair(module.kernel_size), "stride": pair(module.stride),
            "padding": pair(module.padding), "ceil_mode": module.ceil_mode,
            "count_include_pad": getattr(module, "count_include_pad", True)})

    hooked_forward(name, device, dtype, (torch.nn.MaxPool2d, torch.nn.AvgPool2d), record)
    return pools


def match_pools(launches, pools):
    """kiln's pooling launches in order, each with the next recorded pool of
    its result shape (kiln computes the same pools in the same order)."""
    matched, next_pool = [], 0
    for launch in launches:
        if launch["kind"] != "pooling":
            continue
        for index in range(next_pool, len(pools)):
            if pools[index]["output_nhwc"] == launch["shape"]:
                matched.append((launch, pools[index]))
                next_pool = index + 1
                break
    return matched


def pytorch_pool_us(pool, launches):
    """F.max_pool2d / F.avg_pool2d on a channels-last fp16 input, timed as
    cudnn_ms times a convolution."""
    x = channels_last(*pool["input"])
    if pool["kind"] == "max":
        call = lambda: F.max_pool2d(x, pool["kernel_size"], pool["stride"],  # noqa: E731
                                    pool["padding"], ceil_mode=pool["ceil_mode"])
    else:
        call = lambda: F.avg_pool2d(x, pool["kernel_size"], pool["stride"],  # noqa: E731
                                    pool["padding"], ceil_mode=pool["ceil_mode"],
                                    count_include_pad=pool["count_include_pad"])
    return graph_ms(call, launches=launches) * 1e3


def timed_alone(path):
    try:
        return parse_profile(path).get("alone_repetitions") is not None
    except (ProfileError, OSError):
        return False


def kiln_us(profile, launch):
    """The launch alone where the profile has it (kiln-run --time-launches,
    timed as cuDNN is), else its kernel's mean inside the model; and the
    latter."""
    in_model = profile["kernels"][launch["kernel"]]["mean_ms"] * 1e3
    alone = launch.get("alone_ms")
    return (alone * 1e3 if alone is not None else in_model), in_model


def pool_rows(profile, matched, launches):
    rows = []
    for launch, pool in matched:
        kiln, _ = kiln_us(profile, launch)
        torch_us = pytorch_pool_us(pool, launches)
        rows.append({"launch": launch["index"], "module": pool["module"], "kind": pool["kind"],
                     "window": f"{pool['kernel_size'][0]}x{pool['kernel_size'][1]} "
                               f"s{pool['stride'][0]}",
                     "result": "x".join(map(str, launch["shape"])), "kiln_us": kiln,
                     "pytorch_us": torch_us, "ratio": kiln / torch_us})
    return rows


def pool_markdown(rows):
    if not rows:
        return ""
    # A blank line first: the text before it ends in a list, which would
    # take this paragraph for its last item's continuation.
    lines = ["", "", "Pooling (PyTorch: F.max_pool2d / F.avg_pool2d on channels-last fp16, timed "
             "as the convolutions):", "",
             "| launch # | module | pool | result | kiln µs | PyTorch µs | kiln/PyTorch |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['launch']} | {r['module']} | {r['kind']} {r['window']} | "
                     f"{r['result']} | {r['kiln_us']:.1f} | {r['pytorch_us']:.1f} | "
                     f"{r['ratio']:.2f}x |")
    return "\n".join(lines)


def is_depthwise(conv):
    return conv["groups"] > 1 and conv["groups"] == conv["input"][1]


def describe(conv):
    """'1x1 64->256 s1 56x56', 'dw3x3 240 s2 28x28': the input's H x W."""
    kh, kw = conv["kernel_size"]
    cin, h, w = conv["input"][1:]
    cout = conv["out_channels"]
    sh, sw = conv["stride"]
    stride = f"s{sh}" if sh == sw else f"s{sh}x{sw}"
    if is_depthwise(conv):
        text = f"dw{kh}x{kw} {cin}" + (f"->{cout}" if cout != cin else "")
    else:
        text = f"{kh}x{kw} {cin}->{cout}" + (f" g={conv['groups']}" if conv["groups"] > 1 else "")
    text += f" {stride}"
    if conv["dilation"] != (1, 1):
        text += f" d{conv['dilation'][0]}"
    return text + f" {h}x{w}"


def covers(launch, convs):
    """Whether the launch computes these convolutions: their result shape, and
    their FLOPs against the launch's. kiln's MFLOP adds one FLOP per result
    element for each epilogue op and each bias, which is 10% and more of a
    depthwise convolution's own: compared with and without that term."""
    last = convs[-1]
    n, c, h, w = last["output"]
    if launch["shape"] != (n, h, w, c):
        return False
    total = sum(conv["mflop"] for conv in convs)
    epilogue_ops = sum(1 for op in launch["ops"] if op != "conv2d") + len(convs)
    epilogue = epilogue_ops * n * c * h * w / 1e6
    tol = max(REL_TOL * total, ABS_TOL)
    return (abs(launch["mflop"] - total) <= tol
            or abs(launch["mflop"] - epilogue - total) <= tol)


def match(launches, convs):
    """[(launch, [conv index...])] for every conv launch, in kiln's order."""
    pending = list(range(len(convs)))
    matched = []
    for launch in launches:
        if "conv2d" not in launch["ops"]:
            continue
        window = pending[:WINDOW]
        found = None
        for size in range(1, MAX_FUSED + 1):
            for chosen in itertools.combinations(window, size):
                if covers(launch, [convs[i] for i in chosen]):
                    found = list(chosen)
                    break
            if found:
                break
        if not found:
            shape = "x".join(map(str, launch["shape"]))
            near = "; ".join(f"#{i} {describe(convs[i])} {convs[i]['mflop']:.3f} MFLOP -> "
                             f"{'x'.join(map(str, nhwc(convs[i]['output'])))}"
                             for i in window) or "none left"
            raise ProfileError(
                f"launch {launch['index']} ({', '.join(launch['ops'])} -> {shape}, "
                f"{launch['mflop']:.3f} MFLOP) matches none of the next convolutions: {near}")
        for i in found:
            pending.remove(i)
        matched.append((launch, found))
    if pending:
        raise ProfileError(f"{len(pending)} convolutions not covered by any launch, from "
                           f"#{pending[0]} {convs[pending[0]]['module']} "
                           f"({describe(convs[pending[0]])})")
    return matched


def nhwc(shape):
    n, c, h, w = shape
    return (n, h, w, c)


def conv_key(conv):
    return (conv["input"], conv["out_channels"], conv["kernel_size"], conv["stride"],
            conv["padding"], conv["dilation"], conv["groups"])


def channels_last(n, c, h, w):
    """A random fp16 [n, c, h, w] tensor on the GPU in channels-last order."""
    return torch.randn(n, c, h, w, device="cuda", dtype=torch.float16).to(
        memory_format=torch.channels_last)


def conv_operands(conv):
    """A random channels-last fp16 input and weight for `conv`."""
    n, cin, h, w = conv["input"]
    kh, kw = conv["kernel_size"]
    return (channels_last(n, cin, h, w),
            channels_last(conv["out_channels"], cin // conv["groups"], kh, kw) * 0.1)


def cudnn_ms(conv, launches, cache, with_bias=False):
    key = conv_key(conv)
    if key not in cache:
        x, weight = conv_operands(conv)
        bias = (torch.randn(conv["out_channels"], device="cuda", dtype=torch.float16)
                if with_bias else None)
        cache[key] = graph_ms(
            lambda: F.conv2d(x, weight, bias, conv["stride"], conv["padding"],
                             conv["dilation"], conv["groups"]), launches=launches)
    return cache[key]


# kiln's epilogue (the launch's ops besides the convolution and the input
# layout's permute) -> the cuDNN call that fuses the same work, bias
# included (kiln's carries the folded BatchNorm): what the convolution alone
# leaves out is the epilogue's traffic, a residual's whole tensor read.
FUSED_EPILOGUES = {(): "bias", ("relu",): "bias, relu", ("add", "relu"): "bias, add, relu"}


def fused_epilogue(launch, covered):
    """The cuDNN fusion doing a launch's whole work, or None."""
    if len(covered) != 1 or isinstance(covered[0]["padding"], str):
        return None
    rest = tuple(op for op in launch["ops"] if op not in ("conv2d", "permute"))
    return FUSED_EPILOGUES.get(rest)


def cudnn_fused_ms(conv, epilogue, launches, cache):
    """cuDNN's fused convolution with `epilogue` (FUSED_EPILOGUES): conv +
    bias as F.conv2d, + ReLU as cudnn_convolution_relu, + residual + ReLU as
    cudnn_convolution_add_relu (the kernels PyTorch's conv-add-ReLU fusion
    calls). None where cuDNN refuses it."""
    key = conv_key(conv) + (epilogue,)
    if key not in cache:
        x, weight = conv_operands(conv)
        bias = torch.randn(conv["out_channels"], device="cuda", dtype=torch.float16)
        geometry = (list(conv["stride"]), list(conv["padding"]), list(conv["dilation"]),
                    conv["groups"])
        residual = torch.randn_like(F.conv2d(x, weight, None, *geometry))
        call = {"bias": lambda: F.conv2d(x, weight, bias, *geometry),
                "bias, relu": lambda: torch.cudnn_convolution_relu(x, weight, bias, *geometry),
                "bias, add, relu": lambda: torch.cudnn_convolution_add_relu(
                    x, weight, residual, 1.0, bias, *geometry)}[epilogue]
        try:
            cache[key] = graph_ms(call, launches=launches)
        except RuntimeError as error:
            print(f"warning: cuDNN's fused {epilogue} for {describe(conv)}: {error}",
                  file=sys.stderr)
            cache[key] = None
    return cache[key]


def conv_class(covered):
    kinds = {is_depthwise(conv) for conv in covered}
    return "mixed" if len(kinds) > 1 else ("depthwise" if kinds.pop() else "dense")


def with_floor(row, launch, memory_rate):
    """`row` with the launch's bytes and, at `memory_rate` (bytes a second;
    None: unknown), its bytes floor."""
    row["bytes"] = launch["bytes"]
    row["floor_us"] = bytes_floor_us(launch["bytes"], memory_rate) if memory_rate else None
    return row


def measure(profile, convs, matched, launches, cache, with_bias, memory_rate):
    rows = []
    for launch, indices in matched:
        covered = [convs[i] for i in indices]
        mflop = sum(conv["mflop"] for conv in covered)
        kiln, in_model = kiln_us(profile, launch)
        cudnn_us = sum(cudnn_ms(conv, launches, cache, with_bias) for conv in covered) * 1e3
        epilogue = fused_epilogue(launch, covered)
        fused_ms = cudnn_fused_ms(covered[0], epilogue, launches, cache) if epilogue else None
        # Like for like: cuDNN's fusion of the launch's whole work where
        # it has one, unless the convolution alone is faster (cuDNN's fused
        # path is 4x slower on some shapes; the lower time errs for cuDNN).
        like_us = min(fused_ms * 1e3, cudnn_us) if fused_ms is not None else cudnn_us
        # The same work: cuDNN's fusion of the launch's whole work wherever
        # it has one, even where the convolution alone (which skips the
        # bias, the ReLU and a residual's read) is faster; the convolution
        # alone, a lower bound, where it has none.
        same_us = fused_ms * 1e3 if fused_ms is not None else cudnn_us
        rows.append({
            "launch": launch["index"], "ops": ", ".join(launch["ops"]),
            "kernel": launch["kernel"], "convs": [describe(conv) for conv in covered],
            "modules": [conv["module"] for conv in covered], "class": conv_class(covered),
            "conv_mflop": mflop, "kiln_mflop": launch["mflop"], "kiln_us": kiln,
            "kiln_in_model_us": in_model,
            "cudnn_us": cudnn_us, "ratio": kiln / cudnn_us, "kiln_tflops": mflop / kiln,
            "cudnn_fused": epilogue if fused_ms is not None else None,
            "cudnn_fused_us": fused_ms * 1e3 if fused_ms is not None else None,
            "like_us": like_us, "like_ratio": kiln / like_us,
            "same_us": same_us, "same_ratio": kiln / same_us})
        with_floor(rows[-1], launch, memory_rate)
    return rows


def summarize(rows, profile):
    def sums(subset):
        kiln, cudnn = sum(r["kiln_us"] for r in subset), sum(r["cudnn_us"] for r in subset)
        return {"launches": len(subset), "kiln_us": kiln, "cudnn_us": cudnn,
                "ratio": kiln / cudnn if cudnn else None}
    summary = sums(rows)
    summary["within_1_2x"] = sum(1 for r in rows if r["ratio"] <= NEAR)
    like = sum(r["like_us"] for r in rows)
    summary["like_for_like"] = {"cudnn_us": like, "ratio": summary["kiln_us"] / like,
                                "fused_launches": sum(1 for r in rows if r["cudnn_fused"]),
                                "within_1_2x": sum(1 for r in rows if r["like_ratio"] <= NEAR)}
    same = sum(r["same_us"] for r in rows)
    summary["same_work"] = {"cudnn_us": same, "ratio": summary["kiln_us"] / same,
                            "within_1_2x": sum(1 for r in rows if r["same_ratio"] <= NEAR),
                            "over_1_2x": [r["launch"] for r in rows if r["same_ratio"] > NEAR]}
    # Over 1.2x of cuDNN where 1.2x of cuDNN's time is under the bytes the
    # launch moves at the GPU's peak memory rate: no kernel gets there.
    summary["over_under_floor"] = [
        r["launch"] for r in rows
        if r["ratio"] > NEAR and r.get("floor_us") is not None
        and NEAR * r["cudnn_us"] < r["floor_us"]]
    summary["worst"] = [r["launch"] for r in sorted(rows, key=lambda r: -r["ratio"])[:5]]
    # The worst ratios are often tiny convolutions that cost little: where
    # the time goes is listed apart.
    summary["most_us_over"] = [r["launch"] for r in
                               sorted(rows, key=lambda r: r["cudnn_us"] - r["kiln_us"])[:5]]
    summary["by_class"] = {cls: sums([r for r in rows if r["class"] == cls])
                           for cls in ("dense", "depthwise", "mixed")
                           if any(r["class"] == cls for r in rows)}
    summary["run_us"] = profile["run_ms"] * 1e3 if profile["run_ms"] else None
    summary["alone"] = profile.get("alone_repetitions") is not None
    summary["kiln_in_model_us"] = sum(r["kiln_in_model_us"] for r in rows)
    return summary


def markdown(profile, rows, summary):
    title = f"### {profile['model']}, batch {profile['batch']}"
    alone = summary["alone"]
    floors = all(r.get("floor_us") is not None for r in rows)
    lines = [title, "",
             "| launch # | kiln ops | conv(s) | MFLOP | kiln µs | "
             + ("kiln in model µs | " if alone else "")
             + "cuDNN µs | kiln/cuDNN | cuDNN fused µs | kiln/fused | kiln TFLOP/s |"
             + (" bytes floor µs |" if floors else ""),
             "|---|---|---|---|---|" + ("---|" if alone else "") + "---|---|---|---|---|"
             + ("---|" if floors else "")]
    for r in rows:
        # kiln against cuDNN's fused call itself (the like-for-like summary
        # below takes the faster of it and the convolution alone).
        fused = (f"{r['cudnn_fused_us']:.1f} ({r['cudnn_fused']}) | "
                 f"{r['kiln_us'] / r['cudnn_fused_us']:.2f}x"
                 if r["cudnn_fused"] else "- | -")
        in_model = f"{r['kiln_in_model_us']:.1f} | " if alone else ""
        lines.append(f"| {r['launch']} | {r['ops']} | {' + '.join(r['convs'])} | "
                     f"{r['conv_mflop']:.1f} | {r['kiln_us']:.1f} | {in_model}"
                     f"{r['cudnn_us']:.1f} | "
                     f"{r['ratio']:.2f}x | {fused} | {r['kiln_tflops']:.1f} |"
                     + (f" {r['floor_us']:.1f} |" if floors else ""))
    by_launch = {r["launch"]: r for r in rows}
    if alone:
        share = (f" each alone; {summary['kiln_in_model_us']:.1f} µs in the model"
                 + (f", {summary['kiln_in_model_us'] / summary['run_us']:.0%} of its "
                    f"{summary['run_us']:.1f} µs profiled run" if summary["run_us"] else ""))
    else:
        share = (f" ({summary['kiln_us'] / summary['run_us']:.0%} of kiln's "
                 f"{summary['run_us']:.1f} µs run)" if summary["run_us"] else "")
    lines += ["",
              f"**{profile['model']} b{profile['batch']}**: {summary['launches']} conv launches, "
              f"kiln {summary['kiln_us']:.1f} µs{share}, cuDNN {summary['cudnn_us']:.1f} µs, "
              f"kiln/cuDNN {summary['ratio']:.2f}x; {summary['within_1_2x']} of "
              f"{summary['launches']} within {NEAR}x of cuDNN.",
              f"- Like for like (cuDNN's fused convolution + bias [+ residual] [+ ReLU] "
              f"on the {summary['like_for_like']['fused_launches']} launches it can fuse, "
              f"where faster than the convolution alone; the convolution alone on the "
              f"others): cuDNN "
              f"{summary['like_for_like']['cudnn_us']:.1f} µs, kiln/cuDNN "
              f"{summary['like_for_like']['ratio']:.2f}x; "
              f"{summary['like_for_like']['within_1_2x']} of {summary['launches']} within "
              f"{NEAR}x.",
              f"- The same work (cuDNN's fused convolution + bias [+ residual] [+ ReLU] "
              f"wherever it can fuse the launch's work, faster or not; the convolution "
              f"alone, a lower bound, on the others): cuDNN "
              f"{summary['same_work']['cudnn_us']:.1f} µs, kiln/cuDNN "
              f"{summary['same_work']['ratio']:.2f}x; {summary['same_work']['within_1_2x']} "
              f"of {summary['launches']} within {NEAR}x"
              + (f" (over: {', '.join('#' + str(i) for i in summary['same_work']['over_1_2x'])})"
                 if summary['same_work']['over_1_2x'] else "") + "."]
    over = [r["launch"] for r in rows if r["ratio"] > NEAR]
    if floors and over:
        under = summary["over_under_floor"]
        lines.append(
            f"- Over {NEAR}x of cuDNN's convolution alone: {len(over)}; of them "
            f"{len(under)} move more bytes than {NEAR}x cuDNN's time allows at the GPU's "
            f"peak memory rate ({summary['memory_rate'] / 1e12:.2f} TB/s)"
            + (f": {', '.join('#' + str(i) for i in under)}" if under else "") + ".")
    for cls, s in summary["by_class"].items():
        lines.append(f"- {cls}: {s['launches']} launches, kiln {s['kiln_us']:.1f} µs, "
                     f"cuDNN {s['cudnn_us']:.1f} µs, {s['ratio']:.2f}x")
    def listed(launches):
        return ", ".join(
            f"#{i} {' + '.join(by_launch[i]['convs'])} {by_launch[i]['ratio']:.2f}x "
            f"({by_launch[i]['kiln_us'] - by_launch[i]['cudnn_us']:+.1f} µs)" for i in launches)
    lines.append(f"- worst kiln/cuDNN: {listed(summary['worst'])}")
    lines.append(f"- most µs over cuDNN: {listed(summary['most_us_over'])}")
    return "\n".join(lines)


def dry_run_text(profile, convs, matched):
    lines = [f"{profile['model']} b{profile['batch']}: {len(matched)} conv launches matched "
             f"to {len(convs)} convolutions"]
    for launch, indices in matched:
        kiln, _ = kiln_us(profile, launch)
        parts = " + ".join(f"#{i} {convs[i]['module']} {describe(convs[i])} "
                           f"{convs[i]['mflop']:.3f}" for i in indices)
        lines.append(f"  launch {launch['index']:3d} {launch['mflop']:10.3f} MFLOP "
                     f"{kiln:7.1f} µs  <- {parts}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profiles", nargs="+", metavar="PROFILE.txt")
    parser.add_argument("--markdown", help="also write the tables as Markdown")
    parser.add_argument("--json", help="also write the rows as JSON")
    parser.add_argument("--launches", type=int, default=100,
                        help="back-to-back calls per cuDNN timing (default 100)")
    parser.add_argument("--bias", action="store_true",
                        help="time cuDNN's convolutions with a bias (default: the convolution "
                             "alone)")
    parser.add_argument("--dry-run", action="store_true",
                        help="match launches to convolutions on the CPU, time nothing")
    parser.add_argument("--memory-rate", type=float, metavar="TB/s",
                        help="the peak memory rate for the bytes floors (default: the GPU's, "
                             "from its memory clock and bus width)")
    parser.add_argument("--retable", metavar="EARLIER.json",
                        help="no GPU: the tables of an earlier run (its JSON, from the same "
                             "profiles) written again, with the bytes floors")
    args = parser.parse_args()
    memory_rate = args.memory_rate * 1e12 if args.memory_rate else None

    if args.retable:
        retable(args, memory_rate)
        return
    if args.dry_run:
        header = "Dry run on the CPU (fp32 model, batch 1 scaled): matching only."
        device, dtype = "cpu", torch.float32
    else:
        if not torch.cuda.is_available():
            sys.exit("conv_vs_cudnn: no CUDA device (use --dry-run to check the matching)")
        # As a user tuning for speed would run PyTorch: cuDNN picks each
        # convolution's algorithm by timing them.
        torch.backends.cudnn.benchmark = True
        # The profiles say how kiln was timed; the header says it for all.
        alone = all(timed_alone(p) for p in args.profiles)
        method = METHOD if alone else METHOD_IN_MODEL
        if memory_rate is None:
            memory_rate = peak_memory_rate(torch.cuda.get_device_properties(0))
        header = (f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}. Timing: "
                  f"{method.replace('N calls', f'{args.launches} calls')}"
                  f"{'; cuDNN with a bias' if args.bias else '; cuDNN without a bias'}.")
        device, dtype = "cuda", torch.float16
    print(header + "\n")

    sections, models, skipped, cache = [], [], [], {}
    for path in args.profiles:
        try:
            profile = parse_profile(path)
            convs = record_convs(profile["model"], profile["batch"], device, dtype)
            matched = match(profile["launches"], convs)
        except ProfileError as error:
            print(f"warning: {path}: skipped: {error}", file=sys.stderr)
            skipped.append(path)
            continue
        if args.dry_run:
            text = dry_run_text(profile, convs, matched)
            rows = [{"launch": launch["index"], "ops": ", ".join(launch["ops"]),
                     "kernel": launch["kernel"], "kiln_mflop": launch["mflop"],
                     "convs": [describe(convs[i]) for i in indices],
                     "modules": [convs[i]["module"] for i in indices],
                     "conv_mflop": sum(convs[i]["mflop"] for i in indices)}
                    for launch, indices in matched]
            summary = None
        else:
            rows = measure(profile, convs, matched, args.launches, cache, args.bias,
                           memory_rate)
            summary = summarize(rows, profile)
            summary["memory_rate"] = memory_rate
            pools = pool_rows(profile, match_pools(profile["launches"],
                                                   record_pools(profile["model"],
                                                                profile["batch"], device,
                                                                dtype)), args.launches)
            summary["pools"] = pools
            text = markdown(profile, rows, summary) + pool_markdown(pools)
        print(text + "\n", flush=True)
        sections.append(text)
        models.append({"model": profile["model"], "batch": profile["batch"],
                       "profile": path, "rows": rows, "summary": summary})

    write(args, header, sections, models, skipped, memory_rate, args.launches, args.dry_run)


def write(args, header, sections, models, skipped, memory_rate, launches, dry_run):
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(header + "\n\n" + "\n\n".join(sections) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "launches": launches, "dry_run": dry_run,
                       "memory_rate": memory_rate, "models": models, "skipped": skipped},
                      f, indent=1)
    if skipped:
        sys.exit(1)


def retable(args, memory_rate):
    """The tables of an earlier run's JSON again, each row given its launch's
    bytes (from the same profiles) and its bytes floor at `memory_rate`."""
    with open(args.retable) as f:
        earlier = json.load(f)
    if earlier.get("dry_run"):
        sys.exit(f"conv_vs_cudnn: {args.retable} is a dry run: it has no timings")
    if memory_rate is None:
        memory_rate = earlier.get("memory_rate")
    if memory_rate is None:
        sys.exit(f"conv_vs_cudnn: {args.retable} names no memory rate: give --memory-rate")
    # A table written again keeps its run's header, not an earlier retable's
    # note on top of this one's.
    header = earlier["header"].split(" Bytes floors at ")[0] + (
        f" Bytes floors at {memory_rate / 1e12:.2f} TB/s, "
        f"written again from {os.path.basename(args.retable)}.")
    print(header + "\n")
    by_model = {(m["model"], m["batch"]): m for m in earlier["models"]}
    sections, models, skipped = [], [], []
    for path in args.profiles:
        try:
            profile = parse_profile(path)
        except ProfileError as error:
            print(f"warning: {path}: skipped: {error}", file=sys.stderr)
            skipped.append(path)
            continue
        entry = by_model.get((profile["model"], profile["batch"]))
        launches = {launch["index"]: launch for launch in profile["launches"]}
        if entry is None or any(r["launch"] not in launches or
                                launches[r["launch"]]["kernel"] != r["kernel"]
                                for r in entry["rows"]):
            print(f"warning: {path}: skipped: not the profile of {args.retable}'s "
                  f"{profile['model']} b{profile['batch']}", file=sys.stderr)
            skipped.append(path)
            continue
        rows = [with_floor(dict(r), launches[r["launch"]], memory_rate) for r in entry["rows"]]
        summary = summarize(rows, profile)
        summary["memory_rate"] = memory_rate
        summary["pools"] = entry["summary"].get("pools", [])
        text = markdown(profile, rows, summary) + pool_markdown(summary["pools"])
        print(text + "\n", flush=True)
        sections.append(text)
        models.append({"model": profile["model"], "batch": profile["batch"],
                       "profile": path, "rows": rows, "summary": summary})
    write(args, header, sections, models, skipped, memory_rate,
          earlier.get("launches", args.launches), False)


if __name__ == "__main__":
    main()
