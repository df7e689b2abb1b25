#!/usr/bin/env python3
"""Kiln's tuned CUDA top-k against torch.topk: one process, one device, one timing method.

Loads libkiln_topk_bench.so (build.sh) with ctypes and calls the tuned library on torch tensors'
data pointers, on torch's current stream. Shapes: the issue's (1 x 2^28 k 1024, 1024 x 32768
k 256, 1 x 2^30 k 1024), or --shape ROWSxN:K given one or more times. Per shape:
  - correctness first: Kiln's values equal torch.topk's (sorted, largest); its indices equal
    torch's wherever torch's values are distinct (torch does not fix the order of ties), and the
    value at each returned index is the returned value; the streaming path (topk_feed over
    --chunks column chunks) gives the one-shot values and indices bit for bit;
  - time: a CUDA graph of back-to-back calls over R inputs, R sized so the inputs exceed four
    times the L2 (inputs come from DRAM, as in the tuner), replayed 7 times; median replay / calls.
    The same for torch.topk(x, k) (it allocates its outputs from the graph's pool);
  - floor: (4 * rows * n + 12 * rows * k) bytes over --dram-bytes-per-s, and at least one launch.
Prints a markdown table; writes the rows as JSON with --json FILE.
"""
import argparse
import ctypes
import json
import statistics

import torch


def load_library(path):
    lib = ctypes.CDLL(path)
    i64, vp = ctypes.c_int64, ctypes.c_void_p
    lib.kiln_topk_bench_workspace.argtypes = [i64, i64, i64]
    lib.kiln_topk_bench_workspace.restype = ctypes.c_size_t
    lib.kiln_topk_bench_forward.argtypes = [vp, i64, i64, i64, vp, vp, vp, ctypes.c_size_t, vp]
    lib.kiln_topk_bench_forward.restype = ctypes.c_int
    lib.kiln_topk_bench_streamed.argtypes = [vp, i64, i64, i64, ctypes.c_int, vp, vp, vp, vp]
    lib.kiln_topk_bench_streamed.restype = ctypes.c_int
    lib.kiln_topk_bench_dispatched.argtypes = [i64, i64, i64]
    lib.kiln_topk_bench_dispatched.restype = ctypes.c_char_p
    return lib


def parse_shape(text):
    try:
        dims, k = text.split(":")
        rows, n = (int(v) for v in dims.lower().split("x"))
        k = int(k)
    except ValueError:
        raise argparse.ArgumentTypeError(f"shape '{text}': expected ROWSxN:K, e.g. 1024x32768:256")
    if rows < 1 or n < 1 or not 1 <= k <= min(n, 2048):
        raise argparse.ArgumentTypeError(f"shape '{text}': rows, n >= 1 and 1 <= k <= min(n, 2048)")
    return rows, n, k


def time_graph(call, inputs):
    """Median seconds per call: a CUDA graph of back-to-back calls over the inputs, replayed 7 times."""
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        for x in inputs[:3]:
            call(x)  # warm-up outside the capture
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(stream)
    with torch.cuda.stream(stream):
        for x in inputs:
            call(x)
    end.record(stream)
    torch.cuda.synchronize()
    one = max(start.elapsed_time(end) / 1e3 / len(inputs), 1e-7)
    calls = max(10, len(inputs), min(1000, int(0.05 / one)))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for i in range(calls):
            call(inputs[i % len(inputs)])
    samples = []
    with torch.cuda.stream(stream):
        graph.replay()
        torch.cuda.synchronize()
        for _ in range(7):
            start.record(stream)
            graph.replay()
            end.record(stream)
            torch.cuda.synchronize()
            samples.append(start.elapsed_time(end) / 1e3 / calls)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="libkiln_topk_bench.so (build.sh)")
    ap.add_argument("--shape", action="append", type=parse_shape, default=[], help="ROWSxN:K (repeatable)")
    ap.add_argument("--chunks", type=int, default=4, help="column chunks of the streaming check")
    ap.add_argument("--dram-bytes-per-s", type=float, default=4.1e12, help="the floor's bandwidth (H200 device file)")
    ap.add_argument("--launch-s", type=float, default=5.5e-7, help="the floor's launch time")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    shapes = args.shape or [(1, 1 << 28, 1024), (1024, 32768, 256), (1, 1 << 30, 1024)]

    lib = load_library(args.lib)
    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 50 << 20)
    print(f"device: {props.name}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    out_rows = []
    for rows, n, k in shapes:
        footprint = 4 * rows * n
        count = max(1, min(16, -(-4 * l2_bytes // footprint)))
        count = min(count, max(1, int(0.5 * torch.cuda.mem_get_info()[0] // footprint) - 2))
        gen = torch.Generator(device="cuda").manual_seed(rows * 7919 + n + k)
        inputs = [torch.randn(rows, n, device="cuda", generator=gen) for _ in range(count)]
        values = torch.empty(rows, k, device="cuda")
        indices = torch.empty(rows, k, device="cuda", dtype=torch.int64)
        ws_bytes = lib.kiln_topk_bench_workspace(rows, n, k)
        workspace = torch.empty(max(ws_bytes, 8), device="cuda", dtype=torch.uint8)

        def kiln(x):
            rc = lib.kiln_topk_bench_forward(x.data_ptr(), rows, n, k, values.data_ptr(), indices.data_ptr(),
                                             workspace.data_ptr(), ws_bytes, torch.cuda.current_stream().cuda_stream)
            if rc != 0:
                raise RuntimeError(f"kiln topk {rows}x{n} k {k}: error {rc}")

        def torch_topk(x):
            torch.topk(x, k, dim=-1)

        x = inputs[0]
        kiln(x)
        torch.cuda.synchronize()
        ref_values, ref_indices = torch.topk(x, k, dim=-1)
        values_equal = torch.equal(values, ref_values)
        distinct = torch.ones_like(ref_values, dtype=torch.bool)
        distinct[:, 1:] &= ref_values[:, 1:] != ref_values[:, :-1]
        distinct[:, :-1] &= ref_values[:, :-1] != ref_values[:, 1:]
        indices_equal = torch.equal(indices[distinct], ref_indices[distinct])
        gathered = torch.equal(torch.gather(x, 1, indices), values)
        scratch = torch.empty(rows * (-(-n // args.chunks)), device="cuda")
        s_values = torch.empty(rows, k, dtype=torch.float32)
        s_indices = torch.empty(rows, k, dtype=torch.int64)
        rc = lib.kiln_topk_bench_streamed(x.data_ptr(), rows, n, k, args.chunks, scratch.data_ptr(), s_values.data_ptr(),
                                          s_indices.data_ptr(), torch.cuda.current_stream().cuda_stream)
        streamed = rc == 0 and torch.equal(s_values.view(torch.int32), values.cpu().view(torch.int32)) and \
            torch.equal(s_indices, indices.cpu())
        del scratch
        kiln_s = time_graph(kiln, inputs)
        torch_s = time_graph(torch_topk, inputs)
        floor = max((4 * rows * n + 12 * rows * k) / args.dram_bytes_per_s, args.launch_s)
        out_rows.append({"rows": rows, "n": n, "k": k, "kiln_us": kiln_s * 1e6, "torch_us": torch_s * 1e6,
                         "floor_us": floor * 1e6, "kiln_over_floor": kiln_s / floor, "torch_over_kiln": torch_s / kiln_s,
                         "values_equal": values_equal, "indices_equal_where_distinct": indices_equal,
                         "values_at_indices": gathered, "streamed_bit_identical": streamed,
                         "variant": lib.kiln_topk_bench_dispatched(rows, n, k).decode()})
        del inputs, x, values, indices, workspace
        torch.cuda.empty_cache()

    print("\n| rows | n | k | Kiln µs | torch.topk µs | torch / Kiln | floor µs | Kiln / floor | values = torch | "
          "indices = torch (distinct) | streamed = one-shot | variant |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- |")
    for r in out_rows:
        print(f"| {r['rows']} | {r['n']} | {r['k']} | {r['kiln_us']:.1f} | {r['torch_us']:.1f} | {r['torch_over_kiln']:.2f} | "
              f"{r['floor_us']:.1f} | {r['kiln_over_floor']:.2f} | {r['values_equal']} | "
              f"{r['indices_equal_where_distinct']} | {r['streamed_bit_identical']} | {r['variant']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out_rows, f, indent=1)


if __name__ == "__main__":
    main()
