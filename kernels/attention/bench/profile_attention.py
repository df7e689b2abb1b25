#!/usr/bin/env python3
"""One call each of Kiln and SDPA's backends on one shape, for a profiler to capture.

  ncu -k 'regex:attention_forward_kernel|flash_fwd' --set full -o report \
      python3 profile_attention.py --lib libkiln_attention_bench.so --shape 4,16,4096,128,full
  (a decode shape with grouped heads: --shape 4,32/4,1/8192,64,full)

Kiln runs first (the dispatched variant, or --variant i), then each backend of --backends.
"""
import argparse
import ctypes
import os
import sys

import torch
from torch.nn.attention import SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attention import Problem, Shape, current_stream, load_library  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--shape", default="4,16,4096,128,full",
                    help="B,H,S,D,full|causal; H may be Hq/Hkv (grouped heads) and S Sq/Sk (e.g. 4,32/4,1/8192,64,full)")
    ap.add_argument("--variant", type=int, default=-1, help="variant index; -1: the dispatched one")
    ap.add_argument("--backends", default="flash", help="comma list of flash, cudnn, efficient")
    a = ap.parse_args()
    try:
        b, h, s, d, mask = a.shape.split(",")
        hq, _, hkv = h.partition("/")
        sq, _, sk = s.partition("/")
        shape = Shape(int(b), int(hq), int(sq), int(d), mask == "causal", int(hkv or hq), int(sk or sq))
        if mask not in ("full", "causal"):
            raise ValueError(f"mask {mask!r}")
    except ValueError as e:
        ap.error(f"--shape {a.shape!r}: expected B,H[/Hkv],S[/Sk],D,full|causal ({e})")
    lib = load_library(a.lib)
    variants = [] if a.variant < 0 else [a.variant]
    prob = Problem(lib, shape, variants)
    stream = current_stream()
    (prob.kiln() if a.variant < 0 else prob.variant(a.variant))(stream)
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    for name in filter(None, a.backends.split(",")):
        prob.sdpa(backends[name])(stream)
    torch.cuda.synchronize()
    print(f"{shape}: kiln {lib.kiln_attention_bench_dispatched(prob.ref).decode()} and {a.backends} ran")


if __name__ == "__main__":
    main()
