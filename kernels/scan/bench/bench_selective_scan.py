#!/usr/bin/env python3
"""Kiln's tuned CUDA selective scan against two PyTorch formulations: one process, one device, one
timing method.

Loads libkiln_selective_scan_bench.so (build.sh) with ctypes and calls the tuned library on torch
tensors' data pointers, on torch's current stream. Mamba-1 forward with z, D, delta_bias and
softplus, the final state returned; default shape B=1, channels 5120, L 8192, state 16, bf16 I/O.
  - sequential: the recurrence as a Python loop over time, one batched state update per step
    (fp32 math, as Kiln's);
  - parallel:   the same recurrence as a chunked parallel scan in PyTorch: within chunks of --chunk
    steps h_t = P_t * cumsum(b_s / P_s) with P_t = exp(cumsum(dt A)) (the log-space form,
    rebased per chunk so that 1/P stays finite), across chunks the carried state;
  - kiln:       kiln::cuda::selective_scan.
Correctness first: each against an fp64 sequential reference on a sample of channels (max error
relative to max |y|). Time: CUDA events around --reps calls after --warmup calls, median of
--trials; the sequential loop is timed on --seq-length steps and scaled to L (it is linear in L)
unless --seq-length equals L. The floor is the largest of bytes / DRAM rate, exps / SFU rate and
FLOPs / FP32 rate, with the rates given (H200 defaults from presets/devices/h200.json).
"""
import argparse
import ctypes
import statistics
import sys

import torch
import torch.nn.functional as F

DTYPES = {"fp32": (0, torch.float32), "bf16": (1, torch.bfloat16), "fp16": (2, torch.float16)}


def load_library(path):
    lib = ctypes.CDLL(path)
    p = ctypes.c_void_p
    i64 = ctypes.c_int64
    lib.kiln_selective_scan_bench_forward.argtypes = [ctypes.c_int, p, p, p, p, p, p, p, p, p, p, i64, i64, i64, i64,
                                                      i64, ctypes.c_int, p, ctypes.c_char_p, i64]
    lib.kiln_selective_scan_bench_forward.restype = ctypes.c_int
    lib.kiln_selective_scan_bench_dispatched.argtypes = [ctypes.c_int, i64, i64, i64, i64, i64]
    lib.kiln_selective_scan_bench_dispatched.restype = ctypes.c_char_p
    return lib


def make_inputs(batch, channels, length, state, dtype, device):
    g = torch.Generator(device=device).manual_seed(1)
    rnd = lambda *shape: torch.rand(*shape, generator=g, device=device)
    dt0 = torch.exp(torch.log(torch.tensor(1e-3)) + rnd(channels) * torch.log(torch.tensor(100.0)))
    return {
        "u": (rnd(batch, channels, length) * 2 - 1).to(dtype),
        "delta": (rnd(batch, channels, length) - 0.5).to(dtype),
        "z": (rnd(batch, channels, length) * 4 - 2).to(dtype),
        "B": (rnd(batch, 1, state, length) * 2 - 1).to(dtype),
        "C": (rnd(batch, 1, state, length) * 2 - 1).to(dtype),
        "A": -(torch.arange(state, device=device).float() + 1) * (0.5 + rnd(channels, state)),
        "D": 0.5 + rnd(channels),
        "delta_bias": torch.log(torch.expm1(dt0)),
    }


def prepare(x):
    """dt (softplus of delta + bias) and the fp32 views every formulation shares."""
    dt = F.softplus(x["delta"].float() + x["delta_bias"][None, :, None])
    return dt, x["u"].float(), x["B"][:, 0].float(), x["C"][:, 0].float()


def finish(y, x):
    return ((y + x["D"][None, :, None] * x["u"].float()) * F.silu(x["z"].float())).to(x["u"].dtype)


def sequential(x, steps=None):
    dt, u, B, C = prepare(x)
    A = x["A"]
    length = u.shape[-1] if steps is None else steps
    h = torch.zeros(u.shape[0], u.shape[1], A.shape[1], device=u.device)
    ys = []
    for t in range(length):
        h = torch.exp(dt[:, :, t, None] * A) * h + (dt[:, :, t] * u[:, :, t])[:, :, None] * B[:, None, :, t]
        ys.append((h * C[:, None, :, t]).sum(-1))
    y = torch.stack(ys, -1)
    if steps is not None:
        return y
    return finish(y, x), h


def parallel(x, chunk):
    dt, u, B, C = prepare(x)
    A = x["A"]
    batch, channels, length = u.shape
    h = torch.zeros(batch, channels, A.shape[1], device=u.device)
    ys = []
    for t0 in range(0, length, chunk):
        sl = slice(t0, min(t0 + chunk, length))
        la = torch.cumsum(dt[:, :, sl, None] * A[None, :, None, :], dim=2)   # [b, d, t, n] log of P_t
        b = (dt[:, :, sl] * u[:, :, sl])[..., None] * B[:, None, :, sl].transpose(-1, -2)
        hs = torch.exp(la) * (h[:, :, None, :] + torch.cumsum(b * torch.exp(-la), dim=2))
        ys.append((hs * C[:, None, :, sl].transpose(-1, -2)).sum(-1))
        h = hs[:, :, -1]
    return finish(torch.cat(ys, -1), x), h


def kiln_call(lib, x, dtype_code, y, h):
    batch, channels, length = x["u"].shape
    state = x["A"].shape[1]
    err = ctypes.create_string_buffer(512)
    ptr = lambda t: ctypes.c_void_p(t.data_ptr())
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def call():
        rc = lib.kiln_selective_scan_bench_forward(dtype_code, ptr(x["u"]), ptr(x["delta"]), ptr(x["A"]), ptr(x["B"]),
                                                   ptr(x["C"]), ptr(x["D"]), ptr(x["z"]), ptr(x["delta_bias"]), ptr(y),
                                                   ptr(h), batch, channels, length, state, 1, 1, stream, err, 512)
        if rc != 0:
            raise RuntimeError(err.value.decode())
    return call


def reference(x, channels_sampled):
    """fp64 sequential recurrence on a sample of channels of batch 0."""
    d = torch.tensor(channels_sampled, device=x["u"].device)
    sub = {k: (v[:, d] if k in ("u", "delta", "z") else v[d] if k in ("A", "D", "delta_bias") else v) for k, v in x.items()}
    sub = {k: v.double() if v.is_floating_point() else v for k, v in sub.items()}
    dt = F.softplus(sub["delta"] + sub["delta_bias"][None, :, None])
    u, B, C, A = sub["u"], sub["B"][:, 0], sub["C"][:, 0], sub["A"]
    h = torch.zeros(u.shape[0], u.shape[1], A.shape[1], dtype=torch.float64, device=u.device)
    ys = []
    for t in range(u.shape[-1]):
        h = torch.exp(dt[:, :, t, None] * A) * h + (dt[:, :, t] * u[:, :, t])[:, :, None] * B[:, None, :, t]
        ys.append((h * C[:, None, :, t]).sum(-1))
    y = torch.stack(ys, -1)
    return (y + sub["D"][None, :, None] * u) * F.silu(sub["z"]), d


def time_call(call, warmup, reps, trials):
    for _ in range(warmup):
        call()
    times = []
    for _ in range(trials):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            call()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / reps)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="libkiln_selective_scan_bench.so (build.sh)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--channels", type=int, default=5120)
    ap.add_argument("--length", type=int, default=8192)
    ap.add_argument("--state", type=int, default=16)
    ap.add_argument("--dtype", choices=DTYPES, default="bf16")
    ap.add_argument("--chunk", type=int, default=16,
                    help="chunk length of the PyTorch parallel scan: exp(-cumsum(dt A)) must stay finite in fp32, "
                         "and with dt A down to about -4 per step (these inputs) 16 steps reach exp(64)")
    ap.add_argument("--seq-length", type=int, default=256, help="steps the sequential loop is timed on")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--dram", type=float, default=4.1e12, help="bytes/s")
    ap.add_argument("--sfu", type=float, default=4.16e12, help="exp/s")
    ap.add_argument("--fp32", type=float, default=6.69e13, help="FLOP/s")
    a = ap.parse_args()
    if min(a.batch, a.channels, a.length, a.state, a.chunk, a.seq_length) < 1:
        print("bench_selective_scan.py: sizes, --chunk and --seq-length must be >= 1", file=sys.stderr)
        return 2

    lib = load_library(a.lib)
    code, dtype = DTYPES[a.dtype]
    x = make_inputs(a.batch, a.channels, a.length, a.state, dtype, "cuda")
    y = torch.empty_like(x["u"])
    h = torch.empty(a.batch, a.channels, a.state, device="cuda")
    kiln = kiln_call(lib, x, code, y, h)

    sample = sorted({0, a.channels - 1, a.channels // 2, a.channels // 3})
    ref, d = reference(x, sample)
    scale = ref.abs().max().item()
    kiln()
    yp, _ = parallel(x, a.chunk)
    err = lambda out: (out[:, d].double() - ref).abs().max().item() / scale
    print(f"correctness (max |error| / max |y| on channels {sample}): kiln {err(y):.2e}, parallel {err(yp):.2e}")

    t_kiln = time_call(kiln, a.warmup, a.reps, a.trials)
    t_par = time_call(lambda: parallel(x, a.chunk), 1, 3, a.trials)
    steps = min(a.seq_length, a.length)
    t_seq = time_call(lambda: sequential(x, steps), 1, 1, 3) * a.length / steps

    n = a.batch * a.channels * a.length
    size = 4 if a.dtype == "fp32" else 2
    bytes_ = (4 * n + 2 * a.batch * a.state * a.length) * size + 4 * a.channels * (a.state + 2) + 4 * a.batch * a.channels * a.state
    terms = {"DRAM": bytes_ / a.dram, "SFU (exp)": n * (a.state + 3) / a.sfu, "FP32": 6 * n * a.state / a.fp32}
    bound = max(terms, key=terms.get)
    floor = terms[bound]
    variant = lib.kiln_selective_scan_bench_dispatched(code, a.batch, a.channels, a.length, a.state, 1).decode()
    print(f"shape B={a.batch} channels={a.channels} L={a.length} state={a.state} {a.dtype}; kiln variant {variant}")
    print("floor terms: " + ", ".join(f"{k} {v * 1e6:.1f} us" for k, v in terms.items()) + f" -> {bound} bound")
    print("| method | time | vs kiln | of the floor |")
    print("| --- | --- | --- | --- |")
    for name, t in (("PyTorch sequential loop" + ("" if steps == a.length else f" (timed on {steps} steps, scaled)"), t_seq),
                    (f"PyTorch chunked parallel scan (chunk {a.chunk})", t_par), ("kiln::cuda::selective_scan", t_kiln)):
        print(f"| {name} | {t * 1e6:.1f} us | {t / t_kiln:.1f}x | {t / floor:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
