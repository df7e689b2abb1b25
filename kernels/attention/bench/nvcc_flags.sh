# Sourced by build.sh and build_api.sh: the one definition of the attention benchmark's nvcc flags.
#   attention_nvcc_flags ARCH GENERATED
# sets `gencode` (90a or 89; anything else: a message and status 2) and the array `flags` (C++17,
# -O3, position-independent, the ptxas report, the attention and Kiln include folders and the
# dispatch headers in GENERATED).
attention_nvcc_flags() {
  case "$1" in
    90a) gencode="-gencode=arch=compute_90a,code=sm_90a" ;;
    89) gencode="-gencode=arch=compute_89,code=sm_89" ;;
    *) echo "architecture must be 90a or 89, not '$1'" >&2; return 2 ;;
  esac
  local root att
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
  att="$root/kernels/attention"
  flags=(-std=c++17 -O3 $gencode -Xcompiler -fPIC -Xptxas=-v
         -I"$att" -I"$att/include" -I"$att/src" -I"$att/bench" -I"$root/autotune/include" -I"$root/tests/kernels/attention" -I"$2")
}
