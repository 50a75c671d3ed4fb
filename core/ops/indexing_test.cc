#include "core/ops/indexing.h"

#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/kiln.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

// "1,::-1,-3:" -> {1, Slice{None, None, -1}, Slice{-3, None, None}}.
std::vector<Index> ParseIndex(const std::string& spec) {
  std::vector<Index> idx;
  for (const auto& part : absl::StrSplit(spec, ',')) {
    const std::string p(part);
    if (p.find(':') == std::string::npos) {
      idx.push_back(Index(static_cast<int64_t>(std::stoll(p))));
      continue;
    }
    std::vector<std::string> b = absl::StrSplit(p, ':');
    b.resize(3);
    auto bound = [](const std::string& s) {
      return s.empty() ? Bound() : Bound(int64_t{std::stoll(s)});
    };
    idx.push_back(Slice{bound(b[0]), bound(b[1]), bound(b[2])});
  }
  return idx;
}

// Every case of tests/golden/numpy_indexing.txt against NumPy.
TEST(IndexingTest, MatchesNumPy) {
  for (const auto& c : testing::ReadCases("tests/golden/numpy_indexing.txt")) {
    ASSERT_EQ(c.size(), 11u);
    SCOPED_TRACE(absl::StrJoin(c, "|"));
    Tensor xv = testing::MakeTensor(c[2], c[3], c[4]);
    Var x = tensor(xv.dtype(), StaticShape(xv.ndim()), "x");
    std::vector<Var> inputs = {x};
    std::vector<Tensor> args = {xv};
    Var y;
    if (!c[5].empty()) {
      Tensor yv = testing::MakeTensor(c[5], c[6], c[7]);
      y = tensor(yv.dtype(), StaticShape(yv.ndim()), "y");
      inputs.push_back(y);
      args.push_back(yv);
    }
    Var out;
    const std::string& op = c[0];
    if (op == "sub" || op == "set" || op == "inc") {
      Var indexed = subtensor(x, ParseIndex(c[1]));
      out = op == "sub"   ? indexed
            : op == "set" ? set_subtensor(indexed, y)
                          : inc_subtensor(indexed, y);
    } else {
      std::vector<int64_t> rows;
      if (!c[1].empty()) {
        for (const auto& r : absl::StrSplit(c[1], ',')) rows.push_back(std::stoll(std::string(r)));
      }
      Var idx = constant(
          *Tensor::FromValues<int64_t>(DType::kInt64, {static_cast<int64_t>(rows.size())}, rows));
      Var taken = take(x, idx);
      out = op == "take"       ? taken
            : op == "take_set" ? set_subtensor(taken, y)
                               : inc_subtensor(taken, y);
    }
    ASSERT_TRUE(out.ok()) << out.status();
    auto f = function(inputs, {out});
    ASSERT_TRUE(f.ok()) << f.status();
    auto result = (*f)(args);
    ASSERT_TRUE(result.ok()) << result.status();
    const Tensor& r = (*result)[0];
    EXPECT_EQ(DTypeName(r.dtype()), c[8]);
    EXPECT_EQ(r.shape(), testing::ParseShape(c[9]));
    EXPECT_EQ(testing::Elements(r), testing::ParseValues(c[10]));
    // The input is never written.
    EXPECT_TRUE(args[0].BitwiseEquals(testing::MakeTensor(c[2], c[3], c[4])));
  }
}

TEST(IndexingTest, NamesTypesAndViews) {
  Var x = dtensor3("x");
  Var s = subtensor(x, {1, Slice{1, std::nullopt, -1}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->owner()->op().Name(), "Subtensor{int64, int64::int64}");
  EXPECT_EQ(s->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(subtensor(tensor(DType::kInt8, {2, 3}), {Slice{}})->type()->ToString(),
            "TensorType(int8, (2, 3))");
  Var i = lscalar("i");
  Var sym = subtensor(x, {i});
  EXPECT_EQ(sym->owner()->ToString(), "Subtensor{int64}(x, i)");
  EXPECT_EQ(set_subtensor(s, constant(0.0))->owner()->op().Name(),
            "IncSubtensor{Set;int64, int64::int64}");
  EXPECT_EQ(inc_subtensor(take(x, lvector("r")), constant(1.0))->owner()->op().Name(),
            "AdvancedIncSubtensor1{no_inplace,inc}");
  EXPECT_EQ(take(x, lvector())->owner()->op().Name(), "AdvancedSubtensor1");
  Tensor xv = Tensor::Zeros(DType::kFloat64, {3, 2, 2});
  const std::vector<Tensor> args = {xv, *Tensor::Of<int64_t>(DType::kInt64, {}, {-1})};
  std::vector<Tensor> view(1);
  ASSERT_TRUE(sym->owner()->op().Perform(*sym->owner(), args, view).ok());
  EXPECT_TRUE(view[0].SharesBufferWith(xv));
}

TEST(IndexingTest, Errors) {
  Var x = dmatrix("x"), i = lscalar("i");
  EXPECT_EQ(subtensor(x, {0, 0, 0}).status().message(),
            "Subtensor{int64, int64, int64}: too many indices for TensorType(float64, (?, ?))");
  EXPECT_EQ(subtensor(x, {dscalar("d")}).status().message(),
            "subtensor: the index d is not an integer scalar");
  EXPECT_EQ(set_subtensor(x, constant(1.0)).status().message(),
            "set_subtensor: x is not the result of indexing (subtensor or take)");
  EXPECT_EQ(set_subtensor(subtensor(ivector("v"), {0}), constant(1.5)).status().message(),
            "IncSubtensor{Set;int64}: y has type TensorType(float32, ()), which cannot be stored "
            "in x of type TensorType(int32, (?,)) without loss");
  auto f = function({x, i}, {subtensor(x, {i}), subtensor(x, {Slice{0, 2, i}})});
  ASSERT_TRUE(f.ok());
  Tensor xv = Tensor::Zeros(DType::kFloat64, {3, 2});
  EXPECT_EQ((*f)({xv, *Tensor::Of<int64_t>(DType::kInt64, {}, {3})}).status().message(),
            "Subtensor{int64}: index 3 is out of bounds for axis 0 with size 3");
  EXPECT_EQ((*f)({xv, *Tensor::Of<int64_t>(DType::kInt64, {}, {0})}).status().message(),
            "Subtensor{int64:int64:int64}: slice step cannot be zero");
  auto g = function({x}, {take(x, constant(*Tensor::Of<int64_t>(DType::kInt64, {1}, {5})))});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)({xv}).status().message(),
            "AdvancedSubtensor1: index 5 is out of bounds for axis 0 with size 3");
}

}  // namespace
}  // namespace kiln
