// Versions of the wire protocol and of the compiler; the compiler's is part of every function id.
#ifndef KILN_SERVER_VERSION_H_
#define KILN_SERVER_VERSION_H_

#include <cstdint>

namespace kiln::server {

// kiln.v1's handshake version: GetVersion refuses clients of another.
inline constexpr uint32_t kProtocolVersion = 1;
// Changes whenever compiled functions may change: a new compiler never reuses old entries.
inline constexpr char kCompilerVersion[] = "kiln-compiler-0.2.1/graph-format-2";
inline constexpr char kServerVersion[] = "kiln-server 0.2.0";

}  // namespace kiln::server

#endif  // KILN_SERVER_VERSION_H_
