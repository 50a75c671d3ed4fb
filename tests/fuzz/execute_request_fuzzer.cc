// libFuzzer target: byte 0 picks one of the seed functions (compiled once); the rest
// is a kiln.v1.ExecuteRequest whose tensors are converted and executed as the service does.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::ExecuteRequestTarget(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
