// Writes the seed corpus of every fuzz target from the graphs of seeds.h:
//   make_corpus <dir>   (tests/fuzz/corpus; creates <dir>/<target>/seed_NN)
// compile_request, run_graph and grad_request get the requests' bytes; execute_request a function's
// index byte and an ExecuteRequest with arguments that fit it; function_load the function's
// optimized kiln.v1.Graph as stored; disk_entry its whole kiln.v1.StoredFunction. The output is
// deterministic.
//   make_corpus --compiled <request> <name> <dir>
// compiles the CompileRequest in the file <request> and writes its function as
// <dir>/function_load/<name> and <dir>/disk_entry/<name> (regressions from a compile_request one).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_format.h"
#include "core/tensor/check.h"
#include "kiln/v1/stored.pb.h"
#include "proto/convert/tensor_convert.h"
#include "server/compiled_function.h"
#include "tests/fuzz/seeds.h"

namespace kiln::fuzz {
namespace {

void Write(const std::filesystem::path& dir, const std::string& target, int n,
           const std::string& bytes) {
  std::filesystem::create_directories(dir / target);
  std::ofstream(dir / target / absl::StrFormat("seed_%02d", n), std::ios::binary) << bytes;
}

// Arguments for f: unknown dims 2, every element 1, and (4, 2) for an input named "dims" (the
// reshape of a 2x2x2 tensor).
v1::ExecuteRequest ExecuteRequestFor(const server::CompiledFunction& f) {
  v1::ExecuteRequest request;
  request.set_function_id(f.id);
  for (const v1::Input& in : f.signature.inputs()) {
    if (!in.shared().empty()) continue;
    absl::StatusOr<TensorTypePtr> type = FromProto(in.type());
    KILN_CHECK(type.ok());
    Shape shape;
    for (const StaticDim& d : (*type)->shape()) shape.push_back(d.value_or(2));
    std::vector<int64_t> values(ShapeSize(shape), 1);
    if (in.name() == "dims") values = {4, 2};
    absl::StatusOr<Tensor> t = Tensor::FromValues<int64_t>((*type)->dtype(), shape, values);
    KILN_CHECK(t.ok());
    *request.add_args() = ToProto(*t);
  }
  return request;
}

// A hello, then an Execute of f (its function id left out: the target fills it in), as
// LaneFramesTarget reads frames.
std::string LaneFrames(const server::CompiledFunction& f) {
  v1::LaneRequest hello, execute;
  hello.mutable_hello();
  *execute.mutable_execute() = ExecuteRequestFor(f);
  execute.mutable_execute()->clear_function_id();
  std::string out;
  for (const v1::LaneRequest* r : {&hello, &execute}) {
    const std::string bytes = r->SerializeAsString();
    KILN_CHECK(bytes.size() < (1 << 16));
    out += static_cast<char>(bytes.size() & 0xff);
    out += static_cast<char>(bytes.size() >> 8);
    out += bytes;
  }
  return out;
}

// The optimized graph f's stored form holds.
std::string OptimizedGraphBytes(const server::CompiledFunction& f) {
  v1::StoredFunction stored;
  KILN_CHECK(stored.ParseFromString(f.stored));
  return stored.optimized().SerializeAsString();
}

std::shared_ptr<const server::CompiledFunction> CompileOrDie(const v1::CompileRequest& r) {
  absl::StatusOr<server::CompileJob> job = server::PrepareCompile(r, GraphLimits{});
  KILN_CHECK(job.ok()) << job.status();
  absl::StatusOr<std::shared_ptr<const server::CompiledFunction>> f = server::Compile(*job);
  KILN_CHECK(f.ok()) << f.status();
  return *std::move(f);
}

int WriteCompiled(const std::string& request_file, const std::string& name,
                  const std::filesystem::path& dir) {
  std::ifstream in(request_file, std::ios::binary);
  v1::CompileRequest r;
  KILN_CHECK(r.ParseFromIstream(&in)) << request_file << " is not a CompileRequest";
  std::shared_ptr<const server::CompiledFunction> f = CompileOrDie(r);
  std::filesystem::create_directories(dir / "function_load");
  std::filesystem::create_directories(dir / "disk_entry");
  std::ofstream(dir / "function_load" / name, std::ios::binary) << OptimizedGraphBytes(*f);
  std::ofstream(dir / "disk_entry" / name, std::ios::binary) << f->stored;
  return 0;
}

int WriteCorpus(const std::filesystem::path& dir) {
  int n = 0;
  for (const v1::CompileRequest& r : SeedCompileRequests()) {
    std::shared_ptr<const server::CompiledFunction> f = CompileOrDie(r);
    Write(dir, "compile_request", n, r.SerializeAsString());
    Write(dir, "run_graph", n, r.SerializeAsString());
    Write(dir, "execute_request", n,
          std::string(1, static_cast<char>(n)) + ExecuteRequestFor(*f).SerializeAsString());
    Write(dir, "function_load", n, OptimizedGraphBytes(*f));
    Write(dir, "disk_entry", n, f->stored);
    Write(dir, "lane_frames", n, std::string(1, static_cast<char>(n)) + LaneFrames(*f));
    ++n;
  }
  n = 0;
  for (const v1::GradRequest& r : SeedGradRequests()) {
    Write(dir, "grad_request", n++, r.SerializeAsString());
  }
  return 0;
}

}  // namespace
}  // namespace kiln::fuzz

int main(int argc, char** argv) {
  if (argc == 2) return kiln::fuzz::WriteCorpus(argv[1]);
  if (argc == 5 && std::string(argv[1]) == "--compiled") {
    return kiln::fuzz::WriteCompiled(argv[2], argv[3], argv[4]);
  }
  std::fprintf(stderr, "usage: %s <corpus dir> | --compiled <request> <name> <dir>\n", argv[0]);
  return 2;
}
