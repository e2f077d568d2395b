#include "emulator/engine/timing/op_cost.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "emulator/isa/error.h"

namespace ethosu {
namespace {

[[noreturn]] void figure_too_large(const CostContext& ctx, const DecodedOp& op, std::string_view what, const std::string& figure) {
    throw Error({ctx.source, op.offset, std::string(op_kind_name(op.kind)), OffsetKind::Command},
                fmt::format("its {} ({}) is beyond the timing model's range of 2^53: the op is far larger than any "
                            "NPU op can be",
                            what, figure),
                ErrorKind::LimitExceeded);
}

}  // namespace

int64_t cost_product(const CostContext& ctx, const DecodedOp& op, std::string_view what, std::initializer_list<int64_t> factors) {
    int64_t product = 1;
    for (const int64_t f : factors) {
        if (__builtin_mul_overflow(product, f, &product) || product > kMaxCostFigure)
            figure_too_large(ctx, op, what, fmt::format("a product of {}", fmt::join(factors, " x ")));
    }
    return product;
}

int64_t cost_figure(const CostContext& ctx, const DecodedOp& op, std::string_view what, double value) {
    // Also refuses NaN and infinity (a memory configured with no bandwidth).
    if (!(value >= 0 && value <= double(kMaxCostFigure))) figure_too_large(ctx, op, what, fmt::format("{}", value));
    return static_cast<int64_t>(value);
}

Block3 min3(const Block3& a, const Block3& b) {
    return {std::min(a.height, b.height), std::min(a.width, b.width), std::min(a.depth, b.depth)};
}

Block3 div_up3(const Block3& a, const Block3& b) {
    return {static_cast<int>(div_round_up(a.height, b.height)), static_cast<int>(div_round_up(a.width, b.width)),
            static_cast<int>(div_round_up(a.depth, b.depth))};
}

Block3 storage_rounded(Block3 s, DataFormat format) {
    if (format == DataFormat::NHCWB16) s.depth = static_cast<int>(round_up(s.depth, 16));
    return s;
}

Block3 undilated_kernel(const Kernel& k) {
    return {k.taps_height(), k.taps_width(), 1};
}

BlockBalance balance_block(double mac_block, double output_block, double ofm_blocks, int64_t ifm_block_cycles,
                           int64_t ofm_block_cycles) {
    const int64_t skew = ofm_blocks > 1 ? std::abs(ofm_block_cycles - ifm_block_cycles) : 0;
    const double issue = (double(skew) + mac_block + output_block) / 4;
    return {issue, std::max(mac_block, issue), std::max(output_block, issue)};
}

Block3 input_extent(const DecodedOp& op) {
    const FeatureMap& ofm = op.kernel().ofm;
    if (op.kind == OpKind::Elementwise) return {ofm.height, ofm.width, op.kernel().ifm.depth > 0 ? op.kernel().ifm.depth : ofm.depth};
    const Kernel& k = op.kernel().kernel;
    const int upscale = k.upscale == UpscaleMode::None ? 1 : 2;
    auto extent = [&](int out, int stride, int kernel, int pad) {
        return std::max(1, ((out - 1) * stride + kernel - pad + upscale - 1) / upscale);
    };
    return {extent(ofm.height, k.stride_y, k.height, k.padding.top + k.padding.bottom),
            extent(ofm.width, k.stride_x, k.width, k.padding.left + k.padding.right), std::max(1, op.kernel().ifm.depth)};
}

Block3 shape_of(const FeatureMap& fm) { return {fm.height, fm.width, fm.depth}; }

Block3 configured_ofm_block(const KernelOp& op) {
    return {std::max(1, op.block.ofm_height), std::max(1, op.block.ofm_width), std::max(1, op.block.ofm_depth)};
}

bool has_clamp_activation(const KernelOp& op) {
    const Precision& p = op.ofm.precision;
    if (p.bits > 16) return false;  // 32- and 64-bit OFMs carry no fused clamp (and their range needs 64 bits)
    const int64_t lo = p.is_signed ? -(int64_t{1} << (p.bits - 1)) : 0;
    const int64_t hi = p.is_signed ? (int64_t{1} << (p.bits - 1)) - 1 : (int64_t{1} << p.bits) - 1;
    // A clamp at the OFM zero point is a ReLU even when it is the whole type range (zero point at
    // the type's minimum, common for int8 ReLU outputs).
    return op.output.clip_min > lo || op.output.clip_max < hi || op.output.clip_min == op.ofm.zero_point;
}

int64_t ifm_lines_read(const IfmAxis& a) {
    // The lines of a window [from, to) of the kernel's (upscaled) IFM as stored, within the IFM.
    auto stored = [&](int64_t from, int64_t to) {
        const int64_t first = std::min<int64_t>(from >= 0 ? from / a.upscale : 0, a.ifm);
        const int64_t end = std::min<int64_t>(div_round_up(std::max<int64_t>(to, 0), a.upscale), a.ifm);
        return std::max<int64_t>(0, end - first);
    };
    const int64_t whole = a.taps / kSubKernelMax;  // sub-kernels of kSubKernelMax taps, then the rest
    const int64_t rest = a.taps % kSubKernelMax;
    const int64_t shift = int64_t{kSubKernelMax} * a.dilation;  // from one sub-kernel to the next
    const int64_t whole_span = int64_t{kSubKernelMax - 1} * a.dilation + 1;
    int64_t lines = 0;
    for (int64_t o = 0; o < a.ofm; o += a.block) {
        // Where the windows of the block's first and last OFM lines start.
        const int64_t from = o * a.stride - a.pad_before;
        const int64_t last = (std::min<int64_t>(a.ofm, o + a.block) - 1) * a.stride - a.pad_before;
        auto window = [&](int64_t sub_kernel, int64_t span) {
            return stored(from + sub_kernel * shift, last + sub_kernel * shift + span);
        };
        // A shift by whole sub-kernels is a whole number of stored lines (upscale is 1 or 2), so
        // every window inside the IFM reads as many; those the IFM's edges cut (a few lines of
        // padding deep: the pads are 7 and 8 bits) are counted one by one.
        int64_t low = 0;
        for (; low < whole && from + low * shift < 0; ++low) lines += window(low, whole_span);
        // Sub-kernels whose windows start past the IFM read nothing: a huge kernel over a small
        // IFM (a hostile stream) costs no step for them.
        int64_t high = std::clamp<int64_t>(div_round_up(int64_t{a.ifm} * a.upscale - from, shift), low, whole);
        for (; high > low && div_round_up(last + (high - 1) * shift + whole_span, a.upscale) > a.ifm; --high)
            lines += window(high - 1, whole_span);
        if (high > low) lines += (high - low) * window(low, whole_span);
        if (rest > 0) lines += window(whole, (rest - 1) * a.dilation + 1);
    }
    return lines;
}

int64_t dma_cycles(const CostContext& ctx, const DecodedOp& op, MemoryKind from, MemoryKind to, int64_t read_bytes,
                   int64_t write_bytes) {
    const MemorySystem& memory = ctx.memory;
    const int64_t read = cost_figure(ctx, op, "read cycles", double(read_bytes) / memory.bytes_per_cycle(from)) +
                         memory.timing(from).read_latency;
    const int64_t write = cost_figure(ctx, op, "write cycles", double(write_bytes) / memory.bytes_per_cycle(to)) +
                          memory.timing(to).write_latency;
    return std::max(read, write);
}

int64_t burst_aligned_bytes(const CostContext& ctx, const DecodedOp& op, uint64_t address, uint64_t length, int burst_length) {
    if (length == 0) return 0;
    const uint64_t burst = static_cast<uint64_t>(std::max(1, burst_length));
    const uint64_t first = address / burst, last = (address + length - 1) / burst;  // addresses are 40 bits at most
    return cost_product(ctx, op, "bytes read", {static_cast<int64_t>(last - first + 1), static_cast<int64_t>(burst)});
}

}  // namespace ethosu
