#include "core/ops/nnet.h"

#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_join.h"
#include "core/kiln.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

Var Build(const std::string& fn, const std::string& axis_text, const std::vector<Var>& in) {
  const std::optional<int> axis =
      axis_text == "None" || axis_text.empty() ? std::nullopt : std::optional(std::stoi(axis_text));
  if (fn == "softmax") return softmax(in[0], axis);
  if (fn == "log_softmax") return log_softmax(in[0], axis);
  if (fn == "logsumexp") return logsumexp(in[0], axis ? Axes(*axis) : Axes());
  if (fn == "relu") return relu(in[0]);
  if (fn == "binary_crossentropy") return binary_crossentropy(in[0], in[1]);
  if (fn == "categorical_crossentropy") return categorical_crossentropy(in[0], in[1]);
  if (fn == "sort") return sort(in[0], axis);
  return argsort(in[0], axis);
}

// Every case of tests/golden/numpy_nnet.txt against NumPy and SciPy, including inputs of
// +-1000 where the naive formulas overflow.
TEST(NnetTest, MatchesSciPy) {
  for (const auto& c : testing::ReadCases("tests/golden/numpy_nnet.txt")) {
    ASSERT_EQ(c.size(), 11u);
    SCOPED_TRACE(absl::StrJoin(c, "|"));
    std::vector<Var> inputs;
    std::vector<Tensor> args;
    for (int k = 0; k < 2 && !c[2 + 3 * k].empty(); ++k) {
      args.push_back(testing::MakeTensor(c[2 + 3 * k], c[3 + 3 * k], c[4 + 3 * k]));
      inputs.push_back(tensor(args.back().dtype(), StaticShape(args.back().ndim())));
    }
    Var out = Build(c[0], c[1], inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    auto f = function(inputs, {out});
    ASSERT_TRUE(f.ok()) << f.status();
    auto result = (*f)(args);
    ASSERT_TRUE(result.ok()) << result.status();
    const Tensor& r = (*result)[0];
    EXPECT_EQ(DTypeName(r.dtype()), c[8]);
    EXPECT_EQ(r.shape(), testing::ParseShape(c[9]));
    const std::vector<double> expected = testing::ParseValues(c[10]);
    const std::vector<double> got = testing::Elements(r);
    ASSERT_EQ(got.size(), expected.size());
    const double rtol = r.dtype() == DType::kFloat32 ? 1e-6 : 1e-14;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (std::isnan(expected[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
      } else if (std::isinf(expected[i])) {
        EXPECT_EQ(got[i], expected[i]) << "element " << i;
      } else {
        EXPECT_NEAR(got[i], expected[i], rtol * std::fabs(expected[i]) + 1e-300) << "element " << i;
      }
    }
  }
}

TEST(NnetTest, NamesAndErrors) {
  Var m = dmatrix("m");
  EXPECT_EQ(softmax(m)->owner()->op().Name(), "Softmax{axis=1}");
  EXPECT_EQ(log_softmax(m, 0)->owner()->op().Name(), "LogSoftmax{axis=0}");
  EXPECT_EQ(sort(m)->owner()->op().Name(), "SortOp{quicksort, axis=1}");
  EXPECT_EQ(argsort(m, std::nullopt)->type()->ToString(), "TensorType(int64, (?,))");
  EXPECT_EQ(softmax(imatrix()).status().message(),
            "Softmax{axis=1}: input 0 has type TensorType(int32, (?, ?)) but a float tensor is "
            "needed");
  EXPECT_EQ(softmax(m, 2).status().message(),
            "Softmax{axis=2}: axis 2 is out of bounds for TensorType(float64, (?, ?))");
  EXPECT_EQ(categorical_crossentropy(m, dvector()).status().message(),
            "categorical_crossentropy: true_dist has type TensorType(float64, (?,)); it must be a "
            "distribution like coding_dist or an integer vector of labels for a matrix "
            "coding_dist");
}

}  // namespace
}  // namespace kiln
