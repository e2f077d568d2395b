#pragma once
// load_model for a model held in memory (the installed C++ API's load_bytes).

#include <memory>
#include <string>

#include "frontend/loaders/model.h"

namespace ethosu {

// Detects the format from the content as load_model does and loads; name stands for the file in
// errors. With an owner in `file`, region images point into its bytes.
std::unique_ptr<LoadedModel> load_model_bytes(const std::string& name, const FileBytes& file, const LoadOptions& options);

}  // namespace ethosu
