#include "core/ops/assert_op.h"

#include <gtest/gtest.h>

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

// Aesara's bincount(x, assert_nonneg=True) check: x itself, Assert{msg=...}(x, all(x >= 0)).
Var NonNegative(const Var& x) {
  return assert_op(x, {all(x >= int64_t{0})}, "Input to bincount has negative values!");
}

TEST(AssertTest, NamesTypesShapesAndWireAttributes) {
  const Var x = lvector("x");
  const Var y = NonNegative(x);
  ASSERT_TRUE(y.ok()) << y.status();
  const Op& op = y->owner()->op();
  EXPECT_EQ(op.Name(), "Assert{msg=Input to bincount has negative values!}");
  EXPECT_EQ(y->type()->ToString(), "TensorType(int64, (?,))");
  EXPECT_EQ(assert_op(dmatrix("m"), {})->owner()->op().Name(), "Assert{msg=Aesara Assert failed!}");
  EXPECT_EQ(assert_op(tensor(DType::kFloat32, {1, 3}), {constant(true)})->type()->ToString(),
            "TensorType(float32, (1, 3))");
  absl::StatusOr<OpPtr> again = MakeOp(op.type_name(), op.Attrs());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == op);
  EXPECT_EQ((*again)->Hash(), op.Hash());
  EXPECT_FALSE(*assert_op(x, {constant(true)}, "other")->owner()->op_ptr() == op);
  absl::StatusOr<ShapeVars> dims = infer_shape(y);
  ASSERT_TRUE(dims.ok()) << dims.status();
  ASSERT_EQ(dims->size(), 1u);
  auto f = function({x}, {y, Var((*dims)[0])});
  ASSERT_TRUE(f.ok()) << f.status();
  auto r = (*f)({*Tensor::Of<int64_t>(DType::kInt64, {4}, {0, 3, 1, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(testing::Elements((*r)[0]), (std::vector<double>{0, 3, 1, 1}));
  EXPECT_EQ(ScalarInt((*r)[1]), 4);
}

// Every condition is checked: each false one raises the message, NaN counts as true (NumPy's
// truth), and a value that passes comes back unchanged.
TEST(AssertTest, ChecksEveryCondition) {
  const Var x = dvector("x"), a = dscalar("a"), b = bscalar("b");
  auto f = function({x, a, b}, {assert_op(x, {a, b}, "no")});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor xv = *Tensor::Of<double>(DType::kFloat64, {2}, {1.5, -2});
  auto scalar = [](double v) { return *Tensor::Of<double>(DType::kFloat64, {}, {v}); };
  auto flag = [](int8_t v) {
    return Tensor::Of<double>(DType::kFloat64, {}, {static_cast<double>(v)})->AsType(DType::kInt8);
  };
  auto ok = (*f)({xv, scalar(2), flag(1)});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(testing::Elements((*ok)[0]), (std::vector<double>{1.5, -2}));
  EXPECT_TRUE((*f)({xv, scalar(std::nan("")), flag(-3)}).ok());
  for (const auto& [av, bv] : std::vector<std::pair<double, int8_t>>{{0, 1}, {1, 0}, {0, 0}}) {
    const absl::Status s = (*f)({xv, scalar(av), flag(bv)}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), "Assert{msg=no}: no");
  }
  auto g = function({x}, {NonNegative(cast(x, DType::kInt64))});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)({xv}).status().message(),
            "Assert{msg=Input to bincount has negative values!}: Input to bincount has negative "
            "values!");
}

// The gradient passes through to x (finite differences); the conditions are disconnected.
TEST(AssertTest, GradientPassesThrough) {
  const Tensor xv = testing::MakeTensor("float64", "2x3", "0.5,-1.0,2.0,3.5,0.25,-2.0");
  EXPECT_TRUE(verify_grad(
                  [](const std::vector<Var>& in) {
                    return assert_op(in[0] * in[0], {all(abs(in[0]) < 10.0)}, "big");
                  },
                  {xv})
                  .ok());
  const Var x = dscalar("x");
  const Var y = assert_op(x * 2.0, {x > 0.0});
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->owner()->op().ConnectionPattern(*y->owner()),
            (std::vector<std::vector<bool>>{{true}, {false}}));
  auto f = function({x}, {grad(y, x)});
  ASSERT_TRUE(f.ok()) << f.status();
  auto r = (*f)({*Tensor::Of<double>(DType::kFloat64, {}, {3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ElementAsDouble(0), 2.0);
}

TEST(AssertTest, Errors) {
  const Var x = dvector("x");
  EXPECT_EQ(assert_op(x, {dvector("c")}, "m").status().message(),
            "Assert{msg=m}: input 1 (a condition) has type TensorType(float64, (?,)) but a real "
            "or boolean scalar is needed");
  EXPECT_EQ(assert_op(x, {zscalar("c")}, "m").status().message(),
            "Assert{msg=m}: input 1 (a condition) has type TensorType(complex128, ()) but a real "
            "or boolean scalar is needed");
  EXPECT_EQ(ApplyOp(std::make_shared<Assert>(AssertAttrs{}), {}).status().message(),
            "Assert{msg=Aesara Assert failed!}: expects a value and its conditions, got no input");
  EXPECT_EQ(MakeOp("Assert", {{"msg", std::string(5000, 'a')}}).status().message(),
            "Assert: attribute 'msg' has 5000 bytes; at most 4096 are allowed");
}

}  // namespace
}  // namespace kiln
