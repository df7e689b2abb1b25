// `generate_for_tests SPACE TARGET OUT`: the generate command, for the build to produce a variant
// source that a test then compiles.
#include <iostream>

#include "kiln/gen/generate.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " SPACE TARGET OUT\n";
    return 2;
  }
  return kiln::gen::generate_command(argv[1], argv[2], argv[3], std::cout, std::cerr);
}
