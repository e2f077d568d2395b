#pragma once
// A corpus model's TFLite Micro goldens (../shared/vectors/<model>/golden/meta.json): per seed,
// the raw input files in subgraph-input order and the raw output files in subgraph-output order.

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/corpus_index.h"

namespace ethosu {

struct GoldenSeed {
    std::string name;  // "seed1"
    std::vector<std::vector<uint8_t>> inputs, outputs;
};

struct Golden {
    std::string status;  // "ok" where TFLM ran the model
    std::vector<GoldenSeed> seeds;
};

inline Golden read_golden(const std::filesystem::path& model_dir) {
    const auto dir = model_dir / "golden";
    std::ifstream meta_file(dir / "meta.json");
    if (!meta_file) return {};
    const nlohmann::json meta = nlohmann::json::parse(meta_file);
    Golden golden{meta.value("status", ""), {}};
    if (!meta.contains("seeds")) return golden;
    for (const auto& [name, files] : meta.at("seeds").items()) {
        GoldenSeed seed{name, {}, {}};
        for (const auto& f : files.at("inputs")) seed.inputs.push_back(read_file_bytes(dir / f.get<std::string>()));
        for (const auto& f : files.at("outputs")) seed.outputs.push_back(read_file_bytes(dir / f.get<std::string>()));
        golden.seeds.push_back(std::move(seed));
    }
    return golden;
}

}  // namespace ethosu
