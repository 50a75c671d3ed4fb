#include "server/disk_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_format.h"

namespace kiln::server {
namespace {

std::string Id(int i) { return absl::StrFormat("%064x", i); }

int64_t DirBytes(const std::string& dir) {
  int64_t total = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) total += f.file_size();
  return total;
}

// Entries of ~1 KB under a 5 KB bound: the least recently used go first, a load counts as a use,
// and a second cache on the same directory (another server) trims the same files safely.
TEST(DiskCacheTest, BoundedLeastRecentlyUsedFirst) {
  const std::string dir = ::testing::TempDir() + "/kiln_disk_bound";
  std::filesystem::remove_all(dir);
  auto cache = DiskCache::Open(dir, 5000);
  ASSERT_TRUE(cache.ok()) << cache.status();
  auto other = DiskCache::Open(dir, 5000);
  ASSERT_TRUE(other.ok());
  const std::string entry(1000, 'x');
  // (apart by more than the file system's clock tick, so that their times differ)
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(cache->Store(Id(i), entry).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int i = 4; i < 12; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(cache->Load(Id(0)).ok()) << i;  // entry 0 is kept in use
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE((i % 2 ? *other : *cache).Store(Id(i), entry).ok());
    EXPECT_LE(DirBytes(dir), 5000 + 1065);  // at most one entry over until the next trim
  }
  cache->Trim();  // counts what the other server wrote too
  EXPECT_LE(DirBytes(dir), 4500);
  EXPECT_EQ(cache->Load(Id(1)).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cache->Load(Id(8)).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(cache->Load(Id(11)).ok());
  // Reopening with a lower bound trims at once; a temporary file older than an hour goes.
  const std::string stale = dir + "/." + Id(99) + ".1.0.tmp";
  std::ofstream(stale) << "partial";
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(2);
  std::filesystem::last_write_time(stale, old);
  auto smaller = DiskCache::Open(dir, 2500);
  ASSERT_TRUE(smaller.ok());
  EXPECT_LE(DirBytes(dir), 2500);
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(smaller->Load(Id(11)).ok());
}

}  // namespace
}  // namespace kiln::server
