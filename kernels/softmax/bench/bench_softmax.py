#!/usr/bin/env python3
"""Kiln's tuned CUDA softmax against torch.softmax: one process, one device, one timing method.

Loads libkiln_softmax_bench.so (build.sh) with ctypes and calls the tuned library on torch
tensors' data pointers, on torch's current stream. The shapes are a record's held-out points
(--record, the default: the points the dispatch was judged on, never tuned on), or --shape
ROWSxCOLS:DTYPE given one or more times, and/or --random N shapes drawn from the space file's problem
domain (log-uniform in each dim within its range, redrawn until the domain's constraints hold;
--seed fixes the draw). Per shape:
  - correctness first: Kiln's output against torch.softmax of the fp32 input (max abs error);
  - time: a CUDA graph of n back-to-back calls (n sized to ~20 ms of work, at least 20), each
    call on the next of R input/output pairs, R sized so the pairs exceed four times the L2 cache
    (inputs come from DRAM, as in the tuner), replayed 7 times; median replay / n. The same graph
    shape for Kiln and for torch.softmax (torch.softmax(x, -1, out=y) is not used: it is not a
    public fast path; y = torch.softmax(x, -1) allocates from the graph's pool, which is fine);
  - floor: the larger of bytes / DRAM rate, FLOPs / FP32 rate, exps / SFU rate and one launch,
    with the record's rates (the tuner's floor).
Prints a markdown table and, last, the median and worst Kiln actual/floor over the points whose
floor is at least --min-floor-us, and the points where torch is faster beyond --noise.
Writes the rows as JSON with --json FILE.
"""
import argparse
import ctypes
import json
import math
import os
import random
import re
import statistics
import sys

import torch


def load_library(path):
    lib = ctypes.CDLL(path)
    lib.kiln_softmax_bench_forward.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                               ctypes.c_int64, ctypes.c_void_p]
    lib.kiln_softmax_bench_forward.restype = ctypes.c_int
    lib.kiln_softmax_bench_dispatched.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    lib.kiln_softmax_bench_dispatched.restype = ctypes.c_char_p
    return lib


def parse_shape(text):
    try:
        dims, dtype = text.split(":")
        rows, cols = (int(v) for v in dims.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shape '{text}': expected ROWSxCOLS:DTYPE, e.g. 4096x1024:bf16")
    if dtype not in ("fp32", "bf16") or rows < 1 or cols < 1:
        raise argparse.ArgumentTypeError(f"shape '{text}': rows and cols >= 1, dtype fp32 or bf16")
    return rows, cols, dtype


def domain_shapes(space_path, count, seed):
    """count shapes drawn from the space's problem domain: rows and cols log-uniform in their ranges,
    dtype uniform over its values, redrawn until every domain constraint (products of dims compared
    with a number, the form the softmax space uses) holds."""
    with open(space_path) as f:
        space = json.load(f)
    dims = space["problem"]["dims"]
    ranges = {}
    for name in ("rows", "cols"):
        d = dims[name]["domain"]
        ranges[name] = (int(d["min"]), int(d["max"]))
    dtypes = list(dims["dtype"])
    checks = []
    for text in space["problem"].get("domain_constraints", []):
        m = re.fullmatch(r"\s*(\w+(?:\s*\*\s*\w+)*)\s*(<=|>=|<|>)\s*(\d+)\s*", text)
        if not m:
            sys.exit(f"{space_path}: domain constraint '{text}': expected a product of dims compared with a number")
        names = [n.strip() for n in m.group(1).split("*")]
        if any(n not in ranges for n in names):
            sys.exit(f"{space_path}: domain constraint '{text}': names a dim other than rows and cols")
        checks.append((names, m.group(2), int(m.group(3))))
    ops = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, ">": lambda a, b: a > b}
    rng = random.Random(seed)
    shapes = []
    for _ in range(count):
        for _attempt in range(10000):
            v = {n: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi))))) for n, (lo, hi) in ranges.items()}
            if all(ops[op](math.prod(v[n] for n in names), bound) for names, op, bound in checks):
                break
        else:
            sys.exit(f"{space_path}: no shape in 10000 draws satisfies the domain constraints")
        shapes.append((v["rows"], v["cols"], rng.choice(dtypes)))
    return shapes


def floor_seconds(rows, cols, dtype, rates):
    n = rows * cols
    size = 2 if dtype == "bf16" else 4
    return max(2 * n * size / rates["dram_bytes_per_s"], 4 * n / rates["fp32_flops_per_s"],
               n / rates["sfu_ops_per_s"], rates["launch_s"])


def time_graph(call, pairs):
    """Median seconds per call: a CUDA graph of back-to-back calls over the pairs, replayed 7 times."""
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        for k in range(min(3, len(pairs))):
            call(*pairs[k])  # warm-up (module load, allocator) outside the capture
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(stream)
    with torch.cuda.stream(stream):
        for k in range(len(pairs)):
            call(*pairs[k])
    end.record(stream)
    torch.cuda.synchronize()
    one = max(start.elapsed_time(end) / 1e3 / len(pairs), 1e-7)
    n = max(20, len(pairs), min(2000, int(0.02 / one)))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for i in range(n):
            call(*pairs[i % len(pairs)])
    samples = []
    with torch.cuda.stream(stream):  # a graph replays on the current stream: the events' stream
        graph.replay()
        torch.cuda.synchronize()
        for _ in range(7):
            start.record(stream)
            graph.replay()
            end.record(stream)
            torch.cuda.synchronize()
            samples.append(start.elapsed_time(end) / 1e3 / n)
    return statistics.median(samples), (max(samples) - min(samples)) / statistics.median(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="libkiln_softmax_bench.so (build.sh)")
    ap.add_argument("--record", help="a softmax_cuda record: its held-out points, its rates")
    ap.add_argument("--shape", action="append", type=parse_shape, default=[], help="ROWSxCOLS:DTYPE (repeatable)")
    ap.add_argument("--random", type=int, default=0, metavar="N", help="N shapes drawn from the space's domain")
    ap.add_argument("--seed", type=int, default=1, help="seed of --random")
    ap.add_argument("--space", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                    "softmax_cuda.space.json"), help="the space whose domain --random draws from")
    ap.add_argument("--min-floor-us", type=float, default=10.0, help="actual/floor summary over floors >= this")
    ap.add_argument("--noise", type=float, default=0.02, help="relative difference counted as a tie")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    if args.random < 0:
        ap.error("--random: a count >= 0")
    if not args.record and not args.shape and not args.random:
        ap.error("give --record (its held-out points), --shape or --random")

    rates = {"dram_bytes_per_s": 4.1e12, "fp32_flops_per_s": 6.3e13, "sfu_ops_per_s": 4.16e12, "launch_s": 5.4e-7}
    shapes = list(args.shape)
    if args.record:
        with open(args.record) as f:
            record = json.load(f)
        rates.update({k: v for k, v in record.get("rates", {}).items() if k in rates})
        if not args.shape and not args.random:
            held = record.get("domain", {}).get("held_out", [])
            if not held:
                sys.exit(f"{args.record}: no held-out points (domain.held_out); give --shape")
            shapes = [(p["problem"]["rows"], p["problem"]["cols"], p["problem"]["dtype"]) for p in held]

    if args.random:
        shapes += domain_shapes(args.space, args.random, args.seed)

    lib = load_library(args.lib)
    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 50 << 20)
    print(f"device: {props.name}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    rows_out = []
    for rows, cols, dtype in shapes:
        tdtype = torch.float32 if dtype == "fp32" else torch.bfloat16
        size = 4 if dtype == "fp32" else 2
        footprint = 2 * rows * cols * size
        count = max(1, min(4096, -(-4 * l2_bytes // footprint)))  # as the tuner rotates its input sets
        gen = torch.Generator(device="cuda").manual_seed(rows * 7919 + cols)
        pairs = []
        for _ in range(count):
            x = (torch.randn(rows, cols, device="cuda", generator=gen) * 3 +
                 torch.randn(rows, 1, device="cuda", generator=gen) * 20).to(tdtype)
            pairs.append((x, torch.empty_like(x)))

        def kiln(x, y):
            rc = lib.kiln_softmax_bench_forward(0 if dtype == "fp32" else 1, x.data_ptr(), y.data_ptr(), rows, cols,
                                                torch.cuda.current_stream().cuda_stream)
            if rc != 0:
                raise RuntimeError(f"kiln softmax {rows}x{cols} {dtype}: cudaError {rc}")

        def torch_softmax(x, y):
            torch.softmax(x, dim=-1)

        x, y = pairs[0]
        kiln(x, y)
        torch.cuda.synchronize()
        error = (y.float() - torch.softmax(x.float(), dim=-1)).abs().max().item()
        kiln_s, kiln_spread = time_graph(kiln, pairs)
        torch_s, torch_spread = time_graph(torch_softmax, pairs)
        floor = floor_seconds(rows, cols, dtype, rates)
        row = {"rows": rows, "cols": cols, "dtype": dtype, "kiln_us": kiln_s * 1e6, "torch_us": torch_s * 1e6,
               "floor_us": floor * 1e6, "kiln_over_floor": kiln_s / floor, "torch_over_kiln": torch_s / kiln_s,
               "spread": max(kiln_spread, torch_spread), "max_abs_error": error,
               "variant": lib.kiln_softmax_bench_dispatched(0 if dtype == "fp32" else 1, rows, cols).decode()}
        rows_out.append(row)
        del pairs, x, y
        torch.cuda.empty_cache()

    print("\n| rows | cols | dtype | Kiln µs | torch.softmax µs | torch / Kiln | floor µs | Kiln / floor | max abs error | variant |")
    print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows_out:
        print(f"| {r['rows']} | {r['cols']} | {r['dtype']} | {r['kiln_us']:.2f} | {r['torch_us']:.2f} | "
              f"{r['torch_over_kiln']:.2f} | {r['floor_us']:.2f} | {r['kiln_over_floor']:.2f} | {r['max_abs_error']:.1e} | "
              f"{r['variant']} |")
    big = [r["kiln_over_floor"] for r in rows_out if r["floor_us"] >= args.min_floor_us]
    if big:
        print(f"\nKiln / floor over {len(big)} points with a floor >= {args.min_floor_us:g} µs: "
              f"median {statistics.median(big):.2f}, worst {max(big):.2f}")
    slower = [r for r in rows_out if r["torch_over_kiln"] < 1 - args.noise]
    print(f"torch.softmax faster than Kiln beyond {args.noise:.0%}: {len(slower)} of {len(rows_out)} points" +
          "".join(f"\n  {r['rows']}x{r['cols']} {r['dtype']}: Kiln {r['kiln_us']:.2f} µs, torch {r['torch_us']:.2f} µs"
                  for r in slower))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows_out, f, indent=1)


if __name__ == "__main__":
    main()
