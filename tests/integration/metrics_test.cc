// The server's Prometheus endpoint over HTTP: the counters a Compile moves.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <httplib.h>

#include "absl/strings/match.h"
#include "client/cpp/client.h"
#include "core/kiln.h"
#include "server/log.h"
#include "server/server.h"

namespace kiln {
namespace {

TEST(MetricsTest, EndpointServesPrometheusText) {
  server::SetLogLevel(server::LogLevel::kWarning);
  server::ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.metrics_port = 0;
  auto server = server::Server::Start(o);
  ASSERT_TRUE(server.ok()) << server.status();
  auto c = client::Client::Connect("127.0.0.1:" + std::to_string((*server)->port()));
  ASSERT_TRUE(c.ok()) << c.status();
  Var a = vector("a");
  ASSERT_TRUE((*c)->Compile({a}, {exp(a)}).ok());
  httplib::Client http("127.0.0.1", (*server)->metrics_port());
  auto res = http.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(absl::StrContains(res->body, "kiln_requests_total{method=\"Compile\"} 1"));
  EXPECT_TRUE(absl::StrContains(res->body,
                                "kiln_compile_seconds_bucket{source=\"compiled\",le=\"+Inf\"} 1"));
  EXPECT_TRUE(
      absl::StrContains(res->body, "kiln_cache_lookups_total{tier=\"all\",result=\"miss\"} 1"));
  for (int i = 0; i < 500 && !(*server)->serving(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto health = http.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->body, "serving\n");
}

}  // namespace
}  // namespace kiln
