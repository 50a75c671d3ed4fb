#include "core/ops/bartlett.h"

#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

// Every case of tests/golden/numpy_bartlett.txt against numpy.bartlett, bit for bit, with the
// inferred length equal to the value's.
TEST(BartlettTest, MatchesNumPy) {
  for (const auto& c : testing::ReadCases("tests/golden/numpy_bartlett.txt")) {
    ASSERT_EQ(c.size(), 5u);
    SCOPED_TRACE(absl::StrJoin(c, "|"));
    const Tensor mv = testing::MakeTensor(c[0], "-", c[1]);
    const Var m = tensor(mv.dtype(), {}, "M");
    const Var w = bartlett(m);
    ASSERT_TRUE(w.ok()) << w.status();
    absl::StatusOr<ShapeVars> dims = infer_shape(w);
    ASSERT_TRUE(dims.ok()) << dims.status();
    auto f = function({m}, {w, Var((*dims)[0])});
    ASSERT_TRUE(f.ok()) << f.status();
    auto r = (*f)({mv});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(DTypeName((*r)[0].dtype()), c[2]);
    EXPECT_EQ((*r)[0].shape(), testing::ParseShape(c[3]));
    EXPECT_EQ(testing::Elements((*r)[0]), testing::ParseValues(c[4]));
    EXPECT_EQ(ScalarInt((*r)[1]), (*r)[0].shape()[0]);
  }
}

TEST(BartlettTest, NameTypeAndWireAttributes) {
  const Var w = bartlett(iscalar("M"));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->owner()->op().Name(), "Bartlett");
  EXPECT_EQ(w->type()->ToString(), "TensorType(float64, (?,))");
  absl::StatusOr<OpPtr> again = MakeOp("Bartlett", {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == w->owner()->op());
}

// M only sets the length: its gradient is undefined, as Aesara's None.
TEST(BartlettTest, GradientIsUndefined) {
  const Var m = lscalar("M");
  const Var cost = sum(bartlett(m));
  EXPECT_FALSE(grad(cost, m).ok());
}

TEST(BartlettTest, Errors) {
  EXPECT_EQ(bartlett(dscalar("M")).status().message(),
            "Bartlett: input 0 (M) has type TensorType(float64, ()) but an integer scalar is "
            "needed");
  EXPECT_EQ(bartlett(lvector("M")).status().message(),
            "Bartlett: input 0 (M) has type TensorType(int64, (?,)) but an integer scalar is "
            "needed");
  // Hostile lengths are refused before allocating.
  const Var m = lscalar("M");
  auto f = function({m}, {bartlett(m)});
  ASSERT_TRUE(f.ok()) << f.status();
  const absl::Status huge =
      (*f)({*Tensor::Of<int64_t>(DType::kInt64, {}, {int64_t{1} << 50})}).status();
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument) << huge;
  EXPECT_NE(huge.message().find("Bartlett"), std::string::npos) << huge;
  const Var u = tensor(DType::kUInt64, {}, "U");
  auto g = function({u}, {bartlett(u)});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)({*Tensor::Of<uint64_t>(DType::kUInt64, {}, {~uint64_t{0}})}).status().message(),
            "Bartlett: M = 18446744073709551615 points is too many");
}

}  // namespace
}  // namespace kiln
