#!/usr/bin/env python3
"""Writes the TorchScript models kiln's tests compile, into OUT_DIR.

    make_models.py OUT_DIR [NAME ...]

Made at test time (never committed), with fixed seeds: the slice's test
models (MLP, FFN with residual and LayerNorm, a 4-block MLP stack) in fp32
and fp16, one small model per supported operator for import snapshots, a
model with unsupported operators, and broken files the loader must reject.
"""
import os
import sys
import warnings

from typing import Optional, Tuple

import torch
import torch.nn.functional as F

warnings.filterwarnings("ignore", category=DeprecationWarning)  # torch.jit in 2.11
warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=UserWarning)


class Mlp(torch.nn.Module):
    def __init__(self, d_in=16, hidden=32, d_out=4):
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, hidden)
        self.drop = torch.nn.Dropout(0.1)
        self.fc2 = torch.nn.Linear(hidden, d_out)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


class Ffn(torch.nn.Module):
    """A transformer feed-forward block: LN(x + W2 gelu(W1 x + b1) + b2)."""

    def __init__(self, d=64, hidden=256, approximate="none"):
        super().__init__()
        self.up = torch.nn.Linear(d, hidden)
        self.down = torch.nn.Linear(hidden, d)
        self.norm = torch.nn.LayerNorm(d)
        self.approximate = approximate

    def forward(self, x):
        h = F.gelu(self.up(x), approximate=self.approximate)
        return self.norm(x + self.down(h))


class MlpStack(torch.nn.Module):
    """Four pre-norm residual MLP blocks with SiLU."""

    def __init__(self, d=48, hidden=96, blocks=4):
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.LayerNorm(d), torch.nn.Linear(d, hidden),
                                torch.nn.SiLU(), torch.nn.Linear(hidden, d))
            for _ in range(blocks))

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return x


def conv_bn(cin, cout, k, stride=1, groups=1):
    return torch.nn.Sequential(
        torch.nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
        torch.nn.BatchNorm2d(cout))


def randomize_bn(module):
    """Random BatchNorm statistics, so folding them is visible in the numbers."""
    for m in module.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    return module


class BasicBlock(torch.nn.Module):
    """ResNet's basic block with a strided projection shortcut."""

    def __init__(self, cin=16, cout=24, stride=2):
        super().__init__()
        self.conv1 = conv_bn(cin, cout, 3, stride)
        self.conv2 = conv_bn(cout, cout, 3)
        self.down = conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else None

    def forward(self, x):
        y = torch.relu(self.conv1(x))
        y = self.conv2(y)
        return torch.relu(y + (self.down(x) if self.down is not None else x))


class Bottleneck(torch.nn.Module):
    """ResNet-50's bottleneck: 1x1 reduce, 3x3, 1x1 expand, identity skip."""

    def __init__(self, c=32, mid=8):
        super().__init__()
        self.a, self.b, self.c = conv_bn(c, mid, 1), conv_bn(mid, mid, 3), conv_bn(mid, c, 1)

    def forward(self, x):
        y = torch.relu(self.a(x))
        y = torch.relu(self.b(y))
        return torch.relu(self.c(y) + x)


class ProjectionBottleneck(torch.nn.Module):
    """ResNet-50's first bottleneck of a stage: the 3x3 strided, a strided
    1x1 projection on the shortcut (which kiln merges into the expand)."""

    def __init__(self, c=24, mid=16, out=40, stride=2):
        super().__init__()
        self.a, self.b, self.c = conv_bn(c, mid, 1), conv_bn(mid, mid, 3, stride), conv_bn(mid, out, 1)
        self.down = conv_bn(c, out, 1, stride)

    def forward(self, x):
        y = torch.relu(self.a(x))
        y = torch.relu(self.b(y))
        return torch.relu(self.c(y) + self.down(x))


class SmallResNet(torch.nn.Module):
    """Stem, max pool, two stages, global average pool, classifier."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = conv_bn(3, 16, 7, 2)
        self.pool = torch.nn.MaxPool2d(3, 2, 1)
        self.stage1 = BasicBlock(16, 16, 1)
        self.stage2 = BasicBlock(16, 32, 2)
        self.head = torch.nn.Linear(32, classes)

    def forward(self, x):
        x = self.pool(torch.relu(self.stem(x)))
        x = self.stage2(self.stage1(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(x)


class BottleneckHead(torch.nn.Module):
    """A bottleneck block, then the global average pool and a classifier:
    ResNet-50's tail, whose pool can fuse into the block's 1x1 expand."""

    def __init__(self, c=32, mid=8, classes=10):
        super().__init__()
        self.block = Bottleneck(c, mid)
        self.head = torch.nn.Linear(c, classes)

    def forward(self, x):
        return self.head(F.adaptive_avg_pool2d(self.block(x), 1).flatten(1))


class InvertedResidual(torch.nn.Module):
    """MobileNetV3's block: expand, depthwise, squeeze-excite, project, skip."""

    def __init__(self, c=16, expand=48, squeeze=12):
        super().__init__()
        self.expand = conv_bn(c, expand, 1)
        self.depthwise = conv_bn(expand, expand, 3, groups=expand)
        self.se_reduce = torch.nn.Conv2d(expand, squeeze, 1)
        self.se_expand = torch.nn.Conv2d(squeeze, expand, 1)
        self.project = conv_bn(expand, c, 1)

    def forward(self, x):
        y = F.hardswish(self.expand(x))
        y = F.hardswish(self.depthwise(y))
        s = F.adaptive_avg_pool2d(y, 1)
        s = F.hardsigmoid(self.se_expand(torch.relu(self.se_reduce(s))))
        return x + self.project(y * s)


class PoolZoo(torch.nn.Module):
    """Pooling variants: ceil mode, count_include_pad, uneven adaptive sizes."""

    def forward(self, x):
        a = F.max_pool2d(x, 3, 2, 1, ceil_mode=True)
        b = F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)
        c = F.avg_pool2d(x, 2)
        return a.sum() + b.mean() + c.mean() + F.adaptive_avg_pool2d(x, (2, 2)).sum()


def cnn_models():
    """Convolutional test models, fp32 and fp16."""
    def mk(factory, shape, dtype):
        return lambda: (randomize_bn(factory()).to(dtype), (torch.randn(*shape, dtype=dtype),))
    models = {}
    for suffix, dtype in (("f32", torch.float32), ("f16", torch.float16)):
        models[f"resnet_basic_{suffix}"] = mk(BasicBlock, (2, 16, 17, 17), dtype)
        models[f"resnet_bottleneck_{suffix}"] = mk(Bottleneck, (1, 32, 14, 14), dtype)
        models[f"resnet_projection_{suffix}"] = mk(ProjectionBottleneck, (2, 24, 15, 15), dtype)
        models[f"resnet_small_{suffix}"] = mk(SmallResNet, (2, 3, 64, 64), dtype)
        models[f"mobilenet_block_{suffix}"] = mk(InvertedResidual, (1, 16, 15, 15), dtype)
        models[f"resnet_head_{suffix}"] = mk(BottleneckHead, (3, 32, 7, 7), dtype)
    models["op_pools"] = lambda: (PoolZoo(), (torch.randn(1, 4, 12, 12),))
    models["op_batch_norm"] = lambda: (randomize_bn(torch.nn.Sequential(
        torch.nn.ReLU(), torch.nn.BatchNorm2d(4))), (torch.randn(2, 4, 5, 5),))
    models["op_cat"] = lambda: (fn_module(lambda a, b: torch.cat([a, b * 2], dim=1)),
                                (torch.randn(2, 3, 4), torch.randn(2, 5, 4)))
    return models


def transformer_op_models():
    """One small traced model per attention-model operator (import snapshots)."""
    x = lambda *s: torch.randn(*s)
    keep = torch.tensor([[True] * 6 + [False] * 2])
    return {
        "op_sdpa": lambda: (fn_module(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m)
                                      + F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.5)),
                            (x(2, 3, 8, 16), x(2, 3, 8, 16), x(2, 3, 8, 16), keep)),
        "op_embedding": lambda: (torch.nn.Embedding(10, 4), (torch.tensor([[1, 2, 9], [0, 0, 3]]),)),
        "op_split_select": lambda: (fn_module(lambda a: a.split(2, dim=1)[1] * a[:, 0:2, 1:3].sum()
                                              + a.select(1, 3).unsqueeze(1).unsqueeze(2)),
                                    (x(2, 6, 4),)),
        "op_masks": lambda: (fn_module(lambda a, i: a.masked_fill(i == 0, -1e4) + torch.where(a > 0, a, a * 0.1)
                                       + torch.log_softmax(a, -1)),
                             (x(2, 5), torch.tensor([[1, 0, 2, 0, 1], [0, 0, 1, 1, 1]]))),
        "op_index": lambda: (fn_module(lambda a: a[torch.tensor([1, 0, 1]), torch.tensor([2, 2, 0])]),
                             (x(3, 4, 5),)),
        "op_addmm": lambda: (with_param((8, 6), lambda a, w: torch.addmm(torch.ones(6), a, w)),
                             (x(4, 8),)),
        "op_expand": lambda: (fn_module(lambda a, b: a.expand(3, 4) * b), (x(1, 4), x(3, 4))),
    }


class TinyViT(torch.nn.Module):
    """A 2-layer vision transformer: patch conv, class token, position
    embedding, torch.nn.MultiheadAttention (as torchvision's ViT uses it)."""

    def __init__(self, image=32, patch=8, dim=64, heads=4, layers=2, classes=10):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, dim, patch, patch)
        tokens = (image // patch) ** 2 + 1
        self.cls = torch.nn.Parameter(torch.randn(1, 1, dim))
        self.pos = torch.nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(torch.nn.ModuleDict({
                "ln1": torch.nn.LayerNorm(dim),
                "attn": torch.nn.MultiheadAttention(dim, heads, batch_first=True),
                "ln2": torch.nn.LayerNorm(dim),
                "mlp": torch.nn.Sequential(torch.nn.Linear(dim, 2 * dim), torch.nn.GELU(),
                                           torch.nn.Linear(2 * dim, dim))}))
        self.norm = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for b in self.blocks:
            y = b["ln1"](x)
            x = x + b["attn"](y, y, y, need_weights=False)[0]
            x = x + b["mlp"](b["ln2"](x))
        return self.head(self.norm(x)[:, 0])


class TinyBert(torch.nn.Module):
    """A 2-layer BERT encoder with word, position and token-type embeddings
    and the explicit attention pattern under a padding mask."""

    def __init__(self, vocab=100, dim=64, heads=4, layers=2, seq=12):
        super().__init__()
        self.heads = heads
        self.word = torch.nn.Embedding(vocab, dim)
        self.position = torch.nn.Embedding(seq, dim)
        self.token_type = torch.nn.Embedding(2, dim)
        self.ln = torch.nn.LayerNorm(dim)
        self.layers = torch.nn.ModuleList()
        for _ in range(layers):
            self.layers.append(torch.nn.ModuleDict({
                "q": torch.nn.Linear(dim, dim), "k": torch.nn.Linear(dim, dim),
                "v": torch.nn.Linear(dim, dim), "o": torch.nn.Linear(dim, dim),
                "ln1": torch.nn.LayerNorm(dim), "up": torch.nn.Linear(dim, 4 * dim),
                "down": torch.nn.Linear(4 * dim, dim), "ln2": torch.nn.LayerNorm(dim)}))

    def split(self, x):
        b, s, d = x.shape
        return x.view(b, s, self.heads, d // self.heads).permute(0, 2, 1, 3)

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.shape
        positions = torch.arange(s).unsqueeze(0)
        x = self.word(input_ids) + self.position(positions) + self.token_type(
            torch.zeros_like(input_ids))
        x = self.ln(x)
        drop = (attention_mask == 0)[:, None, None, :]
        for layer in self.layers:
            q, k, v = self.split(layer["q"](x)), self.split(layer["k"](x)), self.split(layer["v"](x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
            scores = scores.masked_fill(drop, -10000.0)
            context = torch.matmul(torch.softmax(scores, dim=-1), v)
            context = context.permute(0, 2, 1, 3).reshape(b, s, -1)
            x = layer["ln1"](x + layer["o"](context))
            x = layer["ln2"](x + layer["down"](F.gelu(layer["up"](x))))
        return x


class TinyGpt2Block(torch.nn.Module):
    """GPT-2's block as Hugging Face writes it: Conv1D (addmm), split of the
    fused QKV, causal scaled_dot_product_attention, NewGELU."""

    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.c_attn_w = torch.nn.Parameter(torch.randn(dim, 3 * dim) * 0.05)
        self.c_attn_b = torch.nn.Parameter(torch.zeros(3 * dim))
        self.c_proj_w = torch.nn.Parameter(torch.randn(dim, dim) * 0.05)
        self.c_proj_b = torch.nn.Parameter(torch.zeros(dim))
        self.fc_w = torch.nn.Parameter(torch.randn(dim, 4 * dim) * 0.05)
        self.fc_b = torch.nn.Parameter(torch.randn(4 * dim) * 0.05)
        self.proj_w = torch.nn.Parameter(torch.randn(4 * dim, dim) * 0.05)
        self.proj_b = torch.nn.Parameter(torch.zeros(dim))

    @staticmethod
    def conv1d(x, w, b):
        shape = x.shape[:-1] + (w.shape[1],)
        return torch.addmm(b, x.view(-1, x.shape[-1]), w).view(shape)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.conv1d(self.ln_1(x), self.c_attn_w, self.c_attn_b).split(d, dim=2)
        heads = lambda t: t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
        x = x + self.conv1d(a.transpose(1, 2).reshape(b, s, d), self.c_proj_w, self.c_proj_b)
        h = self.conv1d(self.ln_2(x), self.fc_w, self.fc_b)
        h = 0.5 * h * (1.0 + torch.tanh(0.7978845608028654 * (h + 0.044715 * torch.pow(h, 3.0))))
        return x + self.conv1d(h, self.proj_w, self.proj_b)


def transformer_models():
    """Attention test models, fp32 and fp16."""
    models = {}
    for suffix, dtype in (("f32", torch.float32), ("f16", torch.float16)):
        models[f"vit_tiny_{suffix}"] = (lambda d: lambda: (
            TinyViT().to(d), (torch.randn(2, 3, 32, 32, dtype=d),)))(dtype)
        models[f"bert_tiny_{suffix}"] = (lambda d: lambda: (
            TinyBert().to(d), (torch.randint(0, 100, (2, 12)),
                               torch.tensor([[1] * 12, [1] * 9 + [0] * 3]))))(dtype)
        models[f"gpt2_block_{suffix}"] = (lambda d: lambda: (
            TinyGpt2Block().to(d), (torch.randn(2, 12, 64, dtype=d),)))(dtype)
    return models


def fn_module(fn):
    class Wrapped(torch.nn.Module):
        def forward(self, *args):
            return fn(*args)
    return Wrapped()


def _region_mask(a):
    mask = a.new_zeros((a.size(0), a.size(1)))
    count = 0
    for h in ((0, -3), (-3, -1), (-1, None)):
        for w in ((0, -2), (-2, None)):
            mask[h[0]:h[1], w[0]:w[1]] = count
            count += 1
    mask[1] = 7.5
    return (mask.unsqueeze(0) - mask.unsqueeze(1)).sum(0)


def _read_between(a):
    mask = a.new_zeros((6, 6))
    mask[0:2] = 1.0
    seen = mask * 3
    mask[2:4] = 2.0
    return a + seen + mask


def _middle_bias_zeroed(linear, a):
    # Swin V2's qkv: the k bias is zeroed through a slice whose bounds come
    # from numel() // 3 (traced: numel, NumToTensor, floor_divide, Int).
    bias = linear.bias.clone()
    length = bias.numel() // 3
    bias[length:2 * length].zero_()
    return torch.nn.functional.linear(a, linear.weight, bias)


def fn_module_with(inner, fn):
    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            return fn(self.inner, *args)
    return Wrapped()


def with_param(shape, fn):
    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(*shape))

        def forward(self, x):
            return fn(x, self.w)
    return Wrapped()


# name -> (module factory, example inputs factory, dtype)
def slice_models():
    def mk(factory, shape, dtype):
        return lambda: (factory().to(dtype), (torch.randn(*shape, dtype=dtype),))
    models = {}
    for suffix, dtype in (("f32", torch.float32), ("f16", torch.float16)):
        models[f"mlp_{suffix}"] = mk(Mlp, (8, 16), dtype)
        models[f"ffn_{suffix}"] = mk(Ffn, (2, 24, 64), dtype)
        models[f"ffn_tanh_{suffix}"] = mk(lambda: Ffn(approximate="tanh"), (40, 64), dtype)
        models[f"mlp_stack_{suffix}"] = mk(MlpStack, (3, 17, 48), dtype)
    # The benchmark's FFN: d=1024, hidden 4096, 4096 tokens, fp16.
    models["ffn_large_f16"] = mk(lambda: Ffn(d=1024, hidden=4096), (4096, 1024), torch.float16)
    return models


def op_models():
    """One small traced model per supported operator (import snapshots)."""
    x = lambda *s: torch.randn(*s)
    return {
        "op_add_tensor": lambda: (fn_module(lambda a, b: a + b), (x(4, 8), x(8))),
        "op_add_scalar": lambda: (fn_module(lambda a: a + 2.5), (x(4, 8),)),
        "op_add_alpha": lambda: (fn_module(lambda a, b: torch.add(a, b, alpha=3)), (x(4, 8), x(4, 8))),
        "op_sub_rsub": lambda: (fn_module(lambda a: 1.0 - a * 2), (x(3, 5),)),
        "op_div": lambda: (fn_module(lambda a, b: a / b), (x(6), x(6).abs() + 1)),
        "op_int_promotion": lambda: (fn_module(lambda a, i: a * i), (x(4), torch.arange(4))),
        "op_unary": lambda: (fn_module(lambda a: torch.sigmoid(torch.tanh(torch.relu(a))) - F.silu(a)), (x(2, 3),)),
        "op_gelu": lambda: (fn_module(lambda a: F.gelu(a) + F.gelu(a, approximate="tanh")), (x(5),)),
        "op_linear_nobias": lambda: (torch.nn.Linear(8, 3, bias=False), (x(2, 8),)),
        "op_matmul": lambda: (fn_module(lambda a, b: a @ b), (x(2, 4, 8), x(8, 3))),
        "op_layer_norm": lambda: (torch.nn.LayerNorm([4, 8]), (x(2, 4, 8),)),
        "op_views": lambda: (fn_module(lambda a: a.view(2, 12).reshape(4, 6).flatten().unsqueeze(0)), (x(2, 3, 4),)),
        "op_transpose": lambda: (fn_module(lambda a: a.transpose(1, 2).permute(2, 0, 1).contiguous()), (x(2, 3, 4),)),
        "op_to_dtype": lambda: (fn_module(lambda a: a.to(torch.float16).to(torch.float32)), (x(7),)),
        "op_softmax": lambda: (fn_module(lambda a: torch.softmax(a, dim=-1)), (x(3, 9),)),
        "op_mean_sum": lambda: (fn_module(lambda a: a.mean(dim=-1, keepdim=True) + a.sum(dim=(0,))), (x(4, 6),)),
        "op_clamp": lambda: (fn_module(lambda a: torch.clamp(a, min=-0.5) + F.relu6(a)), (x(10),)),
        "op_size_arith": lambda: (fn_module(lambda a: a.view(a.size(0) * a.size(1), -1)), (x(3, 4, 5),)),
        # Outputs as models return them (traced with strict=False, as
        # Hugging Face's docs show): a dict (a ModelOutput traces to one), a
        # dict of tuples, a list.
        "op_dict_outputs": lambda: (fn_module(lambda a: {
            "hidden": a * 2, "odd key/with slash": a - 1, "pooled": a.sum(dim=0)}), (x(3, 4),)),
        "op_dict_of_tuples": lambda: (fn_module(lambda a: {
            "past": (a, a + 1), "more": (a * 2, a - 2)}), (x(3, 4),)),
        "op_list_outputs": lambda: (fn_module(lambda a: [a * 2, a + 1]), (x(3, 4),)),
        # nn.MultiheadAttention traced with gradients on (its slow path): the
        # packed projection is reshaped, permuted and sliced into q, k, v.
        "op_mha_slow_path": lambda: (fn_module_with(torch.nn.MultiheadAttention(64, 4),
                                                    lambda mha, a: mha(a, a, a, need_weights=False)[0]),
                                     (x(10, 1, 64),)),
        # The same at batch 3: batch and heads merged into one dimension
        # before the heads split, which the attention reads in place.
        "op_mha_slow_path_b3": lambda: (fn_module_with(torch.nn.MultiheadAttention(64, 4),
                                                       lambda mha, a: mha(a, a, a, need_weights=False)[0]),
                                        (x(10, 3, 64),)),
        # A mask built by writing into slices of a zeros tensor (Swin's
        # shifted windows), then read: computed at import as a constant.
        "op_mask_writes": lambda: (fn_module(lambda a: a + _region_mask(a)), (x(6, 6),)),
        # A read between two writes sees the first only: not folded (kiln
        # then refuses the write by name, never computes a wrong mask).
        "op_mask_read_between": lambda: (fn_module(lambda a: _read_between(a)), (x(6, 6),)),
        # A slice bounded by numel() // 3 of a cloned parameter, zeroed.
        "op_numel_slice_zero": lambda: (fn_module_with(torch.nn.Linear(8, 12), _middle_bias_zeroed),
                                        (x(5, 8),)),
        # Integer inputs whose values matter: ids 100..103 index a table of
        # 10 rows after subtracting 100 (random ids in [0, 8) would not).
        "op_id_offset": lambda: (with_param((10, 3), lambda ids, w: w[ids - 100] * 2),
                                 (torch.arange(100, 104),)),
        # RoBERTa's position ids: a running count of the non-pad tokens.
        "op_position_ids": lambda: (fn_module(_position_ids),
                                    (torch.tensor([[5, 7, 1, 1], [1, 3, 4, 2]]),)),
        # cumsum of floats along the last dimension.
        "op_cumsum_float": lambda: (fn_module(lambda a: torch.cumsum(a, -1) * 0.5), (x(3, 7),)),
        # nn.RMSNorm (aten::rms_norm), a weight away from ones, rows of 37.
        "op_rms_norm": lambda: (_randomized(torch.nn.RMSNorm(37, eps=1e-5)), (x(2, 5, 37),)),
        # RMSNorm written out as Llama writes it, after a residual add.
        "op_rms_norm_manual": lambda: (LlamaStyleRmsNorm(37), (x(2, 5, 37), x(2, 5, 37))),
    }


def _randomized(module):
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.uniform_(0.5, 1.5)
    return module


class LlamaStyleRmsNorm(torch.nn.Module):
    """Hugging Face's LlamaRMSNorm: fp32 statistics, then the weight."""

    def __init__(self, size, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(size) + 0.5)
        self.eps = eps

    def forward(self, a, b):
        hidden = a + b
        dtype = hidden.dtype
        hidden = hidden.to(torch.float32)
        variance = hidden.pow(2).mean(-1, keepdim=True)
        hidden = hidden * torch.rsqrt(variance + self.eps)
        return self.weight * hidden.to(dtype)


def _position_ids(ids, padding_idx=1):
    mask = ids.ne(padding_idx).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx


def error_models():
    class Unsupported(torch.nn.Module):
        def forward(self, x):
            y = torch.cumprod(x, 0)
            y = y + torch.cumprod(y, 1)
            return torch.sort(y, dim=1)[0] + torch.fft.fft(y).real
    class DoubleModel(torch.nn.Module):
        def forward(self, x):
            return x.to(torch.float64) * 2
    return {
        "conv_transpose": lambda: (torch.nn.ConvTranspose2d(4, 2, 3), (torch.randn(1, 4, 6, 6),)),
        "adaptive_uneven": lambda: (torch.nn.AdaptiveAvgPool2d(2), (torch.randn(1, 3, 5, 5),)),
        "maxpool_dilated": lambda: (torch.nn.MaxPool2d(2, dilation=2), (torch.randn(1, 3, 8, 8),)),
        "unsupported_ops": lambda: (Unsupported(), (torch.randn(4, 5),)),
        "float64_model": lambda: (DoubleModel(), (torch.randn(3),)),
    }


def write_broken(out):
    torch.manual_seed(0)
    model = Mlp().eval()
    torch.save(model.state_dict(), os.path.join(out, "mlp_state_dict.pt"))
    with open(os.path.join(out, "mlp_f32.pt"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "truncated.pt"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(out, "not_a_model.pt"), "w") as f:
        f.write("this is not a model\n")


class GpuCausalMask(torch.nn.Module):
    """What a model traced on a GPU records: tensors made with
    device=cuda:0 (a causal mask, as GPT-2's export builds it). Scripted, so
    no GPU is needed to write it."""

    def forward(self, x):
        positions = torch.arange(x.size(1), device=torch.device("cuda:0"))
        keep = positions[None, :] <= positions[:, None]
        lowest = torch.full((), -1e4, device=torch.device("cuda:0"))
        return x + torch.where(keep, torch.zeros((), device=torch.device("cuda:0")), lowest)


class ValueDependent(torch.nn.Module):
    """A size read from the data (aten::Int of a tensor; scripted, since a
    trace would bake the value in): its shapes can only be learned by
    running it on the CPU, not on meta tensors."""

    def forward(self, a):
        n = int((a > 100).sum()) + 2
        return a[:n] * 2


class ScriptedNone(torch.nn.Module):
    """A scripted model whose outputs hold None (the tracer cannot record
    one): a tensor, None, and a nested tuple."""

    def forward(self, a: torch.Tensor) -> Tuple[torch.Tensor, Optional[torch.Tensor],
                                               Tuple[torch.Tensor, torch.Tensor]]:
        return a * 2, None, (a + 1, a.sum(dim=0))


def main(out, names):
    os.makedirs(out, exist_ok=True)
    everything = {**slice_models(), **op_models(), **cnn_models(), **transformer_models(),
                  **transformer_op_models(), **error_models()}
    scripted_models = {"op_scripted_none": ScriptedNone, "value_dependent_scripted": ValueDependent}
    for name in names or everything:
        if name in scripted_models:
            continue
        torch.manual_seed(0)
        module, inputs = everything[name]()
        module = module.eval()
        # check_trace re-traces and compares graphs textually; module-name
        # mangling (nn.MultiheadAttention) makes it fail on equal graphs.
        torch.jit.save(torch.jit.trace(module, inputs, check_trace=False, strict=False),
                       os.path.join(out, name + ".pt"))
    for name, model in scripted_models.items():
        if not names or name in names:
            torch.jit.save(torch.jit.script(model()), os.path.join(out, name + ".pt"))
    if not names:
        torch.manual_seed(0)
        scripted = torch.jit.script(Mlp().eval())
        torch.jit.save(scripted, os.path.join(out, "mlp_scripted.pt"))
        torch.manual_seed(0)
        same = torch.nn.Sequential(torch.nn.Conv2d(4, 6, (4, 3), padding="same", dilation=(1, 2)),
                                   torch.nn.Hardswish()).eval()
        torch.jit.save(torch.jit.script(same), os.path.join(out, "conv_same_scripted.pt"))
        torch.jit.save(torch.jit.script(GpuCausalMask()), os.path.join(out, "gpu_device_scripted.pt"))
        write_broken(out)


if __name__ == "__main__":
    # An option where the folder belongs would become a folder named after
    # it: say how to call it instead.
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: make_models.py OUT_DIR [MODEL...]: writes the test models "
                 "(TorchScript .pt) into OUT_DIR")
    main(sys.argv[1], sys.argv[2:])
