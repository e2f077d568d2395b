#pragma once
// The corpus indexes (../shared/vectors/index.csv, ../shared/vectors-vela/index.csv): one row per
// model and NPU configuration (and, for vectors-vela, Vela version).

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

// The rows of an index.csv, each cell keyed by its column's header name (missing cells are empty).
using IndexRow = std::map<std::string, std::string>;
inline std::vector<IndexRow> read_index_rows(const std::filesystem::path& index_csv) {
    std::ifstream index(index_csv);
    std::string line;
    std::getline(index, line);
    std::vector<std::string> header;
    {
        std::stringstream names(line);
        for (std::string name; std::getline(names, name, ',');) header.push_back(name);
    }
    std::vector<IndexRow> rows;
    while (std::getline(index, line)) {
        std::stringstream ss(line);
        IndexRow row;
        for (const auto& name : header) row[name] = "";
        size_t i = 0;
        for (std::string cell; std::getline(ss, cell, ',') && i < header.size(); ++i) row[header[i]] = cell;
        rows.push_back(std::move(row));
    }
    return rows;
}

// The fully-NPU models of a configuration, in index order. An index of several compilers
// (../shared/vectors-vela) is filtered to the `vela` version given.
inline std::vector<CorpusEntry> fully_npu_entries(const std::filesystem::path& vectors, const std::string& config,
                                                  const std::string& vela = {}) {
    std::vector<CorpusEntry> entries;
    for (auto& row : read_index_rows(vectors / "index.csv")) {
        if (row["config"] != config || row["fully_npu"] != "True") continue;
        if (!vela.empty() && row["vela"] != vela) continue;
        const std::string& cycles = row["total_cycles"];
        entries.push_back({row["model"], cycles.empty() ? 0 : std::stoll(cycles)});
    }
    return entries;
}

// A Vela release's compile of the corpus for one NPU configuration.
struct VelaCompile {
    const char* version;
    const char* config;
};

// ../shared/vectors-vela-u85: Vela 4.5.0 for every U85 size, 5.1.0 for the sizes
// ../shared/vectors lacks.
inline constexpr VelaCompile kVelaU85Compiles[] = {
    {"4.5.0", "ethos-u85-128"}, {"4.5.0", "ethos-u85-256"},  {"4.5.0", "ethos-u85-512"},
    {"4.5.0", "ethos-u85-1024"}, {"4.5.0", "ethos-u85-2048"}, {"5.1.0", "ethos-u85-128"},
    {"5.1.0", "ethos-u85-512"},  {"5.1.0", "ethos-u85-2048"}};

// A test name for a compile: "vela4_5_0_ethos_u85_128".
inline std::string vela_compile_name(const VelaCompile& compile) {
    std::string name = std::string("vela") + compile.version + "_" + compile.config;
    for (char& c : name)
        if (c == '-' || c == '.') c = '_';
    return name;
}

}  // namespace ethosu
