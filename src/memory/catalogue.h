#pragma once
/// The built-in model catalogue: architecture facts only (config.json fields), compiled into the
/// binary from data/models/catalogue.csv at build time (CMake generates catalogue_data.cc), so an
/// installed sparkops needs no data files.
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "memory/model_spec.h"

namespace sparkops::memory {

struct CatalogueEntry {
  ModelSpec spec;     ///< spec.name is the name users type ("llama-3.3-70b")
  std::string hf_id;  ///< "meta-llama/Llama-3.3-70B-Instruct"
};

/// Pure: parses the catalogue CSV (header row, then one model per row).
Result<std::vector<CatalogueEntry>> ParseCatalogue(std::string_view csv);
/// The embedded catalogue (parsed once).
const std::vector<CatalogueEntry>& Catalogue();
/// Case-insensitive lookup by name or HF id; nullptr when absent.
const CatalogueEntry* FindModel(std::string_view name);
/// The catalogue name nearest to `name` (edit distance), "" when nothing is close.
std::string NearestModelName(std::string_view name);

}  // namespace sparkops::memory
