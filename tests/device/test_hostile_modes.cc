// Every hostile stream of ../shared/hostile (tests/cli/hostile_inputs.py runs each once through the
// CLI) run each of the three ways a stream runs: the full run, the timing-only run and the device
// model must each refuse it, at the same command and field with the same reason.

#include <gtest/gtest.h>

#include <filesystem>

#include "emulator/isa/error.h"
#include "tests/device/run_modes.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

struct HostileStream {
    const char* file;
    const char* npu;  // for bare command words; nullptr: the model names its configuration
};

// The reproducers that hold a command stream (not those refused while loading or by the CLI).
constexpr HostileStream kStreams[] = {
    {"op_conv_only.bin", "ethos-u55-128"},
    {"op_depthwise_only.bin", "ethos-u55-128"},
    {"op_pool_only.bin", "ethos-u55-128"},
    {"op_elementwise_only.bin", "ethos-u55-128"},
    {"ub_u55_cost_222.bin", "ethos-u55-128"},
    {"u85_accfmt_conv.bin", "ethos-u85-256"},
    {"act_relu_elementwise_min.bin", "ethos-u55-128"},
    {"ub_u55_cost_215.tflite", nullptr},
    {"ub_timing_model_131.npz", nullptr},
    {"ub_u85_cost_357.npz", nullptr},
    {"ub_op_cost_47.tflite", nullptr},
    {"ub_elementwise_109.tflite", nullptr},
    {"ub_conv_427_dw_ifm_b64.tflite", nullptr},
    {"ub_conv_430_u85.npz", nullptr},
    {"ub_pool_218_reducesum_b64.tflite", nullptr},
    {"mem_upscale_alias.npz", nullptr},
    {"mem_u85_chained_ofm_alias.npz", nullptr},
    {"cpu_dos_pool_stride0.npz", nullptr},
    {"cpu_dos_conv_alias_u55.npz", nullptr},
    {"loop_person_detect_u85.tflite", nullptr},
};

class HostileInEveryMode : public ::testing::TestWithParam<HostileStream> {};

TEST_P(HostileInEveryMode, RefusedAtTheSamePlace) {
    const fs::path path = fs::path(ETHOSU_HOSTILE_DIR) / GetParam().file;
    if (!fs::exists(path)) GTEST_SKIP() << "reproducer absent: " << path;
    LoadOptions load;
    if (GetParam().npu) load.npu = GetParam().npu;
    const auto model = load_model(path.string(), load);
    std::optional<test_modes::Refusal> full;
    for (const test_modes::Mode mode : test_modes::kModes) {
        SCOPED_TRACE(test_modes::mode_name(mode));
        const auto refusal = test_modes::run_in_mode(*model, mode);
        ASSERT_TRUE(refusal) << "the stream was accepted";
        if (mode == test_modes::Mode::Full) {
            full = refusal;
        } else if (mode == test_modes::Mode::TimingOnly) {
            EXPECT_EQ(refusal->offset, full->offset) << refusal->message;
            EXPECT_EQ(refusal->field, full->field) << refusal->message;
            EXPECT_EQ(refusal->message, full->message);
        } else {
            EXPECT_TRUE(test_modes::same_place_and_reason(refusal->message, full->message))
                << refusal->message << "\n  the full run's: " << full->message;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Reproducers, HostileInEveryMode, ::testing::ValuesIn(kStreams),
                         [](const ::testing::TestParamInfo<HostileStream>& info) {
                             std::string name = fs::path(info.param.file).stem().string();
                             for (char& c : name)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return name;
                         });

}  // namespace
}  // namespace ethosu
