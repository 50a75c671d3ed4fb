#include "server/tls.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"

namespace kiln::server {
namespace {

// How often gRPC looks at the copies: a reload is in use within this many seconds.
constexpr unsigned kRefreshSeconds = 1;

absl::StatusOr<std::string> ReadFile(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes `text` to dir/name through a temporary file and a rename: a reader sees all or none.
absl::Status Install(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string tmp = absl::StrCat(dir, "/.", name, ".tmp"),
                    path = absl::StrCat(dir, "/", name);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot rename ", tmp, ": ", ec.message()));
  return absl::OkStatus();
}

// The three files, read and checked: a certificate and the key that matches it, and a CA bundle
// with at least one certificate.
absl::Status Check(const TlsFiles& files, std::string* cert, std::string* key, std::string* ca) {
  absl::StatusOr<std::string> c = ReadFile("--tls_cert", files.cert);
  absl::StatusOr<std::string> k = ReadFile("--tls_key", files.key);
  if (!c.ok()) return c.status();
  if (!k.ok()) return k.status();
  std::unique_ptr<BIO, decltype(&BIO_free)> cert_bio(BIO_new_mem_buf(c->data(), c->size()),
                                                     BIO_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> key_bio(BIO_new_mem_buf(k->data(), k->size()),
                                                    BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> x509(
      PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr), X509_free);
  if (x509 == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_cert: ", files.cert, " holds no PEM certificate"));
  }
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> pkey(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  if (pkey == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_key: ", files.key, " holds no PEM private key"));
  }
  if (X509_check_private_key(x509.get(), pkey.get()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_key: ", files.key, " is not the key of --tls_cert ", files.cert));
  }
  *cert = *std::move(c);
  *key = *std::move(k);
  if (files.client_ca.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::string a, ReadFile("--tls_client_ca", files.client_ca));
  std::unique_ptr<BIO, decltype(&BIO_free)> ca_bio(BIO_new_mem_buf(a.data(), a.size()), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> first(
      PEM_read_bio_X509(ca_bio.get(), nullptr, nullptr, nullptr), X509_free);
  if (first == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_client_ca: ", files.client_ca, " holds no PEM certificate"));
  }
  *ca = std::move(a);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<TlsCredentials>> TlsCredentials::Create(TlsFiles files) {
  std::string pattern = (std::filesystem::temp_directory_path() / "kiln-tls-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot make a directory like ", pattern));
  }
  std::unique_ptr<TlsCredentials> tls(new TlsCredentials(std::move(files), pattern));
  RETURN_IF_ERROR(tls->Reload());
  return tls;
}

TlsCredentials::~TlsCredentials() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

absl::Status TlsCredentials::Reload() {
  std::string cert, key, ca;
  RETURN_IF_ERROR(Check(files_, &cert, &key, &ca));
  RETURN_IF_ERROR(Install(dir_, "key.pem", key));
  RETURN_IF_ERROR(Install(dir_, "cert.pem", cert));
  if (!ca.empty()) return Install(dir_, "ca.pem", ca);
  return absl::OkStatus();
}

std::shared_ptr<grpc::ServerCredentials> TlsCredentials::server_credentials() const {
  using namespace grpc::experimental;
  auto provider =
      files_.client_ca.empty()
          ? std::make_shared<FileWatcherCertificateProvider>(dir_ + "/key.pem", dir_ + "/cert.pem",
                                                             kRefreshSeconds)
          : std::make_shared<FileWatcherCertificateProvider>(dir_ + "/key.pem", dir_ + "/cert.pem",
                                                             dir_ + "/ca.pem", kRefreshSeconds);
  TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (files_.client_ca.empty()) {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return TlsServerCredentials(options);
}

}  // namespace kiln::server
