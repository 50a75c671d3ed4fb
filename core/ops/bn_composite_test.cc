#include "core/ops/bn_composite.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "core/text/dprint.h"

namespace kiln {
namespace {

Tensor Values(DType dtype, Shape shape, double start, double step) {
  std::vector<double> v(ShapeSize(shape));
  for (size_t k = 0; k < v.size(); ++k) v[k] = start + step * static_cast<double>(k);
  return *Tensor::FromValues<double>(dtype, std::move(shape), v);
}

TEST(BNCompositeTest, PrintsAsAesarasElemwiseComposite) {
  const Var x = dmatrix("x"), m = dvector("m"), s = dvector("s"), g = dvector("g"),
            b = dvector("b");
  const Var y = bn_composite(x, m, s, g, b);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->type()->ToString(), "TensorType(float64, (?, ?))");
  // Aesara 2.9.4's dprint of batch_normalization(x, g, b, m, s, mode="low_mem") on these types.
  EXPECT_EQ(DebugPrint({y}),
            "Elemwise{Composite{((((i0 - i1) / i2) * i3) + i4)}} [id A]\n"
            " |x [id B]\n"
            " |InplaceDimShuffle{x,0} [id C]\n"
            " | |m [id D]\n"
            " |InplaceDimShuffle{x,0} [id E]\n"
            " | |s [id F]\n"
            " |InplaceDimShuffle{x,0} [id G]\n"
            " | |g [id H]\n"
            " |InplaceDimShuffle{x,0} [id I]\n"
            "   |b [id J]\n");
  const Op& op = y->owner()->op();
  EXPECT_EQ(op.type_name(), "BNComposite");
  absl::StatusOr<OpPtr> again = MakeOp("BNComposite", op.Attrs());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == op);
  EXPECT_EQ((*again)->Hash(), op.Hash());
  // The dtype prop is the declared one; the output's follows the inputs' (Aesara: a float32 x
  // with float64 parameters gives float64, all-integer inputs float64 through true_divide).
  EXPECT_FALSE(**MakeOp("BNComposite", {{"dtype", std::string("float32")}}) == op);
  EXPECT_EQ(bn_composite(fmatrix(), dvector(), dvector(), dvector(), dvector())->type()->ToString(),
            "TensorType(float64, (?, ?))");
  EXPECT_EQ(bn_composite(fmatrix(), fvector(), fvector(), fvector(), fvector())->type()->ToString(),
            "TensorType(float32, (?, ?))");
  EXPECT_EQ(bn_composite(imatrix(), ivector(), ivector(), ivector(), ivector())->type()->ToString(),
            "TensorType(float64, (?, ?))");
  // Static dims broadcast as Elemwise's.
  EXPECT_EQ(
      bn_composite(tensor(DType::kFloat64, {4, 3}), dvector(), dvector(), dvector(), dvector())
          ->type()
          ->ToString(),
      "TensorType(float64, (4, 3))");
}

// Values against the formula, shapes inferred, for float64 and float32, parameters as rows and
// as full tensors.
TEST(BNCompositeTest, ValuesAndShapes) {
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    const Var x = tensor(dtype, {std::nullopt, std::nullopt, std::nullopt}, "x");
    const Var m = tensor(dtype, {std::nullopt}), s = tensor(dtype, {std::nullopt}),
              g = tensor(dtype, {1, std::nullopt, std::nullopt}),
              b = tensor(dtype, {std::nullopt, std::nullopt, std::nullopt});
    const Var y = bn_composite(x, m, s, g, b);
    ASSERT_TRUE(y.ok()) << y.status();
    absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(y);
    ASSERT_TRUE(dims.ok()) << dims.status();
    std::vector<Var> outs = {y};
    for (const VariablePtr& d : *dims) outs.push_back(d);
    auto f = function({x, m, s, g, b}, outs);
    ASSERT_TRUE(f.ok()) << f.status();
    const Tensor xv = Values(dtype, {2, 3, 4}, -1.0, 0.25), mv = Values(dtype, {4}, 0.1, 0.2),
                 sv = Values(dtype, {4}, 0.5, 0.5), gv = Values(dtype, {1, 3, 4}, 2.0, -0.1),
                 bv = Values(dtype, {2, 3, 4}, 0.0, 0.05);
    auto r = (*f)({xv, mv, sv, gv, bv});
    ASSERT_TRUE(r.ok()) << r.status();
    const Tensor& out = (*r)[0];
    ASSERT_EQ(out.shape(), (Shape{2, 3, 4}));
    EXPECT_EQ(out.dtype(), dtype);
    for (int64_t k = 0; k < out.size(); ++k) {
      const int64_t c = k % 4, j = (k / 4) % 3;
      const double want = (xv.ElementAsDouble(k) - mv.ElementAsDouble(c)) / sv.ElementAsDouble(c) *
                              gv.ElementAsDouble(j * 4 + c) +
                          bv.ElementAsDouble(k);
      EXPECT_NEAR(out.ElementAsDouble(k), want, dtype == DType::kFloat32 ? 1e-5 : 1e-12) << k;
    }
    EXPECT_EQ(ScalarInt((*r)[1]), 2);
    EXPECT_EQ(ScalarInt((*r)[2]), 3);
    EXPECT_EQ(ScalarInt((*r)[3]), 4);
  }
}

// BNComposite.grad by finite differences, every input, broadcast parameters included.
TEST(BNCompositeTest, GradientMatchesFiniteDifferences) {
  const std::vector<Tensor> pt = {
      Values(DType::kFloat64, {3, 4}, -1.0, 0.3), Values(DType::kFloat64, {1, 4}, 0.1, 0.2),
      Values(DType::kFloat64, {1, 4}, 0.7, 0.4), Values(DType::kFloat64, {3, 4}, 1.5, -0.1),
      Values(DType::kFloat64, {1, 4}, 0.2, 0.1)};
  const absl::Status s = verify_grad(
      [](const std::vector<Var>& in) { return bn_composite(in[0], in[1], in[2], in[3], in[4]); },
      pt);
  EXPECT_TRUE(s.ok()) << s;
  // The gradient graph is Aesara's formulas: d/dx = (gz * gamma) / std.
  const Var x = dmatrix("x"), m = dmatrix("m"), sd = dmatrix("s"), g = dmatrix("g"),
            b = dmatrix("b");
  const Var y = bn_composite(x, m, sd, g, b);
  const std::vector<Var> gz = {dmatrix("gz")};
  const std::vector<Var> grads = y->owner()->op().LOp(*y->owner(), gz);
  ASSERT_EQ(grads.size(), 5u);
  EXPECT_EQ(DebugPrint({grads[0]}),
            "Elemwise{true_divide,no_inplace} [id A]\n"
            " |Elemwise{mul,no_inplace} [id B]\n"
            " | |gz [id C]\n"
            " | |g [id D]\n"
            " |s [id E]\n");
  EXPECT_EQ(grads[4].ptr(), gz[0].ptr());
}

TEST(BNCompositeTest, Errors) {
  const Var x = dmatrix("x"), v = dvector("v");
  const OpPtr op = std::make_shared<BNComposite>();
  EXPECT_EQ(ApplyOp(op, {x, v, v, v}).status().message(),
            "Elemwise{Composite{((((i0 - i1) / i2) * i3) + i4)}}: BNComposite expects 5 inputs "
            "(x, mean, std, gamma, beta), got 4");
  EXPECT_EQ(ApplyOp(op, {x, v, x, x, x}).status().message(),
            "Elemwise{Composite{((((i0 - i1) / i2) * i3) + i4)}}: input 1 (mean) has type "
            "TensorType(float64, (?,)) but input 0 (x) has TensorType(float64, (?, ?)): the "
            "inputs must have one rank");
  EXPECT_EQ(ApplyOp(op, {x, x, x, disconnected_type(), x}).status().message(),
            "Elemwise{Composite{((((i0 - i1) / i2) * i3) + i4)}}: input 3 (gamma) has type "
            "DisconnectedType, which is not a TensorType");
  EXPECT_EQ(ApplyOp(op, {x, x, x, zmatrix(), x}).status().message(),
            "Elemwise{Composite{((((i0 - i1) / i2) * i3) + i4)}}: input 3 (gamma) has type "
            "TensorType(complex128, (?, ?)): complex values are not supported");
  // Static shapes that do not broadcast are refused as Elemwise refuses them.
  const Var bad =
      bn_composite(tensor(DType::kFloat64, {2, 3}), tensor(DType::kFloat64, {2, 4}), x, x, x);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("do not broadcast"), std::string::npos) << bad.status();
  // At run time, too.
  const Var m = dmatrix("m");
  auto f = function({x, m}, {bn_composite(x, m, x, x, x)});
  ASSERT_TRUE(f.ok()) << f.status();
  const absl::StatusOr<std::vector<Tensor>> r =
      (*f)({Tensor::Zeros(DType::kFloat64, {2, 3}), Tensor::Zeros(DType::kFloat64, {2, 4})});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace kiln
