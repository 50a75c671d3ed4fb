#include "core/ops/repeat.h"

#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

std::optional<int> AxisOf(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return std::stoi(text);
}

// Every case of tests/golden/numpy_repeat.txt against numpy.repeat, through repeat() (scalar
// counts build Aesara's alloc and reshape) and through the Repeat op itself, made by the registry
// from its wire attributes; the inferred shape matches the value's.
TEST(RepeatTest, MatchesNumPy) {
  for (const auto& c : testing::ReadCases("tests/golden/numpy_repeat.txt")) {
    ASSERT_EQ(c.size(), 9u);
    SCOPED_TRACE(absl::StrJoin(c, "|"));
    const Tensor xv = testing::MakeTensor(c[1], c[2], c[3]);
    const Tensor rv = testing::MakeTensor("int64", c[4], c[5]);
    const Var x = tensor(xv.dtype(), StaticShape(xv.ndim()), "x");
    const Var r = tensor(DType::kInt64, StaticShape(rv.ndim()), "r");
    OpAttrs attrs;
    if (AxisOf(c[0])) attrs.Set("axis", int64_t{*AxisOf(c[0])});
    absl::StatusOr<OpPtr> op = MakeOp("Repeat", attrs);
    ASSERT_TRUE(op.ok()) << op.status();
    for (const Var& out : {repeat(x, r, AxisOf(c[0])), ApplyOp(*op, {x, r})}) {
      ASSERT_TRUE(out.ok()) << out.status();
      absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(out);
      ASSERT_TRUE(dims.ok()) << dims.status();
      std::vector<Var> outputs = {out};
      for (const VariablePtr& d : *dims) outputs.push_back(d);
      auto f = function({x, r}, outputs);
      ASSERT_TRUE(f.ok()) << f.status();
      auto result = (*f)({xv, rv});
      ASSERT_TRUE(result.ok()) << result.status();
      const Tensor& y = (*result)[0];
      EXPECT_EQ(DTypeName(y.dtype()), c[6]);
      EXPECT_EQ(y.shape(), testing::ParseShape(c[7]));
      EXPECT_EQ(testing::Elements(y), testing::ParseValues(c[8]));
      for (int d = 0; d < y.ndim(); ++d) EXPECT_EQ(ScalarInt((*result)[1 + d]), y.shape()[d]);
    }
  }
}

TEST(RepeatTest, NamesTypesAndWireAttributes) {
  const Var m = dmatrix("m"), r = lvector("r");
  const Var y = repeat(m, r, 1);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->owner()->op().Name(), "Repeat{axis=1}");
  EXPECT_EQ(y->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(repeat(m, r)->owner()->op().Name(), "Repeat{axis=None}");
  EXPECT_EQ(repeat(m, r)->type()->ToString(), "TensorType(float64, (?,))");
  // Aesara keeps only broadcastable dims static; the repeated one is unknown.
  EXPECT_EQ(repeat(tensor(DType::kFloat32, {1, 3}), r, 1)->type()->ToString(),
            "TensorType(float32, (1, ?))");
  // A scalar count is Aesara's alloc and reshape.
  EXPECT_EQ(repeat(dvector("x"), constant(int64_t{3}))->owner()->op().Name(), "Reshape{1}");
  // One identity: equal attributes are equal ops, whichever way they were made.
  const Op& op = y->owner()->op();
  absl::StatusOr<OpPtr> again = MakeOp(op.type_name(), op.Attrs());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == op);
  EXPECT_EQ((*again)->Hash(), op.Hash());
  EXPECT_FALSE(*repeat(m, r)->owner()->op_ptr() == op);
  EXPECT_EQ(op.Key(), "Repeat{axis=i1;}");
  EXPECT_EQ(repeat(m, r)->owner()->op().Key(), "Repeat{}");
}

TEST(RepeatTest, Errors) {
  const Var m = dmatrix("m");
  EXPECT_EQ(repeat(m, dvector("d")).status().message(),
            "repeat: repeats has type TensorType(float64, (?,)) but an integer is needed");
  EXPECT_EQ(repeat(m, lmatrix("r")).status().message(),
            "repeat: repeats has type TensorType(int64, (?, ?)) but the dimension of repeats "
            "should not exceed 1");
  EXPECT_EQ(repeat(m, lvector("r"), 2).status().message(),
            "Repeat{axis=2}: input 0 has type TensorType(float64, (?, ?)), which has no axis 2");
  EXPECT_EQ(repeat(m, tensor(DType::kUInt64, {std::nullopt})).status().message(),
            "Repeat{axis=None}: input 1 (repeats) has type TensorType(uint64, (?,)) but an "
            "integer scalar or vector other than uint64 is needed");
  EXPECT_EQ(MakeOp("Repeat", {{"axis", std::string("x")}}).status().message(),
            "Repeat: attribute 'axis' must be an integer");
  EXPECT_EQ(MakeOp("Repeat", {{"axis", int64_t{1000}}}).status().message(),
            "Repeat: attribute 'axis' is out of range: 1000");
  EXPECT_EQ(MakeOp("Repeat", {{"axis", int64_t{0}}, {"axes", int64_t{1}}}).status().message(),
            "Repeat: unknown attribute 'axes'");
  EXPECT_EQ(MakeOp("NoSuchOp", {}).status().message(), "unknown op 'NoSuchOp'");

  const Var r = lvector("r");
  auto f = function({m, r}, {repeat(m, r, 0)});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor mv = Tensor::Zeros(DType::kFloat64, {2, 3});
  auto counts = [](std::vector<int64_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return *Tensor::FromValues<int64_t>(DType::kInt64, {n}, v);
  };
  EXPECT_EQ((*f)({mv, counts({1, 2, 3})}).status().message(),
            "Repeat{axis=0}: repeats has 3 entries but axis 0 of x has 2");
  EXPECT_EQ((*f)({mv, counts({1, -1})}).status().message(),
            "Repeat{axis=0}: repeats may not contain negative values");
  // A count that would need more memory than any tensor may have is refused before allocating.
  const absl::Status huge = (*f)({mv, counts({int64_t{1} << 62, int64_t{1} << 62})}).status();
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument) << huge;
}

// Finite differences: x's gradient sums gz over each element's copies, for every axis.
TEST(RepeatTest, GradientMatchesFiniteDifferences) {
  const Tensor xv = testing::MakeTensor("float64", "2x3", "0.5,-1.0,2.0,3.5,0.25,-2.0");
  for (std::optional<int> axis : {std::optional<int>(), std::optional<int>(0),
                                  std::optional<int>(1), std::optional<int>(-1)}) {
    SCOPED_TRACE(axis ? *axis : 99);
    const std::vector<int64_t> n = {!axis ? 6 : (*axis == 0 ? 2 : 3)};
    std::vector<int64_t> counts = {2, 0, 3, 1, 1, 2};
    counts.resize(n[0]);
    const Var r = constant(*Tensor::FromValues<int64_t>(DType::kInt64, {n[0]}, counts));
    EXPECT_TRUE(
        verify_grad([&](const std::vector<Var>& in) { return repeat(in[0], r, axis); }, {xv}).ok());
    EXPECT_TRUE(verify_grad(
                    [&](const std::vector<Var>& in) {
                      return ApplyOp(std::make_shared<Repeat>(RepeatAttrs{axis}),
                                     {in[0], constant(int64_t{2})});
                    },
                    {xv})
                    .ok());
  }
}

}  // namespace
}  // namespace kiln
