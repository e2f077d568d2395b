#pragma once
// Test-name suffix for a parameter that is an NPU config name: "ethos-u55-128" -> "ethos_u55_128".

#include <gtest/gtest.h>

#include <string>

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

}  // namespace ethosu
