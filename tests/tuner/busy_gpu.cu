// Keeps the GPU busy for a given number of seconds, as another user's job would: kernels that
// spin on the clock, launched back to back. Prints "busy" once the first one runs, so a test
// knows when to look.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  if (!(seconds > 0 && seconds < 600)) {
    std::fprintf(stderr, "usage: kiln_busy_gpu SECONDS (0 < SECONDS < 600)\n");
    return 2;
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  bool told = false;
  while (std::chrono::steady_clock::now() < end) {
    spin<<<1024, 128>>>(100'000'000);  // about 50 ms at 2 GHz
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
      std::fprintf(stderr, "kiln_busy_gpu: %s\n", cudaGetErrorString(e));
      return 1;
    }
    if (!told) {
      std::printf("busy\n");
      std::fflush(stdout);
      told = true;
    }
  }
  return 0;
}
