#pragma once
// The corpus index (../shared/vectors/index.csv): one row per model and NPU configuration.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace ethosu {

// The bytes of a corpus file (golden inputs and outputs); empty if it cannot be read.
inline std::vector<uint8_t> read_file_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct CorpusEntry {
    std::string model;
    int64_t vela_total_cycles = 0;  // Vela's estimate (its model summary's cycles_total)
};

// The fully-NPU models of a configuration, in index order; columns are found by header name. An
// index of several compilers (../shared/vectors-vela) is filtered to the `vela` version given.
inline std::vector<CorpusEntry> fully_npu_entries(const std::filesystem::path& vectors, const std::string& config,
                                                  const std::string& vela = {}) {
    std::ifstream index(vectors / "index.csv");
    std::string line;
    std::getline(index, line);
    std::map<std::string, size_t> column;
    {
        std::stringstream header(line);
        size_t i = 0;
        for (std::string name; std::getline(header, name, ',');) column[name] = i++;
    }
    std::vector<CorpusEntry> entries;
    while (std::getline(index, line)) {
        std::vector<std::string> cells;
        std::stringstream ss(line);
        for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
        auto cell = [&](const char* name) { return column.at(name) < cells.size() ? cells[column.at(name)] : ""; };
        if (cell("config") != config || cell("fully_npu") != "True") continue;
        if (!vela.empty() && cell("vela") != vela) continue;
        const std::string cycles = cell("total_cycles");
        entries.push_back({cell("model"), cycles.empty() ? 0 : std::stoll(cycles)});
    }
    return entries;
}

}  // namespace ethosu
