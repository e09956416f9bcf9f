#!/usr/bin/env python3
"""Whole models: kiln against every PyTorch mode a user would deploy, in one run.

    models_vs_torch.py BIN_DIR WORK_DIR [--models resnet50 ...] [--batches 1 32]
                       [--rounds 3] [--json OUT.json] [--peers-bin kiln-torch-peers]
                       [--aoti] [--max-autotune | --only-max-autotune]
                       [--torchscript] [--default-compile]

For each model (random init, seed 0; MobileNetV3 and EfficientNet with
BatchNorm statistics calibrated on random images: see calibrated()) and
batch size, in fp16 on the GPU: traces the model, compiles it with
kiln-compile (cold kernel cache: the compile time is kiln's whole compile)
and checks `kiln-run --check` against PyTorch's fp32 result on the same
input (rel L2 <= 1e-2). Then it prepares the peers:

- from Python: eager, TorchScript (trace + freeze), torch.compile (default,
  "reduce-overhead", and with --max-autotune "max-autotune");
- from C++ (--peers-bin, bench/peers/): the frozen TorchScript module loaded
  with torch::jit::load, and with --aoti AOTInductor packages
  (aoti_compile_and_package, default and with --max-autotune max_autotune),
  each timed as plain calls and as a captured CUDA graph's replays.
Every build time is a cold one: kiln's kernel cache, and Inductor's and
Triton's caches, start empty for each build.

--only-max-autotune times kiln against the max-autotune modes alone (their
autotuning takes minutes per row): its file is a supplement that report.py
merges into a full run's rows.

cuDNN's autotuner (cudnn.benchmark) is on for every PyTorch mode. Every
figure is the median wall time of synchronous calls with device-resident
inputs (kiln: `kiln-run --device-io --bench`, CUDA graph), measured in
--rounds rounds that alternate kiln and the peers (odd rounds reverse the
order); a row keeps each round's median and reports the median of those.
A row whose kiln check fails in any round is marked FAIL (report.py leaves
it out of every mean). Writes the raw numbers as JSON after every row. Run
on the GPU machine.
"""
import argparse
import copy
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import best_of  # noqa: E402  (the fastest peer, as RESULTS.md counts it)
from timing import median_ms  # noqa: E402

warnings.filterwarnings("ignore")
# fp32 references in fp32, not cuDNN's default TF32.
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
# PyTorch as a user tuning for speed would run it: cuDNN picks each
# convolution's algorithm by timing them.
torch.backends.cudnn.benchmark = True
if hasattr(torch._dynamo.config, "recompile_limit"):
    torch._dynamo.config.recompile_limit = 64
torch._dynamo.config.cache_size_limit = 64

def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


REPORT_ROW = re.compile(r"\s*\d+\s+(\S+)\s+(.*?)\s+(\S+)\s+([0-9.]+)\s+([0-9.]+)(?:\s+(kiln_\w+))?\s*$")


def report_by_kind(text):
    """`kiln-compile --report` summed per kernel kind: {kind: {kernels,
    mflop, kib}} (kinds as the profiler names them)."""
    kinds = {}
    for line in text.splitlines():
        match = REPORT_ROW.match(line)
        if not match:
            continue
        entry = kinds.setdefault(match.group(1), {"kernels": 0, "mflop": 0.0, "kib": 0.0})
        entry["kernels"] += 1
        entry["mflop"] += float(match.group(4))
        entry["kib"] += float(match.group(5))
    return kinds


def report_by_kernel(text):
    """The report's rows per artifact kernel (written with an artifact, the
    report names them): {kernel: {ops, result, launches, mflop, kib}} per
    launch, to set each profiled kernel beside its own roofline floor."""
    kernels = {}
    for line in text.splitlines():
        match = REPORT_ROW.match(line)
        if not match or not match.group(6):
            continue
        # The ops column is 44 wide (kiln's printReport); a result may hold
        # several types, so it is whatever lies between that and the numbers.
        ops, rest = line[21:65].strip(), line[66:]
        result = rest[:rest.find(match.group(4))].strip() if match.group(4) in rest else ""
        entry = kernels.setdefault(match.group(6), {
            "ops": ops, "result": result, "launches": 0,
            "mflop": float(match.group(4)), "kib": float(match.group(5))})
        entry["launches"] += 1
    return kernels


def profile_rows(text):
    """`kiln-run --profile`: the slowest kernels and the device time per run
    of each kernel kind."""
    runs = re.search(r"(\d+) runs, [0-9.]+ ms of device time per run", text)
    runs = int(runs.group(1)) if runs else 1
    top, by_kind = [], {}
    for line in text.splitlines():
        match = re.match(r"(kiln_\w+)\s+(\S+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)%", line)
        if not match:
            continue
        name, kind, calls, total = match.group(1), match.group(2), int(match.group(3)), float(
            match.group(4))
        by_kind[kind] = by_kind.get(kind, 0.0) + total / runs
        top.append({"kernel": name, "kind": kind, "launches_per_run": calls // runs,
                    "ms_per_run": total / runs, "mean_ms": float(match.group(5))})
    return {"profile_top": top[:8], "profile_ms_by_kind": by_kind}


def calibrated(name, device="cuda"):
    """A torchvision model with random weights (seed 0) whose BatchNorm
    statistics are measured on random images, as training would have left
    them. Left at their initial values, MobileNetV3's and EfficientNet's
    activations shrink to ~1e-10 by the classifier: below fp16's range, so
    no fp16 result (PyTorch's included) could match an fp32 reference."""
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = None  # a plain average over the calibration batch
            m.reset_running_stats()
    model.train().to(device)
    with torch.no_grad():
        model(torch.randn(16, 3, 224, 224, device=device))
    return model.eval()


TRANSFORMERS = ("vit_b_16", "bert", "gpt2", "gpt2_block", "ffn")
# Models whose outputs underflow fp16 at torchvision's initialization. The
# others keep it: calibrated on random images, ResNet-50's fp16 result is
# 2.9e-2 from its fp32 one in PyTorch itself (H200, 2026-11-30), so no fp16
# implementation could meet the 1e-2 check; at its initialization PyTorch's
# fp16 error is ~4e-4.
CALIBRATED = ("mobilenet_v3_large", "efficientnet_b0")


def model_and_inputs(name, batch):
    """The fp32 model (on the GPU) and its fp32 example inputs (on the CPU)."""
    if name in TRANSFORMERS:
        from export_transformers import build
        model, inputs = build(name, batch, 128)
        return model.cuda(), list(inputs)
    if name in CALIBRATED:
        model = calibrated(name)
    else:
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval().cuda()
    torch.manual_seed(1)
    return model, [torch.randn(batch, 3, 224, 224)]


def timed_compile(row, key, make, work=None):
    """Builds a peer with `make` (which also warms it up), recording its
    build time, or the error that stopped it (the other peers go on).
    Inductor's and Triton's caches start empty for each build (a folder of
    its own under `work`), as kiln's kernel cache does for kiln-compile:
    with the default folders, a build could reuse kernels that an earlier
    row or run on the machine compiled, and its time would not be a cold
    compile's."""
    from torch._inductor.utils import fresh_cache
    start = time.perf_counter()
    try:
        with fresh_cache(dir=work, delete=False):
            peer = make()
            torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001 - one peer failing must not stop the row
        row[f"{key}_error"] = f"{type(error).__name__}: {str(error).strip()[:300]}"
        print(f"  {key}: error: {row[key + '_error']}", flush=True)
        return None
    row[f"{key}_compile_s"] = time.perf_counter() - start
    return peer


def python_peers(m16, in16, row, args, work):
    """The Python modes as zero-argument callables, each compiled from its
    own copy of the module (so no two modes share a dynamo cache entry)."""
    peers = {} if args.only_max_autotune else {"eager": lambda: m16(*in16)}

    def warmed(fn):
        for _ in range(3):
            fn(*in16)
        return fn

    if args.torchscript and not args.only_max_autotune:
        frozen = timed_compile(row, "torchscript", lambda: warmed(torch.jit.freeze(
            torch.jit.trace(m16, tuple(in16), check_trace=False, strict=False).eval())), work)
        if frozen is not None:
            peers["torchscript"] = lambda: frozen(*in16)
    modes = ([("compile_default", {})] if args.default_compile else []) + [
        ("compile", {"mode": "reduce-overhead"})] + (
        [("compile_max_autotune", {"mode": "max-autotune"})] if args.max_autotune else [])
    if args.only_max_autotune:
        modes = [("compile_max_autotune", {"mode": "max-autotune"})]
    for key, options in modes:
        compiled = timed_compile(row, key, lambda: warmed(torch.compile(copy.deepcopy(m16),
                                                                        **options)), work)
        if compiled is not None:
            peers[key] = (lambda c: lambda: c(*in16))(compiled)
    return peers


def cpp_peers(m16, in16, reference, work, row, args):
    """The C++ peers as (key, command) for bench/peers' kiln-torch-peers:
    the frozen TorchScript module, and AOTInductor packages."""
    if not args.peers_bin:
        return []
    inputs_pt, reference_pt = os.path.join(work, "inputs.pt"), os.path.join(work, "ref.pt")
    torch.save([x.cpu() for x in in16], inputs_pt)
    torch.save(reference, reference_pt)
    tail = [inputs_pt, reference_pt, str(args.runs)]
    commands = []

    def save_frozen():
        path = os.path.join(work, "torchscript_f16.pt")
        torch.jit.save(torch.jit.freeze(torch.jit.trace(
            m16, tuple(in16), check_trace=False, strict=False).eval()), path)
        return path

    path = None if args.only_max_autotune else timed_compile(row, "torchscript_cpp",
                                                             save_frozen, work)
    if path:
        commands.append(("torchscript_cpp", [args.peers_bin, "torchscript", path, *tail]))
    if args.aoti:
        variants = ([] if args.only_max_autotune else [("aoti", {})]) + (
            [("aoti_max_autotune", {"max_autotune": True})]
            if args.max_autotune or args.only_max_autotune else [])
        for key, configs in variants:
            def package(key=key, configs=configs):
                exported = torch.export.export(copy.deepcopy(m16), tuple(in16))
                return torch._inductor.aoti_compile_and_package(
                    exported, package_path=os.path.join(work, f"{key}.pt2"),
                    inductor_configs=configs)
            path = timed_compile(row, key, package, work)
            if path:
                commands.append((key, [args.peers_bin, "aoti", path, *tail]))
    return commands


PEER_LINE = re.compile(r"^(plain|graph): median ([0-9.]+) ms.*?(?:check rel L2 ([0-9.e+-]+))?$",
                       re.M)


def time_cpp_peer(key, command, row):
    """One round of a C++ peer: {key: ms, key_graph: ms} from its plain
    calls and graph replays, its output's rel L2 recorded in the row."""
    out = run(command)
    text = out.stdout + out.stderr
    if out.returncode != 0:
        row[f"{key}_error"] = text.strip().splitlines()[-1] if text.strip() else "failed"
        return {}
    check = re.search(r"^check: rel L2 ([0-9.e+-]+)", text, re.M)
    if check:
        row[f"{key}_rel_l2"] = float(check.group(1))
    times = {}
    for match in PEER_LINE.finditer(text):
        suffix = "" if match.group(1) == "plain" else "_graph"
        times[key + suffix] = float(match.group(2))
        if match.group(3):
            row[f"{key}{suffix}_rel_l2"] = float(match.group(3))
    unavailable = re.search(r"^graph: unavailable: (.*)$", text, re.M)
    if unavailable:
        row[f"{key}_graph_error"] = unavailable.group(1)[:300]
    return times


def output_tensors(output):
    """A model's outputs as a list of tensors in order, as kiln names them:
    a tensor, or the tensors of a tuple, list or dict (a Hugging Face
    ModelOutput), None entries left out."""
    if isinstance(output, torch.Tensor):
        return [output]
    items = list(output.values()) if isinstance(output, dict) else list(output)
    return [t for item in items if item is not None for t in output_tensors(item)]


def export_for_kiln(name, batch, work, export="torchscript"):
    """Traces the fp32 model for kiln, writes its inputs (rounded to fp16,
    what kiln and PyTorch's fp16 modes see) and PyTorch's fp32 reference
    (ref0.npy, ref1.npy, ...: one per output). Returns the fp16 model and
    inputs on the GPU, the first output's reference, the input names,
    torch fp16's own error on the first output, and the reference files."""
    model, inputs = model_and_inputs(name, batch)
    with torch.no_grad():
        references = [t.float().cpu()
                      for t in output_tensors(model(*[x.cuda() for x in inputs]))]
        reference = references[0]
        # kiln gets the fp32 model and computes in fp16 (--precision fp16):
        # freezing then folds BatchNorm into the weights in fp32 and kiln
        # rounds them to fp16 once, where folding an fp16 model would round
        # in fp16 at every step. Traced from a copy taken before PyTorch's
        # model turns fp16: `.half()` then `.float()` would hand kiln
        # parameters (and BatchNorm statistics) already rounded to fp16, a
        # different model from the reference's (MobileNetV3: +4.5e-3).
        if export == "pt2":
            # torch.export's archive of the same fp32 model (exported on the
            # CPU: kiln reads the weights' bytes, wherever they lived).
            program = torch.export.export(copy.deepcopy(model).cpu(),
                                          tuple(x.cpu() for x in inputs))
            torch.export.save(program, os.path.join(work, "model.pt2"))
            names = list(program.graph_signature.user_inputs)
        else:
            traced = torch.jit.trace(copy.deepcopy(model), tuple(x.cuda() for x in inputs),
                                     check_trace=False, strict=False)
            torch.jit.save(traced, os.path.join(work, "model.pt"))
            names = [v.debugName().split(".")[0] for v in list(traced.graph.inputs())[1:]]
        m16 = model.half()
        in16 = [x.half().cuda() if x.is_floating_point() else x.cuda() for x in inputs]
        eager16 = output_tensors(m16(*in16))[0].float().cpu()
    for input_name, x in zip(names, in16):
        np.save(os.path.join(work, f"{input_name}.npy"),
                x.float().cpu().numpy() if x.is_floating_point() else x.cpu().numpy())
    reference_files = []
    for index, tensor in enumerate(references):
        reference_files.append(os.path.join(work, f"ref{index}.npy"))
        np.save(reference_files[-1], tensor.numpy())
    error = float((eager16 - reference).norm() / reference.norm())
    return m16, in16, reference, names, error, reference_files


def tuning_file(work, args):
    """--kiln-tuning DIR's file for the row whose work folder is `work`
    (MODEL_bBATCH.json, bench/tune_layers.py's), or None."""
    if not args.kiln_tuning:
        return None
    path = os.path.join(args.kiln_tuning, os.path.basename(os.path.normpath(work)) + ".json")
    return os.path.abspath(path) if os.path.exists(path) else None


def cold_kiln_compile(work, args, flags, artifact):
    """kiln-compile of the exported model in fp16 to `artifact` with
    `flags`, the kernel cache emptied first (a work folder reused from an
    earlier run would hold every kernel): (the finished process, seconds)."""
    cache = os.path.join(work, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    model_file = "model.pt2" if args.export == "pt2" else "model.pt"
    # Like for like: PyTorch's fp16 modes take and give fp16 tensors, so
    # kiln's inputs and outputs are fp16 too (--io-dtype f16: no cast
    # kernels at the ends); `declared` keeps the model's fp32 signature.
    io = [] if args.kiln_io_dtype == "declared" else ["--io-dtype", args.kiln_io_dtype]
    tuning = tuning_file(work, args)
    tuned = [f"--kernel-tuning={tuning}"] if tuning else []
    start = time.perf_counter()
    done = run([f"{args.bin}/kiln-compile", os.path.join(work, model_file), "--precision",
                "fp16", *io, *flags, *tuned, "-o", os.path.join(work, artifact)] + args.kiln_flag,
               env=dict(os.environ, KILN_CACHE_DIR=cache))
    return done, time.perf_counter() - start


def compile_kiln(work, row, args):
    """kiln-compile with the report (FLOPs and bytes of each kernel, for the
    roofline), naming each row's kernel as the profiler will. False on error."""
    report_json = os.path.join(work, "compile-report.json")
    report, row["kiln_compile_s"] = cold_kiln_compile(
        work, args, ["--report", "--report-json", report_json], "model.kiln")
    if report.returncode != 0:
        row["error"] = (report.stderr or report.stdout).strip().splitlines()[-1]
        return None
    # Where the compile went (kiln-compile's phases; "write PATH" as "write").
    with open(report_json) as f:
        compiled = json.load(f)
    row["kiln_compile_phases"] = {p["phase"].split(" /")[0]: p["seconds"]
                                  for p in compiled.get("phases", [])}
    row["kiln_import_steps"] = {s["step"]: s["seconds"] for s in compiled.get("import_steps", [])}
    images = compiled.get("kernel_images", {})
    row["kiln_images_compiled"] = images.get("compiled", 0)
    row["kiln_images_cached"] = images.get("cached", 0)
    # From the kernel library built with kiln ($KILN_KERNEL_LIBRARY).
    row["kiln_images_library"] = images.get("library", 0)
    # NVRTC's wall time inside the code-generation phase, and the slowest
    # images: with every core busy, the slowest single image bounds it.
    row["kiln_nvrtc_s"] = images.get("nvrtc_seconds", 0)
    row["kiln_slowest_images"] = images.get("compiled_seconds", [])[:5]
    # All images' CPU seconds: against the phase's wall time and the cores,
    # whether the phase is bound by throughput or by its slowest images.
    row["kiln_images_cpu_s"] = sum(i["seconds"] for i in images.get("compiled_seconds", []))
    row["kiln_cores"] = len(os.sched_getaffinity(0))
    row["kernels"] = int(re.search(r"(\d+) kernel launches", report.stderr).group(1))
    totals = re.search(r"kernels \(unfused: \d+ kernels\), ([0-9.]+) MFLOP, ([0-9.]+) KiB moved",
                       report.stderr)
    row["report_by_kind"] = report_by_kind(report.stderr)
    row["report_by_kernel"] = report_by_kernel(report.stderr)
    if totals:
        row["mflop"] = float(totals.group(1))
        row["kib_moved"] = float(totals.group(2))
        row["roofline_ms"] = max(row["mflop"] * 1e6 / 790e12,
                                 row["kib_moved"] * 1024 / 4.3e12) * 1e3
    return report.stderr


def in_process_compiles(rows, args):
    """kiln's cold compiles at load time (kiln/compile.h), every counted
    row's model in one process (test/api/CompileTimes.cpp): LibTorch, NVRTC
    and CUDA already loaded, as torch and Inductor are in this process when
    torch.compile is timed, so neither side pays its libraries' start. Adds
    kiln_in_process_s (sm_90a and sm_80, as kiln-compile's default) and
    kiln_in_process_native_s (this GPU alone, as torch.compile builds) to
    each row, or an in_process_error."""
    tool = os.path.join(args.bin, "kiln-compile-times")
    built = [r for r in rows if "error" not in r and "kiln_compile_s" in r]
    if not built:
        return
    if not os.path.exists(tool):
        print(f"  in-process compiles: no {tool} (scripts/gpu-unpack.sh unpacks it from the "
              "bundle): left out", flush=True)
        return
    model_file = "model.pt2" if args.export == "pt2" else "model.pt"
    models = [os.path.join(args.work, f"{r['model']}_b{r['batch']}", model_file) for r in built]
    io = [] if args.kiln_io_dtype == "declared" else ["--io-dtype", args.kiln_io_dtype]
    for prefix, arch in (("kiln_in_process", []), ("kiln_in_process_native", ["--arch", "native"])):
        done = run([tool, os.path.join(args.work, "in-process-cache"), "--precision", "fp16",
                    *io, *arch, *models])
        if done.returncode != 0:
            for row in built:
                row["in_process_error"] = (done.stderr or done.stdout).strip()[-300:]
            print(f"  in-process compiles: error: {built[0]['in_process_error']}", flush=True)
            return
        for row, timed in zip(built, json.loads(done.stdout)["models"]):
            row[prefix + "_s"] = timed["seconds"]
            # The kernel images' phase and its slowest images, beside
            # kiln-compile's (kiln_nvrtc_s, kiln_slowest_images).
            row[prefix + "_kernels_s"] = timed["kernel_seconds"]
            row[prefix + "_slowest_images"] = timed["images"][:5]


def kiln_round(work, feeds, references, args, extra_env=None):
    """One round of kiln: (rel L2, verdict, median wall ms, whole output);
    every output is checked, the worst counts; the verdict is FAIL when
    kiln-run printed a check short or no time."""
    checks = [arg for path in references for arg in ("--check", path)]
    out = run([f"{args.bin}/kiln-run", os.path.join(work, "model.kiln"), *feeds, *checks,
               "--tolerance", "1e-2", "--device-io", "--bench", str(args.runs)],
              env=dict(os.environ, **(extra_env or {})))
    text = out.stdout + out.stderr
    found = re.findall(r"^  check .*?: rel L2 ([0-9.e+-]+),.*?(ok|FAIL)$", text, re.M)
    wall = re.search(r"wall per run with device-resident I/O: median ([0-9.]+) ms", text)
    if len(found) != len(references) or not wall:
        return None, "FAIL", None, text
    verdict = "ok" if all(v == "ok" for _, v in found) else "FAIL"
    return max(float(r) for r, _ in found), verdict, float(wall.group(1)), text


def measure(name, batch, args, torch_builds=None):
    """One row. With --build-times, kiln's builds only; the torch.compile
    build of the row is appended to `torch_builds` (a function that adds
    its times to the row) with the row, to run after every row's kiln
    builds."""
    work = os.path.join(args.work, f"{name}_b{batch}")
    os.makedirs(work, exist_ok=True)
    row = {"model": name, "batch": batch, "dtype": "fp16", "rounds": args.rounds,
           "kiln_io_dtype": args.kiln_io_dtype}
    m16, in16, reference, names, row["torch_fp16_rel_l2"], references = export_for_kiln(
        name, batch, work, args.export)
    row["export"] = args.export
    tuning = tuning_file(work, args)
    if tuning:
        row["kiln_tuning"] = os.path.basename(tuning)
    report = compile_kiln(work, row, args)
    if report is None:
        return row
    if args.build_times:
        # Build times alone: kiln's (above) and torch.compile
        # reduce-overhead's, each from empty caches; nothing is timed.
        # torch.compile builds for this GPU alone, kiln's default artifact
        # for sm_90a and sm_80 too: kiln for this GPU alone is the like for
        # like (--arch native).
        native, seconds = cold_kiln_compile(work, args, ["--arch", "native", "-q"],
                                            "native.kiln")
        if native.returncode == 0:
            row["kiln_native_compile_s"] = seconds
        else:
            row["kiln_native_error"] = (native.stderr or native.stdout).strip()[-300:]
        if args.kiln_only:
            # kiln's builds alone: report.py takes torch.compile's from the
            # files that built it.
            return row
        def build_torch():
            with torch.no_grad():
                python_peers(m16, in16, row, args, work)
                cpp_peers(m16, in16, reference, work, row, args)
                torch._dynamo.reset()
        torch_builds.append((row, build_torch))
        return row
    feeds = []
    for input_name in names:
        feeds += ["--input", f"{input_name}={work}/{input_name}.npy"]

    with torch.no_grad():
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        median_ms(lambda: m16(*in16), 10)
        # Peak beyond what was allocated before (the model and inputs are
        # counted: kiln's figure holds its weights and I/O too).
        row["eager_peak_mib"] = (torch.cuda.max_memory_allocated() - base) / 2**20 + sum(
            p.numel() * p.element_size() for p in m16.parameters()) / 2**20
        peers = {} if args.kiln_only else python_peers(m16, in16, row, args, work)
        commands = [] if args.kiln_only else cpp_peers(m16, in16, reference, work, row, args)

        times, checks, text = {}, [], ""
        for round_index in range(args.rounds):
            def kiln():
                nonlocal text
                rel_l2, verdict, ms, text = kiln_round(work, feeds, references, args)
                checks.append((rel_l2, verdict))
                if ms is not None:
                    times.setdefault("kiln", []).append(ms)
            steps = [kiln] + [(lambda k, fn: lambda: times.setdefault(k, []).append(
                median_ms(fn, args.runs)))(key, fn) for key, fn in peers.items()] + [
                (lambda k, c: lambda: [times.setdefault(key, []).append(ms) for key, ms in
                                       time_cpp_peer(k, c, row).items()])(key, command)
                for key, command in commands]
            for step in steps if round_index % 2 == 0 else reversed(steps):
                step()
            print(f"  round {round_index + 1}: " + ", ".join(
                f"{k} {v[-1]:.3f}" for k, v in times.items() if v), flush=True)
        if args.pdl:
            # Programmatic dependent launches (KILN_PDL=1, sm_90): measured
            # slower at batch 1 (bench/NOTES.md); one round when asked.
            _, verdict, ms, _ = kiln_round(work, feeds, references, args, {"KILN_PDL": "1"})
            if ms is not None:
                row["kiln_pdl_ms"], row["kiln_pdl_check"] = ms, verdict
        del peers
        torch._dynamo.reset()

    if not checks or checks[-1][0] is None or "kiln" not in times:
        row["error"] = text.strip().splitlines()[-1] if text.strip() else "kiln-run failed"
        return row
    row["rel_l2_rounds"] = [c[0] for c in checks]
    row["rel_l2"] = max(c[0] for c in checks if c[0] is not None)
    row["check"] = "ok" if all(c[1] == "ok" for c in checks) else "FAIL"
    for key, values in times.items():
        row[f"{key}_ms_rounds"] = values
        row[f"{key}_ms"] = statistics.median(values)
    memory = re.search(r"device memory: weights ([0-9.]+) MiB, arena ([0-9.]+) MiB, "
                       r"inputs and outputs ([0-9.]+) MiB", text)
    if memory:
        row["kiln_mib"] = sum(float(memory.group(i)) for i in (1, 2, 3))
    if "roofline_ms" in row:
        row["roofline_fraction"] = row["roofline_ms"] / row["kiln_ms"]
    if args.profile:
        profiled = run([f"{args.bin}/kiln-run", os.path.join(work, "model.kiln"), *feeds,
                        "--device-io", "--profile", "--bench", "20", "--time-launches", "100"])
        row.update(profile_rows(profiled.stdout + profiled.stderr))
        if args.raw_dir:
            # The whole profile and report, for reading kernel by kernel.
            os.makedirs(args.raw_dir, exist_ok=True)
            with open(os.path.join(args.raw_dir, f"{name}_b{batch}.txt"), "w") as f:
                f.write(profiled.stdout + profiled.stderr + "\n" + report)
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("work")
    parser.add_argument("--models", nargs="+", default=["resnet50"])
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--runs", type=int, default=100,
                        help="synchronous calls per round and mode (median taken)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds alternating kiln and the peers")
    parser.add_argument("--json")
    parser.add_argument("--torchscript", action="store_true",
                        help="also time TorchScript from Python (trace + freeze)")
    parser.add_argument("--default-compile", action="store_true",
                        help="also time torch.compile in its default mode")
    parser.add_argument("--max-autotune", action="store_true",
                        help="also time torch.compile max-autotune (and AOTInductor "
                             "max_autotune with --aoti)")
    parser.add_argument("--only-max-autotune", action="store_true",
                        help="time kiln against the max-autotune modes alone: a supplement "
                             "to a full run, which report.py merges into its rows")
    parser.add_argument("--export", choices=["torchscript", "pt2"], default="torchscript",
                        help="how kiln gets the model: torch.jit.trace (.pt) or torch.export (.pt2)")
    parser.add_argument("--kiln-flag", action="append", default=[],
                        help="an extra kiln-compile flag (repeatable), e.g. --kiln-flag=--conv-wgmma=false")
    parser.add_argument("--kiln-tuning", metavar="DIR",
                        help="a folder of tuning files (bench/tune_layers.py's, "
                             "MODEL_bBATCH.json): a row whose file is there compiles with "
                             "--kernel-tuning, and RESULTS.md says so")
    parser.add_argument("--kiln-io-dtype", choices=["f16", "declared"], default="f16",
                        help="kiln's float inputs and outputs: f16 as the PyTorch fp16 modes "
                             "(default), or the model's declared fp32 (cast on the GPU)")
    parser.add_argument("--kiln-only", action="store_true",
                        help="check and time kiln alone, no peer (while developing kernels: "
                             "compare with an earlier run's kiln time)")
    parser.add_argument("--peers-bin", help="bench/peers' kiln-torch-peers: time the C++ peers")
    parser.add_argument("--aoti", action="store_true",
                        help="with --peers-bin: also AOTInductor packages, run from C++")
    parser.add_argument("--build-times", action="store_true",
                        help="build times only: kiln-compile's (cold, by phase) beside "
                             "torch.compile's (and with --aoti AOTInductor's), each from "
                             "empty caches, after one build of each that is not counted; "
                             "no timing (with --kiln-only, kiln's builds alone)")
    parser.add_argument("--pdl", action="store_true",
                        help="also time kiln with programmatic dependent launches")
    parser.add_argument("--profile", action="store_true",
                        help="also record kiln's per-kernel profile (kiln-run --profile)")
    parser.add_argument("--raw-dir",
                        help="write each row's whole profile and report to DIR/MODEL_bBATCH.txt")
    args = parser.parse_args()
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"torchvision {torchvision.__version__}")
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "torchvision": torchvision.__version__, "rounds": args.rounds,
            "runs_per_round": args.runs, "cudnn_benchmark": torch.backends.cudnn.benchmark,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            # Every build from empty caches (timed_compile): report.py marks
            # the build times of earlier files, which reused Inductor's.
            "cold_builds": True}
    if args.only_max_autotune:
        meta["supplement"] = "max-autotune"
    if args.kiln_only:
        # No peers: report.py takes such rows for the compile-time table only.
        meta["kiln_only"] = True
    if args.build_times:
        # report.py takes these for the compile-time table only.
        meta["build_times"] = True
        # One build of each that is not counted: the machine's first
        # builds read the tools and libraries from disk (kiln-compile took
        # 3.2-3.8 s in a fresh machine's first minutes and 1.2-1.7 s after;
        # 2026-12-02), and the first torch.compile in a process imports
        # Inductor. Every row after it is a cold build on a warm machine,
        # for both. torch.compile's uncounted build runs after kiln's
        # counted ones (below), as its counted builds do, so that no
        # Inductor compile worker is alive beside a counted kiln-compile:
        # in a run with the uncounted builds first, kiln-compile's NVRTC
        # took 0.35-1.2 s an image, against 0.05-0.1 s in other runs and
        # in the same run's in-process compiles (2026-12-05; the cause is
        # not known).
        print("build times: one build of each not counted", flush=True)
        uncounted = []
        measure(args.models[0], args.batches[0], args, uncounted)
    try:
        meta["driver"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True).stdout.strip()
        import transformers
        meta["transformers"] = transformers.__version__
    except Exception:  # noqa: BLE001 - optional facts
        pass
    rows = []
    # With --build-times every kiln build runs before the first counted
    # torch.compile: one leaves Inductor's compile workers in the process,
    # and kiln's builds after one measured up to twice as long (2026-12-03;
    # whether the workers were the cause is not yet known).
    torch_builds = []

    def write_json():
        # After every row: a part cut short by the device's time limit
        # keeps what it measured.
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"meta": meta, "rows": rows}, f, indent=1)

    for name in args.models:
        for batch in args.batches:
            print(f"{name} batch {batch}", flush=True)
            try:
                row = measure(name, batch, args, torch_builds)
            except Exception as error:  # noqa: BLE001 - one model failing must not hide the rest
                row = {"model": name, "batch": batch, "error": f"{type(error).__name__}: {error}"}
            rows.append(row)
            write_json()
            if "error" in row:
                print(f"{name:>20} {batch:>5} ERROR {row['error']}", flush=True)
                continue
            if args.build_times:
                print(f"{name:>20} {batch:>5} kiln {row['kiln_compile_s']:.2f} s", flush=True)
                continue
            best_ms, best, _ = best_of(row)
            if args.kiln_only:
                print(f"{name:>20} {batch:>5} {row['kernels']} kernels, check {row['rel_l2']:.2e} "
                      f"{row['check']}; kiln {row['kiln_ms']:.3f} ms", flush=True)
                continue
            print(f"{name:>20} {batch:>5} {row['kernels']} kernels, check {row['rel_l2']:.2e} "
                  f"{row['check']} (torch fp16 {row['torch_fp16_rel_l2']:.2e}); kiln "
                  f"{row['kiln_ms']:.3f} ms, best PyTorch {best} {best_ms:.3f} ms: "
                  f"{best_ms / row['kiln_ms']:.2f}x; kiln compile {row['kiln_compile_s']:.1f} s",
                  flush=True)
    if args.build_times:
        # After every kiln-compile and before the first counted
        # torch.compile, for the reason above.
        in_process_compiles(rows, args)
        for row in rows:
            if "kiln_in_process_s" in row:
                # (The native compiles may have failed where the others did not.)
                native = row.get("kiln_in_process_native_s")
                print(f"{row['model']:>20} {row['batch']:>5} kiln in process "
                      f"{row['kiln_in_process_s']:.2f} s, --arch native "
                      + (f"{native:.2f} s" if native is not None else "failed"), flush=True)
        write_json()
        for _, build in uncounted:
            build()
    for row, build in torch_builds:
        try:
            build()
        except Exception as error:  # noqa: BLE001 - one model failing must not hide the rest
            row["error"] = f"torch.compile build: {type(error).__name__}: {error}"
        write_json()
        print(f"{row['model']:>20} {row['batch']:>5} torch.compile "
              f"{row.get('compile_compile_s', float('nan')):.1f} s", flush=True)
    if args.build_times:
        return 0 if all("error" not in r for r in rows) else 1
    return 0 if all("error" not in r and r["check"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
