#pragma once
// Compressed weight and scale/bias streams of a kernel op, decoded into the plain layout
// the kernels consume. A model's weights are decoded once per load, not per inference.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "emulator/engine/depthwise.h"
#include "emulator/engine/gemm.h"
#include "emulator/engine/output_bytes.h"
#include "emulator/isa/decoded_op.h"
#include "emulator/isa/npu_config.h"

namespace ethosu {

// Weights of one CONV / DEPTHWISE / fully-connected (CONV 1x1) op.
struct OpWeights {
    int ofm_depth = 0;
    // The kernel taps Vela encoded: the programmed size (KERNEL_HEIGHT_M1 + 1) undilated,
    // (height - 1) / dilation_y + 1; the hardware spaces the taps by the dilation.
    int kernel_height = 0;
    int kernel_width = 0;
    int ifm_depth = 0;  // 1 for depthwise
    // OHWI order: values[((o * kernel_height + y) * kernel_width + x) * ifm_depth + i].
    // Signed 9-bit range (the encoder folded any weight zero point in already).
    std::vector<int16_t> values;
    // Per OFM channel, from the scale/bias records; empty when the op has no scale stream
    // (global OFM_SCALE, no bias).
    std::vector<int64_t> bias;
    std::vector<uint32_t> scale;
    std::vector<int32_t> shift;  // 32 bits wide like scale: the output stage vectorises without mixing widths
    // The output stage's closed form of each channel's rounding (output_pipeline.cc), set by
    // tabulate_output_rounding: 2^(shift - 1); DBL's extra 2^30 once the shift passes bit 31 (0
    // below); the shift, 64 bits wide like the product it shifts. closed_form: every channel's
    // scale is below 2^31 and its shift within 1..62, which the form needs.
    std::vector<int64_t> rounding_half, double_nudge, shift_wide;
    bool closed_form = false;
    ByteScaling byte_scaling;  // the same form for 8-bit OFMs, as output_bytes.h's kernels take it
    // The fast path's layouts of the values: CONV for gemm_int16, DEPTHWISE for depthwise_int16.
    GemmWeights gemm;
    DepthwiseWeights depthwise;

    int16_t at(int o, int y, int x, int i) const {
        return values[((static_cast<size_t>(o) * kernel_height + y) * kernel_width + x) * ifm_depth + i];
    }
};

// Fills w's closed-form rounding tables from its scale and shift (after they change).
void tabulate_output_rounding(OpWeights& w);

// Maps one stream (region, byte offset, length) to its bytes; the caller bounds-checks and
// throws ethosu::Error naming the op when the stream lies outside its region.
using StreamFetch = std::function<std::span<const uint8_t>(const Stream&)>;

// Decodes op.kernel().weights and op.kernel().scales of a CONV or DEPTHWISE op for the given configuration
// (U55/U65; U85 is refused). Each core's weight stream must decode to exactly the count of
// Vela's traversal for the op's shape, OFM block depth, weight order, dilation, IFM precision
// and the configuration's micro-block.
// Throws ethosu::Error (source, op.offset, field) for a stream that ends early, a slice header
// that is invalid, or a weight or scale count that does not match the op's shape.
OpWeights decode_op_weights(const DecodedOp& op, const NpuConfig& config, const StreamFetch& fetch,
                            const std::string& source);

// What decoding a CONV's or DEPTHWISE's weights needs of the op and configuration alone, before
// any stream byte: a weight stream, a kernel, OFM block and dilation the traversal can walk, and
// on U85 micro-blocks of the configuration the OFM block is made of. Throws ethosu::Error (source,
// op.offset, field). validate() makes these checks for every run mode; the decoders make them too,
// for callers that decode on their own.
void check_weight_layout(const DecodedOp& op, const NpuConfig& config, const std::string& source);

// Decoded weights larger than this are not held whole in a run of its own: a U55/U65 CONV with
// one weight stream decodes them a group of OFM blocks at a time (ConvWeightGroups).
constexpr uint64_t kLargeLayerBytes = 512 * 1024;

// A CONV's weights a group of whole OFM blocks at a time (U55/U65, one weight stream): Vela's
// traversal visits the OFM blocks in order, so each group decodes as the stream reaches it and a
// large layer is never held whole. Errors as decode_op_weights.
class ConvWeightGroups {
public:
    // Whether the op is such a CONV and its decoded weights exceed kLargeLayerBytes.
    static bool applies(const DecodedOp& op, const NpuConfig& config);

    ConvWeightGroups(const DecodedOp& op, const NpuConfig& config, const StreamFetch& fetch,
                     const std::string& source);
    ~ConvWeightGroups();
    // Decodes the next group of at least `channels` OFM channels (whole blocks) into `out`:
    // channels [first(), first() + out.ofm_depth), with their scale/bias records. False once every
    // channel is done, when the stream must hold nothing more.
    bool next(int channels, OpWeights& out);
    int first() const { return first_; }
    // Bytes of the weight stream the groups so far were decoded from.
    uint64_t stream_bytes_read() const;

private:
    struct State;
    std::unique_ptr<State> state_;
    int first_ = 0;
};

// The compressed weight bitstream alone (U55/U65 format, U85 "SWD"): the signed weight
// values in stream order, across every slice and end-of-stream marker up to the end of the span.
// Throws ethosu::Error with the byte offset (base_offset + position in the span) for a stream that
// ends inside a slice or an invalid slice header. A zero run costs a unary bit per 8 zeros at
// most, so the output is bounded by 64 values per input byte. expected_values, the count the op
// needs, sizes the output once (within that bound, with room for Vela's channel padding), so a
// large layer is not grown by doubling.
std::vector<int16_t> decode_weight_bitstream(std::span<const uint8_t> stream, const std::string& source,
                                             uint64_t base_offset, uint64_t expected_values = 0);
constexpr uint64_t kMaxValuesPerByte = 64;

// The same bitstream a slice at a time, so that a large layer's values can be placed as they are
// decoded instead of being held twice. Throws as decode_weight_bitstream does.
class WeightBitstreamReader {
public:
    WeightBitstreamReader(std::span<const uint8_t> stream, const std::string& source, uint64_t base_offset);
    ~WeightBitstreamReader();
    // Replaces `out` with the next slice's values; false at the end of the stream.
    bool next_slice(std::vector<int16_t>& out);
    // Appends the next slice's values to `out`; false at the end of the stream.
    bool append_slice(std::vector<int16_t>& out);
    // Bytes of the stream the slices so far were decoded from.
    uint64_t bytes_read() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace ethosu
