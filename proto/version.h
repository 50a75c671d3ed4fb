// Versions of the wire protocol, of the stored-function format and of the compiler (part of every
// function id): what the server and every client agree on.
#ifndef KILN_PROTO_VERSION_H_
#define KILN_PROTO_VERSION_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace kiln {

// kiln.v1's handshake version: GetVersion refuses clients of another.
inline constexpr uint32_t kProtocolVersion = 2;
// The version of kiln.v1.StoredFunction this server writes and reads.
inline constexpr uint32_t kStoredFunctionFormat = 1;
// Changes whenever compiled functions may change (the compiler's release or the stored format):
// a new compiler never reuses old entries.
inline const std::string& CompilerVersion() {
  static const std::string version =
      absl::StrCat("kiln-compiler-0.3.0/stored-format-", kStoredFunctionFormat);
  return version;
}
inline constexpr char kServerVersion[] = "kiln-server 0.2.0";

}  // namespace kiln

#endif  // KILN_PROTO_VERSION_H_
