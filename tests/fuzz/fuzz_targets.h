// The bodies of the libFuzzer targets in this folder, shared by the fuzzers (one per
// <name>_fuzzer.cc) and by fuzz_regression_test.cc, which replays the corpus and the crashes found.
// Each takes any bytes and must return normally: a bad input is an error status, never a crash.
#ifndef KILN_TESTS_FUZZ_FUZZ_TARGETS_H_
#define KILN_TESTS_FUZZ_FUZZ_TARGETS_H_

#include <string_view>

namespace kiln::fuzz {

// A kiln.v1.CompileRequest through PrepareCompile, Compile and Execute on small arguments.
void CompileRequestTarget(std::string_view bytes);
// A kiln.v1.CompileRequest compiled, then executed on arguments of edge values (int64's and
// float's extremes, dims 0 to 3) drawn from the bytes, under a tight memory budget and a 250 ms
// deadline: a crash, or a compile or call still running 5 s past its deadline, is a finding.
void RunGraphTarget(std::string_view bytes);
// bytes[0] picks one of a few functions compiled once; the rest is a kiln.v1.ExecuteRequest whose
// tensors are converted as the service does and executed.
void ExecuteRequestTarget(std::string_view bytes);
// The bytes as a stored optimized kiln.v1.Graph (FunctionFromOptimizedGraph), then a call on
// small arguments.
void FunctionLoadTarget(std::string_view bytes);
// DecodeCompiled (a disk cache entry) and Execute; also the bytes as a file of the disk tier.
void DiskEntryTarget(std::string_view bytes);
// A kiln.v1.GradRequest through GradGraph, then OptimizeGraph and PrintGraph on the result.
void GradRequestTarget(std::string_view bytes);

// The same-host lane's frames on one connection: bytes[0] picks a seed function, then frames of a
// 2-byte little-endian length and a kiln.v1.LaneRequest (an Execute without a function id runs
// the picked one), through the service until one closes the connection.
void LaneFramesTarget(std::string_view bytes);

// bytes[0] even: the rest as the `authorization` metadata of a call to a server with tokens;
// odd: the rest as a tokens file (--auth_tokens) to load, then a call with each of its lines.
void AuthMetadataTarget(std::string_view bytes);

// The bytes as an ONNX model through ImportOnnxGraph (parse, checker, shape inference, the
// importers), then the imported graph read back and compiled.
void OnnxImportTarget(std::string_view bytes);

// A target and its name (the folder of its corpus and regressions).
struct NamedTarget {
  const char* name;
  void (*run)(std::string_view bytes);
};
// Every target, in the order above (run_graph after compile_request).
inline constexpr NamedTarget kTargets[] = {
    {"compile_request", CompileRequestTarget}, {"run_graph", RunGraphTarget},
    {"execute_request", ExecuteRequestTarget}, {"function_load", FunctionLoadTarget},
    {"disk_entry", DiskEntryTarget},           {"grad_request", GradRequestTarget},
    {"auth_metadata", AuthMetadataTarget},     {"lane_frames", LaneFramesTarget},
    {"onnx_import", OnnxImportTarget},
};

}  // namespace kiln::fuzz

#endif  // KILN_TESTS_FUZZ_FUZZ_TARGETS_H_
