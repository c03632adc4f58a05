// Running as root (docs/reliability.md, "Running as root"): links and directories another user
// planted never redirect what root writes. The hostile user is uid 65534 (nobody), switched to with
// setpriv; each test drives the built binary (or Run() in-process where the old temporary's name
// held this process's pid) as root. Skipped, saying why, where the tests do not run as root or
// setpriv is missing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "test_util.h"

namespace sparkops {
namespace {

namespace fs = std::filesystem;
using testing::Fixture;
using testing::ReadFileOrDie;
using testing::RunBinary;
using testing::RunInProcess;
using testing::RunOutput;
using testing::TempDir;

constexpr const char* kSetpriv = "/usr/bin/setpriv";

/// Runs `script` with /bin/sh as uid/gid 65534 (no groups): true when it exited 0.
bool AsNobody(const std::string& script) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(kSetpriv, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", script.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// Why these tests cannot run here ("" when they can).
std::string WhyNot() {
  if (::geteuid() != 0) return "needs root (CI runs the tests as root)";
  if (::access(kSetpriv, X_OK) != 0) return "needs setpriv (util-linux) to act as another uid";
  if (!AsNobody("true")) return "setpriv cannot switch to uid 65534 here";
  return "";
}

/// A root-owned 0755 test root holding `shared` (root, 1777: like /tmp) where nobody plants
/// things, and `secret` (root, 0700) with `passwd`, the file nobody wants root to overwrite.
struct Ground {
  TempDir t;
  std::string shared = t.path() + "/shared", secret = t.path() + "/secret", passwd = secret + "/passwd";
  Ground() {
    ::chmod(t.path().c_str(), 0755);
    fs::create_directory(shared);
    ::chmod(shared.c_str(), 01777);
    fs::create_directory(secret);
    ::chmod(secret.c_str(), 0700);
    t.Write("secret/passwd", "root:x:0:0:root:/root:/bin/bash\n");
  }
  bool PasswdIntact() const { return ReadFileOrDie(passwd) == "root:x:0:0:root:/root:/bin/bash\n"; }
};

#define SKIP_UNLESS_ROOT_AND_SETPRIV() \
  if (std::string why = WhyNot(); !why.empty()) GTEST_SKIP() << why

bool Mentions(const RunOutput& r, const std::string& s) { return r.err.find(s) != std::string::npos; }

TEST(RunningAsRoot, RunRefusesARunDirectoryAnotherUserOwnsAndWritesNothingThroughItsLinks) {
  SKIP_UNLESS_ROOT_AND_SETPRIV();
  Ground g;
  // nobody's run directory: train.log a dangling link into root's 0700 directory.
  ASSERT_TRUE(AsNobody("mkdir " + g.shared + "/run && ln -s " + g.secret + "/new_file " + g.shared +
                       "/run/train.log && ln -s " + g.passwd + " " + g.shared + "/run/meta.json.tmp.1"));
  RunOutput r =
      RunBinary({"--root", Fixture("gb10"), "run", "--no-guard", "--out", g.shared + "/run", "--", "echo", "hi"});
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_TRUE(Mentions(r, g.shared + "/run is owned by") && Mentions(r, "uid 65534")) << r.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(g.secret + "/new_file"))) << "root created a file through nobody's link";
  EXPECT_TRUE(g.PasswdIntact());
}

TEST(RunningAsRoot, RunInAStickyDirectoryNeverFollowsALinkNamedLikeARunFile) {
  SKIP_UNLESS_ROOT_AND_SETPRIV();
  Ground g;
  // The run directory is the sticky, world-writable `shared` itself (allowed, like /tmp): nobody
  // planted a dangling train.log there. O_EXCL|O_NOFOLLOW creation must refuse it.
  ASSERT_TRUE(AsNobody("ln -s " + g.secret + "/new_file " + g.shared + "/train.log"));
  RunOutput r = RunBinary({"--root", Fixture("gb10"), "run", "--no-guard", "--out", g.shared, "--", "echo", "hi"});
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_TRUE(Mentions(r, "already holds a run (train.log)")) << r.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(g.secret + "/new_file")));
  // A fresh run directory root creates in the sticky directory works as before.
  RunOutput ok =
      RunBinary({"--root", Fixture("gb10"), "run", "--no-guard", "--out", g.shared + "/mine", "--", "echo", "hi"});
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ReadFileOrDie(g.shared + "/mine/train.log").find("\to\thi\n"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::lstat((g.shared + "/mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
}

TEST(RunningAsRoot, RunRefusesAGroupWritableDirectoryAndALinkAnotherUserOwnsOnThePath) {
  SKIP_UNLESS_ROOT_AND_SETPRIV();
  Ground g;
  fs::create_directory(g.t.path() + "/team");
  ::chmod((g.t.path() + "/team").c_str(), 0775);
  RunOutput r =
      RunBinary({"--root", Fixture("gb10"), "run", "--no-guard", "--out", g.t.path() + "/team/run", "--", "true"});
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_TRUE(Mentions(r, "writable by group or others without the sticky bit (mode 0775)")) << r.err;
  EXPECT_FALSE(fs::exists(g.t.path() + "/team/run"));
  // A link nobody made, pointing at a directory root owns: never followed.
  ASSERT_TRUE(AsNobody("ln -s " + g.secret + " " + g.shared + "/to_secret"));
  RunOutput l =
      RunBinary({"--root", Fixture("gb10"), "run", "--no-guard", "--out", g.shared + "/to_secret/run", "--", "true"});
  EXPECT_EQ(l.rc, 2) << l.err;
  EXPECT_TRUE(Mentions(l, "is a link owned by") && Mentions(l, "uid 65534")) << l.err;
  EXPECT_FALSE(fs::exists(g.secret + "/run"));
}

TEST(RunningAsRoot, AnalyzeHtmlNeverReplacesAFileThroughAPlantedTemporaryOrIntoAnotherUsersDirectory) {
  SKIP_UNLESS_ROOT_AND_SETPRIV();
  Ground g;
  // In-process, so the old temporary name `report.html.tmp.<pid>` is this test's pid: nobody
  // plants it as a link to root's file (before: opened O_CREAT|O_TRUNC through it, then renamed).
  const std::string html = g.shared + "/report.html";
  ASSERT_TRUE(AsNobody("ln -s " + g.passwd + " " + html + ".tmp." + std::to_string(::getpid())));
  RunOutput r = RunInProcess({"analyze", Fixture("runs/thermal"), "--html", html});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(g.PasswdIntact()) << "root wrote the report through nobody's link";
  struct stat st {};
  ASSERT_EQ(::lstat(html.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_NE(ReadFileOrDie(html).find("<html"), std::string::npos);
  // An output directory nobody owns: refused before any work, naming the owner; nothing written.
  ASSERT_TRUE(AsNobody("mkdir " + g.shared + "/nb"));
  RunOutput n = RunBinary({"analyze", Fixture("runs/thermal"), "--html", g.shared + "/nb/report.html"});
  EXPECT_EQ(n.rc, 2) << n.err;
  EXPECT_TRUE(Mentions(n, g.shared + "/nb is owned by") && Mentions(n, "uid 65534")) << n.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(g.shared + "/nb/report.html")));
}

TEST(RunningAsRoot, SampleOutNeverAppendsThroughALinkNorToAnotherUsersFile) {
  SKIP_UNLESS_ROOT_AND_SETPRIV();
  Ground g;
  // Root's CSV holds sparkops's header: before, root followed nobody's link and appended to it.
  RunOutput first = RunBinary(
      {"--root", Fixture("gb10"), "sample", "--count", "1", "--interval", "0.001", "--out", g.secret + "/thermal.csv"});
  ASSERT_EQ(first.rc, 0) << first.err;
  const std::string before = ReadFileOrDie(g.secret + "/thermal.csv");
  ASSERT_TRUE(AsNobody("ln -s " + g.secret + "/thermal.csv " + g.shared + "/s.csv && touch " + g.shared + "/own.csv"));
  RunOutput r = RunBinary(
      {"--root", Fixture("gb10"), "sample", "--count", "1", "--interval", "0.001", "--out", g.shared + "/s.csv"});
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_TRUE(Mentions(r, "is a link")) << r.err;
  EXPECT_EQ(ReadFileOrDie(g.secret + "/thermal.csv"), before);
  RunOutput o = RunBinary(
      {"--root", Fixture("gb10"), "sample", "--count", "1", "--interval", "0.001", "--out", g.shared + "/own.csv"});
  EXPECT_EQ(o.rc, 2) << o.err;
  EXPECT_TRUE(Mentions(o, "owned by") && Mentions(o, "uid 65534")) << o.err;
  EXPECT_EQ(ReadFileOrDie(g.shared + "/own.csv"), "");
}

TEST(RunningAsRoot, AUserRunningAsThemselvesKeepsTodaysBehaviour) {
  SKIP_UNLESS_ROOT_AND_SETPRIV();
  Ground g;
  // nobody writes in its own directory (and follows its own link to it), as any user does.
  ASSERT_TRUE(AsNobody("mkdir " + g.shared + "/home && ln -s home " + g.shared + "/home_link"));
  const std::string bin = testing::TargetShell({testing::SparkopsBin()});
  if (!AsNobody(bin + " --version >/dev/null 2>&1 && test -r " + Fixture("gb10") + "/proc/meminfo"))
    GTEST_SKIP() << "uid 65534 cannot run the built binary or read the fixtures from this checkout";
  ASSERT_TRUE(AsNobody(bin + " --root " + Fixture("gb10") + " sample --count 1 --interval 0.001 --out " + g.shared +
                       "/home_link/s.csv >/dev/null 2>&1"));
  EXPECT_EQ(ReadFileOrDie(g.shared + "/home/s.csv").rfind("timestamp", 0), 0u);
}

}  // namespace
}  // namespace sparkops
