// Test helper: a kiln::server::Server in the test's own process, on a free loopback port.
#ifndef KILN_TESTS_TESTING_LOCAL_SERVER_H_
#define KILN_TESTS_TESTING_LOCAL_SERVER_H_

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>

#include "core/tensor/tensor.h"
#include "server/log.h"
#include "server/server.h"

namespace kiln::testing {

// Options of a server on 127.0.0.1, any free port, 4 workers, logging warnings and errors only.
inline server::ServerOptions Local() {
  server::SetLogLevel(server::LogLevel::kWarning);
  server::ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.threads = 4;
  return o;
}

// The started server; null (and a test failure) when it cannot start.
inline std::unique_ptr<server::Server> Start(const server::ServerOptions& o = Local()) {
  auto s = server::Server::Start(o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// host:port of its gRPC listener.
inline std::string Address(const server::Server& s) {
  return "127.0.0.1:" + std::to_string(s.port());
}

// A float64 vector of these values.
inline Tensor Vec(std::initializer_list<double> v) {
  return *Tensor::Of<double>(DType::kFloat64, {static_cast<int64_t>(v.size())}, v);
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_LOCAL_SERVER_H_
