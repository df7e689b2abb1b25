// kiln tune --gpus: what it accepts, and which GPUs of a machine it picks (nvidia-smi's rows as
// the machine would print them).
#include "gpus.hpp"
#include "kiln/error.hpp"
#include "kiln_catch.hpp"

using namespace kiln::tuner;
using kiln_test::ContainsSubstring;

namespace {

const std::vector<std::string> kTwoH200 = {"0, NVIDIA H200, GPU-1a2b3c4d-0000-0000-0000-000000000000",
                                           "1, NVIDIA H200, GPU-5e6f7a8b-0000-0000-0000-000000000000"};
const std::vector<std::string> kMixed = {"0, NVIDIA L4, GPU-aaaa0000-0000-0000-0000-000000000000",
                                         "1, NVIDIA H200, GPU-bbbb0000-0000-0000-0000-000000000000",
                                         "2, NVIDIA H200, GPU-cccc0000-0000-0000-0000-000000000000"};

std::vector<std::string> indices(const std::vector<Gpu>& gpus) {
  std::vector<std::string> out;
  for (const auto& g : gpus) out.push_back(g.index);
  return out;
}

}  // namespace

TEST_CASE("the GPU request is all, or distinct indices") {
  CHECK(parse_gpu_request("all").all);
  CHECK(parse_gpu_request(" 0,2 ").indices == std::vector<std::string>{"0", "2"});
  CHECK(parse_gpu_request("03").indices == std::vector<std::string>{"3"});
  CHECK_THROWS_WITH(parse_gpu_request(""), ContainsSubstring("got nothing"));
  CHECK_THROWS_WITH(parse_gpu_request("0,0"), ContainsSubstring("GPU 0 is named twice"));
  CHECK_THROWS_WITH(parse_gpu_request("0,,1"), ContainsSubstring("'' is not a GPU index"));
  CHECK_THROWS_WITH(parse_gpu_request("-1"), ContainsSubstring("'-1' is not a GPU index"));
  CHECK_THROWS_WITH(parse_gpu_request("GPU-1a2b"), ContainsSubstring("is not a GPU index"));
  CHECK_THROWS_WITH(parse_gpu_request("0,"), ContainsSubstring("'' is not a GPU index"));
}

TEST_CASE("nvidia-smi's rows are read strictly") {
  auto gpus = parse_gpu_list(kTwoH200);
  REQUIRE(gpus.size() == 2);
  CHECK(gpus[1].index == "1");
  CHECK(gpus[1].name == "NVIDIA H200");
  CHECK(gpus[1].uuid == "GPU-5e6f7a8b-0000-0000-0000-000000000000");
  CHECK(describe(gpus[1]) == "GPU 1 (NVIDIA H200)");
  CHECK_THROWS_WITH(parse_gpu_list({"0, NVIDIA H200"}), ContainsSubstring("line 1 '0, NVIDIA H200' is not"));
  CHECK_THROWS_WITH(parse_gpu_list({kTwoH200[0], "x, NVIDIA H200, GPU-1"}), ContainsSubstring("line 2"));
}

TEST_CASE("all means every GPU CUDA_VISIBLE_DEVICES shows, and indices are checked against the machine") {
  const auto present = parse_gpu_list(kTwoH200);
  CHECK(indices(select_gpus(parse_gpu_request("all"), present, std::nullopt)) == std::vector<std::string>{"0", "1"});
  CHECK(indices(select_gpus(parse_gpu_request("all"), present, "1")) == std::vector<std::string>{"1"});
  CHECK(indices(select_gpus(parse_gpu_request("all"), present, "GPU-5e6f")) == std::vector<std::string>{"1"});
  CHECK(indices(select_gpus(parse_gpu_request("1,0"), present, std::nullopt)) == std::vector<std::string>{"1", "0"});
  CHECK_THROWS_WITH(select_gpus(parse_gpu_request("2"), present, std::nullopt), ContainsSubstring("no GPU 2"));
  CHECK_THROWS_WITH(select_gpus(parse_gpu_request("0"), present, "1"),
                    ContainsSubstring("GPU 0 is hidden by CUDA_VISIBLE_DEVICES='1'"));
  CHECK_THROWS_WITH(select_gpus(parse_gpu_request("all"), present, "7"), ContainsSubstring("shows none"));
  CHECK_THROWS_WITH(select_gpus(parse_gpu_request("all"), {}, std::nullopt), ContainsSubstring("lists no GPU"));
}

TEST_CASE("a box of mixed models is refused, naming the GPUs of each model") {
  const auto present = parse_gpu_list(kMixed);
  CHECK_THROWS_WITH(select_gpus(parse_gpu_request("all"), present, std::nullopt),
                    ContainsSubstring("of 2 models") && ContainsSubstring("NVIDIA H200: --gpus 1,2") &&
                        ContainsSubstring("NVIDIA L4: --gpus 0"));
  CHECK(indices(select_gpus(parse_gpu_request("1,2"), present, std::nullopt)) == std::vector<std::string>{"1", "2"});
  CHECK(indices(select_gpus(parse_gpu_request("all"), present, "1,2")) == std::vector<std::string>{"1", "2"});
}
