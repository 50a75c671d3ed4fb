// OpFromGraph: Aesara's docstring example and its values, the gradient (Aesara 2.9.4's figures
// and finite differences), inlining, dprint, the wire form, shapes and the type error.
#include "core/builders/op_from_graph.h"

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "gtest/gtest.h"
#include "tests/testing/eval.h"

namespace kiln {
namespace {

using testing::Eval;

Tensor Scalar(double v) { return *Tensor::FromValues<double>(DType::kFloat64, {}, {&v, 1}); }

std::vector<Var> Call(const OpPtr& op, const std::vector<Var>& inputs) {
  std::vector<VariablePtr> in;
  for (const Var& v : inputs) in.push_back(v.ptr());
  absl::StatusOr<ApplyPtr> node = op->MakeNode(in);
  EXPECT_TRUE(node.ok()) << node.status();
  if (!node.ok()) return {Var(node.status())};
  std::vector<Var> out;
  for (const VariablePtr& o : (*node)->outputs()) out.push_back(Var(o));
  return out;
}

struct Example {
  Var x = dscalar("x"), y = dscalar("y"), z = dscalar("z");
  OpPtr op;
  Var e2;
  explicit Example(bool inline_) {
    op = *op_from_graph({x, y, z}, {x + y * z}, inline_);
    e2 = Call(op, {x, y, z})[0] + Call(op, {z, y, x})[0];
  }
};

// The docstring's first example: 12 at (1, 2, 3), and grad (3, 4, 3), as Aesara 2.9.4 computes.
TEST(OpFromGraphTest, TheDocstringExampleAndItsGradient) {
  for (bool inline_ : {false, true}) {
    Example ex(inline_);
    EXPECT_EQ(ex.op->Name(), inline_ ? "OpFromGraph{inline=True}" : "OpFromGraph{inline=False}");
    absl::StatusOr<std::vector<Var>> g = grad(ex.e2, {ex.x, ex.y, ex.z});
    ASSERT_TRUE(g.ok()) << g.status();
    std::vector<Var> outs = {ex.e2};
    outs.insert(outs.end(), g->begin(), g->end());
    const std::vector<Tensor> v = Eval({ex.x, ex.y, ex.z}, outs, {Scalar(1), Scalar(2), Scalar(3)});
    ASSERT_EQ(v.size(), 4u);
    EXPECT_EQ(v[0].ElementAsDouble(0), 12);
    EXPECT_EQ(v[1].ElementAsDouble(0), 3);
    EXPECT_EQ(v[2].ElementAsDouble(0), 4);
    EXPECT_EQ(v[3].ElementAsDouble(0), 3);
  }
}

TEST(OpFromGraphTest, InlineOnesAreExpandedAtCompileTime) {
  for (bool inline_ : {false, true}) {
    Example ex(inline_);
    absl::StatusOr<Function> f = function({ex.x, ex.y, ex.z}, {ex.e2});
    ASSERT_TRUE(f.ok()) << f.status();
    int ofg = 0;
    for (Apply* node : f->fgraph().Toposort()) ofg += node->op().Is<OpFromGraph>();
    EXPECT_EQ(ofg, inline_ ? 0 : 2) << inline_;
  }
}

TEST(OpFromGraphTest, GradientMatchesFiniteDifferences) {
  const Var a = dmatrix("a"), b = dmatrix("b");
  OpPtr op = *op_from_graph({a, b}, {tanh(dot(a, b)) * 2.0, sum(exp(a))});
  auto fun = [&](const std::vector<Var>& in) {
    std::vector<Var> out = Call(op, in);
    return sum(out[0]) + out[1];
  };
  const Tensor av = *Tensor::Of<double>(DType::kFloat64, {2, 2}, {0.1, -0.4, 0.3, 0.2});
  const Tensor bv = *Tensor::Of<double>(DType::kFloat64, {2, 2}, {0.5, 0.7, -0.2, 0.9});
  EXPECT_TRUE(verify_grad(fun, {av, bv}).ok());
}

// Aesara 2.9.4's dprint of the docstring example.
TEST(OpFromGraphTest, DprintShowsTheInnerGraph) {
  Example ex(false);
  EXPECT_EQ(DebugPrint({ex.e2}),
            "Elemwise{add,no_inplace} [id A]\n"
            " |OpFromGraph{inline=False} [id B]\n"
            " | |x [id C]\n"
            " | |y [id D]\n"
            " | |z [id E]\n"
            " |OpFromGraph{inline=False} [id F]\n"
            "   |z [id E]\n"
            "   |y [id D]\n"
            "   |x [id C]\n"
            "\n"
            "Inner graphs:\n"
            "\n"
            "OpFromGraph{inline=False} [id B]\n"
            " >Elemwise{add,no_inplace} [id G]\n"
            " > |*0-<TensorType(float64, ())> [id H]\n"
            " > |Elemwise{mul,no_inplace} [id I]\n"
            " >   |*1-<TensorType(float64, ())> [id J]\n"
            " >   |*2-<TensorType(float64, ())> [id K]\n"
            "\n"
            "OpFromGraph{inline=False} [id F]\n"
            " >Elemwise{add,no_inplace} [id G]\n");
}

TEST(OpFromGraphTest, WireFormShapesAndErrors) {
  const Var a = dmatrix("a"), b = dmatrix("b");
  OpPtr op = *op_from_graph({a, b}, {a + b, dot(a, b)}, false, "myop");
  EXPECT_EQ(op->Name(), "myop{inline=False}");
  absl::StatusOr<OpPtr> remade = MakeOp("OpFromGraph", op->Attrs());
  ASSERT_TRUE(remade.ok()) << remade.status();
  EXPECT_EQ(**remade, *op);
  const Var m = dmatrix("m"), n = dmatrix("n");
  std::vector<Var> out = Call(*remade, {m, n});
  const Tensor mv = *Tensor::Of<double>(DType::kFloat64, {2, 2}, {1, 2, 3, 4});
  const Tensor nv = *Tensor::Of<double>(DType::kFloat64, {2, 2}, {1, 0, 1, 1});
  absl::StatusOr<ShapeVars> shape = infer_shape(out[1]);
  ASSERT_TRUE(shape.ok()) << shape.status();
  const std::vector<Tensor> v =
      Eval({m, n}, {out[1], Var((*shape)[0]), Var((*shape)[1])}, {mv, nv});
  EXPECT_EQ(v[0].ToString(), "[[3. 2.]\n [7. 4.]]");
  EXPECT_EQ(v[1].ElementAsDouble(0), 2);
  EXPECT_EQ(v[2].ElementAsDouble(0), 2);
  absl::StatusOr<ApplyPtr> bad = op->MakeNode({dscalar("s").ptr(), n.ptr()});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "myop{inline=False}: input 0: Cannot convert Type TensorType(float64, ()) (of "
            "Variable s) into Type TensorType(float64, (?, ?)). You can try to manually convert s "
            "into a TensorType(float64, (?, ?)).");
  EXPECT_FALSE(op_from_graph({a}, {a + b}).ok());  // b is neither an input nor a constant
}

// Inputs that know their shape (an inner input of shape (?,) given one of (3,)): the node, its
// gradient (own and overridden), shape and inlined form take them.
TEST(OpFromGraphTest, InputsOfMorePreciseTypes) {
  const Var x = dvector("x"), gx = dvector("gx");
  const Var a = tensor(DType::kFloat64, {3}, "a");
  const Tensor av = *Tensor::Of<double>(DType::kFloat64, {3}, {1, 2, 3});
  for (bool inline_ : {false, true}) {
    const OpPtr own = *op_from_graph({x}, {x * x}, inline_);
    const OpPtr overridden = *op_from_graph_with_grad({x}, {x * x}, {gx}, {gx * 10.0}, inline_);
    const Var y = Call(own, {a})[0], z = Call(overridden, {a})[0];
    absl::StatusOr<std::vector<Var>> g = grad(sum(y) + sum(z), std::vector<Var>{a});
    ASSERT_TRUE(g.ok()) << g.status();
    absl::StatusOr<ShapeVars> shape = infer_shape(y);
    ASSERT_TRUE(shape.ok()) << shape.status();
    const std::vector<Tensor> v = Eval({a}, {y + z, (*g)[0], Var((*shape)[0])}, {av});
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].ToString(), "[ 2.  8. 18.]");
    EXPECT_EQ(v[1].ToString(), "[12. 14. 16.]");  // 2a + 10
    EXPECT_EQ(v[2].ElementAsDouble(0), 3);
  }
}

// Aesara's grad_overrides: the gradient is an OpFromGraph "<name>_grad" of (inputs, outputs,
// output gradients) computing the override, not the inner graph's own gradient; a disconnected
// output's gradient comes in as zeros. It travels with the op (the `grad` attribute).
TEST(OpFromGraphTest, GradientOverride) {
  const Var x = dvector("x"), t = dvector("t");
  const Var gu = dvector("gu"), gv = dvector("gv");
  // Outputs u = x * t and v = x + t; the override says du/dx = 3, du/dt = 5 and dv/dx = 7,
  // dv/dt = 0 (times the output gradients), which the formulas do not.
  absl::StatusOr<std::shared_ptr<const OpFromGraph>> op = op_from_graph_with_grad(
      {x, t}, {x * t, x + t}, {gu, gv}, {gu * 3.0 + gv * 7.0, gu * 5.0}, false, "pair");
  ASSERT_TRUE(op.ok()) << op.status();
  absl::StatusOr<OpPtr> remade = MakeOp("OpFromGraph", (*op)->Attrs());
  ASSERT_TRUE(remade.ok()) << remade.status();
  EXPECT_EQ(**remade, **op);
  const Var a = dvector("a"), b = dvector("b");
  for (const OpPtr& used : {OpPtr(*op), *remade}) {
    const std::vector<Var> out = Call(used, {a, b});
    absl::StatusOr<std::vector<Var>> g = grad(sum(out[0] * 2.0), {a, b});  // v disconnected
    ASSERT_TRUE(g.ok()) << g.status();
    ASSERT_NE((*g)[0]->owner(), nullptr);
    EXPECT_EQ((*g)[0]->owner()->op().Name(), "pair_grad{inline=False}");
    absl::StatusOr<std::vector<Var>> both = grad(sum(out[0]) + sum(out[1]), {a, b});
    ASSERT_TRUE(both.ok()) << both.status();
    const Tensor av = *Tensor::Of<double>(DType::kFloat64, {2}, {1, -2});
    const Tensor bv = *Tensor::Of<double>(DType::kFloat64, {2}, {4, 0.5});
    const std::vector<Tensor> v =
        Eval({a, b}, {out[0], (*g)[0], (*g)[1], (*both)[0], (*both)[1]}, {av, bv});
    const std::vector<std::string> want = {"[ 4. -1.]", "[6. 6.]", "[10. 10.]", "[10. 10.]",
                                           "[5. 5.]"};  // u, its gradients, u + v's
    ASSERT_EQ(v.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(v[i].ToString(), want[i]) << i;
  }
  // An unnamed op's gradient op is unnamed too.
  absl::StatusOr<std::shared_ptr<const OpFromGraph>> plain =
      op_from_graph_with_grad({x, t}, {x * t}, {gu}, {gu, gu}, true);
  ASSERT_TRUE(plain.ok()) << plain.status();
  absl::StatusOr<std::vector<Var>> g = grad(sum(Call(*plain, {a, b})[0]), std::vector<Var>{a});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)[0]->owner()->op().Name(), "OpFromGraph{inline=True}");
  // An override that does not give one gradient per input is refused.
  absl::StatusOr<std::shared_ptr<const OpFromGraph>> bad =
      op_from_graph_with_grad({x, t}, {x * t}, {gu}, {gu}, false, "short");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "short{inline=False}: the gradient override takes 4 input(s) to 1 output(s); 4 "
            "inputs (inputs, outputs, output gradients) to 2 gradients are needed");
}

// The op of `inputs` -> `outputs` with these attributes added (the override graphs as texts).
std::shared_ptr<const OpFromGraph> WithAttrs(const std::vector<Var>& inputs,
                                             const std::vector<Var>& outputs,
                                             OpFromGraphAttrs extra) {
  std::shared_ptr<const OpFromGraph> plain = *op_from_graph(inputs, outputs, false, "f");
  extra.inner = plain->attrs().inner;
  extra.name = "f";
  absl::StatusOr<std::shared_ptr<const OpFromGraph>> op = OpFromGraph::Make(std::move(extra));
  EXPECT_TRUE(op.ok()) << op.status();
  return op.ok() ? *op : plain;
}

std::string Text(const std::vector<Var>& inputs, const std::vector<Var>& outputs) {
  std::vector<VariablePtr> in, out;
  for (const Var& v : inputs) in.push_back(v.ptr());
  for (const Var& v : outputs) out.push_back(v.ptr());
  return *EncodeInnerGraph(in, out);
}

// lop_overrides as Aesara's list ['default', DisconnectedType()()] and ['default', NullType()()]:
// the kinds replace the gradient op's outputs; a disconnected input is so in the connection
// pattern (grad refuses it, or gives zeros with disconnected_inputs=ignore), a null one raises.
TEST(OpFromGraphTest, GradientKinds) {
  const Var x = dvector("x"), y = dvector("y"), o = dvector("o"), g = dvector("g");
  const Var e = x * y + exp(x);
  // The gradient graph of (x, y, o, g): x's default (g * (y + exp(x))), zeros for y.
  const std::string grad_text = Text({x, y, o, g}, {g * (y + exp(x)), zeros_like(y)});
  const Tensor xv = *Tensor::Of<double>(DType::kFloat64, {2}, {0.5, -1.0});
  const Tensor yv = *Tensor::Of<double>(DType::kFloat64, {2}, {2.0, 3.0});
  for (int kind : {kDisconnected, kNull}) {
    OpFromGraphAttrs attrs{.grad = grad_text, .grad_kinds = {kFromGraph, kind}, .lop = true};
    if (kind == kNull) attrs.null_reasons = "y has no gradient";
    std::shared_ptr<const OpFromGraph> op = WithAttrs({x, y}, {e}, attrs);
    EXPECT_EQ(**MakeOp("OpFromGraph", op->Attrs()), *op);
    const Var a = dvector("a"), b = dvector("b");
    const Var out = Call(op, {a, b})[0];
    EXPECT_EQ(op->ConnectionPattern(*out->owner()),
              (std::vector<std::vector<bool>>{{true}, {kind != kDisconnected}}));
    const Var ga = grad(sum(out), a);
    ASSERT_TRUE(ga.ok()) << ga.status();
    EXPECT_EQ(ga->owner()->op().Name(), "f_lop{inline=False}");
    const std::vector<Tensor> v = Eval({a, b}, {ga}, {xv, yv});
    EXPECT_NEAR(v[0].ElementAsDouble(0), 2.0 + std::exp(0.5), 1e-12);
    const Var gb = grad(sum(out), b);
    ASSERT_FALSE(gb.ok());
    EXPECT_NE(
        gb.status().message().find(kind == kNull ? "y has no gradient" : "DisconnectedInputError"),
        std::string::npos)
        << gb.status();
  }
  // Kinds that do not fit are refused.
  OpFromGraphAttrs bad{.inner = op_from_graph({x, y}, {e}).value()->attrs().inner,
                       .grad = grad_text,
                       .grad_kinds = {0, 5}};
  EXPECT_EQ(OpFromGraph::Make(bad).status().message(),
            "OpFromGraph{inline=False}: grad_kinds[1] is 5; 0 (the graph's), 1 (disconnected) or "
            "2 (null) are meant");
  bad.grad_kinds = {0};
  EXPECT_EQ(OpFromGraph::Make(bad).status().message(),
            "OpFromGraph{inline=False}: grad_kinds has 1 entries for 2 input(s)");
  bad.grad_kinds = {0, kNull};
  EXPECT_EQ(OpFromGraph::Make(bad).status().message(),
            "OpFromGraph{inline=False}: null_reasons has fewer lines than null entries");
}

// rop_overrides: the R_op graph of (x, y, eval points) travels with the gradient op (the
// inner graph's own, "f_lop"), whose gradient with respect to the output gradients is that
// R_op, so Rop gives the override's values (here 3 u + x v, not y u + x v), also through an
// expression feeding the op; the gradient itself stays the inner graph's.
TEST(OpFromGraphTest, RopOverride) {
  const Var x = dvector("x"), y = dvector("y"), ex = dvector("ex"), ey = dvector("ey");
  const std::string rop_text = Text({x, y, ex, ey}, {ex * 3.0 + x * ey});
  std::shared_ptr<const OpFromGraph> op = WithAttrs({x, y}, {x * y}, {.rop = rop_text});
  EXPECT_EQ(**MakeOp("OpFromGraph", op->Attrs()), *op);
  const Var a = dvector("a"), b = dvector("b"), u = dvector("u"), v = dvector("v");
  const Var out = Call(op, {a * a, b})[0];
  absl::StatusOr<std::vector<Var>> r = Rop({out}, {a, b}, {u, v});
  ASSERT_TRUE(r.ok()) << r.status();
  const Var ga = grad(sum(out), a), gb = grad(sum(out), b);
  ASSERT_TRUE(ga.ok()) << ga.status();
  ASSERT_TRUE(gb.ok()) << gb.status();
  EXPECT_EQ(gb->owner()->op().Name(), "f_lop{inline=False}");
  const Tensor av = *Tensor::Of<double>(DType::kFloat64, {2}, {1.0, -2.0});
  const Tensor bv = *Tensor::Of<double>(DType::kFloat64, {2}, {3.0, 0.5});
  const Tensor uv = *Tensor::Of<double>(DType::kFloat64, {2}, {1.0, 2.0});
  const Tensor vv = *Tensor::Of<double>(DType::kFloat64, {2}, {-1.0, 4.0});
  const std::vector<Tensor> got = Eval({a, b, u, v}, {(*r)[0], ga}, {av, bv, uv, vv});
  // R = 3 (2 a u) + a^2 v; the gradient 2 a b.
  EXPECT_EQ(got[0].ToString(), "[ 5. -8.]");
  EXPECT_EQ(got[1].ToString(), "[ 6. -2.]");
  // An R_op graph of the wrong arity, and the internal flag on an op it does not fit.
  EXPECT_EQ(
      OpFromGraph::Make({.inner = op->attrs().inner, .rop = Text({x, y}, {x})}).status().message(),
      "OpFromGraph{inline=False}: the R_op override takes 2 input(s) to 1 output(s); 4 "
      "inputs (inputs, eval points) to 1 R_op results are needed");
  EXPECT_EQ(OpFromGraph::Make({.inner = op->attrs().inner, .rop = rop_text, .rop_transposed = true})
                .status()
                .message(),
            "OpFromGraph{inline=False}: rop_transposed is set on an op that is not the gradient "
            "of an OpFromGraph with an R_op override");
}

// Aesara's connection_pattern argument is the op's pattern, checked for its size.
TEST(OpFromGraphTest, GivenConnectionPattern) {
  const Var x = dvector("x"), y = dvector("y");
  std::shared_ptr<const OpFromGraph> op =
      WithAttrs({x, y}, {x * 2.0 + y, y}, {.connections = {1, 0, 0, 1}});
  const std::vector<Var> out = Call(op, {x, y});
  EXPECT_EQ(op->ConnectionPattern(*out[0]->owner()),
            (std::vector<std::vector<bool>>{{true, false}, {false, true}}));
  EXPECT_EQ(
      OpFromGraph::Make({.inner = op->attrs().inner, .connections = {1, 0}}).status().message(),
      "OpFromGraph{inline=False}: connections (the connection pattern) has 2 entries; 2 "
      "input(s) x 2 output(s) are needed");
  // Without one: an input the inner graph does not read is disconnected (Aesara's
  // io_connection_pattern).
  std::shared_ptr<const OpFromGraph> unused = *op_from_graph({x, y}, {x * 2.0});
  EXPECT_EQ(unused->ConnectionPattern(*Call(unused, {x, y})[0]->owner()),
            (std::vector<std::vector<bool>>{{true}, {false}}));
}

// What a hostile client could send: OpFromGraphs nested past the limit fail with a clear error,
// and an inner graph of 100,000 nodes is carried, compiled and run (the codec is iterative).
TEST(OpFromGraphTest, NestingIsBoundedAndHugeInnerGraphsWork) {
  const Var x = dvector("x");
  Var y = x;
  absl::Status error;
  for (int depth = 1; depth <= kMaxInnerGraphDepth + 2 && error.ok(); ++depth) {
    absl::StatusOr<std::shared_ptr<const OpFromGraph>> op = op_from_graph({x}, {y * 2.0});
    if (!op.ok()) {
      error = op.status();
      EXPECT_GT(depth, kMaxInnerGraphDepth);
      break;
    }
    y = Call(*op, {x})[0];
  }
  EXPECT_EQ(error.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(error.message().find("nest"), std::string::npos) << error;
  Var chain = x;
  for (int i = 0; i < 100000; ++i) chain = chain + 1.0;
  absl::StatusOr<std::shared_ptr<const OpFromGraph>> big = op_from_graph({x}, {chain});
  ASSERT_TRUE(big.ok()) << big.status();
  absl::StatusOr<OpPtr> remade = MakeOp("OpFromGraph", (*big)->Attrs());
  ASSERT_TRUE(remade.ok()) << remade.status();
  const Tensor one = *Tensor::Of<double>(DType::kFloat64, {1}, {1});
  const std::vector<Tensor> v = Eval({x}, {Call(*remade, {x})[0]}, {one});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].ElementAsDouble(0), 100001);
}

}  // namespace
}  // namespace kiln
