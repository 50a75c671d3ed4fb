#include "server/env_flags.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

KILN_FLAG(int64_t, test_only_budget, int64_t{5}, "a budget");
KILN_FLAG(std::string, test_only_dir, kiln::server::EmptyAllowed{"/default"}, "a directory");

namespace kiln::server {
namespace {

// Sets (or, with null, unsets) a variable for the test's length.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(EnvFlagsTest, TheVariableIsKilnAndTheFlagInUpperCase) {
  EXPECT_EQ(FlagEnvName("port"), "KILN_PORT");
  EXPECT_EQ(FlagEnvName("max_call_bytes"), "KILN_MAX_CALL_BYTES");
  EXPECT_EQ(FlagEnvName("quota_compiles_per_second"), "KILN_QUOTA_COMPILES_PER_SECOND");
  EXPECT_EQ(FlagEnvHelp("tls_key", "PEM private key"), "PEM private key (KILN_TLS_KEY)");
}

// (A flag reads its variable once, when it is first used.)
TEST(EnvFlagsTest, AFlagDefaultsToItsVariable) {
  ScopedEnv budget("KILN_TEST_ONLY_BUDGET", "123");
  ScopedEnv dir("KILN_TEST_ONLY_DIR", "");
  EXPECT_EQ(absl::GetFlag(FLAGS_test_only_budget), 123);
  EXPECT_EQ(absl::GetFlag(FLAGS_test_only_dir), "");
}

TEST(EnvFlagsTest, UnsetOrEmptyIsTheFallback) {
  ScopedEnv unset("KILN_T_X", nullptr);
  EXPECT_EQ(FlagFromEnv<std::string>("t_x", "fb"), "fb");
  EXPECT_EQ(FlagFromEnv<int>("t_x", 7), 7);
  EXPECT_EQ(FlagFromEnv<absl::Duration>("t_x", absl::Seconds(3)), absl::Seconds(3));
  EXPECT_EQ(FlagFromEnv<std::string>("t_x", EmptyAllowed{"auto"}), "auto");
  ScopedEnv empty("KILN_T_X", "");
  EXPECT_EQ(FlagFromEnv<std::string>("t_x", "fb"), "fb");
  EXPECT_EQ(FlagFromEnv<int64_t>("t_x", int64_t{8}), 8);
  EXPECT_EQ(FlagFromEnv<double>("t_x", 0.25), 0.25);
  EXPECT_TRUE(FlagFromEnv<bool>("t_x", true));
  EXPECT_EQ(FlagFromEnv<std::vector<std::string>>("t_x", {"a"}), std::vector<std::string>{"a"});
  // Only where "" means something (KILN_CACHE_DIR= turns the disk tier off).
  EXPECT_EQ(FlagFromEnv<std::string>("t_x", EmptyAllowed{"auto"}), "");
}

TEST(EnvFlagsTest, EachTypeReadsItsVariable) {
  {
    ScopedEnv v("KILN_T_X", "5000000000");
    EXPECT_EQ(FlagFromEnv<int64_t>("t_x", int64_t{0}), int64_t{5000000000});
  }
  for (const char* yes : {"1", "true", "YES", "on", "On"}) {
    ScopedEnv v("KILN_T_X", yes);
    EXPECT_TRUE(FlagFromEnv<bool>("t_x", false)) << yes;
  }
  for (const char* no : {"0", "false", "no", "off", "OFF"}) {
    ScopedEnv v("KILN_T_X", no);
    EXPECT_FALSE(FlagFromEnv<bool>("t_x", true)) << no;
  }
  {
    ScopedEnv v("KILN_T_X", "auto");  // the clients' KILN_SHM=auto: the server's default
    EXPECT_TRUE(FlagFromEnv<bool>("t_x", true));
    EXPECT_FALSE(FlagFromEnv<bool>("t_x", false));
  }
  {
    ScopedEnv v("KILN_T_X", "1.5");
    EXPECT_EQ(FlagFromEnv<double>("t_x", 0.0), 1.5);
  }
  {
    ScopedEnv v("KILN_T_X", "30m");
    EXPECT_EQ(FlagFromEnv<absl::Duration>("t_x", absl::ZeroDuration()), absl::Minutes(30));
  }
  {
    ScopedEnv v("KILN_T_X", "a,,b");
    EXPECT_EQ(FlagFromEnv<std::vector<std::string>>("t_x", {}),
              (std::vector<std::string>{"a", "b"}));
  }
}

// A value that does not read as its type stops the server with a message naming the variable,
// instead of becoming 0 or false (KILN_SHM=on once read as --shm=false).
TEST(EnvFlagsTest, AnUnreadableValueStopsTheServer) {
  ScopedEnv v("KILN_T_X", "maybe");
  EXPECT_EXIT(FlagFromEnv<bool>("t_x", true), ::testing::ExitedWithCode(2),
              "kiln-server: KILN_T_X=maybe is not a bool \\(1/0, true/false, yes/no, on/off, auto\\)");
  EXPECT_EXIT(FlagFromEnv<int>("t_x", 50051), ::testing::ExitedWithCode(2),
              "KILN_T_X=maybe is not an integer");
  EXPECT_EXIT(FlagFromEnv<double>("t_x", 0.5), ::testing::ExitedWithCode(2),
              "KILN_T_X=maybe is not a number");
  ScopedEnv unitless("KILN_T_X", "1.5");
  EXPECT_EXIT(FlagFromEnv<absl::Duration>("t_x", absl::Seconds(3)), ::testing::ExitedWithCode(2),
              "KILN_T_X=1.5 is not a duration");
}

}  // namespace
}  // namespace kiln::server
