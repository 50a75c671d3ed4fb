#include "proto/lane/ring.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>

namespace kiln::lane {
namespace {

constexpr uint64_t kSlot = 4096;

absl::Status Ok() { return absl::OkStatus(); }

// The client's end of `server`'s ring, as a client maps it from the descriptor it was sent.
std::unique_ptr<Ring> ClientEnd(const Ring& server) {
  absl::StatusOr<std::unique_ptr<Ring>> client = Ring::Open(dup(server.fd()), server.slot_bytes());
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? std::move(*client) : nullptr;
}

// Writes `text` into `side`'s slot and posts it.
void Send(Ring& ring, Side side, const std::string& text) {
  std::memcpy(ring.OutSlot(side), text.data(), text.size());
  ring.Post(side, text.size());
}

// The next frame `side` receives, waiting at most a few seconds.
std::string Receive(Ring& ring, Side side, absl::Duration spin = absl::ZeroDuration()) {
  SpinPolicy policy;
  absl::StatusOr<uint64_t> size =
      ring.Await(side, spin, policy, absl::Now() + absl::Seconds(10), absl::Milliseconds(50), Ok);
  EXPECT_TRUE(size.ok()) << size.status();
  if (!size.ok() || *size > ring.slot_bytes()) return "<bad size>";
  return std::string(ring.InSlot(side), *size);
}

TEST(LaneRingTest, FramesGoBothWaysBetweenThreadsSleepingAndSpinning) {
  auto server = Ring::Create(kSlot);
  ASSERT_TRUE(server.ok()) << server.status();
  std::unique_ptr<Ring> client = ClientEnd(**server);
  ASSERT_NE(client, nullptr);
  constexpr int kCalls = 2000;
  std::thread answering([&] {
    for (int i = 0; i < kCalls; ++i) {
      const std::string request = Receive(**server, Side::kServer, absl::Microseconds(i % 2 * 50));
      Send(**server, Side::kServer, "answer to " + request);
    }
  });
  for (int i = 0; i < kCalls; ++i) {
    const std::string request = "call " + std::to_string(i);
    Send(*client, Side::kClient, request);
    ASSERT_EQ(Receive(*client, Side::kClient, absl::Microseconds(i % 3 * 20)),
              "answer to " + request);
  }
  answering.join();
}

TEST(LaneRingTest, FramesGoBetweenProcesses) {
  auto server = Ring::Create(kSlot);
  ASSERT_TRUE(server.ok()) << server.status();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the client: its own mapping of the descriptor
    std::unique_ptr<Ring> client = ClientEnd(**server);
    for (int i = 0; i < 500; ++i) {
      Send(*client, Side::kClient, std::to_string(i));
      if (Receive(*client, Side::kClient) != std::to_string(2 * i)) _exit(1);
    }
    _exit(0);
  }
  for (int i = 0; i < 500; ++i) {
    Send(**server, Side::kServer, std::to_string(2 * std::stoi(Receive(**server, Side::kServer))));
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(LaneRingTest, TheSocketMarkerAndAnySizeArePassedOnUnchecked) {
  auto server = Ring::Create(kSlot);
  ASSERT_TRUE(server.ok());
  std::unique_ptr<Ring> client = ClientEnd(**server);
  SpinPolicy policy;
  for (uint64_t size : {kOnSocket, uint64_t{1} << 40, uint64_t{0}}) {
    client->Post(Side::kClient, size);
    absl::StatusOr<uint64_t> got =
        (*server)->Await(Side::kServer, absl::ZeroDuration(), policy, absl::InfiniteFuture(),
                         absl::Seconds(1), Ok);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, size);
  }
}

TEST(LaneRingTest, AnAwaitEndsAtItsDeadlineOrWhenItsCheckFails) {
  auto server = Ring::Create(kSlot);
  ASSERT_TRUE(server.ok());
  SpinPolicy policy;
  const absl::Time start = absl::Now();
  absl::StatusOr<uint64_t> late =
      (*server)->Await(Side::kServer, absl::Microseconds(100), policy,
                       absl::Now() + absl::Milliseconds(30), absl::Milliseconds(10), Ok);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(30));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));

  int checks = 0;
  absl::StatusOr<uint64_t> stopped = (*server)->Await(
      Side::kServer, absl::ZeroDuration(), policy, absl::InfiniteFuture(), absl::Milliseconds(5),
      [&] { return ++checks == 3 ? absl::CancelledError("stopping") : absl::OkStatus(); });
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(checks, 3);
}

TEST(LaneRingTest, WakeRunsTheSleepersCheckAtOnce) {
  auto server = Ring::Create(kSlot);
  ASSERT_TRUE(server.ok());
  std::atomic<bool> stop{false};
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop = true;
    (*server)->Wake(Side::kServer);
  });
  SpinPolicy policy;
  const absl::Time start = absl::Now();
  absl::StatusOr<uint64_t> woken = (*server)->Await(
      Side::kServer, absl::ZeroDuration(), policy, absl::InfiniteFuture(), absl::Seconds(60),
      [&] { return stop ? absl::CancelledError("stopping") : absl::OkStatus(); });
  waker.join();
  EXPECT_EQ(woken.status().code(), absl::StatusCode::kCancelled);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
}

TEST(LaneRingTest, SpinsBackOffAfterMissesAndResumeAfterAHit) {
  SpinPolicy policy;
  EXPECT_TRUE(policy.ShouldSpin());
  policy.Record({.hit = false, .preempted = false});  // skip 1
  EXPECT_FALSE(policy.ShouldSpin());
  EXPECT_TRUE(policy.ShouldSpin());
  policy.Record({.hit = true, .preempted = true});  // a preempted hit counts as a miss: skip 2
  EXPECT_FALSE(policy.ShouldSpin());
  EXPECT_FALSE(policy.ShouldSpin());
  EXPECT_TRUE(policy.ShouldSpin());
  for (int i = 0; i < 10; ++i) policy.Record({});  // at most 64 skipped
  int skipped = 0;
  while (!policy.ShouldSpin()) ++skipped;
  EXPECT_EQ(skipped, 64);
  policy.Record({.hit = true});
  EXPECT_TRUE(policy.ShouldSpin());
}

TEST(LaneRingTest, ASpinEndsWhenItsFrameComesOrItsTimeIsUp) {
  int tries = 0;
  const SpinResult hit = SpinFor(absl::Seconds(10), 4, [&] { return ++tries == 100; });
  EXPECT_TRUE(hit.hit);
  EXPECT_EQ(tries, 100);
  const absl::Time start = absl::Now();
  const SpinResult miss = SpinFor(absl::Milliseconds(5), 4, [] { return false; });
  EXPECT_FALSE(miss.hit);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(5));
  // A spin that sleeps (as one preempted does) says so.
  const SpinResult slept = SpinFor(absl::Milliseconds(5), 1, [] {
    absl::SleepFor(absl::Milliseconds(1));
    return false;
  });
  EXPECT_TRUE(slept.preempted);
}

TEST(LaneRingTest, SlotSizesAndDescriptorsAreChecked) {
  for (uint64_t bad : {uint64_t{0}, uint64_t{100}, uint64_t{5000}, uint64_t{1} << 40}) {
    EXPECT_EQ(Ring::Create(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  auto server = Ring::Create(kSlot);
  ASSERT_TRUE(server.ok());
  // The wrong size, a file that is no memfd, an unsealed memfd.
  EXPECT_EQ(Ring::Open(dup((*server)->fd()), 2 * kSlot).status().code(),
            absl::StatusCode::kFailedPrecondition);
  const int file = open("/dev/zero", O_RDWR | O_CLOEXEC);
  EXPECT_EQ(Ring::Open(file, kSlot).status().code(), absl::StatusCode::kFailedPrecondition);
  const int unsealed = memfd_create("unsealed", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(unsealed, 4096 + 2 * kSlot), 0);
  EXPECT_EQ(Ring::Open(unsealed, kSlot).status().code(), absl::StatusCode::kFailedPrecondition);
  // The sealed memfd cannot shrink under the server.
  std::unique_ptr<Ring> client = ClientEnd(**server);
  EXPECT_NE(ftruncate(client->fd(), 0), 0);
}

}  // namespace
}  // namespace kiln::lane
