#pragma once
// Per-element output stage of an op: scale and round the accumulator, add the OFM zero
// point, clamp, and look up the LUT when the activation is a table; or the built-in sigmoid or
// tanh on the scaled value.

#include <cstdint>
#include <optional>

#include "emulator/engine/kernel_context.h"
#include "emulator/engine/lut_u85.h"
#include "emulator/engine/output_stage.h"
#include "emulator/isa/error.h"

namespace ethosu {

class OutputPipeline {
public:
    OutputPipeline(const DecodedOp& op, ExecutionContext& ctx);

    // weights: the op's per-channel bias/scale/shift when it has a scale stream, else nullptr.
    int64_t apply(int64_t acc, int channel, const OpWeights* weights) const;

    // apply() for OFM channels [0, count) of one element, from their accumulators.
    void apply_channels(const int32_t* acc, int count, const OpWeights* weights, int64_t* out) const;
    void apply_channels(const int64_t* acc, int count, const OpWeights* weights, int64_t* out) const;

    // apply_channels for an 8-bit OFM, straight to its bytes (output_bytes.h): channels [0, count)
    // from `to` on, consecutive within each 16-channel brick and `brick_step` bytes from one brick
    // to the next (channel 0 is channel `first` of the OFM, which fixes where bricks end). acc is
    // read up to count rounded up to kByteScalingBlock (the fast path's sums are padded that far).
    // False, with any of the bytes written, where this does not apply (another output stage, a
    // sum outside the form, a CPU without the hand-vectorised kernel): the caller then takes
    // apply_channels.
    bool store_channels_as_bytes(const int32_t* acc, int count, const OpWeights& weights, int first, uint8_t* to,
                                 int64_t brick_step) const;

    // From an already-scaled value (pooling, elementwise).
    int64_t finish(int64_t scaled) const;
    // finish() for count values, with what applies to all of them decided once.
    void finish_channels(const int64_t* scaled, int count, int64_t* out) const;

private:
    // Per-channel scale, no activation, no table, the clip range applied: the output stage the
    // fast paths (apply_channels' closed form, store_channels_as_bytes) compute.
    bool plain_per_channel_scaling() const;
    template <typename Acc>
    void apply_channels_as(const Acc* acc, int count, const OpWeights* weights, int64_t* out) const;
    void init_u85(const DecodedOp& op, ExecutionContext& ctx);

    const DecodedOp& op_;
    Range clip_;
    bool clip_enabled_ = true;
    std::span<const uint8_t> lut_;  // empty without a table activation
    bool lut_signed_index_ = true;
    int lut_entry_bytes_ = 1;
    std::optional<InterpolatingLut> interpolating_;  // U85 int16 LUT_SIGMOID / LUT_TANH
    bool s16_to_s32_ = false;                         // U85 LUT_S16_S32
};

}  // namespace ethosu
