#!/usr/bin/env python3
"""Models as people export them, through kiln-compile --verify.

    scripts/model-sweep.py BIN_DIR WORK_DIR [--family hf|torchvision|all]
                           [--precisions fp32 fp16] [--only NAME...]
                           [--markdown OUT.md] [--timeout S] [--export trace|pt2]

Hugging Face families are built from small configs with random weights and
traced as the transformers docs show (`torch.jit.trace` with `strict=False`
on input ids and a padded attention mask, keyword inputs where the model's
second positional argument is not the mask, `use_cache=False` for decoders).
torchvision classifiers (every one in `torchvision.models.list_models`,
random weights, batch 1, 224 x 224 unless the model needs another size) are
traced in eval mode. With `--export pt2` each is exported with
`torch.export.export` (strict=False, the same inputs) and saved as a `.pt2`
instead. Each model is compiled to an artifact with `--verify`
at each precision (fp32: rel L2 1e-5 against LibTorch's fp32 result; fp16:
1e-2). The result per model and precision is `ok`, or the first line of
kiln's error. Needs no GPU, and the Python packages transformers and
torchvision (which scripts/setup.sh does not install). Exit status: 0 when
every model passes, 2 when a package is missing.
"""
import argparse
import importlib.util
import os
import re
import subprocess
import sys
import time
import warnings

import torch

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


def torchvision_example(name):
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.get_model(name, weights=None).eval()
    size = {"inception_v3": 299}.get(name, 224)
    return model, (torch.randn(1, 3, size, size),), {}


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


def compile_and_verify(bin_dir, path, precision, timeout):
    artifact = os.path.splitext(path)[0] + f"-{precision}.kiln"
    start = time.perf_counter()
    try:
        out = subprocess.run([f"{bin_dir}/kiln-compile", path, "--precision", precision,
                              "--verify", "-o", artifact],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout} s", timeout
    seconds = time.perf_counter() - start
    text = out.stdout + out.stderr
    # Artifacts of the larger classifiers run to gigabytes: checked, not kept.
    if os.path.exists(artifact):
        os.remove(artifact)
    if out.returncode == 0 and "FAIL" not in text:
        worst = max((float(e) for e in re.findall(r"rel L2 ([0-9.e+-]+)", text)), default=0.0)
        return f"ok (rel L2 {worst:.1e})", seconds
    return first_error(text), seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("work")
    parser.add_argument("--family", choices=["hf", "torchvision", "all"], default="all")
    parser.add_argument("--precisions", nargs="+", default=["fp32", "fp16"])
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--markdown")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--export", choices=["trace", "pt2"], default="trace",
                        help="torch.jit.trace to .pt (default) or torch.export to .pt2")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    needed = {"hf": ["transformers"], "torchvision": ["torchvision"],
              "all": ["transformers", "torchvision"]}[args.family]
    missing = [m for m in needed if importlib.util.find_spec(m) is None]
    if missing:
        print(f"model-sweep.py: error: needs the Python packages {', '.join(missing)} "
              f"(pip install {' '.join(missing)}; torchvision==0.26.0 matches torch 2.11)",
              file=sys.stderr)
        return 2
    jobs = []
    if args.family in ("hf", "all"):
        jobs += [("Hugging Face", name, lambda n=name, m=make: hf_example(n, m))
                 for name, make in hf_models().items()]
    if args.family in ("torchvision", "all"):
        jobs += [("torchvision", name, lambda n=name: torchvision_example(n))
                 for name in torchvision_models()]
    if args.only:
        jobs = [job for job in jobs if job[1] in args.only]

    rows, failures = [], 0
    for family, name, example in jobs:
        path = os.path.join(args.work, f"{name}.{'pt2' if args.export == 'pt2' else 'pt'}")
        try:
            save(example(), args.export, path)
            results = [compile_and_verify(args.bin, path, p, args.timeout)
                       for p in args.precisions]
        except Exception as error:  # noqa: BLE001 - the exporter failing is a result too
            results = [(f"export failed: {type(error).__name__}: {str(error)[:150]}", 0.0)
                       for _ in args.precisions]
        failures += sum(not r.startswith("ok") for r, _ in results)
        cells = " | ".join(f"{r} ({s:.0f} s)" for r, s in results)
        rows.append(f"| {family} | {name} | {cells} |")
        print(rows[-1], flush=True)
    header = ["| family | model | " + " | ".join(args.precisions) + " |",
              "|---|---|" + "---|" * len(args.precisions)]
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(header + rows) + "\n")
    print(f"{len(rows) * len(args.precisions) - failures} of "
          f"{len(rows) * len(args.precisions)} compiles verified")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
