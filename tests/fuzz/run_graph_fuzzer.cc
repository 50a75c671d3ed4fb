// libFuzzer target: the bytes as a kiln.v1.CompileRequest compiled, then executed on edge values
// under a tight memory budget and a deadline (fuzz_targets.h: RunGraphTarget).
// Mutations are structural half the time (graph_mutator.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kiln/v1/service.pb.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/graph_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::RunGraphTarget(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned seed) {
  return kiln::fuzz::MutateRequest<kiln::v1::CompileRequest>(data, size, max_size, seed,
                                                             LLVMFuzzerMutate);
}
