// Test helper: compile and run a graph, failing the test on any error.
#ifndef KILN_TESTS_TESTING_EVAL_H_
#define KILN_TESTS_TESTING_EVAL_H_

#include <gtest/gtest.h>

#include <vector>

#include "core/compile/function.h"

namespace kiln::testing {

// The outputs of function(inputs, outputs) on `args` (empty, with a test failure, on an error).
inline std::vector<Tensor> Eval(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                                std::vector<Tensor> args) {
  // Test graphs often leave an input unused (a zero gradient): not an error here.
  auto f = function(inputs, outputs, {.on_unused_input = OnUnusedInput::kIgnore});
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return {};
  auto out = (*f)(std::move(args));
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_EVAL_H_
