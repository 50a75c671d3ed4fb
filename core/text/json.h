// A small streaming JSON writer for the console's answers: objects, arrays, strings escaped,
// numbers (non-finite ones as null). Commas are placed by the writer.
#ifndef KILN_CORE_TEXT_JSON_H_
#define KILN_CORE_TEXT_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class Json {
 public:
  Json& BeginObject();
  Json& EndObject();
  Json& BeginArray();
  Json& EndArray();
  // The key of the next value in an object.
  Json& Key(std::string_view key);
  Json& String(std::string_view value);
  Json& Number(double value);
  Json& Int(int64_t value);
  Json& Bool(bool value);
  Json& Null();
  // A value written already as JSON text.
  Json& Raw(std::string_view json);

  const std::string& text() const { return out_; }

 private:
  void BeforeValue();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace kiln

#endif  // KILN_CORE_TEXT_JSON_H_
