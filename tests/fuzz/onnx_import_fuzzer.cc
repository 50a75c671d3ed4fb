// libFuzzer target: the bytes as an ONNX model through the server's ImportOnnx (proto/onnx), then
// the imported graph compiled.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::OnnxImportTarget(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
