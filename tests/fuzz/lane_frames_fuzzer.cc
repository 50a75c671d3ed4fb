// libFuzzer target: frames of any shape on a same-host lane connection are answered with a
// status, never a crash (fuzz_targets.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::LaneFramesTarget(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
