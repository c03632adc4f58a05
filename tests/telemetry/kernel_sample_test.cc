// issue 33: the sampler follows the kernel log from its start (records already there are not
// events), turns new records into events (CSV column, events.jsonl) and fills the fragmentation and
// pinned-memory columns; the exporter renders the counters since boot.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/strings.h"
#include "cli/context.h"
#include "report/kernel_metrics.h"
#include "report/prometheus.h"
#include "run/run_recorder.h"
#include "telemetry/csv.h"
#include "telemetry/events.h"
#include "telemetry/sampler.h"
#include "test_util.h"

namespace sparkops {
namespace {

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(KernelSample, RecordsAppendedWhileSamplingBecomeEvents) {
  testing::TempDir root;
  for (const char* f : {"proc/meminfo", "proc/buddyinfo", "proc/mounts", "dev/kmsg"})
    root.Write(f, testing::ReadFileOrDie(testing::Fixture("wedge") + "/" + f));
  std::ostringstream out, err;
  Context ctx{{"/", "none", "none", false}, HostFs(root.path()), {}, out, err};
  Sampler sampler(ctx);
  EXPECT_EQ(sampler.kernel_log_note(), "");
  EventDetector det;
  Sample first = sampler.Take();
  EXPECT_TRUE(first.kernel.empty());  // the records of the fixture were there before the sampler started
  {
    std::ofstream k(root.path() + "/dev/kmsg", std::ios::app);
    k << "4,1600,2000000000,-;NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] "
         "(0x00000051) returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359\n"
      << "3,1601,2000000100,-;NVRM: Xid (PCI:000f:01:00): 31, pid=4821, name=python3, Ch 00000002\n"
      << "3,1602,2000000200,-;Out of memory: Killed process 4821 (python3) total-vm:1kB\n";
  }
  Sample s = sampler.Take();
  ASSERT_EQ(s.kernel.size(), 3u);
  s.events = det.Update(s);
  EXPECT_EQ(Join(s.events, ";"), "kernel_nvrm_no_memory;kernel_xid:31;kernel_oom_kill:4821");
  auto recs = SampleEventRecords(s);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[1]["type"], "kernel_xid");
  EXPECT_EQ(recs[1]["code"], 31);
  EXPECT_EQ(recs[2]["type"], "kernel_oom_kill");
  EXPECT_EQ(recs[2]["pid"], 4821);
  EXPECT_EQ(recs[2]["name"], "python3");
  EXPECT_TRUE(Has(recs[0]["line"].get<std::string>(), "NV_ERR_NO_MEMORY"));
  // The fragmentation and pinned-memory columns, at the end of the row.
  std::string row = CsvRow(s);
  EXPECT_TRUE(EndsWith(row, ",0,0,61.500,61.500,64.000,64.000,,,,\n")) << row;
  EXPECT_EQ(Split(row, ',').size(), CsvColumns().size());
  EXPECT_EQ(CsvColumns().back(), "cpu_steal_pct");
  Sample quiet = sampler.Take();
  EXPECT_TRUE(quiet.kernel.empty());  // each record once
}

TEST(KernelSample, UnreadableLogIsANoteAndEmptyCells) {
  testing::TempDir root;
  root.Write("proc/meminfo", "MemTotal: 1024 kB\n");
  root.Write("dev/kmsg/x", "");  // a directory where the log should be: not readable
  std::ostringstream out, err;
  Context ctx{{"/", "none", "none", false}, HostFs(root.path()), {}, out, err};
  Sampler sampler(ctx);
  EXPECT_TRUE(Has(sampler.kernel_log_note(), "kernel log not followed")) << sampler.kernel_log_note();
  Sample s = sampler.Take();
  EXPECT_TRUE(s.kernel.empty());
  std::string row = CsvRow(s);
  EXPECT_TRUE(EndsWith(row, ",,,,,,\n")) << row;  // not read: empty cells, never 0
}

TEST(KernelMetrics, CountersSinceBootAndGauges) {
  KernelSignals k;
  for (const char* t :
       {"NVRM: Out of memory [NV_ERR_NO_MEMORY]", "NVRM: Xid (PCI:0): 79, pid=1, name=x, off the bus"}) {
    KmsgRecord r;
    r.text = t;
    k.Add(r);
  }
  UmaPressure u;
  u.free_2m = 0;
  u.mlocked = 1024;
  ExporterInputs in;
  in.sample = Sample{};
  in.sample->uma = u;
  in.kernel = k;
  std::string body = RenderMetrics(in);
  for (const char* line :
       {"sparkops_kernel_log_readable 1", "sparkops_kernel_events_total{kind=\"nvrm_no_memory\"} 1",
        "sparkops_kernel_events_total{kind=\"xid\"} 1", "sparkops_kernel_events_total{kind=\"oom_kill\"} 0",
        "sparkops_memory_free_blocks{size=\"2MiB\"} 0", "sparkops_memory_mlocked_bytes 1024"})
    EXPECT_TRUE(Has(body, std::string(line) + "\n")) << line << "\n" << body;
  EXPECT_FALSE(Has(body, "sparkops_memory_free_blocks{size=\"4MiB\"}"));  // not read: no series
  in.kernel.reset();
  body = RenderMetrics(in);
  EXPECT_TRUE(Has(body, "sparkops_kernel_log_readable 0\n"));
  EXPECT_FALSE(Has(body, "sparkops_kernel_events_total{"));
}

}  // namespace
}  // namespace sparkops
