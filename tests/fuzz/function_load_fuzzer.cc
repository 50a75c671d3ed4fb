// libFuzzer target: the bytes as a stored optimized graph through FunctionFromOptimizedGraph,
// then a call on small arguments fitting its inputs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::FunctionLoadTarget(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
