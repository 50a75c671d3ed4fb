// The seed's examples, run in C++: build `x * 2.0` and `a + a**10`, look at their structure,
// print them as Aesara does and evaluate them. `./deploy/run.sh` builds and runs this program.
#include <iostream>
#include <memory>
#include <string>

#include "core/kiln.h"

namespace {

int Fail(const absl::Status& status) {
  std::cerr << "error: " << status << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using kiln::Var;

  std::cout << "# The graph of y = x * 2.0\n";
  Var x = kiln::dmatrix("x");
  Var y = x * 2.0;
  if (!y.ok()) return Fail(y.status());
  kiln::Apply* node = y->owner();
  std::cout << "y.owner.op.name          " << node->op().Name() << "\n"
            << "len(y.owner.inputs)      " << node->num_inputs() << "\n"
            << "y.owner.inputs[0]        " << node->inputs()[0]->ToString() << "\n"
            << "y.owner.inputs[1]        " << node->inputs()[1]->ToString() << "\n"
            << "its owner's inputs       [" << node->inputs()[1]->owner()->inputs()[0]->ToString()
            << "]\n"
            << "y.type                   " << y->type()->ToString() << "\n"
            << "irow().type              " << kiln::irow()->type()->ToString() << "\n\n";
  kiln::dprint(y);

  std::cout << "\n# b = a + a**10, compiled and run on [0, 1, 2]\n";
  Var a = kiln::vector("a");
  Var b = a + kiln::pow(a, 10);
  kiln::dprint(b, {.print_type = true});
  absl::StatusOr<kiln::Function> f = kiln::function({a}, {b});
  if (!f.ok()) return Fail(f.status());
  absl::StatusOr<kiln::Tensor> input =
      kiln::Tensor::Of<double>(kiln::DType::kFloat64, {3}, {0, 1, 2});
  if (!input.ok()) return Fail(input.status());
  absl::StatusOr<std::vector<kiln::Tensor>> out = (*f)({*input});
  if (!out.ok()) return Fail(out.status());
  std::cout << "f([0, 1, 2]) = " << (*out)[0].ToString() << "\n";

  std::cout << "\n# The same graph after the optimizer (FAST_RUN): one fused loop\n";
  absl::StatusOr<std::unique_ptr<kiln::FunctionGraph>> fg =
      kiln::FunctionGraph::Make({a.ptr()}, {b.ptr()});
  if (!fg.ok()) return Fail(fg.status());
  absl::StatusOr<kiln::RewriteReport> report = kiln::optimize(**fg);
  if (!report.ok()) return Fail(report.status());
  const Var optimized = (*fg)->outputs()[0];
  kiln::dprint(optimized);
  Var m = kiln::dmatrix("m"), z = kiln::dmatrix("z");
  absl::StatusOr<std::unique_ptr<kiln::FunctionGraph>> cancel =
      kiln::FunctionGraph::Make({m.ptr(), z.ptr()}, {(m * z / z).ptr()});
  if (!cancel.ok()) return Fail(cancel.status());
  if (absl::StatusOr<kiln::RewriteReport> r = kiln::optimize(**cancel); !r.ok()) {
    return Fail(r.status());
  }
  std::cout << "m * z / z optimizes to " << (*cancel)->outputs()[0]->ToString() << "\n";

  std::cout << "\n# A bad broadcast is an error value, not a crash\n";
  Var bad = kiln::tensor(kiln::DType::kFloat64, {2, 4}, "p") +
            kiln::tensor(kiln::DType::kFloat64, {kiln::kUnknownDim, 3}, "q");
  std::cout << bad.status().message() << "\n";

  if (argc > 1) {
    // seed_demo <file.png>: draw the graph of b as pydotprint does (needs graphviz).
    absl::Status drawn = kiln::WriteDot({b}, argv[1], "png");
    if (!drawn.ok()) return Fail(drawn);
    std::cout << "\nThe graph of b is drawn in " << argv[1] << "\n";
    // ... and the optimized graph beside it: out.png -> out.optimized.png.
    std::string path = argv[1];
    const size_t dot = path.rfind('.');
    path = path.substr(0, dot == std::string::npos ? path.size() : dot) + ".optimized.png";
    absl::Status drawn_optimized = kiln::WriteDot({optimized}, path, "png");
    if (!drawn_optimized.ok()) return Fail(drawn_optimized);
    std::cout << "The optimized graph is drawn in " << path << "\n";
  }
  return 0;
}
