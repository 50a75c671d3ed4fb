// Test helpers: files of the source tree, and golden-file comparison.
#ifndef KILN_TESTS_TESTING_GOLDEN_H_
#define KILN_TESTS_TESTING_GOLDEN_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/testing/paths.h"

namespace kiln::testing {

// The contents of `path` relative to the source tree (empty, with a test failure, if missing).
inline std::string ReadSourceFile(const std::string& path) {
  std::ifstream file(std::string(kiln::testing::SourceDir()) + "/" + path);
  EXPECT_TRUE(file.good()) << "cannot read " << path;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Expects `actual` to equal the golden file at `path`; with KILN_UPDATE_GOLDEN=1 in the
// environment, rewrites the file instead (review the diff before committing it).
inline void ExpectGolden(const std::string& actual, const std::string& path) {
  if (const char* update = std::getenv("KILN_UPDATE_GOLDEN");
      update && std::string(update) == "1") {
    std::ofstream(std::string(kiln::testing::SourceDir()) + "/" + path) << actual;
    return;
  }
  EXPECT_EQ(actual, ReadSourceFile(path)) << "golden file " << path;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_GOLDEN_H_
