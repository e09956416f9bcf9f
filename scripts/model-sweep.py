#!/usr/bin/env python3
"""Models as people export them, through kiln-compile --verify or on a GPU.

    scripts/model-sweep.py BIN_DIR WORK_DIR [--family hf|torchvision|all]
                           [--precisions fp32 fp16] [--only NAME...] [--shard K/N]
                           [--markdown OUT.md] [--json ROWS.jsonl] [--timeout S]
                           [--export trace|pt2] [--run-on-gpu [--runs N] [--jobs J]]
                           [--compare-exports]

Hugging Face families are built from small configs with random weights and
traced as the transformers docs show (`torch.jit.trace` with `strict=False`
on input ids and a padded attention mask, keyword inputs where the model's
second positional argument is not the mask, `use_cache=False` for decoders).
torchvision classifiers (every one in `torchvision.models.list_models`,
random weights (zero-initialized classifier heads given random ones) with
BatchNorm statistics measured on random images, batch 1,
224 x 224 unless the model needs another size) are traced in eval mode.
With `--export pt2` each is exported with `torch.export.export`
(strict=False, the same inputs) and saved as a `.pt2` instead.

Each model is compiled to an artifact with `--verify` at each precision
(fp32: rel L2 1e-5 against LibTorch's fp32 result; fp16: 1e-2). The result
per model and precision is `ok`, or the first line of kiln's error. A
result past its tolerance that PyTorch's own arithmetic in that precision
explains is reported as `beyond fp16` (PyTorch's own fp16 result past the
tolerance from fp32) or `beyond fp32` (PyTorch's fp32 result more than a
third of the tolerance from fp64), with kiln's error within 3x of
PyTorch's: the random model's conditioning, not kiln's error. Needs no GPU.

With --run-on-gpu (on the GPU machine) each artifact instead runs on the
GPU: `kiln-run --check` on the example's inputs against PyTorch's fp32
result computed on the CPU, at each precision; the last precision's
artifact is timed (`kiln-run --device-io --bench`) beside PyTorch eager and
torch.compile reduce-overhead in that precision, each the median of --runs
synchronous calls. --jobs J prepares J models side by side (exports,
compiles, torch.compile) on all but --measure-cores of the cores; a
timing has the GPU to itself and runs on the cores kept back, so that a
batch-1 timing of Python's dispatch is not another worker's compile's.

With --compare-exports each model is exported both ways and compiled to IR
only at each precision: the kernels from the `.pt2` may not outnumber
those from the traced `.pt`.

Needs the Python packages transformers and torchvision (which
scripts/setup.sh does not install). Exit status: 0 when every model
passes, 1 when one does not, 2 for a missing package or a usage error.
"""
import argparse
import copy
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
warnings.filterwarnings("ignore")


def hf_models():
    import transformers as t

    small = dict(num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                 vocab_size=1000)
    return {
        "bert": lambda: t.BertModel(t.BertConfig(hidden_size=64, **small)),
        "albert": lambda: t.AlbertModel(t.AlbertConfig(hidden_size=64, embedding_size=32,
                                                       **small)),
        "electra": lambda: t.ElectraModel(t.ElectraConfig(hidden_size=64, embedding_size=32,
                                                          **small)),
        "gpt2": lambda: t.GPT2Model(t.GPT2Config(n_embd=64, n_layer=2, n_head=4,
                                                 vocab_size=1000, n_positions=64,
                                                 use_cache=False)),
        "llama": lambda: t.LlamaModel(t.LlamaConfig(
            hidden_size=64, num_key_value_heads=2, max_position_embeddings=64,
            use_cache=False, **small)),
        "bart_encoder": lambda: t.BartModel(t.BartConfig(
            d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
            vocab_size=1000, max_position_embeddings=64)).get_encoder(),
        "whisper_encoder": lambda: t.WhisperModel(t.WhisperConfig(
            d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
            num_mel_bins=16, max_source_positions=32)).get_encoder(),
    }


def hf_example(name, make):
    """(model, positional inputs, keyword inputs) as the transformers docs
    call the model."""
    torch.manual_seed(0)
    model = make().eval()
    if name == "whisper_encoder":
        # 2 x max_source_positions frames of mel features.
        return model, (torch.randn(1, 16, 64),), {}
    ids = torch.randint(0, 1000, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 12:] = 0  # padding in the mask
    return model, (), {"input_ids": ids, "attention_mask": mask}


def torchvision_models():
    import torchvision

    return {name: name for name in torchvision.models.list_models(module=torchvision.models)}


def calibrate_batch_norm(model, size):
    """Measures the BatchNorm statistics on random images, as training would
    have left them: at torchvision's initialization (mean 0, variance 1)
    MobileNets', EfficientNets' and MnasNets' activations shrink to ~1e-14
    by the classifier and deep ResNets' grow to ~1e5, outside fp16's range,
    so no fp16 result (PyTorch's own included) could match fp32."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for norm in norms:
        norm.momentum = None  # a plain average over the calibration batch
        norm.reset_running_stats()
    model.train()
    with torch.no_grad():
        model(torch.randn(4, 3, size, size))
    model.eval()


def reinitialize_zero_layers(model):
    """Gives zero-initialized linear layers random weights: the ViTs' and
    Swin's classifier heads start at zero, and a model whose output is all
    zeros would pass any check."""
    for module in model.modules():
        if isinstance(module, torch.nn.Linear) and not module.weight.any():
            torch.nn.init.normal_(module.weight, std=0.02)


def torchvision_example(name):
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.get_model(name, weights=None)
    size = {"inception_v3": 299}.get(name, 224)
    reinitialize_zero_layers(model)
    calibrate_batch_norm(model, size)
    torch.manual_seed(1)
    return model.eval(), (torch.randn(1, 3, size, size),), {}


def save(example, export, path):
    """Writes the model as people export it: torch.jit.trace (strict=False,
    keyword inputs as the transformers docs pass them) or torch.export."""
    model, args, kwargs = example
    with torch.no_grad():
        if export == "pt2":
            torch.export.save(torch.export.export(model, args, kwargs=kwargs, strict=False), path)
        elif kwargs:
            torch.jit.save(torch.jit.trace(model, example_kwarg_inputs=kwargs, strict=False), path)
        else:
            torch.jit.save(torch.jit.trace(model, args, strict=False, check_trace=False), path)


def first_error(text):
    for line in text.splitlines():
        if "error:" in line:
            return re.sub(r"^.*?error: ", "", line).strip()[:200]
    return (text.strip().splitlines() or ["failed"])[-1][:200]


TOLERANCE = {"fp32": 1e-5, "tf32": 1e-3, "fp16": 1e-2, "bf16": 1e-2}
# A reduced-precision result that fails where PyTorch's own result in that
# precision fails too is the model's range, not kiln's error, when kiln's
# error is within this factor of PyTorch's.
BEYOND_PRECISION_FACTOR = 3.0


def flatten(value):
    """A model's outputs as kiln names them: tuples, lists, dicts and
    ModelOutputs flattened in order, None dropped."""
    if isinstance(value, torch.Tensor):
        return [value]
    if value is None:
        return []
    if isinstance(value, dict):  # ModelOutput is an OrderedDict without its None fields
        value = list(value.values())
    return [t for item in value for t in flatten(item)]


def rel_l2(result, reference):
    """The worst output's relative L2 distance."""
    return max(((r.double() - ref.double()).norm() / max(ref.double().norm(), 1e-30)).item()
               for r, ref in zip(result, reference))


def cast_inputs(values, dtype, device):
    if isinstance(values, dict):
        return {k: cast_inputs(v, dtype, device) for k, v in values.items()}
    if isinstance(values, (tuple, list)):
        return type(values)(cast_inputs(v, dtype, device) for v in values)
    return values.to(device, dtype) if values.is_floating_point() else values.to(device)


def torch_in(example, dtype, device):
    """PyTorch's own result of the example in `dtype` on `device` (a copy
    of the model), and the callable that computes it."""
    model, args, kwargs = example
    model = copy.deepcopy(model).to(device, dtype)
    args, kwargs = cast_inputs(args, dtype, device), cast_inputs(kwargs, dtype, device)
    with torch.no_grad():
        return flatten(model(*args, **kwargs)), model, args, kwargs


def own_error(example, precision):
    """PyTorch's own error in `precision` on the CPU: fp16 or bf16 against
    fp32, fp32 against fp64."""
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision, torch.float32)
    exact = torch.float64 if dtype == torch.float32 else torch.float32
    reference = [t.double() for t in torch_in(example, exact, "cpu")[0]]
    return rel_l2([t.double() for t in torch_in(example, dtype, "cpu")[0]], reference)


def beyond_precision(precision, kiln_error, torch_error):
    """The verdict of a result past its tolerance given PyTorch's own error
    in that precision (own_error), or None. Reduced precisions are checked
    against fp32: PyTorch's own result must fail the tolerance too. fp32 is
    checked against LibTorch's fp32, which carries the same rounding noise
    as kiln's: on an ill-conditioned model (deep, random weights) two fp32
    results can be ~1.4x the noise apart, so fp32 noise of a third of the
    tolerance is enough. Either way kiln's error must be within 3x of
    PyTorch's own."""
    tolerance = TOLERANCE[precision]
    noisy = torch_error > (tolerance / 3 if precision == "fp32" else tolerance)
    if noisy and kiln_error <= BEYOND_PRECISION_FACTOR * torch_error:
        exact = "fp64" if precision == "fp32" else "fp32"
        return (f"beyond {precision}: PyTorch's own {precision} result is {torch_error:.1e} "
                f"from {exact}, kiln's {kiln_error:.1e}")
    return None


def compile_and_verify(bin_dir, path, precision, timeout, example):
    """(verdict, seconds, passed) of kiln-compile --verify to an artifact."""
    artifact = os.path.splitext(path)[0] + f"-{precision}.kiln"
    start = time.perf_counter()
    try:
        out = subprocess.run([f"{bin_dir}/kiln-compile", path, "--precision", precision,
                              "--verify", "-o", artifact],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout} s", timeout, False
    seconds = time.perf_counter() - start
    text = out.stdout + out.stderr
    # Artifacts of the larger classifiers run to gigabytes: checked, not kept.
    if os.path.exists(artifact):
        os.remove(artifact)
    worst = max((float(e) for e in re.findall(r"rel L2 ([0-9.e+-]+)", text)), default=0.0)
    if out.returncode == 0 and "FAIL" not in text:
        return f"ok (rel L2 {worst:.1e})", seconds, True
    if precision in TOLERANCE and "differs from LibTorch" in text:
        verdict = beyond_precision(precision, worst, own_error(example, precision))
        if verdict:
            return verdict, seconds, True
    return first_error(text), seconds, False


class MachineLock:
    """The workers' turns on the GPU (--jobs). A timing takes it
    exclusively and moves to the cores kept back for timings: eager's
    Python dispatch at batch 1 ran ten times slower beside other workers'
    torch.compile (2026-12-02). Short uses of the GPU (checks, copies)
    take it shared. Compiles take nothing: when timings also waited for
    them, each timing drained the machine of work first, and the sweep
    ran at a third of its cores (2026-12-03). A timing waiting at the
    turnstile lets no new user start, so it is not starved by users that
    overlap one another."""

    def __init__(self, work, exclusive, cpus=None):
        self.work, self.exclusive, self.cpus = work, exclusive, cpus

    def __enter__(self):
        import fcntl
        self.turnstile = open(os.path.join(self.work, "turnstile.lock"), "w")
        self.machine = open(os.path.join(self.work, "machine.lock"), "w")
        fcntl.flock(self.turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(self.machine, fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH)
        finally:
            fcntl.flock(self.turnstile, fcntl.LOCK_UN)
        if self.cpus:
            # The calling thread only, and what it starts: LibTorch's idle
            # pool threads stay where they are.
            self.before = os.sched_getaffinity(0)
            os.sched_setaffinity(0, self.cpus)
        return self

    def __exit__(self, *exc):
        import fcntl
        if self.cpus:
            os.sched_setaffinity(0, self.before)
        fcntl.flock(self.machine, fcntl.LOCK_UN)
        self.machine.close()
        self.turnstile.close()


def measuring(work, cpus=None):
    return MachineLock(work, exclusive=True, cpus=cpus)


def using_gpu(work):
    return MachineLock(work, exclusive=False)


def dtype_of(precision):
    return {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision, torch.float32)


def settle_beyond_precision(row, precision):
    """A failed check of the timed precision is beyond it when PyTorch's own
    result in that precision is as far from fp32."""
    if row.get(precision) == "FAIL":
        verdict = beyond_precision(precision, row[f"{precision}_rel_l2"], row["torch_rel_l2"])
        if verdict:
            row[precision] = verdict


def run_on_gpu(row, bin_dir, work, name, example, path, precisions, runs, timeout, cores,
               timing_cpus):
    """Compiles the exported model at each precision, runs each artifact on
    the GPU on the example's inputs with `kiln-run --check` against
    PyTorch's fp32 result (computed on the CPU), and times the last
    precision's artifact beside PyTorch eager and torch.compile
    reduce-overhead in that precision (fp16 and bf16; fp32 otherwise);
    with `runs` 0 it times nothing (a check of the build alone, without
    torch.compile's minute a model). Results go into `row` as they come."""
    from timing import median_ms

    reference = [t.float() for t in torch_in(example, torch.float32, "cpu")[0]]
    directory = os.path.join(work, name)
    os.makedirs(directory, exist_ok=True)
    for index, tensor in enumerate(reference):
        np.save(os.path.join(directory, f"ref{index}.npy"), tensor.numpy())
    model, args, kwargs = example
    inputs = list(args) + list(kwargs.values())
    # kiln-compile gets the worker's share of the cores, for its NVRTC
    # threads and for LibTorch's OpenMP threads in the specialization run.
    env = dict(os.environ, KILN_CACHE_DIR=os.path.join(work, "cache"),
               OMP_NUM_THREADS=str(cores))
    for precision in precisions:
        artifact = os.path.join(directory, f"{precision}.kiln")
        start = time.perf_counter()
        try:
            out = subprocess.run([f"{bin_dir}/kiln-compile", path, "--precision",
                                  precision, "-q", f"--jobs={cores}", "-o", artifact],
                                 capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            row[precision] = f"kiln-compile timed out after {timeout} s"
            continue
        row[f"{precision}_compile_s"] = time.perf_counter() - start
        if out.returncode != 0:
            row[precision] = "kiln-compile: " + first_error(out.stdout + out.stderr)
            continue
        info = json.loads(subprocess.run([f"{bin_dir}/kiln-info", artifact, "--json"],
                                         capture_output=True, text=True).stdout)
        if len(info["inputs"]) != len(inputs) or len(info["outputs"]) != len(reference):
            row[precision] = (f"kiln's signature ({len(info['inputs'])} inputs, "
                              f"{len(info['outputs'])} outputs) is not PyTorch's "
                              f"({len(inputs)}, {len(reference)})")
            continue
        feeds = []
        for spec, tensor in zip(info["inputs"], inputs):
            file = os.path.join(directory, f"input_{spec['name']}.npy")
            np.save(file, tensor.numpy())
            feeds += ["--input", f"{spec['name']}={file}"]
        checks = [flag for i in range(len(reference))
                  for flag in ("--check", os.path.join(directory, f"ref{i}.npy"))]
        timed = runs > 0 and precision == precisions[-1]
        with measuring(work, timing_cpus) if timed else using_gpu(work):
            out = subprocess.run([f"{bin_dir}/kiln-run", artifact, *feeds, *checks,
                                  "--tolerance", str(TOLERANCE[precision])] +
                                 (["--device-io", "--bench", str(runs)] if timed else []),
                                 capture_output=True, text=True, timeout=timeout)
        text = out.stdout + out.stderr
        errors = [float(e) for e in re.findall(r"rel L2 ([0-9.e+-]+)", text)]
        if len(errors) != len(reference):
            row[precision] = "kiln-run: " + first_error(text)
            continue
        row[f"{precision}_rel_l2"] = max(errors)
        row[precision] = "ok" if out.returncode == 0 else "FAIL"
        if row[precision] == "FAIL" and precision != precisions[-1]:
            row[precision] = beyond_precision(precision, max(errors),
                                              own_error(example, precision)) or "FAIL"
        wall = re.search(r"wall per run with device-resident I/O: median ([0-9.]+) ms", text)
        if timed and wall:
            row["kiln_ms"] = float(wall.group(1))
        os.remove(artifact)
    if runs <= 0:
        with using_gpu(work):
            result = torch_in(example, dtype_of(precisions[-1]), "cuda")[0]
        row["torch_rel_l2"] = rel_l2([t.float().cpu() for t in result], reference)
        settle_beyond_precision(row, precisions[-1])
        return

    # PyTorch in the timed precision, from a copy of the model on the GPU.
    precision = precisions[-1]
    dtype = dtype_of(precision)
    row["torch_dtype"] = str(dtype).replace("torch.", "")
    with using_gpu(work):
        result, gpu_model, gpu_args, gpu_kwargs = torch_in(example, dtype, "cuda")
    row["torch_rel_l2"] = rel_l2([t.float().cpu() for t in result], reference)
    settle_beyond_precision(row, precision)
    with torch.no_grad():
        call = lambda: gpu_model(*gpu_args, **gpu_kwargs)  # noqa: E731
        with measuring(work, timing_cpus):
            row["eager_ms"] = median_ms(call, runs)
        try:
            start = time.perf_counter()
            compiled = torch.compile(gpu_model, mode="reduce-overhead")
            for _ in range(3):
                compiled(*gpu_args, **gpu_kwargs)
            torch.cuda.synchronize()
            row["reduce_overhead_compile_s"] = time.perf_counter() - start
            with measuring(work, timing_cpus):
                row["reduce_overhead_ms"] = median_ms(
                    lambda: compiled(*gpu_args, **gpu_kwargs), runs)
        except Exception as error:  # noqa: BLE001 - a peer failing is a result too
            row["reduce_overhead_error"] = f"{type(error).__name__}: {str(error)[:150]}"
    torch._dynamo.reset()


def make_example(family, name):
    if family == "Hugging Face":
        return hf_example(name, hf_models()[name])
    return torchvision_example(name)


def kernel_count(bin_dir, path, precision, timeout):
    """(kernels of the model compiled to IR at `precision`, None) or (None,
    kiln's error)."""
    ir = os.path.splitext(path)[0] + f"-{precision}.mlir"
    try:
        out = subprocess.run([f"{bin_dir}/kiln-compile", path, "--precision", precision,
                              "--report", "-o", ir], capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    if os.path.exists(ir):
        os.remove(ir)
    found = re.search(r"(\d+) kernels \(unfused", out.stderr)
    if out.returncode != 0 or not found:
        return None, first_error(out.stdout + out.stderr)
    return int(found.group(1)), None


def compare_exports(row, args, example, name):
    """Kernels from torch.jit.trace and from torch.export at each precision;
    a `.pt2` may not need more. Returns the failures (a kiln error, or more
    kernels from the `.pt2`); a model torch.export cannot export is a
    reason, not a failure."""
    counts, failures = {}, 0
    for export in ("trace", "pt2"):
        path = os.path.join(args.work, f"{name}.{'pt2' if export == 'pt2' else 'pt'}")
        try:
            save(example, export, path)
        except Exception as error:  # noqa: BLE001 - the exporter failing is a result too
            counts[export] = f"export failed: {type(error).__name__}: {str(error)[:120]}"
            continue
        for precision in args.precisions:
            counts[(export, precision)] = kernel_count(args.bin, path, precision, args.timeout)
        os.remove(path)
    for precision in args.precisions:
        if isinstance(counts.get("trace"), str) or isinstance(counts.get("pt2"), str):
            row[precision] = counts.get("trace") or counts.get("pt2")
            failures += isinstance(counts.get("trace"), str)
            continue
        (traced, error), (exported, error2) = counts[("trace", precision)], counts[
            ("pt2", precision)]
        if error or error2:
            row[precision] = f"kiln: {error or error2}"
            failures += 1
        elif exported > traced:
            row[precision] = f"MORE from .pt2: {exported} against {traced}"
            failures += 1
        else:
            row[precision] = f"ok ({exported} from .pt2, {traced} traced)"
    return failures


def sweep_one(job):
    """One model of the sweep: a row of results (in a worker process with
    --jobs)."""
    family, name, args = job
    warnings.filterwarnings("ignore")
    # The cores this process may use (taskset shares one machine between
    # sweeps, one a GPU), not the machine's.
    if args.preparing_cpus:
        os.sched_setaffinity(0, args.preparing_cpus)
    cores = max(1, len(os.sched_getaffinity(0)) // max(1, args.jobs))
    torch.set_num_threads(cores)
    if args.run_on_gpu:
        # Each worker's torch.compile gets its share of the cores: eight
        # workers each forking a compile process per core took 5x longer a
        # model than one worker alone (2026-12-02).
        from torch._inductor import config as inductor_config
        inductor_config.compile_threads = cores
    if args.compare_exports:
        row = {"family": family, "model": name}
        try:
            row["failures"] = compare_exports(row, args, make_example(family, name), name)
        except Exception as error:  # noqa: BLE001 - reported in the row
            row.update({p: f"{type(error).__name__}: {str(error)[:150]}" for p in args.precisions})
            row["failures"] = len(args.precisions)
        return row
    path = os.path.join(args.work, f"{name}.{'pt2' if args.export == 'pt2' else 'pt'}")
    row = {"family": family, "model": name}
    try:
        example = make_example(family, name)
        save(example, args.export, path)
    except Exception as error:  # noqa: BLE001 - the exporter failing is a result too
        message = f"export failed: {type(error).__name__}: {str(error)[:150]}"
        row.update({p: message for p in args.precisions})
        row["failures"] = len(args.precisions)
        return row
    if args.run_on_gpu:
        try:
            run_on_gpu(row, args.bin, args.work, name, example, path, args.precisions,
                       args.runs, args.timeout, cores, args.timing_cpus)
        except Exception as error:  # noqa: BLE001 - reported in the row
            row["error"] = f"{type(error).__name__}: {str(error)[:200]}"
        row["failures"] = sum(not str(row.get(p, "")).startswith(("ok", "beyond"))
                              for p in args.precisions)
    else:
        row["failures"] = 0
        for precision in args.precisions:
            verdict, seconds, passed = compile_and_verify(args.bin, path, precision,
                                                          args.timeout, example)
            row[precision] = f"{verdict} ({seconds:.0f} s)"
            row["failures"] += not passed
    if os.path.exists(path):
        os.remove(path)
    return row


def markdown_row(row, args):
    def ms(key):
        return f"{row[key]:.3f}" if key in row else row.get(key.replace("_ms", "_error"), "-")
    if not args.run_on_gpu:
        return f"| {row['family']} | {row['model']} | " + " | ".join(
            row[p] for p in args.precisions) + " |"
    cells = []
    for p in args.precisions:
        error = f" ({row[p + '_rel_l2']:.1e})" if p + "_rel_l2" in row else ""
        cells.append(f"{row.get(p, row.get('error', '-'))}{error}")
    torch_error = f"{row['torch_rel_l2']:.1e}" if "torch_rel_l2" in row else "-"
    return (f"| {row['family']} | {row['model']} | " + " | ".join(cells) +
            f" | {torch_error} | {ms('kiln_ms')} | {ms('eager_ms')} | "
            f"{ms('reduce_overhead_ms')} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("work")
    parser.add_argument("--family", choices=["hf", "torchvision", "all"], default="all")
    parser.add_argument("--precisions", nargs="+", default=["fp32", "fp16"])
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--shard", default="1/1",
                        help="K/N: the K-th of N interleaved parts of the model list")
    parser.add_argument("--markdown")
    parser.add_argument("--json", help="append each model's row to this JSON-lines file")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--export", choices=["trace", "pt2"], default="trace",
                        help="torch.jit.trace to .pt (default) or torch.export to .pt2")
    parser.add_argument("--run-on-gpu", action="store_true",
                        help="run each artifact on this machine's GPU with kiln-run --check "
                             "and time it beside PyTorch eager and reduce-overhead, instead "
                             "of kiln-compile --verify")
    parser.add_argument("--compare-exports", action="store_true",
                        help="count kernels from torch.jit.trace and from torch.export (IR "
                             "only, no --verify): a .pt2 may not need more")
    parser.add_argument("--runs", type=int, default=100,
                        help="with --run-on-gpu: synchronous calls timed per mode; 0 checks "
                             "without timing anything")
    parser.add_argument("--jobs", type=int, default=1,
                        help="models prepared side by side (worker processes); checks and "
                             "timings take turns on the GPU")
    parser.add_argument("--measure-cores", type=int, default=2,
                        help="with --run-on-gpu and --jobs above 1: cores kept back for "
                             "timings, which no preparation uses")
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    args.timing_cpus = args.preparing_cpus = None
    if args.run_on_gpu and args.jobs > 1 and 0 < args.measure_cores < len(cpus):
        args.timing_cpus = set(cpus[:args.measure_cores])
        args.preparing_cpus = set(cpus[args.measure_cores:])
    os.makedirs(args.work, exist_ok=True)
    args.work = os.path.abspath(args.work)

    needed = {"hf": ["transformers"], "torchvision": ["torchvision"],
              "all": ["transformers", "torchvision"]}[args.family]
    missing = [m for m in needed if importlib.util.find_spec(m) is None]
    if missing:
        print(f"model-sweep.py: error: needs the Python packages {', '.join(missing)} "
              f"(pip install {' '.join(missing)}; torchvision==0.26.0 matches torch 2.11)",
              file=sys.stderr)
        return 2
    shard = re.fullmatch(r"(\d+)/(\d+)", args.shard)
    if not shard or not 1 <= int(shard.group(1)) <= int(shard.group(2)):
        print(f"model-sweep.py: error: --shard wants K/N with 1 <= K <= N, not "
              f"'{args.shard}'", file=sys.stderr)
        return 2
    jobs = []
    if args.family in ("hf", "all"):
        jobs += [("Hugging Face", name) for name in hf_models()]
    if args.family in ("torchvision", "all"):
        jobs += [("torchvision", name) for name in torchvision_models()]
    if args.only:
        # In --only's order: a caller with little time lists the light models first.
        by_name = {name: (family, name) for family, name in jobs}
        jobs = [by_name[name] for name in dict.fromkeys(args.only) if name in by_name]
    part, parts = int(shard.group(1)), int(shard.group(2))
    jobs = [(family, name, args) for family, name in jobs[part - 1::parts]]

    rows, failures = [], 0
    if args.jobs > 1:
        import multiprocessing
        results = multiprocessing.get_context("spawn").Pool(args.jobs).imap_unordered(
            sweep_one, jobs)
    else:
        results = map(sweep_one, jobs)
    for row in results:
        failures += row.pop("failures")
        rows.append(markdown_row(row, args))
        print(rows[-1], flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(row) + "\n")
    if args.run_on_gpu:
        header = ["| family | model | " + " | ".join(f"kiln {p} check" for p in args.precisions) +
                  f" | PyTorch {args.precisions[-1]} rel L2 | kiln {args.precisions[-1]} ms | "
                  f"eager ms | reduce-overhead ms |",
                  "|---|---|" + "---|" * (len(args.precisions) + 4)]
    elif args.compare_exports:
        header = ["| family | model | " + " | ".join(f"kernels at {p}" for p in args.precisions) +
                  " |", "|---|---|" + "---|" * len(args.precisions)]
    else:
        header = ["| family | model | " + " | ".join(args.precisions) + " |",
                  "|---|---|" + "---|" * len(args.precisions)]
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(header + sorted(rows)) + "\n")
    total = len(rows) * len(args.precisions)
    what = ("checks passed" if args.run_on_gpu else
            "kernel counts no higher from .pt2" if args.compare_exports else "compiles verified")
    print(f"{total - failures} of {total} {what}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
