// kiln::onnx::Import on models built here: values, names, options, and every kind of bad
// model answered with its status (the conformance runner covers the operators).
#include "proto/onnx/import.h"

#include <cmath>
#include <functional>
#include <string>

#include "core/compile/function.h"
#include "core/grad/gradient.h"
#include "core/ops/reduce.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "proto/onnx/onnx_tensor.h"

namespace kiln::onnx {
namespace {

using ::onnx::ModelProto;
using ::onnx::TensorProto;

void SetType(::onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims,
             int elem_type = TensorProto::FLOAT) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  t->mutable_shape();  // a scalar has a shape of no dims
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

// y = MatMul(x, W) + b, with W and b initializers.
ModelProto Linear(int64_t opset = 13) {
  ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("linear");
  SetType(g->add_input(), "x", {2, 3});
  SetType(g->add_output(), "y", {2, 2});
  const Tensor w = *Tensor::Of<float>(DType::kFloat32, {3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor b = *Tensor::Of<float>(DType::kFloat32, {2}, {0.5f, -0.5f});
  *g->add_initializer() = TensorToOnnx(w, "W");
  *g->add_initializer() = TensorToOnnx(b, "b");
  auto* mm = g->add_node();
  mm->set_op_type("MatMul");
  mm->set_name("mm");
  mm->add_input("x");
  mm->add_input("W");
  mm->add_output("xw");
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->set_name("bias");
  add->add_input("xw");
  add->add_input("b");
  add->add_output("y");
  return m;
}

std::string Bytes(const ModelProto& m) { return m.SerializeAsString(); }

TEST(OnnxImport, ALinearModelKeepsItsNamesAndComputes) {
  absl::StatusOr<ImportedModel> model = Import(Bytes(Linear()));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->input_names, std::vector<std::string>{"x"});
  EXPECT_EQ(model->output_names, std::vector<std::string>{"y"});
  EXPECT_EQ(model->opset, 13);
  EXPECT_TRUE(model->weights.empty());
  absl::StatusOr<Function> f = function(model->inputs, model->outputs);
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor x = *Tensor::Of<float>(DType::kFloat32, {2, 3}, {1, 0, 0, 0, 1, 1});
  absl::StatusOr<std::vector<Tensor>> y = (*f)({x});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dtype(), DType::kFloat32);
  EXPECT_EQ((*y)[0].shape(), (Shape{2, 2}));
  const float want[] = {1.5f, 1.5f, 8.5f, 9.5f};  // rows of W summed, plus b
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*y)[0].data<float>()[i], want[i]);
}

TEST(OnnxImport, TrainableWeightsAreInputsThatGradReaches) {
  ImportOptions options;
  options.trainable = true;
  absl::StatusOr<ImportedModel> model = Import(Bytes(Linear()), options);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->weight_names, (std::vector<std::string>{"W", "b"}));
  EXPECT_EQ(model->weight_values[0].shape(), (Shape{3, 2}));
  // d sum(y) / d b = the number of rows, for each bias.
  const Var cost = sum(model->outputs[0]);
  const Var g = grad(cost, model->weights[1]);
  std::vector<Var> inputs = model->inputs;
  inputs.insert(inputs.end(), model->weights.begin(), model->weights.end());
  absl::StatusOr<Function> f = function(inputs, {g});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor x = Tensor::Zeros(DType::kFloat32, {2, 3});
  absl::StatusOr<std::vector<Tensor>> out =
      (*f)({x, model->weight_values[0], model->weight_values[1]});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[0], 2.0f);
  EXPECT_EQ((*out)[0].data<float>()[1], 2.0f);
}

TEST(OnnxImport, BadModelsGetTheirStatus) {
  EXPECT_EQ(Import("not a model").status().code(), absl::StatusCode::kInvalidArgument);

  ModelProto unknown = Linear();
  unknown.mutable_graph()->mutable_node(1)->set_op_type("NoSuchOp");
  absl::Status s = Import(Bytes(unknown)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;  // the checker knows no NoSuchOp

  ModelProto random = Linear();  // RandomUniformLike(xw): random, which the importer does not take
  random.mutable_graph()->mutable_node(1)->set_op_type("RandomUniformLike");
  random.mutable_graph()->mutable_node(1)->mutable_input()->RemoveLast();
  s = Import(Bytes(random)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("RandomUniformLike (opset 13)"), absl::string_view::npos) << s;

  ModelProto undefined = Linear();
  undefined.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
  s = Import(Bytes(undefined)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("nowhere"), absl::string_view::npos) << s;

  ModelProto domain = Linear();
  domain.mutable_graph()->mutable_node(0)->set_domain("com.example");
  s = Import(Bytes(domain)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("com.example"), absl::string_view::npos) << s;

  EXPECT_EQ(Import(Bytes(Linear(18))).status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(Import(Bytes(Linear(0))).status().code(), absl::StatusCode::kInvalidArgument);

  ImportOptions small;
  small.max_model_bytes = 10;
  EXPECT_EQ(Import(Bytes(Linear()), small).status().code(), absl::StatusCode::kResourceExhausted);
  small = ImportOptions();
  small.max_nodes = 1;
  EXPECT_EQ(Import(Bytes(Linear()), small).status().code(), absl::StatusCode::kResourceExhausted);
  small = ImportOptions();
  small.max_tensor_bytes = 8;  // W holds 24 bytes
  EXPECT_EQ(Import(Bytes(Linear()), small).status().code(), absl::StatusCode::kResourceExhausted);
}

// ReduceSum(x, axes) with x (2, 3) and the axes an int64 graph input of `axes_len` entries
// (-1: a length not known statically), keepdims off.
ModelProto SumOverAxesInput(int64_t axes_len) {
  ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("reduce");
  SetType(g->add_input(), "x", {2, 3});
  auto* axes = g->add_input();
  axes->set_name("axes");
  axes->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::INT64);
  auto* dim = axes->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  if (axes_len >= 0) dim->set_dim_value(axes_len);
  auto* r = g->add_node();
  r->set_op_type("ReduceSum");
  r->set_name("total");
  r->add_input("x");
  r->add_input("axes");
  r->add_output("y");
  auto* keepdims = r->add_attribute();
  keepdims->set_name("keepdims");
  keepdims->set_type(::onnx::AttributeProto::INT);
  keepdims->set_i(0);
  auto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("n");
  return m;
}

TEST(OnnxImport, AxesOfAnUnknownCountAreNamed) {
  const absl::Status s = Import(Bytes(SumOverAxesInput(-1))).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("ReduceSum node 'total' (opset 13)"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("axes"), absl::string_view::npos) << s;
}

// Axes computed at run time: whichever axis the call names is reduced (and dropped), and one
// out of range is an error of the call naming the node.
TEST(OnnxImport, AxesComputedAtRunTimeReduceTheAxisNamed) {
  absl::StatusOr<ImportedModel> model = Import(Bytes(SumOverAxesInput(1)));
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<Function> f = function(model->inputs, model->outputs);
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor x = *Tensor::Of<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto sum_over = [&](int64_t axis) {
    return (*f)({x, *Tensor::Of<int64_t>(DType::kInt64, {1}, {axis})});
  };
  absl::StatusOr<std::vector<Tensor>> rows = sum_over(1), cols = sum_over(-2);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_TRUE(cols.ok()) << cols.status();
  EXPECT_EQ((*rows)[0].shape(), (Shape{2}));
  EXPECT_EQ((*rows)[0].data<float>()[0], 6.0f);
  EXPECT_EQ((*rows)[0].data<float>()[1], 15.0f);
  EXPECT_EQ((*cols)[0].shape(), (Shape{3}));
  EXPECT_EQ((*cols)[0].data<float>()[2], 9.0f);
  const absl::Status bad = sum_over(2).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
  EXPECT_NE(bad.message().find("ReduceSum node 'total' (opset 13): an axis is outside [-2, 2)"),
            absl::string_view::npos)
      << bad;
}

}  // namespace
}  // namespace kiln::onnx

namespace kiln::onnx {
namespace {

// A model of one node over x (1, 1, 4, 4) and the float initializer w (1, 1, 3, 3).
std::string OneNode(const std::function<void(::onnx::NodeProto*)>& make) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("one");
  SetType(g->add_input(), "x", {1, 1, 4, 4});
  SetType(g->add_output(), "y", {});
  *g->add_initializer() = TensorToOnnx(Tensor::Zeros(DType::kFloat32, {1, 1, 3, 3}), "w");
  auto* node = g->add_node();
  node->set_name("hostile");
  node->add_output("y");
  make(node);
  return m.SerializeAsString();
}

void SetInts(::onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void SetInt(::onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

// Geometry attributes of the wrong length or past 2^31 are refused before any arithmetic on them.
TEST(OnnxImport, HostileGeometryIsInvalid) {
  auto conv = [](const std::string& op, auto set) {
    return OneNode([&](::onnx::NodeProto* n) {
      n->set_op_type(op);
      n->add_input("x");
      n->add_input("w");
      set(n);
    });
  };
  const std::string cases[] = {
      conv("Conv", [](auto* n) { SetInts(n, "strides", {1}); }),
      conv("Conv",
           [](auto* n) {
             SetInts(n, "kernel_shape", {int64_t{1} << 40, 3});
           }),
      conv("Conv",
           [](auto* n) {
             SetInts(n, "dilations", {0, 1});
           }),
      conv("Conv",
           [](auto* n) {
             SetInts(n, "strides", {0, 1});
           }),  // SIGFPE in libonnx
      conv("ConvTranspose", [](auto* n) { SetInts(n, "pads", {1}); }),
      conv("ConvTranspose",
           [](auto* n) {
             SetInts(n, "strides", {int64_t{1} << 40, 1});
           }),
      conv("ConvTranspose",
           [](auto* n) {
             SetInts(n, "output_padding", {-1, 0});
           }),
      OneNode([](::onnx::NodeProto* n) {
        n->set_op_type("DepthToSpace");
        n->add_input("x");
        SetInt(n, "blocksize", int64_t{1} << 40);  // SIGFPE in libonnx
      }),
  };
  for (const std::string& model : cases) {
    const absl::Status s = Import(model).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("'hostile'"), absl::string_view::npos) << s;
  }
}

}  // namespace
}  // namespace kiln::onnx

namespace kiln::onnx {
namespace {

::onnx::AttributeProto* AddAttr(::onnx::NodeProto* node, const std::string& name) {
  auto* a = node->add_attribute();
  a->set_name(name);
  return a;
}

// Pad (reflect) -> Resize (cubic, scales 1.5 and 2) -> MaxPool (dilated) -> AveragePool
// (ceil_mode, uneven pads) over a float64 x (1, 1, 3, 4): the lowerings' gradient against
// central differences.
TEST(OnnxImport, PadResizeAndPaddedPoolsHaveGradients) {
  ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("resample");
  SetType(g->add_input(), "x", {1, 1, 3, 4}, TensorProto::DOUBLE);
  SetType(g->add_output(), "y", {}, TensorProto::DOUBLE);
  *g->add_initializer() = TensorToOnnx(
      *Tensor::Of<int64_t>(DType::kInt64, {8}, {0, 0, 1, 0, 0, 0, 0, 2}), "pads");
  *g->add_initializer() =
      TensorToOnnx(*Tensor::Of<float>(DType::kFloat32, {4}, {1, 1, 1.5f, 2}), "scales");
  auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    for (const std::string& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  };
  auto ints = [](::onnx::AttributeProto* a, std::vector<int64_t> v) {
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t i : v) a->add_ints(i);
  };
  auto text = [](::onnx::AttributeProto* a, const std::string& v) {
    a->set_type(::onnx::AttributeProto::STRING);
    a->set_s(v);
  };
  text(AddAttr(node("Pad", {"x", "pads"}, "padded"), "mode"), "reflect");
  text(AddAttr(node("Resize", {"padded", "", "scales"}, "resized"), "mode"), "cubic");
  auto* maxpool = node("MaxPool", {"resized"}, "maxed");  // strides not a multiple: slices
  ints(AddAttr(maxpool, "kernel_shape"), {2, 2});
  ints(AddAttr(maxpool, "dilations"), {2, 2});
  ints(AddAttr(maxpool, "pads"), {1, 1, 1, 1});
  auto* avgpool = node("AveragePool", {"maxed"}, "averaged");  // Kiln's Pool, padded
  ints(AddAttr(avgpool, "kernel_shape"), {2, 2});
  ints(AddAttr(avgpool, "strides"), {2, 2});
  ints(AddAttr(avgpool, "pads"), {1, 0, 0, 1});
  AddAttr(avgpool, "ceil_mode")->set_type(::onnx::AttributeProto::INT);
  avgpool->mutable_attribute()->rbegin()->set_i(1);
  auto* total = node("ReduceSum", {"averaged"}, "y");
  AddAttr(total, "keepdims")->set_type(::onnx::AttributeProto::INT);  // 0: a scalar

  absl::StatusOr<ImportedModel> model = Import(Bytes(m));
  ASSERT_TRUE(model.ok()) << model.status();
  const Var x = model->inputs[0], y = model->outputs[0];
  absl::StatusOr<Function> f = function({x}, {y, grad(y, x)});
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<double> values;
  for (int i = 0; i < 12; ++i) values.push_back(std::sin(1.7 * i) + 0.1 * i);
  auto at = [&](const std::vector<double>& v) {
    return (*f)({*Tensor::FromValues<double>(DType::kFloat64, {1, 1, 3, 4}, v)});
  };
  absl::StatusOr<std::vector<Tensor>> out = at(values);
  ASSERT_TRUE(out.ok()) << out.status();
  const double eps = 1e-6;
  double reach = 0;  // how much of x the gradient sees
  for (int i = 0; i < 12; ++i) {
    reach += std::abs((*out)[1].data<double>()[i]);
    std::vector<double> up = values, down = values;
    up[i] += eps;
    down[i] -= eps;
    const double high = (*at(up))[0].data<double>()[0], low = (*at(down))[0].data<double>()[0];
    const double numeric = (high - low) / (2 * eps);
    EXPECT_NEAR((*out)[1].data<double>()[i], numeric, 1e-6) << "element " << i;
  }
  EXPECT_GT(reach, 1.0);
}

}  // namespace
}  // namespace kiln::onnx

namespace kiln::onnx {
namespace {

// Scan over x (2, 3) along axis 1, backwards: the state sums the columns from the last, the
// scan output (each running sum, doubled) is stacked along axis 1 and reversed back.
TEST(OnnxImport, ScanReadsAxesAndDirections) {
  ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("scan");
  SetType(g->add_input(), "s0", {2});
  SetType(g->add_input(), "x", {2, 3});
  SetType(g->add_output(), "s", {2});
  SetType(g->add_output(), "ys", {2, 3});
  auto* scan = g->add_node();
  scan->set_op_type("Scan");
  scan->add_input("s0");
  scan->add_input("x");
  scan->add_output("s");
  scan->add_output("ys");
  auto ints = [&](const std::string& name, std::vector<int64_t> v) {
    auto* a = AddAttr(scan, name);
    a->set_type(v.size() == 1 && name == "num_scan_inputs" ? ::onnx::AttributeProto::INT
                                                            : ::onnx::AttributeProto::INTS);
    if (a->type() == ::onnx::AttributeProto::INT) a->set_i(v[0]);
    for (int64_t i : v) {
      if (a->type() == ::onnx::AttributeProto::INTS) a->add_ints(i);
    }
  };
  ints("num_scan_inputs", {1});
  ints("scan_input_axes", {1});
  ints("scan_input_directions", {1});
  ints("scan_output_axes", {1});
  ints("scan_output_directions", {1});
  auto* body_attr = AddAttr(scan, "body");
  body_attr->set_type(::onnx::AttributeProto::GRAPH);
  auto* body = body_attr->mutable_g();
  body->set_name("body");
  SetType(body->add_input(), "s_in", {2});
  SetType(body->add_input(), "x_t", {2});
  SetType(body->add_output(), "s_out", {2});
  SetType(body->add_output(), "y_t", {2});
  auto* add = body->add_node();
  add->set_op_type("Add");
  add->add_input("s_in");
  add->add_input("x_t");
  add->add_output("s_out");
  auto* twice = body->add_node();
  twice->set_op_type("Add");
  twice->add_input("s_out");
  twice->add_input("s_out");
  twice->add_output("y_t");

  absl::StatusOr<ImportedModel> model = Import(Bytes(m));
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<Function> f = function(model->inputs, model->outputs);
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<std::vector<Tensor>> out =
      (*f)({*Tensor::Of<float>(DType::kFloat32, {2}, {10, 20}),
            *Tensor::Of<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[0], 16.0f);  // 10 + 3 + 2 + 1
  EXPECT_EQ((*out)[0].data<float>()[1], 35.0f);  // 20 + 6 + 5 + 4
  // Row 0's running sums from the end: 13, 15, 16 at columns 2, 1, 0; doubled.
  const float want[] = {32, 30, 26, 70, 62, 52};
  const Tensor ys = (*out)[1].Contiguous();  // (a transposed view of the stacked steps)
  ASSERT_EQ(ys.shape(), (Shape{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(ys.data<float>()[i], want[i]) << i;
}

}  // namespace
}  // namespace kiln::onnx

namespace kiln::onnx {
namespace {

// An AveragePool that needs the padded path (ceil_mode) on an input declared huge: a dim past
// 2^31 - 1 is refused, and a divisor past the tensor limit too, before anything is counted.
TEST(OnnxImport, APaddedAverageOfAHugeDeclaredInputIsRefused) {
  auto pool_of = [](int64_t dim) {
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("pool");
    SetType(g->add_input(), "x", {1, 1, dim, dim});
    SetType(g->add_output(), "y", {});
    auto* n = g->add_node();
    n->set_op_type("AveragePool");
    n->set_name("big");
    n->add_input("x");
    n->add_output("y");
    SetInts(n, "kernel_shape", {2, 2});
    SetInts(n, "strides", {1, 1});
    SetInt(n, "ceil_mode", 1);
    return m.SerializeAsString();
  };
  const absl::Status past = Import(pool_of(int64_t{1} << 40)).status();
  EXPECT_EQ(past.code(), absl::StatusCode::kInvalidArgument) << past;
  const absl::Status large = Import(pool_of(int64_t{1} << 30)).status();
  EXPECT_EQ(large.code(), absl::StatusCode::kResourceExhausted) << large;
  EXPECT_NE(large.message().find("AveragePool node 'big'"), absl::string_view::npos) << large;
}

}  // namespace
}  // namespace kiln::onnx
