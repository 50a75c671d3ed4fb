// Test helpers for rewrites: optimize a graph with chosen options (the verifier after every
// phase), and check that the optimized graph computes the original's values on random inputs.
#ifndef KILN_TESTS_TESTING_REWRITE_CHECK_H_
#define KILN_TESTS_TESTING_REWRITE_CHECK_H_

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/kiln.h"

namespace kiln::testing {

// Random values for an input: positive for names starting with 'p', else in [-2, 2]; unknown
// dims get size 3.
inline Tensor RandomFor(const Var& v, uint64_t seed) {
  Shape shape;
  for (const StaticDim& d : v.type().shape()) shape.push_back(d.value_or(3));
  std::mt19937_64 rng(seed);
  const bool positive = !v->name().empty() && v->name()[0] == 'p';
  std::uniform_real_distribution<double> u(positive ? 0.5 : -2.0, 2.0);
  std::vector<double> values(ShapeSize(shape));
  for (double& e : values) e = u(rng);
  return Tensor::FromValues<double>(DType::kFloat64, shape, values)->AsType(v.dtype());
}

struct Optimized {
  std::unique_ptr<FunctionGraph> fg;
  RewriteReport report;
};

inline Optimized Optimize(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                   RewriteOptions options = {}) {
  std::vector<VariablePtr> ins, outs;
  for (const Var& v : inputs) ins.push_back(v.ptr());
  for (const Var& v : outputs) outs.push_back(v.ptr());
  auto fg = FunctionGraph::Make(ins, outs);
  EXPECT_TRUE(fg.ok()) << fg.status();
  options.verify = true;
  absl::StatusOr<RewriteReport> report = optimize(**fg, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return {std::move(*fg), report.ok() ? *report : RewriteReport{}};
}

inline std::vector<Tensor> Run(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                        const std::vector<Tensor>& args) {
  // An optimized graph may no longer need every input.
  auto f = function(inputs, outputs, {.on_unused_input = OnUnusedInput::kIgnore});
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return {};
  auto r = (*f)(args);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<Tensor>{};
}

// The optimized graph's values equal the original's (within float rounding).
inline void ExpectSameValues(const std::string& name, const std::vector<Var>& inputs,
                      const std::vector<Var>& outputs, const FunctionGraph& fg) {
  std::vector<Tensor> args;
  for (size_t i = 0; i < inputs.size(); ++i) args.push_back(RandomFor(inputs[i], 17 + i));
  const std::vector<Tensor> before = Run(inputs, outputs, args);
  const std::vector<Var> opt_in(fg.inputs().begin(), fg.inputs().end());
  const std::vector<Var> opt_out(fg.outputs().begin(), fg.outputs().end());
  const std::vector<Tensor> after = Run(opt_in, opt_out, args);
  ASSERT_EQ(before.size(), after.size()) << name;
  for (size_t o = 0; o < before.size(); ++o) {
    ASSERT_EQ(before[o].shape(), after[o].shape()) << name;
    const Tensor a = before[o].AsType(DType::kFloat64), b = after[o].AsType(DType::kFloat64);
    for (int64_t i = 0; i < a.size(); ++i) {
      const double x = a.ElementAsDouble(i), y = b.ElementAsDouble(i);
      if ((std::isnan(x) && std::isnan(y)) || x == y) continue;
      EXPECT_NEAR(x, y, 1e-9 * (1 + std::fabs(x))) << name << " output " << o << " element " << i;
    }
  }
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_REWRITE_CHECK_H_
