#!/usr/bin/env python3
"""Traces the transformer zoo for kiln, fp32 and fp16.

    export_transformers.py OUT_DIR [--batch B] [--seq S] [MODEL ...]

Models: vit_b_16 (torchvision), bert (Hugging Face BertModel, bert-base
config, called with input ids and an attention mask that pads the last
eighth of each sequence; two outputs, the hidden states and the pooler's),
gpt2 (GPT2Model, gpt2 config, input ids alone), gpt2_block (the same with
one layer), ffn (the slice's feed-forward block, d = 1024, on [batch, seq,
1024]). Random weights, seed 0; parameters that the libraries initialize to
zero (ViT's classifier) are drawn from N(0, 0.02) so that outputs depend on
the input. Writes OUT_DIR/<model>_f32.pt and _f16.pt.
"""
import argparse
import os
import warnings

import torch

warnings.filterwarnings("ignore")


class Ffn(torch.nn.Module):
    """The transformer feed-forward block of the first slice: LN(x + W2
    gelu(W1 x + b1) + b2), d = 1024, hidden 4096."""

    def __init__(self, d=1024, hidden=4096):
        super().__init__()
        self.up, self.down = torch.nn.Linear(d, hidden), torch.nn.Linear(hidden, d)
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.down(torch.nn.functional.gelu(self.up(x))))


def build(name, batch, seq):
    torch.manual_seed(0)
    if name == "ffn":
        return Ffn().eval(), (torch.randn(batch, seq, 1024),)
    if name == "vit_b_16":
        import torchvision
        model = torchvision.models.vit_b_16(weights=None)
        with torch.no_grad():
            for p in model.parameters():
                if p.abs().max() == 0 and p.dim() > 1:
                    p.normal_(0, 0.02)
        return model.eval(), (torch.randn(batch, 3, 224, 224),)
    # As the transformers docs call them, no wrapper: BERT builds its
    # attention mask from the padding mask, GPT-2 its causal mask, and kiln
    # reads both from the traced graph. GPT-2 without its key/value cache,
    # which a trace cannot return.
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model
    ids = torch.randint(0, 30000, (batch, seq))
    if name == "bert":
        mask = torch.ones(batch, seq, dtype=torch.long)
        mask[:, seq - seq // 8:] = 0
        return BertModel(BertConfig()).eval(), (ids, mask)
    if name == "gpt2":
        return GPT2Model(GPT2Config(use_cache=False)).eval(), (ids,)
    if name == "gpt2_block":  # one GPT-2 layer with its embeddings and final norm
        return GPT2Model(GPT2Config(n_layer=1, use_cache=False)).eval(), (ids,)
    raise SystemExit(f"unknown model {name}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("models", nargs="*", default=["vit_b_16", "bert", "gpt2"])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=128)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models:
        model, inputs = build(name, args.batch, args.seq)
        with torch.no_grad():
            torch.jit.save(torch.jit.trace(model, inputs, check_trace=False, strict=False),
                           os.path.join(args.out, f"{name}_f32.pt"))
            half = [x.half() if x.is_floating_point() else x for x in inputs]
            torch.jit.save(torch.jit.trace(model.half(), tuple(half), check_trace=False,
                                           strict=False),
                           os.path.join(args.out, f"{name}_f16.pt"))
        print(f"exported {name} (fp32, fp16), batch {args.batch}")


if __name__ == "__main__":
    main()
