// Blockwise against PyTensor 2.34 (tests/golden/pytensor_blockwise.txt, written by
// tests/golden/gen_blockwise_cases.py): printed names, values from contiguous and strided
// batched inputs, inferred shapes; then the signature parser, static types, the wire form, the
// gradient by finite differences, vectorize_graph, the unbatched rewrite and every error.
#include "core/ops/blockwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/linalg.h"
#include "core/ops/nlinalg.h"
#include "core/ops/op_util.h"
#include "tests/testing/numpy_cases.h"
#include "tests/testing/op_cases.h"
#include "tests/testing/rewrite_check.h"

namespace kiln {
namespace {

OpPtr MakeBlockwise(OpPtr core, const std::string& sig) {
  absl::StatusOr<std::shared_ptr<const Blockwise>> op = Blockwise::Make(std::move(core), sig);
  EXPECT_TRUE(op.ok()) << op.status();
  return op.ok() ? OpPtr(*op) : nullptr;
}

// Every op the golden file names.
std::vector<OpPtr> Candidates() {
  return {MakeBlockwise(std::make_shared<Det>(), "(m,m)->()"),
          MakeBlockwise(std::make_shared<MatrixInverse>(), "(m,m)->(m,m)"),
          MakeBlockwise(std::make_shared<SLogDet>(), "(m,m)->(),()"),
          MakeBlockwise(std::make_shared<Dot>(), "(m,n),(n,k)->(m,k)")};
}

void ExpectClose(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(got.dtype(), want.dtype());
  const std::vector<double> g = testing::Elements(got), w = testing::Elements(want);
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << "element " << i;
  }
}

TEST(BlockwiseTest, MatchesPyTensor) {
  const std::vector<OpPtr> candidates = Candidates();
  int checked = 0;
  for (const auto& c : testing::ReadCases("tests/golden/pytensor_blockwise.txt")) {
    SCOPED_TRACE(absl::StrJoin(c, "|").substr(0, 120));
    // Kiln prints Dot as Aesara does ("dot"); PyTensor prints "Dot".
    const std::string name = absl::StrReplaceAll(c[0], {{"{Dot,", "{dot,"}});
    OpPtr op;
    for (const OpPtr& o : candidates) {
      if (o->Name() == name) op = o;
    }
    ASSERT_NE(op, nullptr) << "no op is named " << name;
    testing::OpCase oc{.name = name, .op = op, .broadcastable = true};
    for (size_t f = 1; f + 3 < c.size() + 1; f += 4) {
      (c[f] == "in" ? oc.in : oc.want).push_back(testing::MakeTensor(c[f + 1], c[f + 2], c[f + 3]));
    }
    const double tol = oc.want[0].dtype() == DType::kFloat32 ? 1e-5 : 1e-12;
    bool done = false;
    testing::CheckOpCase(
        oc, [&](const testing::OpCase& k, size_t i, const Tensor& got) {
          ExpectClose(got, k.want[i], tol);
        },
        done);
    ASSERT_TRUE(done);
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST(BlockwiseTest, SignatureParser) {
  auto sig = ParseGufuncSignature(" (m, n),(n,k) -> (m,k) ");
  ASSERT_TRUE(sig.ok()) << sig.status();
  EXPECT_EQ(sig->ToString(), "(m,n),(n,k)->(m,k)");
  EXPECT_EQ(sig->inputs.size(), 2u);
  EXPECT_EQ(sig->outputs[0], (std::vector<std::string>{"m", "k"}));
  EXPECT_EQ(ParseGufuncSignature("()->(),()")->ToString(), "()->(),()");
  EXPECT_EQ(ParseGufuncSignature("(m,m)").status().message(),
            "not a valid gufunc signature: '(m,m)' (expected '->')");
  EXPECT_EQ(ParseGufuncSignature("(m,)->()").status().message(),
            "not a valid gufunc signature: '(m,)->()' (expected a dimension name)");
  EXPECT_EQ(ParseGufuncSignature("m->()").status().message(),
            "not a valid gufunc signature: 'm->()' (expected '(')");
  EXPECT_EQ(ParseGufuncSignature("(m)->(m)x").status().message(),
            "not a valid gufunc signature: '(m)->(m)x' (unexpected text after the outputs)");
  EXPECT_EQ(ParseGufuncSignature("(m;n)->()").status().message(),
            "not a valid gufunc signature: '(m;n)->()' (expected ',' or ')')");
  EXPECT_FALSE(ParseGufuncSignature(std::string(5000, '(')).ok());
}

TEST(BlockwiseTest, NamesTypesAndWireForm) {
  const OpPtr inv = MakeBlockwise(std::make_shared<MatrixInverse>(), "(m, m) -> (m, m)");
  EXPECT_EQ(inv->Name(), "Blockwise{MatrixInverse, (m,m)->(m,m)}");
  // Static batch dims broadcast: 5 against 1 is 5, unknown against 1 unknown, 1 against 1 is 1.
  const OpPtr mm = MakeBlockwise(std::make_shared<Dot>(), "(m,n),(n,k)->(m,k)");
  const Var a = tensor(DType::kFloat64, {5, std::nullopt, 1, 2, 3});
  const Var b = tensor(DType::kFloat32, {1, 1, 3, 4});
  const Var y = ApplyOp(mm, {a, b});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y.type().ToString(), "TensorType(float64, (5, ?, 1, 2, 4))");
  // Registry round trip.
  absl::StatusOr<OpPtr> again = MakeOp("Blockwise", mm->Attrs());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(**again, *mm);
  EXPECT_EQ((*again)->Name(), "Blockwise{dot, (m,n),(n,k)->(m,k)}");
  EXPECT_EQ(mm->Attrs().Text(), "core=s3:Dot;core_attrs=s0:;signature=s18:(m,n),(n,k)->(m,k);");
  EXPECT_NE(*inv, *mm);
  // An op with props keeps them.
  const OpPtr pinv =
      MakeBlockwise(std::make_shared<MatrixPinv>(MatrixPinvAttrs{true}), "(m,n)->(n,m)");
  absl::StatusOr<OpPtr> pinv2 = MakeOp("Blockwise", pinv->Attrs());
  ASSERT_TRUE(pinv2.ok()) << pinv2.status();
  EXPECT_EQ((*pinv2)->Name(), "Blockwise{MatrixPinv{hermitian=True}, (m,n)->(n,m)}");
}

TEST(BlockwiseTest, Errors) {
  const OpPtr det_b = MakeBlockwise(std::make_shared<Det>(), "(m,m)->()");
  const OpPtr mm = MakeBlockwise(std::make_shared<Dot>(), "(m,n),(n,k)->(m,k)");
  EXPECT_EQ(ApplyOp(det_b, {dvector("v")}).status().message(),
            "Blockwise{Det, (m,m)->()}: input 0 has type TensorType(float64, (?,)) but its core "
            "dims (m,m) need a tensor of at least 2 dims");
  EXPECT_EQ(ApplyOp(det_b, {dmatrix("a"), dmatrix("b")}).status().message(),
            "Blockwise{Det, (m,m)->()}: expects 1 inputs, got 2");
  EXPECT_EQ(ApplyOp(mm, {tensor(DType::kFloat64, {2, 3}), tensor(DType::kFloat64, {4, 5})})
                .status()
                .message(),
            "Blockwise{dot, (m,n),(n,k)->(m,k)}: core dim 'n' is 3 in input 0 (type "
            "TensorType(float64, (2, 3))) but 4 in input 1 (type TensorType(float64, (4, 5)))");
  EXPECT_EQ(ApplyOp(mm, {tensor(DType::kFloat64, {2, std::nullopt, std::nullopt}),
                         tensor(DType::kFloat64, {3, std::nullopt, std::nullopt})})
                .status()
                .message(),
            "Blockwise{dot, (m,n),(n,k)->(m,k)}: the batch dims of input 0 (type "
            "TensorType(float64, (2, ?, ?))) and input 1 (type TensorType(float64, (3, ?, ?))) "
            "do not broadcast");
  EXPECT_EQ(ApplyOp(MakeBlockwise(std::make_shared<Det>(), "(m,m)->(),()"), {dtensor3("x")})
                .status()
                .message(),
            "Blockwise{Det, (m,m)->(),()}: the core op has 1 outputs but the signature names 2");
  EXPECT_EQ(ApplyOp(MakeBlockwise(std::make_shared<Det>(), "(m,m)->(m)"), {dtensor3("x")})
                .status()
                .message(),
            "Blockwise{Det, (m,m)->(m)}: the core op's output 0 has type TensorType(float64, ()) "
            "but the signature's output is (m)");
  EXPECT_EQ(Blockwise::Make(std::make_shared<Det>(), "(m,m)").status().message(),
            "Blockwise{Det}: not a valid gufunc signature: '(m,m)' (expected '->')");
  EXPECT_EQ(Blockwise::Make(det_b, "(m,m)->()").status().message(),
            "Blockwise: the core op Blockwise{Det, (m,m)->()} is a Blockwise; give its own core "
            "op");
  // Wire attributes from an untrusted client.
  EXPECT_FALSE(MakeOp("Blockwise", OpAttrs{{"core", std::string("Blockwise")}}).ok());
  EXPECT_EQ(MakeOp("Blockwise", OpAttrs{{"core", std::string("Det")},
                                        {"core_attrs", std::string("x=q1;")},
                                        {"signature", std::string("(m,m)->()")}})
                .status()
                .message(),
            "Blockwise: attribute 'core_attrs' is malformed");
  EXPECT_FALSE(MakeOp("Blockwise", OpAttrs{{"core", std::string("NoSuchOp")},
                                           {"signature", std::string("(m,m)->()")}})
                   .ok());

  // Run time: batch dims that do not broadcast, a length-1 dim not typed so, core dims that differ.
  auto run = [&](const OpPtr& op, std::vector<Var> in, std::vector<Tensor> args) {
    const Var y = ApplyOp(op, in);
    EXPECT_TRUE(y.ok()) << y.status();
    auto f = function(in, {y});
    EXPECT_TRUE(f.ok()) << f.status();
    return (*f)(args).status();
  };
  const Var x3 = dtensor3("x"), y3 = dtensor3("y");
  EXPECT_EQ(
      run(mm, {x3, y3},
          {Tensor::Zeros(DType::kFloat64, {2, 2, 3}), Tensor::Zeros(DType::kFloat64, {3, 3, 2})})
          .message(),
      "Blockwise{dot, (m,n),(n,k)->(m,k)}: the batch dims of input 1 (shape (3, 3, 2)) do "
      "not broadcast with the others' (2)");
  EXPECT_EQ(
      run(mm, {x3, y3},
          {Tensor::Zeros(DType::kFloat64, {2, 2, 3}), Tensor::Zeros(DType::kFloat64, {1, 3, 2})})
          .message(),
      "Blockwise{dot, (m,n),(n,k)->(m,k)}: input 1 has batch dim 0 of length 1 at run time "
      "but its type TensorType(float64, (?, ?, ?)) does not say it broadcasts (the others "
      "have 2)");
  EXPECT_EQ(
      run(mm, {x3, y3},
          {Tensor::Zeros(DType::kFloat64, {2, 2, 3}), Tensor::Zeros(DType::kFloat64, {2, 4, 2})})
          .message(),
      "Blockwise{dot, (m,n),(n,k)->(m,k)}: core dim 'n' is 3 in input 0 but 4 in input 1 "
      "(shape (2, 4, 2))");
  const Tensor singular = *Tensor::Of<double>(DType::kFloat64, {2, 2, 2}, {1, 0, 0, 1, 1, 2, 2, 4});
  EXPECT_EQ(run(MakeBlockwise(std::make_shared<MatrixInverse>(), "(m,m)->(m,m)"), {x3}, {singular})
                .message(),
            "Blockwise{MatrixInverse, (m,m)->(m,m)}: batch item 1: MatrixInverse: Singular matrix");
  // Hostile sizes: a batch of 2^48 items from an empty input, refused before allocation.
  const Var a4 = dtensor4("a"), b2 = dmatrix("b");
  const absl::Status big =
      run(mm, {a4, b2},
          {Tensor::Zeros(DType::kFloat64, {int64_t{1} << 24, int64_t{1} << 24, 2, 0}),
           Tensor::Zeros(DType::kFloat64, {0, 2})});
  EXPECT_FALSE(big.ok());
  EXPECT_TRUE(absl::StrContains(big.message(), "too large") ||
              absl::StrContains(big.message(), "bytes"))
      << big;
  EXPECT_TRUE(absl::StrContains(big.message(), "Blockwise{dot")) << big;
  // An empty batch computes nothing and has the core dims of the inputs.
  const Var e = ApplyOp(mm, {x3, y3});
  auto f = function({x3, y3}, {e});
  ASSERT_TRUE(f.ok());
  auto r =
      (*f)({Tensor::Zeros(DType::kFloat64, {0, 2, 3}), Tensor::Zeros(DType::kFloat64, {0, 3, 4})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].shape(), (Shape{0, 2, 4}));
}

// The gradient: the core op's, batched, summed where an input broadcast.
TEST(BlockwiseTest, GradientByFiniteDifferences) {
  const OpPtr inv = MakeBlockwise(std::make_shared<MatrixInverse>(), "(m,m)->(m,m)");
  const OpPtr det_b = MakeBlockwise(std::make_shared<Det>(), "(m,m)->()");
  const OpPtr mm = MakeBlockwise(std::make_shared<Dot>(), "(m,n),(n,k)->(m,k)");
  const OpPtr sld = MakeBlockwise(std::make_shared<SLogDet>(), "(m,m)->(),()");
  const Tensor mats =
      *Tensor::Of<double>(DType::kFloat64, {2, 2, 2}, {3, 1, 0.5, 2, 4, -1, 0.25, 3});
  for (const OpPtr& op : {inv, det_b}) {
    const absl::Status st =
        verify_grad([&](const std::vector<Var>& in) { return ApplyOp(op, {in[0]}); }, {mats});
    EXPECT_TRUE(st.ok()) << op->Name() << ": " << st;
  }
  // log|det| (output 1 of SLogDet).
  EXPECT_TRUE(verify_grad(
                  [&](const std::vector<Var>& in) {
                    const Var y = ApplyOp(sld, {in[0]});
                    return Var(y->owner()->output(1));
                  },
                  {mats})
                  .ok());
  // a (2, 3) has no batch dims, b (4, 3, 2) has one: a's gradient sums over b's batch.
  const Tensor a = *Tensor::Of<double>(DType::kFloat64, {2, 3}, {1, 2, 3, -1, 0.5, 2});
  std::vector<double> bv(24);
  for (int i = 0; i < 24; ++i) bv[i] = 0.1 * i - 1;
  const Tensor b = *Tensor::FromValues<double>(DType::kFloat64, {4, 3, 2}, bv);
  const absl::Status st = verify_grad(
      [&](const std::vector<Var>& in) {
        return ApplyOp(mm, {in[0], in[1]});
      },
      {a, b});
  EXPECT_TRUE(st.ok()) << st;
  // A batch dim typed 1 broadcast against 3: summed keeping the dim.
  const Var a1 = tensor(DType::kFloat64, {1, std::nullopt, std::nullopt}, "a1");
  const Var b3 = dtensor3("b3");
  const Var cost = sum(ApplyOp(mm, {a1, b3}));
  const Var ga = grad(cost, a1);
  ASSERT_TRUE(ga.ok()) << ga.status();
  EXPECT_EQ(ga.type().shape()[0], StaticDim(1));
  auto f = function({a1, b3}, {ga});
  ASSERT_TRUE(f.ok()) << f.status();
  auto r = (*f)({a.View({1, 2, 3}, {6, 3, 1}), b});
  ASSERT_TRUE(r.ok()) << r.status();
  // d sum(a @ b_i) / da = sum_i (ones(2, 2) @ b_i^T): row sums of b_i, summed over i.
  std::vector<double> want(6, 0.0);
  for (int i = 0; i < 4; ++i) {
    for (int n = 0; n < 3; ++n) {
      const double row = bv[i * 6 + n * 2] + bv[i * 6 + n * 2 + 1];
      want[n] += row;
      want[3 + n] += row;
    }
  }
  const std::vector<double> got = testing::Elements((*r)[0]);
  ASSERT_EQ(got.size(), 6u);
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(got[k], want[k], 1e-12);
}

// vectorize_graph: a core graph on a matrix recomputed for a batch of matrices.
TEST(BlockwiseTest, VectorizeGraph) {
  const Var m = dmatrix("m");
  const Var core = exp(det(m)) + sum(transpose(m) * 2.0) + trace(m);
  const Var batch = dtensor3("batch");
  absl::StatusOr<std::vector<VariablePtr>> out =
      VectorizeGraph({core.ptr()}, {{m.ptr(), batch.ptr()}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0]->tensor_type()->ndim(), 1);
  auto fb = function({batch}, {Var((*out)[0])});
  auto fc = function({m}, {core});
  ASSERT_TRUE(fb.ok()) << fb.status();
  ASSERT_TRUE(fc.ok()) << fc.status();
  const Tensor mats = *Tensor::Of<double>(DType::kFloat64, {3, 2, 2},
                                          {1, 0.5, 0.25, 1, 2, 1, 1, 2, 0.1, 0.2, 0.3, 0.4});
  auto rb = (*fb)({mats});
  ASSERT_TRUE(rb.ok()) << rb.status();
  for (int i = 0; i < 3; ++i) {
    auto rc = (*fc)({mats.View({2, 2}, {2, 1}, 4 * i).Contiguous()});
    ASSERT_TRUE(rc.ok()) << rc.status();
    EXPECT_NEAR((*rb)[0].data<double>()[i], (*rc)[0].data<double>()[0], 1e-12) << i;
  }
  EXPECT_FALSE(VectorizeGraph({core.ptr()}, {{m.ptr(), dvector("v").ptr()}}).ok());
}

// local_useless_unbatched_blockwise: no batch dims, the core op itself.
TEST(BlockwiseTest, UnbatchedBlockwiseBecomesItsCoreOp) {
  const OpPtr det_b = MakeBlockwise(std::make_shared<Det>(), "(m,m)->()");
  const Var m = dmatrix("m"), t = dtensor3("t");
  testing::Optimized o = testing::Optimize({m}, {ApplyOp(det_b, {m})});
  ASSERT_NE(o.fg, nullptr);
  std::vector<std::string> names;
  for (const Apply* node : o.fg->Toposort()) names.push_back(node->op().Name());
  EXPECT_EQ(names, (std::vector<std::string>{"Det"}));
  testing::ExpectSameValues("unbatched", {m}, {ApplyOp(det_b, {m})}, *o.fg);
  testing::Optimized kept = testing::Optimize({t}, {ApplyOp(det_b, {t})});
  ASSERT_NE(kept.fg, nullptr);
  names.clear();
  for (const Apply* node : kept.fg->Toposort()) names.push_back(node->op().Name());
  EXPECT_EQ(names, (std::vector<std::string>{"Blockwise{Det, (m,m)->()}"}));
}

}  // namespace
}  // namespace kiln
