// A run that ran out of memory or that the guard stopped, told with its numbers and the OOM ladder
// (report/run_memory.h): the pure part on hand-made analyses, then `run` + `analyze` end to end.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "memory/model_source.h"
#include "report/html.h"
#include "report/run_memory.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::ReadFileOrDie;
using testing::RunBinary;
using testing::RunInProcess;
using testing::TempDir;

constexpr double kGiB = 1024.0 * 1024 * 1024;

ThermalRow Row(int64_t t_ms, double available_gib, std::optional<double> cache_gib = std::nullopt) {
  ThermalRow r;
  r.t_ms = t_ms;
  r.mem_available_gib = available_gib;
  r.page_cache_gib = cache_gib;
  return r;
}

AnalysisResult RunWithPool(std::vector<double> available) {
  AnalysisResult r;
  r.in.dir = "/runs/r1";
  ThermalSeries s;
  for (size_t i = 0; i < available.size(); ++i)
    s.rows.push_back(Row(1000 * static_cast<int64_t>(i), available[i], i == 0 ? 0.4 : 9.0));
  r.thermal = s;
  return r;
}

OomSignature TorchOom() {
  return ParseOomSignature(
      "Traceback (most recent call last):\n  File \"t.py\", in training_step\n    loss.backward()\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.");
}

memory::Plan FullFineTune8B(bool grad_ckpt, double budget_gib) {
  auto model = memory::ResolveModel("llama-3.1-8b");
  EXPECT_TRUE(model) << model.error().message;
  memory::PlanOptions o;
  o.method = memory::Method::kFull;
  o.grad_ckpt = grad_ckpt;
  o.seq = 4096;
  o.optimizer = memory::Optimizer::kAdamWFused;  // inputs known: the ladder's logic is under test
  o.framework_version = "4.57.1";
  memory::Budget b;
  b.bytes = budget_gib * kGiB;
  b.source = "--budget-gib";
  auto p = memory::MakePlan(*model, o, b);
  EXPECT_TRUE(p) << p.error().message;
  return *p;
}

TEST(RunMemory, NothingToSayWithoutAnOomOrAGuardStop) {
  AnalysisResult r = RunWithPool({100, 20, 90});
  EXPECT_FALSE(DescribeRunMemory(r, OomSignature{}, std::nullopt));
  RunEvent flush{500, "memory_guard", {{"action", "flush"}}};
  r.events.push_back(flush);  // a flush that sufficed did not stop the job
  EXPECT_FALSE(DescribeRunMemory(r, OomSignature{}, std::nullopt));
}

TEST(RunMemory, OomWithThePlanGivesPeakBudgetAndTheRungThatFits) {
  const AnalysisResult r = RunWithPool({100.0, 60.0, 18.5, 21.0});
  auto m = DescribeRunMemory(r, TorchOom(), FullFineTune8B(false, 80));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->trigger, "oom");
  EXPECT_DOUBLE_EQ(*m->pool_peak_gib, 81.5);  // 100 at the start, 18.5 at the lowest
  EXPECT_DOUBLE_EQ(*m->start_available_gib, 100.0);
  EXPECT_DOUBLE_EQ(*m->budget_gib, 80.0);
  EXPECT_GT(*m->planned_peak_gib, 80.0);  // full FT without checkpointing at seq 4096 does not fit 80 GiB
  EXPECT_NE(m->headline.find("took 81.5 GiB of the pool at its peak (MemAvailable 100.0 -> 18.5 GiB)"),
            std::string::npos)
      << m->headline;
  EXPECT_NE(m->headline.find("against a budget of 80.0 GiB"), std::string::npos) << m->headline;
  // the page cache of the first sample (0.4 GiB) is not worth a flush; checkpointing on fits
  EXPECT_EQ(m->ladder.next, 2) << m->ladder.why_next;
  EXPECT_NE(m->ladder.why_next.find("gradient checkpointing is off"), std::string::npos) << m->ladder.why_next;
  EXPECT_NE(m->ladder.steps[0].detail.find("0.4 GiB of page cache was reclaimable at the run's start"),
            std::string::npos)
      << m->ladder.steps[0].detail;
  EXPECT_NE(m->ladder.steps[1].detail.find("saves "), std::string::npos);
  // with checkpointing already on, step 2 says nothing of it
  auto on = DescribeRunMemory(r, TorchOom(), FullFineTune8B(true, 80));
  ASSERT_TRUE(on);
  EXPECT_EQ(on->ladder.steps[1].detail.find("gradient checkpointing"), std::string::npos);
  const std::string text = RunMemoryText(*m);
  EXPECT_EQ(text.rfind("memory   the job ran out of memory (torch_cuda_oom during step)", 0), 0u) << text;
  EXPECT_NE(text.find("next: OOM ladder step 2."), std::string::npos) << text;
  auto j = RunMemoryJson(*m);
  EXPECT_EQ(j["next_step"], 2);
  EXPECT_EQ(j["steps"].size(), 4u);
  EXPECT_EQ(j["pool_peak_gib"], 81.5);
  EXPECT_TRUE(j["guard_floor_gib"].is_null());
}

TEST(RunMemory, GuardStopWithoutSamplesOrPlanSaysWhatIsMissing) {
  AnalysisResult r;
  r.in.dir = "/runs/r2";
  r.events.push_back({100, "memory_guard", {{"action", "terminate"}, {"min_available_bytes", 8 * kGiB}}});
  auto m = DescribeRunMemory(r, OomSignature{}, std::nullopt);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->trigger, "memory_guard");
  EXPECT_FALSE(m->pool_peak_gib);
  EXPECT_FALSE(m->budget_gib);
  EXPECT_DOUBLE_EQ(*m->guard_floor_gib, 8.0);
  EXPECT_NE(m->headline.find("its peak is not known"), std::string::npos) << m->headline;
  EXPECT_NE(m->headline.find("the guard's floor was 8.0 GiB"), std::string::npos) << m->headline;
  EXPECT_EQ(m->ladder.next, 1);  // no plan: the ladder starts with the flush
  EXPECT_TRUE(RunMemoryJson(*m)["oom"].is_null());
}

// issue 33: after the guard stopped the job on a driver-side sign, the advice is not the OOM ladder's flush.
TEST(RunMemory, DriverSideStopsGiveTheSaveAndStopAdvice) {
  struct Case {
    const char* reason;       ///< the guard stop's reason ("" for none)
    const char* end_cause;    ///< AnalysisResult::end.cause
    const char* advice;       ///< RunMemoryJson's "advice"
    const char* first_title;  ///< step 1
    const char* headline_has;
  };
  const Case cases[] = {
      {"min_available", "", "oom", "flush the page cache", "the memory guard stopped the job;"},
      {"kernel_nvrm_no_memory", "driver_memory_error", "driver_error", "save and stop: the host may wedge",
       "on the driver's NVRM NV_ERR_NO_MEMORY record"},
      {"fragmentation", "", "fragmentation", "save and stop: the host may wedge", "no free 2 MiB blocks"},
      {"min_available", "driver_memory_error", "driver_error", "save and stop: the host may wedge",
       "the memory guard stopped the job;"},  // records near the end, the floor acted first
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason + std::string("/") + c.end_cause);
    AnalysisResult r = RunWithPool({100.0, 40.0, 7.0});  // 9 GiB of page cache after the first sample
    r.end.cause = c.end_cause;
    r.events.push_back(
        {1500, "memory_guard", {{"action", "terminate"}, {"reason", c.reason}, {"min_available_bytes", 8 * kGiB}}});
    auto m = DescribeRunMemory(r, OomSignature{}, std::nullopt);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->ladder.steps.at(0).title, c.first_title);
    EXPECT_EQ(m->ladder.next, 1);
    EXPECT_NE(m->headline.find(c.headline_has), std::string::npos) << m->headline;
    auto j = RunMemoryJson(*m);
    EXPECT_EQ(j["advice"], c.advice);
    EXPECT_EQ(j["stop_reason"], c.reason);
    const std::string text = RunMemoryText(*m);
    if (std::string(c.advice) == "oom") continue;
    // every step in the text, in order: save/stop, reboot if it repeats, reduce, flush only if it lifts
    size_t a = text.find("next: 1. save and stop"), b = text.find("2. reboot before the next run"),
           d = text.find("3. reduce the job's memory"), e = text.find("4. flush the page cache only if");
    ASSERT_NE(a, std::string::npos) << text;
    EXPECT_TRUE(a < b && b < d && d < e && e != std::string::npos) << text;
    EXPECT_EQ(text.find("OOM ladder step 1"), std::string::npos) << text;
    EXPECT_NE(RenderHtmlReport(r, &*m).find("<li class=\"next\"><b>save and stop: the host may wedge</b>"),
              std::string::npos);
  }
}

TEST(RunMemory, TheOomEventRunRecordedStandsInForLogText) {
  AnalysisResult r = RunWithPool({50, 0.5});
  r.events.push_back(
      {900,
       "oom",
       {{"signature", "killed_sigkill"}, {"phase", "unknown"}, {"detail", "SIGKILL with MemAvailable 0.5 GiB"}}});
  auto m = DescribeRunMemory(r, OomSignature{}, std::nullopt);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->trigger, "oom");
  EXPECT_EQ(m->oom.kind, OomKind::kKilled);
  EXPECT_NE(m->headline.find("of the 50.0 GiB available when it started"), std::string::npos) << m->headline;
}

TEST(RunMemory, HtmlReportShowsTheLadderCardAndTheGuardOnTheMemoryPlot) {
  AnalysisResult r = RunWithPool({100.0, 40.0, 7.0});
  RunEvent stop{1500,
                "memory_guard",
                {{"action", "terminate"}, {"mem_available_bytes", 7 * kGiB}, {"min_available_bytes", 8 * kGiB}}};
  r.events.push_back(stop);
  auto m = DescribeRunMemory(r, OomSignature{}, std::nullopt);
  ASSERT_TRUE(m);
  const std::string html = RenderHtmlReport(r, &*m);
  EXPECT_NE(html.find("<b>Memory.</b> the memory guard stopped the job; it took 93.0 GiB"), std::string::npos);
  EXPECT_NE(html.find("<li class=\"next\"><b>flush the page cache</b> (next)"), std::string::npos);
  EXPECT_NE(html.find("MemAvailable"), std::string::npos);         // the memory panel
  EXPECT_NE(html.find("guard: SIGTERM at 7.0 GiB free"), std::string::npos);  // its marker across the panels
  EXPECT_EQ(RenderHtmlReport(r).find("<b>Memory.</b>"), std::string::npos);
}

TEST(RunMemory, AnalyzeOfTheOomFixtureRebuildsThePlanAtTheRecordedBudget) {
  auto r = RunInProcess({"--root", Fixture("runs/root"), "--json", "analyze", Fixture("runs/oom")});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto m = nlohmann::json::parse(r.out)["memory"];
  EXPECT_EQ(m["pool_peak_gib"], 81.5);
  EXPECT_EQ(m["budget_gib"], 80.0);  // plan.json's, not this machine's MemAvailable
  EXPECT_GT(m["planned_peak_gib"].get<double>(), 80.0);
  EXPECT_EQ(m["next_step"], 2);
  EXPECT_NE(m["why"].get<std::string>().find("turning it on fits"), std::string::npos) << m["why"];
  // step 1 counts the page_cache_gib column of the first sample
  EXPECT_NE(m["steps"][0]["detail"].get<std::string>().find("0.4 GiB of page cache was reclaimable at the run's start"),
            std::string::npos)
      << m["steps"][0]["detail"];
}

// plan.json and meta.json come from a run directory anyone can edit: a budget that is not a positive
// number, past --budget-gib's range, or a plan.json that is a FIFO gives a plan_note, never a hang,
// a crash or a plan at a made-up budget.
TEST(RunMemory, HostilePlanFilesAreNotedNotTrusted) {
  TempDir d;
  std::filesystem::copy(Fixture("runs/oom"), d.path() + "/r", std::filesystem::copy_options::recursive);
  const std::string dir = d.path() + "/r";
  for (const char* budget : {"-5", "0", "1e300", "\"80\"", "null", "[80]"}) {
    d.Write("r/plan.json", std::string("{\"budget_gib\": ") + budget + "}\n");
    auto r = RunInProcess({"--root", Fixture("runs/root"), "--json", "analyze", dir});
    ASSERT_EQ(r.rc, 0) << budget << ": " << r.err;
    auto m = nlohmann::json::parse(r.out)["memory"];
    EXPECT_TRUE(m["budget_gib"].is_null()) << budget;
    EXPECT_NE(m["plan_note"].get<std::string>().find("could not be rebuilt"), std::string::npos) << budget;
  }
  std::filesystem::remove(dir + "/plan.json");
  ASSERT_EQ(::mkfifo((dir + "/plan.json").c_str(), 0600), 0);
  auto fifo = RunInProcess({"--root", Fixture("runs/root"), "--json", "analyze", dir});
  ASSERT_EQ(fifo.rc, 0) << fifo.err;
  EXPECT_NE(nlohmann::json::parse(fifo.out)["memory"]["plan_note"].get<std::string>().find("plan.json"),
            std::string::npos);
}

// run --plan-args records the plan at the start (the pool before the job), the job prints an OOM;
// run's end lines, summary.json, analyze --json and the report all give the same ladder.
TEST(RunMemory, RunAndAnalyzeTellTheOomWithThePlansNumbers) {
  TempDir d;
  const std::string dir = d.path() + "/r";
  auto r = RunBinary({"--root", Fixture("gb10"), "run", "--out", dir, "--interval", "0.05", "--no-guard", "--plan-args",
                      "llama-3.1-8b --method full --grad-ckpt off --seq 4096 --budget-gib 80", "--", "bash", "-c",
                      "sleep 0.3; echo 'step 3 loss 2.1'; echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to "
                      "allocate 2.00 GiB.' >&2; exit 1"});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("sparkops run: the job ran out of memory (torch_cuda_oom during step)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("against a budget of 80.0 GiB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("next step of the OOM ladder"), std::string::npos) << r.err;
  auto meta = nlohmann::json::parse(ReadFileOrDie(dir + "/meta.json"));
  EXPECT_EQ(meta["plan_args"], "llama-3.1-8b --method full --grad-ckpt off --seq 4096 --budget-gib 80");
  EXPECT_EQ(nlohmann::json::parse(ReadFileOrDie(dir + "/plan.json"))["budget_gib"], 80.0);
  auto summary = nlohmann::json::parse(ReadFileOrDie(dir + "/summary.json"));
  EXPECT_EQ(summary["memory"]["budget_gib"], 80.0);
  auto a = RunInProcess({"--root", Fixture("gb10"), "--json", "analyze", dir});
  ASSERT_EQ(a.rc, 0) << a.err;
  auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j["memory"]["trigger"], "oom");
  EXPECT_EQ(j["memory"]["oom"]["phase"], "step");
  EXPECT_EQ(j["memory"]["budget_gib"], 80.0);
  EXPECT_EQ(j["memory"]["steps"].size(), 4u);
  EXPECT_NE(j["memory"]["steps"][1]["detail"].get<std::string>().find("gradient checkpointing on"), std::string::npos);
  EXPECT_TRUE(j["memory"]["plan_note"].is_null());
  auto text = RunInProcess({"--root", Fixture("gb10"), "analyze", dir});
  EXPECT_NE(text.out.find("\nmemory   the job ran out of memory"), std::string::npos) << text.out;
  EXPECT_NE(ReadFileOrDie(dir + "/report.html").find("<b>Memory.</b>"), std::string::npos);
  // a plan that cannot be rebuilt (the model directory moved) is said, not dropped silently
  auto m = meta;
  m["plan_args"] = d.path() + "/gone-model --method full";
  d.Write("r/meta.json", m.dump());
  auto moved = nlohmann::json::parse(RunInProcess({"--root", Fixture("gb10"), "--json", "analyze", dir}).out);
  EXPECT_NE(moved["memory"]["plan_note"].get<std::string>().find("could not be rebuilt"), std::string::npos);
  // a run that ended well has no memory section
  auto ok = RunBinary({"--root", Fixture("gb10"), "run", "--out", d.path() + "/ok", "--no-guard", "--", "true"});
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_TRUE(nlohmann::json::parse(
                  RunInProcess({"--root", Fixture("gb10"), "--json", "analyze", d.path() + "/ok"}).out)["memory"]
                  .is_null());
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

// Issue 30, item 7: on a shared host the pool's fall is not the job's; a flush of cache that
// MemAvailable already counts does not lift the guard's floor.
TEST(RunMemoryShared, TheJobsOwnMemoryAndAFlushOnlyWhenItLiftsMemAvailable) {
  struct Case {
    double free_gib, cache_gib, available_gib;  // the first sample
    int next;                                    // the step to take
    const char* detail_has;
  } cases[] = {
      {2.0, 15.0, 16.8, 2, "already counts all but 0.2 GiB of it, so a flush would not lift it"},
      {2.0, 15.0, 5.0, 1, "a flush would lift MemAvailable by about 12.0 GiB"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.detail_has);
    AnalysisResult r;
    r.in.dir = "/runs/shared";
    ThermalSeries s;
    for (int i = 0; i < 3; ++i) {
      ThermalRow row;
      row.t_ms = 1000 * i;
      row.mem_available_gib = c.available_gib - 0.9 * i;  // the pool falls 1.8 GiB
      row.page_cache_gib = c.cache_gib;
      row.mem_free_gib = c.free_gib;
      s.rows.push_back(row);
    }
    r.thermal = s;
    r.events.push_back({1500,
                        "memory_guard",
                        {{"action", "terminate"}, {"reason", "min_available"}, {"min_available_bytes", 1 * kGiB}}});
    r.events.push_back(
        {1600,
         "exit",
         {{"code", 143}, {"cgroup_memory_peak_bytes", 1.47 * kGiB}, {"cgroup_memory_peak_source", "memory.peak"}}});
    auto m = DescribeRunMemory(r, OomSignature{}, std::nullopt);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->ladder.next, c.next);
    EXPECT_NE(m->ladder.steps.at(0).detail.find(c.detail_has), std::string::npos) << m->ladder.steps.at(0).detail;
    EXPECT_NE(m->headline.find("the pool fell by 1.8 GiB at its lowest"), std::string::npos) << m->headline;
    EXPECT_NE(m->headline.find("the job's own processes held 1.5 GiB (its cgroup's memory.peak)"), std::string::npos)
        << m->headline;
    EXPECT_NE(m->headline.find("0.3 GiB of the fall was other processes"), std::string::npos) << m->headline;
    EXPECT_NEAR(RunMemoryJson(*m)["job_own_gib"].get<double>(), 1.47, 1e-9);
    // the same numbers after a CUDA allocation failed: what CUDA reports free leaves the cache out
    auto cuda = DescribeRunMemory(r, TorchOom(), std::nullopt);
    ASSERT_TRUE(cuda);
    EXPECT_EQ(cuda->ladder.next, 1);
    EXPECT_NE(cuda->ladder.steps.at(0).detail.find("what CUDA reports free on GB10 leaves the cache out"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace sparkops
