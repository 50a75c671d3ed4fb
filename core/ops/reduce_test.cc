#include "core/ops/reduce.h"

#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

Axes ParseAxes(const std::string& text) {
  if (text == "None") return Axes();
  std::vector<int> axes;
  for (const auto& a : absl::StrSplit(text, ',')) axes.push_back(std::stoi(std::string(a)));
  return Axes(axes);
}

Var Build(const std::string& fn, const Var& x, const Axes& axes, bool keepdims) {
  if (fn == "sum") return sum(x, axes, keepdims);
  if (fn == "prod") return prod(x, axes, keepdims);
  if (fn == "max") return max(x, axes, keepdims);
  if (fn == "min") return min(x, axes, keepdims);
  if (fn == "all") return all(x, axes, keepdims);
  if (fn == "any") return any(x, axes, keepdims);
  if (fn == "mean") return mean(x, axes, keepdims);
  if (fn == "var") return var(x, axes, keepdims);
  if (fn == "std") return std(x, axes, keepdims);
  if (fn == "argmax") return argmax(x, axes, keepdims);
  if (fn == "argmin") return argmin(x, axes, keepdims);
  const std::optional<int> axis = axes.axes ? std::optional((*axes.axes)[0]) : std::nullopt;
  return fn == "cumsum" ? cumsum(x, axis) : cumprod(x, axis);
}

// Every case of tests/golden/numpy_reduce.txt: dtype, shape and values against NumPy.
TEST(ReduceTest, MatchesNumPy) {
  for (const auto& c : testing::ReadCases("tests/golden/numpy_reduce.txt")) {
    ASSERT_EQ(c.size(), 10u);
    SCOPED_TRACE(absl::StrJoin(c, "|"));
    Tensor arg = testing::MakeTensor(c[3], c[4], c[5]);
    if (c[6] == "T") arg = testing::NonContiguous(arg);
    Var x = tensor(arg.dtype(), StaticShape(arg.ndim()), "x");
    Var out = Build(c[0], x, ParseAxes(c[1]), c[2] == "1");
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(DTypeName(out.dtype()), c[7]);
    auto f = function({x}, {out});
    ASSERT_TRUE(f.ok()) << f.status();
    auto result = (*f)({arg});
    ASSERT_TRUE(result.ok()) << result.status();
    const Tensor& r = (*result)[0];
    EXPECT_EQ(DTypeName(r.dtype()), c[7]);
    EXPECT_EQ(r.shape(), testing::ParseShape(c[8]));
    const std::vector<double> expected = testing::ParseValues(c[9]);
    ASSERT_EQ(r.size(), static_cast<int64_t>(expected.size()));
    const double rtol = r.dtype() == DType::kFloat32 ? 1e-6 : 1e-14;
    for (size_t i = 0; i < expected.size(); ++i) {
      const double got = r.ElementAsDouble(i);
      if (std::isnan(expected[i])) {
        EXPECT_TRUE(std::isnan(got)) << "element " << i;
      } else {
        EXPECT_NEAR(got, expected[i], rtol * std::fabs(expected[i]) + 1e-12) << "element " << i;
      }
    }
  }
}

TEST(ReduceTest, NamesAndTypes) {
  Var m = dmatrix("m");
  EXPECT_EQ(sum(m)->owner()->op().Name(), "Sum{acc_dtype=float64}");
  EXPECT_EQ(sum(m, -1)->owner()->op().Name(), "Sum{axis=[1], acc_dtype=float64}");
  EXPECT_EQ(sum(bmatrix(), 0)->owner()->op().Name(), "Sum{axis=[0], acc_dtype=int64}");
  EXPECT_EQ(sum(bmatrix(), 0)->type()->ToString(), "TensorType(int64, (?,))");
  EXPECT_EQ(sum(fmatrix())->owner()->op().Name(), "Sum{acc_dtype=float64}");
  EXPECT_EQ(sum(fmatrix())->type()->ToString(), "TensorType(float32, ())");
  EXPECT_EQ(prod(m, {0, 1})->owner()->op().Name(), "Prod{mul}{axis=[0, 1], acc_dtype=float64}");
  EXPECT_EQ(max(m, 0)->owner()->op().Name(), "Max{maximum}{0}");
  EXPECT_EQ(min(m)->owner()->op().Name(), "Min{minimum}");
  EXPECT_EQ(all(m, {0, 1})->owner()->op().Name(), "All{0, 1}");
  EXPECT_EQ(any(m)->type()->ToString(), "TensorType(bool, ())");
  EXPECT_EQ(argmax(m, 1)->owner()->op().Name(), "Argmax{axis=(1,)}");
  EXPECT_EQ(argmax(m, 1)->type()->ToString(), "TensorType(int64, (?,))");
  EXPECT_EQ(max_and_argmax(m, 0)[1]->owner()->op().Name(), "MaxAndArgmax{axis=(0,)}");
  EXPECT_EQ(max_and_argmax(m, 0)[0]->name(), "max");
  EXPECT_EQ(cumsum(m)->owner()->op().Name(), "CumOp{None, add}");
  EXPECT_EQ(cumprod(m, -1)->owner()->op().Name(), "CumOp{1, mul}");
  EXPECT_EQ(sum(m, 1, true)->type()->ToString(), "TensorType(float64, (?, 1))");
  EXPECT_EQ(sum(m, 1, true)->owner()->op().Name(), "InplaceDimShuffle{0,x}");
  EXPECT_EQ(sum(tensor(DType::kFloat64, {2, 3}), 0)->type()->ToString(),
            "TensorType(float64, (3,))");
  EXPECT_EQ(mean(ivector())->type()->ToString(), "TensorType(float64, ())");
  EXPECT_EQ(mean(fvector())->type()->ToString(), "TensorType(float32, ())");
  EXPECT_EQ(mean(m)->name(), "mean");
}

TEST(ReduceTest, Errors) {
  Var m = dmatrix("m");
  EXPECT_EQ(sum(m, 2).status().message(),
            "Sum{axis=[2], acc_dtype=?}: axis 2 is out of bounds for array of dimension 2");
  EXPECT_EQ(max(m, {0, 0}).status().message(), "Max{maximum}{0, 0}: repeated axis");
  EXPECT_EQ(argmax(m, 2).status().message(),
            "Computation needs a valid axis number for 2-D tensor. Got 2");
  EXPECT_EQ(max(zvector()).status().message(),
            "Max{maximum}: input 0 has type TensorType(complex128, (?,)), which has no order");
  EXPECT_EQ(cumsum(m, 3).status().message(), "axis(=3) out of bounds");
  auto f = function({m}, {max(m, 0)});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)({Tensor::Zeros(DType::kFloat64, {0, 3})}).status().message(),
            "Max{maximum}{0}: zero-size array to reduction operation maximum which has no "
            "identity");
}

TEST(ReduceTest, SumOfInt8AccumulatesInInt64) {
  Var b = bvector("b");
  auto f = function({b}, {sum(b)});
  ASSERT_TRUE(f.ok());
  auto out = (*f)({*Tensor::Of<int64_t>(DType::kInt8, {3}, {100, 100, 100})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].ToString(), "300");
}

// Contiguous float sums are NumPy's pairwise sums, bit for bit: sum(1/k, k = 1..10^4) is
// 9.787606036044384 there, 9.787606036044348 summed in order. Max and min over eight lanes
// give the same answer as in order, at any stride.
TEST(ReduceTest, FloatSumsArePairwiseAsNumPy) {
  std::vector<double> values(10000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 1.0 / static_cast<double>(i + 1);
  Tensor x = *Tensor::FromValues<double>(DType::kFloat64, {10000}, values);
  Var v = dvector("v");
  auto f =
      function({v}, {sum(v), max(v), min(subtensor(v, {Slice{std::nullopt, std::nullopt, -3}}))});
  ASSERT_TRUE(f.ok()) << f.status();
  auto out = (*f)({x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ElementAsDouble(0), 9.787606036044384);
  EXPECT_EQ((*out)[1].ElementAsDouble(0), 1.0);
  EXPECT_EQ((*out)[2].ElementAsDouble(0), 1.0 / 10000);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// MaxAndArgmax and Argmax are two declared ops: from the wire each is the builder's op, its
// attribute text unchanged ("axis" as ints), and an axis out of range or an unknown attribute
// is refused.
TEST(ReduceTest, MaxAndArgmaxAndArgmaxAreDeclaredOps) {
  Var m = dmatrix("m");
  const Var max_value = max_and_argmax(m, 1)[0], index_value = argmax(m, 1);
  const Op& both = max_value->owner()->op();
  const Op& index = index_value->owner()->op();
  EXPECT_EQ(both.Attrs().Text(), index.Attrs().Text());
  EXPECT_FALSE(both == index);
  for (const Op* op : {&both, &index}) {
    absl::StatusOr<OpPtr> again = MakeOp(std::string(op->type_name()), op->Attrs());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(**again == *op) << op->Name();
  }
  EXPECT_FALSE(MakeOp("Argmax", {{"axis", std::vector<int64_t>{70}}}).ok());
  EXPECT_EQ(MakeOp("MaxAndArgmax", {{"axes", std::vector<int64_t>{0}}}).status().message(),
            "MaxAndArgmax: unknown attribute 'axes'");
  absl::StatusOr<OpPtr> three = MakeOp("Argmax", {{"axis", std::vector<int64_t>{2}}});
  ASSERT_TRUE(three.ok());
  EXPECT_EQ((*three)->MakeNode({m.ptr()}).status().message(),
            "Computation needs a valid axis number for 2-D tensor. Got 2");
}

}  // namespace
}  // namespace kiln
