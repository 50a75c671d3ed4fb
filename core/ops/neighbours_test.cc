#include "core/ops/neighbours.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

constexpr char kGolden[] = "tests/golden/aesara_neighbours.txt";

// "2,3" -> the int64 vector constant [2, 3].
Var Pair(const std::string& text) {
  std::vector<int64_t> v;
  for (const auto& s : absl::StrSplit(text, ',')) v.push_back(std::stoll(std::string(s)));
  return constant(*Tensor::FromValues<int64_t>(DType::kInt64, {2}, v));
}

Tensor PairValue(int64_t a, int64_t b) { return *Tensor::Of<int64_t>(DType::kInt64, {2}, {a, b}); }

// Every value case of the golden file (Aesara 2.9.4's images2neibs) through images2neibs and the
// op made by the registry: values, dtype, the inferred shape, and where Aesara computed it, the
// gradient of sum(out * w).
TEST(Images2NeibsTest, MatchesAesara) {
  int cases = 0;
  for (const auto& c : testing::ReadCases(kGolden)) {
    if (c[4] == "ERROR") continue;
    ASSERT_EQ(c.size(), 10u);
    SCOPED_TRACE(absl::StrJoin(c, "|").substr(0, 120));
    ++cases;
    const Tensor xv = testing::MakeTensor(c[1], c[2], c[3]);
    const Var x = tensor(xv.dtype(), StaticShape(4), "x");
    const std::optional<Var> step = c[5] == "-" ? std::nullopt : std::optional<Var>(Pair(c[5]));
    absl::StatusOr<OpPtr> op = MakeOp("Images2Neibs", {{"mode", c[0]}});
    ASSERT_TRUE(op.ok()) << op.status();
    const Var made = step ? ApplyOp(*op, {x, Pair(c[4]), *step}) : ApplyOp(*op, {x, Pair(c[4])});
    for (const Var& out : {images2neibs(x, Pair(c[4]), step, c[0]), made}) {
      ASSERT_TRUE(out.ok()) << out.status();
      absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(out);
      ASSERT_TRUE(dims.ok()) << dims.status();
      std::vector<Var> outputs = {out, (*dims)[0], (*dims)[1]};
      const bool with_grad = c[9] != "-";
      const Tensor expected = testing::MakeTensor(c[6], c[7], c[8]);
      if (with_grad) {
        const Tensor w = testing::MakeTensor("float64", c[7], [&] {
          std::vector<std::string> ws;
          for (int64_t i = 0; i < expected.size(); ++i) {
            ws.push_back(absl::StrCat(((i * 7) % 11 - 5) / 4.0));
          }
          return absl::StrJoin(ws, ",");
        }());
        outputs.push_back(grad(sum(out * constant(w)), x));
      }
      auto f = function({x}, outputs);
      ASSERT_TRUE(f.ok()) << f.status();
      auto result = (*f)({xv});
      ASSERT_TRUE(result.ok()) << result.status();
      const Tensor& y = (*result)[0];
      EXPECT_EQ(DTypeName(y.dtype()), c[6]);
      EXPECT_EQ(y.shape(), testing::ParseShape(c[7]));
      EXPECT_EQ(testing::Elements(y), testing::Elements(expected));
      EXPECT_EQ(ScalarInt((*result)[1]), y.shape()[0]);
      EXPECT_EQ(ScalarInt((*result)[2]), y.shape()[1]);
      if (with_grad) {
        const std::vector<double> g = testing::Elements((*result)[3]);
        const std::vector<double> want = testing::ParseValues(c[9]);
        ASSERT_EQ(g.size(), want.size());
        for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], 1e-6) << i;
      }
    }
  }
  EXPECT_EQ(cases, 17);
}

// Aesara's run-time errors, with its messages after the op's name.
TEST(Images2NeibsTest, RunTimeErrorsMatchAesara) {
  int cases = 0;
  for (const auto& c : testing::ReadCases(kGolden)) {
    if (c[4] != "ERROR") continue;
    SCOPED_TRACE(absl::StrJoin(c, "|"));
    ++cases;
    const Var x = dtensor4("x");
    const std::optional<Var> step = c[3] == "-" ? std::nullopt : std::optional<Var>(Pair(c[3]));
    auto f = function({x}, {images2neibs(x, Pair(c[2]), step, c[0])});
    ASSERT_TRUE(f.ok()) << f.status();
    const auto r = (*f)({Tensor::Zeros(DType::kFloat64, testing::ParseShape(c[1]))});
    ASSERT_FALSE(r.ok());
    std::string want = c[5];
    if (absl::StartsWith(want, "Images2Neibs: ")) want = want.substr(14);
    EXPECT_EQ(r.status().message(), absl::StrCat("Images2Neibs{", c[0], "}: ", want));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(cases, 8);
}

TEST(Images2NeibsTest, NamesTypesAndWireAttributes) {
  const Var x = ftensor4("x");
  const Var y = images2neibs(x, Pair("2,2"));
  ASSERT_TRUE(y.ok()) << y.status();
  const Op& op = y->owner()->op();
  EXPECT_EQ(op.Name(), "Images2Neibs{valid}");
  EXPECT_EQ(op.type_name(), "Images2Neibs");
  EXPECT_TRUE(op.Is<Images2Neibs>());
  EXPECT_EQ(y->type()->ToString(), "TensorType(float32, (?, ?))");
  // neib_step omitted is neib_shape itself, as in Aesara's make_node.
  ASSERT_EQ(y->owner()->inputs().size(), 3u);
  EXPECT_EQ(y->owner()->inputs()[1], y->owner()->inputs()[2]);
  // Static dims do not reach the output type: Aesara's output is matrix(dtype).
  EXPECT_EQ(images2neibs(tensor(DType::kInt16, {1, 1, 4, 4}), Pair("2,2"))->type()->ToString(),
            "TensorType(int16, (?, ?))");
  for (const char* mode : {"valid", "ignore_borders", "wrap_centered", "half", "full"}) {
    const Var z = images2neibs(x, Pair("3,3"), Pair("1,1"), mode);
    ASSERT_TRUE(z.ok()) << z.status();
    EXPECT_EQ(z->owner()->op().Name(), absl::StrCat("Images2Neibs{", mode, "}"));
    absl::StatusOr<OpPtr> again = MakeOp("Images2Neibs", z->owner()->op().Attrs());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(**again == z->owner()->op());
    EXPECT_EQ((*again)->Hash(), z->owner()->op().Hash());
  }
  EXPECT_EQ(op.Key(), "Images2Neibs{mode=s5:valid;}");
  absl::StatusOr<OpPtr> by_default = MakeOp("Images2Neibs", {});
  ASSERT_TRUE(by_default.ok()) << by_default.status();
  EXPECT_TRUE(**by_default == op);
}

TEST(Images2NeibsTest, BuildErrors) {
  const Var x = dtensor4("x");
  EXPECT_EQ(MakeOp("Images2Neibs", {{"mode", std::string("same")}}).status().message(),
            "Images2Neibs: Only modes valid, half, full, wrap_centered, ignore_borders have been "
            "implemented for Images2Neibs, not 'same'");
  EXPECT_EQ(images2neibs(x, Pair("2,2"), std::nullopt, "circular").status().message(),
            "Images2Neibs: Only modes valid, half, full, wrap_centered, ignore_borders have been "
            "implemented for Images2Neibs, not 'circular'");
  EXPECT_EQ(images2neibs(dmatrix("m"), Pair("2,2")).status().message(),
            "Images2Neibs{valid}: input 0 has type TensorType(float64, (?, ?)) but a 4-d tensor "
            "is needed");
  EXPECT_EQ(images2neibs(x, dvector("v")).status().message(),
            "Images2Neibs{valid}: input 1 has type TensorType(float64, (?,)) but an integer "
            "vector of 2 entries is needed");
  EXPECT_EQ(images2neibs(x, Pair("2,2"), lmatrix("m")).status().message(),
            "Images2Neibs{valid}: input 2 has type TensorType(int64, (?, ?)) but an integer "
            "vector of 2 entries is needed");
  EXPECT_EQ(images2neibs(x, constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {1, 2, 3})))
                .status()
                .message(),
            "Images2Neibs{valid}: input 1 has type TensorType(int64, (3,)) but an integer vector "
            "of 2 entries is needed");
  const OpPtr op = std::make_shared<Images2Neibs>();
  EXPECT_EQ(ApplyOp(op, {x}).status().message(),
            "Images2Neibs{valid}: expects 3 inputs (ten4, neib_shape, neib_step)");
  EXPECT_EQ(neibs2images(dmatrix("n"), Pair("2,2"), Pair("4,4"), "half").status().message(),
            "neibs2images do not support mode=half");
}

// Hostile sizes: a window of 2^31 x 2^31, a huge step, the wrong number of entries, are refused
// before anything is allocated.
TEST(Images2NeibsTest, HostileSizesAreRefused) {
  const Var x = dtensor4("x"), shape = lvector("shape"), step = lvector("step");
  const Tensor image = Tensor::Zeros(DType::kFloat64, {1, 1, 4, 4});
  const int64_t big = int64_t{1} << 31;
  for (const char* mode : {"valid", "ignore_borders", "wrap_centered", "half", "full"}) {
    SCOPED_TRACE(mode);
    auto f = function({x, shape, step}, {images2neibs(x, shape, step, mode)});
    ASSERT_TRUE(f.ok()) << f.status();
    for (const auto& [s, t] : std::vector<std::pair<Tensor, Tensor>>{
             {PairValue(big, big), PairValue(1, 1)},
             {PairValue(int64_t{1} << 62, 3), PairValue(1, 1)},
             {PairValue(2, 2), PairValue(0, 1)},
             {PairValue(2, 2), PairValue(1, -5)},
             {PairValue(-1, 2), PairValue(1, 1)},
         }) {
      const auto r = (*f)({image, s, t});
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
      EXPECT_TRUE(absl::StartsWith(r.status().message(), "Images2Neibs{")) << r.status();
    }
    const auto three =
        (*f)({image, *Tensor::Of<int64_t>(DType::kInt64, {3}, {1, 2, 3}), PairValue(1, 1)});
    EXPECT_EQ(three.status().message(),
              absl::StrCat("Images2Neibs{", mode,
                           "}: neib_shape has shape (3,) but it has to contain 2 elements"));
  }
  // 'ignore_borders' with an empty image and a window of 2^31 x 2^31: the windows' length,
  // 2^62 elements per row, is refused even though there are no rows.
  auto f = function({x, shape, step}, {images2neibs(x, shape, step, "ignore_borders")});
  ASSERT_TRUE(f.ok()) << f.status();
  const auto r =
      (*f)({Tensor::Zeros(DType::kFloat64, {0, 1, 4, 4}), PairValue(big, big), PairValue(1, 1)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "Images2Neibs{ignore_borders}: neib_shape[0]=2147483648 is larger than "
            "ten4.shape[2]=4 by more than one step of 1");
  // A huge step: one window.
  const auto one = (*f)({image, PairValue(2, 2), PairValue(int64_t{1} << 62, 1)});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ((*one)[0].shape(), (Shape{3, 4}));
}

// Finite differences: 'valid' with disjoint and overlapping windows, 'ignore_borders' with
// disjoint ones (Aesara's differentiable modes); the other modes say the gradient is not
// implemented, and neib_shape's is undefined.
TEST(Images2NeibsTest, GradientMatchesFiniteDifferences) {
  std::vector<double> values(2 * 2 * 5 * 6);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(1.0 + static_cast<double>(i));
  const Tensor image = *Tensor::FromValues<double>(DType::kFloat64, {2, 2, 5, 6}, values);
  struct Case {
    std::string mode, shape;
    std::optional<std::string> step;
  };
  for (const Case& k : std::vector<Case>{{"valid", "5,3", std::nullopt},
                                         {"valid", "3,2", std::string("1,2")},
                                         {"valid", "1,2", std::string("2,2")},
                                         {"ignore_borders", "2,4", std::nullopt}}) {
    SCOPED_TRACE(k.mode + " " + k.shape);
    const absl::Status s = verify_grad(
        [&](const std::vector<Var>& in) {
          return images2neibs(in[0], Pair(k.shape),
                              k.step ? std::optional<Var>(Pair(*k.step)) : std::nullopt, k.mode);
        },
        {image});
    EXPECT_TRUE(s.ok()) << s;
  }
  const Var x = dtensor4("x");
  const Var wrapped = grad(sum(images2neibs(x, Pair("3,3"), Pair("1,1"), "wrap_centered")), x);
  ASSERT_FALSE(wrapped.ok());
  EXPECT_TRUE(absl::StrContains(wrapped.status().message(),
                                "of the Images2Neibs{wrap_centered} op is not implemented"))
      << wrapped.status();
  const Var overlapping = grad(sum(images2neibs(x, Pair("2,2"), Pair("1,1"), "ignore_borders")), x);
  EXPECT_FALSE(overlapping.ok());
  const Var shape = lvector("shape");
  const Var wrt_shape = grad(sum(images2neibs(x, shape)), shape);
  ASSERT_FALSE(wrt_shape.ok());
  EXPECT_TRUE(absl::StrContains(wrt_shape.status().message(), "mathematically undefined"))
      << wrt_shape.status();
}

// A strided (non-contiguous) image gives the windows of its values, for every mode.
TEST(Images2NeibsTest, NonContiguousInputs) {
  const Tensor image = testing::Filled(DType::kFloat64, {2, 3, 5, 5},
                                       [](int64_t i) { return 0.5 * static_cast<double>(i); });
  const Tensor strided = testing::NonContiguous(image);
  ASSERT_FALSE(strided.is_contiguous());
  const Var x = dtensor4("x");
  for (const char* mode : {"valid", "ignore_borders", "wrap_centered", "half", "full"}) {
    SCOPED_TRACE(mode);
    auto f = function({x}, {images2neibs(x, Pair("3,3"), Pair("1,1"), mode)});
    ASSERT_TRUE(f.ok()) << f.status();
    auto a = (*f)({image});
    auto b = (*f)({strided});
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_TRUE((*a)[0].BitwiseEquals((*b)[0]));
  }
}

// neibs2images inverts images2neibs on disjoint windows; 'ignore_borders' zeros the borders.
TEST(Images2NeibsTest, Neibs2ImagesInverts) {
  std::vector<double> values(2 * 3 * 4 * 6);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  const Tensor image = *Tensor::FromValues<double>(DType::kFloat64, {2, 3, 4, 6}, values);
  const Var x = dtensor4("x");
  const Var back = neibs2images(images2neibs(x, Pair("2,3")), Pair("2,3"), shape(x));
  auto f = function({x}, {back});
  ASSERT_TRUE(f.ok()) << f.status();
  auto r = (*f)({image});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE((*r)[0].BitwiseEquals(image));

  const Var cut = neibs2images(images2neibs(x, Pair("3,4"), std::nullopt, "ignore_borders"),
                               Pair("3,4"), shape(x), "ignore_borders");
  auto g = function({x}, {cut});
  ASSERT_TRUE(g.ok()) << g.status();
  r = (*g)({image});
  ASSERT_TRUE(r.ok()) << r.status();
  const Tensor& y = (*r)[0];
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4, 6}));
  const std::vector<double> got = testing::Elements(y);
  for (int64_t i = 0; i < y.size(); ++i) {
    const int64_t row = (i / 6) % 4, col = i % 6;
    EXPECT_EQ(got[i], row < 3 && col < 4 ? values[i] : 0.0) << i;
  }
}

}  // namespace
}  // namespace kiln
