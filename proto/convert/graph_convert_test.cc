// Graphs to kiln.v1.Graph and back, and a battery of malformed graphs, each rejected with the
// node and the defect named.
#include "proto/convert/graph_convert.h"

#include "core/kiln.h"
#include "gtest/gtest.h"
#include "proto/convert/tensor_convert.h"

namespace kiln {
namespace {

TEST(GraphConvertTest, SeedRoundTrips) {
  Var x = dmatrix("x");
  Var y = x * 2.0;
  absl::StatusOr<v1::Graph> g = GraphToProto({x}, {y});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->nodes_size(), 2);
  absl::StatusOr<ProtoGraph> back = GraphFromProto(*g);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(DebugPrint(back->outputs), DebugPrint({y}));
}

// An op that registers itself from its own file (core/ops/repeat.cc) is read from the wire by
// every program that links the ops, though none of them names it.
TEST(GraphConvertTest, SelfRegisteredOpsRoundTrip) {
  Var x = dmatrix("x"), r = lvector("r");
  Var y = repeat(x, r, 1);
  absl::StatusOr<v1::Graph> g = GraphToProto({x, r}, {y});
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<ProtoGraph> back = GraphFromProto(*g);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(DebugPrint(back->outputs), DebugPrint({y}));
  EXPECT_TRUE(back->outputs[0]->owner()->op() == y->owner()->op());
}

TEST(GraphConvertTest, TrainingGraphRoundTripsWithEqualValues) {
  Var X = dmatrix("X"), W = dmatrix("W"), t = lvector("t");
  Var cost = mean(categorical_crossentropy(softmax(tanh(dot(X, W))), t));
  absl::StatusOr<std::vector<Var>> grads = grad(cost, std::vector<Var>{W});
  ASSERT_TRUE(grads.ok());
  const std::vector<Var> outs = {cost, (*grads)[0]};
  absl::StatusOr<v1::Graph> g = GraphToProto({X, W, t}, outs);
  ASSERT_TRUE(g.ok()) << g.status();
  // Through the wire bytes too.
  v1::Graph parsed;
  ASSERT_TRUE(parsed.ParseFromString(g->SerializeAsString()));
  absl::StatusOr<ProtoGraph> back = GraphFromProto(parsed);
  ASSERT_TRUE(back.ok()) << back.status();
  auto f1 = function({X, W, t}, outs);
  auto f2 = function(back->inputs, back->outputs);
  ASSERT_TRUE(f1.ok() && f2.ok());
  const std::vector<Tensor> args = {
      *Tensor::Of<double>(DType::kFloat64, {2, 3}, {0.1, -0.2, 0.3, 0.4, 0.5, -0.6}),
      *Tensor::Of<double>(DType::kFloat64, {3, 2}, {1, -1, 0.5, 0.25, -0.5, 2}),
      *Tensor::Of<int64_t>(DType::kInt64, {2}, {1, 0})};
  auto a = (*f1)(args), b = (*f2)(args);
  ASSERT_TRUE(a.ok() && b.ok());
  for (size_t o = 0; o < a->size(); ++o) EXPECT_TRUE((*a)[o].BitwiseEquals((*b)[o]));
  // A leaf that is not an input is MissingInputError.
  EXPECT_EQ(GraphToProto({X, W}, {cost}).status().message(),
            "MissingInputError: t is needed but is not among the inputs");
}

TEST(GraphConvertTest, CompactFormWritesEachOpAndTypeOnceAndReadsBack) {
  Var x = dvector("x");
  Var y = x;
  for (int i = 0; i < 50; ++i) y = tanh(y) * 2.0;
  absl::StatusOr<std::vector<Var>> g = grad(sum(y), std::vector<Var>{x});
  ASSERT_TRUE(g.ok()) << g.status();
  const v1::Graph inline_form = *GraphToProto({x}, {sum(y), (*g)[0]});
  const v1::Graph compact = *GraphToProto({x}, {sum(y), (*g)[0]}, GraphForm::kCompact);
  ASSERT_EQ(compact.nodes_size(), inline_form.nodes_size());
  EXPECT_LE(compact.ops_size(), 10);
  EXPECT_LE(compact.types_size(), 4);
  EXPECT_LT(compact.ByteSizeLong() * 2, inline_form.ByteSizeLong());
  for (const v1::Node& n : compact.nodes()) {
    EXPECT_FALSE(n.has_op());
    EXPECT_EQ(n.output_types_size(), 0);
    EXPECT_EQ(n.output_type_indices_size(), 1);
  }
  // Both read back to the same graph.
  absl::StatusOr<ProtoGraph> a = GraphFromProto(inline_form), b = GraphFromProto(compact);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ(DebugPrint(a->outputs), DebugPrint(b->outputs));
}

TEST(GraphConvertTest, CompactFormIndicesAreChecked) {
  Var x = dvector("x");
  const v1::Graph good = *GraphToProto({x}, {exp(x)}, GraphForm::kCompact);
  v1::Graph g = good;
  g.mutable_nodes(0)->set_op_index(7);
  EXPECT_EQ(GraphFromProto(g).status().message(), "node 0: op_index 7 of 1 ops");
  g = good;
  g.mutable_nodes(0)->set_output_type_indices(0, 3);
  EXPECT_EQ(GraphFromProto(g).status().message(), "node 0: output_type_indices 3 of 1 types");
  g = good;
  g.mutable_nodes(0)->add_output_type_indices(0);
  EXPECT_EQ(GraphFromProto(g).status().message(), "node 0: 2 output types for 1 outputs");
  g = good;
  *g.mutable_nodes(0)->add_output_types() = ToProto(TensorType(DType::kFloat64, {std::nullopt}));
  EXPECT_EQ(GraphFromProto(g).status().message(),
            "node 0: both output_types and output_type_indices");
  g = good;
  for (int i = 0; i < 1000; ++i) *g.add_ops() = good.ops(0);  // tables larger than the graph
  EXPECT_EQ(GraphFromProto(g).status().message(),
            "the graph's tables have 1001 ops and 1 types for 1 nodes");
  g = good;
  g.mutable_ops(0)->set_kind("Frobnicate");
  EXPECT_EQ(GraphFromProto(g).status().message(), "op 0: unknown op 'Frobnicate'");
  g = good;
  g.mutable_types(0)->set_dtype(v1::DTYPE_INT8);
  EXPECT_EQ(GraphFromProto(g).status().message(),
            "node 0: output 0 has type TensorType(float64, (?,)) but the graph says "
            "TensorType(int8, (?,))");
}

// A graph of one input (a float64 vector) and one Elemwise node; tests break one thing each.
v1::Graph Small() {
  Var x = dvector("x");
  return *GraphToProto({x}, {exp(x)});
}

absl::Status Load(const v1::Graph& g, GraphLimits limits = {}) {
  return GraphFromProto(g, limits).status();
}

TEST(GraphConvertTest, MalformedGraphsAreNamedErrors) {
  v1::Graph g = Small();
  g.mutable_nodes(0)->mutable_op()->set_kind("Foo");
  EXPECT_EQ(Load(g).message(), "node 0: unknown op 'Foo'");

  g = Small();
  g.mutable_nodes(0)->mutable_op()->mutable_attrs(0)->mutable_value()->set_s("nope");
  EXPECT_EQ(Load(g).message(), "node 0: Elemwise: unknown scalar op 'nope'");

  g = Small();
  g.mutable_nodes(0)->mutable_op()->mutable_attrs(0)->mutable_value()->set_i(3);
  EXPECT_EQ(Load(g).message(), "node 0: Elemwise: attribute 'scalar_op' must be a string");

  g = Small();
  g.mutable_nodes(0)->mutable_inputs(0)->set_input(5);
  EXPECT_EQ(Load(g).message(), "node 0 input 0: refers to input 5 of 1");

  g = Small();
  g.mutable_nodes(0)->mutable_inputs(0)->mutable_node_output()->set_node(0);
  EXPECT_EQ(Load(g).message(),
            "node 0 input 0: refers to node 0, which does not come before node 0 (references "
            "must point to earlier nodes)");

  g = Small();
  g.mutable_outputs(0)->mutable_node_output()->set_output(3);
  EXPECT_EQ(Load(g).message(), "output 0: refers to output 3 of node 0, which has 1");

  g = Small();
  g.mutable_outputs(0)->Clear();
  EXPECT_EQ(Load(g).message(), "output 0: an empty reference");

  g = Small();
  g.mutable_nodes(0)->add_inputs()->set_input(0);
  EXPECT_EQ(Load(g).message(), "node 0: Elemwise{exp,no_inplace}: expects 1 inputs, got 2");

  g = Small();
  *g.mutable_nodes(0)->mutable_output_types(0) =
      ToProto(*TensorType::Make(DType::kFloat32, {std::nullopt}));
  EXPECT_EQ(Load(g).message(),
            "node 0: output 0 has type TensorType(float64, (?,)) but the graph says "
            "TensorType(float32, (?,))");

  g = Small();
  g.mutable_inputs(0)->mutable_type()->set_dtype(static_cast<v1::DType>(99));
  EXPECT_EQ(Load(g).message(), "input 0: unknown dtype 99");

  // A constant whose bytes do not match its shape.
  Var x = dvector("x");
  v1::Graph c = *GraphToProto({x}, {x + constant(2.0)});
  c.mutable_constants(0)->mutable_value()->set_data("abc");
  EXPECT_NE(Load(c).message().find("constant 0: "), std::string::npos) << Load(c);

  // Limits.
  v1::Graph two = *GraphToProto({x}, {exp(sin(x))});
  EXPECT_EQ(Load(two, {.max_nodes = 1}).message(),
            "the graph has 2 nodes, more than the limit of 1");
  // Split's outputs count too: two Split{65536} nodes are 131,072 values, over 100,000.
  const Var v = dvector("v");
  const std::vector<int64_t> sizes(65536, 1);
  v1::Graph splits = *GraphToProto({v}, {split(v, sizes)[0] + split(v, sizes)[1]});
  EXPECT_EQ(Load(splits, {.max_nodes = 100000}).message(),
            "the graph's nodes have more than 100000 outputs, the limit");
  EXPECT_TRUE(Load(splits, {.max_nodes = 200000}).ok()) << Load(splits, {.max_nodes = 200000});
  v1::Graph big =
      *GraphToProto({x}, {x + constant(*Tensor::Of<double>(DType::kFloat64, {4}, {1, 2, 3, 4}))});
  EXPECT_NE(Load(big, {.max_constant_bytes = 16}).message().find("constant 0"), std::string::npos);

  // A Dot22 of vectors: the op's own type error, with the node index.
  v1::Graph dot = Small();
  dot.mutable_nodes(0)->mutable_op()->set_kind("Dot22");
  dot.mutable_nodes(0)->mutable_op()->clear_attrs();
  dot.mutable_nodes(0)->add_inputs()->set_input(0);
  dot.mutable_nodes(0)->clear_output_types();
  EXPECT_EQ(Load(dot).message(),
            "node 0: Dot22: input 0 has type TensorType(float64, (?,)) but a matrix is needed");
}

}  // namespace
}  // namespace kiln
