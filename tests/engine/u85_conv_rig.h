#pragma once
// Test-only: U85 CONV ops built register by register, run on the Executor, and a plain
// convolution loop with TFLite's requantization to compare them with. Feature maps are NHWC in
// one SRAM region; weight and scale streams in a second region.

#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "emulator/isa/builder.h"
#include "emulator/isa/decoded_op.h"
#include "emulator/isa/npu_config.h"

namespace ethosu::u85_conv_test {

struct FeatureMap8 {
    int height = 0, width = 0, depth = 0;
    int32_t zero_point = 0;
    std::vector<int8_t> values;  // NHWC
    int8_t at(int y, int x, int c) const {
        return values[(static_cast<size_t>(y) * width + x) * depth + static_cast<size_t>(c)];
    }
};

// A feature map in SRAM (NHWC, dense).
struct Place {
    uint64_t offset = 0;
    int height = 0, width = 0, depth = 0;
    Precision precision;
    int32_t zero_point = 0;
};

struct Geometry {
    int ofm_height = 0, ofm_width = 0;
    Padding pad;
};
// TFLite's SAME padding.
Geometry same_padding(int height, int width, int kernel_h, int kernel_w, int stride);

// Per OFM channel: bias and TFLite's multiplier (Q31) and shift exponent.
struct ChannelScale {
    int64_t bias = 0;
    int32_t multiplier = 0;
    int shift = 0;
};
std::vector<ChannelScale> random_scales(int channels, std::mt19937& rng);

struct StreamRef {
    uint64_t offset = 0, length = 0;
};

struct ConvRegs {
    Place ifm, ofm;
    bool has_ifm2 = false;  // IFM2 registers: the accumulator source or the weights
    Place ifm2;
    bool weights_from_ifm2 = false;
    int pool = -1;           // NPU_OP_POOL of this mode instead of NPU_OP_CONV (no weights)
    bool depthwise = false;  // NPU_OP_DEPTHWISE instead of NPU_OP_CONV
    int activation = 0;      // NPU_SET_ACTIVATION.activation_function
    std::optional<std::pair<int64_t, int64_t>> clip;  // ACTIVATION_MIN/MAX; default the OFM type's range
    int kernel_h = 1, kernel_w = 1, stride = 1;
    Padding pad;
    bool part_kernel_first = false, fast = false, sparse = false;
    std::vector<StreamRef> weights;  // one per weight decoder, or one fast stream
    bool global_scale = false;       // OFM_SCALE instead of a scale stream
    StreamRef scales;
    uint32_t ofm_scale = 0;  // OFM_SCALE scale and shift
    int ofm_shift = 0;
    int microblock = 1;
    int ofm_block_depth = 16;
    int acc_format = 0, acc_input = 0, acc_output = 0;  // NPU_SET_ACC_FORMAT fields
};

class Rig {
public:
    static constexpr Precision kInt8{true, 8};
    static constexpr Precision kInt16{true, 16};
    static constexpr Precision kInt32{true, 32};
    static constexpr Precision kInt64{true, 64};

    explicit Rig(const char* config_name);
    const NpuConfig& config() const { return config_; }

    FeatureMap8 random_ifm(int height, int width, int depth, int32_t zero_point, std::mt19937& rng) const;
    Place place(const FeatureMap8& fm);
    // Wide values (int32 / int64 elements).
    Place place_wide(int height, int width, int depth, Precision p, const std::vector<int64_t>& values);
    Place reserve(int height, int width, int depth, Precision p, int32_t zero_point);

    std::vector<StreamRef> add_weights(const std::vector<std::vector<uint8_t>>& streams);
    // Records for the channels, zero records up to Vela's count (a multiple of the micro-block
    // depth rounded up to 16).
    StreamRef add_scales(const std::vector<ChannelScale>& scales, int ofm_ublock_depth, bool acc48 = false);

    // Copies a table into the LUT RAM at byte 0 (a DMA from the weight region).
    void load_lut(const std::vector<uint8_t>& table);
    // Emits every register of the op, then NPU_OP_CONV (or POOL, DEPTHWISE); returns the op's offset.
    uint32_t emit_conv(const ConvRegs& r);
    void run();
    const std::vector<uint32_t>& words() const { return stream_.words(); }

    std::vector<int8_t> read8(const Place& p) const;
    std::vector<int64_t> read_wide(const Place& p) const;

private:
    void emit_feature_map(bool ofm, const Place& p);

    NpuConfig config_;
    CommandStreamBuilder stream_;
    std::vector<uint8_t> sram_;
    std::vector<uint8_t> weights_;
    uint64_t sram_used_ = 0;
};

// The raw sums of a CONV (IFM minus its zero point, times the weights) per OFM element, NHWC.
std::vector<int64_t> plain_sums(const FeatureMap8& ifm, const std::vector<int16_t>& ohwi, int ofm_depth, int kernel_h,
                                int kernel_w, int stride, const Geometry& g);
// TFLite's int8 output: (sum + bias) requantized, plus the zero point, clamped.
std::vector<int8_t> requantize(const std::vector<int64_t>& sums, const std::vector<ChannelScale>& scales,
                               int32_t zero_point);
std::vector<int8_t> plain_conv(const FeatureMap8& ifm, const std::vector<int16_t>& ohwi,
                               const std::vector<ChannelScale>& scales, int ofm_depth, int kernel_h, int kernel_w,
                               int stride, const Geometry& g, int32_t ofm_zero_point);

}  // namespace ethosu::u85_conv_test
