#include <gtest/gtest.h>

#include "base/csv_field.h"

namespace sparkops {
namespace {

TEST(CsvField, PlainFieldsAreWrittenAsTheyAre) {
  EXPECT_EQ(CsvQuote("12.35"), "12.35");
  EXPECT_EQ(CsvQuote(""), "");
  EXPECT_EQ(CsvQuote("throttle_start:sw_thermal;hot"), "throttle_start:sw_thermal;hot");
  EXPECT_EQ(CsvJoin({"a", "", "b"}), "a,,b");
}

TEST(CsvField, CommasQuotesAndLineEndsAreQuoted) {
  EXPECT_EQ(CsvQuote("NVRM: Xid 79, GPU has fallen off the bus"), "\"NVRM: Xid 79, GPU has fallen off the bus\"");
  EXPECT_EQ(CsvQuote("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvQuote("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvQuote("cr\r"), "\"cr\r\"");
}

TEST(CsvField, RoundTripOfHostileFields) {
  const std::vector<std::string> fields = {
      "",     "plain",        "a,b", "\"",    "\"\"",
      "x\"y", "line1\nline2", ",",   " lead", "NVRM: Xid (PCI:0000:01:00): 79, pid=1234, name=python, GPU has fallen"};
  std::string rec = CsvJoin(fields);
  EXPECT_FALSE(CsvOpenQuote(rec));
  std::vector<std::string> back;
  ASSERT_EQ(CsvSplit(rec, &back), "");
  EXPECT_EQ(back, fields);  // " lead" is quoted: unquoted fields are trimmed (nvidia-smi's ", ")
}

TEST(CsvField, SpreadsheetExportQuotesEveryFieldAndEndsLinesWithCrlf) {
  std::vector<std::string> f;
  ASSERT_EQ(CsvSplit("\"2026-11-29T13:02:29Z\",\"45\",\"\",\"a,b\",\"he said \"\"x\"\"\"\r", &f), "");
  EXPECT_EQ(f, (std::vector<std::string>{"2026-11-29T13:02:29Z", "45", "", "a,b", "he said \"x\""}));
  ASSERT_EQ(CsvSplit("a, \"b\" ,c", &f), "");  // blanks around quotes are ignored
  EXPECT_EQ(f, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(CsvField, DefectsAreNamed) {
  std::vector<std::string> f;
  EXPECT_NE(CsvSplit("a,\"open", &f), "");
  EXPECT_NE(CsvSplit("a,\"closed\"junk,b", &f), "");
  ASSERT_EQ(CsvSplit("in\"side,b", &f), "");  // a quote inside an unquoted field is text
  EXPECT_EQ(f[0], "in\"side");
}

TEST(CsvField, OpenQuoteSpansLines) {
  EXPECT_TRUE(CsvOpenQuote("a,\"first line"));
  EXPECT_FALSE(CsvOpenQuote("a,\"first line\nsecond\""));
  EXPECT_TRUE(CsvOpenQuote("a,\"x\"\"\nmore"));  // a doubled quote does not close the field
  EXPECT_FALSE(CsvOpenQuote("in\"side,b"));      // not at a field's start: text
  // a line that continues a quoted field: scanned on its own, with the state it starts in
  EXPECT_FALSE(CsvOpenQuote("second\",b", /*in_quotes=*/true));
  EXPECT_TRUE(CsvOpenQuote("still inside", /*in_quotes=*/true));
  EXPECT_TRUE(CsvOpenQuote("x\"\"", /*in_quotes=*/true));  // a doubled quote keeps it open
}

}  // namespace
}  // namespace sparkops
