// Helpers shared by the pooling ops' tests (core/ops/pool_test.cc, max_pool_rop_test.cc): the
// golden files' integer lists and the pooling ops made from their props, as from the wire.
#ifndef KILN_TESTS_TESTING_POOL_CASES_H_
#define KILN_TESTS_TESTING_POOL_CASES_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"

namespace kiln::testing {

// "2,3" -> {2, 3}: a ws, stride or pad field of the golden files.
inline std::vector<int64_t> Ints(const std::string& text) {
  std::vector<int64_t> out;
  for (const auto& v : absl::StrSplit(text, ',')) out.push_back(std::stoll(std::string(v)));
  return out;
}

// An int64 vector tensor of `v`.
inline Tensor IntTensor(const std::vector<int64_t>& v) {
  return *Tensor::FromValues<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

// An int64 vector constant of `v`: a ws, stride or pad input.
inline Var IntConst(const std::vector<int64_t>& v) { return constant(IntTensor(v)); }

// The props of the pooling ops (Pool, MaxPoolGrad, MaxPoolRop, ...).
inline OpAttrs PoolOpAttrs(bool ignore_border, const std::string& mode, int ndim) {
  OpAttrs a;
  a.Set("ignore_border", int64_t{ignore_border});
  a.Set("mode", mode);
  a.Set("ndim", int64_t{ndim});
  return a;
}

// The pooling op `name` with these props, made by the registry as from the wire.
inline OpPtr PoolOp(const std::string& name, bool ignore_border, const std::string& mode,
                    int ndim) {
  absl::StatusOr<OpPtr> op = MakeOp(name, PoolOpAttrs(ignore_border, mode, ndim));
  EXPECT_TRUE(op.ok()) << op.status();
  return *op;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_POOL_CASES_H_
