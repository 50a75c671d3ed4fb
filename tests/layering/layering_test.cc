// core/ knows nothing of protobuf or gRPC: no file under it includes their headers or generated
// code, so the compiler can be used and tested without the service.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace {

TEST(LayeringTest, CoreIncludesNoProtobufOrGrpc) {
  const std::filesystem::path core = std::filesystem::path(KILN_SOURCE_DIR) / "core";
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
  std::ifstream cmake(std::filesystem::path(KILN_SOURCE_DIR) / "core" / "CMakeLists.txt");
  std::string text((std::istreambuf_iterator<char>(cmake)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.find("protobuf::"), std::string::npos);
  EXPECT_EQ(text.find("gRPC::"), std::string::npos);
}

}  // namespace
