// Stored functions: every op family round-trips through its attributes, a function loaded from
// its stored graph gives identical results without optimizing again, and corrupt or hostile
// messages are errors.
#include "proto/convert/function_convert.h"

#include <random>

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "gtest/gtest.h"

namespace kiln {
namespace {

Tensor Rand(Shape shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> v(ShapeSize(shape));
  for (double& e : v) e = u(rng);
  return *Tensor::FromValues<double>(DType::kFloat64, std::move(shape), v);
}

// f stored as bytes, as the function cache keeps it.
std::string Store(const Function& f) {
  absl::StatusOr<v1::Graph> g = OptimizedGraphToProto(f);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? g->SerializeAsString() : "";
}

absl::StatusOr<Function> Load(const std::string& bytes) {
  v1::Graph graph;
  if (!graph.ParseFromString(bytes)) return absl::InvalidArgumentError("not a kiln.v1.Graph");
  return FunctionFromOptimizedGraph(graph);
}

// Graphs that together use every op family, optimized (fused composites, Gemm, in-place).
std::vector<std::pair<std::vector<Var>, std::vector<Var>>> Graphs() {
  Var x = dmatrix("x"), y = dmatrix("y"), v = dvector("v");
  Var idx = constant(*Tensor::Of<int64_t>(DType::kInt64, {2}, {1, 0}));
  return {
      {{x, y}, {exp(x) * y + sin(x) * 2.0, y + dot(x, y)}},
      {{x},
       {sum(x, 1), prod(x, 0, true), max_and_argmax(x, 1)[0], cast(argmax(x, 0), DType::kFloat64),
        cumsum(x, 0), cumprod(x), mean(x), var(x, 1)}},
      {{x, v},
       {reshape(x, {-1}), transpose(x), shape_i(x, 0) * 1.0, specify_shape(v, {3}),
        flatten(x) + 1.0}},
      {{x},
       {subtensor(x, {Slice{1, std::nullopt}, 0}), take(x, idx),
        set_subtensor(subtensor(x, {0}), constant(5.0)),
        inc_subtensor(take(x, idx), subtensor(x, {Slice{0, 2}}) * 2.0)}},
      {{x, y},
       {concatenate({x, y}, 1), stack({x, y}), split(x, {1, 2}, 0)[1],
        alloc(constant(2.0), {constant(int64_t{2}), constant(int64_t{3})}), eye(3) * x}},
      {{x},
       {softmax(x), log_softmax(x, 0), sort(x), cast(argsort(x), DType::kFloat64), logsumexp(x, 1),
        matmul(x, transpose(x)), tensordot(x, x, 2)}},
      {{x}, {grad_scale(x, 2.0) + zero_grad(x), make_vector({sum(x), mean(x)}, DType::kFloat64)}},
  };
}

TEST(FunctionConvertTest, EveryOpRoundTripsThroughItsAttributes) {
  for (auto& [inputs, outputs] : Graphs()) {
    auto f = function(inputs, outputs);
    ASSERT_TRUE(f.ok()) << f.status();
    for (Apply* node : f->fgraph().Toposort()) {
      absl::StatusOr<OpPtr> again = MakeOp(node->op().type_name(), node->op().Attrs());
      ASSERT_TRUE(again.ok()) << node->op().Name() << ": " << again.status();
      EXPECT_TRUE(**again == node->op()) << node->op().Name() << " vs " << (*again)->Name();
    }
  }
}

TEST(FunctionConvertTest, LoadedFunctionsGiveIdenticalResults) {
  uint64_t seed = 1;
  for (auto& [inputs, outputs] : Graphs()) {
    auto f = function(inputs, outputs);
    ASSERT_TRUE(f.ok()) << f.status();
    const std::string bytes = Store(*f);
    absl::StatusOr<Function> g = Load(bytes);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(g->fgraph().num_nodes(), f->fgraph().num_nodes());
    std::vector<Tensor> args;
    for (const Var& in : inputs)
      args.push_back(Rand(in.ndim() == 2 ? Shape{3, 3} : Shape{3}, seed++));
    auto a = (*f)(args);
    auto b = (*g)(args);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    for (size_t o = 0; o < a->size(); ++o) EXPECT_TRUE((*a)[o].BitwiseEquals((*b)[o])) << o;
    // Storing the loaded function gives the same bytes.
    EXPECT_EQ(Store(*g), bytes);
  }
}

// Outputs the optimizer folds to constants, and an input returned as it is, round-trip too.
TEST(FunctionConvertTest, ConstantAndInputOutputsRoundTrip) {
  Var x = dvector("x");
  auto f = function({x}, {zeros({constant(2), constant(3)}), x, x * 2.0});
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<Function> g = Load(Store(*f));
  ASSERT_TRUE(g.ok()) << g.status();
  auto out = (*g)({*Tensor::Of<double>(DType::kFloat64, {2}, {1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "[[0. 0. 0.]\n [0. 0. 0.]]");
  EXPECT_EQ((*out)[1].ToString(), "[1. 2.]");
  EXPECT_EQ((*out)[2].ToString(), "[2. 4.]");
}

TEST(FunctionConvertTest, CorruptBytesAreErrors) {
  Var x = dmatrix("x");
  auto f = function({x}, {exp(x) + 1.0, sum(x)});
  ASSERT_TRUE(f.ok());
  const std::string bytes = Store(*f);
  // Every proper prefix and 500 random byte flips: an error or (rarely) another valid graph,
  // never a crash.
  for (size_t cut = 0; cut < bytes.size(); ++cut) (void)Load(bytes.substr(0, cut));
  std::mt19937_64 rng(5);
  for (int i = 0; i < 500; ++i) {
    std::string broken = bytes;
    broken[rng() % broken.size()] ^= static_cast<char>(1 + rng() % 255);
    (void)Load(broken);
  }
  // A node referring to a later node's output.
  v1::Graph graph = *OptimizedGraphToProto(*f);
  graph.mutable_nodes(0)->mutable_inputs(0)->mutable_node_output()->set_node(5);
  EXPECT_FALSE(FunctionFromOptimizedGraph(graph).ok());
  Var s = shared(Rand({2}, 1), "s");
  auto with_shared = function({}, {s * 2.0});
  ASSERT_TRUE(with_shared.ok());
  EXPECT_EQ(OptimizedGraphToProto(*with_shared).status().message(),
            "a function with shared variables or updates cannot be stored");
}


// Attributes that a hostile graph could carry are rejected when the op or node is made.
TEST(FunctionConvertTest, HostileAttributesAreErrors) {
  Var x = dvector("x");
  auto add =
      MakeOp("Elemwise", {{"scalar_op", "add"}, {"inplace_pattern", std::vector<int64_t>{0, 7}}});
  ASSERT_TRUE(add.ok());
  EXPECT_EQ(ApplyOp(*add, {x, x}).status().message(),
            "Elemwise{Add}[(0, 7)]: the inplace pattern names output 0 and input 7");
  const absl::Status bad_program =
      MakeOp("Elemwise",
             {{"scalar_op", "composite"}, {"program", "float64||sqrt/float64/float64/|1"}})
          .status();
  EXPECT_EQ(std::string(bad_program.message()),
            "Elemwise: bad composite program: instruction 'sqrt/float64/float64/' has 0 "
            "arguments");
  // A shape constant whose type hides its length.
  auto reshape3 = MakeOp("Reshape", {{"ndim", int64_t{3}}});
  ASSERT_TRUE(reshape3.ok());
  Var dims = Var(VariablePtr(Constant::Make(TensorType::Make(DType::kInt64, {std::nullopt}),
                                            *Tensor::Of<int64_t>(DType::kInt64, {1}, {2}))));
  EXPECT_EQ(ApplyOp(*reshape3, {x, dims}).status().message(),
            "Reshape{3}: the shape (2,) has 1 entries but 3 are needed");
}

}  // namespace
}  // namespace kiln
