// Replays every file of tests/fuzz/corpus/<target> and tests/fuzz/regressions/<target> (the
// inputs the fuzzers crashed on, once fixed) through its target: each must return normally.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/fuzz/fuzz_targets.h"
#include "tests/testing/paths.h"

namespace kiln::fuzz {
namespace {

class FuzzRegressionTest : public ::testing::TestWithParam<NamedTarget> {};

TEST_P(FuzzRegressionTest, EveryInputReturns) {
  const std::filesystem::path root =
      std::filesystem::path(kiln::testing::SourceDir()) / "tests/fuzz";
  int inputs = 0;
  for (const char* folder : {"corpus", "regressions"}) {
    const std::filesystem::path dir = root / folder / GetParam().name;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      SCOPED_TRACE(entry.path().string());
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      GetParam().run(bytes.str());
      ++inputs;
    }
  }
  EXPECT_GT(inputs, 0) << "no corpus for " << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzRegressionTest, ::testing::ValuesIn(kTargets),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln::fuzz
