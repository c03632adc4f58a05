// DescribeNonUtf8: any bytes; a UTF-16/32 byte-order mark is always named.
#include "base/encoding.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  auto d = sparkops::DescribeNonUtf8(text);
  if (text.size() >= 2 && ((text[0] == '\xFF' && text[1] == '\xFE') || (text[0] == '\xFE' && text[1] == '\xFF')))
    FUZZ_CHECK(d.has_value());
  if (d) FUZZ_CHECK(!sparkops::NonUtf8Message("f", *d).empty());
  return 0;
}
