#include "core/ops/advanced_indexing.h"

#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "core/tensor/allocator.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

Tensor I64s(Shape shape, std::vector<int64_t> v) {
  return *Tensor::FromValues<int64_t>(DType::kInt64, std::move(shape), v);
}

// "[[0],[2]]" -> shape {2, 1}, values {0, 2}.
Tensor ParseNested(const std::string& text, DType dtype) {
  Shape shape;
  size_t depth = 0;
  while (depth < text.size() && text[depth] == '[') ++depth;
  for (size_t d = 0; d < depth; ++d) {  // the items of the first list at each depth
    int level = 0;
    int64_t items = 0;
    for (size_t p = d; p < text.size(); ++p) {
      if (text[p] == '[') ++level;
      if (text[p] == ']' && --level == 0) break;
      if (level == 1 && text[p] != '[' && items == 0) items = 1;
      if (level == 1 && text[p] == ',') ++items;
      if (level == 2 && text[p] == '[' && items == 0) items = 1;
    }
    shape.push_back(items);
  }
  std::vector<int64_t> values;
  for (const auto& tok : absl::StrSplit(text, absl::ByAnyChar("[],"), absl::SkipEmpty())) {
    values.push_back(std::stoll(std::string(tok)));
  }
  return *Tensor::FromValues<int64_t>(dtype, shape, values);
}

// One entry of a golden index spec (tests/golden/gen_numpy_cases.py's adv_spec_index).
AdvIndex ParseEntry(const std::string& p) {
  if (p == "N") return AdvIndex::NewAxis();
  if (p[0] == 'M') return AdvIndex(constant(ParseNested(p.substr(1), DType::kBool)));
  if (p[0] == '[') return AdvIndex(constant(ParseNested(p, DType::kInt64)));
  if (p.find(':') == std::string::npos) return AdvIndex(int64_t{std::stoll(p)});
  std::vector<std::string> b = absl::StrSplit(p, ':');
  b.resize(3);
  std::optional<Var> bounds[3];
  for (int k = 0; k < 3; ++k) {
    if (!b[k].empty()) bounds[k] = scalar_constant(int64_t{std::stoll(b[k])}, DType::kInt64);
  }
  return AdvIndex::SliceOf(bounds[0], bounds[1], bounds[2]);
}

std::vector<AdvIndex> ParseSpec(const std::string& spec, int ndim) {
  std::vector<std::string> parts = absl::StrSplit(spec, ';');
  int consumed = 0;
  for (const std::string& p : parts) {
    if (p == "N" || p == "...") continue;
    consumed += p[0] == 'M' ? static_cast<int>(ParseNested(p.substr(1), DType::kBool).ndim()) : 1;
  }
  std::vector<AdvIndex> idx;
  for (const std::string& p : parts) {
    if (p == "...") {
      for (int d = consumed; d < ndim; ++d) idx.push_back(AdvIndex::FullSlice());
    } else {
      idx.push_back(ParseEntry(p));
    }
  }
  return idx;
}

// Every case of tests/golden/numpy_advanced_indexing.txt against NumPy; reads also check their
// inferred shape (without masks) against the value's.
TEST(AdvancedIndexingTest, MatchesNumPy) {
  const auto cases = testing::ReadCases("tests/golden/numpy_advanced_indexing.txt");
  ASSERT_GE(cases.size(), 40u);
  for (const auto& c : cases) {
    ASSERT_EQ(c.size(), 11u);
    SCOPED_TRACE(absl::StrJoin(c, "|").substr(0, 200));
    const Tensor xv = testing::MakeTensor(c[2], c[3], c[4]);
    const Var x = tensor(xv.dtype(), StaticShape(xv.ndim()), "x");
    const std::vector<AdvIndex> idx = ParseSpec(c[1], xv.ndim());
    std::vector<Var> outputs;
    std::vector<Tensor> args = {xv};
    std::vector<Var> inputs = {x};
    if (c[0] == "sub") {
      outputs.push_back(advanced_subtensor(x, idx));
      ASSERT_TRUE(outputs[0].ok()) << outputs[0].status();
      if (c[1].find('M') == std::string::npos) {
        absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(outputs[0]);
        ASSERT_TRUE(dims.ok()) << dims.status();
        for (const VariablePtr& d : *dims) outputs.push_back(d);
      }
    } else {
      const Tensor yv = testing::MakeTensor(c[5], c[6], c[7]);
      const Var y = tensor(yv.dtype(), StaticShape(yv.ndim()), "y");
      inputs.push_back(y);
      args.push_back(yv);
      outputs.push_back(c[0] == "set"
                            ? set_subtensor(advanced_subtensor(x, idx), y)
                            : advanced_inc_subtensor(x, y, idx, false, c[0] == "inc_nodup"));
      ASSERT_TRUE(outputs[0].ok()) << outputs[0].status();
      EXPECT_TRUE(outputs[0]->owner()->op().Is<AdvancedIncSubtensor>());
    }
    // FAST_RUN makes a take-like index AdvancedSubtensor1 (or AdvancedIncSubtensor1); NONE
    // runs the op's own kernel.
    for (OptimizerMode mode : {OptimizerMode::kFastRun, OptimizerMode::kNone}) {
      FunctionOptions options;
      options.mode = mode;
      auto f = function(inputs, outputs, options);
      ASSERT_TRUE(f.ok()) << f.status();
      auto result = (*f)(args);
      ASSERT_TRUE(result.ok()) << result.status();
      const Tensor& r = (*result)[0];
      EXPECT_EQ(DTypeName(r.dtype()), c[8]);
      EXPECT_EQ(r.shape(), testing::ParseShape(c[9]));
      EXPECT_EQ(testing::Elements(r), testing::ParseValues(c[10]));
      for (int d = 0; d + 1 < static_cast<int>(result->size()); ++d) {
        EXPECT_EQ(ScalarInt((*result)[1 + d]), r.shape()[d]) << "dim " << d;
      }
      EXPECT_TRUE(args[0].BitwiseEquals(testing::MakeTensor(c[2], c[3], c[4])));
    }
  }
}

// Output types as Aesara 2.9.4's make_node gives them (checked with it): the arrays' dims are 1
// only where every array has 1, slices and the dims after the list are unknown, new axes 1.
TEST(AdvancedIndexingTest, TypesAsAesara) {
  auto t = [](StaticShape s, DType d = DType::kFloat64) { return tensor(d, std::move(s)); };
  const Var x = t({3, 4}), i = lvector("i"), j = t({1}, DType::kInt64);
  const Var k = t({1, 1}, DType::kInt64), c = t({}, DType::kInt64);
  const Var m = t({3}, DType::kBool), x3 = t({2, 3, 4});
  const AdvIndex all = AdvIndex::FullSlice(), none = AdvIndex::NewAxis();
  const std::vector<std::pair<Var, std::string>> cases = {
      {advanced_subtensor(x, {i}), "(?, ?)"},
      {advanced_subtensor(x, {j}), "(1, ?)"},
      {advanced_subtensor(x, {all, j}), "(?, 1)"},
      {advanced_subtensor(x, {i, j}), "(?,)"},
      {advanced_subtensor(x, {j, j}), "(1,)"},
      {advanced_subtensor(x, {none, i}), "(1, ?, ?)"},
      {advanced_subtensor(x, {i, none}), "(?, 1, ?)"},
      {advanced_subtensor(t({1, 4}), {all, i}), "(?, ?)"},
      {advanced_subtensor(x, {m}), "(?, ?)"},
      {advanced_subtensor(x, {m, 0}), "(?,)"},
      {advanced_subtensor(t({std::nullopt, std::nullopt}), {k, j}), "(1, 1)"},
      {advanced_subtensor(t({std::nullopt, std::nullopt}), {c, j}), "(1,)"},
      {advanced_subtensor(x3, {i, none, j}), "(?, 1, ?)"},
      {advanced_subtensor(x3, {i, all, j}), "(?, ?)"},
      {advanced_subtensor(t({std::nullopt, std::nullopt, std::nullopt}),
                          {constant(ParseNested("[1,0,1]", DType::kBool)), all}),
       "(?, ?, ?)"},
  };
  for (const auto& [v, shape] : cases) {
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->type()->ToString(), "TensorType(float64, " + shape + ")");
    EXPECT_EQ(v->owner()->op().Name(), "AdvancedSubtensor");
  }
  const Var set = set_subtensor(advanced_subtensor(t({1, 4}), {all, i}), constant(1.0));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->type()->ToString(), "TensorType(float64, (1, ?))");
  EXPECT_EQ(set->owner()->op().Name(),
            "AdvancedIncSubtensor{inplace=False,  set_instead_of_inc=True}");
  const Var inc = inc_subtensor(advanced_subtensor(x, {i, j}), constant(1.0));
  EXPECT_EQ(inc->owner()->op().Name(),
            "AdvancedIncSubtensor{inplace=False,  set_instead_of_inc=False}");
  EXPECT_EQ(inc->owner()->num_inputs(), 4);
}

// The index list travels as codes; equal lists are equal ops, whichever way they were made.
TEST(AdvancedIndexingTest, WireAttributes) {
  const Var x = dtensor3("x"), i = lvector("i");
  const Var y = advanced_subtensor(x, {i, AdvIndex::NewAxis(),
                                       AdvIndex::SliceOf(scalar_constant(int64_t{1}, DType::kInt64),
                                                         std::nullopt, std::nullopt)});
  ASSERT_TRUE(y.ok()) << y.status();
  const Op& op = y->owner()->op();
  EXPECT_EQ(op.Key(), "AdvancedSubtensor{idx_list=l[0,16,3];}");
  absl::StatusOr<OpPtr> again = MakeOp(op.type_name(), op.Attrs());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == op);
  EXPECT_EQ((*again)->Hash(), op.Hash());
  const Var z = advanced_inc_subtensor(x, dscalar("s"), {i}, true, true);
  ASSERT_TRUE(z.ok()) << z.status();
  again = MakeOp("AdvancedIncSubtensor", z->owner()->op().Attrs());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == z->owner()->op());
  EXPECT_EQ(MakeOp("AdvancedSubtensor", {{"idx_list", std::vector<int64_t>{2}}}).status().message(),
            "AdvancedSubtensor: attribute 'idx_list' has the bad entry 2 (0: a tensor, odd up to "
            "15: a slice, 16: a new axis)");
}

TEST(AdvancedIndexingTest, BuildErrors) {
  const Var x = dmatrix("x"), i = lvector("i");
  EXPECT_EQ(advanced_subtensor(x, {dvector("d")}).status().message(),
            "AdvancedSubtensor: input 1 has type TensorType(float64, (?,)): an index must be "
            "integers or a boolean mask");
  EXPECT_EQ(advanced_subtensor(x, {i, i, i}).status().message(),
            "AdvancedSubtensor: too many indices for TensorType(float64, (?, ?)): 3 dims are "
            "indexed");
  EXPECT_EQ(advanced_subtensor(tensor(DType::kFloat64, {3, 2}),
                               {constant(ParseNested("[1,0]", DType::kBool))})
                .status()
                .message(),
            "AdvancedSubtensor: boolean index did not match indexed array along dimension 0; "
            "dimension is 3 but corresponding boolean dimension is 2");
  EXPECT_EQ(advanced_subtensor(x, {tensor(DType::kBool, {})}).status().message(),
            "AdvancedSubtensor: input 1 is a 0-d boolean index, which Kiln does not support (use "
            "numpy.newaxis or an integer)");
  EXPECT_EQ(advanced_subtensor(x, {AdvIndex::SliceOf(dscalar("s"), std::nullopt, std::nullopt)})
                .status()
                .message(),
            "AdvancedSubtensor: input 1 has type TensorType(float64, ()) but a slice bound is an "
            "int64 scalar");
  EXPECT_EQ(
      std::string(
          set_subtensor(advanced_subtensor(ivector("v"), {i}), constant(1.5)).status().message()),
      "AdvancedIncSubtensor{inplace=False,  set_instead_of_inc=True}: y has type "
      "TensorType(float32, ()), which cannot be stored in x of type TensorType(int32, (?,)) "
      "without loss");
  EXPECT_EQ(ApplyOp(std::make_shared<AdvancedSubtensor>(
                        AdvancedSubtensorAttrs{{AdvIndexEntry{}, AdvIndexEntry{}}}),
                    {x, i})
                .status()
                .message(),
            "AdvancedSubtensor: expects 3 inputs for its index list of 2 entries, got 2");
}

TEST(AdvancedIndexingTest, RunErrors) {
  const Var x = dtensor3("x"), i = lvector("i"), j = lmatrix("j");
  const Var m = tensor(DType::kBool, {std::nullopt}, "m");
  auto f = function({x, i, j, m}, {advanced_subtensor(x, {i, AdvIndex::FullSlice(), j}),
                                   advanced_subtensor(x, {AdvIndex::FullSlice(), m})});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor xv = Tensor::Zeros(DType::kFloat64, {2, 3, 4});
  const Tensor ok_m = ParseNested("[1,0,1]", DType::kBool);
  auto run = [&](Tensor iv, Tensor jv, Tensor mv) { return (*f)({xv, iv, jv, mv}).status(); };
  EXPECT_TRUE(run(I64s({2}, {0, -2}), I64s({1, 2}, {3, -4}), ok_m).ok());
  EXPECT_EQ(run(I64s({2}, {0, 2}), I64s({1, 2}, {3, 0}), ok_m).message(),
            "AdvancedSubtensor: index 2 is out of bounds for axis 0 with size 2");
  EXPECT_EQ(run(I64s({2}, {0, 1}), I64s({1, 2}, {3, -5}), ok_m).message(),
            "AdvancedSubtensor: index -5 is out of bounds for axis 2 with size 4");
  EXPECT_EQ(run(I64s({3}, {0, 1, 1}), I64s({1, 2}, {3, 0}), ok_m).message(),
            "AdvancedSubtensor: shape mismatch: indexing arrays could not be broadcast together "
            "with shapes (3,) (1,2)");
  EXPECT_EQ(
      run(I64s({2}, {0, 1}), I64s({1, 2}, {3, 0}), ParseNested("[1,0]", DType::kBool)).message(),
      "AdvancedSubtensor: boolean index did not match indexed array along dimension 1; "
      "dimension is 3 but corresponding boolean dimension is 2");
  // uint64 indices past INT64_MAX are out of range, not negative. (A new axis keeps the index
  // from being a take, which specialize makes AdvancedSubtensor1.)
  auto u = function(
      {x}, {advanced_subtensor(x, {constant(*Tensor::FromValues<uint64_t>(
                                       DType::kUInt64, {1}, std::vector<uint64_t>{~uint64_t{0}})),
                                   AdvIndex::NewAxis()})});
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ((*u)({xv}).status().message(),
            "AdvancedSubtensor: index 18446744073709551615 is out of bounds for axis 0 with "
            "size 2");
  // Index arrays of shapes (10^6, 1) and (10^6,) broadcast to 10^12 elements: past
  // kMaxTensorBytes with x's other dims, x[idx] is refused by its size before anything is
  // allocated; under it, the offset table (one int64 per broadcast element) is a tensor, which the
  // process's buffer limit refuses before allocating it.
  auto big = function({x, i, j}, {advanced_subtensor(x, {j, AdvIndex::FullSlice(), i})});
  ASSERT_TRUE(big.ok()) << big.status();
  const int64_t n = 1000000;
  const Tensor rows = Tensor::Zeros(DType::kInt64, {n, 1}),
               cols = Tensor::Zeros(DType::kInt64, {n});
  const absl::Status huge =
      (*big)({Tensor::Zeros(DType::kFloat64, {1, 100000, 1}), cols, rows}).status();
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument) << huge;
  EXPECT_EQ(huge.message().substr(0, 19), "AdvancedSubtensor: ") << huge;
  SetMaxBufferBytes(size_t{1} << 30);
  bool refused = false;
  try {
    EXPECT_FALSE((*big)({Tensor::Zeros(DType::kFloat64, {1, 1, 1}), cols, rows}).ok());
  } catch (const BufferLimitExceeded& e) {
    refused = true;
  }
  SetMaxBufferBytes(0);
  EXPECT_TRUE(refused);
  // A value that does not broadcast to x[idx].
  const Var y = dvector("y");
  auto g = function({x, i, y}, {advanced_inc_subtensor(x, y, {i, AdvIndex::NewAxis()})});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)({xv, I64s({2}, {0, 1}), Tensor::Zeros(DType::kFloat64, {3})}).status().message(),
            "AdvancedIncSubtensor{inplace=False,  set_instead_of_inc=False}: shape mismatch: "
            "value array of shape (3,) could not be broadcast to indexing result of shape "
            "(2,1,3,4)");
}

// Finite differences through both ops: reads (repeated indices accumulate), increments and sets
// (x's gradient zeroed where set, y's summed over its broadcast dims), with masks and new axes.
TEST(AdvancedIndexingTest, GradientsMatchFiniteDifferences) {
  Tensor xv = Tensor::Empty(DType::kFloat64, {3, 4, 5});
  for (int64_t e = 0; e < xv.size(); ++e) xv.data<double>()[e] = 0.1 * e - 2.0 + (e % 3) * 0.7;
  const Var rep = constant(I64s({4}, {0, 2, 0, -1}));
  const Var cols = constant(I64s({2, 1}, {1, 3}));
  const Var mask = constant(ParseNested("[1,0,1,1]", DType::kBool));
  const Var uniq = constant(I64s({3}, {2, 0, -2}));
  const std::vector<std::vector<AdvIndex>> indices = {
      {rep},
      {rep, AdvIndex::FullSlice(), AdvIndex(int64_t{2})},
      {AdvIndex::FullSlice(), cols, rep},
      {AdvIndex::NewAxis(), AdvIndex::FullSlice(), mask},
      {rep, AdvIndex::NewAxis(), cols},
      {uniq, AdvIndex::FullSlice(), AdvIndex(int64_t{2})},
      {AdvIndex::FullSlice(), constant(I64s({2, 1}, {1, 3})), constant(I64s({2}, {0, 4}))},
  };
  for (size_t k = 0; k < indices.size(); ++k) {
    SCOPED_TRACE(k);
    const std::vector<AdvIndex>& idx = indices[k];
    absl::Status s = verify_grad(
        [&](const std::vector<Var>& in) { return advanced_subtensor(in[0], idx); }, {xv});
    EXPECT_TRUE(s.ok()) << s;
    const Var shape_probe = advanced_subtensor(dtensor3("p"), idx);
    ASSERT_TRUE(shape_probe.ok()) << shape_probe.status();
    auto probe = function({}, {advanced_subtensor(constant(xv), idx)});
    ASSERT_TRUE(probe.ok()) << probe.status();
    Shape read = (*probe)({}).value()[0].shape();
    Tensor yv = Tensor::Empty(DType::kFloat64, {read.back()});  // broadcast along the rest
    for (int64_t e = 0; e < yv.size(); ++e) yv.data<double>()[e] = 0.3 * e - 0.4;
    // A set of a repeated index keeps the last value (NumPy's, Aesara's), which the gradient
    // (Aesara's) does not model: sets are checked where the indices are distinct.
    for (bool set : {false, true}) {
      if (set && (k < 3 || k == 4)) continue;
      s = verify_grad(
          [&](const std::vector<Var>& in) {
            return advanced_inc_subtensor(in[0], in[1], idx, set);
          },
          {xv, yv});
      EXPECT_TRUE(s.ok()) << "set=" << set << ": " << s;
    }
  }
  // Discrete x: zeros of float64 for x, disconnected indices.
  const Var xi = lvector("xi");
  const Var g = grad(sum(cast(advanced_subtensor(xi, {rep}), DType::kFloat64)), xi);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->type()->ToString(), "TensorType(float64, (?,))");
}

// jacobian batches the backward pass (core/grad/vectorize.cc): AdvancedIncSubtensor and
// AdvancedSubtensor with a batch dim. Row k of d(x[idx])/dx is 1 where element k was read
// (arrays apart, so their dims come first, and a repeated place).
TEST(AdvancedIndexingTest, JacobianBatchesTheOps) {
  const Var x = dmatrix("x");
  const Var rows = constant(I64s({3}, {0, 1, 1})), cols = constant(I64s({3}, {2, 0, 0}));
  const Var read = advanced_subtensor(x, {rows, AdvIndex::NewAxis(), cols});  // (3, 1)
  ASSERT_TRUE(read.ok()) << read.status();
  absl::StatusOr<std::vector<Var>> j = jacobian(flatten(read), {x});
  ASSERT_TRUE(j.ok()) << j.status();
  auto f = function({x}, {(*j)[0]});
  ASSERT_TRUE(f.ok()) << f.status();
  auto r = (*f)({Tensor::Zeros(DType::kFloat64, {2, 3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 2, 3}));
  EXPECT_EQ(testing::Elements((*r)[0]),
            (std::vector<double>{0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0}));
}

}  // namespace
}  // namespace kiln
