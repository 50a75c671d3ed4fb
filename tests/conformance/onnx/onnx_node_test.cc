// ONNX's backend test cases (Debian's libonnx-testdata: node, pytorch-converted,
// pytorch-operator and simple) imported by kiln::onnx, compiled, run on their
// test_data_set_0 inputs and compared with its outputs at ONNX's tolerances (rtol 1e-3,
// atol 1e-7; dtypes and shapes equal). Each case's outcome must be the one expected.txt records,
// so that a case that starts to fail, or starts to pass, shows. KILN_ONNX_WRITE_EXPECTED=1
// rewrites expected.txt from this run; KILN_ONNX_TESTDATA points at another copy of the data;
// KILN_ONNX_OUTCOMES=<file> writes each case's outcome and operator there.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/compile/function.h"
#include "gtest/gtest.h"
#include "proto/onnx/import.h"
#include "proto/onnx/onnx_tensor.h"
#include "tests/testing/paths.h"

namespace kiln::onnx {
namespace {

namespace fs = std::filesystem;

constexpr double kRtol = 1e-3, kAtol = 1e-7;

std::string DataRoot() {
  const char* env = std::getenv("KILN_ONNX_TESTDATA");
  return env != nullptr ? env : "/usr/share/libonnx-testdata/data";
}

std::string ExpectedPath() {
  return absl::StrCat(kiln::testing::SourceDir(), "/tests/conformance/onnx/expected.txt");
}

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

absl::StatusOr<Tensor> ReadTensor(const fs::path& p) {
  ::onnx::TensorProto proto;
  const std::string bytes = ReadFile(p);
  if (!proto.ParseFromString(bytes)) return absl::InvalidArgumentError("not a TensorProto");
  return TensorFromOnnx(proto, p.filename().string(), int64_t{1} << 30);
}

// The files <prefix>_0.pb, <prefix>_1.pb ... of a data set, in order.
std::vector<fs::path> Numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    const fs::path p = dir / absl::StrCat(prefix, "_", i, ".pb");
    if (!fs::exists(p)) return out;
    out.push_back(p);
  }
}

// Why `got` is not `want` at ONNX's tolerances, or "" when it is.
std::string Compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) {
    return absl::StrCat("dtype ", DTypeName(got.dtype()), " != ", DTypeName(want.dtype()));
  }
  if (got.shape() != want.shape()) {
    return absl::StrCat("shape ", ShapeToString(got.shape()), " != ", ShapeToString(want.shape()));
  }
  const bool exact = !IsFloat(want.dtype()) && !IsComplex(want.dtype());
  // (Integers compare through doubles: exact up to 2^53, past every value in the test data.)
  const DType as = IsComplex(want.dtype()) ? DType::kComplex128 : DType::kFloat64;
  const Tensor g = got.AsType(as).Contiguous(), w = want.AsType(as).Contiguous();
  const int64_t n = g.size() * (IsComplex(want.dtype()) ? 2 : 1);
  const double* gp = static_cast<const double*>(g.raw_data());
  const double* wp = static_cast<const double*>(w.raw_data());
  for (int64_t i = 0; i < n; ++i) {
    const double a = gp[i], e = wp[i];
    if (std::isnan(a) && std::isnan(e)) continue;
    const bool ok = exact ? a == e : (a == e || std::abs(a - e) <= kAtol + kRtol * std::abs(e));
    if (!ok) return absl::StrCat("element ", i, ": ", a, " != ", e);
  }
  return "";
}

struct Outcome {
  std::string status;  // pass, mismatch, unimplemented, invalid, error
  std::string detail;
  std::string op;  // the case's first non-Constant operator
};

std::string StatusWord(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kUnimplemented:
      return "unimplemented";
    case absl::StatusCode::kInvalidArgument:
      return "invalid";
    default:
      return "error";
  }
}

std::string FirstOp(const std::string& model_bytes) {
  ::onnx::ModelProto model;
  if (!model.ParseFromString(model_bytes)) return "?";
  for (const auto& n : model.graph().node()) {
    if (n.op_type() != "Constant") return n.op_type();
  }
  return model.graph().node_size() > 0 ? "Constant" : "(none)";
}

Outcome RunCase(const fs::path& dir) {
  const std::string bytes = ReadFile(dir / "model.onnx");
  Outcome out{"", "", FirstOp(bytes)};
  absl::StatusOr<ImportedModel> model = Import(bytes);
  if (!model.ok())
    return {StatusWord(model.status()), std::string(model.status().message()), out.op};
  FunctionOptions options;
  options.on_unused_input =
      OnUnusedInput::kIgnore;  // ONNX graphs may declare inputs they never read
  absl::StatusOr<Function> f = function(model->inputs, model->outputs, options);
  if (!f.ok())
    return {StatusWord(f.status()), absl::StrCat("compile: ", f.status().message()), out.op};
  const fs::path data = dir / "test_data_set_0";
  std::vector<Tensor> args;
  for (const fs::path& p : Numbered(data, "input")) {
    absl::StatusOr<Tensor> t = ReadTensor(p);
    if (!t.ok()) return {StatusWord(t.status()), std::string(t.status().message()), out.op};
    args.push_back(*t);
  }
  if (args.size() != model->inputs.size()) {
    return {"error", absl::StrCat(args.size(), " inputs for ", model->inputs.size()), out.op};
  }
  absl::StatusOr<std::vector<Tensor>> results = (*f)(args);
  if (!results.ok()) {
    return {StatusWord(results.status()), absl::StrCat("run: ", results.status().message()),
            out.op};
  }
  const std::vector<fs::path> want = Numbered(data, "output");
  if (want.size() != results->size()) {
    return {"mismatch", absl::StrCat(results->size(), " outputs for ", want.size()), out.op};
  }
  for (size_t i = 0; i < want.size(); ++i) {
    absl::StatusOr<Tensor> w = ReadTensor(want[i]);
    if (!w.ok()) return {StatusWord(w.status()), std::string(w.status().message()), out.op};
    if (std::string why = Compare((*results)[i], *w); !why.empty()) {
      return {"mismatch", absl::StrCat("output ", i, ": ", why), out.op};
    }
  }
  return {"pass", "", out.op};
}

std::map<std::string, std::string> ReadExpected() {
  std::map<std::string, std::string> expected;
  std::ifstream f(ExpectedPath());
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> parts = absl::StrSplit(line, ' ');
    if (parts.size() >= 2) expected[parts[0]] = parts[1];
  }
  return expected;
}

TEST(OnnxConformance, EveryCaseHasTheOutcomeOnRecord) {
  const fs::path root = DataRoot();
  ASSERT_TRUE(fs::is_directory(root / "node"))
      << root << " holds no ONNX test data: install Debian's libonnx-testdata";
  std::vector<fs::path> cases;
  for (const char* kind : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    for (const auto& e : fs::directory_iterator(root / kind)) {
      if (fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
    }
  }
  std::sort(cases.begin(), cases.end());
  ASSERT_GT(cases.size(), 1000u);
  const std::map<std::string, std::string> expected = ReadExpected();
  std::map<std::string, Outcome> outcomes;
  std::map<std::string, std::pair<int, int>> by_op;  // passed, cases
  int passed = 0;
  for (const fs::path& dir : cases) {
    const std::string name =
        absl::StrCat(dir.parent_path().filename().string(), "/", dir.filename().string());
    Outcome o = RunCase(dir);
    passed += o.status == "pass";
    auto& [p, n] = by_op[o.op];
    p += o.status == "pass";
    ++n;
    outcomes[name] = std::move(o);
  }
  std::printf("%-28s %6s %6s\n", "operator (first of the case)", "cases", "kiln");
  for (const auto& [op, counts] : by_op) {
    std::printf("%-28s %6d %6d\n", op.c_str(), counts.second, counts.first);
  }
  std::printf("BENCH onnx_backend_tests kiln=%d unit=cases total=%zu\n", passed, cases.size());
  // Each case's outcome, for tests/bench/onnx_vs_onnxruntime.py.
  if (const char* path = std::getenv("KILN_ONNX_OUTCOMES"); path != nullptr) {
    std::ofstream f(path);
    for (const auto& [name, o] : outcomes) f << name << " " << o.status << " " << o.op << "\n";
  }
  if (const char* w = std::getenv("KILN_ONNX_WRITE_EXPECTED"); w != nullptr && w[0] == '1') {
    std::ofstream f(ExpectedPath());
    f << "# <kind>/<case> <outcome> [why]: written by onnx_node_test with "
         "KILN_ONNX_WRITE_EXPECTED=1\n";
    for (const auto& [name, o] : outcomes) {
      std::string why = o.detail.substr(0, 160);
      std::replace(why.begin(), why.end(), '\n', ' ');
      f << name << " " << o.status << (why.empty() ? "" : " ") << why << "\n";
    }
    GTEST_SKIP() << "wrote " << ExpectedPath();
  }
  int differ = 0;
  for (const auto& [name, o] : outcomes) {
    auto it = expected.find(name);
    const std::string want = it == expected.end() ? "(not listed)" : it->second;
    if (want != o.status) {
      ADD_FAILURE() << name << ": " << o.status << " (" << o.detail << "), expected " << want;
      if (++differ > 40) break;
    }
  }
}

}  // namespace
}  // namespace kiln::onnx
