#include "core/ops/nnet_xent.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

// The function of the golden file's first field applied to the inputs.
std::vector<Var> Call(const std::string& fn, const std::vector<Var>& in) {
  if (fn == "softmax_with_bias") return {softmax_with_bias(in[0], in[1])};
  if (fn == "crossentropy_softmax_argmax_1hot_with_bias") {
    return crossentropy_softmax_argmax_1hot_with_bias(in[0], in[1], in[2]);
  }
  if (fn == "crossentropy_softmax_1hot_with_bias_dx") {
    return {crossentropy_softmax_1hot_with_bias_dx(in[0], in[1], in[2])};
  }
  if (fn == "crossentropy_categorical_1hot") {
    return {crossentropy_categorical_1hot(in[0], in[1])};
  }
  if (fn == "crossentropy_categorical_1hot_grad") {
    return {crossentropy_categorical_1hot_grad(in[0], in[1], in[2])};
  }
  return {Var(absl::InvalidArgumentError("no function " + fn))};
}

Tensor Part(const std::string& text) {
  const std::vector<std::string> p = absl::StrSplit(text, ';');
  return testing::MakeTensor(p[0], p[1], p[2]);
}

// Every case of tests/golden/aesara_nnet_xent.txt (Aesara 2.9.4): values, dtypes and the
// inferred shapes of every output.
TEST(NnetXentTest, MatchesAesara) {
  int cases = 0;
  for (const auto& c : testing::ReadCases("tests/golden/aesara_nnet_xent.txt")) {
    SCOPED_TRACE(c[0]);
    ++cases;
    const size_t n_in =
        c[0] == "softmax_with_bias" || c[0] == "crossentropy_categorical_1hot" ? 2 : 3;
    std::vector<Tensor> values;
    std::vector<Var> inputs;
    for (size_t i = 0; i < n_in; ++i) {
      values.push_back(Part(c[1 + i]));
      inputs.push_back(tensor(values.back().dtype(), StaticShape(values.back().ndim())));
    }
    const std::vector<Var> outs = Call(c[0], inputs);
    ASSERT_EQ(outs.size(), c.size() - 1 - n_in);
    std::vector<Var> fetch = outs;
    for (const Var& o : outs) {
      ASSERT_TRUE(o.ok()) << o.status();
      absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(o);
      ASSERT_TRUE(dims.ok()) << dims.status();
      for (const VariablePtr& d : *dims) fetch.push_back(d);
    }
    auto f = function(inputs, fetch);
    ASSERT_TRUE(f.ok()) << f.status();
    auto r = (*f)(values);
    ASSERT_TRUE(r.ok()) << r.status();
    size_t dim = outs.size();
    for (size_t k = 0; k < outs.size(); ++k) {
      const Tensor want = Part(c[1 + n_in + k]);
      const Tensor& got = (*r)[k];
      EXPECT_EQ(got.dtype(), want.dtype());
      EXPECT_EQ(got.dtype(), outs[k].dtype());
      ASSERT_EQ(got.shape(), want.shape());
      const std::vector<double> g = testing::Elements(got), w = testing::Elements(want);
      const double tol = got.dtype() == DType::kFloat32 ? 1e-6 : 1e-14;
      for (size_t i = 0; i < g.size(); ++i) {
        EXPECT_NEAR(g[i], w[i], tol * std::max(1.0, std::abs(w[i]))) << k << " " << i;
      }
      for (int d = 0; d < got.ndim(); ++d) EXPECT_EQ(ScalarInt((*r)[dim++]), got.shape()[d]);
    }
  }
  EXPECT_EQ(cases, 9);
}

TEST(NnetXentTest, NamesTypesAndWireAttributes) {
  const Var x = dmatrix("x"), b = dvector("b"), y = lvector("y");
  const std::vector<Var> xent = crossentropy_softmax_argmax_1hot_with_bias(x, b, y);
  ASSERT_EQ(xent.size(), 3u);
  for (const Var& v : xent) ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(xent[0]->type()->ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(xent[1]->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(xent[2]->type()->ToString(), "TensorType(int64, (?,))");
  // nll keeps a broadcastable y_idx's static length, as Aesara's make_node does.
  EXPECT_EQ(crossentropy_softmax_argmax_1hot_with_bias(x, b, tensor(DType::kInt32, {1}))[0]
                ->type()
                ->ToString(),
            "TensorType(float64, (1,))");
  EXPECT_EQ(softmax_with_bias(tensor(DType::kFloat32, {2, 3}), b)->type()->ToString(),
            "TensorType(float32, (2, 3))");
  EXPECT_EQ(crossentropy_categorical_1hot(fmatrix("p"), y)->type()->ToString(),
            "TensorType(float32, (?,))");
  const std::vector<std::pair<Var, std::string>> named = {
      {softmax_with_bias(x, b), "SoftmaxWithBias"},
      {xent[0], "CrossentropySoftmaxArgmax1HotWithBias"},
      {crossentropy_softmax_1hot_with_bias_dx(dvector("d"), x, y),
       "CrossentropySoftmax1HotWithBiasDx"},
      {crossentropy_categorical_1hot(x, y), "CrossentropyCategorical1Hot"},
      {crossentropy_categorical_1hot_grad(dvector("g"), x, y), "CrossentropyCategorical1HotGrad"},
  };
  for (const auto& [v, name] : named) {
    ASSERT_TRUE(v.ok()) << v.status();
    const Op& op = v->owner()->op();
    EXPECT_EQ(op.Name(), name);
    EXPECT_EQ(op.type_name(), name);
    absl::StatusOr<OpPtr> again = MakeOp(name, {});
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(**again == op);
  }
  // crossentropy_softmax_1hot: a zero bias like x's first row.
  const std::vector<Var> plain = crossentropy_softmax_1hot(x, y);
  ASSERT_EQ(plain.size(), 2u);
  ASSERT_TRUE(plain[0].ok()) << plain[0].status();
  EXPECT_EQ(plain[0]->owner()->op().Name(), "CrossentropySoftmaxArgmax1HotWithBias");
}

TEST(NnetXentTest, Errors) {
  const Var x = dmatrix("x"), b = dvector("b"), y = lvector("y");
  EXPECT_EQ(softmax_with_bias(lmatrix("i"), b).status().message(),
            "SoftmaxWithBias: input 0 (x) has type TensorType(int64, (?, ?)): x must be 2-d "
            "tensor of floats");
  EXPECT_EQ(softmax_with_bias(x, x).status().message(),
            "SoftmaxWithBias: input 1 (b) has type TensorType(float64, (?, ?)): b must be 1-d "
            "tensor of floats");
  EXPECT_EQ(crossentropy_softmax_argmax_1hot_with_bias(x, b, dvector("f"))[0].status().message(),
            "CrossentropySoftmaxArgmax1HotWithBias: input 2 (y_idx) has type "
            "TensorType(float64, (?,)): y_idx must be 1-d tensor of [u]ints");
  EXPECT_EQ(crossentropy_softmax_1hot_with_bias_dx(x, x, y).status().message(),
            "CrossentropySoftmax1HotWithBiasDx: input 0 (dy) has type TensorType(float64, (?, "
            "?)): dy must be {0,1}-d tensor of floats");
  EXPECT_EQ(crossentropy_categorical_1hot(dvector("v"), y).status().message(),
            "CrossentropyCategorical1Hot: input 0 (coding_dist) has type TensorType(float64, "
            "(?,)): Matrix of floats required for argument `coding_dist`");
  EXPECT_EQ(crossentropy_categorical_1hot(x, x).status().message(),
            "CrossentropyCategorical1Hot: input 1 (true_one_of_n) has type TensorType(float64, "
            "(?, ?)): Integer vector required for argument `true_one_of_n`");
  EXPECT_EQ(ApplyOp(OpPtr(std::make_shared<SoftmaxWithBias>()), {x}).status().message(),
            "SoftmaxWithBias: expects 2 inputs (x, b)");

  // Run-time checks: lengths and labels out of range (negative or past the columns).
  const Tensor xv = Tensor::Zeros(DType::kFloat64, {2, 3});
  auto f = function({x, b, y}, crossentropy_softmax_argmax_1hot_with_bias(x, b, y));
  ASSERT_TRUE(f.ok()) << f.status();
  auto labels = [](std::initializer_list<int64_t> v) {
    return *Tensor::Of<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
  };
  EXPECT_EQ((*f)({xv, Tensor::Zeros(DType::kFloat64, {2}), labels({0, 1})}).status().message(),
            "CrossentropySoftmaxArgmax1HotWithBias: b must have same number of columns as x: b "
            "has shape (2,) and x (2, 3)");
  EXPECT_EQ((*f)({xv, Tensor::Zeros(DType::kFloat64, {3}), labels({0})}).status().message(),
            "CrossentropySoftmaxArgmax1HotWithBias: y_idx must have same number of rows as x: "
            "y_idx has shape (1,) and x (2, 3)");
  for (int64_t bad : {int64_t{-1}, int64_t{3}, int64_t{1} << 62}) {
    const auto r = (*f)({xv, Tensor::Zeros(DType::kFloat64, {3}), labels({0, bad})});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(),
              absl::StrCat("CrossentropySoftmaxArgmax1HotWithBias: y_i value out of bounds: ", bad,
                           " is not a column index of a matrix of 3 columns"));
  }
  auto g = function({x, y}, {crossentropy_categorical_1hot(x, y)});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)({xv, labels({1})}).status().message(),
            "CrossentropyCategorical1Hot: true_one_of_n has shape (1,) but coding_dist has 2 "
            "rows");
  auto h = function({b, x, y}, {crossentropy_softmax_1hot_with_bias_dx(b, x, y)});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ((*h)({Tensor::Zeros(DType::kFloat64, {3}), xv, labels({0, 1})}).status().message(),
            "CrossentropySoftmax1HotWithBiasDx: dy has shape (3,) but sm has 2 rows");
}

Tensor Values(Shape shape, double scale) {
  std::vector<double> v(ShapeSize(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(1.0 + static_cast<double>(i)) * scale;
  return *Tensor::FromValues<double>(DType::kFloat64, std::move(shape), v);
}

// Finite differences through every differentiable input and output.
TEST(NnetXentTest, GradientsMatchFiniteDifferences) {
  const Tensor x = Values({4, 3}, 2.0), b = Values({3}, 1.0);
  const Var labels = constant(*Tensor::Of<int64_t>(DType::kInt64, {4}, {2, 0, 1, 2}));
  EXPECT_TRUE(
      verify_grad([](const std::vector<Var>& in) { return softmax_with_bias(in[0], in[1]); },
                  {x, b})
          .ok());
  for (int out : {0, 1}) {
    SCOPED_TRACE(out);
    const absl::Status s = verify_grad(
        [&](const std::vector<Var>& in) {
          return crossentropy_softmax_argmax_1hot_with_bias(in[0], in[1], labels)[out];
        },
        {x, b});
    EXPECT_TRUE(s.ok()) << s;
  }
  // nll and softmax together (both terms of x's and b's gradients).
  const absl::Status both = verify_grad(
      [&](const std::vector<Var>& in) {
        const std::vector<Var> r = crossentropy_softmax_argmax_1hot_with_bias(in[0], in[1], labels);
        return r[0] + sum(r[1] * r[1], Axes(1));
      },
      {x, b});
  EXPECT_TRUE(both.ok()) << both;
  // The Dx op's own gradient (dy a vector and a scalar) and the categorical cross-entropy's.
  Tensor sm = Values({4, 3}, 0.2);
  for (const Tensor& dy : {Values({4}, 1.0), Values({}, 1.0)}) {
    const absl::Status s = verify_grad(
        [&](const std::vector<Var>& in) {
          return crossentropy_softmax_1hot_with_bias_dx(in[0], in[1], labels);
        },
        {dy, sm});
    EXPECT_TRUE(s.ok()) << s;
  }
  std::vector<double> p(12);
  for (size_t i = 0; i < p.size(); ++i) p[i] = 0.1 + 0.05 * static_cast<double>(i);
  const absl::Status cc = verify_grad(
      [&](const std::vector<Var>& in) { return crossentropy_categorical_1hot(in[0], labels); },
      {*Tensor::FromValues<double>(DType::kFloat64, {4, 3}, p)});
  EXPECT_TRUE(cc.ok()) << cc;
  // The labels have no gradient; the grad op has none.
  const Var xm = dmatrix("x"), y = lvector("y");
  const Var gy = grad(sum(crossentropy_categorical_1hot(xm, y)), y);
  EXPECT_FALSE(gy.ok());
  const Var g2 = grad(sum(crossentropy_categorical_1hot_grad(dvector("g"), xm, y)), xm);
  ASSERT_FALSE(g2.ok());
  EXPECT_TRUE(absl::StrContains(g2.status().message(),
                                "of the CrossentropyCategorical1HotGrad op is not implemented"))
      << g2.status();
}

// SoftmaxWithBias on contiguous float64 (its fast path: SLEEF's exp over the whole matrix) and on
// a transposed view of the same values (the general path) agree with the plain formula within
// 1e-15, rows with a NaN are NaN, and -inf entries give exact zeros.
TEST(NnetXentTest, SoftmaxWithBiasFastPathMatchesTheFormula) {
  constexpr int64_t kRows = 517, kCols = 3;
  Tensor x = Tensor::Empty(DType::kFloat64, {kRows, kCols});
  for (int64_t i = 0; i < x.size(); ++i) x.data<double>()[i] = ((i * 37) % 101) / 7.0 - 6.0;
  x.data<double>()[4 * kCols + 1] = NAN;
  x.data<double>()[7 * kCols + 2] = -INFINITY;
  const Tensor b =
      *Tensor::FromValues<double>(DType::kFloat64, {kCols}, std::vector<double>{0.5, -1.0, 2.0});
  // The same values in a column-major buffer: a non-contiguous x.
  Tensor xt_buffer = Tensor::Empty(DType::kFloat64, {kCols, kRows});
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      xt_buffer.data<double>()[j * kRows + i] = x.data<double>()[i * kCols + j];
    }
  }
  const Tensor xt = xt_buffer.View({kRows, kCols}, {1, kRows});
  const Var out = softmax_with_bias(dmatrix("x"), dvector("b"));
  const Apply& node = *out->owner();
  for (const Tensor& in : {x, xt}) {
    SCOPED_TRACE(in.is_contiguous() ? "contiguous" : "transposed");
    std::vector<Tensor> outputs(1);
    const std::vector<Tensor> inputs = {in, b};
    ASSERT_TRUE(node.op().Perform(node, inputs, outputs).ok());
    for (int64_t i = 0; i < kRows; ++i) {
      const double* row = x.data<double>() + i * kCols;
      double m = -INFINITY, total = 0;
      for (int64_t j = 0; j < kCols; ++j) m = std::max(m, row[j] + b.data<double>()[j]);
      for (int64_t j = 0; j < kCols; ++j) total += std::exp(row[j] + b.data<double>()[j] - m);
      for (int64_t j = 0; j < kCols; ++j) {
        const double got = outputs[0].data<double>()[i * kCols + j];
        if (i == 4) {
          EXPECT_TRUE(std::isnan(got)) << j;
          continue;
        }
        const double want = std::exp(row[j] + b.data<double>()[j] - m) / total;
        if (i == 7 && j == 2) EXPECT_EQ(got, 0.0);
        EXPECT_NEAR(got, want, 1e-15 * std::max(1.0, want)) << i << " " << j;
      }
    }
  }
}

}  // namespace
}  // namespace kiln
