#include "emulator/engine/output_pipeline.h"

#include <fmt/format.h>

#include <cstring>

#include "emulator/isa/error.h"

namespace ethosu {
namespace {

constexpr int kClipForceUint8 = 2;  // U55/U65 activation_clip_range
constexpr int kClipForceInt8 = 3;

}  // namespace

OutputPipeline::OutputPipeline(const DecodedOp& op, ExecutionContext& ctx) : op_(op), clip_(clip_range(op)) {
    const ErrorLocation where{ctx.source, op.offset, std::string(op_kind_name(op.kind))};
    const int ofm_bits = op.ofm.precision.bits;
    switch (op.output.activation) {
        case Activation::None:
            // ACTIVATION_MIN/MAX are 16-bit and do not clip 32-bit results (Vela's softmax relies on it).
            clip_enabled_ = ofm_bits <= 16;
            return;
        case Activation::Table:
            break;
        case Activation::Sigmoid:
        case Activation::Tanh:
            // Vela uses the built-in functions for 16-bit OFMs only (zero point 0); U85 has LUTs instead.
            if (ctx.config.generation == Generation::U85 || ofm_bits != 16 || op.ofm.zero_point != 0) {
                throw Error(where, "built-in TANH/SIGMOID activations are supported on U55/U65 16-bit OFMs "
                                   "with zero point 0 only");
            }
            return;
    }
    if (op.output.clip_range == kClipForceInt8) clip_ = {-128, 127};
    else if (op.output.clip_range == kClipForceUint8) clip_ = {0, 255};
    else if (ofm_bits != 8) throw Error(where, "interpolating 16-bit LUTs are not supported yet");
    lut_signed_index_ = op.output.clip_range == kClipForceInt8 || op.ofm.precision.is_signed;
    lut_entry_bytes_ = ofm_bits / 8;
    lut_ = ctx.shram.lut(op.output.lut_index);
    if (lut_.size() < 256u * lut_entry_bytes_) {
        throw Error(where, fmt::format("TABLE_{} with {}-byte entries runs past the LUT memory", op.output.lut_index,
                                       lut_entry_bytes_));
    }
}

int64_t OutputPipeline::apply(int64_t acc, int channel, const OpWeights* weights) const {
    const OutputStage& o = op_.output;
    int64_t scaled;
    if (weights && o.per_channel_scale) {
        scaled = scale_value(acc + weights->bias[channel], weights->scale[channel], weights->shift[channel], o.round);
    } else {
        scaled = scale_value(acc, o.global_scale.scale, o.global_scale.shift, o.round);
    }
    return finish(scaled);
}

int64_t OutputPipeline::finish(int64_t scaled) const {
    if (op_.output.activation == Activation::Sigmoid) return clamp(builtin_sigmoid(scaled), clip_);
    if (op_.output.activation == Activation::Tanh) return clamp(builtin_tanh(scaled), clip_);
    int64_t v = scaled + op_.ofm.zero_point;
    if (lut_.empty()) {
        if (clip_enabled_) return clamp(v, clip_);
        return clamp(v, precision_range(op_.ofm.precision));
    }
    // Table lookup: 256 entries indexed by the clipped 8-bit value (offset by 128 when signed),
    // each entry the width of the OFM element.
    v = clamp(v, clip_);
    const size_t index = static_cast<size_t>(lut_signed_index_ ? v + 128 : v);
    const uint8_t* entry = lut_.data() + index * lut_entry_bytes_;
    switch (lut_entry_bytes_) {
        case 1: return op_.ofm.precision.is_signed ? static_cast<int8_t>(*entry) : *entry;
        case 2: { int16_t e; std::memcpy(&e, entry, 2); return op_.ofm.precision.is_signed ? e : static_cast<uint16_t>(e); }
        default: { int32_t e; std::memcpy(&e, entry, 4); return e; }
    }
}

}  // namespace ethosu
