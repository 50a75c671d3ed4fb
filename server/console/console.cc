#include "server/console/console.h"

#include <httplib.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/tensor/dtype.h"
#include "core/text/graph_json.h"
#include "core/text/json.h"
#include "server/graph_requests.h"
#include "server/log.h"

namespace kiln::server {
namespace {

double UnixSeconds(absl::Time t) { return absl::ToDoubleSeconds(t - absl::UnixEpoch()); }

// The q-quantile of the observations between two samples' buckets, in ms (interpolated within
// its bucket); null when there were none.
void WriteQuantile(const MetricsSnapshot& before, const MetricsSnapshot& after, double q,
                   Json& out) {
  const auto& bounds = Histogram::kBounds;
  uint64_t total = after.executions - before.executions, seen = 0;
  if (total == 0) {
    out.Null();
    return;
  }
  const double rank = q * static_cast<double>(total);
  for (size_t b = 0; b < after.execute_buckets.size(); ++b) {
    const uint64_t n = after.execute_buckets[b] - before.execute_buckets[b];
    if (n > 0 && static_cast<double>(seen + n) >= rank) {
      const double lo = b == 0 ? 0 : bounds[b - 1], hi = b < bounds.size() ? bounds[b] : lo;
      const double within = (rank - static_cast<double>(seen)) / static_cast<double>(n);
      out.Number(1e3 * (lo + (hi - lo) * within));
      return;
    }
    seen += n;
  }
  out.Number(1e3 * bounds.back());
}

// One history interval: rates per second between two samples.
void WriteInterval(const HistorySample& a, const HistorySample& b, Json& out) {
  const double dt = std::max(b.unix_seconds - a.unix_seconds, 1e-3);
  const auto rate = [&](uint64_t from, uint64_t to) {
    return static_cast<double>(to - std::min(from, to)) / dt;
  };
  uint64_t requests = 0, errors = 0;
  std::map<std::string, std::map<std::string, double>> by_rpc;
  for (const auto& [key, count] : b.counters.requests) {
    auto it = a.counters.requests.find(key);
    const uint64_t delta = count - (it == a.counters.requests.end() ? 0 : it->second);
    requests += delta;
    if (key.second != absl::StatusCode::kOk) errors += delta;
    if (delta > 0) {
      by_rpc[key.first][absl::StatusCodeToString(key.second)] = static_cast<double>(delta) / dt;
    }
  }
  const auto compiles = [](const MetricsSnapshot& s, const std::string& source) {
    auto it = s.compiles.find(source);
    return it == s.compiles.end() ? uint64_t{0} : it->second;
  };
  out.BeginObject().Key("t").Number(b.unix_seconds);
  out.Key("requests_per_second").Number(static_cast<double>(requests) / dt);
  out.Key("errors_per_second").Number(static_cast<double>(errors) / dt);
  out.Key("executions_per_second").Number(rate(a.counters.executions, b.counters.executions));
  out.Key("compiles_per_second")
      .Number(rate(compiles(a.counters, "compiled"), compiles(b.counters, "compiled")));
  out.Key("hits_per_second").BeginObject();
  for (const char* tier : {"memory", "disk", "redis"}) {
    out.Key(tier).Number(rate(compiles(a.counters, tier), compiles(b.counters, tier)));
  }
  out.EndObject().Key("execute_ms").BeginObject();
  for (const auto& [name, q] : {std::pair{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}) {
    out.Key(name);
    WriteQuantile(a.counters, b.counters, q, out);
  }
  out.EndObject().Key("memory_bytes").Int(b.memory_bytes);
  out.Key("evictions").Int(static_cast<int64_t>(b.evictions - std::min(a.evictions, b.evictions)));
  out.Key("by_rpc").BeginObject();
  for (const auto& [rpc, codes] : by_rpc) {
    out.Key(rpc).BeginObject();
    for (const auto& [code, r] : codes) out.Key(code).Number(r);
    out.EndObject();
  }
  out.EndObject().EndObject();
}

void WriteFunctionFacts(const CompiledFunction& f, Json& out) {
  const FunctionFacts& facts = f.facts;
  const double last = f.last_use.get();
  out.Key("id").String(f.id);
  out.Key("first_use").Number(facts.created_unix);
  out.Key("last_use").Number(std::max(last, facts.created_unix));  // (a coarse clock)
  out.Key("calls").Int(f.function.stats().calls);
  out.Key("source").String(facts.source);
  out.Key("bytes").Int(f.bytes());
  out.Key("compile_ms").Number(1e3 * facts.compile_seconds);
  out.Key("nodes_before");
  facts.nodes_before >= 0 ? out.Int(facts.nodes_before) : out.Null();
  out.Key("nodes_after").Int(f.function.fgraph().num_nodes());
  out.Key("inputs").BeginArray();
  const auto& ins = f.function.fgraph().inputs();
  for (int i = 0; i < f.signature.inputs_size(); ++i) {
    const v1::Input& in = f.signature.inputs(i);
    out.BeginObject().Key("name").String(in.shared().empty() ? in.name() : in.shared());
    out.Key("type").String(i < static_cast<int>(ins.size()) ? ins[i]->type()->ToString() : "");
    out.EndObject();
  }
  out.EndArray().Key("outputs").BeginArray();
  for (const VariablePtr& v : f.function.fgraph().outputs()) out.String(v->type()->ToString());
  out.EndArray();
}

std::string ErrorJson(const std::string& message, const char* needs = nullptr) {
  Json out;
  out.BeginObject().Key("error").String(message);
  if (needs != nullptr) out.Key("needs").String(needs);
  return out.EndObject().text();
}

// httplib compresses an answer whose type is exactly "application/json", or text/*, with brotli
// at its slowest quality when the browser accepts it (a 70 MB graph took minutes): the JSON and
// the scripts are typed with their charset, which it leaves alone.
constexpr char kJson[] = "application/json; charset=utf-8";

// The content type of a page file, by its extension.
const char* ContentType(const std::string& path) {
  if (absl::EndsWith(path, ".html")) return "text/html; charset=utf-8";
  if (absl::EndsWith(path, ".js")) return "application/javascript; charset=utf-8";
  if (absl::EndsWith(path, ".css")) return "text/css; charset=utf-8";
  if (absl::EndsWith(path, ".svg")) return "image/svg+xml";
  if (absl::EndsWith(path, ".png")) return "image/png";
  return "application/octet-stream";
}

// A page file's name: letters, digits, '.', '_', '-' and '/', never "..".
bool SafeName(const std::string& name) {
  if (name.empty() || absl::StrContains(name, "..") || name[0] == '/') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
           c == '/';
  });
}

constexpr size_t kMaxDprintBytes = size_t{2} << 20;  // of a function's dprint in its JSON

constexpr char kNotBuilt[] =
    "<!doctype html><meta charset=utf-8><title>Kiln console</title>"
    "<p>The console's page was not built: npm was not available when this kiln-server was built "
    "(see server/console/web/README.md). Its data is served as JSON under <code>/api/</code>.";

}  // namespace

Console::Console(ConsoleOptions options, ConsoleSources sources)
    : options_(std::move(options)), sources_(std::move(sources)), started_(absl::Now()) {
  const Metrics* metrics = sources_.metrics;
  const FunctionCache* cache = sources_.cache;
  history_ = std::make_unique<History>(options_.interval, options_.history_samples + 1, [=] {
    HistorySample s;
    s.unix_seconds = UnixSeconds(absl::Now());
    s.counters = metrics->Snapshot();
    s.evictions = cache->stats().evictions;
    s.memory_bytes = ResidentBytes();
    return s;
  });
}

std::vector<std::shared_ptr<const CompiledFunction>> Console::Visible(const Tenant* tenant) const {
  std::vector<std::shared_ptr<const CompiledFunction>> held = sources_.cache->Held();
  if (tenant != nullptr) {
    std::erase_if(held, [&](const auto& f) { return !sources_.sees(*tenant, *f); });
  }
  return held;
}

std::string Console::OverviewJson(const Tenant* tenant) const {
  Json out;
  out.BeginObject().Key("version").String(sources_.version);
  out.Key("instance").String(sources_.instance);
  out.Key("uptime_seconds").Number(absl::ToDoubleSeconds(absl::Now() - started_));
  out.Key("health").String(sources_.health());
  out.Key("tenant");
  tenant != nullptr ? out.String(tenant->name) : out.Null();
  const CacheStats stats = sources_.cache->stats();
  const std::vector<std::shared_ptr<const CompiledFunction>> visible = Visible(tenant);
  out.Key("tiers").BeginArray();
  out.BeginObject().Key("name").String("memory").Key("state").String("up");
  out.Key("entries").Int(static_cast<int64_t>(visible.size()));
  int64_t bytes = 0;
  for (const auto& f : visible) bytes += f->bytes();
  out.Key("bytes").Int(bytes).Key("evictions").Int(static_cast<int64_t>(stats.evictions));
  out.EndObject();
  for (const auto& [name, state] : sources_.tiers()) {
    out.BeginObject().Key("name").String(name).Key("state").String(state).EndObject();
  }
  out.EndArray();
  const MetricsSnapshot now = sources_.metrics->Snapshot();
  uint64_t requests = 0, errors = 0, compiles = 0;
  for (const auto& [key, n] : now.requests) {
    requests += n;
    if (key.second != absl::StatusCode::kOk) errors += n;
  }
  for (const auto& [source, n] : now.compiles) compiles += n;
  out.Key("totals").BeginObject();
  out.Key("requests").Int(static_cast<int64_t>(requests));
  out.Key("errors").Int(static_cast<int64_t>(errors));
  out.Key("executions").Int(static_cast<int64_t>(now.executions));
  out.Key("compiles").Int(static_cast<int64_t>(compiles));
  out.Key("functions").Int(static_cast<int64_t>(visible.size()));
  out.Key("sessions").Int(static_cast<int64_t>(sources_.sessions->size()));
  out.EndObject();
  out.Key("history").BeginObject();
  out.Key("interval_seconds").Number(absl::ToDoubleSeconds(options_.interval));
  out.Key("samples").BeginArray();
  const std::vector<HistorySample> samples = history_->Samples();
  for (size_t i = 1; i < samples.size(); ++i) WriteInterval(samples[i - 1], samples[i], out);
  out.EndArray().EndObject();
  return out.EndObject().text();
}

std::string Console::FunctionsJson(const Tenant* tenant) const {
  std::vector<std::shared_ptr<const CompiledFunction>> visible = Visible(tenant);
  std::stable_sort(visible.begin(), visible.end(), [](const auto& a, const auto& b) {
    return a->last_use.get() > b->last_use.get();
  });
  Json out;
  out.BeginObject().Key("functions").BeginArray();
  for (const auto& f : visible) {
    out.BeginObject();
    WriteFunctionFacts(*f, out);
    out.EndObject();
  }
  return out.EndArray().EndObject().text();
}

std::shared_ptr<const CompiledFunction> Console::Find(const Tenant* tenant,
                                                      const std::string& id) const {
  std::shared_ptr<const CompiledFunction> f = sources_.cache->Peek(id);
  return f != nullptr && (tenant == nullptr || sources_.sees(*tenant, *f)) ? f : nullptr;
}

namespace {

// A graph's "graph" and "dprint" (cut at kMaxDprintBytes) into an open object.
void WriteGraphAndText(const std::vector<VariablePtr>& inputs,
                       const std::vector<VariablePtr>& outputs, bool compiled, Json& out) {
  out.Key("graph");
  WriteGraphJson(inputs, outputs, out);
  absl::StatusOr<std::string> dprint = PrintGraph(
      std::vector<Var>(outputs.begin(), outputs.end()), v1::PrintRequest::DPRINT, compiled);
  std::string text = dprint.ok() ? *std::move(dprint) : dprint.status().ToString();
  if (text.size() > kMaxDprintBytes) {
    const size_t cut = text.rfind('\n', kMaxDprintBytes);
    text = absl::StrCat(text.substr(0, cut == std::string::npos ? kMaxDprintBytes : cut + 1),
                        "... (", text.size(), " bytes in all: kiln.dprint(f) prints the whole)\n");
  }
  out.Key("dprint").String(text);
}

std::vector<VariablePtr> Ptrs(const std::vector<Var>& vars) {
  std::vector<VariablePtr> out;
  out.reserve(vars.size());
  for (const Var& v : vars) out.push_back(v.ptr());
  return out;
}

}  // namespace

std::string Console::FunctionJson(const Tenant* tenant, const std::string& id) const {
  std::shared_ptr<const CompiledFunction> f = Find(tenant, id);
  if (f == nullptr) return "";
  const FunctionGraph& fg = f->function.fgraph();
  Json out;
  out.BeginObject();
  WriteFunctionFacts(*f, out);
  out.Key("has_built").Bool(!f->built.outputs.empty());
  WriteGraphAndText(fg.inputs(), fg.outputs(), true, out);
  out.Key("rewrites").BeginArray();
  for (const auto& [rule, count] : f->facts.rewrites) {
    out.BeginObject().Key("rule").String(rule).Key("count").Int(count).EndObject();
  }
  return out.EndArray().EndObject().text();
}

std::string Console::BuiltJson(const Tenant* tenant, const std::string& id) const {
  std::shared_ptr<const CompiledFunction> f = Find(tenant, id);
  if (f == nullptr || f->built.outputs.empty()) return "";
  Json out;
  out.BeginObject();
  WriteGraphAndText(Ptrs(f->built.inputs), Ptrs(f->built.outputs), false, out);
  return out.EndObject().text();
}

std::string Console::SessionsJson(const Tenant* tenant) const {
  Json out;
  out.BeginObject().Key("sessions").BeginArray();
  for (const auto& [key, values] : sources_.sessions->Contents()) {
    const size_t slash = key.find('/');
    const std::string owner = slash == std::string::npos ? "" : key.substr(0, slash);
    if (tenant != nullptr && owner != tenant->name) continue;
    out.BeginObject().Key("tenant").String(owner).Key("name").String(IdOf(key));
    out.Key("variables").BeginArray();
    for (const auto& [name, value] : values) {
      out.BeginObject().Key("name").String(name).Key("dtype").String(DTypeName(value.dtype()));
      out.Key("shape").BeginArray();
      for (int64_t d : value.shape()) out.Int(d);
      out.EndArray().Key("bytes").Int(value.nbytes()).EndObject();
    }
    out.EndArray().EndObject();
  }
  return out.EndArray().EndObject().text();
}

std::string Console::Evict(const Tenant* tenant, const std::string& id) const {
  if (Find(tenant, id) == nullptr || !sources_.evict(id)) return "";
  Log(LogLevel::kInfo, "console: function evicted",
      {{"function_id", id}, {"tenant", tenant != nullptr ? tenant->name : ""}});
  return Json().BeginObject().Key("evicted").String(id).EndObject().text();
}

std::string Console::DeleteSession(const Tenant* tenant, const std::string& id) const {
  const std::string key = SessionKey(tenant != nullptr ? tenant->name : "", id);
  if (key.empty() || !sources_.delete_session(key).ok()) return "";
  Log(LogLevel::kInfo, "console: session deleted",
      {{"session", id}, {"tenant", tenant != nullptr ? tenant->name : ""}});
  return Json().BeginObject().Key("deleted").String(id).EndObject().text();
}

void Console::Mount(httplib::Server& http) {
  const std::string expected =
      options_.metrics_token.empty() ? "" : absl::StrCat("Bearer ", options_.metrics_token);
  // Answers the request when it may not go on; the caller's tenant otherwise (null: all).
  const auto admit = [this, expected](const httplib::Request& req, httplib::Response& res,
                                      std::shared_ptr<const Tenant>* tenant) {
    if (!expected.empty() && req.get_header_value("Authorization") != expected) {
      res.status = 401;
      res.set_content(ErrorJson("/api/ needs `Authorization: Bearer <--metrics_token>`",
                                "metrics_token"),
                      kJson);
      return false;
    }
    if (!sources_.auth->requires_token()) return true;
    const std::string bearer = absl::StrCat("Bearer ", req.get_header_value("X-Kiln-Token"));
    const absl::string_view view(bearer);
    absl::StatusOr<std::shared_ptr<const Tenant>> found = sources_.auth->Authenticate(&view);
    if (!found.ok()) {
      res.status = 401;
      res.set_content(ErrorJson("/api/ needs a tenant's token in `X-Kiln-Token`", "tenant_token"),
                      kJson);
      return false;
    }
    *tenant = *std::move(found);
    return true;
  };
  // not_found: the 404's message when the answer is empty.
  const auto json = [admit](std::function<std::string(const Tenant*, const httplib::Request&)>
                                answer,
                            std::string not_found = "no such function") {
    return [admit, answer, not_found](const httplib::Request& req, httplib::Response& res) {
      std::shared_ptr<const Tenant> tenant;
      if (!admit(req, res, &tenant)) return;
      if (req.method == "POST" && !req.has_header("X-Kiln-Action")) {
        res.status = 403;
        res.set_content(ErrorJson("an action needs the `X-Kiln-Action: 1` header"),
                        kJson);
        return;
      }
      std::string body = answer(tenant.get(), req);
      if (body.empty()) {
        res.status = 404;
        body = ErrorJson(not_found);
      }
      res.set_header("Cache-Control", "no-store");
      res.set_content(body, kJson);
    };
  };
  http.Get("/api/overview", json([this](const Tenant* t, const httplib::Request&) {
             return OverviewJson(t);
           }));
  http.Get("/api/functions", json([this](const Tenant* t, const httplib::Request&) {
             return FunctionsJson(t);
           }));
  http.Get(R"(/api/functions/([0-9a-zA-Z_.-]{1,200}))",
           json([this](const Tenant* t, const httplib::Request& req) {
             return FunctionJson(t, req.matches[1]);
           }));
  http.Get("/api/sessions", json([this](const Tenant* t, const httplib::Request&) {
             return SessionsJson(t);
           }));
  http.Get(R"(/api/functions/([0-9a-zA-Z_.-]{1,200})/built)",
           json([this](const Tenant* t, const httplib::Request& req) {
             return BuiltJson(t, req.matches[1]);
           }, "no such function, or it has no graph as built here"));
  http.Post(R"(/api/functions/([0-9a-zA-Z_.-]{1,200})/evict)",
            json([this](const Tenant* t, const httplib::Request& req) {
              return Evict(t, req.matches[1]);
            }));
  http.Post(R"(/api/sessions/([0-9a-zA-Z_.-]{1,200})/delete)",
            json([this](const Tenant* t, const httplib::Request& req) {
              return DeleteSession(t, req.matches[1]);
            }, "no such session"));
  http.Get(R"(/api/.*)", [](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content(ErrorJson("no such console endpoint (server/console/API.md)"),
                    kJson);
  });
  http.Get("/console", [](const httplib::Request&, httplib::Response& res) {
    res.set_redirect("/console/");
  });
  const std::string dir = options_.page_dir;
  http.Get(R"(/console/(.*))", [dir](const httplib::Request& req, httplib::Response& res) {
    std::string name = req.matches[1];
    if (name.empty()) name = "index.html";
    std::ifstream file;
    if (!dir.empty() && SafeName(name)) file.open(dir + "/" + name, std::ios::binary);
    if (!file) {
      res.status = name == "index.html" ? 200 : 404;
      res.set_content(name == "index.html" ? kNotBuilt : "not found\n",
                      name == "index.html" ? "text/html; charset=utf-8" : "text/plain");
      return;
    }
    std::ostringstream body;
    body << file.rdbuf();
    res.set_content(body.str(), ContentType(name));
  });
}

}  // namespace kiln::server
