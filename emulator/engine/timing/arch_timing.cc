#include "emulator/engine/timing/arch_timing.h"

#include <stdexcept>
#include <string>

namespace ethosu {
namespace {

// Block3 is {height, width, depth}.
constexpr U55TimingRow kU55Rows[] = {
    {"ethos-u55-32", 32, 1, {1, 1, 4}, {1, 1, 8}, 16,
     {2.0, 3.0, 3.0, 3.0, 4.0, 6.0, 1.0, 2.0}, {1.0, 1.0, 0.0}},
    {"ethos-u55-64", 64, 1, {1, 1, 8}, {1, 1, 8}, 16,
     {1.0, 1.5, 1.5, 1.5, 2.0, 3.0, 0.5, 1.0}, {1.0, 1.0, 0.0}},
    {"ethos-u55-128", 128, 1, {1, 2, 8}, {1, 2, 8}, 24,
     {0.75, 1.25, 0.75, 0.75, 1.0, 1.5, 0.25, 0.5}, {1.0, 0.5, 0.0}},
    {"ethos-u55-256", 256, 1, {2, 2, 8}, {2, 2, 8}, 48,
     {0.625, 1.125, 0.5, 0.375, 0.5, 0.75, 0.125, 0.25}, {1.0, 0.25, 0.0}},
    {"ethos-u65-256", 256, 1, {2, 2, 8}, {2, 2, 8}, 48,
     {0.625, 1.125, 0.5, 0.375, 0.5, 0.75, 0.125, 0.25}, {1.0, 0.25, 0.0}},
    // Two 256-MAC cores; the per-element costs halve.
    {"ethos-u65-512", 512, 2, {2, 2, 8}, {2, 2, 8}, 48,
     {0.3125, 0.5625, 0.25, 0.1875, 0.25, 0.375, 0.0625, 0.125}, {0.5, 0.125, 0.0}},
};

constexpr U85TimingRow kU85Rows[] = {
    {"ethos-u85-128", 128, 1, {{{1, 2, 8}, {1, 1, 16}, {}}}, 2, {1, 2, 8}, 8192, 8192, 2048, 768, 1, 0,
     {64, 64, 128, 128, 104, 16}, {0.5, 0.5, 0.5, 1.0, 1.0, 1.0}, {0.5, 1.0}},
    {"ethos-u85-256", 256, 1, {{{1, 2, 16}, {1, 4, 8}, {2, 2, 8}}}, 3, {2, 2, 8}, 16384, 16384, 2048, 1536, 1, 0,
     {104, 104, 128, 128, 128, 16}, {0.25, 0.25, 0.25, 0.5, 0.5, 0.5}, {0.25, 0.5}},
    {"ethos-u85-512", 512, 2, {{{2, 2, 16}, {1, 4, 16}, {}}}, 2, {2, 2, 16}, 16384, 32768, 4096, 3072, 1, 0,
     {128, 128, 256, 256, 128, 16}, {0.125, 0.125, 0.25, 0.5, 0.25, 0.25}, {0.125, 0.25}},
    {"ethos-u85-1024", 1024, 4, {{{2, 2, 32}, {1, 4, 32}, {2, 4, 16}}}, 3, {4, 2, 16}, 16384, 65536, 4096, 6144, 1, 1,
     {256, 256, 416, 208, 256, 16}, {0.0625, 0.125, 0.25, 0.5, 0.125, 0.25}, {0.0625, 0.125}},
    {"ethos-u85-2048", 2048, 4, {{{2, 2, 64}, {1, 4, 64}, {4, 4, 16}}}, 3, {4, 4, 16}, 32768, 131072, 8192, 12288, 2, 1,
     {256, 256, 512, 256, 256, 16}, {0.03125, 0.0625, 0.125, 0.25, 0.0625, 0.125}, {0.03125, 0.0625}},
};

template <typename Row>
const Row& find_row(std::span<const Row> rows, const NpuConfig& npu) {
    for (const auto& r : rows)
        if (r.config == npu.name) return r;
    throw std::out_of_range("no timing table row for " + std::string(npu.name));
}

}  // namespace

std::span<const U55TimingRow> u55_timing_table() { return kU55Rows; }
std::span<const U85TimingRow> u85_timing_table() { return kU85Rows; }
const U55TimingRow& u55_timing(const NpuConfig& npu) { return find_row(u55_timing_table(), npu); }
const U85TimingRow& u85_timing(const NpuConfig& npu) { return find_row(u85_timing_table(), npu); }

}  // namespace ethosu
