#include "emulator/engine/output_pipeline.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "emulator/engine/output_bytes.h"
#include "emulator/engine/simd.h"

namespace ethosu {
namespace {

// Per-channel scaling without an activation function, for whole pixels at a time: scale_value's
// 64-bit closed form (DBL, NATURAL), bias, zero point and clamp, written without branches so that
// it vectorises, the rounding terms and shifts tabulated per channel at decode (OpWeights::
// closed_form: every channel's scale and shift fit the form). Every channel is computed; false
// when any sum lies outside what this form covers (|sum| >= 2^30), and the caller then recomputes
// them all the general way. Within it, sum and scale are int32, whose product AVX2 takes in one
// instruction.
template <bool kDoubleSymmetric, typename Acc>
[[gnu::always_inline]] inline bool scale_channels_64(const Acc* acc, const OpWeights& w, int64_t zero_point, Range clip,
                                                      int count, int64_t* out) {
    constexpr int64_t kLimit = int64_t{1} << 30;
    const int64_t* bias = w.bias.data();
    const uint32_t* scale = w.scale.data();
    const int64_t* half = w.rounding_half.data();
    const int64_t* nudge = w.double_nudge.data();
    const int64_t* shift = w.shift_wide.data();
    uint64_t outside = 0;
    for (int i = 0; i < count; ++i) {
        const int64_t sum = acc[i] + bias[i];
        outside |= static_cast<uint64_t>(sum) + (kLimit - 1) >= static_cast<uint64_t>(2 * kLimit - 1);
        const int64_t round = kDoubleSymmetric ? half[i] + (sum >= 0 ? nudge[i] : -nudge[i]) : half[i];
        const int64_t product =
            int64_t{static_cast<int32_t>(sum)} * int64_t{static_cast<int32_t>(scale[i])} + round;
        out[i] = clamp((product >> shift[i]) + zero_point, clip);
    }
    return outside == 0;
}

template <typename Acc>
[[gnu::always_inline]] inline bool scale_channels_by_mode(const Acc* acc, const OpWeights& w, RoundMode round,
                                                          int64_t zero_point, Range clip, int count, int64_t* out) {
    if (round == RoundMode::DoubleSymmetric) return scale_channels_64<true>(acc, w, zero_point, clip, count, out);
    return scale_channels_64<false>(acc, w, zero_point, clip, count, out);
}

// One clone per accumulator type, not a template: clones of templates are a GCC extension.
ETHOSU_SIMD_CLONES bool scale_channels_fast(const int32_t* acc, const OpWeights& w, RoundMode round,
                                            int64_t zero_point, Range clip, int count, int64_t* out) {
    return scale_channels_by_mode(acc, w, round, zero_point, clip, count, out);
}
ETHOSU_SIMD_CLONES bool scale_channels_fast(const int64_t* acc, const OpWeights& w, RoundMode round,
                                            int64_t zero_point, Range clip, int count, int64_t* out) {
    return scale_channels_by_mode(acc, w, round, zero_point, clip, count, out);
}

}  // namespace

OutputPipeline::OutputPipeline(const DecodedOp& op, ExecutionContext& ctx) : op_(op), clip_(clip_range(op)) {
    const int ofm_bits = op.kernel().ofm.precision.bits;
    if (ctx.config.traits().activation_names_lut_type) {
        init_u85(op, ctx);
        return;
    }
    switch (op.kernel().output.activation) {
        case Activation::None:
            // ACTIVATION_MIN/MAX are 16-bit and do not clip 32-bit results (Vela's softmax relies on it).
            clip_enabled_ = ofm_bits <= 16;
            return;
        case Activation::Table:
            break;
        case Activation::Sigmoid:
        case Activation::Tanh:  // 16-bit OFMs with zero point 0 (validate())
            return;
    }
    if (op.kernel().output.clip_range == ClipRange::ForceInt8) clip_ = {-128, 127};
    else if (op.kernel().output.clip_range == ClipRange::ForceUint8) clip_ = {0, 255};
    lut_signed_index_ = op.kernel().output.clip_range == ClipRange::ForceInt8 || op.kernel().ofm.precision.is_signed;
    lut_entry_bytes_ = ofm_bits / 8;
    lut_ = ctx.shram.lut(op.kernel().output.lut_index);  // 8-bit results in the LUT memory (validate())
}

void OutputPipeline::init_u85(const DecodedOp& op, ExecutionContext& ctx) {
    const Range type = precision_range(op.kernel().ofm.precision);
    const Range bounds{op.kernel().output.clip_min, op.kernel().output.clip_max};
    const bool clip16 = op.kernel().output.clip_range != ClipRange::OfmType;  // ACTIVATION_MIN/MAX apply
    if (op.kernel().output.activation == Activation::None) {
        clip_ = clip16 && op.kernel().ofm.precision.bits <= 16 ? Range{std::max(bounds.min, type.min), std::min(bounds.max, type.max)}
                                                       : type;
        return;
    }
    // LUT element types: 8-bit input, 1-, 2- or 4-byte entries.
    Range input{-128, 127};
    lut_entry_bytes_ = entry_bytes(op.kernel().output.lut);
    switch (op.kernel().output.lut) {
        case LutType::U8U8: input = {0, 255}; break;
        case LutType::S8S8:
        case LutType::S8S16:
        case LutType::S8S32: break;
        case LutType::Tanh:
        case LutType::Sigmoid:
            interpolating_ = op.kernel().output.lut == LutType::Tanh ? InterpolatingLut::Tanh : InterpolatingLut::Sigmoid;
            lut_ = ctx.shram.lut(0);  // the 2 KB table fills the LUT RAM
            clip_ = clip16 ? Range{std::max(bounds.min, type.min), std::min(bounds.max, type.max)} : type;
            return;
        case LutType::S16S32: {  // the clipped int16 value indexes the interpolating table, table 0
            s16_to_s32_ = true;
            lut_ = ctx.shram.lut(0);
            const Range int16{INT16_MIN, INT16_MAX};
            clip_ = clip16 ? Range{std::max(bounds.min, int16.min), std::min(bounds.max, int16.max)} : int16;
            return;
        }
        case LutType::S16S16:
        case LutType::None: return;  // refused by validate()
    }
    lut_signed_index_ = input.min < 0;
    // validate() has refused a clip that misses the input range and a table past the LUT RAM.
    clip_ = clip16 ? Range{std::max(bounds.min, input.min), std::min(bounds.max, input.max)} : input;
    // Table n of a LUT of s bytes starts at n * s in the LUT RAM.
    lut_ = ctx.shram.lut(op.kernel().output.lut_index * lut_entry_bytes_);
}

int64_t OutputPipeline::apply(int64_t acc, int channel, const OpWeights* weights) const {
    const OutputStage& o = op_.kernel().output;
    int64_t scaled;
    if (weights && o.per_channel_scale) {
        scaled = scale_value(acc + weights->bias[channel], weights->scale[channel], weights->shift[channel], o.round);
    } else {
        scaled = scale_value(acc, o.global_scale.scale, o.global_scale.shift, o.round);
    }
    return finish(scaled);
}

void OutputPipeline::apply_channels(const int32_t* acc, int count, const OpWeights* weights, int64_t* out) const {
    apply_channels_as(acc, count, weights, out);
}

void OutputPipeline::apply_channels(const int64_t* acc, int count, const OpWeights* weights, int64_t* out) const {
    apply_channels_as(acc, count, weights, out);
}

template <typename Acc>
void OutputPipeline::apply_channels_as(const Acc* acc, int count, const OpWeights* weights, int64_t* out) const {
    const OutputStage& o = op_.kernel().output;
    if (weights && plain_per_channel_scaling()) {
        // The common case without an activation, with finish() inlined. Locals, because the stores to
        // out could alias members as far as the compiler knows.
        const int64_t zero_point = op_.kernel().ofm.zero_point;
        const Range clip = clip_;
        const RoundMode round = o.round;
        const int64_t* bias = weights->bias.data();
        const uint32_t* scale = weights->scale.data();
        const int32_t* shift = weights->shift.data();
        if (weights->closed_form && closed_form_rounding(round) &&
            scale_channels_fast(acc, *weights, round, zero_point, clip, count, out)) {
            return;
        }
        for (int i = 0; i < count; ++i)
            out[i] = clamp(add_zero_point(scale_value(acc[i] + bias[i], scale[i], shift[i], round), zero_point), clip);
    } else if (weights && o.per_channel_scale) {
        for (int i = 0; i < count; ++i) {
            const size_t c = static_cast<size_t>(i);
            out[i] = finish(scale_value(acc[i] + weights->bias[c], weights->scale[c], weights->shift[c], o.round));
        }
    } else {
        for (int i = 0; i < count; ++i)
            out[i] = finish(scale_value(acc[i], o.global_scale.scale, o.global_scale.shift, o.round));
    }
}

bool OutputPipeline::plain_per_channel_scaling() const {
    const OutputStage& o = op_.kernel().output;
    return o.per_channel_scale && o.activation == Activation::None && lut_.empty() && clip_enabled_;
}

bool OutputPipeline::store_channels_as_bytes(const int32_t* acc, int count, const OpWeights& weights, int first,
                                             uint8_t* to, int64_t brick_step) const {
    const OutputStage& o = op_.kernel().output;
    const ByteScalingKernel kernel = fast_byte_scaling();
    if (!kernel || !plain_per_channel_scaling() || !closed_form_rounding(o.round) || op_.kernel().ofm.precision.bits != 8 ||
        weights.byte_scaling.blocks * kByteScalingBlock < count) {
        return false;
    }
    const bool double_symmetric = o.round == RoundMode::DoubleSymmetric;
    const auto scale_blocks = [&](int first_block, int blocks, uint8_t* out, int64_t step) {
        return kernel(acc, weights.byte_scaling, double_symmetric, op_.kernel().ofm.zero_point, clip_, first_block, blocks, out,
                      step);
    };
    // Where channel 0 starts a brick, each whole block of 16 goes straight to its brick (NHWC:
    // brick_step 16, back to back); a last part block to a buffer, then its bytes to their place.
    if (first % kByteScalingBlock == 0) {
        const int whole = count / kByteScalingBlock, rest = count % kByteScalingBlock;
        if (whole > 0 && !scale_blocks(0, whole, to, brick_step)) return false;
        if (rest == 0) return true;
        uint8_t last[kByteScalingBlock];
        if (!scale_blocks(whole, 1, last, kByteScalingBlock)) return false;
        std::memcpy(to + whole * brick_step, last, static_cast<size_t>(rest));
        return true;
    }
    // Otherwise a run of blocks at a time into one buffer, then each brick's part to its place.
    constexpr int kRunBlocks = 16;
    uint8_t staged[kRunBlocks * kByteScalingBlock];
    for (int from = 0; from < count; from += kRunBlocks * kByteScalingBlock) {
        const int run = std::min(kRunBlocks * kByteScalingBlock, count - from);
        if (!scale_blocks(from / kByteScalingBlock, (run + kByteScalingBlock - 1) / kByteScalingBlock, staged,
                          kByteScalingBlock))
            return false;
        // OFM channel k's byte: its brick's start, then its place in the brick.
        for (int c = 0; c < run;) {
            const int k = first + from + c;
            const int n = brick_step == 16 ? run - c : std::min(run - c, 16 - k % 16);
            std::memcpy(to + (k / 16 - first / 16) * brick_step + k % 16 - first % 16, staged + c, static_cast<size_t>(n));
            c += n;
        }
    }
    return true;
}

void OutputPipeline::finish_channels(const int64_t* scaled, int count, int64_t* out) const {
    const Activation activation = op_.kernel().output.activation;
    if (activation == Activation::Sigmoid || activation == Activation::Tanh || !lut_.empty()) {
        for (int i = 0; i < count; ++i) out[i] = finish(scaled[i]);
        return;
    }
    // finish() without a table: zero point and clamp. Locals, as in apply_channels_as. Clamping
    // to the bounds less the zero point (each saturated) first keeps the sum in int64 and equals
    // clamp(add_zero_point(v, zero point), bounds), in a loop the compiler vectorises.
    const int64_t zero_point = op_.kernel().ofm.zero_point;
    const Range bounds = clip_enabled_ ? clip_ : precision_range(op_.kernel().ofm.precision);
    const Range before_zero_point{add_zero_point(bounds.min, -zero_point), add_zero_point(bounds.max, -zero_point)};
    for (int i = 0; i < count; ++i) out[i] = clamp(scaled[i], before_zero_point) + zero_point;
}

int64_t OutputPipeline::finish(int64_t scaled) const {
    if (op_.kernel().output.activation == Activation::Sigmoid) return clamp(builtin_sigmoid(scaled), clip_);
    if (op_.kernel().output.activation == Activation::Tanh) return clamp(builtin_tanh(scaled), clip_);
    int64_t v = add_zero_point(scaled, op_.kernel().ofm.zero_point);
    if (lut_.empty()) {
        if (clip_enabled_) return clamp(v, clip_);
        return clamp(v, precision_range(op_.kernel().ofm.precision));
    }
    if (interpolating_) return clamp(interpolate_lut(lut_, v, *interpolating_), clip_);
    if (s16_to_s32_) return clamp(interpolate_lut_s16_s32(lut_, clamp(v, clip_)), precision_range(op_.kernel().ofm.precision));
    // Table lookup: 256 entries indexed by the clipped 8-bit value (offset by 128 when signed),
    // each entry the width of the OFM element.
    v = clamp(v, clip_);
    const size_t index = static_cast<size_t>(lut_signed_index_ ? v + 128 : v);
    const uint8_t* entry = lut_.data() + index * lut_entry_bytes_;
    switch (lut_entry_bytes_) {
        case 1: return op_.kernel().ofm.precision.is_signed ? static_cast<int8_t>(*entry) : *entry;
        case 2: { int16_t e; std::memcpy(&e, entry, 2); return op_.kernel().ofm.precision.is_signed ? e : static_cast<uint16_t>(e); }
        default: { int32_t e; std::memcpy(&e, entry, 4); return e; }
    }
}

}  // namespace ethosu
