// A hand-written variant Config with the canonical Kiln name the generator would give it, for the
// tests and the benchmark (the generator writes its own for the tuned library).
#pragma once

// Any variant with every knob, its name `NAME_SUFFIX` longer than the first nine knobs make it.
#define KILN_ATTENTION_CONFIG_ALL(NAME, D, BM, BN, W, S, QR, ST, PG, CL, WG, OV, PR, PP, PS, KW, NAME_SUFFIX)          \
  struct NAME {                                                                                            \
    static constexpr int HEAD_DIM = D;                                                                     \
    static constexpr int BLOCK_M = BM;                                                                     \
    static constexpr int BLOCK_N = BN;                                                                     \
    static constexpr int WARPS = W;                                                                        \
    static constexpr int STAGES = S;                                                                       \
    static constexpr int Q_REG_STEPS = QR;                                                                 \
    static constexpr int SPLIT_TARGET = ST;                                                                \
    static constexpr int PACK_GQA = PG;                                                                    \
    static constexpr int CLUSTER = CL;                                                                     \
    static constexpr int WGMMA = WG;                                                                       \
    static constexpr int OVERLAP = OV;                                                                     \
    static constexpr int PRODUCER = PR;                                                                    \
    static constexpr int PINGPONG = PP;                                                                    \
    static constexpr int PERSISTENT = PS;                                                                  \
    static constexpr int KEY_WARPS = KW;                                                                   \
    static constexpr const char* kiln_name = "attention_d" #D "__HEAD_DIM" #D "_BLOCK_M" #BM "_BLOCK_N" #BN \
                                             "_WARPS" #W "_STAGES" #S "_Q_REG_STEPS" #QR "_SPLIT_TARGET" #ST \
                                             "_PACK_GQA" #PG "_CLUSTER" #CL NAME_SUFFIX;                    \
  }

// A variant of the mma.sync path, named as the spaces without the warpgroup-MMA knobs name it.
#define KILN_ATTENTION_CONFIG(NAME, D, BM, BN, W, S, QR, ST, PG, CL) \
  KILN_ATTENTION_CONFIG_ALL(NAME, D, BM, BN, W, S, QR, ST, PG, CL, 0, 0, 0, 0, 0, 1, "")

// A variant of the mma.sync path whose KEY_WARPS warps split each key tile (the decode spaces'
// knob, named last as they name it).
#define KILN_ATTENTION_CONFIG_KW(NAME, D, BM, BN, W, S, QR, ST, PG, CL, KW) \
  KILN_ATTENTION_CONFIG_ALL(NAME, D, BM, BN, W, S, QR, ST, PG, CL, 0, 0, 0, 0, 0, KW, "_KEY_WARPS" #KW)

// Any variant, with the knobs of the warpgroup-MMA path (WGMMA 1: attention_wgmma_kernel.cuh;
// OVERLAP 1: its softmax overlapped with the previous tile's P·V; PRODUCER 1: a TMA producer
// warpgroup feeds WARPS consumer warps; PINGPONG 1: its consumer warpgroups take turns issuing;
// PERSISTENT 1: one wave of blocks takes the work items in turn).
#define KILN_ATTENTION_CONFIG_WG(NAME, D, BM, BN, W, S, QR, ST, PG, CL, WG, OV, PR, PP, PS) \
  KILN_ATTENTION_CONFIG_ALL(NAME, D, BM, BN, W, S, QR, ST, PG, CL, WG, OV, PR, PP, PS, 1,   \
                            "_WGMMA" #WG "_OVERLAP" #OV "_PRODUCER" #PR "_PINGPONG" #PP "_PERSISTENT" #PS)

// A variant of the warpgroup-MMA path (no Q fragments in registers, no cluster).
#define KILN_ATTENTION_WGMMA_CONFIG(NAME, D, BM, BN, W, S, ST, PG, OV, PR, PP, PS) \
  KILN_ATTENTION_CONFIG_WG(NAME, D, BM, BN, W, S, 0, ST, PG, 0, 1, OV, PR, PP, PS)
