#pragma once
// info's graph section for a .tflite: each operator of subgraph 0 in order (index, name, where
// it runs) with the tensors it reads and writes (index, name, shape, type, quantization: one
// scale and zero point, or per channel their count and ranges).

#include <nlohmann/json.hpp>
#include <string>

#include "frontend/loaders/model.h"

namespace ethosu {

nlohmann::ordered_json graph_info_json(const LoadedModel& model);
std::string graph_info_text(const LoadedModel& model);

}  // namespace ethosu
