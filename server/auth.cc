#include "server/auth.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "core/graph/canonical.h"
#include "core/tensor/status_macros.h"
#include "server/disk_cache.h"

namespace kiln::server {
namespace {

// A tenant name: 1 to 64 letters, digits, '-', '_' or '.'.
bool IsTenantName(absl::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

absl::Status SetQuota(absl::string_view field, TenantQuota* quota) {
  std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(field, '=');
  int64_t n = 0;
  double rate = 0;
  if (kv.first == "compiles_per_second" && absl::SimpleAtod(kv.second, &rate) && rate >= 0) {
    quota->compiles_per_second = rate;
  } else if (kv.first == "executions" && absl::SimpleAtoi(kv.second, &n) && n >= 0) {
    quota->executions = n;
  } else if (kv.first == "sessions" && absl::SimpleAtoi(kv.second, &n) && n >= 0) {
    quota->sessions = n;
  } else if (kv.first == "session_bytes" && absl::SimpleAtoi(kv.second, &n) && n >= 0) {
    quota->session_bytes = n;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("'", field,
                     "' is not compiles_per_second=, executions=, sessions= or "
                     "session_bytes= with a number >= 0"));
  }
  return absl::OkStatus();
}

}  // namespace

Authenticator::Authenticator(TenantQuota quota)
    : anonymous_(std::make_shared<const Tenant>(Tenant{"", quota})) {}

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::FromFile(std::string path,
                                                                       TenantQuota defaults) {
  std::unique_ptr<Authenticator> a(new Authenticator(std::move(path), defaults));
  RETURN_IF_ERROR(a->Reload());
  return a;
}

Authenticator::Authenticator(std::string path, TenantQuota defaults)
    : path_(std::move(path)), defaults_(defaults) {}

absl::StatusOr<Authenticator::Tokens> Authenticator::Parse(const std::string& text,
                                                           const TenantQuota& defaults) {
  Tokens tokens;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    auto fail = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("--auth_tokens line ", line_number, ": ", why));
    };
    absl::string_view hash = fields[0];
    if (!absl::ConsumePrefix(&hash, "sha256:") ||
        !IsFunctionId(std::string_view(hash.data(), hash.size()))) {
      return fail("expected sha256:<64 lowercase hex digits> (sha256sum of the token)");
    }
    if (fields.size() < 2 || !IsTenantName(fields[1])) {
      return fail("expected a tenant name of 1 to 64 letters, digits, '-', '_' or '.'");
    }
    Tenant tenant{std::string(fields[1]), defaults};
    for (size_t i = 2; i < fields.size(); ++i) {
      if (absl::Status s = SetQuota(fields[i], &tenant.quota); !s.ok()) return fail(s.message());
    }
    if (!tokens.emplace(std::string(hash), std::make_shared<const Tenant>(std::move(tenant)))
             .second) {
      return fail("a token listed twice");
    }
  }
  return tokens;
}

absl::Status Authenticator::Reload() {
  if (path_.empty()) return absl::OkStatus();
  std::ifstream in(path_);
  if (!in) return absl::NotFoundError(absl::StrCat("--auth_tokens: cannot read ", path_));
  std::stringstream text;
  text << in.rdbuf();
  ASSIGN_OR_RETURN(Tokens tokens, Parse(text.str(), defaults_));
  auto shared = std::make_shared<const Tokens>(std::move(tokens));
  absl::MutexLock lock(&mutex_);
  tokens_ = std::move(shared);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const Tenant>> Authenticator::Authenticate(
    const absl::string_view* authorization) const {
  if (path_.empty()) return anonymous_;
  absl::string_view token = authorization != nullptr ? *authorization : "";
  if (!absl::ConsumePrefix(&token, "Bearer ") || token.empty() || token.size() > 4096) {
    return absl::UnauthenticatedError(
        "this server needs a token: send `authorization: Bearer <token>` (KILN_TOKEN)");
  }
  std::shared_ptr<const Tokens> tokens;
  {
    absl::MutexLock lock(&mutex_);
    tokens = tokens_;
  }
  auto it = tokens->find(Sha256Hex(std::string_view(token.data(), token.size())));
  if (it == tokens->end()) return absl::UnauthenticatedError("the token is not valid");
  return it->second;
}

}  // namespace kiln::server
