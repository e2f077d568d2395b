// The per-layer CSV: Vela's header, one row per kernel op (or per Vela op with a debug
// database), and op cycles that add up to the run.

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <sstream>

#include "tests/traces/trace_test_util.h"
#include "traces/per_layer_csv.h"
#include "traces/vela_per_layer.h"

namespace ethosu {
namespace {

using test::TimedRun;

// Splits CSV text into rows of fields (quoted fields may hold commas; doubled quotes are one).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        std::vector<std::string> fields(1);
        bool quoted = false;
        for (size_t i = 0; i < line.size(); ++i) {
            const char c = line[i];
            if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') fields.back() += line[++i];
            else if (c == '"') quoted = !quoted;
            else if (c == ',' && !quoted) fields.emplace_back();
            else fields.back() += c;
        }
        rows.push_back(fields);
    }
    return rows;
}

int64_t kernel_ops(const TimedRun& run) {
    int64_t n = 0;
    for (const auto& t : run.result.timing) {
        for (const auto& op : t.ops) n += op.unit == Unit::Kernel;
    }
    return n;
}

// What holds for every run: Vela's columns, every row full, the two columns we cannot fill
// empty, cycles and percentages that add up.
std::vector<std::vector<std::string>> check_csv(const TimedRun& run) {
    const TracedRun traced = run.traced();
    const auto rows = parse_csv(per_layer_csv(traced));
    EXPECT_GE(rows.size(), 2u);
    EXPECT_EQ(rows[0], per_layer_header());
    EXPECT_EQ(rows[0].back(), "Alignment");
    int64_t cycles = 0, macs = 0;
    double cycles_percent = 0;
    for (size_t r = 1; r < rows.size(); ++r) {
        const auto& row = rows[r];
        EXPECT_EQ(row.size(), kVelaColumns + 1);
        EXPECT_EQ(row[3], "") << "Staging Usage is not ours to fill";
        EXPECT_EQ(row[4], "") << "Peak% (Staging) is not ours to fill";
        const int64_t op_cycles = std::stoll(row[5]);
        const int64_t op_macs = std::stoll(row[12]);
        cycles += op_cycles;
        macs += op_macs;
        cycles_percent += std::stod(row[6]);
        if (op_cycles > 0) {
            EXPECT_NEAR(std::stod(row[14]), 100.0 * double(op_macs) / (double(op_cycles) * run.model->config.macs), 1e-9);
        }
    }
    EXPECT_EQ(cycles, traced.total_cycles());
    EXPECT_NEAR(cycles_percent, 100.0, 1e-6);
    int64_t run_macs = 0;
    for (const auto& t : run.result.timing) run_macs += t.totals.macs;
    EXPECT_EQ(macs, run_macs);
    return rows;
}

TEST(PerLayer, ExampleHasOneRowPerKernelOp) {
    const TimedRun run = test::run_example();
    const auto rows = check_csv(run);
    ASSERT_EQ(static_cast<int64_t>(rows.size()) - 1, kernel_ops(run));
    EXPECT_EQ(rows[1][0], "pool.average");
    EXPECT_EQ(rows[1][1], "pool.average");
    EXPECT_EQ(rows[1][2], "NPU");
    EXPECT_EQ(rows[1][15], "pool.average @0x000100");
    EXPECT_EQ(rows[2][15], "elementwise.add @0x000154");
    EXPECT_EQ(rows[1][16], kAlignmentNone);
}

TEST(PerLayer, HeaderIsVelas) {
    if (!test::have_vectors()) GTEST_SKIP() << "no Vela corpus at " << test::vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    for (const char* model : {"person_detect", "add_8x8x32", "micro_speech"}) {
        const auto vela = parse_csv(test::read_text(test::vectors_dir() / model / "ethos-u55-128" / "model_per-layer.csv"));
        ASSERT_FALSE(vela.empty()) << model;
        const auto& ours = per_layer_header();
        EXPECT_EQ(vela[0], std::vector<std::string>(ours.begin(), ours.begin() + kVelaColumns)) << model;
    }
}

// With the debug database the rows are Vela's rows: same operators and names, in Vela's order,
// so the two files diff column by column; the MAC counts agree row for row, which shows each
// kernel op went to its Vela op. Every corpus compilation `run` takes (one NPU graph, no CPU
// operators) on the U55/U65 configurations.
TEST(PerLayer, CorpusRowsLineUpWithVelas) {
    if (!test::have_vectors()) GTEST_SKIP() << "no Vela corpus at " << test::vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    const int compilations = test::for_each_runnable_compilation([](const std::string& name, const std::string& config,
                                                                    const TimedRun& run) {
        const auto ours = check_csv(run);
        const auto vela = parse_csv(test::read_text(test::vectors_dir() / name / config / "model_per-layer.csv"));
        ASSERT_EQ(ours.size(), vela.size());
        for (size_t r = 1; r < ours.size(); ++r) {
            for (const size_t column : {0, 1, 2, 12, 15}) {
                EXPECT_EQ(ours[r][column], vela[r][column]) << per_layer_header()[column] << ", row " << r;
            }
            EXPECT_EQ(ours[r][16], kAlignmentDebugDb);
        }

        // Without it: one row per kernel op.
        const TimedRun plain = test::run_corpus_model(name, config, false);
        EXPECT_EQ(static_cast<int64_t>(check_csv(plain).size()) - 1, kernel_ops(plain));
    });
    EXPECT_GT(compilations, 150);
    std::cout << compilations << " compilations line up with Vela's per-layer CSV\n";
}

}  // namespace
}  // namespace ethosu

namespace ethosu {
namespace {

// Without the debug database, Vela's per-layer report gives the rows and the stream's order, op
// kinds and MACs place the kernel ops in them. Over every single-stream corpus compilation on all
// five configurations, the placement is checked against the debug database's queue: the rows
// that line up are Vela's, named as Vela names them, with the MACs Vela counts.
TEST(PerLayer, CorpusRowsLineUpWithoutTheDebugDatabase) {
    if (!test::have_vectors()) GTEST_SKIP() << "no Vela corpus at " << test::vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    int aligned = 0, as_the_queue = 0;
    size_t rows_total = 0, rows_placed = 0;
    std::vector<std::string> unaligned;
    const int compilations = test::for_each_runnable_compilation(
        [&](const std::string& name, const std::string& config, const TimedRun& with_db) {
            const auto dir = test::vectors_dir() / name / config;
            const VelaPerLayer report = VelaPerLayer::load((dir / "model_per-layer.csv").string(), 1 << 24);
            const TimedRun plain = test::run_corpus_model(name, config, false);
            TracedRun traced = plain.traced();
            traced.vela_per_layer = &report;
            const auto rows = per_layer_rows(traced);
            const auto vela = parse_csv(test::read_text(dir / "model_per-layer.csv"));
            rows_total += vela.size() - 1;
            if (rows[0].alignment != kAlignmentVelaReport) {
                EXPECT_EQ(rows[0].alignment, kAlignmentUnaligned);
                unaligned.push_back(name + " " + config);
                return;
            }
            ++aligned;
            ASSERT_EQ(rows.size(), vela.size() - 1);
            const auto queue_rows = per_layer_rows(with_db.traced());
            bool same = true;
            for (size_t r = 0; r < rows.size(); ++r) {
                EXPECT_EQ(rows[r].name, vela[r + 1][15]);
                EXPECT_EQ(rows[r].op, vela[r + 1][1]);
                EXPECT_EQ(rows[r].macs, std::stoll(vela[r + 1][12])) << "row " << r;
                EXPECT_EQ(rows[r].vela, &report.layers()[r]);
                // Kernel ops placed as the queue places them give the same cycles per row.
                const bool placed = rows[r].op_cycles == queue_rows[r].op_cycles && rows[r].macs == queue_rows[r].macs;
                rows_placed += placed;
                same = same && placed;
            }
            as_the_queue += same;
            check_csv(plain);
        },
        {"ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u85-256", "ethos-u85-1024"});
    std::cout << aligned << " of " << compilations << " compilations line up with Vela's per-layer report without "
              << "the debug database, " << as_the_queue << " exactly as its queue places the ops; " << rows_placed
              << " of " << rows_total << " rows of all compilations placed as the queue does; not aligned:";
    for (const auto& u : unaligned) std::cout << " " << u;
    std::cout << "\n";
    EXPECT_GE(aligned, compilations - 8);
    EXPECT_GE(as_the_queue, aligned - 4);
}

}  // namespace
}  // namespace ethosu
