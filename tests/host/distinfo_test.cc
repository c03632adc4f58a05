// Pure parsers of installed-package metadata and torch/version.py, table-tested with the
// samples of real dist-info and torch/version.py files (docs/checks.md, G1).
#include <gtest/gtest.h>

#include "host/distinfo.h"
#include "host/torch_version.h"

namespace sparkops {
namespace {

TEST(TorchVersionPy, ParsesGeneratedFiles) {
  struct Case {
    const char* text;
    const char* version;
    std::optional<std::string> cuda;
    const char* git;
  };
  const Case cases[] = {
      // 2.8 layout from tools/generate_torch_version.py (pytorch/pytorch)
      {"from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n"
       "__version__ = '2.8.0+cu128'\ndebug = False\ncuda: Optional[str] = '12.8'\ngit_version = 'abc'\n"
       "hip: Optional[str] = None\nxpu: Optional[str] = None\n",
       "2.8.0+cu128", "12.8", "abc"},
      // older layout without xpu
      {"__version__ = '2.4.0+cu118'\ndebug = False\ncuda: Optional[str] = '11.8'\ngit_version = 'x'\n", "2.4.0+cu118",
       "11.8", "x"},
      // CPU build and Debian's python3-torch (plain `cuda = None`)
      {"__version__ = '1.13.0a0'\ndebug = False\ncuda = None\ngit_version = 'Unknown'\nhip = None\n", "1.13.0a0",
       std::nullopt, "Unknown"},
      // NGC and source builds, double quotes tolerated
      {"__version__ = \"2.9.0a0+145a3a7bda.nv25.10\"\ncuda: Optional[str] = '13.0'\n", "2.9.0a0+145a3a7bda.nv25.10",
       "13.0", ""},
      // indented or commented lines are not top-level assignments
      {"__version__ = '2.10.0a0+gite67e3d9'\n    cuda = '99.9'\n# cuda = '1.0'\ncuda = '13.0'\n", "2.10.0a0+gite67e3d9",
       "13.0", ""},
  };
  for (const auto& c : cases) {
    auto tv = ParseTorchVersionPy(c.text);
    ASSERT_TRUE(tv) << c.text << ": " << tv.error().message;
    EXPECT_EQ(tv->version, c.version);
    EXPECT_EQ(tv->cuda, c.cuda) << c.text;
    EXPECT_EQ(tv->git_version, c.git);
  }
}

TEST(TorchVersionPy, RejectsDamagedFiles) {
  auto none = ParseTorchVersionPy("debug = False\ncuda = '13.0'\n", "x/torch/version.py");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("x/torch/version.py"), std::string::npos);
  EXPECT_NE(none.error().message.find("__version__"), std::string::npos);
  EXPECT_FALSE(ParseTorchVersionPy("__version__ = get_version()\n"));
  EXPECT_FALSE(ParseTorchVersionPy("__version__ = '2.9.1'\ncuda = os.environ['X']\n"));
  EXPECT_FALSE(ParseTorchVersionPy(""));
}

TEST(TorchVersionPy, TagsAndMajors) {
  EXPECT_EQ(CudaTag("2.9.1+cu130"), "cu130");
  EXPECT_EQ(CudaTag("2.5.1+cpu"), "");
  EXPECT_EQ(CudaTag("2.11.0"), "");
  EXPECT_EQ(CudaTag("2.10.0a0+gite67e3d9"), "");
  EXPECT_EQ(NgcRelease("2.9.0a0+145a3a7bda.nv25.10"), "25.10");
  EXPECT_EQ(NgcRelease("2.11.0a0+a6c236b9fd.nv26.3.46836102"), "26.3");
  EXPECT_EQ(NgcRelease("2.9.1+cu130"), "");
  EXPECT_EQ(CudaMajor("13.0"), 13);
  EXPECT_EQ(CudaMajor("12.8"), 12);
  EXPECT_EQ(CudaMajor("x"), std::nullopt);
}

TEST(Metadata, HeadersAndRequiresDist) {
  const char* text =
      "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.1+cu130\n"
      "Requires-Dist: nvidia-cuda-runtime==13.0.48; platform_system == \"Linux\"\n"
      "Requires-Dist: nvidia-cuda-runtime-cu12 (==12.1.105) ; platform_system == \"Linux\" and platform_machine == "
      "\"x86_64\"\n"
      "Requires-Dist: cuda-toolkit[cublas,cudart]==13.0.2; platform_system == \"Linux\"\n"
      "Requires-Dist: sympy>=1.13.3\n"
      "Description-Content-Type: text/markdown\n"
      "\nRequires-Dist: in-the-body==1\n";
  auto md = ParseMetadata(text, "METADATA");
  ASSERT_TRUE(md);
  EXPECT_EQ(md->name, "torch");
  EXPECT_EQ(md->version, "2.9.1+cu130");
  ASSERT_EQ(md->requires_dist.size(), 4u);
  EXPECT_EQ(md->requires_dist[0].name, "nvidia-cuda-runtime");
  EXPECT_EQ(md->requires_dist[0].spec, "==13.0.48");
  EXPECT_EQ(md->requires_dist[0].marker, "platform_system == \"Linux\"");
  EXPECT_EQ(md->requires_dist[1].spec, "==12.1.105");
  EXPECT_NE(md->requires_dist[1].marker.find("x86_64"), std::string::npos);
  EXPECT_EQ(md->requires_dist[2].name, "cuda-toolkit");
  EXPECT_EQ(md->requires_dist[2].extras, "cublas,cudart");
  EXPECT_EQ(md->requires_dist[2].spec, "==13.0.2");
  EXPECT_EQ(md->requires_dist[3].spec, ">=1.13.3");
  auto bad = ParseMetadata("Name: x\n", "pkg-1.dist-info/METADATA");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "pkg-1.dist-info/METADATA: no Version header");
}

TEST(Record, CsvWithQuoting) {
  const char* text =
      "torch/lib/libtorch_cuda.so,sha256=AbC-_123,123456\n"
      "\"torch/include/a,b.h\",sha256=x,10\r\n"
      "\"odd \"\"quoted\"\" name.py\",,\n"
      "\n"
      "torch-2.9.1.dist-info/RECORD,,\n";
  auto rows = ParseRecord(text, "RECORD");
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].path, "torch/lib/libtorch_cuda.so");
  EXPECT_EQ((*rows)[0].size, 123456u);
  EXPECT_EQ((*rows)[1].path, "torch/include/a,b.h");
  EXPECT_EQ((*rows)[2].path, "odd \"quoted\" name.py");
  EXPECT_EQ((*rows)[2].size, std::nullopt);
  EXPECT_EQ((*rows)[3].hash, "");
}

// ScanRecord looks for '"' and '\r' once over the text, not per line: rows read from one text
// equal the rows of its lines read one at a time, whichever lines are quoted or carry a '\r'.
TEST(Record, QuotedAndCrLinesAnywhereReadAsOnTheirOwn) {
  const std::vector<std::string> lines = {
      "a/x.so,sha256=1,1\n", "\"b,c.py\",,\n",  "d.py,,2\r\n", "e.py,,\n", "\"f \"\"g\"\".py\",h,3\n", "i.py,,\n",
      "j.py,,4\n",           "\"k.so\",,5\r\n", "l.py,,\n"};
  for (size_t mask = 0; mask < (1u << lines.size()); mask += 7) {
    std::string text;
    std::vector<RecordEntry> one_by_one;
    for (size_t k = 0; k < lines.size(); ++k) {
      if (!(mask & (1u << k))) continue;
      text += lines[k];
      auto r = ParseRecord(lines[k], "R");
      ASSERT_TRUE(r) << lines[k];
      one_by_one.insert(one_by_one.end(), r->begin(), r->end());
    }
    auto all = ParseRecord(text, "R");
    ASSERT_TRUE(all) << text;
    ASSERT_EQ(all->size(), one_by_one.size()) << text;
    for (size_t k = 0; k < all->size(); ++k) {
      EXPECT_EQ((*all)[k].path, one_by_one[k].path) << text;
      EXPECT_EQ((*all)[k].size, one_by_one[k].size) << text;
    }
  }
}

TEST(Record, DamagedRowsNameFileAndLine) {
  struct Case {
    const char* text;
    const char* what;
  };
  const Case cases[] = {{"a,b\n", "line 1: expected path,hash,size"},
                        {"a,b,c\n", "line 1: size is not a number"},
                        {"ok,,\n\"open,b,1\n", "unterminated quote"},
                        {"ok,,\n,h,1\n", "line 2: empty path"}};
  for (const auto& c : cases) {
    auto r = ParseRecord(c.text, "x.dist-info/RECORD");
    ASSERT_FALSE(r) << c.text;
    EXPECT_NE(r.error().message.find("x.dist-info/RECORD"), std::string::npos);
    EXPECT_NE(r.error().message.find(c.what), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(ParseRecord("a,,\nb,,\nc,,\n", "R", 2));
}

TEST(DirectUrl, SourceBuildMarkers) {
  auto d = ParseDirectUrl(R"({"url": "file:///src/flash-attention", "dir_info": {"editable": true}})", "d.json");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->url, "file:///src/flash-attention");
  EXPECT_TRUE(d->editable);
  auto g = ParseDirectUrl(
      R"({"url": "https://github.com/unslothai/unsloth", "vcs_info": {"vcs": "git", "commit_id": "ab"}})", "d.json");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->vcs, "git");
  EXPECT_FALSE(ParseDirectUrl("{\"url\": 3}", "d.json"));
  EXPECT_FALSE(ParseDirectUrl("not json", "d.json"));
}

TEST(Names, NormalisationAndDirNames) {
  EXPECT_EQ(NormalizeName("Flash_Attn"), "flash-attn");
  EXPECT_EQ(NormalizeName("nvidia_cuda_runtime_cu12"), "nvidia-cuda-runtime-cu12");
  EXPECT_EQ(NormalizeName("zope..Interface"), "zope-interface");
  auto d = ParseDistDirName("torch-2.9.1+cu130.dist-info");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "torch");
  EXPECT_EQ(d->version, "2.9.1+cu130");
  auto e = ParseDistDirName("torch-1.13.0a0+gitunknown.egg-info");
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->egg);
  EXPECT_EQ(e->version, "1.13.0a0+gitunknown");
  auto py = ParseDistDirName("six-1.16.0-py3.11.egg-info");
  ASSERT_TRUE(py);
  EXPECT_EQ(py->version, "1.16.0");
  EXPECT_FALSE(ParseDistDirName("torch"));
  EXPECT_FALSE(ParseDistDirName("-1.0.dist-info"));
}

TEST(Versions, PublicPartAndOrdering) {
  EXPECT_EQ(PublicVersion("1.13.0a0+gitunknown"), "1.13.0a0");
  EXPECT_EQ(CompareVersions("1.13.0a0", "1.13.0a0+gitunknown"), 0);
  EXPECT_EQ(CompareVersions("2.10.0", "2.9.1"), 1);
  EXPECT_EQ(CompareVersions("2.11.0a0", "2.11.0"), -1);
  EXPECT_EQ(CompareVersions("2.11", "2.11.0"), 0);
  EXPECT_EQ(CompareVersions("2.7.4.post1", "2.7.4"), 1);
  EXPECT_EQ(CompareVersions("3.5.0rc1", "3.5.0b2"), 1);
  EXPECT_EQ(CompareVersions("1.0.dev3", "1.0a1"), -1);
}

TEST(Versions, Specifiers) {
  EXPECT_EQ(SatisfiesSpec("3.5.1", "==3.5.1"), true);
  EXPECT_EQ(SatisfiesSpec("3.4.0", "==3.5.1"), false);
  EXPECT_EQ(SatisfiesSpec("2.9.1+cu130", "==2.9.1"), true);
  EXPECT_EQ(SatisfiesSpec("2.5.0", ">=2.3,<3"), true);
  EXPECT_EQ(SatisfiesSpec("3.0", ">=2.3,<3"), false);
  EXPECT_EQ(SatisfiesSpec("2.9.1", "==2.9.*"), true);
  EXPECT_EQ(SatisfiesSpec("2.10.0", "==2.9.*"), false);
  EXPECT_EQ(SatisfiesSpec("2.9.1", ""), true);
  EXPECT_EQ(SatisfiesSpec("2.9.1", "@https://x"), std::nullopt);
  EXPECT_EQ(SatisfiesSpec("garbage", "==1"), std::nullopt);
}

}  // namespace
}  // namespace sparkops
