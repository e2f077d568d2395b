// Every Vela output in the corpus loads; the .tflite and .npz of one compilation agree; and
// truncated copies of every file end in ethosu::Error (or load), never in a crash.

#include <gtest/gtest.h>

#include <algorithm>

#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "frontend/loaders/model.h"
#include "loader_test_util.h"

namespace ethosu::test {
namespace {

namespace fs = std::filesystem;

struct CompiledModel {
    std::string model, config;
    fs::path dir;
};

// Every <model>/<config> directory holding a model_vela.tflite, in a stable order.
std::vector<CompiledModel> compiled_models() {
    std::vector<CompiledModel> out;
    for (const auto& model : fs::directory_iterator(vectors_dir())) {
        if (!model.is_directory()) continue;
        for (const auto& config : fs::directory_iterator(model.path()))
            if (fs::exists(config.path() / "model_vela.tflite"))
                out.push_back({model.path().filename().string(), config.path().filename().string(), config.path()});
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.dir < b.dir; });
    return out;
}

// What index.csv says about one compilation.
struct IndexRow {
    int cmd_streams = 0;
    uint64_t cmd_words = 0;
    int cpu_ops = 0;
};

std::map<std::string, IndexRow> read_index() {
    std::ifstream in(vectors_dir() / "index.csv");
    std::string line;
    std::getline(in, line);
    std::map<std::string, int> column;
    {
        std::stringstream header(line);
        std::string name;
        for (int i = 0; std::getline(header, name, ','); ++i) column[name] = i;
    }
    std::map<std::string, IndexRow> rows;
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::stringstream row(line);
        std::string cell;
        while (std::getline(row, cell, ',')) cells.push_back(cell);
        const auto number = [&](const char* name) {
            const size_t i = column.at(name);
            return i < cells.size() && !cells[i].empty() ? std::stoull(cells[i]) : 0ull;
        };
        rows[cells.at(0) + "/" + cells.at(1)] = {static_cast<int>(number("cmd_streams")), number("cmd_words"),
                                                 static_cast<int>(number("out_cpu_ops"))};
    }
    return rows;
}

int64_t element_count(const std::vector<int64_t>& shape) {
    return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

void expect_same_feature_maps(const std::vector<TensorInfo>& tflite, const std::vector<TensorInfo>& npz) {
    ASSERT_EQ(tflite.size(), npz.size());
    for (size_t i = 0; i < npz.size(); ++i) {
        SCOPED_TRACE("feature map " + std::to_string(i));
        EXPECT_EQ(tflite[i].region, npz[i].region);
        EXPECT_EQ(tflite[i].offset, npz[i].offset);
        EXPECT_EQ(tflite[i].size_bytes, npz[i].size_bytes);
        // Vela may fold a RESHAPE at the edge into the NPU work: same elements, other shape.
        EXPECT_EQ(element_count(tflite[i].shape), element_count(npz[i].shape));
        EXPECT_EQ(npz[i].shape.size(), 6u);
        EXPECT_EQ(element_size(tflite[i].type), element_size(npz[i].type));  // .npz knows only the width
    }
}

void expect_same_npu_work(const LoadedModel& tflite, const LoadedModel& npz) {
    EXPECT_EQ(npz.format, ModelFormat::VelaNpz);
    EXPECT_EQ(tflite.config.name, npz.config.name);
    ASSERT_EQ(tflite.invocations.size(), 1u);
    ASSERT_EQ(npz.invocations.size(), 1u);
    const NpuInvocation& t = tflite.invocations[0];
    const NpuInvocation& n = npz.invocations[0];
    EXPECT_EQ(t.stream.words, n.stream.words);
    EXPECT_EQ(t.stream.config_word, n.stream.config_word);
    EXPECT_EQ(t.stream.id_word, n.stream.id_word);
    ASSERT_EQ(t.regions.size(), n.regions.size());
    for (size_t r = 0; r < n.regions.size(); ++r) {
        SCOPED_TRACE("region " + std::string(region_role_name(n.regions[r].role)));
        EXPECT_EQ(t.regions[r].index, n.regions[r].index);
        EXPECT_EQ(t.regions[r].role, n.regions[r].role);
        EXPECT_EQ(t.regions[r].size, n.regions[r].size);
        EXPECT_TRUE(std::ranges::equal(t.regions[r].bytes, n.regions[r].bytes));
    }
    expect_same_feature_maps(tflite.inputs, npz.inputs);
    expect_same_feature_maps(tflite.outputs, npz.outputs);
}

TEST(Corpus, EveryVelaOutputLoadsAndTfliteAgreesWithNpz) {
    if (!have_vectors()) GTEST_SKIP() << "no Vela corpus at " << vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    const auto index = read_index();
    int tflite_files = 0, npz_files = 0, invocations = 0;
    for (const CompiledModel& c : compiled_models()) {
        SCOPED_TRACE(c.dir.string());
        const auto tflite = load_model((c.dir / "model_vela.tflite").string(), {});
        ++tflite_files;
        EXPECT_EQ(tflite->format, ModelFormat::VelaTflite);
        invocations += static_cast<int>(tflite->invocations.size());

        const IndexRow& row = index.at(c.model + "/" + c.config);
        EXPECT_EQ(static_cast<int>(tflite->invocations.size()), row.cmd_streams);
        EXPECT_EQ(tflite->cpu_operators, row.cpu_ops);
        uint64_t words = 0;
        for (const auto& inv : tflite->invocations) words += inv.stream.words.size();
        EXPECT_EQ(words, row.cmd_words);
        // A model left wholly on the CPU names no NPU; every other one names its directory's.
        if (!tflite->invocations.empty()) {
            EXPECT_EQ(tflite->config.name, c.config);
        }

        const fs::path npz_path = c.dir / "model_vela.npz";
        if (!fs::exists(npz_path)) continue;
        const auto npz = load_model(npz_path.string(), {});
        ++npz_files;
        EXPECT_EQ(npz->config.name, c.config);
        expect_same_npu_work(*tflite, *npz);
    }
    std::cout << "[ corpus   ] " << tflite_files << " .tflite loaded (" << invocations << " ethos-u operators), "
              << npz_files << " .npz loaded and matched against their .tflite\n";
    EXPECT_GT(tflite_files, 0);
    EXPECT_GT(npz_files, 0);
}

// Cut points: inside every header, mid-file and at the very end.
std::vector<size_t> cut_points(size_t size) {
    std::vector<size_t> cuts = {0, 3, 8, 31, size / 3, size / 2, size - 4, size - 1};
    std::erase_if(cuts, [&](size_t c) { return c >= size; });
    return cuts;
}

TEST(Corpus, TruncatedFilesNeverCrash) {
    if (!have_vectors()) GTEST_SKIP() << "no Vela corpus at " << vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    int truncated = 0, rejected = 0;
    for (const CompiledModel& c : compiled_models()) {
        for (const char* file : {"model_vela.tflite", "model_vela.npz"}) {
            const fs::path path = c.dir / file;
            if (!fs::exists(path)) continue;
            const Bytes whole = read_bytes(path);
            for (const size_t cut : cut_points(whole.size())) {
                SCOPED_TRACE(path.string() + " cut at " + std::to_string(cut));
                const Bytes part(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut));
                ++truncated;
                try {
                    if (path.extension() == ".tflite")
                        load_vela_tflite(path.string(), part, {});
                    else
                        load_vela_npz(path.string(), part, {});
                } catch (const Error& e) {
                    ++rejected;
                    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
                }
            }
        }
    }
    std::cout << "[ corpus   ] " << truncated << " truncated files, " << rejected << " rejected with ethosu::Error\n";
}

}  // namespace
}  // namespace ethosu::test
