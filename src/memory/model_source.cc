#include "memory/model_source.h"

#include <fmt/format.h>

#include <filesystem>

#include "host/hostfs.h"
#include "memory/catalogue.h"

namespace sparkops::memory {

namespace fs = std::filesystem;

Result<LoadedModel> ResolveModel(const std::string& arg) {
  LoadedModel m;
  if (const CatalogueEntry* e = FindModel(arg)) {
    m.spec = e->spec;
    m.params = CountParams(m.spec).total();
    m.params_source = "catalogue (config fields of " + e->hf_id + ")";
    return m;
  }
  std::error_code ec;
  fs::path p(arg);
  fs::path config, dir;
  if (fs::is_directory(p, ec)) {
    dir = p;
    config = p / "config.json";
    if (!fs::exists(config, ec)) return InputError(fmt::format("MODEL {}: directory has no config.json", arg));
  } else if (fs::is_regular_file(p, ec)) {
    config = p;
    dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  } else {
    std::string near = NearestModelName(arg);
    return InputError(
        fmt::format("MODEL '{}': not a catalogue name, a directory or a config.json{} "
                    "(`sparkops models` lists the catalogue)",
                    arg, near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
  }
  auto text = ReadLocalFile(config.string(), 16u << 20);
  if (!text) return std::unexpected(text.error());
  auto spec = ParseConfigJson(*text, config.string());
  if (!spec) return std::unexpected(spec.error());
  m.spec = *spec;
  m.spec.name = p.filename().string() == "config.json" ? dir.filename().string() : p.filename().string();
  if (m.spec.name.empty() || m.spec.name == ".") m.spec.name = config.string();
  m.params = CountParams(m.spec).total();
  m.params_source = "config.json (" + config.string() + ")";
  auto st = ReadSafetensorsDir(dir.string());
  if (st) {
    m.safetensors = *st;
    m.params = st->params();
    m.params_source = fmt::format("safetensors headers ({} file{})", st->files, st->files == 1 ? "" : "s");
  } else if (st.error().kind != Error::Kind::kNotFound) {
    return std::unexpected(st.error());
  }
  return m;
}

}  // namespace sparkops::memory
