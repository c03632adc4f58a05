// The HTML report: self-contained, and it renders in headless Chromium (non-blank screenshot,
// no console errors). Skipped, saying why, only when chromium is not installed.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include <fmt/format.h>

#include "analysis/causes.h"
#include "host/command.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::ReadFileOrDie;
using testing::RunInProcess;
using testing::TempDir;

std::string WriteReport(const TempDir& d, const std::string& run) {
  std::string html = d.path() + "/report.html";
  auto r = RunInProcess({"analyze", "--root", Fixture("runs/root"), Fixture("runs/" + run), "--html", html},
                        {{"TZ", "UTC"}});
  EXPECT_EQ(r.rc, 0) << r.err;
  return html;
}

TEST(HtmlReport, SelfContainedWithEveryPanelAndTheEventBand) {
  TempDir d;
  std::string html = ReadFileOrDie(WriteReport(d, "thermal"));
  for (const char* panel : {"Step time", "GPU temperature", "GPU power", "SM clock", "MemAvailable"})
    EXPECT_NE(html.find(panel), std::string::npos) << panel;
  EXPECT_NE(html.find("#1 thermal 2.0"), std::string::npos);
  EXPECT_NE(html.find("cause: thermal"), std::string::npos);
  // Issue 37: the run's energy line and what the slowdown cost, the same sentences as analyze's text.
  EXPECT_NE(html.find("3.51 Wh (GPU: integral of power_w); over 149 s; 0.01762 Wh/step over 199 steps"),
            std::string::npos);
  EXPECT_NE(html.find("<li>energy: 2.33 Wh over its 100 steps, +1.15 Wh against the baseline's 0.0118 Wh/step</li>"),
            std::string::npos)
      << html;
  // no network, no external assets, no scripts (the SVG namespace URI is a name, not a fetch)
  for (size_t p; (p = html.find("xmlns=\"http://www.w3.org/2000/svg\"")) != std::string::npos;) html.erase(p, 34);
  for (const char* bad : {"http://", "https://", "<script", "src=", "@import", "url("})
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
}

TEST(HtmlReport, LegendNamesEachDrawnCauseOnceWithItsColourAndHelp) {
  TempDir d;
  const std::string html = ReadFileOrDie(WriteReport(d, "thermal"));
  const size_t legend = html.find("<div class=\"legend muted\">");
  ASSERT_NE(legend, std::string::npos);
  const std::string part = html.substr(legend, html.find("</div></div>", legend) - legend);
  const CauseInfo& thermal = CauseFor("thermal");
  EXPECT_NE(part.find(fmt::format("background:{}\">thermal</span>", thermal.colour)), std::string::npos) << part;
  EXPECT_NE(part.find(std::string(thermal.help).substr(0, 20)), std::string::npos) << part;
  for (const CauseInfo& c : Causes()) {  // only the causes a band is drawn for
    if (c.name != "thermal") {
      EXPECT_EQ(part.find(">" + std::string(c.name) + "</span>"), std::string::npos) << c.name;
    }
  }
  // a steady run draws no band, so no legend
  TempDir d2;
  EXPECT_EQ(ReadFileOrDie(WriteReport(d2, "steady_eval")).find("class=\"legend"), std::string::npos);
}

std::string FindChromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (std::ifstream(p).good()) return p;
  return "";
}

TEST(HtmlReport, RendersInHeadlessChromium) {
  std::string chromium = FindChromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium is not installed (Debian package `chromium`; scripts/setup.sh installs it)";
  TempDir d;
  std::string html = WriteReport(d, "contention");
  std::string png = d.path() + "/shot.png";
  std::vector<std::string> argv = {chromium,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--hide-scrollbars",
                                   "--no-first-run",
                                   "--user-data-dir=" + d.path() + "/profile",
                                   "--window-size=1000,1200",
                                   "--screenshot=" + png,
                                   "--enable-logging=stderr",
                                   "--v=0",
                                   "file://" + html};
  CommandOptions opt;
  opt.timeout = std::chrono::seconds(25);
  auto r = RunCommand(argv, opt);
  ASSERT_TRUE(r) << r.error().message;
  std::string all = r->out + r->err;
  EXPECT_EQ(all.find("CONSOLE"), std::string::npos) << all;
  EXPECT_EQ(all.find("Uncaught"), std::string::npos) << all;
  std::string shot = ReadFileOrDie(png);
  ASSERT_GT(shot.size(), 8u);
  EXPECT_EQ(shot.substr(1, 3), "PNG");
  // Non-blank: a blank 1000x1200 page compresses to a few KB; the report's text and lines do not.
  EXPECT_GT(shot.size(), 30000u) << "screenshot looks blank";
  std::set<unsigned char> bytes(shot.begin() + 100, shot.end());
  EXPECT_GT(bytes.size(), 200u);
}

}  // namespace
}  // namespace sparkops
