#include "core/ops/reduce.h"

#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_cat.h"
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

// The reductions over every layout their kernel tells apart (dims of size 1, rows short and
// long, reduced dims leading or trailing, transposed inputs whose dims do not merge), against a
// plain loop over the input in C order: products, maxima and minima to the bit (the NaN of a
// group wins), sums within an ulp or two (pairwise over merged runs, as NumPy's iterator).
TEST(ReduceTest, EveryLayoutFoldsInOrder) {
  const std::vector<Shape> shapes = {{1000, 3}, {3, 1000}, {5, 1, 7}, {1000, 1}, {1, 6},
                                     {2, 3, 4}, {4, 20},   {7},       {}};
  for (const Shape& base : shapes) {
    const int nd = static_cast<int>(base.size());
    for (bool transposed : {false, true}) {
      // The values laid out in `base`, seen as its reverse (a transposed, non-contiguous view).
      Tensor data = Tensor::Empty(DType::kFloat64, base);
      for (int64_t i = 0; i < data.size(); ++i) {
        data.data<double>()[i] = 0.5 + static_cast<double>((i * 7919) % 613) / 97.0;
      }
      if (data.size() > 5) data.data<double>()[5] = -1e300;  // a product overflows to -inf
      Tensor x = data;
      if (transposed) {
        x = data.View(Shape(base.rbegin(), base.rend()),
                      std::vector<int64_t>(data.strides().rbegin(), data.strides().rend()));
      }
      for (int mask = 0; mask < (1 << nd) + 1; ++mask) {
        const bool all_axes = mask == (1 << nd);
        std::vector<int> axes;
        for (int d = 0; d < nd && !all_axes; ++d) {
          if (mask & (1 << d)) axes.push_back(d);
        }
        for (const std::string fn : {"sum", "prod", "max", "min"}) {
          for (bool with_nan : {false, true}) {
            if (with_nan && (fn == "sum" || fn == "prod" || x.size() < 3)) continue;
            SCOPED_TRACE(absl::StrCat(fn, " of ", ShapeToString(x.shape()),
                                      transposed ? " transposed" : "", " over ",
                                      all_axes ? "all" : absl::StrJoin(axes, ","),
                                      with_nan ? " with a NaN" : ""));
            Tensor copy = Tensor::Empty(DType::kFloat64, base);  // for the NaN
            std::copy(data.data<double>(), data.data<double>() + data.size(),
                      copy.data<double>());
            if (with_nan) copy.data<double>()[2] = NAN;
            const Tensor in = transposed ? copy.View(x.shape(), x.strides()) : copy;
            const Var v = tensor(DType::kFloat64, StaticShape(nd), "x");
            const Var out = Build(fn, v, all_axes ? Axes() : Axes(axes), false);
            ASSERT_TRUE(out.ok()) << out.status();
            const Apply& node = *out->owner();
            std::vector<Tensor> outputs(1);
            const std::vector<Tensor> inputs = {in};
            ASSERT_TRUE(node.op().Perform(node, inputs, outputs).ok());
            // The plain loop: each input element in C order onto its output element.
            std::vector<bool> reduced(nd, all_axes);
            for (int a : axes) reduced[a] = true;
            const Tensor& r = outputs[0];
            std::vector<double> want(r.size(), fn == "sum" ? 0.0 : fn == "prod" ? 1.0
                                                                : fn == "max" ? -INFINITY
                                                                              : INFINITY);
            std::vector<int64_t> index(nd, 0);
            for (int64_t flat = 0; flat < in.size(); ++flat) {
              int64_t o = 0, offset = 0;
              for (int d = 0; d < nd; ++d) {
                offset += index[d] * in.strides()[d];
                if (!reduced[d]) o = o * in.shape()[d] + index[d];
              }
              const double e = in.data<double>()[offset];
              double& w = want[o];
              if (fn == "sum") w += e;
              if (fn == "prod") w *= e;
              if (fn == "max") w = std::isnan(w) || w > e ? w : e;
              if (fn == "min") w = std::isnan(w) || w < e ? w : e;
              for (int d = nd - 1; d >= 0 && ++index[d] == in.shape()[d]; --d) index[d] = 0;
            }
            for (int64_t i = 0; i < r.size(); ++i) {
              const double got = r.data<double>()[i];
              if (fn == "sum") {
                EXPECT_NEAR(got, want[i], 4e-16 * std::fabs(want[i]) * 8) << i;
              } else if (std::isnan(want[i])) {
                EXPECT_TRUE(std::isnan(got)) << i;
              } else {
                EXPECT_EQ(got, want[i]) << i;
              }
            }
          }
        }
      }
    }
  }
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
