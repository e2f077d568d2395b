#pragma once
// Test parameters that are NPU configurations: the names from the configuration table, and the
// test-name suffix for one ("ethos-u55-128" -> "ethos_u55_128").

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "emulator/isa/decoded_op.h"
#include "emulator/isa/npu_config.h"

namespace ethosu {

struct ConfigTestName {
    template <typename Name>  // const char* or std::string
    std::string operator()(const ::testing::TestParamInfo<Name>& info) const {
        std::string name = info.param;
        for (char& c : name)
            if (c == '-') c = '_';
        return name;
    }
};

// The names of the configurations a cost model times (U55: U55 and U65), in table order.
inline std::vector<std::string> config_names(CostModel model) {
    std::vector<std::string> names;
    for (const NpuConfig& npu : all_npu_configs())
        if (npu.traits().cost_model == model) names.emplace_back(npu.name);
    return names;
}

// The ACC_FORMAT.microblock value that selects a micro-block of this height and width.
inline std::optional<MicroBlock> micro_block_code(const MicroBlockShape& u) {
    for (const MicroBlock m : {MicroBlock::U1x1, MicroBlock::U1x2, MicroBlock::U1x4, MicroBlock::U2x2, MicroBlock::U2x4,
                               MicroBlock::U4x4})
        if (micro_block_height(m) == u.height && micro_block_width(m) == u.width) return m;
    return std::nullopt;
}

}  // namespace ethosu
