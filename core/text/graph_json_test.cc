// The console's graph JSON: nodes, edges and outputs (golden), in-place and view edges marked,
// an OpFromGraph's inner graph nested, and text escaped.
#include "core/text/graph_json.h"

#include <gtest/gtest.h>

#include "core/builders/op_from_graph.h"
#include "core/kiln.h"
#include "tests/testing/golden.h"

namespace kiln {
namespace {

std::vector<VariablePtr> Ptrs(const std::vector<Var>& vars) {
  std::vector<VariablePtr> out;
  for (const Var& v : vars) out.push_back(v.ptr());
  return out;
}

// A transpose (a view of its input), a constant, two outputs sharing a node.
TEST(GraphJsonTest, SeedGraphGolden) {
  Var x = dmatrix("x");
  Var t = dimshuffle(x, {1, 0});
  Var y = exp(t) * 2.0;
  testing::ExpectGolden(GraphJson(Ptrs({x}), Ptrs({y, sum(y)})),
                        "tests/golden/graph_json_seed.json");
}

TEST(GraphJsonTest, MarksTheEdgesAnInPlaceOpOverwrites) {
  Var a = dmatrix("a"), b = dmatrix("b");
  absl::StatusOr<Function> f = function({a, b}, {exp(dot(a, b))});
  ASSERT_TRUE(f.ok()) << f.status();
  const std::string json = GraphJson(f->fgraph().inputs(), f->fgraph().outputs());
  // exp runs in place on dot's output (an intermediate); the inputs are never overwritten.
  EXPECT_NE(json.find("\"destroyed\":true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"label\":\"a\""), std::string::npos);
}

TEST(GraphJsonTest, NestsAnOpFromGraphsInnerGraphAndEscapesText) {
  Var x = dscalar("x \"quoted\"\n"), y = dscalar("y");
  OpPtr op = *op_from_graph({x, y}, {x + y * 2.0});
  absl::StatusOr<ApplyPtr> node = op->MakeNode({x.ptr(), y.ptr()});
  ASSERT_TRUE(node.ok()) << node.status();
  const std::string json = GraphJson({}, {(*node)->output(0)});
  EXPECT_NE(json.find("\"inner\":{\"nodes\":[{\"id\":0,\"kind\":\"input\""), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"label\":\"x \\\"quoted\\\"\\n\""), std::string::npos) << json;
}

TEST(GraphJsonTest, DrawsACompositesScalarProgramAsItsInnerGraph) {
  Var x = dvector("x");
  absl::StatusOr<Function> f = function({x}, {exp(x) * 2.0 + x});
  ASSERT_TRUE(f.ok()) << f.status();
  const std::string json = GraphJson(f->fgraph().inputs(), f->fgraph().outputs());
  // The Composite's inner graph: its input i0 first, then its constant and instructions.
  EXPECT_NE(json.find("\"inner\":{\"nodes\":[{\"id\":0,\"kind\":\"input\",\"label\":\"i0\","
                      "\"type\":\"Scalar(float64)\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"label\":\"exp\""), std::string::npos) << json;
}

}  // namespace
}  // namespace kiln
