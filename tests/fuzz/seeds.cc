#include "tests/fuzz/seeds.h"

#include <utility>

#include "core/tensor/check.h"
#include "core/builders/op_from_graph.h"
#include "core/kiln.h"
#include "core/ops/random.h"
#include "core/scan/scan.h"
#include "proto/convert/graph_convert.h"

namespace kiln::fuzz {
namespace {

v1::Graph ToGraph(const std::vector<Var>& inputs, const std::vector<Var>& outputs) {
  absl::StatusOr<v1::Graph> g = GraphToProto(inputs, outputs);
  KILN_CHECK(g.ok()) << g.status();
  return *std::move(g);
}

v1::CompileRequest Request(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                           v1::Mode mode = v1::MODE_UNSPECIFIED) {
  v1::CompileRequest r;
  *r.mutable_graph() = ToGraph(inputs, outputs);
  r.set_mode(mode);
  return r;
}

}  // namespace

std::vector<v1::CompileRequest> SeedCompileRequests() {
  std::vector<v1::CompileRequest> seeds;
  Var a = vector("a");
  seeds.push_back(Request({a}, {a + pow(a, 10)}));
  Var x = dmatrix("x"), y = dmatrix("y");
  seeds.push_back(Request({x}, {x * 2.0}));
  seeds.push_back(Request({x}, {sum(x), sum(x, {1}), max(x, {0})}));
  seeds.push_back(Request({x, y}, {dot(x, y)}));
  Var X = dmatrix("X"), W = dmatrix("W"), t = lvector("t");
  Var cost = mean(categorical_crossentropy(softmax(tanh(dot(X, W)) * 2.0 + 1.5), t));
  seeds.push_back(Request({X, W, t}, {cost, sum(subtensor(X, {Slice{0, 1, 1}}))}));
  Var v = dvector("v"), idx = lvector("idx");
  seeds.push_back(Request({v, idx}, {take(v, idx), set_subtensor(take(v, idx), constant(1.0))}));
  Var i = ivector("i"), j = ivector("j");
  seeds.push_back(Request({i, j}, {i / j, i % j, i & j, cumsum(i), sort(j)}, v1::MODE_FAST_COMPILE));
  Var c = bvector("c"), f = fvector("f");
  seeds.push_back(Request({c, f}, {switch_(c > 0, exp(f), log(f)), argmax(f)}, v1::MODE_NONE));
  Var m = dtensor3("m"), dims = tensor(DType::kInt64, {2}, "dims");
  seeds.push_back(Request({m, dims}, {reshape(m, dims), sum(m, {0, 2}, true)}));
  // acc <- acc + u, acc bound to the session's shared variable "acc".
  Var acc = dvector("acc"), u = dvector("u");
  v1::CompileRequest update = Request({acc, u}, {acc + u});
  update.mutable_graph()->mutable_inputs(0)->set_shared("acc");
  v1::Update* up = update.add_updates();
  up->set_input(0);
  *up->mutable_value() = update.graph().outputs(0);
  seeds.push_back(std::move(update));
  // Data-dependent lengths: the coordinates of a mask, and a take through them.
  seeds.push_back(Request({x}, {nonzero(gt(x, constant(0.5)))[1],
                                take(flatten(x), nonzero(gt(flatten(x), constant(0.0)))[0])}));
  // Print: values shown at each call, in an output and beside a gradient.
  seeds.push_back(Request({x}, {print(x, "x", {"__str__", "shape"}) * 2.0,
                                sum(print(exp(x), "e"))}));
  // IfElse: lazy branches, nested, and its shape.
  const Var inner = ifelse(sum(x), exp(x), reshape(x, std::vector<int64_t>{-1, 1}) * 2.0);
  seeds.push_back(Request({x}, {ifelse(max(x), inner, x), shape(ifelse(sum(x), x, transpose(x)))}));
  // Scan: a state with two taps and a sequence (its body travels as an attribute), and BPTT.
  Var h0 = dmatrix("h0");
  absl::StatusOr<ScanResult> loop = scan(
      [](const std::vector<Var>& a) { return ScanStep{{tanh(a[0] + a[1] * a[2])}}; },
      ScanArgs{.sequences = {{x}},
               .outputs_info = {{ScanOutput{h0, {-2, -1}}}}});
  KILN_CHECK(loop.ok()) << loop.status();
  seeds.push_back(Request({x, h0}, {loop->outputs[0], grad(sum(loop->outputs[0]), h0)}));
  // RandomVariable: draws from a state input (broadcast parameters, a vector distribution) and
  // the next state.
  Var rng = tensor(DType::kUInt64, {2}, "rng");
  absl::StatusOr<std::vector<Var>> normal = random_variable("normal", rng, {v, constant(2.0)});
  KILN_CHECK(normal.ok()) << normal.status();
  absl::StatusOr<std::vector<Var>> dirichlet =
      random_variable("dirichlet", (*normal)[0], {exp(v)}, {3});
  KILN_CHECK(dirichlet.ok()) << dirichlet.status();
  seeds.push_back(Request({rng, v}, {(*normal)[1], (*dirichlet)[1], (*dirichlet)[0]}));
  // OpFromGraph: kept (its inner graph runs as one node) and inlined.
  for (bool inline_ : {false, true}) {
    absl::StatusOr<std::shared_ptr<const OpFromGraph>> ofg =
        op_from_graph({x, y}, {dot(x, y) + 1.0, exp(x)}, inline_);
    KILN_CHECK(ofg.ok()) << ofg.status();
    absl::StatusOr<ApplyPtr> call = (*ofg)->MakeNode({y.ptr(), x.ptr()});
    KILN_CHECK(call.ok()) << call.status();
    seeds.push_back(Request({x, y}, {Var((*call)->outputs()[0]), Var((*call)->outputs()[1])}));
  }
  // The run-time checks and the profile.
  for (v1::Check check : {v1::CHECK_NAN_GUARD, v1::CHECK_DEBUG}) {
    v1::CompileRequest checked = Request({x}, {log(x) * exp(x)});
    checked.set_check(check);
    checked.set_profile(check == v1::CHECK_DEBUG);
    seeds.push_back(std::move(checked));
  }
  return seeds;
}

std::vector<v1::GradRequest> SeedGradRequests() {
  auto request = [](const std::vector<Var>& inputs, const Var& cost) {
    v1::GradRequest r;
    *r.mutable_graph() = ToGraph(inputs, {cost});
    for (int i = 0; i < static_cast<int>(inputs.size()); ++i) r.add_wrt()->set_input(i);
    return r;
  };
  std::vector<v1::GradRequest> seeds;
  Var x = dvector("x");
  seeds.push_back(request({x}, sum(sigmoid(x) * x)));
  Var X = dmatrix("X"), W = dmatrix("W");
  seeds.push_back(request({X, W}, mean(softmax(dot(X, W)))));
  Var a = dmatrix("a");
  seeds.push_back(request({a}, sum(subtensor(exp(a) / (1.0 + a * a), {Slice{0, 1, 1}}))));
  Var m = dtensor3("m");
  seeds.push_back(request({m}, max(reshape(m, {-1})) + logsumexp(m)));
  v1::GradRequest warn = request({x, a}, sum(x * x));
  warn.set_disconnected_inputs(v1::UNUSED_INPUT_WARN);
  seeds.push_back(std::move(warn));
  // Jacobians batch the backward pass: every rule of core/grad/vectorize.cc is reachable.
  for (const Var& y : {tanh(dot(X, x)) * cumsum(x), concatenate({sort(x), softmax(x)})}) {
    v1::GradRequest jac = request({x, X}, y);
    jac.set_jacobian(true);
    jac.set_disconnected_inputs(v1::UNUSED_INPUT_IGNORE);
    seeds.push_back(std::move(jac));
  }
  return seeds;
}

}  // namespace kiln::fuzz
