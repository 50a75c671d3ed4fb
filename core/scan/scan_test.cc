// Scan: the loop's values against hand-computed (NumPy-checked) results for every kind of
// sequence and state, until, go_backwards, the errors users see, the inner graph's text, and
// back-propagation through time against finite differences.
#include "core/scan/scan.h"

#include "core/grad/verify_grad.h"
#include "core/graph/inner_graph.h"
#include "core/graph/op_registry.h"
#include "core/graph/traversal.h"
#include "core/kiln.h"
#include "gtest/gtest.h"
#include "tests/testing/eval.h"

namespace kiln {
namespace {

using testing::Eval;

Tensor Vec(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return *Tensor::FromValues<double>(DType::kFloat64, {n}, v);
}
Tensor Mat(int64_t r, int64_t c, std::vector<double> v) {
  return *Tensor::FromValues<double>(DType::kFloat64, {r, c}, v);
}
Tensor Int(int64_t v) {
  return *Tensor::FromValues<int64_t>(DType::kInt64, {}, std::vector<int64_t>{v});
}
std::vector<double> Values(const Tensor& t) {
  const Tensor c = t.AsType(DType::kFloat64).Contiguous();
  return std::vector<double>(c.data<double>(), c.data<double>() + c.size());
}
ScanResult Must(absl::StatusOr<ScanResult> r) {
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : ScanResult{};
}

// Aesara's tutorial's loop: A**k by iteration, the result of every step.
ScanResult PowerLoop(const Var& A, const Var& k) {
  ScanArgs args;
  args.outputs_info = {{ones_like(A)}};
  args.non_sequences = {A};
  args.n_steps = k;
  return Must(scan([](const std::vector<Var>& a) { return ScanStep{{a[0] * a[1]}}; }, args));
}

TEST(ScanTest, PowerByIteration) {
  const Var k = lscalar("k"), A = dvector("A");
  ScanResult r = PowerLoop(A, k);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0]->owner()->op().Name(), "for{cpu,scan_fn}");
  const std::vector<Tensor> out =
      Eval({A, k}, {r.outputs[0], subtensor(r.outputs[0], {-1})}, {Vec({0, 1, 2, 3}), Int(3)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(Values(out[0]), (std::vector<double>{0, 1, 2, 3, 0, 1, 4, 9, 0, 1, 8, 27}));
  EXPECT_EQ(Values(out[1]), (std::vector<double>{0, 1, 8, 27}));
  // No steps: an empty trajectory of the state's shape.
  const std::vector<Tensor> none = Eval({A, k}, {r.outputs[0]}, {Vec({1, 2}), Int(0)});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].shape(), (Shape{0, 2}));
}

// Aesara's tutorial: polynomial coefficients, two sequences of different lengths (the shorter
// sets the steps) and a non-sequence, summed.
TEST(ScanTest, PolynomialFromTwoSequences) {
  const Var coefficients = dvector("coefficients"), x = dscalar("x");
  ScanArgs args;
  args.sequences = {{coefficients}, {arange(constant(int64_t{10000}))}};
  args.non_sequences = {x};
  ScanResult r = Must(scan(
      [](const std::vector<Var>& a) { return ScanStep{{a[0] * pow(a[2], a[1])}}; }, args));
  const Var polynomial = sum(r.outputs[0]);
  const std::vector<Tensor> out =
      Eval({coefficients, x}, {polynomial},
           {Vec({1, 0, 2}), *Tensor::FromValues<double>(DType::kFloat64, {}, std::vector{3.0})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values(out[0]), std::vector<double>{19});
}

// Taps [-2, -1] read the first two rows of the initial value (as Aesara's init[:2]).
TEST(ScanTest, StateWithTwoTaps) {
  const Var init = dvector("init");
  ScanArgs args;
  args.outputs_info = {{init, {-2, -1}}};
  args.n_steps = constant(int64_t{5});
  ScanResult r = Must(scan([](const std::vector<Var>& a) { return ScanStep{{a[0] + a[1]}}; }, args));
  EXPECT_EQ(Values(Eval({init}, {r.outputs[0]}, {Vec({1, 2, 100})})[0]),
            (std::vector<double>{3, 5, 8, 13, 21}));
  EXPECT_EQ(Values(Eval({init}, {r.outputs[0]}, {Vec({100, 1, 2})})[0]),
            (std::vector<double>{101, 102, 203, 305, 508}));
}

// Sequence taps, forward and go_backwards (only the sequences are reversed), as Aesara gives.
TEST(ScanTest, SequenceTapsAndGoBackwards) {
  const Var x = dvector("x");
  for (bool backwards : {false, true}) {
    ScanArgs args;
    args.sequences = {{x, {-1, 0, 1}}};
    args.go_backwards = backwards;
    ScanResult r = Must(scan(
        [](const std::vector<Var>& a) { return ScanStep{{a[0] * 100.0 + a[1] * 10.0 + a[2]}}; },
        args));
    EXPECT_EQ(Values(Eval({x}, {r.outputs[0]}, {Vec({1, 2, 3, 4, 5})})[0]),
              backwards ? (std::vector<double>{345, 234, 123})
                        : (std::vector<double>{123, 234, 345}));
  }
}

// until: the loop stops after the step whose condition is true.
TEST(ScanTest, UntilStopsTheLoop) {
  const Var max_value = dscalar("max_value");
  ScanArgs args;
  args.outputs_info = {{constant(1.0)}};
  args.n_steps = constant(int64_t{1024});
  ScanResult r = Must(scan(
      [&](const std::vector<Var>& a) {
        Var next = a[0] * 2.0;
        return ScanStep{{next}, {}, gt(next, max_value)};
      },
      args));
  EXPECT_EQ(r.outputs[0]->owner()->op().Name(), "while{cpu,scan_fn}");
  auto run = [&](double m) {
    return Values(Eval({max_value}, {r.outputs[0]},
                       {*Tensor::FromValues<double>(DType::kFloat64, {}, std::vector{m})})[0]);
  };
  EXPECT_EQ(run(45), (std::vector<double>{2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(run(1), (std::vector<double>{2}));
}

// map with a closure over an outer variable (an implicit non-sequence), a nit-sot of rows, and
// reduce (the final value).
TEST(ScanTest, MapAndReduce) {
  const Var X = dmatrix("X"), w = dvector("w");
  ScanResult m = Must(map([&](const std::vector<Var>& a) { return ScanStep{{sum(exp(a[0]) * w)}}; },
                          {X}));
  ScanResult r = Must(reduce(
      [](const std::vector<Var>& a) { return ScanStep{{a[0] + a[1]}}; }, {X}, {zeros_like(w)}));
  const std::vector<Tensor> out = Eval({X, w}, {m.outputs[0], r.outputs[0]},
                                       {Mat(2, 2, {0, 1, 2, 3}), Vec({1, 2})});
  ASSERT_EQ(out.size(), 2u);
  const std::vector<double> rows = Values(out[0]);
  EXPECT_NEAR(rows[0], 1 + 2 * std::exp(1.0), 1e-12);
  EXPECT_NEAR(rows[1], std::exp(2.0) + 2 * std::exp(3.0), 1e-12);
  EXPECT_EQ(Values(out[1]), (std::vector<double>{2, 4}));
}

TEST(ScanTest, ErrorsNameTheProblem) {
  const Var x = dvector("x"), k = lscalar("k");
  ScanArgs args;
  args.sequences = {{x}};
  args.n_steps = k;
  ScanResult r = Must(scan([](const std::vector<Var>& a) { return ScanStep{{a[0] * 2.0}}; }, args));
  absl::StatusOr<Function> f = function({x, k}, {r.outputs[0]});
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<std::vector<Tensor>> too_many = (*f)({Vec({1, 2, 3}), Int(5)});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("sequence 0 has 3 entries, but 5 steps"),
            std::string::npos)
      << too_many.status();
  absl::StatusOr<std::vector<Tensor>> negative = (*f)({Vec({1, 2, 3}), Int(-1)});
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("n_steps is -1"), std::string::npos);

  ScanArgs upcast;
  upcast.outputs_info = {{constant(int64_t{0})}};
  upcast.n_steps = k;
  absl::StatusOr<ScanResult> bad =
      scan([](const std::vector<Var>& a) { return ScanStep{{a[0] + 0.5}}; }, upcast);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("has dtype int8, while the result of the inner "
                                        "function (`fn`) has dtype float32"),
            std::string::npos)
      << bad.status();

  ScanArgs no_steps;
  EXPECT_FALSE(scan([](const std::vector<Var>&) { return ScanStep{{constant(1.0)}}; }, no_steps)
                   .ok());
  ScanArgs strict;
  strict.n_steps = k;
  strict.strict = true;
  absl::StatusOr<ScanResult> s =
      scan([&](const std::vector<Var>&) { return ScanStep{{x * 2.0}}; }, strict);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "MissingInputError: Scan is missing inputs: [x]");
}

// The inner graph travels as text: decoding gives an equal op, and malformed texts are errors.
TEST(ScanTest, InnerGraphText) {
  const Var x = dvector("x"), W = dmatrix("W");
  ScanResult r = Must(map([&](const std::vector<Var>& a) { return ScanStep{{tanh(dot(a[0], W))}}; },
                          {dmatrix("X")}));
  const Op& op = r.outputs[0]->owner()->op();
  absl::StatusOr<OpPtr> again = MakeOp("Scan", op.Attrs());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == op);
  const std::string text = std::get<std::string>(op.Attrs().values().back().second);
  for (size_t cut : {size_t{0}, size_t{5}, text.size() / 2, text.size() - 1}) {
    EXPECT_FALSE(DecodeInnerGraph(text.substr(0, cut)).ok()) << cut;
  }
  EXPECT_FALSE(DecodeInnerGraph("kiln-graph 1\nn Elemwise 1 i0 0:\no n0.0\n").ok());
  EXPECT_FALSE(DecodeInnerGraph("kiln-graph 1\ni float64 -\no n5.0\n").ok());
  // The smallest body, an identity, reads back.
  EXPECT_TRUE(DecodeInnerGraph("kiln-graph 1\ni float64 -\no i0\n").ok());
}

// Compiling moves loop-invariant nodes out of the body and keeps only the last value of a state
// read only as x[-1]; the values do not change.
TEST(ScanTest, OptimizerPushesOutInvariantsAndSavesMemory) {
  const Var X = dmatrix("X"), W = dmatrix("W");
  ScanResult r = Must(reduce(
      [&](const std::vector<Var>& a) { return ScanStep{{a[1] + dot(a[0], exp(W))}}; }, {X},
      {zeros_like(subtensor(X, {0}))}));
  absl::StatusOr<Function> f = function({X, W}, {r.outputs[0]});
  ASSERT_TRUE(f.ok()) << f.status();
  const Scan* scan_op = nullptr;
  for (Apply* n : f->fgraph().Toposort()) {
    if (auto* s = n->op().As<Scan>()) scan_op = s;
  }
  ASSERT_NE(scan_op, nullptr);
  EXPECT_EQ(scan_op->attrs().state_keep_last, std::vector<int64_t>{1});
  EXPECT_EQ(scan_op->attrs().inner.find("exp"), std::string::npos) << scan_op->attrs().inner;
  EXPECT_EQ(scan_op->attrs().n_non_seqs, 2);  // W and exp(W)
  absl::StatusOr<std::vector<Tensor>> out =
      (*f)({Mat(2, 2, {1, 2, 3, 4}), Mat(2, 2, {0, 0, 0, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{10, 10}));
}

// dprint shows the loop body under "Inner graphs:" as Aesara 2.9.4 does, its inputs pointing at
// the outer inputs they read.
TEST(ScanTest, DprintShowsTheInnerGraph) {
  const Var k = lscalar("k"), A = dvector("A");
  ScanResult r = PowerLoop(A, k);
  EXPECT_EQ(DebugPrint({r.outputs[0]}),
            "for{cpu,scan_fn} [id A]\n"
            " |k [id B]\n"
            " |InplaceDimShuffle{x,0} [id C]\n"
            " | |Elemwise{second,no_inplace} [id D]\n"
            " |   |A [id E]\n"
            " |   |InplaceDimShuffle{x} [id F]\n"
            " |     |TensorConstant{1.0} [id G]\n"
            " |A [id E]\n"
            "\n"
            "Inner graphs:\n"
            "\n"
            "for{cpu,scan_fn} [id A]\n"
            " >Elemwise{mul,no_inplace} [id H]\n"
            " > |*0-<TensorType(float64, (?,))> [id I] -> [id C]\n"
            " > |*1-<TensorType(float64, (?,))> [id J] -> [id E]\n");
}

// A batched Elman step (states are matrices): the non-sequences' gradients dot(h.T, g) and
// dot(x.T, g) are summed after the loop as one product of all the rows. Whole, against finite
// differences; truncated, against the same sums kept in the loop (W * 1.0 defeats the pattern).
Var BatchedElmanCost(const std::vector<Var>& in, int64_t truncate, bool pushed) {
  ScanArgs args;
  args.sequences = {{in[0]}};
  args.outputs_info = {{in[1]}};
  args.non_sequences = {in[2], in[3]};
  args.truncate_gradient = truncate;
  ScanResult r = *scan(
      [pushed](const std::vector<Var>& a) {
        const Var u = pushed ? a[2] : a[2] * 1.0, w = pushed ? a[3] : a[3] * 1.0;
        return ScanStep{{tanh(dot(a[0], u) + dot(a[1], w))}};
      },
      args);
  return sum(r.outputs[0] * r.outputs[0]);
}

TEST(ScanTest, BatchedGradientsSummedAfterTheLoopMatchFiniteDifferences) {
  std::vector<double> xs(4 * 2 * 3);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.1 * static_cast<double>(i % 7) - 0.3;
  const std::vector<Tensor> pt = {*Tensor::FromValues<double>(DType::kFloat64, {4, 2, 3}, xs),
                                  Mat(2, 2, {.1, -.2, .3, .2}),
                                  Mat(3, 2, {.5, -.2, .1, .3, .4, -.1}),
                                  Mat(2, 2, {.2, .1, -.3, .6})};
  const absl::Status s = verify_grad(
      [](const std::vector<Var>& in) { return BatchedElmanCost(in, -1, true); }, pt);
  EXPECT_TRUE(s.ok()) << s;
  const std::vector<Var> in = {dtensor3("X"), dmatrix("h0"), dmatrix("U"), dmatrix("W")};
  std::vector<Var> both;
  for (bool pushed : {true, false}) {
    absl::StatusOr<std::vector<Var>> g = grad(BatchedElmanCost(in, 2, pushed), in);
    ASSERT_TRUE(g.ok()) << g.status();
    // Pushed out, W's gradient is the product after the loop; kept in, a loop's output.
    EXPECT_EQ((*g)[3]->owner()->op().Is<Dot>(), pushed);
    both.insert(both.end(), g->begin(), g->end());
  }
  const std::vector<Tensor> v = Eval(in, both, pt);
  ASSERT_EQ(v.size(), 8u);
  for (int i = 0; i < 4; ++i) {
    for (int64_t e = 0; e < v[i].size(); ++e) {
      EXPECT_NEAR(v[i].ElementAsDouble(e), v[i + 4].ElementAsDouble(e), 1e-12) << i << " " << e;
    }
  }
  // A loop of no steps: the sums are zeros of the non-sequences' shapes.
  std::vector<Tensor> none = pt;
  none[0] = Tensor::Zeros(DType::kFloat64, {0, 2, 3});
  const std::vector<Tensor> z = Eval(in, {both[2], both[3]}, none);
  ASSERT_EQ(z.size(), 2u);
  EXPECT_EQ(z[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(z[1].ToString(), "[[0. 0.]\n [0. 0.]]");
}

// Compiling the Elman loop and its gradient: x[t] . U leaves the forward loop as one product
// over all steps, the gradient loop drops the per-step gradient of X that nothing reads and keeps
// one copy of the per-step value both pushed-out sums read, so that each loop does one matrix
// product per step; the values equal the unrewritten graph's (FAST_COMPILE), for loops of four
// and of no steps.
TEST(ScanTest, OptimizerPushesOutSequenceProductsAndDropsUnusedOutputs) {
  const std::vector<Var> in = {dtensor3("X"), dmatrix("h0"), dmatrix("U"), dmatrix("W")};
  const Var cost = BatchedElmanCost(in, -1, true);
  absl::StatusOr<std::vector<Var>> g = grad(cost, std::vector<Var>{in[2], in[3]});
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<Var> outs = {cost, (*g)[0], (*g)[1]};
  absl::StatusOr<Function> fast = function(in, outs);
  absl::StatusOr<Function> plain = function(in, outs, {.mode = OptimizerMode::kFastCompile});
  ASSERT_TRUE(fast.ok()) << fast.status();
  ASSERT_TRUE(plain.ok()) << plain.status();
  int loops = 0;
  for (Apply* n : fast->fgraph().Toposort()) {
    const auto* loop = n->op().As<Scan>();
    if (loop == nullptr) continue;
    ++loops;
    int products = 0;
    for (Apply* m : IoToposort(loop->inner().inputs, loop->inner().outputs)) {
      products += m->op().Is<Dot>() || m->op().Name().starts_with("Gemm") ||
                  m->op().Name() == "Dot22";
    }
    EXPECT_EQ(products, 1) << loop->Name() << "\n" << loop->attrs().inner;
    EXPECT_LE(loop->attrs().n_nit_sot, 1) << loop->Name();
  }
  EXPECT_EQ(loops, 2);
  std::vector<double> xs(4 * 2 * 3);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.1 * static_cast<double>(i % 7) - 0.3;
  std::vector<Tensor> pt = {*Tensor::FromValues<double>(DType::kFloat64, {4, 2, 3}, xs),
                            Mat(2, 2, {.1, -.2, .3, .2}), Mat(3, 2, {.5, -.2, .1, .3, .4, -.1}),
                            Mat(2, 2, {.2, .1, -.3, .6})};
  for (int64_t steps : {4, 0}) {
    if (steps == 0) pt[0] = Tensor::Zeros(DType::kFloat64, {0, 2, 3});
    absl::StatusOr<std::vector<Tensor>> got = (*fast)(pt), want = (*plain)(pt);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(want.ok()) << want.status();
    for (size_t o = 0; o < outs.size(); ++o) {
      ASSERT_EQ((*got)[o].shape(), (*want)[o].shape()) << o;
      for (int64_t e = 0; e < (*got)[o].size(); ++e) {
        EXPECT_NEAR((*got)[o].ElementAsDouble(e), (*want)[o].ElementAsDouble(e), 1e-12) << o;
      }
    }
  }
}

// Back-propagation through time against finite differences: an Elman step, two-tap states,
// sequence taps, non-sequences, truncation and reverse loops.
TEST(ScanTest, GradientsMatchFiniteDifferences) {
  auto elman = [](const std::vector<Var>& in) {
    ScanArgs args;
    args.sequences = {{in[0]}};
    args.outputs_info = {{in[1]}};
    args.non_sequences = {in[2]};
    ScanResult r = *scan(
        [](const std::vector<Var>& a) { return ScanStep{{tanh(a[0] + dot(a[1], a[2]))}}; }, args);
    return sum(r.outputs[0] * r.outputs[0]);
  };
  EXPECT_TRUE(verify_grad(elman, {Mat(4, 3, {.1, .2, .3, -.1, .5, .2, .3, .3, -.4, .2, 0, .1}),
                                  Vec({.1, -.2, .3}),
                                  Mat(3, 3, {.5, -.2, .1, .3, .4, -.1, .2, .1, .6})})
                  .ok());
  auto taps = [](const std::vector<Var>& in) {
    ScanArgs args;
    args.sequences = {{in[0], {-1, 1}}};
    args.outputs_info = {{in[1], {-2, -1}}, {}};
    args.non_sequences = {in[2]};
    ScanResult r = *scan(
        [](const std::vector<Var>& a) {
          Var s = sin(a[2]) * a[4] + a[3] * a[0] + a[1];
          return ScanStep{{s, s * a[0]}};
        },
        args);
    return sum(r.outputs[0]) + sum(r.outputs[1] * 3.0);
  };
  const std::vector<Tensor> pt = {Vec({.3, -.2, .5, .1, .7, -.4}), Vec({.2, .4, .9}),
                                  *Tensor::FromValues<double>(DType::kFloat64, {}, std::vector{.7})};
  absl::Status s = verify_grad(taps, pt);
  EXPECT_TRUE(s.ok()) << s;
  auto backwards_last = [](const std::vector<Var>& in) {
    ScanResult r = *foldr(
        [](const std::vector<Var>& a) { return ScanStep{{a[1] * a[0] + sin(a[1])}}; }, {in[0]},
        {in[1]});
    return r.outputs[0];
  };
  s = verify_grad(backwards_last, {Vec({.3, -.2, .5, .9}),
                                   *Tensor::FromValues<double>(DType::kFloat64, {},
                                                               std::vector{.4})});
  EXPECT_TRUE(s.ok()) << s;
}

TEST(ScanTest, TwoTapGradient) {
  const Var init = dvector("init");
  ScanArgs args;
  args.outputs_info = {{init, {-2, -1}}};
  args.n_steps = constant(int64_t{3});
  ScanResult r = Must(scan([](const std::vector<Var>& a) { return ScanStep{{a[0] + a[1]}}; }, args));
  absl::StatusOr<std::vector<Var>> g = grad(sum(r.outputs[0]), std::vector<Var>{init});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Values(Eval({init}, *g, {Vec({1, 2, 7})})[0]), (std::vector<double>{4, 6, 0}));
}

TEST(ScanTest, TruncatedGradientStopsAfterItsSteps) {
  const Var x = dvector("x"), h0 = dscalar("h0");
  ScanArgs args;
  args.sequences = {{x}};
  args.outputs_info = {{h0}};
  args.truncate_gradient = 2;
  ScanResult r = Must(scan(
      [](const std::vector<Var>& a) { return ScanStep{{a[1] * 2.0 + a[0]}}; }, args));
  const Var cost = subtensor(r.outputs[0], {-1});
  absl::StatusOr<std::vector<Var>> g = grad(cost, std::vector<Var>{x, h0});
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<Tensor> out =
      Eval({x, h0}, *g, {Vec({1, 1, 1, 1}), *Tensor::FromValues<double>(DType::kFloat64, {},
                                                                          std::vector{1.0})});
  ASSERT_EQ(out.size(), 2u);
  // h3 = 2 h2 + x3 = 4 h1 + 2 x2 + x3: only the last two steps' inputs get a gradient.
  EXPECT_EQ(Values(out[0]), (std::vector<double>{0, 0, 2, 1}));
  EXPECT_EQ(Values(out[1]), std::vector<double>{0});
}

}  // namespace
}  // namespace kiln
