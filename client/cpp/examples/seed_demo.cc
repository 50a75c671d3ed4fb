// The seed's examples, run in C++: build `x * 2.0` and `a + a**10`, look at their structure,
// print them as Aesara does and evaluate them; with --server=HOST:PORT, compile, run and
// differentiate them on a Kiln server too. `./deploy/run.sh` starts a server and runs this.
#include <iostream>
#include <memory>
#include <string>

#include "client/cpp/client.h"
#include "core/kiln.h"

namespace {

int Fail(const absl::Status& status) {
  std::cerr << "error: " << status << "\n";
  return 1;
}

// The seed through the server: compile (twice: the second is a cache hit), execute, grad,
// shared variables with updates, and the server's print of the compiled function.
int RemoteDemo(const std::string& address) {
  using kiln::Var;
  std::cout << "\n# Through the Kiln server at " << address << "\n";
  absl::StatusOr<std::unique_ptr<kiln::client::Client>> client =
      kiln::client::Client::Connect(address);
  if (!client.ok()) return Fail(client.status());
  kiln::client::Client& c = **client;
  absl::StatusOr<kiln::v1::GetVersionResponse> version = c.Version();
  if (!version.ok()) return Fail(version.status());
  std::cout << "server                   " << version->server_version() << " (protocol "
            << version->protocol() << ")\n";

  Var a = kiln::vector("a");
  absl::StatusOr<kiln::Tensor> input =
      kiln::Tensor::Of<double>(kiln::DType::kFloat64, {3}, {0, 1, 2});
  if (!input.ok()) return Fail(input.status());
  for (int round = 0; round < 2; ++round) {
    absl::StatusOr<kiln::client::RemoteFunction> f = c.Compile({a}, {a + kiln::pow(a, 10)});
    if (!f.ok()) return Fail(f.status());
    absl::StatusOr<std::vector<kiln::Tensor>> out = c.Execute(*f, {*input});
    if (!out.ok()) return Fail(out.status());
    std::cout << "compile a + a**10        id " << f->id.substr(0, 16) << "... (" << f->source
              << "); f([0, 1, 2]) = " << (*out)[0].ToString() << "\n";
    if (round == 1) {
      absl::StatusOr<std::string> text = c.Print(*f);
      if (!text.ok()) return Fail(text.status());
      std::cout << "the server's optimized graph:\n" << *text;
    }
  }

  absl::StatusOr<std::vector<Var>> g = c.Grad(kiln::sum(kiln::pow(a, 2)), {a});
  if (!g.ok()) return Fail(g.status());
  absl::StatusOr<kiln::client::RemoteFunction> df = c.Compile({a}, {(*g)[0]});
  if (!df.ok()) return Fail(df.status());
  absl::StatusOr<std::vector<kiln::Tensor>> grad_out = c.Execute(*df, {*input});
  if (!grad_out.ok()) return Fail(grad_out.status());
  std::cout << "grad(sum(a**2), a)([0, 1, 2]) = " << (*grad_out)[0].ToString() << "\n";

  absl::StatusOr<kiln::Tensor> zeros =
      kiln::Tensor::Of<double>(kiln::DType::kFloat64, {3}, {0, 0, 0});
  if (!zeros.ok()) return Fail(zeros.status());
  Var w = kiln::shared(*zeros, "w");
  kiln::client::CompileOptions options;
  options.updates = {{w, w + a}};
  absl::StatusOr<kiln::client::RemoteFunction> acc = c.Compile({a}, {w}, options);
  if (!acc.ok()) return Fail(acc.status());
  for (int i = 0; i < 2; ++i) {
    if (absl::StatusOr<std::vector<kiln::Tensor>> r = c.Execute(*acc, {*input}); !r.ok()) {
      return Fail(r.status());
    }
  }
  absl::StatusOr<kiln::Tensor> w_value = c.GetValue(w);
  if (!w_value.ok()) return Fail(w_value.status());
  std::cout << "w after two calls of updates={w: w + a}: " << w_value->ToString() << "\n";

  absl::StatusOr<kiln::v1::GetStatsResponse> stats = c.Stats();
  if (!stats.ok()) return Fail(stats.status());
  std::cout << "server stats             compiles=" << stats->compiles()
            << " memory_hits=" << stats->memory_hits() << " executions=" << stats->executions()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using kiln::Var;
  std::string server;
  if (argc > 1 && std::string(argv[1]).rfind("--server=", 0) == 0) {
    server = std::string(argv[1]).substr(9);
    --argc;
    ++argv;
  }

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
  return server.empty() ? 0 : RemoteDemo(server);
}
