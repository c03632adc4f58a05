// The host seam (host/host_view.h): what lower layers read of the machine, readable under --root.
#include "host/host_view.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "test_util.h"

namespace sparkops {
namespace {

TEST(HostView, HostnameFromTheRoot) {
  testing::TempDir root;
  root.Write("proc/sys/kernel/hostname", "spark-07\n");
  HostView host{HostOptions{root.path(), "none", "none"}, HostFs(root.path()), {}};
  EXPECT_EQ(ReadHostname(host), "spark-07");
}

TEST(HostView, HostnameMissingUnderARootIsEmpty) {
  testing::TempDir root;
  HostView host{HostOptions{root.path(), "none", "none"}, HostFs(root.path()), {}};
  EXPECT_EQ(ReadHostname(host), "");
}

TEST(HostView, HostnameOnTheRealRootIsTheKernels) {
  char name[256] = "";
  ASSERT_EQ(::gethostname(name, sizeof name - 1), 0);
  HostView host{HostOptions{}, HostFs("/"), {}};
  EXPECT_EQ(ReadHostname(host), name);
}

TEST(HostView, EnvAndSwitches) {
  HostView host{HostOptions{"/", "none", ""}, HostFs("/"), {{"TZ", "UTC"}}};
  EXPECT_EQ(host.Getenv("TZ"), "UTC");
  EXPECT_EQ(host.Getenv("PATH"), "");
  EXPECT_FALSE(host.nvml_enabled());
  EXPECT_FALSE(host.nvidia_smi_enabled());
  EXPECT_TRUE((HostView{HostOptions{}, HostFs("/"), {}}.nvml_enabled()));
}

}  // namespace
}  // namespace sparkops
