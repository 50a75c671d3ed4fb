// Versions of the wire protocol and of the compiler; the compiler's is part of every function id.
#ifndef KILN_SERVER_VERSION_H_
#define KILN_SERVER_VERSION_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/runtime/serialize.h"

namespace kiln::server {

// kiln.v1's handshake version: GetVersion refuses clients of another.
inline constexpr uint32_t kProtocolVersion = 1;
// Changes whenever compiled functions may change (the compiler's release or the format of a
// serialized function): a new compiler never reuses old entries.
inline const std::string& CompilerVersion() {
  static const std::string version =
      absl::StrCat("kiln-compiler-0.2.1/graph-format-", kGraphFormatVersion);
  return version;
}
inline constexpr char kServerVersion[] = "kiln-server 0.2.0";

}  // namespace kiln::server

#endif  // KILN_SERVER_VERSION_H_
