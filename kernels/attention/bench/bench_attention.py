#!/usr/bin/env python3
"""Kiln attention against PyTorch SDPA, one process, one device, one timing method.

Loads libkiln_attention_bench.so (build.sh) with ctypes and calls it on torch tensors' data
pointers. Per shape it measures:
  kernel time  - a CUDA graph of n back-to-back calls (n sized to ~20 ms), replayed 7 times,
                 median replay / n;
  latency      - one call from the host with CUDA events around it, the GPU idle before it
                 (synchronize first), median of 30.
for Kiln (the variant the library dispatches to, and every variant compiled in) and SDPA's flash,
cuDNN, efficient and default backends. TFLOP/s follow FlashAttention's convention (4·B·H·S²·D,
halved for causal); the floor is the larger of tensor FLOPs / tensor rate, bytes / DRAM rate and
exp count / SFU rate, with the exact causal pair count. Before timing, every Kiln output is
compared with SDPA's math backend in fp32 (shapes whose score matrix fits).
"""
import argparse
import ctypes
import json
import math
import os
import random
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right


class Call(ctypes.Structure):
    _fields_ = [
        ("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p), ("o", ctypes.c_void_p),
        ("lse", ctypes.c_void_p), ("dtype", ctypes.c_int32),
        ("batch", ctypes.c_int32), ("heads_q", ctypes.c_int32), ("heads_kv", ctypes.c_int32),
        ("seq_q", ctypes.c_int32), ("seq_k", ctypes.c_int32), ("head_dim", ctypes.c_int32),
        ("causal", ctypes.c_int32), ("scale", ctypes.c_float),
        ("q_strides", ctypes.c_int64 * 3), ("k_strides", ctypes.c_int64 * 3),
        ("v_strides", ctypes.c_int64 * 3), ("o_strides", ctypes.c_int64 * 3),
        ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_size_t),
    ]


def load_library(path):
    lib = ctypes.CDLL(path)
    P = ctypes.POINTER(Call)
    lib.kiln_attention_bench_forward.argtypes = [P, ctypes.c_void_p]
    lib.kiln_attention_bench_forward.restype = ctypes.c_int
    lib.kiln_attention_bench_workspace_bytes.argtypes = [P]
    lib.kiln_attention_bench_workspace_bytes.restype = ctypes.c_size_t
    lib.kiln_attention_bench_dispatched.argtypes = [P]
    lib.kiln_attention_bench_dispatched.restype = ctypes.c_char_p
    lib.kiln_attention_bench_variant_count.restype = ctypes.c_int
    lib.kiln_attention_bench_variant_name.argtypes = [ctypes.c_int]
    lib.kiln_attention_bench_variant_name.restype = ctypes.c_char_p
    lib.kiln_attention_bench_variant_head_dim.argtypes = [ctypes.c_int]
    lib.kiln_attention_bench_variant_head_dim.restype = ctypes.c_int
    lib.kiln_attention_bench_forward_variant.argtypes = [ctypes.c_int, P, ctypes.c_void_p]
    lib.kiln_attention_bench_forward_variant.restype = ctypes.c_int
    lib.kiln_attention_bench_variant_workspace_bytes.argtypes = [ctypes.c_int, P]
    lib.kiln_attention_bench_variant_workspace_bytes.restype = ctypes.c_size_t
    lib.kiln_attention_bench_latency.argtypes = [ctypes.c_int, P, ctypes.c_void_p, ctypes.c_int,
                                                 ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double)]
    lib.kiln_attention_bench_latency.restype = ctypes.c_int
    lib.kiln_attention_bench_error.restype = ctypes.c_char_p
    return lib


# Rates of the device presets (presets/devices/*.json): tensor (wgmma bf16), DRAM, SFU ex2.
RATES = {
    "H200": {"tensor": 9.65e14, "dram": 4.1e12, "sfu": 4.16e12},
    "H100": {"tensor": 9.65e14, "dram": 3.0e12, "sfu": 4.16e12},
    "L4": {"tensor": 1.21e14, "dram": 3.0e11, "sfu": 1.89e12},
}
MMA_SYNC_PEAK = {"H200": 6.3e14, "H100": 6.3e14}


def visible_pairs(sq, sk, causal):
    if not causal:
        return sq * sk
    if sk >= sq:
        return sq * (sk - sq) + sq * (sq + 1) // 2
    return sk * (sk + 1) // 2


def floor_seconds(shape, rates):
    pairs = visible_pairs(shape.sq, shape.sk, shape.causal)
    flops = 4 * shape.b * shape.hq * shape.d * pairs
    # Q read and O written per query head; K and V read once per key/value head.
    bytes_ = 2 * shape.d * (2 * shape.b * shape.hq * shape.sq + 2 * shape.b * shape.hkv * shape.sk)
    return max(flops / rates["tensor"], bytes_ / rates["dram"], shape.b * shape.hq * pairs / rates["sfu"])


def fa_flops(shape):
    # FlashAttention's convention on square problems (4·B·H·S²·D, halved for causal); the visible
    # pairs exactly elsewhere (Sq != Sk: decode, bottom-right causal).
    if shape.sq == shape.sk:
        return 4 * shape.b * shape.hq * shape.sq * shape.sk * shape.d / (2 if shape.causal else 1)
    return 4 * shape.b * shape.hq * shape.d * visible_pairs(shape.sq, shape.sk, shape.causal)


class Shape:
    def __init__(self, b, h, s, d, causal, hkv=None, sk=None):
        self.b, self.hq, self.sq, self.d, self.causal = b, h, s, d, causal
        self.hkv = h if hkv is None else hkv
        self.sk = s if sk is None else sk

    def __str__(self):
        heads = f"H{self.hq}" if self.hkv == self.hq else f"H{self.hq}/{self.hkv}"
        seqs = f"S{self.sq}" if self.sk == self.sq else f"Sq{self.sq} Sk{self.sk}"
        return f"B{self.b} {heads} {seqs} D{self.d} {'causal' if self.causal else 'full'}"


def seed_shapes():
    # The L4 seed shapes (B, H, S, D): four small ones in both masks, then the two named ones.
    out = []
    for b, h, s in [(1, 1, 128), (4, 8, 128), (8, 8, 128), (8, 8, 256)]:
        out += [Shape(b, h, s, 64, False), Shape(b, h, s, 64, True)]
    out += [Shape(16, 8, 512, 64, True), Shape(1, 8, 512, 64, False)]
    return out


def fa_grid(seqs, head_dims=(64, 128)):
    # FlashAttention's benchmark grid: 16k tokens (B = 16384 / S), H·D = 2048.
    return [Shape(16384 // s, 2048 // d, s, d, causal) for d in head_dims for causal in (False, True) for s in seqs]


def decode_shapes(head_dims=(64, 128)):
    # Decode: one or four new queries per sequence against a long key/value cache, 32 query heads
    # in groups of 1, 4 and 8 (key/value heads 32, 8, 4), batch 4; no mask (a bottom-right causal
    # mask hides nothing of a single query and little of four).
    return [Shape(4, 32, sq, d, False, hkv=32 // g, sk=sk)
            for d in head_dims for sq in (1, 4) for sk in (1024, 8192, 131072) for g in (1, 4, 8)]


def random_decode_shapes(count, seed, head_dims=(64, 128)):
    # Decode shapes drawn from the decode domain (Sq 1 and 4, Sk 1k-128k, groups 1, 4 and
    # 8, D 64 and 128), with the batch and key/value heads the decode spaces' domain allows (B 1-64,
    # Hkv 1-64, B·Hkv·Sk at most 2^24): Sk log-uniform and odd, B and Hkv log-uniform.
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        sk = int(round(2 ** rng.uniform(10, 17)))
        b = int(round(2 ** rng.uniform(0, 6)))
        hkv = int(round(2 ** rng.uniform(0, 6)))
        if b * hkv * sk > 2 ** 24:
            continue
        g = rng.choice((1, 4, 8))
        out.append(Shape(b, hkv * g, rng.choice((1, 4)), rng.choice(head_dims), False, hkv=hkv, sk=sk))
    return out


def offgrid_shapes():
    # Shapes beside the grid: grouped-query, odd lengths, Sq != Sk with the bottom-right causal mask.
    return [Shape(1, 32, 8192, 128, True, hkv=8), Shape(1, 8, 3000, 128, False), Shape(8, 8, 1024, 256, True),
            Shape(2, 16, 1000, 64, True, hkv=4, sk=3001), Shape(1, 32, 4099, 128, False, hkv=4),
            Shape(1, 8, 32768, 128, True)]


class Problem:
    """Tensors [B, S, H, D] (bf16) shared by Kiln and SDPA (which sees [B, H, S, D] views)."""

    def __init__(self, lib, shape, variants):
        self.lib, self.shape = lib, shape
        b, hq, hkv, sq, sk, d = shape.b, shape.hq, shape.hkv, shape.sq, shape.sk, shape.d
        g = torch.Generator(device="cuda").manual_seed(1234 + sq + sk + d)
        self.q = torch.randn(b, sq, hq, d, device="cuda", dtype=torch.bfloat16, generator=g)
        self.k = torch.randn(b, sk, hkv, d, device="cuda", dtype=torch.bfloat16, generator=g)
        self.v = torch.randn(b, sk, hkv, d, device="cuda", dtype=torch.bfloat16, generator=g)
        self.o = torch.empty_like(self.q)
        self.qt, self.kt, self.vt = (x.transpose(1, 2) for x in (self.q, self.k, self.v))
        c = Call()
        c.q, c.k, c.v, c.o = self.q.data_ptr(), self.k.data_ptr(), self.v.data_ptr(), self.o.data_ptr()
        c.lse = None
        c.dtype = 0
        c.batch, c.heads_q, c.heads_kv, c.seq_q, c.seq_k, c.head_dim = b, hq, hkv, sq, sk, d
        c.causal = int(shape.causal)
        c.scale = 1.0 / math.sqrt(d)
        for name in ("q_strides", "o_strides"):
            getattr(c, name)[:] = [sq * hq * d, d, hq * d]
        for name in ("k_strides", "v_strides"):
            getattr(c, name)[:] = [sk * hkv * d, d, hkv * d]
        need = lib.kiln_attention_bench_workspace_bytes(ctypes.byref(c))
        for i in variants:
            need = max(need, lib.kiln_attention_bench_variant_workspace_bytes(i, ctypes.byref(c)))
        self.workspace = torch.empty(max(need, 16), dtype=torch.uint8, device="cuda")
        c.workspace, c.workspace_bytes = self.workspace.data_ptr(), self.workspace.numel()
        self.call = c
        self.ref = ctypes.byref(c)

    def kiln(self):
        lib, ref = self.lib, self.ref

        def run(stream):
            if lib.kiln_attention_bench_forward(ref, stream) != 0:
                raise RuntimeError(lib.kiln_attention_bench_error().decode())
        return run

    def variant(self, i):
        lib, ref = self.lib, self.ref

        def run(stream):
            if lib.kiln_attention_bench_forward_variant(i, ref, stream) != 0:
                raise RuntimeError(lib.kiln_attention_bench_error().decode())
        return run

    def sdpa_args(self):
        """SDPA's mask arguments for Kiln's semantics: grouped-query heads; a causal mask aligned to
        the bottom right when Sq != Sk (is_causal aligns it to the top left)."""
        sh = self.shape
        kw = {"enable_gqa": sh.hq != sh.hkv}
        if sh.causal and sh.sq != sh.sk:
            kw["attn_mask"] = causal_lower_right(sh.sq, sh.sk)
        else:
            kw["is_causal"] = sh.causal
        return kw

    def sdpa(self, backend):
        q, k, v, kw = self.qt, self.kt, self.vt, self.sdpa_args()
        if backend is None:
            return lambda stream: F.scaled_dot_product_attention(q, k, v, **kw)

        def run(stream):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, **kw)
        return run

    def reference(self, chunk_bytes=2 ** 31):
        """fp32 attention [B, Hq, Sq, D], one (batch, key/value head) group of G query heads at a
        time and as many groups per step as fit chunk_bytes: SDPA's math backend expands the keys
        and values to every query head in fp32 at once, which does not fit the decode domain's
        largest caches (B·Hkv·Sk = 2^24 at G = 8 would take 64 GiB per tensor)."""
        sh = self.shape
        b, hq, hkv, sq, sk, d = sh.b, sh.hq, sh.hkv, sh.sq, sh.sk, sh.d
        g = hq // hkv
        # [B, S, H, D] -> [B·Hkv, G·Sq, D] for the queries (head h = kv·G + j), [B·Hkv, Sk, D] for keys/values.
        q = self.q.view(b, sq, hkv, g, d).permute(0, 2, 3, 1, 4).reshape(b * hkv, g * sq, d)
        k = self.k.permute(0, 2, 1, 3).reshape(b * hkv, sk, d)
        v = self.v.permute(0, 2, 1, 3).reshape(b * hkv, sk, d)
        mask = None
        if sh.causal:  # bottom-right aligned: query i sees keys j <= i + Sk - Sq
            i = torch.arange(sq, device="cuda").view(sq, 1)
            j = torch.arange(sk, device="cuda").view(1, sk)
            mask = (j > i + (sk - sq)).repeat(g, 1)
        per_group = 4 * (2 * g * sq * sk + 2 * sk * d + 2 * g * sq * d)
        step = max(1, chunk_bytes // per_group)
        out = torch.empty(b * hkv, g * sq, d, device="cuda", dtype=torch.float32)
        for s0 in range(0, b * hkv, step):
            s1 = min(b * hkv, s0 + step)
            scores = torch.bmm(q[s0:s1].float(), k[s0:s1].float().transpose(1, 2)) * (1.0 / math.sqrt(d))
            if mask is not None:
                scores.masked_fill_(mask, float("-inf"))
            out[s0:s1] = torch.bmm(torch.softmax(scores, dim=-1), v[s0:s1].float())
        return out.view(b, hkv, g, sq, d).reshape(b, hq, sq, d)


def current_stream():
    return torch.cuda.current_stream().cuda_stream


def kernel_time_us(fn, target_ms=20.0, reps=7):
    fn(current_stream())
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(3):
        fn(current_stream())
    e1.record()
    e1.synchronize()
    one = max(e0.elapsed_time(e1) / 3, 1e-3)
    n = max(1, min(200, int(target_ms / one)))
    try:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            s = current_stream()
            for _ in range(n):
                fn(s)
        graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            e0.record()
            graph.replay()
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) / n)
        del graph
    except RuntimeError:  # not capturable: back-to-back calls instead
        times = []
        for _ in range(reps):
            e0.record()
            for _ in range(n):
                fn(current_stream())
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) / n)
    return statistics.median(times) * 1e3


def native_latency_us(lib, prob, index, reps=30):
    """Events around one call made from C++ (no Python in the path): (device us, host us)."""
    dev, host = ctypes.c_double(), ctypes.c_double()
    if lib.kiln_attention_bench_latency(index, prob.ref, current_stream(), reps, ctypes.byref(dev), ctypes.byref(host)):
        raise RuntimeError(lib.kiln_attention_bench_error().decode())
    return dev.value, host.value


def latency_us(fn, reps=30):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s = current_stream()
    fn(s)
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        e0.record()
        fn(s)
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    return statistics.median(times) * 1e3


BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION), ("default", None)]


def rel_l2(out_bshd, ref_bhsd):
    diff = out_bshd.transpose(1, 2).float() - ref_bhsd
    return (diff.norm() / ref_bhsd.norm()).item()


def bench_shape(lib, shape, all_variants, rates, check_limit):
    variants = [i for i in all_variants if lib.kiln_attention_bench_variant_head_dim(i) == shape.d]
    prob = Problem(lib, shape, variants)
    row = {"shape": str(shape), "b": shape.b, "hq": shape.hq, "hkv": shape.hkv, "sq": shape.sq, "sk": shape.sk,
           "d": shape.d, "causal": shape.causal,
           "dispatched": lib.kiln_attention_bench_dispatched(prob.ref).decode(), "errors": {}, "kernel_us": {},
           "latency_us": {}}
    kiln_methods = [("kiln", prob.kiln())] + [(lib.kiln_attention_bench_variant_name(i).decode(), prob.variant(i))
                                               for i in variants]
    if shape.b * shape.hq * shape.sq * shape.sk <= check_limit:
        ref = prob.reference()
        for name, fn in kiln_methods:
            prob.o.fill_(float("nan"))
            fn(current_stream())
            torch.cuda.synchronize()
            row["errors"][name] = rel_l2(prob.o, ref)
        try:
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                row["errors"]["sdpa_flash"] = (
                    (F.scaled_dot_product_attention(prob.qt, prob.kt, prob.vt, **prob.sdpa_args()).float() - ref).norm()
                    / ref.norm()).item()
        except RuntimeError:
            pass  # flash does not take this mask
        del ref
    for name, fn in kiln_methods:
        row["kernel_us"][name] = kernel_time_us(fn)
    for name, backend in BACKENDS:
        try:
            row["kernel_us"][name] = kernel_time_us(prob.sdpa(backend))
            row["latency_us"][name] = latency_us(prob.sdpa(backend))
        except RuntimeError as e:
            row["kernel_us"][name] = None
            row["latency_us"][name] = None
            row.setdefault("unsupported", {})[name] = str(e).splitlines()[0][:120]
    # The best variant stands for the tuner's pick among the compiled ones.
    names = [n for n, _ in kiln_methods[1:]]
    best = min(names, key=lambda n: row["kernel_us"][n], default="kiln")
    row["best_variant"] = best
    best_index = variants[names.index(best)] if best != "kiln" else -1
    row["latency_us"]["kiln"] = latency_us(prob.kiln())
    row["latency_us"]["best"] = latency_us(prob.variant(best_index)) if best_index >= 0 else row["latency_us"]["kiln"]
    row["native_latency_us"] = {"kiln": native_latency_us(lib, prob, -1), "best": native_latency_us(lib, prob, best_index)}
    row["floor_us"] = floor_seconds(shape, rates) * 1e6
    row["fa_flops"] = fa_flops(shape)
    return row


def fmt(x, spec=".1f"):
    return "n/a" if x is None else format(x, spec)


def print_tables(rows, device, empty):
    print(f"\n## Kernel time (CUDA graph of back-to-back calls, median), {device}")
    print("shape | floor us | kiln us | TFLOP/s | x floor | best variant us | best TFLOP/s | flash us | cudnn us | "
          "efficient us | default us | kiln/flash | best/flash | best/cudnn | best/default | max rel_l2")
    for r in rows:
        k = r["kernel_us"]
        kiln, best = k["kiln"], k[r["best_variant"]]
        tf = lambda us: None if us is None else r["fa_flops"] / us * 1e-6
        ratio = lambda a, b: None if (a is None or b is None) else b / a  # > 1: Kiln faster
        errs = [v for n, v in r["errors"].items() if n != "sdpa_flash"]
        print(" | ".join([r["shape"], fmt(r["floor_us"]), fmt(kiln), fmt(tf(kiln)), fmt(kiln / r["floor_us"], ".2f"),
                          fmt(best), fmt(tf(best)), fmt(k["flash"]), fmt(k["cudnn"]), fmt(k["efficient"]),
                          fmt(k["default"]), fmt(ratio(kiln, k["flash"]), ".2f"), fmt(ratio(best, k["flash"]), ".2f"),
                          fmt(ratio(best, k["cudnn"]), ".2f"), fmt(ratio(best, k["default"]), ".2f"),
                          fmt(max(errs) if errs else None, ".1e")]))
    print(f"\n## Per-call latency (one call from the host, events around it, device idle before, median of 30), "
          f"{device}\nPython columns call through torch/ctypes; C++ columns call kiln::attention_forward from C++ "
          f"(host us: time spent inside the call). Floor, an empty kernel measured the same way from C++: "
          f"{empty[0]:.1f} us ({empty[1]:.1f} us of it in the launch call)")
    print("shape | kiln py us | best py us | flash py us | cudnn py us | efficient py us | default py us | "
          "kiln C++ us | kiln host us | best C++ us | dispatched | best variant")
    for r in rows:
        lat, nat = r["latency_us"], r["native_latency_us"]
        print(" | ".join([r["shape"], fmt(lat["kiln"]), fmt(lat["best"]), fmt(lat["flash"]), fmt(lat["cudnn"]),
                          fmt(lat["efficient"]), fmt(lat["default"]), fmt(nat["kiln"][0]), fmt(nat["kiln"][1]),
                          fmt(nat["best"][0]), short(r["dispatched"]), short(r["best_variant"])]))


def short(name):
    return (name.replace("attention_d", "d").replace("__HEAD_DIM64", "").replace("__HEAD_DIM128", "")
            .replace("_BLOCK_M", "_m").replace("_BLOCK_N", "_n").replace("_WARPS", "_w").replace("_STAGES", "_s")
            .replace("_Q_REG_STEPS", "_q").replace("_SPLIT_TARGET", "_t"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="path of libkiln_attention_bench.so")
    ap.add_argument("--shapes", default="seed,grid",
                    help="comma list of: seed, grid, decode, offgrid, decode_random")
    ap.add_argument("--random", type=int, default=24, help="shapes of decode_random")
    ap.add_argument("--seed", type=int, default=1, help="seed of decode_random")
    ap.add_argument("--seqs", default="512,1024,2048,4096,8192,16384", help="grid sequence lengths")
    ap.add_argument("--head-dims", default="64,128,256", help="grid head dimensions")
    ap.add_argument("--variants", default="all", help="'all', 'none' or comma list of variant indices")
    ap.add_argument("--check-limit", type=float, default=2 ** 31, help="largest B·H·S² checked against fp32 math")
    ap.add_argument("--json", help="write every number here")
    args = ap.parse_args()

    lib = load_library(os.path.abspath(args.lib))
    device = torch.cuda.get_device_name()
    rates = next((v for k, v in RATES.items() if k in device), RATES["H100"])
    count = lib.kiln_attention_bench_variant_count()
    if args.variants == "all":
        variants = list(range(count))
    elif args.variants == "none":
        variants = []
    else:
        variants = [int(x) for x in args.variants.split(",")]
    shapes = []
    sets = args.shapes.split(",")
    unknown = [x for x in sets if x not in ("seed", "grid", "decode", "offgrid", "decode_random")]
    if unknown:
        ap.error(f"--shapes: unknown set(s) {', '.join(unknown)}; expected seed, grid, decode, offgrid, decode_random")
    if "seed" in sets:
        shapes += seed_shapes()
    if "grid" in sets:
        shapes += fa_grid([int(x) for x in args.seqs.split(",")], [int(x) for x in args.head_dims.split(",")])
    if "decode" in sets:
        shapes += decode_shapes([d for d in (int(x) for x in args.head_dims.split(",")) if d in (64, 128)])
    if "offgrid" in sets:
        shapes += offgrid_shapes()
    if "decode_random" in sets:
        shapes += random_decode_shapes(args.random, args.seed,
                                       [d for d in (int(x) for x in args.head_dims.split(",")) if d in (64, 128)])
    print(f"device: {device}, torch {torch.__version__}, {count} variants compiled", flush=True)
    # The floor of the per-call latency on this machine: an empty kernel, measured the same way.
    dev, host = ctypes.c_double(), ctypes.c_double()
    if lib.kiln_attention_bench_latency(-2, None, current_stream(), 100, ctypes.byref(dev), ctypes.byref(host)):
        raise RuntimeError(lib.kiln_attention_bench_error().decode())
    empty = (dev.value, host.value)
    print(f"empty kernel, events around one launch: {empty[0]:.1f} us (host {empty[1]:.1f} us in the launch)", flush=True)
    rows = []
    for shape in shapes:
        row = bench_shape(lib, shape, variants, rates, args.check_limit)
        errs = [e for n, e in row["errors"].items() if n != "sdpa_flash"]
        print(f"{shape}: kiln {row['kernel_us']['kiln']:.1f} us, best {short(row['best_variant'])} "
              f"{row['kernel_us'][row['best_variant']]:.1f} us, flash {fmt(row['kernel_us']['flash'])} us; "
              f"max rel_l2 vs fp32 math {fmt(max(errs) if errs else None, '.1e')} "
              f"(sdpa flash {fmt(row['errors'].get('sdpa_flash'), '.1e')})", flush=True)
        rows.append(row)
        torch.cuda.empty_cache()
        if args.json:  # after every shape: a long run cut short keeps what it measured
            with open(args.json, "w") as f:
                json.dump({"device": device, "torch": torch.__version__, "empty_kernel_latency_us": empty, "rows": rows},
                          f, indent=1)
    print_tables(rows, device, empty)
    bad = [(r["shape"], n, e) for r in rows for n, e in r["errors"].items() if n != "sdpa_flash" and not e <= 2e-2]
    if bad:
        print("ACCURACY FAILURES:", bad)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
