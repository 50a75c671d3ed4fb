// MaxPoolRop (core/ops/pool.h) against Aesara 2.9.4 (tests/golden/aesara_max_pool_rop.txt,
// written by tests/golden/gen_max_pool_rop_cases.py, ties included), its type, inferred shape,
// name and errors; and Kiln's Rop of max pooling (built from the gradients) against Aesara's
// aesara.Rop of the same pool where no window holds a tie.
#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "core/ops/pool.h"
#include "tests/testing/numpy_cases.h"
#include "tests/testing/pool_cases.h"

namespace kiln {
namespace {

using testing::IntConst;
using testing::Ints;
using testing::PoolOp;

// True when x holds a value twice (then some window may hold a tied maximum).
bool HasTies(const std::vector<double>& x) {
  for (size_t i = 0; i < x.size(); ++i) {
    for (size_t j = i + 1; j < x.size(); ++j) {
      if (x[i] == x[j]) return true;
    }
  }
  return false;
}

TEST(MaxPoolRopTest, MatchesAesara) {
  int rops = 0, compared_rops = 0;
  for (const auto& c : testing::ReadCases("tests/golden/aesara_max_pool_rop.txt")) {
    ASSERT_EQ(c.size(), 14u);
    SCOPED_TRACE(absl::StrJoin(c.begin(), c.begin() + 9, "|"));
    const int nd = std::stoi(c[1]);
    const bool ib = c[2] == "1";
    const std::vector<int64_t> ws = Ints(c[4]), st = Ints(c[5]), pad = Ints(c[6]);
    const Tensor xv = testing::MakeTensor(c[7], c[8], c[9]);
    const Tensor ev = testing::MakeTensor(c[7], c[10], c[11]);
    const Var x = tensor(xv.dtype(), StaticShape(xv.ndim()), "x");
    const Var e = tensor(ev.dtype(), StaticShape(ev.ndim()), "e");
    const Shape want_shape = testing::ParseShape(c[12]);
    const std::vector<double> want = testing::ParseValues(c[13]);
    Var out;
    if (c[0] == "MaxPoolRop") {
      out = ApplyOp(PoolOp("MaxPoolRop", ib, "max", nd),
                    {x, e, IntConst(ws), IntConst(st), IntConst(pad)});
      ASSERT_TRUE(out.ok()) << out.status();
      ++rops;
    } else {
      ASSERT_EQ(c[0], "RopOfPool");
      // Kiln's Rop sums the eval point over a window's tied maxima (the gradients' rule), where
      // Aesara takes the first: compared only without ties.
      if (HasTies(testing::ParseValues(c[9]))) continue;
      const Var y =
          ApplyOp(PoolOp("Pool", ib, "max", nd), {x, IntConst(ws), IntConst(st), IntConst(pad)});
      absl::StatusOr<std::vector<Var>> r = Rop({y}, {x}, {e});
      ASSERT_TRUE(r.ok()) << r.status();
      out = (*r)[0];
      ++compared_rops;
    }
    absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(out);
    ASSERT_TRUE(dims.ok()) << dims.status();
    std::vector<Var> outs = {out};
    for (const VariablePtr& d : *dims) outs.push_back(d);
    auto f = function({x, e}, outs, {.on_unused_input = OnUnusedInput::kIgnore});
    ASSERT_TRUE(f.ok()) << f.status();
    auto r = (*f)({xv, ev});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].dtype(), ev.dtype());
    ASSERT_EQ((*r)[0].shape(), want_shape);
    const std::vector<double> got = testing::Elements((*r)[0]);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-12 * (1 + std::fabs(want[i]))) << "entry " << i;
    }
    for (size_t d = 0; d < want_shape.size(); ++d) {
      EXPECT_EQ(ScalarInt((*r)[1 + d]), want_shape[d]);
    }
  }
  EXPECT_EQ(rops, 24);
  EXPECT_GT(compared_rops, 4);
}

// Ties: the first maximum in C order, a NaN counting as the maximum (NumPy's argmax).
TEST(MaxPoolRopTest, PicksTheFirstMaximumAndNaN) {
  const Var x = dmatrix("x"), e = dmatrix("e");
  const Var out = ApplyOp(PoolOp("MaxPoolRop", true, "max", 2),
                          {x, e, IntConst({2, 2}), IntConst({2, 2}), IntConst({0, 0})});
  auto f = function({x, e}, {out});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor xv = testing::MakeTensor("float64", "2x4", "1,3,nan,0,3,2,5,nan");
  const Tensor ev = testing::MakeTensor("float64", "2x4", "10,11,12,13,14,15,16,17");
  auto r = (*f)({xv, ev});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(testing::Elements((*r)[0]), (std::vector<double>{11, 12}));
}

// An eval point of another dtype than x's: the output in its dtype, equal to the same-dtype
// result converted (Aesara's C code misreads this case, its Python perform does it so).
TEST(MaxPoolRopTest, EvalPointOfAnotherDtype) {
  const Var x = fmatrix("x"), e = dmatrix("e"), e32 = fmatrix("e32");
  auto rop = [&](const Var& ev) {
    return ApplyOp(PoolOp("MaxPoolRop", false, "max", 2),
                   {x, ev, IntConst({2, 3}), IntConst({1, 2}), IntConst({0, 0})});
  };
  auto f = function({x, e, e32}, {rop(e), rop(e32)});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor xv = testing::MakeTensor("float32", "3x4", "1,5,2,5,0,3,3,-1,7,7,2,4");
  const Tensor ev = testing::MakeTensor("float64", "3x4", "0.5,1,2,3,4,5,6,7,8,9,10,11.25");
  auto r = (*f)({xv, ev, ev.AsType(DType::kFloat32)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dtype(), DType::kFloat64);
  EXPECT_EQ(testing::Elements((*r)[0]), testing::Elements((*r)[1]));
  EXPECT_EQ(testing::Elements((*r)[0]), (std::vector<double>{1, 3, 8, 11.25}));
}

TEST(MaxPoolRopTest, NameTypeAndIdentity) {
  const Var x = tensor(DType::kFloat32, {1, std::nullopt, std::nullopt, std::nullopt}, "x");
  const Var e = tensor(DType::kFloat64, {std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  const OpPtr op = PoolOp("MaxPoolRop", false, "max", 2);
  EXPECT_EQ(op->Name(), "MaxPoolRop{ignore_border=False, mode='max', ndim=2}");
  const Var out = ApplyOp(op, {x, e, IntConst({2, 2})});  // stride = ws, pad = 0 by default
  ASSERT_TRUE(out.ok()) << out.status();
  // Aesara's type: x's broadcastable leading dims, eval_point's dtype.
  EXPECT_EQ(out->type()->ToString(), "TensorType(float64, (1, ?, ?, ?))");
  EXPECT_EQ(out->owner()->num_inputs(), 5);
  absl::StatusOr<OpPtr> again = MakeOp(op->type_name(), op->Attrs());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(**again == *op);
  // Only max: Aesara asserts mode == "max".
  OpAttrs sum_mode;
  sum_mode.Set("mode", std::string("sum"));
  EXPECT_FALSE(MakeOp("MaxPoolRop", sum_mode).ok());
  // No gradient (Aesara defines none).
  EXPECT_FALSE(grad(sum(out), e).ok());
}

TEST(MaxPoolRopTest, Errors) {
  const OpPtr op = PoolOp("MaxPoolRop", true, "max", 2);
  const Var x = dmatrix("x");
  EXPECT_EQ(ApplyOp(op, {x, dvector("e"), IntConst({2, 2})}).status().message(),
            "MaxPoolRop{ignore_border=True, mode='max', ndim=2}: input 1 has type "
            "TensorType(float64, (?,)) but a tensor of x's 2 dims is needed");
  const Var e = dmatrix("e");
  auto f = function({x, e}, {ApplyOp(op, {x, e, IntConst({2, 2})})});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor xv = Tensor::Zeros(DType::kFloat64, {4, 4});
  EXPECT_EQ((*f)({xv, Tensor::Zeros(DType::kFloat64, {4, 3})}).status().message(),
            "MaxPoolRop{ignore_border=True, mode='max', ndim=2}: input 1 (eval_point) has shape "
            "(4, 3) but pooling x gives (4, 4)");
  // Hostile windows are refused as Pool refuses them.
  auto g = function(
      {x, e},
      {ApplyOp(op, {x, e, IntConst({int64_t{1} << 62, 2}), IntConst({1, 1}), IntConst({0, 0})})});
  ASSERT_TRUE(g.ok()) << g.status();
  auto r = (*g)({xv, xv});
  ASSERT_TRUE(r.ok()) << r.status();  // ignore_border: no whole window, an empty result
  EXPECT_EQ((*r)[0].shape(), (Shape{0, 3}));
}

}  // namespace
}  // namespace kiln
