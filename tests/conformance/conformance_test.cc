// The conformance vectors shared with the Python client (tests/golden/conformance.txt): for
// each case, a Python expression over typed inputs and what the C++ graph model makes of it:
// the op's kind, attributes and printed name, the output types, and the whole graph as the
// wire carries it (so the function ids agree too). The Python tests build the same expression
// with kiln.tensor and must agree on every field. KILN_UPDATE_GOLDEN=1 rewrites the file.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/kiln.h"
#include "proto/convert/graph_convert.h"
#include "tests/testing/golden.h"

namespace kiln {
namespace {

struct Case {
  std::string python;              // the expression, over inputs named x, y, z
  std::vector<std::string> types;  // one Aesara constructor per input: "dmatrix", "ivector"...
  std::function<Var(const std::vector<Var>&)> build;
};

Var Input(const std::string& ctor, const std::string& name) {
  static const std::map<std::string, std::function<Var(std::string)>> ctors = {
      {"dscalar", [](std::string n) { return dscalar(n); }},
      {"dvector", [](std::string n) { return dvector(n); }},
      {"dmatrix", [](std::string n) { return dmatrix(n); }},
      {"drow", [](std::string n) { return drow(n); }},
      {"dcol", [](std::string n) { return dcol(n); }},
      {"dtensor3", [](std::string n) { return dtensor3(n); }},
      {"fvector", [](std::string n) { return fvector(n); }},
      {"fmatrix", [](std::string n) { return fmatrix(n); }},
      {"ivector", [](std::string n) { return ivector(n); }},
      {"imatrix", [](std::string n) { return imatrix(n); }},
      {"lvector", [](std::string n) { return lvector(n); }},
      {"lscalar", [](std::string n) { return lscalar(n); }},
      {"bvector", [](std::string n) { return bvector(n); }},
  };
  return ctors.at(ctor)(name);
}

std::string AttrText(const AttrValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return absl::StrCat(*i);
  if (const auto* d = std::get_if<double>(&v)) return absl::StrCat(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return absl::StrCat("'", *s, "'");
  return absl::StrCat("[", absl::StrJoin(std::get<std::vector<int64_t>>(v), ","), "]");
}

std::vector<Case> Cases() {
  using V = const std::vector<Var>&;
  return {
      {"x + y", {"dmatrix", "dmatrix"}, [](V v) { return v[0] + v[1]; }},
      {"x - y", {"dmatrix", "drow"}, [](V v) { return v[0] - v[1]; }},
      {"x * y", {"dvector", "fvector"}, [](V v) { return v[0] * v[1]; }},
      {"x / y", {"ivector", "ivector"}, [](V v) { return v[0] / v[1]; }},
      {"x // y", {"ivector", "ivector"}, [](V v) { return int_div(v[0], v[1]); }},
      {"x % y", {"lvector", "ivector"}, [](V v) { return mod(v[0], v[1]); }},
      {"x ** y", {"dvector", "dvector"}, [](V v) { return pow(v[0], v[1]); }},
      {"-x", {"dmatrix"}, [](V v) { return -v[0]; }},
      {"x * 2.0", {"dmatrix"}, [](V v) { return v[0] * 2.0; }},
      {"x * 2", {"fvector"}, [](V v) { return v[0] * 2; }},
      {"x + 1.5", {"ivector"}, [](V v) { return v[0] + 1.5; }},
      {"2.0 - x", {"dvector"}, [](V v) { return 2.0 - v[0]; }},
      {"x < y", {"dvector", "dvector"}, [](V v) { return lt(v[0], v[1]); }},
      {"x >= y", {"dmatrix", "dmatrix"}, [](V v) { return ge(v[0], v[1]); }},
      {"kt.eq(x, y)", {"ivector", "ivector"}, [](V v) { return eq(v[0], v[1]); }},
      {"kt.exp(x)", {"dmatrix"}, [](V v) { return exp(v[0]); }},
      {"kt.log(x)", {"ivector"}, [](V v) { return log(v[0]); }},
      {"kt.tanh(x)", {"fmatrix"}, [](V v) { return tanh(v[0]); }},
      {"kt.sqrt(x)", {"dvector"}, [](V v) { return sqrt(v[0]); }},
      {"kt.abs(x)", {"ivector"}, [](V v) { return abs(v[0]); }},
      {"kt.sqr(x)", {"dvector"}, [](V v) { return sqr(v[0]); }},
      {"kt.log1p(x)", {"dvector"}, [](V v) { return log1p(v[0]); }},
      {"kt.math.sigmoid(x)", {"dvector"}, [](V v) { return sigmoid(v[0]); }},
      {"kt.math.softplus(x)", {"dvector"}, [](V v) { return softplus(v[0]); }},
      {"kt.maximum(x, y)", {"dvector", "dvector"}, [](V v) { return maximum(v[0], v[1]); }},
      {"kt.switch(x, y, z)",
       {"bvector", "dvector", "dvector"},
       [](V v) { return switch_(v[0], v[1], v[2]); }},
      {"x.astype('float32')", {"dvector"}, [](V v) { return cast(v[0], DType::kFloat32); }},
      {"x.T", {"dmatrix"}, [](V v) { return transpose(v[0]); }},
      {"x.dimshuffle('x', 0)",
       {"dvector"},
       [](V v) {
         return dimshuffle(v[0], {-1, 0});
       }},
      {"x.dimshuffle(1, 'x', 0)",
       {"dmatrix"},
       [](V v) {
         return dimshuffle(v[0], {1, -1, 0});
       }},
      {"x.sum()", {"dmatrix"}, [](V v) { return sum(v[0]); }},
      {"x.sum(axis=0)", {"dmatrix"}, [](V v) { return sum(v[0], Axes{0}); }},
      {"x.sum(axis=1, keepdims=True)", {"dmatrix"}, [](V v) { return sum(v[0], Axes{1}, true); }},
      {"x.sum()", {"ivector"}, [](V v) { return sum(v[0]); }},
      {"x.max(axis=0)", {"dmatrix"}, [](V v) { return max(v[0], Axes{0}); }},
      {"x.prod()", {"fvector"}, [](V v) { return prod(v[0]); }},
      {"kt.dot(x, y)", {"dmatrix", "dmatrix"}, [](V v) { return dot(v[0], v[1]); }},
      {"kt.dot(x, y)", {"dmatrix", "dvector"}, [](V v) { return dot(v[0], v[1]); }},
      {"kt.dot(x, y)", {"fmatrix", "dmatrix"}, [](V v) { return dot(v[0], v[1]); }},
      {"x.reshape((2, -1))",
       {"dvector"},
       [](V v) {
         return reshape(v[0], {2, -1});
       }},
      {"x.shape", {"dmatrix"}, [](V v) { return shape(v[0]); }},
      {"x[0]", {"dmatrix"}, [](V v) { return subtensor(v[0], {0}); }},
      {"x[1:3]",
       {"dvector"},
       [](V v) {
         return subtensor(v[0], {Slice{1, 3, std::nullopt}});
       }},
      {"x[::-1, 2]",
       {"dmatrix"},
       [](V v) {
         return subtensor(v[0], {Slice{std::nullopt, std::nullopt, -1}, 2});
       }},
      {"kt.set_subtensor(x[0], y)",
       {"dmatrix", "dvector"},
       [](V v) { return set_subtensor(subtensor(v[0], {0}), v[1]); }},
      {"kt.inc_subtensor(x[1:], y)",
       {"dvector", "dscalar"},
       [](V v) {
         return inc_subtensor(subtensor(v[0], {Slice{1, std::nullopt, std::nullopt}}), v[1]);
       }},
      {"kt.concatenate([x, y])",
       {"dmatrix", "dmatrix"},
       [](V v) {
         return concatenate({v[0], v[1]});
       }},
      {"kt.concatenate([x, y], axis=1)",
       {"dmatrix", "dmatrix"},
       [](V v) {
         return concatenate({v[0], v[1]}, 1);
       }},
      {"kt.stack([x, y])",
       {"dvector", "dvector"},
       [](V v) {
         return stack({v[0], v[1]});
       }},
      {"kt.zeros_like(x)", {"dmatrix"}, [](V v) { return zeros_like(v[0]); }},
      {"kt.special.softmax(x, axis=-1)", {"dmatrix"}, [](V v) { return softmax(v[0], -1); }},
      {"kt.mean(x)", {"dmatrix"}, [](V v) { return mean(v[0]); }},
      {"kt.argmax(x, axis=1)", {"dmatrix"}, [](V v) { return argmax(v[0], Axes{1}); }},
      {"kt.outer(x, y)", {"dvector", "dvector"}, [](V v) { return outer(v[0], v[1]); }},
      {"kt.zeros((2, 3)) + x",
       {"dscalar"},
       [](V v) {
         return zeros({constant(2), constant(3)}) + v[0];
       }},
      {"kt.ones((x.shape[0],))",
       {"dvector"},
       [](V v) { return ones({subtensor(shape(v[0]), {0})}); }},
      {"kt.alloc(x, 2, 3)",
       {"dscalar"},
       [](V v) {
         return alloc(v[0], {constant(2), constant(3)});
       }},
      {"kt.ones_like(x)", {"imatrix"}, [](V v) { return ones_like(v[0]); }},
      {"kt.arange(x)", {"lscalar"}, [](V v) { return arange(v[0]); }},
      {"kt.arange(5) + x", {"lscalar"}, [](V v) { return arange(constant(5)) + v[0]; }},
      {"kt.arange(1, x, 2)",
       {"lscalar"},
       [](V v) { return arange(constant(1), v[0], constant(2)); }},
      {"kt.eye(3) * x", {"dscalar"}, [](V v) { return eye(3) * v[0]; }},
      {"kt.clip(x, 0.0, 1.0)",
       {"dvector"},
       [](V v) { return clip(v[0], constant(0.0), constant(1.0)); }},
      {"kt.where(x, y, z)",
       {"bvector", "dvector", "dscalar"},
       [](V v) { return where(v[0], v[1], v[2]); }},
      {"x.flatten()", {"dmatrix"}, [](V v) { return flatten(v[0]); }},
      {"x.min(axis=1)", {"dmatrix"}, [](V v) { return min(v[0], Axes{1}); }},
      {"x.mean(axis=0)", {"dmatrix"}, [](V v) { return mean(v[0], Axes{0}); }},
      {"kt.special.log_softmax(x)", {"dmatrix"}, [](V v) { return log_softmax(v[0]); }},
  };
}

std::string RefText(const v1::ValueRef& r) {
  if (r.has_node_output())
    return absl::StrCat("n", r.node_output().node(), ".", r.node_output().output());
  if (r.ref_case() == v1::ValueRef::kConstant) return absl::StrCat("c", r.constant());
  return absl::StrCat("i", r.input());
}

std::string AttrText(const v1::AttrValue& v) {
  switch (v.value_case()) {
    case v1::AttrValue::kI:
      return absl::StrCat(v.i());
    case v1::AttrValue::kF:
      return absl::StrCat(v.f());
    case v1::AttrValue::kS:
      return absl::StrCat("'", v.s(), "'");
    default:
      return absl::StrCat("[", absl::StrJoin(v.ints().values(), ","), "]");
  }
}

// The wire graph in one line: constants (dtype, shape, hex bytes), nodes (kind{attrs}(refs)),
// outputs.
std::string WireText(const v1::Graph& g) {
  std::vector<std::string> parts;
  for (int c = 0; c < g.constants_size(); ++c) {
    const v1::Tensor& t = g.constants(c).value();
    parts.push_back(absl::StrCat("c", c, "=", v1::DType_Name(t.dtype()), "[",
                                 absl::StrJoin(t.shape(), ","),
                                 "]:", absl::BytesToHexString(t.data())));
  }
  for (int n = 0; n < g.nodes_size(); ++n) {
    const v1::Node& node = g.nodes(n);
    std::vector<std::string> attrs, refs;
    for (const v1::Attr& a : node.op().attrs())
      attrs.push_back(a.name() + "=" + AttrText(a.value()));
    for (const v1::ValueRef& r : node.inputs()) refs.push_back(RefText(r));
    parts.push_back(absl::StrCat("n", n, "=", node.op().kind(), "{", absl::StrJoin(attrs, ";"),
                                 "}(", absl::StrJoin(refs, ","), ")"));
  }
  std::vector<std::string> outs;
  for (const v1::ValueRef& r : g.outputs()) outs.push_back(RefText(r));
  parts.push_back(absl::StrCat("out=", absl::StrJoin(outs, ",")));
  return absl::StrJoin(parts, " ");
}

// One line per case: python | input types | kind | attrs | output types | op name | wire graph.
void Render(std::string* text) {
  std::ostringstream out;
  out << "# python | inputs | kind | attrs | outputs | name | wire graph   (tests/conformance)\n";
  for (const Case& c : Cases()) {
    std::vector<Var> ins;
    const char* names[] = {"x", "y", "z"};
    for (size_t i = 0; i < c.types.size(); ++i) ins.push_back(Input(c.types[i], names[i]));
    Var y = c.build(ins);
    if (!y.ok()) {
      ADD_FAILURE() << c.python << ": " << y.status();
      continue;
    }
    const Apply* node = y->owner();
    std::vector<std::string> attrs, outs;
    const OpAttrs op_attrs = node->op().Attrs();
    for (const auto& [k, v] : op_attrs.values()) {
      attrs.push_back(absl::StrCat(k, "=", AttrText(v)));
    }
    for (int o = 0; o < node->num_outputs(); ++o) {
      outs.push_back(node->output_ptr(o)->type()->ToString());
    }
    absl::StatusOr<v1::Graph> wire = GraphToProto(ins, {y});
    ASSERT_TRUE(wire.ok()) << wire.status();
    out << c.python << " | " << absl::StrJoin(c.types, ",") << " | "
        << node->op().type_name() << " | " << absl::StrJoin(attrs, ";") << " | "
        << absl::StrJoin(outs, ";") << " | " << node->op().Name() << " | " << WireText(*wire)
        << "\n";
  }
  *text = out.str();
}

TEST(ConformanceTest, VectorsMatchTheGraphModel) {
  std::string text;
  Render(&text);
  testing::ExpectGolden(text, "tests/golden/conformance.txt");
}

}  // namespace
}  // namespace kiln
