// The Kiln console on the server's HTTP port: the page under /console/ (files the npm build
// made) and the JSON it reads under /api/ (server/console/API.md), behind the metrics token and,
// with tenants, scoped to the caller's tenant. Reading changes nothing; the two actions (evict a
// function, delete a session) are POSTs that carry `X-Kiln-Action` (no cross-site form can).
#ifndef KILN_SERVER_CONSOLE_CONSOLE_H_
#define KILN_SERVER_CONSOLE_CONSOLE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "server/auth.h"
#include "server/compiled_function.h"
#include "server/console/history.h"
#include "server/function_cache.h"
#include "server/metrics.h"
#include "server/sessions.h"

namespace httplib {
class Server;
}

namespace kiln::server {

// What the console reads of the server.
struct ConsoleSources {
  const Metrics* metrics = nullptr;
  const FunctionCache* cache = nullptr;
  const SessionStore* sessions = nullptr;
  const Authenticator* auth = nullptr;
  // Whether a tenant may see a function (the gRPC calls' scoping).
  std::function<bool(const Tenant&, const CompiledFunction&)> sees;
  std::function<std::string()> health;  // "serving", "warming" or "draining"
  // The two actions: drop a function from memory (false: not held), delete a session by key.
  std::function<bool(const std::string& id)> evict;
  std::function<absl::Status(const std::string& key)> delete_session;
  // The tiers below memory: (name, "up" / "down" / "off").
  std::function<std::vector<std::pair<std::string, std::string>>()> tiers;
  std::string version, instance;
};

struct ConsoleOptions {
  std::string metrics_token;  // when set, /api/ needs `Authorization: Bearer <it>`
  std::string page_dir;       // the built page (index.html...); without it, a note says so
  absl::Duration interval = absl::Seconds(5);  // between the history's samples
  size_t history_samples = 720;                // an hour at 5 s
};

class Console {
 public:
  Console(ConsoleOptions options, ConsoleSources sources);
  // Serves /console/ and /api/ on `http`.
  void Mount(httplib::Server& http);

  // The answers, for a caller in `tenant` (null: every tenant's).
  std::string OverviewJson(const Tenant* tenant) const;
  std::string FunctionsJson(const Tenant* tenant) const;
  // Empty when the function is not held or not the tenant's.
  std::string FunctionJson(const Tenant* tenant, const std::string& id) const;
  // Its graph as the client built it, and that graph's dprint; empty also when the server
  // loaded the function from a tier (it then has only the optimized graph).
  std::string BuiltJson(const Tenant* tenant, const std::string& id) const;
  std::string SessionsJson(const Tenant* tenant) const;
  // The actions: an empty string when the function or session is not the tenant's or unknown.
  std::string Evict(const Tenant* tenant, const std::string& id) const;
  std::string DeleteSession(const Tenant* tenant, const std::string& id) const;

 private:
  std::vector<std::shared_ptr<const CompiledFunction>> Visible(const Tenant* tenant) const;
  // The function of `id` when the tenant may see it, else null.
  std::shared_ptr<const CompiledFunction> Find(const Tenant* tenant, const std::string& id) const;

  const ConsoleOptions options_;
  const ConsoleSources sources_;
  const absl::Time started_;
  std::unique_ptr<History> history_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_CONSOLE_CONSOLE_H_
