// Test helper: a real redis-server child process on a free loopback port, killed when this goes.
#ifndef KILN_TESTS_TESTING_REDIS_PROCESS_H_
#define KILN_TESTS_TESTING_REDIS_PROCESS_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "server/redis.h"
#include "tests/testing/server_process.h"

namespace kiln::testing {

class RedisProcess {
 public:
  // `policy`: Redis's maxmemory-policy.
  explicit RedisProcess(const std::string& policy = "noeviction") : port_(FreePort()) {
    pid_ = fork();
    if (pid_ == 0) {
      const std::string port = absl::StrCat(port_);
      execlp("redis-server", "redis-server", "--bind", "127.0.0.1", "--port", port.c_str(),
             "--save", "", "--appendonly", "no", "--maxmemory-policy", policy.c_str(), "--loglevel",
             "warning", static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 200; ++i) {
      // A new client each time: one that failed waits a second before it tries again.
      auto redis = server::Redis::Create(address());
      if (redis.ok() && (*redis)->Command({"PING"}).ok()) {
        ready_ = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~RedisProcess() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  bool ready() const { return ready_; }

 private:
  int port_;
  pid_t pid_ = -1;
  bool ready_ = false;
};

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_REDIS_PROCESS_H_
