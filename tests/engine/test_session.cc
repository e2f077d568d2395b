// ModelSession: many inferences of one loaded model. Each gives what a fresh run_model gives
// (outputs and cycles), and once the first has run, an inference allocates nothing: this binary
// counts every operator new while an inference runs.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>

#include "frontend/cli/example_model.h"
#include "frontend/runner/run_model.h"
#include "tests/config_test_name.h"
#include "tests/corpus_index.h"

namespace {

std::atomic<bool> counting{false};
std::atomic<uint64_t> allocations{0};

// Not inlined, so that `break note_allocation` in gdb shows who allocates.
__attribute__((noinline)) void note_allocation() { allocations.fetch_add(1, std::memory_order_relaxed); }
void* allocate(std::size_t size, std::size_t alignment = alignof(std::max_align_t)) {
    if (counting.load(std::memory_order_relaxed)) note_allocation();
    void* p = alignment > alignof(std::max_align_t) ? std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment)
                                                    : std::malloc(size ? size : 1);
    if (!p) throw std::bad_alloc();
    return p;
}

}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void* operator new(std::size_t size, std::align_val_t a) { return allocate(size, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return allocate(size, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace ethosu {
namespace {

namespace fs = std::filesystem;

// Runs one inference of the session, counting the allocations it makes.
uint64_t allocations_of(ModelSession& session, const std::vector<std::vector<uint8_t>>& inputs) {
    allocations = 0;
    counting = true;
    session.run(inputs);
    counting = false;
    return allocations;
}

std::vector<uint8_t> example_input(int seed) {
    std::vector<uint8_t> input(16 * 16 * 16);
    for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<uint8_t>(i * (37 + seed) + 11);
    return input;
}

TEST(Session, RepeatedInferencesMatchFreshRunsAndAllocateNothing) {
    const auto bytes = build_example_model();
    const auto model = load_executorch_bin("example.bin", bytes, {});
    ModelSession session(*model);
    bool first = true;
    for (int seed : {1, 2, 1}) {
        SCOPED_TRACE(seed);
        const std::vector<std::vector<uint8_t>> inputs = {example_input(seed)};
        const RunResult fresh = run_model(*model, inputs);
        const uint64_t allocated = allocations_of(session, inputs);
        EXPECT_TRUE(first || allocated == 0) << allocated << " allocations in a later inference";
        EXPECT_EQ(session.outputs(), fresh.outputs);
        ASSERT_TRUE(session.timing());
        EXPECT_EQ(session.timing()->totals.cycles, fresh.timing.at(0).totals.cycles);
        EXPECT_EQ(session.stream().ops.size(), fresh.streams.at(0).ops.size());
        first = false;
    }
}

// A model's input and output tensors are copied to and from the host with sizes the file alone
// declares: each, and all of them together, stay within max_allocation_bytes, in full runs,
// timing-only runs and sessions alike (a 2.4 KB .tflite declared a 200 MB output and the run
// copied it out).
TEST(Session, HostTensorsAreBoundedLikeTheEnginesBuffers) {
    const auto bytes = build_example_model();
    const auto model = load_executorch_bin("example.bin", bytes, {});
    const auto refusal = [](const LoadedModel& m, bool execute) -> std::string {
        RunOptions options;
        options.pipeline.execute = execute;
        try {
            run_model(m, {example_input(1)}, options);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::LimitExceeded) << e.what();
            return e.what();
        }
        return "";
    };
    EXPECT_EQ(refusal(*model, true), "");
    LoadedModel large = *model;
    large.outputs.at(0).size_bytes = (uint64_t{64} << 20) + 1;
    for (const bool execute : {true, false})
        EXPECT_NE(refusal(large, execute).find("above the limit of 67108864 per buffer"), std::string::npos);
    EXPECT_THROW(ModelSession{large}, Error);
    LoadedModel many = *model;  // every output within the limit, all of them above it
    many.outputs.assign(3, model->outputs.at(0));
    for (TensorInfo& t : many.outputs) t.size_bytes = uint64_t{30} << 20;
    for (const bool execute : {true, false})
        EXPECT_NE(refusal(many, execute).find("the input and output tensors need 94375936 bytes"),  // 4096 + 3 x 30 MiB
                  std::string::npos);
}

// Every corpus model with a golden, on every configuration, run as seed 1, seed 2, seed 1 on one
// session: the outputs and cycles are a fresh run's, the outputs TFLite Micro's golden, and the
// inferences after the first allocate nothing.
class SessionCorpus : public ::testing::TestWithParam<const char*> {};

TEST_P(SessionCorpus, EveryInferenceIsBitExactAndTheLaterOnesAllocateNothing) {
    const fs::path vectors = ETHOSU_VECTORS_DIR;
    if (!fs::exists(vectors / "index.csv")) GTEST_SKIP() << "test vectors not found at " << vectors;
    const std::string config = GetParam();
    int sessions = 0;
    for (const auto& entry : fully_npu_entries(vectors, config)) {
        const fs::path dir = vectors / entry.model;
        if (!fs::exists(dir / "golden" / "seed2.out0.bin")) continue;  // TFLM could not run it: no golden
        SCOPED_TRACE(entry.model);
        const auto model = load_model((dir / config / "model_vela.tflite").string(), {});
        auto golden = [&](int seed, const char* kind, size_t k) {
            return read_file_bytes(dir / "golden" / fmt::format("seed{}.{}{}.bin", seed, kind, k));
        };
        ModelSession session(*model);
        bool first = true;
        for (int seed : {1, 2, 1}) {
            SCOPED_TRACE(seed);
            std::vector<std::vector<uint8_t>> inputs;
            for (size_t k = 0; k < model->inputs.size(); ++k) inputs.push_back(golden(seed, "in", k));
            const uint64_t allocated = allocations_of(session, inputs);
            EXPECT_TRUE(first || allocated == 0) << allocated << " allocations in a later inference";
            const RunResult fresh = run_model(*model, inputs);
            EXPECT_EQ(session.outputs(), fresh.outputs);
            EXPECT_EQ(session.timing()->totals.cycles, fresh.timing.at(0).totals.cycles);
            // The golden too, but for the corpus' one known int16 SUB difference (test_conformance.cc).
            if (entry.model != "sub_8x8x32_i16") {
                for (size_t k = 0; k < model->outputs.size(); ++k) EXPECT_EQ(session.outputs().at(k), golden(seed, "out", k));
            }
            first = false;
        }
        ++sessions;
    }
    EXPECT_GT(sessions, 50);
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, SessionCorpus,
                         ::testing::Values("ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u85-256",
                                           "ethos-u85-1024"),
                         ConfigTestName{});

}  // namespace
}  // namespace ethosu
