// TLS on the gRPC port, and mutual TLS with a client CA. The certificate files are checked (the
// key matches the certificate) and copied into a private directory that gRPC's file watcher
// reads; Reload (SIGHUP) checks the files again and replaces the copies, so new connections use
// the new certificates within a second while established ones go on.
#ifndef KILN_SERVER_TLS_H_
#define KILN_SERVER_TLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace grpc {
class ServerCredentials;
}

namespace kiln::server {

struct TlsFiles {
  std::string cert;       // PEM certificate chain of the server
  std::string key;        // PEM private key
  std::string client_ca;  // PEM CA bundle: only clients with a certificate it signed get in
};

class TlsCredentials {
 public:
  // INVALID_ARGUMENT naming the file that is unreadable, not PEM, or whose key does not match.
  static absl::StatusOr<std::unique_ptr<TlsCredentials>> Create(TlsFiles files);
  ~TlsCredentials();

  std::shared_ptr<grpc::ServerCredentials> server_credentials() const;
  // Reads and checks the files again; on an error the certificates in use stay.
  absl::Status Reload();

 private:
  TlsCredentials(TlsFiles files, std::string dir)
      : files_(std::move(files)), dir_(std::move(dir)) {}
  const TlsFiles files_;
  const std::string dir_;  // the copies gRPC watches
};

}  // namespace kiln::server

#endif  // KILN_SERVER_TLS_H_
