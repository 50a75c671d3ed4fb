// libFuzzer target: the bytes as a disk cache entry through DecodeCompiled and Execute, and
// through the disk tier's Store/Load (also as a whole file, checksum line included).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::DiskEntryTarget(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
