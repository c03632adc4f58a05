// The table of causes (analysis/causes.h): every row complete, documented, classified by a test,
// and the readers of causes (HTML colours, `analyze --help`) drawn from it.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "analysis/causes.h"
#include "analysis/classify.h"
#include "base/strings.h"
#include "test_util.h"

namespace sparkops {
namespace {

std::string Source(const std::string& rel) { return std::string(SPARKOPS_TEST_SOURCE_DIR) + "/../" + rel; }

TEST(Causes, EveryCauseHasAColourHelpFinderAndEvidence) {
  std::set<std::string> names, colours;
  const std::regex hex("#[0-9a-f]{6}");
  for (const CauseInfo& c : Causes()) {
    SCOPED_TRACE(std::string(c.name));
    EXPECT_TRUE(names.insert(std::string(c.name)).second) << "listed twice";
    EXPECT_TRUE(std::regex_match(std::string(c.colour), hex)) << c.colour;
    EXPECT_TRUE(colours.insert(std::string(c.colour)).second) << "colour shared with another cause";
    EXPECT_FALSE(c.help.empty());
    EXPECT_EQ(c.help.find('\n'), std::string_view::npos) << "help is one line";
    EXPECT_FALSE(c.finder.empty());
    EXPECT_FALSE(c.evidence.empty());
    EXPECT_LE(c.priority, c.weak_priority);
  }
  EXPECT_EQ(Causes().back().name, "unknown");
  EXPECT_EQ(CauseFor("no such cause").name, "unknown");
  EXPECT_EQ(CausePriority("thermal", /*weak=*/true), CauseFor("thermal").weak_priority);
}

TEST(Causes, EveryCauseHasADocsRowAndEveryDocsRowACause) {
  // docs/analyze.md, "Classification": one table row per cause, "| `name` | rule | source |"
  std::set<std::string> documented;
  const std::regex row(R"(^\| `([a-z_]+)`( \([^)]*\))? \|)");
  const std::string doc = testing::ReadFileOrDie(Source("docs/analyze.md"));
  for (auto line : SplitLines(doc)) {
    std::smatch m;
    std::string l(line);
    if (std::regex_search(l, m, row)) documented.insert(m[1].str());
  }
  for (const CauseInfo& c : Causes()) EXPECT_TRUE(documented.count(std::string(c.name))) << c.name << ": no docs row";
  for (const auto& d : documented) EXPECT_EQ(CauseFor(d).name, d) << d << ": documented, not in Causes()";
}

TEST(Causes, EveryCauseHasAClassifyTest) {
  // A test somewhere under tests/ asserts the cause a classification found: `cause, "<name>")`
  // (EXPECT_EQ(x.cause, "thermal")) or `["cause"] == "<name>"`/`["cause"], "<name>"` (JSON).
  std::string all;
  for (const auto& e : std::filesystem::recursive_directory_iterator(SPARKOPS_TEST_SOURCE_DIR))
    if (e.path().extension() == ".cc" && e.path().filename() != "causes_test.cc")
      all += testing::ReadFileOrDie(e.path());
  for (const CauseInfo& c : Causes()) {
    const std::string n(c.name);
    EXPECT_TRUE(all.find("cause, \"" + n + "\")") != std::string::npos ||
                all.find("[\"cause\"], \"" + n + "\")") != std::string::npos)
        << n << ": no test asserts that a slowdown is classified as it";
  }
}

}  // namespace
}  // namespace sparkops
