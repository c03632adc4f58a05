#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "memory/catalogue.h"
#include "memory/model_source.h"
#include "memory/model_spec.h"
#include "memory/safetensors.h"
#include "test_util.h"

namespace sparkops::memory {
namespace {

// Parameter totals published as safetensors totals (research data/models.csv) against the count
// sparkops derives from the config fields alone.
TEST(CountParams, MatchesPublishedSafetensorsTotals) {
  struct Case {
    const char* name;
    uint64_t published;
  } cases[] = {
      {"llama-3.1-8b", 8030261248},   {"llama-3.2-1b", 1235814400},       {"llama-3.2-3b", 3212749824},
      {"llama-2-7b", 6738415616},     // 6,738,417,664 minus 2,048 F32 rotary buffers
      {"qwen2.5-7b", 7615616512},     {"qwen3-32b", 32762123264},         {"gemma-3-1b", 999885952},
      {"tinyllama-1.1b", 1100048384}, {"mistral-small-24b", 23572403200},  // Mistral-Small-3.2 text params (same dims)
      {"falcon-7b", 7217189760},  // checkpoint index total_size / 2 (lm_head stored)
      {"bloom-7b1", 7069016064}};  // model card
  for (const auto& c : cases) {
    const CatalogueEntry* e = FindModel(c.name);
    ASSERT_NE(e, nullptr) << c.name;
    EXPECT_EQ(CountParams(e->spec).total(), c.published) << c.name;
  }
}

TEST(CountParams, MoeActiveIsAFraction) {
  auto* e = FindModel("qwen3-30b-a3b");
  ASSERT_NE(e, nullptr);
  auto pc = CountParams(e->spec);
  EXPECT_NEAR(pc.total() / 1e9, 30.5, 0.6);  // card: 30.5B total
  EXPECT_NEAR(pc.active() / 1e9, 3.3, 0.2);  // card: 3.3B activated
  auto* mx = FindModel("mixtral-8x7b");
  ASSERT_NE(mx, nullptr);
  EXPECT_NEAR(CountParams(mx->spec).total() / 1e9, 46.7, 0.5);  // paper: 47B
  EXPECT_NEAR(CountParams(mx->spec).active() / 1e9, 12.9, 0.3);  // paper: 13B active
}

TEST(Catalogue, EmbeddedCopyIsTheRepoCsvAndHasTheNamesUsersType) {
  std::ifstream in(std::string(SPARKOPS_TEST_SOURCE_DIR) + "/../data/models/catalogue.csv");
  std::string csv((std::istreambuf_iterator<char>(in)), {});
  auto parsed = ParseCatalogue(csv);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->size(), Catalogue().size());
  for (const char* n : {"llama-3.1-8b", "llama-3.3-70b", "gemma-2-27b", "qwen3-30b-a3b", "gpt-oss-120b", "gemma-2-9b"})
    EXPECT_NE(FindModel(n), nullptr) << n;
  EXPECT_NE(FindModel("META-LLAMA/Llama-3.1-8B"), nullptr);  // HF id, any case
  EXPECT_EQ(NearestModelName("llama-3.1-8"), "llama-3.1-8b");
  EXPECT_FALSE(ParseCatalogue("name,hidden_size\nx,abc\n"));
}

// NearestModelName bounds its edit distance at 3: a long name is no typo of any catalogue name
// and costs no more than a short one (it was the catalogue fuzz target's bottleneck).
TEST(Catalogue, NearestModelNameOfALongNameIsEmptyAndCheap) {
  EXPECT_EQ(NearestModelName("LLAMA-3.1-8"), "llama-3.1-8b");
  EXPECT_EQ(NearestModelName("llama-3.1-8b"), "llama-3.1-8b");
  EXPECT_EQ(NearestModelName("llama-3.1-8bxxx"), "llama-3.1-8b");
  EXPECT_EQ(NearestModelName("llama-3.1-8bxxxx"), "");  // 4 edits: not a typo
  EXPECT_EQ(NearestModelName(""), "");
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(NearestModelName(std::string(1'000'000, 'l')), "");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));  // was ~10^6 x 15 cells per entry
}

TEST(ParseConfigJson, LlamaWithGqaAndDefaults) {
  auto s = ParseConfigJson(R"({"model_type":"llama","vocab_size":128256,"hidden_size":4096,
    "intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,
    "max_position_embeddings":131072})",
                           "c.json");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->head_dim, 128u);
  EXPECT_FALSE(s->tied);  // LlamaConfig default
  EXPECT_EQ(CountParams(*s).total(), 8030261248u);
}

TEST(ParseConfigJson, Gemma3TextConfigFalconMultiQueryAndMoe) {
  auto g = ParseConfigJson(R"({"model_type":"gemma3","text_config":{"hidden_size":5376,"intermediate_size":21504,
    "num_hidden_layers":62,"num_attention_heads":32,"num_key_value_heads":16,"head_dim":128}})",
                           "g.json");
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->vocab, 262208u);  // Gemma3TextConfig default
  EXPECT_TRUE(g->tied);
  auto f = ParseConfigJson(R"({"model_type":"falcon","vocab_size":65024,"hidden_size":4544,"n_layer":32,
    "n_head":71,"multi_query":true})",
                           "f.json");
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->kv_heads, 1u);
  EXPECT_EQ(f->intermediate, 4u * 4544);
  auto odd = ParseConfigJson(R"({"model_type":"falcon","vocab_size":65024,"hidden_size":4544,"n_layer":32,
    "n_head":71,"multi_query":"yes","tie_word_embeddings":"no"})",
                             "odd.json");
  ASSERT_TRUE(odd);  // non-boolean flags are ignored, not thrown on
  EXPECT_EQ(odd->kv_heads, 71u);
  auto m = ParseConfigJson(R"({"model_type":"qwen3_moe","vocab_size":151936,"hidden_size":2048,
    "intermediate_size":6144,"num_hidden_layers":48,"num_attention_heads":32,"num_key_value_heads":4,
    "head_dim":128,"num_experts":128,"num_experts_per_tok":8,"moe_intermediate_size":768})",
                           "m.json");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->experts, 128u);
  EXPECT_EQ(m->expert_intermediate, 768u);
}

TEST(ParseConfigJson, BadInputNamesFileAndField) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {"{not json", "not valid JSON"},
      {R"({"model_type":"mamba","hidden_size":1})", "model_type 'mamba' is not supported"},
      {R"({"hidden_size":1})", "missing field 'model_type'"},
      {R"({"model_type":"llama","vocab_size":10,"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4})",
       "missing field 'intermediate_size'"},
      {R"({"model_type":"llama","vocab_size":10,"hidden_size":-64,"intermediate_size":5,"num_hidden_layers":2,"num_attention_heads":4})",
       "'hidden_size' = -64"},
      {R"({"model_type":"llama","vocab_size":"many","hidden_size":64})", "'vocab_size' is not an integer"},
      {R"({"model_type":"mixtral","vocab_size":10,"hidden_size":64,"intermediate_size":5,"num_hidden_layers":2,"num_attention_heads":4,"num_local_experts":2,"num_experts_per_tok":3})",
       "exceeds"},
      {R"({"model_type":"llama","vocab_size":10,"hidden_size":100000000,"intermediate_size":100000000,"num_hidden_layers":100000,"num_attention_heads":4})",
       "implausible"},
  };
  for (const auto& c : cases) {
    auto s = ParseConfigJson(c.text, "dir/config.json");
    ASSERT_FALSE(s) << c.text;
    EXPECT_NE(s.error().message.find("dir/config.json"), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find(c.expect), std::string::npos) << s.error().message;
  }
}

std::string Le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

/// A safetensors file: header + zero bytes for the data.
std::string Safetensors(const std::string& header, size_t data_bytes) {
  return Le64(header.size()) + header + std::string(data_bytes, '\0');
}

TEST(Safetensors, HeaderLengthIsBoundedBeforeAllocating) {
  EXPECT_EQ(*ParseHeaderLength(Le64(10), 100, "f"), 10u);
  auto beyond = ParseHeaderLength(Le64(1000), 100, "x.safetensors");
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error().message.find("beyond the end"), std::string::npos);
  EXPECT_NE(beyond.error().message.find("x.safetensors"), std::string::npos);
  auto huge = ParseHeaderLength(Le64(uint64_t{1} << 62), uint64_t{1} << 63, "f");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("100 MB"), std::string::npos);
  EXPECT_FALSE(ParseHeaderLength("abc", 100, "f"));
}

TEST(Safetensors, CountsPerDtypeAndRejectsUnknownDtype) {
  auto info = ParseSafetensorsHeader(
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[4,8],"data_offsets":[0,64]},
          "b":{"dtype":"F32","shape":[8],"data_offsets":[64,96]}})",
      "f");
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->params_by_dtype.at("BF16"), 32u);
  EXPECT_EQ(info->params_by_dtype.at("F32"), 8u);
  EXPECT_EQ(info->params(), 40u);
  EXPECT_EQ(info->tensor_bytes, 96u);
  auto bad = ParseSafetensorsHeader(R"({"a":{"dtype":"Q4_K","shape":[4]}})", "m.safetensors");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("unknown dtype 'Q4_K'"), std::string::npos);
  EXPECT_FALSE(ParseSafetensorsHeader("[1,2]", "f"));
  EXPECT_FALSE(ParseSafetensorsHeader(R"({"a":{"dtype":"F16","shape":[-1]}})", "f"));
}

TEST(Safetensors, SumsOfUntrustedSizesNeverWrap) {
  // 3,000 tensors of 2^50 F64 elements: each 2^53 bytes, together past 2^64.
  std::string h = "{";
  for (int i = 0; i < 3000; ++i)
    h += fmt::format("{}\"t{}\":{{\"dtype\":\"F64\",\"shape\":[1125899906842624]}}", i ? "," : "", i);
  h += "}";
  auto r = ParseSafetensorsHeader(h, "m.safetensors");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("past 2^64"), std::string::npos) << r.error().message;
  // The same tensor once is fine (2^50 elements is the cap, not an error).
  EXPECT_TRUE(ParseSafetensorsHeader(R"({"t":{"dtype":"F64","shape":[1125899906842624]}})", "m.safetensors"));
  // With the file's data size known, a tensor must fit inside it and match its shape.
  EXPECT_FALSE(ParseSafetensorsHeader(R"({"t":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}})", "f", 7));
  EXPECT_FALSE(ParseSafetensorsHeader(R"({"t":{"dtype":"F16","shape":[4],"data_offsets":[0,6]}})", "f", 8));
  EXPECT_FALSE(ParseSafetensorsHeader(R"({"t":{"dtype":"F16","shape":[4],"data_offsets":[8,0]}})", "f", 8));
  EXPECT_FALSE(ParseSafetensorsHeader(R"({"t":{"dtype":"F16","shape":[4]}})", "f", 8));
  EXPECT_TRUE(ParseSafetensorsHeader(R"({"t":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}})", "f", 8));
}

TEST(Safetensors, DirectoryWithIndexAndShards) {
  testing::TempDir d;
  const std::string h1 = R"({"w1":{"dtype":"BF16","shape":[1000,10],"data_offsets":[0,20000]}})";
  const std::string h2 = R"({"w2":{"dtype":"BF16","shape":[500],"data_offsets":[0,1000]}})";
  d.Write("a.safetensors", Safetensors(h1, 20000));
  d.Write("b.safetensors", Safetensors(h2, 1000));
  d.Write("stray.safetensors", "junk");  // not in the index: ignored
  d.Write("model.safetensors.index.json",
          R"({"metadata":{"total_size":21000},"weight_map":{"w1":"a.safetensors","w2":"b.safetensors"}})");
  auto info = ReadSafetensorsDir(d.path());
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->params(), 10500u);
  EXPECT_EQ(info->files, 2);
  EXPECT_EQ(info->largest_file_bytes, 8 + h1.size() + 20000);
  d.Write("model.safetensors.index.json", R"({"weight_map":{"w1":"missing.safetensors"}})");
  auto missing = ReadSafetensorsDir(d.path());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("missing.safetensors"), std::string::npos);
}

TEST(ResolveModel, DirectoryUsesHeaderCountAndSaysSo) {
  testing::TempDir d;
  d.Write("config.json", R"({"model_type":"llama","vocab_size":100,"hidden_size":64,"intermediate_size":128,
    "num_hidden_layers":2,"num_attention_heads":4})");
  d.Write("model.safetensors",
          Safetensors(R"({"w":{"dtype":"BF16","shape":[12345],"data_offsets":[0,24690]}})", 24690));
  auto m = ResolveModel(d.path());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->params, 12345u);
  EXPECT_NE(m->params_source.find("safetensors headers (1 file)"), std::string::npos);
  auto cfg = ResolveModel(d.path() + "/config.json");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->params, 12345u);
  auto none = ResolveModel("no-such-model-xyz");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no-such-model-xyz"), std::string::npos);
}

}  // namespace
}  // namespace sparkops::memory
