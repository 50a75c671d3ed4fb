#include "core/ops/diagonal_subtensor.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_join.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

Tensor Int64(int64_t v) { return *Tensor::Of<int64_t>(DType::kInt64, {}, {v}); }

// Every case of tests/golden/aesara_diagonal_subtensor.txt (Aesara 2.9.4's own outputs), with
// the axes as run-time inputs and as constants; the inferred shapes match the values'.
TEST(DiagonalSubtensorTest, MatchesAesara) {
  const auto cases = testing::ReadCases("tests/golden/aesara_diagonal_subtensor.txt");
  ASSERT_GE(cases.size(), 10u);
  for (const auto& c : cases) {
    ASSERT_EQ(c.size(), 9u);
    SCOPED_TRACE(absl::StrJoin(c, "|"));
    // x = arange(size) + 1, amt = arange(size) * 0.5 - 1, as the generator made them.
    const Shape x_shape = testing::ParseShape(c[1]);
    std::vector<double> xs(ShapeSize(x_shape)), as;
    for (size_t k = 0; k < xs.size(); ++k) xs[k] = static_cast<double>(k) + 1;
    const Tensor x_value = *Tensor::FromValues<double>(*ParseDType(c[0]), x_shape, xs);
    const Shape amt_shape = testing::ParseShape(c[5]);
    as.resize(ShapeSize(amt_shape));
    for (size_t k = 0; k < as.size(); ++k) as[k] = static_cast<double>(k) * 0.5 - 1;
    const Tensor amt_value = *Tensor::FromValues<double>(*ParseDType(c[4]), amt_shape, as);
    const int64_t a0 = std::stoll(c[2]), a1 = std::stoll(c[3]);
    const Var x = tensor(x_value.dtype(), StaticShape(x_value.ndim()), "x");
    const Var amt = tensor(amt_value.dtype(), StaticShape(amt_value.ndim()), "amt");
    for (bool constant_axes : {false, true}) {
      SCOPED_TRACE(constant_axes ? "constant axes" : "axes as inputs");
      const Var i0 = constant_axes ? constant(a0) : lscalar("i0");
      const Var i1 = constant_axes ? constant(a1) : lscalar("i1");
      const Var y = diagonal_subtensor(x, i0, i1);
      const Var z = inc_diagonal_subtensor(x, i0, i1, amt);
      ASSERT_TRUE(y.ok()) << y.status();
      ASSERT_TRUE(z.ok()) << z.status();
      absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(y);
      ASSERT_TRUE(dims.ok()) << dims.status();
      std::vector<Var> outputs = {y, z};
      for (const VariablePtr& d : *dims) outputs.push_back(d);
      std::vector<Var> inputs = {x, amt};
      std::vector<Tensor> values = {x_value, amt_value};
      if (!constant_axes) {
        inputs.insert(inputs.end(), {i0, i1});
        values.insert(values.end(), {Int64(a0), Int64(a1)});
      }
      auto f = function(inputs, outputs);
      ASSERT_TRUE(f.ok()) << f.status();
      auto result = (*f)(values);
      ASSERT_TRUE(result.ok()) << result.status();
      const Tensor& yv = (*result)[0];
      const Tensor& zv = (*result)[1];
      EXPECT_EQ(yv.dtype(), x_value.dtype());
      EXPECT_EQ(yv.shape(), testing::ParseShape(c[6]));
      EXPECT_EQ(testing::Elements(yv), testing::ParseValues(c[7]));
      EXPECT_EQ(zv.shape(), x_value.shape());
      EXPECT_EQ(testing::Elements(zv), testing::ParseValues(c[8]));
      for (int d = 0; d < yv.ndim(); ++d) EXPECT_EQ(ScalarInt((*result)[2 + d]), yv.shape()[d]);
    }
  }
}

TEST(DiagonalSubtensorTest, NamesTypesAndWireAttributes) {
  const Var x = dtensor3("x"), i0 = lscalar("i0"), i1 = lscalar("i1");
  const Var y = diagonal_subtensor(x, i0, i1);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->owner()->op().Name(), "DiagonalSubtensor");
  EXPECT_EQ(y->type()->ToString(), "TensorType(float64, (?, ?, ?))");
  // Aesara's output type keeps x's dims of static size 1 only.
  const Var s = diagonal_subtensor(tensor(DType::kFloat32, {4, 1, 3}), i0, i1);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->type()->ToString(), "TensorType(float32, (?, 1, ?))");
  const Var z = inc_diagonal_subtensor(tensor(DType::kFloat32, {4, 1, 3}), i0, i1, fscalar());
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->owner()->op().Name(), "IncDiagonalSubtensor");
  EXPECT_EQ(z->type()->ToString(), "TensorType(float32, (4, 1, 3))");
  for (const char* name : {"DiagonalSubtensor", "IncDiagonalSubtensor"}) {
    absl::StatusOr<OpPtr> plain = MakeOp(name, {});
    absl::StatusOr<OpPtr> inplace = MakeOp(name, {{"inplace", true}});
    ASSERT_TRUE(plain.ok()) << plain.status();
    ASSERT_TRUE(inplace.ok()) << inplace.status();
    EXPECT_EQ((*inplace)->Name(), absl::StrCat(name, "{inplace}"));
    EXPECT_FALSE(**plain == **inplace);
    absl::StatusOr<OpPtr> again = MakeOp(name, (*inplace)->Attrs());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(**again == **inplace);
    EXPECT_EQ((*again)->Hash(), (*inplace)->Hash());
  }
  EXPECT_EQ((*MakeOp("DiagonalSubtensor", {{"inplace", true}}))->view_map(),
            (std::vector<std::pair<int, int>>{{0, 0}}));
  EXPECT_EQ((*MakeOp("IncDiagonalSubtensor", {{"inplace", true}}))->destroy_map(),
            (std::vector<std::pair<int, int>>{{0, 0}}));
  EXPECT_TRUE((*MakeOp("DiagonalSubtensor", {}))->view_map().empty());
  // Only x (and amt) are connected to the output.
  EXPECT_EQ(y->owner()->op().ConnectionPattern(*y->owner()),
            (std::vector<std::vector<bool>>{{true}, {false}, {false}}));
  EXPECT_EQ(z->owner()->op().ConnectionPattern(*z->owner()),
            (std::vector<std::vector<bool>>{{true}, {false}, {false}, {true}}));
}

TEST(DiagonalSubtensorTest, Errors) {
  const Var x = dmatrix("x"), i = lscalar("i");
  EXPECT_EQ(diagonal_subtensor(x, dscalar("f"), i).status().message(),
            "DiagonalSubtensor: input 1 (i0) has type TensorType(float64, ()) but must be an "
            "integer scalar (an axis of x)");
  EXPECT_EQ(diagonal_subtensor(x, i, lvector("v")).status().message(),
            "DiagonalSubtensor: input 2 (i1) has type TensorType(int64, (?,)) but must be an "
            "integer scalar (an axis of x)");
  EXPECT_EQ(inc_diagonal_subtensor(imatrix("m"), i, i, dscalar("a")).status().message(),
            "IncDiagonalSubtensor: input 3 (amt) has type TensorType(float64, ()) but input 0 (x) "
            "has TensorType(int32, (?, ?)): float64 cannot be added into int32 in place (NumPy's "
            "same_kind casting)");
  EXPECT_EQ(inc_diagonal_subtensor(x, i, i, dtensor3("a")).status().message(),
            "IncDiagonalSubtensor: input 3 (amt) has type TensorType(float64, (?, ?, ?)) but "
            "input 0 (x) has TensorType(float64, (?, ?)): amt has more dimensions than x");
  EXPECT_EQ(diagonal_subtensor(x, disconnected_type(), i).status().message(),
            "DiagonalSubtensor: input 1 (i0) has type DisconnectedType, which is not a "
            "TensorType");
  EXPECT_EQ(ApplyOp(std::make_shared<DiagonalSubtensor>(), {x}).status().message(),
            "DiagonalSubtensor: expects 3 inputs (x, i0, i1)");
  EXPECT_EQ(MakeOp("DiagonalSubtensor", {{"axis", int64_t{1}}}).status().message(),
            "DiagonalSubtensor: unknown attribute 'axis'");

  // At run time: an axis out of range, a stripe that cannot cross, amt of the wrong shape.
  const Var i0 = lscalar("i0"), i1 = lscalar("i1"), amt = dmatrix("amt");
  auto f = function({x, i0, i1}, {diagonal_subtensor(x, i0, i1)});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor m = Tensor::Zeros(DType::kFloat64, {3, 4});
  EXPECT_EQ((*f)({m, Int64(2), Int64(1)}).status().message(),
            "DiagonalSubtensor: input 1 (i0) is 2, out of range for input 0 (x) of shape (3, 4)");
  EXPECT_EQ((*f)({m, Int64(0), Int64(-3)}).status().message(),
            "DiagonalSubtensor: input 2 (i1) is -3, out of range for input 0 (x) of shape (3, 4)");
  EXPECT_EQ((*f)({m, Int64(0), Int64(1)}).status().message(),
            "DiagonalSubtensor: input 0 (x) has shape (3, 4): its length along i0=0 (3) is less "
            "than its length along i1=1 (4), so the diagonal stripe does not cross it");
  EXPECT_TRUE((*f)({m, Int64(1), Int64(0)}).ok());
  auto g = function({x, i0, i1, amt}, {inc_diagonal_subtensor(x, i0, i1, amt)});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(
      (*g)({m, Int64(1), Int64(0), Tensor::Zeros(DType::kFloat64, {3, 3})}).status().message(),
      "IncDiagonalSubtensor: input 3 (amt) has shape (3, 3), which does not broadcast to "
      "the diagonal stripe's shape (3, 2)");
}

// Each op's gradient is the other one: finite differences on x and amt.
TEST(DiagonalSubtensorTest, GradientMatchesFiniteDifferences) {
  for (const auto& [shape, a0, a1] : std::vector<std::tuple<Shape, int64_t, int64_t>>{
           {{5, 3}, 0, 1}, {{2, 3, 4}, 2, 1}, {{4, 2, 2}, 0, -1}}) {
    SCOPED_TRACE(ShapeToString(shape));
    std::vector<double> xs(ShapeSize(shape));
    for (size_t k = 0; k < xs.size(); ++k) xs[k] = 0.3 * static_cast<double>(k) - 1.1;
    const Tensor x = *Tensor::FromValues<double>(DType::kFloat64, shape, xs);
    const auto diag = [a0 = a0, a1 = a1](const std::vector<Var>& in) {
      return diagonal_subtensor(in[0], constant(a0), constant(a1));
    };
    absl::Status s = verify_grad(diag, {x});
    EXPECT_TRUE(s.ok()) << s;
    // The stripe's shape, for amt.
    const Var xv = tensor(DType::kFloat64, StaticShape(shape.size()));
    auto f = function({xv}, {diag({xv})});
    ASSERT_TRUE(f.ok()) << f.status();
    const Shape stripe = (*f)({x})->at(0).shape();
    std::vector<double> as(ShapeSize(stripe));
    for (size_t k = 0; k < as.size(); ++k) as[k] = 0.7 - 0.2 * static_cast<double>(k);
    const Tensor amt = *Tensor::FromValues<double>(DType::kFloat64, stripe, as);
    s = verify_grad(
        [a0 = a0, a1 = a1](const std::vector<Var>& in) {
          return inc_diagonal_subtensor(in[0], constant(a0), constant(a1), in[1]);
        },
        {x, amt});
    EXPECT_TRUE(s.ok()) << s;
  }
}

// Hostile sizes are refused before allocating: the stripe of a broadcast view of 2^50 elements
// (past kMaxTensorBytes), given to each kernel directly.
TEST(DiagonalSubtensorTest, HugeOutputIsRefused) {
  const Var x = dtensor3("x");
  const Var y = diagonal_subtensor(x, constant(int64_t{0}), constant(int64_t{1}));
  const Var z = inc_diagonal_subtensor(x, constant(int64_t{0}), constant(int64_t{1}), dscalar());
  ASSERT_TRUE(y.ok() && z.ok());
  const Tensor one = *Tensor::Of<double>(DType::kFloat64, {}, {1.0});
  const Tensor huge = *one.BroadcastTo({int64_t{1} << 24, 4, int64_t{1} << 24});
  std::vector<Tensor> out(1);
  const std::vector<Tensor> yin = {huge, Int64(0), Int64(1)};
  absl::Status s = y->owner()->op().Perform(*y->owner(), yin, out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("DiagonalSubtensor"), std::string::npos) << s;
  const std::vector<Tensor> zin = {huge, Int64(0), Int64(1), one};
  s = z->owner()->op().Perform(*z->owner(), zin, out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("IncDiagonalSubtensor"), std::string::npos) << s;
}

}  // namespace
}  // namespace kiln
