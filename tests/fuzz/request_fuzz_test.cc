// Untrusted requests, mutated at random from valid ones (seeded, so a failure repeats): every
// mutation must come back as a Status from validation, compilation and execution, never as a
// crash, a hang or (under the sanitizers) a memory error.
#include <gtest/gtest.h>

#include <random>

#include "core/kiln.h"
#include "proto/convert/graph_convert.h"
#include "proto/convert/tensor_convert.h"
#include "server/compiled_function.h"

namespace kiln {
namespace {

v1::CompileRequest Seed() {
  Var X = dmatrix("X"), W = dmatrix("W"), t = lvector("t");
  Var cost = mean(categorical_crossentropy(softmax(tanh(dot(X, W)) * 2.0 + 1.5), t));
  auto g = grad(cost, std::vector<Var>{W});
  v1::CompileRequest r;
  *r.mutable_graph() =
      *GraphToProto({X, W, t}, {cost, (*g)[0], sum(subtensor(X, {Slice{0, 1, 1}}))});
  return r;
}

// One structural change: a reference, an attribute, a type, a constant's bytes or shape.
void Mutate(v1::Graph& g, std::mt19937_64& rng) {
  auto pick = [&](int n) { return n > 0 ? static_cast<int>(rng() % n) : 0; };
  const int small = static_cast<int>(rng() % 7) - 2;
  switch (rng() % 8) {
    case 0: {  // rewire an input
      if (g.nodes_size() == 0) return;
      v1::Node* n = g.mutable_nodes(pick(g.nodes_size()));
      if (n->inputs_size() == 0) return;
      v1::ValueRef* ref = n->mutable_inputs(pick(n->inputs_size()));
      if (rng() % 2) {
        ref->mutable_node_output()->set_node(pick(g.nodes_size() + 2));
        ref->mutable_node_output()->set_output(pick(2));
      } else {
        ref->set_input(pick(g.inputs_size() + 1));
      }
      return;
    }
    case 1: {  // change an integer or string attribute
      if (g.nodes_size() == 0) return;
      v1::Op* op = g.mutable_nodes(pick(g.nodes_size()))->mutable_op();
      if (op->attrs_size() == 0) return;
      v1::AttrValue* v = op->mutable_attrs(pick(op->attrs_size()))->mutable_value();
      if (v->has_ints()) {
        if (v->ints().values_size() > 0)
          v->mutable_ints()->set_values(0, small);
        else
          v->mutable_ints()->add_values(small);
      } else if (v->value_case() == v1::AttrValue::kI) {
        v->set_i(small);
      } else {
        v->set_s(rng() % 2 ? "add" : "no such thing");
      }
      return;
    }
    case 2:  // change an op kind
      if (g.nodes_size() == 0) return;
      g.mutable_nodes(pick(g.nodes_size()))
          ->mutable_op()
          ->set_kind(rng() % 2 ? "Elemwise" : "Dot22");
      return;
    case 3:  // change an input's type
      if (g.inputs_size() == 0) return;
      g.mutable_inputs(pick(g.inputs_size()))
          ->mutable_type()
          ->set_dtype(static_cast<v1::DType>(pick(16)));
      return;
    case 4:  // drop a node
      if (g.nodes_size() == 0) return;
      g.mutable_nodes()->DeleteSubrange(pick(g.nodes_size()), 1);
      return;
    case 5: {  // a constant's bytes or shape
      if (g.constants_size() == 0) return;
      v1::Tensor* t = g.mutable_constants(pick(g.constants_size()))->mutable_value();
      if (rng() % 2) {
        t->mutable_data()->push_back('x');
      } else {
        t->add_shape(small);
      }
      return;
    }
    case 6:  // an output reference
      if (g.outputs_size() == 0) return;
      g.mutable_outputs(pick(g.outputs_size()))
          ->mutable_node_output()
          ->set_node(pick(g.nodes_size() + 1));
      return;
    default:  // an output type
      if (g.nodes_size() == 0) return;
      v1::Node* n = g.mutable_nodes(pick(g.nodes_size()));
      if (n->output_types_size() == 0) return;
      n->mutable_output_types(0)->add_shape()->set_known(true);
      return;
  }
}

TEST(RequestFuzzTest, MutatedGraphsAreErrorsNotCrashes) {
  const v1::CompileRequest seed = Seed();
  std::mt19937_64 rng(20261121);
  const std::vector<Tensor> args = {
      *Tensor::Of<double>(DType::kFloat64, {2, 3}, {0.1, -0.2, 0.3, 0.4, 0.5, -0.6}),
      *Tensor::Of<double>(DType::kFloat64, {3, 2}, {1, -1, 0.5, 0.25, -0.5, 2}),
      *Tensor::Of<int64_t>(DType::kInt64, {2}, {1, 0})};
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 1500; ++i) {
    v1::CompileRequest r = seed;
    for (int m = 0; m <= i % 3; ++m) Mutate(*r.mutable_graph(), rng);
    // Sometimes through the wire with a flipped byte.
    if (i % 5 == 0) {
      std::string bytes = r.SerializeAsString();
      bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
      if (!r.ParseFromString(bytes)) {
        ++rejected;
        continue;
      }
    }
    absl::StatusOr<server::CompileJob> job = server::PrepareCompile(r, GraphLimits{});
    if (!job.ok()) {
      EXPECT_NE(job.status().code(), absl::StatusCode::kInternal) << job.status();
      ++rejected;
      continue;
    }
    auto f = server::Compile(*job);
    if (!f.ok()) {
      ++rejected;
      continue;
    }
    ++accepted;
    std::vector<Tensor> mine(args.begin(), args.end());
    mine.resize(job->graph.inputs.size(), args[0]);
    server::Execute(**f, mine, nullptr, [] { return absl::OkStatus(); }).IgnoreError();
  }
  EXPECT_GT(accepted, 10);
  EXPECT_GT(rejected, 500);
}

}  // namespace
}  // namespace kiln
