// Test helper: a kiln-server child process on a free loopback port, with a channel to it.
#ifndef KILN_TESTS_TESTING_SERVER_PROCESS_H_
#define KILN_TESTS_TESTING_SERVER_PROCESS_H_

#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kiln/v1/service.grpc.pb.h"

namespace kiln::testing {

// A free TCP port on 127.0.0.1 (free when asked; a test binds it soon after).
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// A kiln-server child process (the binary at `binary`), killed when this goes.
class ServerProcess {
 public:
  ServerProcess(const std::string& binary, std::vector<std::string> flags) : port_(FreePort()) {
    flags.insert(flags.begin(), {binary, "--host=127.0.0.1",
                                 absl::StrCat("--port=", port_), "--metrics_port=-1",
                                 "--log_level=error", "--cache_dir="});
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (std::string& f : flags) argv.push_back(f.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    channel_ = grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port_),
                                         grpc::InsecureChannelCredentials(), args);
    ready_ = channel_->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(30));
  }
  ~ServerProcess() { Kill(SIGTERM); }

  bool ready() const { return ready_; }
  std::unique_ptr<v1::Kiln::Stub> Stub() const { return v1::Kiln::NewStub(channel_); }
  // True while the process runs.
  bool alive() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }
  // The process's peak resident memory, in bytes.
  int64_t peak_bytes() const { return StatusBytes("VmHWM:"); }
  // Its resident memory now, in bytes.
  int64_t resident_bytes() const { return StatusBytes("VmRSS:"); }
  void Kill(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  int port_;
  pid_t pid_ = -1;
  std::shared_ptr<grpc::Channel> channel_;
  // A "<field> N kB" line of /proc/<pid>/status, in bytes (-1 when absent).
  int64_t StatusBytes(const std::string& field) const {
    std::ifstream status(absl::StrCat("/proc/", pid_, "/status"));
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind(field, 0) == 0) return std::atoll(line.c_str() + field.size()) * 1024;
    }
    return -1;
  }

  bool ready_ = false;
};

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_SERVER_PROCESS_H_
