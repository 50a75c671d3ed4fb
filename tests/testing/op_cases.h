// Checking ops against a reference file of cases, one a line:
// "<op name>|in|<dtype>|<shape>|<values>|...|out|<dtype>|<shape>|<values>|..." (written by the
// tests/golden/gen_*_cases.py scripts). Each case's op, found by its printed name, is applied to
// symbolic inputs of the values' dtypes and ranks; its output dtypes and ranks, its values (from
// contiguous and from strided inputs) and its inferred shapes are checked.
#ifndef KILN_TESTS_TESTING_OP_CASES_H_
#define KILN_TESTS_TESTING_OP_CASES_H_

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "tests/testing/numpy_cases.h"

namespace kiln::testing {

// One line of a reference file: the op it names, its input values and its expected outputs.
struct OpCase {
  std::string name;
  OpPtr op;
  std::vector<Tensor> in, want;
  // Inputs typed with their size-1 dims static (BroadcastableShape), as ops that broadcast need;
  // otherwise every dim unknown.
  bool broadcastable = false;
};

// Checks output `i` of a case: `got` against c.want[i] within the test's tolerance.
using CompareOutput = std::function<void(const OpCase& c, size_t i, const Tensor& got)>;

// Runs one case (an ASSERT failure ends only this case); `done` is set when it ran to the end.
inline void CheckOpCase(const OpCase& c, const CompareOutput& compare, bool& done) {
  std::vector<Var> args;
  for (const Tensor& t : c.in) {
    args.push_back(
        tensor(t.dtype(), c.broadcastable ? BroadcastableShape(t) : StaticShape(t.ndim())));
  }
  const Var y = ApplyOp(c.op, args);
  ASSERT_TRUE(y.ok()) << y.status();
  const auto& outs = y->owner()->outputs();
  ASSERT_EQ(outs.size(), c.want.size());
  std::vector<Var> fetched;
  for (size_t i = 0; i < outs.size(); ++i) {
    EXPECT_EQ(outs[i]->tensor_type()->dtype(), c.want[i].dtype()) << "output " << i;
    EXPECT_EQ(outs[i]->tensor_type()->ndim(), c.want[i].ndim()) << "output " << i;
    fetched.push_back(outs[i]);
  }
  std::vector<size_t> dims_of;  // the output each inferred dim belongs to
  for (size_t i = 0; i < outs.size(); ++i) {
    absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(Var(outs[i]));
    ASSERT_TRUE(dims.ok()) << dims.status();
    for (const VariablePtr& d : *dims) {
      fetched.push_back(d);
      dims_of.push_back(i);
    }
  }
  auto f = function(args, fetched);
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<Tensor> strided;
  for (const Tensor& t : c.in) strided.push_back(t.ndim() == 0 ? t : NonContiguous(t));
  for (const auto& inputs : {c.in, strided}) {
    auto result = (*f)(inputs);
    ASSERT_TRUE(result.ok()) << result.status();
    for (size_t i = 0; i < c.want.size(); ++i) {
      SCOPED_TRACE(absl::StrCat("output ", i));
      ASSERT_EQ((*result)[i].shape(), c.want[i].shape());
      compare(c, i, (*result)[i]);
    }
    std::vector<size_t> seen(c.want.size(), 0);
    for (size_t d = 0; d < dims_of.size(); ++d) {
      const size_t i = dims_of[d];
      EXPECT_EQ(ScalarInt((*result)[c.want.size() + d]), c.want[i].shape()[seen[i]++])
          << "inferred dim of output " << i;
    }
  }
  done = true;
}

// Runs every case of the reference file at `path` whose op is among `candidates` (a case naming
// no candidate fails); returns how many ran to the end.
inline int CheckOpCases(const std::string& path, const std::vector<OpPtr>& candidates,
                        const CompareOutput& compare) {
  int checked = 0;
  for (const auto& fields : ReadCases(path)) {
    SCOPED_TRACE(absl::StrJoin(fields, "|").substr(0, 200));
    OpCase c{.name = fields[0]};
    for (const OpPtr& o : candidates) {
      if (o->Name() == c.name) c.op = o;
    }
    EXPECT_NE(c.op, nullptr) << "no op is named " << c.name;
    if (c.op == nullptr) continue;
    for (size_t f = 1; f + 3 < fields.size() + 1; f += 4) {
      (fields[f] == "in" ? c.in : c.want)
          .push_back(MakeTensor(fields[f + 1], fields[f + 2], fields[f + 3]));
    }
    bool done = false;
    CheckOpCase(c, compare, done);
    checked += done;
  }
  return checked;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_OP_CASES_H_
