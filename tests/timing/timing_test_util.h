#pragma once
// Hand-built decoded ops for timing tests: the cost functions and the timeline read DecodedOp
// records only, so tests build those directly.

#include <gtest/gtest.h>

#include <string>

#include "emulator/engine/timing/timing_model.h"
#include "emulator/isa/error.h"

namespace ethosu::timing_test {

// An NHWC (or NHCWB16) feature map of h x w x c elements in region, with contiguous strides.
inline FeatureMap feature_map(int h, int w, int c, int bits, int region, DataFormat format = DataFormat::NHWC) {
    FeatureMap fm;
    fm.region = region;
    fm.width = fm.width0 = w;
    fm.height = fm.height0 = fm.height1 = h;
    fm.depth = c;
    fm.precision = {true, bits};
    fm.format = format;
    const int bytes = bits / 8;
    if (format == DataFormat::NHWC) {
        fm.stride_c = bytes;
        fm.stride_x = int64_t{c} * bytes;
        fm.stride_y = int64_t{w} * c * bytes;
    } else {
        fm.stride_x = 16 * bytes;
        fm.stride_c = int64_t{w} * 16 * bytes;
        fm.stride_y = int64_t{w} * ((c + 15) / 16) * 16 * bytes;
    }
    return fm;
}

// Clamp to the full int8 range with the OFM zero point elsewhere: no fused activation.
inline void no_activation(DecodedOp& op) {
    op.kernel().output.clip_min = -128;
    op.kernel().output.clip_max = 127;
    op.kernel().ofm.zero_point = 0;
}
// A ReLU: the clamp starts at the OFM zero point.
inline void relu(DecodedOp& op) {
    op.kernel().output.clip_min = -128;
    op.kernel().output.clip_max = 127;
    op.kernel().ofm.zero_point = -128;
}

inline DecodedOp elementwise_add(int h, int w, int c, int bits, int ifm_region, int ofm_region, Block3 block) {
    DecodedOp op(OpKind::Elementwise);
    op.kernel().elementwise().mode = ElementwiseMode::Add;
    op.kernel().ifm = feature_map(h, w, c, bits, ifm_region);
    op.kernel().ifm2 = feature_map(h, w, c, bits, ifm_region);
    op.kernel().has_ifm2 = true;
    op.kernel().elementwise().operand_scaling = OperandScaling::Opa32;  // Vela's advanced scaling, for unequal input scales
    op.kernel().ofm = feature_map(h, w, c, bits, ofm_region);
    op.kernel().block.ofm_width = block.width;
    op.kernel().block.ofm_height = block.height;
    op.kernel().block.ofm_depth = block.depth;
    no_activation(op);
    return op;
}

// A 1x1 convolution, int8, depth-first weights in region 0 and scales after them.
inline DecodedOp conv_1x1(int h, int w, int ifm_depth, int ofm_depth, Block3 block) {
    DecodedOp op(OpKind::Conv);
    op.kernel().ifm = feature_map(h, w, ifm_depth, 8, 1);
    op.kernel().ofm = feature_map(h, w, ofm_depth, 8, 1);
    op.kernel().block.ofm_width = block.width;
    op.kernel().block.ofm_height = block.height;
    op.kernel().block.ofm_depth = block.depth;
    op.kernel().weights = {{0, 0, static_cast<uint64_t>(ifm_depth) * ofm_depth}};
    op.kernel().scales = {{0, static_cast<uint64_t>(ifm_depth) * ofm_depth, static_cast<uint64_t>(ofm_depth) * 10}};
    relu(op);
    return op;
}

// Runs fn, which must throw an ethosu::Error at the command offset `offset` naming `field`;
// returns the error's text ("" and a test failure when it does not throw).
template <typename Fn>
std::string expect_error_at(Fn&& fn, uint32_t offset, const std::string& field) {
    try {
        fn();
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, offset) << e.what();
        EXPECT_EQ(e.where().field, field) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "expected an error";
    return "";
}

inline CostContext cost_context(const NpuConfig& npu, const MemorySystem& memory) {
    return {npu, memory, region_memories(memory, {}), "test.bin"};
}

}  // namespace ethosu::timing_test
