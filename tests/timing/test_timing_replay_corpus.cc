// A host advancing the timing model step by step (TimingReplay) gets exactly the whole-stream
// timeline and totals, whatever its steps: one cycle, random, event by event, op by op, on every
// fully-NPU stream of the corpus on a U55, a U65 and a U85.

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <random>

#include "frontend/runner/run_model.h"
#include "tests/config_test_name.h"
#include "tests/corpus_index.h"
#include "tests/timing/timing_compare.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

using timing_test::expect_same_op;
using timing_test::expect_same_result;

// Advances the replay once; false when it has nothing left to advance to.
using Step = std::function<bool(TimingReplay&)>;

// Replays the stream with `step` until no event is left, checking after every step that the ops
// issued are the batch's first ones, exactly those the command processor reached by now(). Steps
// that stop at events (or cycle by cycle) end at the run's last cycle; others may step past it.
void expect_steps_give_batch(const TimingModel& model, const DecodedStream& stream, const TimingResult& batch,
                             const Step& step, bool may_step_past_end = false) {
    TimingReplay replay(model, stream);
    size_t checked = 0;
    while (step(replay)) {
        const std::vector<OpTiming>& ops = replay.result().ops;
        ASSERT_LE(ops.size(), batch.ops.size());
        for (; checked < ops.size(); ++checked) expect_same_op(ops[checked], batch.ops[checked]);
        if (!ops.empty()) {
            ASSERT_LE(ops.back().issue, replay.now());
        }
        if (ops.size() < batch.ops.size()) {
            ASSERT_GT(batch.ops[ops.size()].issue, replay.now());
        }
        if (const auto next = replay.next_event()) {
            ASSERT_GT(*next, replay.now());
        }
    }
    EXPECT_TRUE(replay.issued_all());
    if (may_step_past_end) EXPECT_GE(replay.now(), batch.totals.cycles);
    else EXPECT_EQ(replay.now(), batch.totals.cycles);
    expect_same_result(std::move(replay).finish(), batch);
}

bool one_cycle(TimingReplay& r) {
    if (!r.next_event()) return false;
    r.advance_to(r.now() + 1);
    return true;
}

bool next_event(TimingReplay& r) { return r.advance_to_next_event(); }

// Steps of 1 to twice the batch's mean cycles per op, and now and then one of up to a tenth of the run.
Step random_steps(const TimingResult& batch, unsigned seed) {
    auto rng = std::make_shared<std::mt19937_64>(seed);
    const int64_t mean = std::max<int64_t>(1, batch.totals.cycles / std::max<int64_t>(1, int64_t(batch.ops.size())));
    const int64_t long_jump = std::max<int64_t>(1, batch.totals.cycles / 10);
    return [rng, mean, long_jump](TimingReplay& r) {
        if (!r.next_event()) return false;
        const bool jump = (*rng)() % 16 == 0;
        r.advance_to(r.now() + 1 + int64_t((*rng)() % uint64_t(jump ? long_jump : 2 * mean)));
        return true;
    };
}

// To each op's issue in turn, then event by event to the end.
Step op_by_op(const TimingResult& batch) {
    auto next_op = std::make_shared<size_t>(0);
    return [&batch, next_op](TimingReplay& r) {
        if (*next_op < batch.ops.size()) {
            r.advance_to(batch.ops[*next_op].issue);
            EXPECT_EQ(r.result().ops.size(), ++*next_op);
            return true;
        }
        return r.advance_to_next_event();
    };
}

class TimingReplayCorpus : public ::testing::TestWithParam<const char*> {};

TEST_P(TimingReplayCorpus, AnyStepsGiveTheWholeStreamsTimeline) {
    const fs::path vectors = ETHOSU_VECTORS_DIR;
    if (!fs::exists(vectors / "index.csv")) GTEST_SKIP() << "test vectors not found at " << vectors;
    const std::string config = GetParam();
    int streams = 0;
    int64_t ops = 0, cycles_one_by_one = 0;
    for (const auto& row : fully_npu_entries(vectors, config)) {
        SCOPED_TRACE(row.model);
        const auto model = load_model((vectors / row.model / config / "model_vela.tflite").string(), {});
        const RunResult run = run_model(*model, {}, {.pipeline = {.execute = false, .timing = false}});
        for (const DecodedStream& stream : run.streams) {
            const TimingModel timing(model->config, run.memory, region_memories(run.memory, {}), row.model);
            const TimingResult batch = timing.run(stream);
            ASSERT_FALSE(batch.ops.empty());
            expect_steps_give_batch(timing, stream, batch, next_event);
            expect_steps_give_batch(timing, stream, batch, op_by_op(batch));
            expect_steps_give_batch(timing, stream, batch, random_steps(batch, 1), true);
            expect_steps_give_batch(timing, stream, batch, random_steps(batch, 2), true);
            // One cycle at a time costs a step per cycle: the streams of up to ten million cycles.
            if (batch.totals.cycles <= 10'000'000) {
                expect_steps_give_batch(timing, stream, batch, one_cycle);
                cycles_one_by_one += batch.totals.cycles;
            }
            ++streams;
            ops += int64_t(batch.ops.size());
        }
        if (HasFatalFailure()) return;
    }
    std::cout << "[ replay ] " << config << ": " << streams << " streams, " << ops << " ops, "
              << cycles_one_by_one << " cycles stepped one at a time\n";
    EXPECT_GT(streams, 0);
}

INSTANTIATE_TEST_SUITE_P(Corpus, TimingReplayCorpus, ::testing::Values("ethos-u55-128", "ethos-u65-256", "ethos-u85-256"),
                         ConfigTestName{});

}  // namespace
}  // namespace ethosu
