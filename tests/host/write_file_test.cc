// OutDir (src/host/write_file.h): the one way output files are created. Links are never followed,
// existing names never truncated, temporaries unguessable; as root, the sshd rule on directories.
#include "host/write_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "test_util.h"

namespace sparkops {
namespace {

namespace fs = std::filesystem;
using testing::ReadFileOrDie;
using testing::TempDir;

TEST(OutDir, NewFilesAreNeverCreatedThroughALinkNorOverAnExistingName) {
  TempDir t;
  fs::create_symlink(t.path() + "/elsewhere", t.path() + "/dangling");
  t.Write("old", "keep");
  auto d = OutDir::Open("--out", t.path(), false);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_TRUE(d->Has("dangling")) << "a dangling link is present, never followed";
  EXPECT_FALSE(d->Has("absent"));
  auto l = d->CreateNew("dangling");
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().kind, Error::Kind::kInput);
  EXPECT_FALSE(fs::exists(t.path() + "/elsewhere"));
  ASSERT_FALSE(d->CreateNew("old"));
  EXPECT_EQ(ReadFileOrDie(t.path() + "/old"), "keep");
  auto a = d->OpenForAppend("dangling");
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("is a link"), std::string::npos) << a.error().message;
  EXPECT_FALSE(fs::exists(t.path() + "/elsewhere"));
  auto n = d->CreateNew("fresh");
  ASSERT_TRUE(n) << n.error().message;
  ::close(*n);
}

TEST(OutDir, AtomicWritesReplaceALinkNotItsTargetAndLeaveNoTemporary) {
  TempDir t;
  t.Write("target", "precious");
  fs::create_symlink(t.path() + "/target", t.path() + "/report.html");
  // The old temporary name: a link planted there must not be written through.
  fs::create_symlink(t.path() + "/target", t.path() + "/report.html.tmp." + std::to_string(::getpid()));
  ASSERT_TRUE(WriteFileAtomically(t.path() + "/report.html", "<html>"));
  EXPECT_EQ(ReadFileOrDie(t.path() + "/target"), "precious");
  EXPECT_FALSE(fs::is_symlink(t.path() + "/report.html"));
  EXPECT_EQ(ReadFileOrDie(t.path() + "/report.html"), "<html>");
  ASSERT_TRUE(WriteFileAtomically(t.path() + "/report.html", "<html>2"));
  int entries = 0;
  for (const auto& e : fs::directory_iterator(t.path())) {
    ++entries;
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  }
  EXPECT_EQ(entries, 3);  // target, report.html, the planted link
}

TEST(OutDir, AsRootEveryDirectoryOnThePathMustBeRootsAndNotWritableByOthersUnlessSticky) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (the rule applies to euid 0 only)";
  TempDir t;
  ::chmod(t.path().c_str(), 0755);
  const std::string theirs = t.path() + "/theirs", team = t.path() + "/team", tmp = t.path() + "/tmp";
  fs::create_directory(theirs);
  ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  fs::create_directory(team);
  ::chmod(team.c_str(), 0775);
  fs::create_directory(tmp);
  ::chmod(tmp.c_str(), 01777);
  auto o = OutDir::Open("--out", theirs + "/run", true);
  ASSERT_FALSE(o);
  EXPECT_EQ(o.error().kind, Error::Kind::kInput);
  EXPECT_NE(o.error().message.find(theirs + " is owned by"), std::string::npos) << o.error().message;
  EXPECT_NE(o.error().message.find("uid 65534"), std::string::npos) << o.error().message;
  EXPECT_FALSE(fs::exists(theirs + "/run"));
  auto g = OutDir::Open("--out", team + "/run", true);
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("mode 0775"), std::string::npos) << g.error().message;
  auto s = OutDir::Open("--out", tmp + "/a/b", true);  // sticky: allowed; root creates a and b
  ASSERT_TRUE(s) << s.error().message;
  struct stat st {};
  ASSERT_EQ(::lstat((tmp + "/a/b").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  // A link root owns is followed; the same link owned by another user is not.
  fs::create_symlink(tmp + "/a", t.path() + "/root_link");
  EXPECT_TRUE(OutDir::Open("--out", t.path() + "/root_link/b", false));
  fs::create_symlink(tmp + "/a", tmp + "/user_link");
  ASSERT_EQ(::lchown((tmp + "/user_link").c_str(), 65534, 65534), 0);
  auto u = OutDir::Open("--out", tmp + "/user_link/b", false);
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().message.find("is a link owned by"), std::string::npos) << u.error().message;
  // Appending as root: another user's regular file (even in a sticky directory) is refused.
  auto d = OutDir::Open("--out", tmp, false);
  ASSERT_TRUE(d);
  t.Write("tmp/theirs.csv", "");
  ASSERT_EQ(::chown((tmp + "/theirs.csv").c_str(), 65534, 65534), 0);
  auto a = d->OpenForAppend("theirs.csv");
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("owned by"), std::string::npos) << a.error().message;
}

}  // namespace
}  // namespace sparkops
