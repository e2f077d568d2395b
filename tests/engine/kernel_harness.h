#pragma once
// Test-only: builds single kernel ops the way Vela would program them, with the project's
// CommandStreamBuilder and the test weight encoder, runs them on the Executor and reads the
// OFM back. Feature maps are placed and read with this file's own addressing (NHWC or NHCWB16,
// one or four tiles), not the memory layer's.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/engine/stream_helpers.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/decoded_op.h"
#include "emulator/isa/npu_config.h"

namespace ethosu::kernel_test {

// A plain NHWC tensor of integers.
struct Tensor {
    int height = 0, width = 0, depth = 0;
    Precision precision;
    std::vector<int64_t> values;

    Tensor() = default;
    Tensor(int h, int w, int c, Precision p)
        : height(h), width(w), depth(c), precision(p), values(static_cast<size_t>(h) * w * c) {}
    int64_t& at(int y, int x, int c) { return values[(static_cast<size_t>(y) * width + x) * depth + c]; }
    int64_t at(int y, int x, int c) const { return values[(static_cast<size_t>(y) * width + x) * depth + c]; }
};

int64_t type_min(const Precision& p);
int64_t type_max(const Precision& p);

// A tensor of values spread over the whole range of its type, extremes included.
Tensor random_tensor(int h, int w, int c, Precision p, uint32_t seed);

struct Layout {
    DataFormat format = DataFormat::NHWC;
    bool four_tiles = false;  // split in the middle of width and height (needs 2x2 or more)
    int32_t zero_point = 0;
};

// Where a feature map sits in the SRAM region, as its registers describe it.
struct Placement {
    int height = 0, width = 0, depth = 0;
    Precision precision;
    Layout layout;
    std::array<uint64_t, 4> tile_base{};
    int width0 = 0, height0 = 0, height1 = 0;
    int64_t stride_x = 0, stride_y = 0, stride_c = 0;
};

// Per OFM channel: bias and the scale/shift of the output stage.
struct ChannelScale {
    int64_t bias = 0;
    uint32_t scale = 0;
    int shift = 0;
};

// OHWI weights of a CONV / DEPTHWISE op (depthwise: I = 1), values in -255..255.
struct Weights {
    int ofm_depth = 0, kernel_height = 1, kernel_width = 1, ifm_depth = 1;
    std::vector<int16_t> values;
    int16_t& at(int o, int y, int x, int i) {
        return values[((static_cast<size_t>(o) * kernel_height + y) * kernel_width + x) * ifm_depth + i];
    }
    int16_t at(int o, int y, int x, int i) const {
        return values[((static_cast<size_t>(o) * kernel_height + y) * kernel_width + x) * ifm_depth + i];
    }
};

// How the weights are traversed in the stream (registers the encoder must agree with).
struct WeightTraversal {
    bool depthwise = false;
    bool part_kernel_first = false;
    int ifm_bits = 8;
    int ofm_block_depth = 16;
    int dilation_x = 1, dilation_y = 1;
};

// The block registers of an op: OFM block and the SHRAM layout (U55/U65: IFM buffer end,
// accumulator start and IFM2 buffer start, in KB). The defaults are a 4x4 block.
struct BlockConfig {
    int height = 4, width = 4, depth = 16;
    int ifm_ib_end = 8, ab_start = 16, ifm2_ib_start = 8;
};

// Region numbers the rig maps.
using test_streams::kLutRegion;
using test_streams::kSramRegion;
using test_streams::kWeightRegion;

class Rig {
public:
    explicit Rig(const char* config_name);

    const NpuConfig& config() const { return config_; }
    CommandStreamBuilder& stream() { return stream_; }

    // Reserves SRAM for a feature map and writes t into it; reserve leaves the marker byte the
    // SRAM starts with, so OFM elements an op fails to write show up.
    Placement place(const Tensor& t, const Layout& layout);
    Placement reserve(int height, int width, int depth, Precision p, const Layout& layout);
    Tensor read(const Placement& p) const;

    // Feature-map registers (IFM also gets IFM_DEPTH_M1; OFM its width/height/depth).
    // ifm_scale_mode is the U55/U65 elementwise IFM_PRECISION.scale_mode; U85 has neither it nor
    // OFM_PRECISION.round_mode (round is then ignored: U85 rounds as OFM_SCALE says).
    void emit_ifm(const Placement& p, int ifm_scale_mode = 0);
    void emit_ifm2(const Placement& p);
    void emit_ofm(const Placement& p, RoundMode round, bool global_scale);

    // Encodes the weights and per-channel scales for this configuration's cores, appends them to
    // the weight region and emits the stream registers.
    void emit_weights(const Weights& w, const std::vector<ChannelScale>& scales, const WeightTraversal& t);
    // Appends a LUT image (256 entries) to the LUT region; returns its offset there.
    uint64_t add_lut(const std::vector<uint8_t>& bytes);
    // DMA from the LUT region into SHRAM LUT slot `slot`; returns the offset of its NPU_OP_DMA_START.
    uint32_t emit_lut_dma(uint64_t lut_offset, int slot, uint64_t length);

    // Kernel, padding, activation bounds, block registers common to kernel ops.
    void emit_kernel(int height, int width, int stride_x, int stride_y, int dilation_x, int dilation_y,
                     bool part_kernel_first);
    void emit_padding(int top, int left, int bottom, int right, UpscaleMode upscale = UpscaleMode::None);
    void emit_activation(int function, int64_t clip_min, int64_t clip_max);
    // Block registers, and on U65 PARALLEL_MODE (1 on the dual-core U65-512, for every kernel op
    // as Vela 3.10/4.1 emit it).
    void emit_block(const BlockConfig& block);
    void emit_block(int ofm_block_depth) { emit_block(BlockConfig{.depth = ofm_block_depth}); }

    // Runs the stream (with OP_STOP appended) on a fresh address space; decodes strictly.
    void run(const WorkLimits& limits = {});

    std::vector<uint8_t>& sram() { return sram_; }
    std::vector<uint8_t>& weight_bytes() { return weights_; }
    std::vector<uint8_t>& lut_bytes() { return luts_; }
    // Byte offset of the next command to be emitted (tests note it before an NPU_OP_*).
    uint32_t next_offset() const { return static_cast<uint32_t>(stream_.words().size() * 4); }

private:
    void emit_tile_bases(isa::Cmd c0, isa::Cmd c1, isa::Cmd c2, isa::Cmd c3, const Placement& p);
    uint64_t address(const Placement& p, int y, int x, int c) const;

    NpuConfig config_;
    CommandStreamBuilder stream_;
    std::vector<uint8_t> sram_;
    std::vector<uint8_t> weights_;
    std::vector<uint8_t> luts_;
    uint64_t sram_used_ = 0;
};

// An 8-bit TABLE_n activation on a 1x1 MAX pool of a random 3x4x5 int8 IFM; out = LUT[value + 128].
struct LutOp {
    uint32_t offset = 0;  // of its NPU_OP_POOL
    Tensor in;
    Placement ofm;

    Tensor expected(const std::vector<uint8_t>& lut) const;
};
LutOp emit_lut_pool(Rig& rig, int table);

}  // namespace ethosu::kernel_test
