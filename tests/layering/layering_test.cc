// The layers only point down. core/ knows nothing of protobuf or gRPC (no file under it includes
// their headers or generated code), so the compiler can be used and tested without the service;
// inside core, and between the top-level folders, no file includes a layer above its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "tests/testing/paths.h"

namespace {

namespace fs = std::filesystem;

// Each source file (not a test or a benchmark, which exercise the whole library) under `root`,
// with its path relative to the source tree.
std::vector<std::string> SourcesUnder(const std::string& root) {
  std::vector<std::string> out;
  const fs::path base(kiln::testing::SourceDir());
  for (const auto& entry : fs::recursive_directory_iterator(base / root)) {
    const std::string ext = entry.path().extension();
    const std::string name = entry.path().filename();
    if (ext != ".h" && ext != ".cc") continue;
    if (name.ends_with("_test.cc") || name.ends_with("_benchmark.cc")) continue;
    out.push_back(fs::relative(entry.path(), base).string());
  }
  return out;
}

// The Kiln headers `file` includes ("core/ops/math.h"), with their line numbers.
std::vector<std::pair<int, std::string>> KilnIncludes(const std::string& file) {
  static const std::regex include(R"re(^\s*#\s*include\s*"((core|proto|server|client)/[^"]+)")re");
  std::vector<std::pair<int, std::string>> out;
  std::ifstream in(fs::path(kiln::testing::SourceDir()) / file);
  std::string line;
  std::smatch m;
  for (int n = 1; std::getline(in, line); ++n) {
    if (std::regex_search(line, m, include)) out.emplace_back(n, m[1].str());
  }
  return out;
}

// The folder `depth` levels down of a path: Folder("core/ops/math.h", 1) is "ops".
std::string Folder(const std::string& path, int depth) {
  size_t begin = 0;
  for (int i = 0; i < depth; ++i) begin = path.find('/', begin) + 1;
  const size_t end = path.find('/', begin);
  return end == std::string::npos ? "" : path.substr(begin, end - begin);
}

// core's layers, bottom up; files of one layer may include each other.
const std::map<std::string, int> kCoreLayers = {
    {"tensor", 0},  {"graph", 1},   {"runtime", 2}, {"ops", 3},  {"rewrite", 4},   {"passes", 5},
    {"text", 5},    {"compile", 6}, {"grad", 7},    {"scan", 8}, {"builders", 8}, {"", 9}};

TEST(LayeringTest, CoreIncludesNoLayerAboveItsOwn) {
  int checked = 0;
  for (const std::string& file : SourcesUnder("core")) {
    const auto layer = kCoreLayers.find(Folder(file, 1));
    ASSERT_NE(layer, kCoreLayers.end()) << file << ": a folder of core missing from kCoreLayers";
    for (const auto& [line, header] : KilnIncludes(file)) {
      ++checked;
      ASSERT_TRUE(header.starts_with("core/")) << file << ":" << line << " includes " << header;
      const auto target = kCoreLayers.find(Folder(header, 1));
      ASSERT_NE(target, kCoreLayers.end()) << file << ":" << line << " includes " << header;
      EXPECT_LE(target->second, layer->second)
          << file << ":" << line << " (layer " << layer->first << ") includes " << header
          << " from the layer above, " << target->first;
    }
  }
  EXPECT_GT(checked, 500);
}

// The top-level folders: core under proto (the wire forms), under the server and the clients,
// which never include each other.
TEST(LayeringTest, TopLevelFoldersPointDown) {
  const std::map<std::string, std::vector<std::string>> allowed = {
      {"proto", {"core/", "proto/"}},
      {"server", {"core/", "proto/", "server/"}},
      {"client", {"core/", "proto/", "client/"}}};
  for (const auto& [folder, prefixes] : allowed) {
    for (const std::string& file : SourcesUnder(folder)) {
      for (const auto& [line, header] : KilnIncludes(file)) {
        bool ok = false;
        for (const std::string& p : prefixes) ok = ok || header.starts_with(p);
        EXPECT_TRUE(ok) << file << ":" << line << " includes " << header;
      }
    }
  }
}

TEST(LayeringTest, CoreIncludesNoProtobufOrGrpc) {
  const std::filesystem::path core = std::filesystem::path(kiln::testing::SourceDir()) / "core";
  const std::regex forbidden(
      R"(^\s*#\s*include\s*[<"](google/protobuf/|grpc|grpcpp/|.*\.pb\.h|.*\.grpc\.pb\.h))");
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(core)) {
    const std::string ext = entry.path().extension();
    if (ext != ".h" && ext != ".cc") continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      EXPECT_FALSE(std::regex_search(line, forbidden))
          << entry.path().string() << ":" << n << ": " << line;
    }
  }
  EXPECT_GT(files, 20);
}

TEST(LayeringTest, CoreLinksNoProtobufOrGrpc) {
  std::ifstream cmake(std::filesystem::path(kiln::testing::SourceDir()) / "core" /
                      "CMakeLists.txt");
  std::string text((std::istreambuf_iterator<char>(cmake)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.find("protobuf::"), std::string::npos);
  EXPECT_EQ(text.find("gRPC::"), std::string::npos);
}

}  // namespace
