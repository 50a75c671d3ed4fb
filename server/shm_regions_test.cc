#include "server/shm_regions.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kiln::server {
namespace {

// A shared-memory object of `bytes` with a fresh name, unlinked when the test ends.
class ShmObject {
 public:
  explicit ShmObject(size_t bytes) {
    static int counter = 0;
    name_ = absl::StrCat("/kiln-test-", getpid(), "-", ++counter, "-abcdefgh");
    fd_ = shm_open(name_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    EXPECT_GE(fd_, 0) << name_;
    EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(bytes)), 0);
  }
  ~ShmObject() {
    close(fd_);
    shm_unlink(name_.c_str());
  }
  const std::string& name() const { return name_; }
  int fd() const { return fd_; }

 private:
  std::string name_;
  int fd_ = -1;
};

TEST(ShmRegionsTest, ValidNamesAreKilnPrefixedAndPlain) {
  EXPECT_TRUE(ValidShmName("/kiln-0123456789abcdef"));
  EXPECT_TRUE(ValidShmName("/kiln-" + std::string(128, 'x')));
  EXPECT_FALSE(ValidShmName("/kiln-" + std::string(129, 'x')));
  EXPECT_FALSE(ValidShmName("/kiln-short"));
  EXPECT_FALSE(ValidShmName("kiln-0123456789abcdef"));
  EXPECT_FALSE(ValidShmName("/other-0123456789abcdef"));
  EXPECT_FALSE(ValidShmName("/kiln-0123456789abcdef/../x"));
  EXPECT_FALSE(ValidShmName("/kiln-0123456789abcde\n"));
}

TEST(ShmRegionsTest, ReadsAndWritesInsideTheRegionOnly) {
  ShmObject obj(4096);
  RegionRegistry registry;
  ASSERT_TRUE(registry.Register("s1", "r", obj.name(), 4096).ok());
  EXPECT_EQ(registry.size(), 1);
  EXPECT_EQ(registry.bytes(), 4096);
  auto region = registry.Find("s1", "r");
  ASSERT_TRUE(region.ok());
  const double values[3] = {1.5, -2, 3};
  ASSERT_TRUE((*region)->Write(64, sizeof values, values).ok());
  double back[3];
  ASSERT_TRUE((*region)->Read(64, sizeof back, back).ok());
  EXPECT_EQ(std::memcmp(values, back, sizeof values), 0);
  EXPECT_TRUE((*region)->CheckSlice("x", 4000, 96).ok());
  EXPECT_EQ((*region)->CheckSlice("x", 4000, 97).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*region)->CheckSlice("x", 5000, 0).code(), absl::StatusCode::kInvalidArgument);
  // Offsets that would wrap around 2^64.
  EXPECT_EQ((*region)->CheckSlice("x", 8, ~uint64_t{0}).code(),
            absl::StatusCode::kInvalidArgument);
  // Private to the session: another session's key finds nothing.
  EXPECT_EQ(registry.Find("s2", "r").status().code(), absl::StatusCode::kNotFound);
}

TEST(ShmRegionsTest, AnObjectShrunkAfterRegistrationIsDataLossNotACrash) {
  ShmObject obj(1 << 20);
  RegionRegistry registry;
  ASSERT_TRUE(registry.Register("s", "r", obj.name(), 1 << 20).ok());
  auto region = registry.Find("s", "r");
  ASSERT_TRUE(region.ok());
  std::vector<char> out(1 << 20, 'x');
  // Every page mapped by a first full read and write, then the object shrinks under them.
  ASSERT_TRUE((*region)->Write(0, out.size(), out.data()).ok());
  ASSERT_TRUE((*region)->Read(0, out.size(), out.data()).ok());
  ASSERT_EQ(ftruncate(obj.fd(), 100), 0);
  EXPECT_EQ((*region)->Read(0, out.size(), out.data()).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ((*region)->Write(4096, 8, out.data()).code(), absl::StatusCode::kDataLoss);
  // What is left of the object still reads, and again after many faults.
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ((*region)->Read(8192, 8, out.data()).code(), absl::StatusCode::kDataLoss);
  }
  EXPECT_TRUE((*region)->Read(0, 100, out.data()).ok());
  EXPECT_EQ((*region)->Read(0, (1 << 20) + 1, out.data()).code(),
            absl::StatusCode::kInvalidArgument);
}

// The guard takes only the faults of its own copies: any other SIGBUS goes to the handler that
// was there before, and ends the process as it would without the guard.
TEST(ShmRegionsDeathTest, ASigbusOutsideACopyStillEndsTheProcess) {
  ShmObject obj(4096);
  RegionRegistry registry;
  ASSERT_TRUE(registry.Register("s", "r", obj.name(), 4096).ok());
  char byte;
  ASSERT_TRUE((*registry.Find("s", "r"))->Read(0, 1, &byte).ok());  // the guard is installed
  ShmObject other(4096);
  auto* page = static_cast<volatile char*>(
      mmap(nullptr, 4096, PROT_READ, MAP_SHARED, other.fd(), 0));
  ASSERT_NE(page, MAP_FAILED);
  ASSERT_EQ(ftruncate(other.fd(), 0), 0);
  // Killed by SIGBUS, or, under a sanitizer, by its report (the handler that was there before).
  const auto ended_by_the_fault = [](int status) {
    return (WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) ||
           (WIFEXITED(status) && WEXITSTATUS(status) != 0);
  };
  EXPECT_EXIT(byte = page[0], ended_by_the_fault, "");
  munmap(const_cast<char*>(page), 4096);
}

TEST(ShmRegionsTest, RefusesWhatItCannotOrMustNotOpen) {
  RegionRegistry registry;
  EXPECT_EQ(registry.Register("s", "r", "/kiln-doesnotexist0123456789", 8).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(registry.Register("s", "r", "/dev/shm/x", 8).code(),
            absl::StatusCode::kInvalidArgument);
  ShmObject obj(100);
  EXPECT_EQ(registry.Register("s", "r", obj.name(), 101).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("s", "r", obj.name(), 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("", "r", obj.name(), 10).code(), absl::StatusCode::kInvalidArgument);
  RegionRegistry off(RegionLimits{.enabled = false});
  EXPECT_EQ(off.Register("s", "r", obj.name(), 10).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ShmRegionsTest, LimitsCountRegionsAndBytes) {
  ShmObject obj(2000);
  RegionRegistry registry(
      RegionLimits{.max_regions = 3, .max_regions_per_session = 2, .max_bytes = 2500});
  ASSERT_TRUE(registry.Register("a", "1", obj.name(), 1000).ok());
  ASSERT_TRUE(registry.Register("a", "2", obj.name(), 1000).ok());
  EXPECT_EQ(registry.Register("a", "3", obj.name(), 10).code(),
            absl::StatusCode::kResourceExhausted);
  // Replacing a region of the same name frees its bytes first.
  ASSERT_TRUE(registry.Register("a", "2", obj.name(), 500).ok());
  EXPECT_EQ(registry.bytes(), 1500);
  EXPECT_EQ(registry.Register("b", "1", obj.name(), 1001).code(),
            absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(registry.Register("b", "1", obj.name(), 1000).ok());
  EXPECT_EQ(registry.Register("c", "1", obj.name(), 1).code(),
            absl::StatusCode::kResourceExhausted);
  registry.DropSession("a");
  EXPECT_EQ(registry.size(), 1);
  EXPECT_EQ(registry.bytes(), 1000);
  EXPECT_TRUE(registry.Unregister("b", "1").ok());
  EXPECT_EQ(registry.Unregister("b", "1").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry.size(), 0);
  EXPECT_EQ(registry.bytes(), 0);
}

TEST(ShmRegionsTest, IdleRegionsAreClosedByTheSweeper) {
  ShmObject obj(64);
  RegionRegistry registry(RegionLimits{.ttl = absl::Milliseconds(200)});
  ASSERT_TRUE(registry.Register("s", "idle", obj.name(), 64).ok());
  ASSERT_TRUE(registry.Register("s", "used", obj.name(), 64).ok());
  for (int i = 0; i < 8; ++i) {  // "used" is found every 50 ms, "idle" never
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(registry.Find("s", "used").ok());
  }
  EXPECT_EQ(registry.Find("s", "idle").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry.size(), 1);
  for (int i = 0; i < 100 && registry.size() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(registry.size(), 0);
}

}  // namespace
}  // namespace kiln::server
