// The notify config file (notify/notify_config.h): its lines, where it is looked for, and the rules
// a file must meet before its commands may run as the reader.
#include "notify/notify_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "test_util.h"

namespace sparkops {
namespace {

TEST(NotifyConfig, ParsesTargetsCommentsAndBlankLines) {
  auto t = ParseNotifyConfig(
      "# my webhooks\n\nnotify = http://127.0.0.1:9000/hook\n  notify-cmd =  notify-send sparkops \"$(jq -r .text)\"  "
      "\n"
      "notify=http://10.0.0.2/x\n",
      "notify.conf");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->urls, (std::vector<std::string>{"http://127.0.0.1:9000/hook", "http://10.0.0.2/x"}));
  EXPECT_EQ(t->cmds, (std::vector<std::string>{"notify-send sparkops \"$(jq -r .text)\""}));
  auto empty = ParseNotifyConfig("", "e");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->urls.empty() && empty->cmds.empty());
}

TEST(NotifyConfig, BadLinesNameTheFileAndLine) {
  struct Case {
    std::string text, want;
  };
  std::string many;
  for (size_t i = 0; i <= kNotifyConfigMaxTargets; ++i) many += "notify-cmd = true\n";
  for (const Case& c : std::vector<Case>{
           {"notify http://x\n", "f.conf: line 1: expected `notify = URL`"},
           {"# ok\nurl = http://x\n", "f.conf: line 2: unknown key `url`"},
           {"notify =   \n", "f.conf: line 1: `notify` has no value"},
           {std::string("notify-cmd = a\0b\n", 17), "f.conf: line 1: a NUL byte"},
           {many, "more than 32 targets"},
       }) {
    auto t = ParseNotifyConfig(c.text, "f.conf");
    ASSERT_FALSE(t) << c.text;
    EXPECT_NE(t.error().message.find(c.want), std::string::npos) << t.error().message;
  }
}

TEST(NotifyConfig, PathsFollowTheFlagThenXdgThenHomeThenEtc) {
  using Env = std::map<std::string, std::string>;
  EXPECT_EQ(NotifyConfigPaths("/x/n.conf", Env{{"HOME", "/home/a"}}), (std::vector<std::string>{"/x/n.conf"}));
  EXPECT_TRUE(NotifyConfigPaths("none", Env{{"HOME", "/home/a"}}).empty());
  EXPECT_EQ(NotifyConfigPaths("", Env{{"HOME", "/home/a"}, {"XDG_CONFIG_HOME", "/cfg"}}),
            (std::vector<std::string>{"/cfg/sparkops/notify.conf", "/etc/sparkops/notify.conf"}));
  EXPECT_EQ(NotifyConfigPaths("", Env{{"HOME", "/home/a"}}),
            (std::vector<std::string>{"/home/a/.config/sparkops/notify.conf", "/etc/sparkops/notify.conf"}));
  // Relative values are ignored (XDG base directory rules), so is an unset HOME.
  EXPECT_EQ(NotifyConfigPaths("", Env{{"HOME", "rel"}, {"XDG_CONFIG_HOME", "cfg"}}),
            (std::vector<std::string>{"/etc/sparkops/notify.conf"}));
}

TEST(NotifyConfig, ReadsOnlyAPrivateRegularFileOfItsOwn) {
  testing::TempDir d;
  const std::string ok = d.path() + "/ok.conf";
  d.Write("ok.conf", "notify-cmd = true\n");
  ::chmod(ok.c_str(), 0600);
  auto r = ReadNotifyConfigFile(ok, true);
  ASSERT_TRUE(r && *r) << (r ? "" : r.error().message);
  EXPECT_EQ(**r, "notify-cmd = true\n");

  auto missing = ReadNotifyConfigFile(d.path() + "/none.conf", false);
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
  auto not_dir = ReadNotifyConfigFile(ok + "/sparkops/notify.conf", false);  // HOME is a file
  ASSERT_TRUE(not_dir);
  EXPECT_FALSE(*not_dir);
  auto named = ReadNotifyConfigFile(d.path() + "/none.conf", true);  // --notify-config names it
  ASSERT_FALSE(named);
  EXPECT_NE(named.error().message.find("No such file"), std::string::npos) << named.error().message;

  auto refused = [](const std::string& path, const std::string& want) {
    auto x = ReadNotifyConfigFile(path, false);
    ASSERT_FALSE(x) << path;
    EXPECT_NE(x.error().message.find(want), std::string::npos) << x.error().message;
    EXPECT_NE(x.error().message.find(path), std::string::npos) << x.error().message;
  };
  ASSERT_EQ(::symlink(ok.c_str(), (d.path() + "/link.conf").c_str()), 0);
  refused(d.path() + "/link.conf", "symbolic link");
  ASSERT_EQ(::mkfifo((d.path() + "/fifo.conf").c_str(), 0600), 0);
  refused(d.path() + "/fifo.conf", "not a regular file");  // refused at once: never blocks on the FIFO
  refused(d.path(), "not a regular file");
  d.Write("shared.conf", "notify-cmd = true\n");
  ::chmod((d.path() + "/shared.conf").c_str(), 0620);
  refused(d.path() + "/shared.conf", "writable by group or others");
  d.Write("big.conf", std::string(kNotifyConfigMaxBytes + 1, '#'));
  refused(d.path() + "/big.conf", "bytes, more than");
  if (::geteuid() == 0) {  // another user's file: its commands would run as root
    d.Write("theirs.conf", "notify-cmd = true\n");
    ASSERT_EQ(::chown((d.path() + "/theirs.conf").c_str(), 65534, 65534), 0);
    refused(d.path() + "/theirs.conf", "owned by uid 65534");
  }
}

}  // namespace
}  // namespace sparkops
