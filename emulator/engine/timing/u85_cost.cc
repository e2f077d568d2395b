// U85 kernel-op cost: the block-traversal model of Vela 5.1's Ethos-U85 performance estimator
// (regor ethos_u85_performance.cpp), rewritten on the decoded op.
//
// The command stream gives the OFM block (NPU_SET_OFM_BLK_*), the micro-block (ACC_FORMAT), the
// traversal (weight order), the accumulator width, the weight format and where every tensor
// lives. The IFM block is not a register: it is derived from the OFM block the way Vela's block
// search derives it (ethos_u85.cpp), from the kernel, the micro-block's IFM allocation unit and
// the IFM block depth the traversal implies.
//
// Memory access is limited per AXI channel as well as per memory: each channel (IFM, IFM
// stream, weights, scales, write) can keep only as many bursts in flight as its read buffer
// holds, so its bandwidth is capped by bursts x burst length / latency.

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emulator/engine/timing/op_cost.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// NHCWB16 stores 16-channel bricks; accumulators and the OFM block depth come in the same steps.
constexpr int kBrickDepth = 16;
// Vela's channel model keeps 80% of the outstanding transactions busy, at 80% efficiency.
constexpr double kTransactionUse = 0.8;
constexpr double kChannelEfficiency = 0.8;
// Fetching a block's scales and biases: 10 cycles per OFM channel for every 256 cycles of the
// scale memory's read latency.
constexpr double kBiasReadCyclesPerChannel = 10.0 / 256.0;
// The internal LUT RAM takes one byte per cycle.
constexpr double kLutRamBytesPerCycle = 1.0;
// Integer divide (elementwise DIV) runs at a fixed rate regardless of configuration.
constexpr double kDivideCyclesPerElement = 33.0;

enum class U85Kind { Conv, ConvPartKernel, Depthwise, Pooling, ReduceSum, Elementwise, Resize };

U85Kind u85_kind(const DecodedOp& op) {
    switch (op.kind) {
        case OpKind::Conv: return op.kernel().kernel.part_kernel_first ? U85Kind::ConvPartKernel : U85Kind::Conv;
        case OpKind::Depthwise: return U85Kind::Depthwise;
        case OpKind::Pool: return op.kernel().pool() == PoolMode::ReduceSum ? U85Kind::ReduceSum : U85Kind::Pooling;
        case OpKind::Resize: return U85Kind::Resize;
        default: return U85Kind::Elementwise;
    }
}

bool uses_macs(U85Kind k) { return k != U85Kind::Elementwise && k != U85Kind::Resize; }
// Ops whose IFM block depth equals the OFM block depth (one OFM channel per IFM channel).
bool equal_depth(U85Kind k) { return k == U85Kind::Depthwise || k == U85Kind::Pooling; }
bool in_memory(const FeatureMap& fm) { return fm.storage == Storage::Tile2x2 || fm.storage == Storage::Tile3x1; }

int iround_up(int a, int b) { return static_cast<int>(round_up(a, b)); }

Block3 broadcast_shape(const FeatureMap& ofm, BroadcastMode broadcast, int depth) {
    return {along_h(broadcast) ? 1 : ofm.height, along_w(broadcast) ? 1 : ofm.width, along_c(broadcast) ? 1 : depth};
}

// A channel's bandwidth: the memory's, or less when the channel cannot keep enough bursts in
// flight to cover the latency. Reads are limited by the channel's read buffer (in 16-byte words)
// and the memory's outstanding reads; writes (read_channel empty) by outstanding writes only.
double u85_channel_bandwidth(const MemorySystem& memory, const U85TimingRow& row, MemoryKind mem,
                             std::optional<U85ReadChannel> read_channel) {
    const MemoryTiming& t = memory.timing(mem);
    double in_flight = 0;
    int latency = 0;
    if (read_channel) {
        const int burst_words = std::max(t.burst_length / 16, 1);
        const double buffer_bursts = double(row.channel_read_buffers[*read_channel]) / burst_words;
        in_flight = std::min(buffer_bursts, t.max_reads * t.ports_used * kTransactionUse);
        latency = t.read_latency;
    } else {
        in_flight = t.max_writes * t.ports_used * kTransactionUse;
        latency = t.write_latency;
    }
    const double channel = t.burst_length * in_flight / std::max(1, latency) * kChannelEfficiency;
    return std::min(memory.bytes_per_cycle(mem), channel);
}

struct U85Op {
    const DecodedOp& op;
    const CostContext& ctx;
    const U85TimingRow& row;
    U85Kind kind;
    Block3 kernel;  // undilated kernel size (height, width)
    Block3 ifm_shape, ifm2_shape, ofm_shape;
    Block3 ofm_block, ifm_block, ublock;  // as programmed/derived, not clipped to the feature maps
    size_t ublock_index = 0;
    int ifm_bits, ofm_bits;
    bool ifm2_read;  // a second IFM that lives in memory
    bool acc48;

    U85Op(const DecodedOp& o, const CostContext& c)
        : op(o), ctx(c), row(u85_timing(c.npu)), kind(u85_kind(o)),
          kernel(undilated_kernel(o.kernel().kernel)),
          ofm_shape(shape_of(o.kernel().ofm)),
          ifm_bits(o.kernel().ifm.precision.bits), ofm_bits(o.kernel().ofm.precision.bits),
          ifm2_read(o.kernel().has_ifm2 && !o.kernel().ifm2_is_scalar() && in_memory(o.kernel().ifm2)),
          acc48(o.kernel().output.acc_format == AccFormat::I48) {
        if (kind == U85Kind::Elementwise) {
            ifm_shape = broadcast_shape(o.kernel().ofm, o.kernel().ifm.broadcast, std::max(1, o.kernel().ifm.depth));
            ifm2_shape = broadcast_shape(o.kernel().ofm, o.kernel().ifm2.broadcast, o.kernel().ofm.depth);
        } else if (kind == U85Kind::Resize) {
            // A resize reads the IFM area its kernel registers give (decoded into the IFM's size).
            ifm_shape = {std::max(1, o.kernel().ifm.height), std::max(1, o.kernel().ifm.width), std::max(1, o.kernel().ifm.depth)};
        } else {
            ifm_shape = input_extent(o);
        }
        ofm_block = configured_ofm_block(o.kernel());
        select_micro_block();
        ifm_block = derive_ifm_block();
    }

    // The micro-block's height and width are in the stream; its depth is the configuration's.
    void select_micro_block() {
        const MicroBlock m = op.kernel().output.microblock;
        const auto index = ctx.npu.micro_block_index(m);
        if (!index) {
            throw Error({ctx.source, op.offset, "NPU_SET_ACC_FORMAT.microblock", OffsetKind::Command},
                        "micro-block " + std::to_string(static_cast<int>(m)) + " is not one of " +
                            std::string(ctx.npu.name) + "'s");
        }
        ublock_index = *index;
        ublock = block_of(ctx.npu.micro_blocks[ublock_index]);
    }

    // The IFM allocation unit for an IFM block depth: wider blocks use flatter, deeper units.
    Block3 ifm_alloc_unit(int ifm_block_depth) const {
        const int depth_bits = ifm_block_depth * ifm_bits;
        Block3 au = row.ifm_alloc_units[ublock_index].for_depth_bits(depth_bits);
        au.depth = au.depth * 128 / ifm_bits;
        return au;
    }

    // Conv IFM block depth: Vela's choice, implied by the traversal, the micro-block and the
    // weight format.
    int conv_ifm_block_depth() const {
        return u85_conv_ifm_block_depth(ctx.npu, ctx.npu.micro_blocks[ublock_index], kind == U85Kind::ConvPartKernel,
                                        ifm_bits, op.kernel().sparse_2_4);
    }

    Block3 derive_ifm_block() const {
        if (kind == U85Kind::Elementwise) return ofm_block;
        if (kind == U85Kind::Resize) {
            // Vela has no resize model. Ours: the IFM part an OFM block maps to, plus the next
            // row and column that interpolation reads.
            auto span = [](int block, int in, int out) {
                return std::min(in, static_cast<int>(div_round_up(int64_t{block} * in, std::max(1, out))) + 1);
            };
            return {span(ofm_block.height, ifm_shape.height, ofm_shape.height),
                    span(ofm_block.width, ifm_shape.width, ofm_shape.width), ofm_block.depth};
        }
        // Depthwise and pooling blocks are searched without upscaling; convolutions use it.
        const bool resampled = op.kernel().kernel.upscale != UpscaleMode::None && !equal_depth(kind) && kind != U85Kind::ReduceSum;
        const int upscale = resampled ? 2 : 1;
        const int rounding = resampled && op.kernel().kernel.upscale == UpscaleMode::Nearest ? 1 : 0;
        int fixed_depth = 0;  // 0: follows the OFM block depth
        if (kind == U85Kind::Conv || kind == U85Kind::ConvPartKernel || kind == U85Kind::ReduceSum)
            fixed_depth = conv_ifm_block_depth();
        const Block3 au = ifm_alloc_unit(fixed_depth ? fixed_depth : ofm_block.depth);
        auto required = [&](int out, int stride, int dilated_kernel) {
            const double span = double((out - 1) * stride + std::min(dilated_kernel, kSubKernelMax) + rounding);
            return static_cast<int>(std::ceil(span / upscale));
        };
        Block3 b;
        b.height = iround_up(required(ofm_block.height, op.kernel().kernel.stride_y, op.kernel().kernel.height), au.height);
        b.width = iround_up(required(ofm_block.width, op.kernel().kernel.stride_x, op.kernel().kernel.width), au.width);
        // Conv keeps the fixed depth as is; the others round it to the allocation unit.
        if (kind == U85Kind::Conv || kind == U85Kind::ConvPartKernel) b.depth = fixed_depth;
        else b.depth = iround_up(fixed_depth ? fixed_depth : ofm_block.depth, au.depth);
        return b;
    }

    MemoryKind memory_of(const FeatureMap& fm) const { return ctx.memory_of(fm.region); }
    const MemoryTiming& timing(MemoryKind k) const { return ctx.memory.timing(k); }
    double bandwidth(MemoryKind k) const { return ctx.memory.bytes_per_cycle(k); }

    double channel_bandwidth(MemoryKind mem, std::optional<U85ReadChannel> read_channel) const {
        return u85_channel_bandwidth(ctx.memory, row, mem, read_channel);
    }

    // Bytes moved for `amount`, inflated by how far the access pattern's contiguous run falls
    // short of the memory's burst length. The layout comes from the stride registers (a stripe
    // of a wider tensor is not contiguous). Two quirks of Vela's model are kept because they
    // offset each other on 16-bit maps and its estimates depend on both: whole-op traffic is
    // counted in elements (block fetches in bytes), and the pixel or brick stride in bytes is
    // compared with the block's channel count.
    int64_t transfer(bool read, MemoryKind mem, const FeatureMap& fm, const Block3& block, int64_t amount) const {
        const int bits = fm.precision.bits;
        int64_t burst_bits = 8;  // int64: a hostile block is 65536 wide and deep
        if (fm.format == DataFormat::NHCWB16) {
            const int64_t brick_stride = fm.stride_c > 0 ? fm.stride_c : int64_t{fm.width0} * kBrickDepth * bits / 8;
            if (brick_stride == block.depth) burst_bits = int64_t{bits} * block.width * block.depth;
            else burst_bits = int64_t{kBrickDepth} * bits * block.width * (read ? 1 : ctx.npu.cores);
        } else {
            const int64_t pixel_stride = fm.stride_x > 0 ? fm.stride_x : int64_t{fm.depth} * bits / 8;
            const bool contiguous = pixel_stride == block.depth;
            if (read) burst_bits = contiguous ? int64_t{bits} * block.width * block.depth : bits * block.depth;
            else if (block.depth <= 16 && contiguous) burst_bits = int64_t{bits} * block.width * block.depth;
            else burst_bits = std::min(std::min(64 * 8, 16 * bits * ctx.npu.cores), block.depth * bits);
        }
        const int max_burst = timing(mem).burst_length;
        const int64_t burst = std::max<int64_t>(1, std::min<int64_t>(max_burst, burst_bits / 8));
        return cost_product(ctx, op, "bytes moved", {amount, max_burst}) / burst;
    }

    // Fetching the first IFM block (all IFMs in memory), and writing back the last OFM block.
    int64_t block_ifm_cycles() const {
        int64_t worst = 0;
        auto fetch = [&](const FeatureMap& fm, const Block3& shape) {
            if (!in_memory(fm)) return;
            const MemoryKind mem = memory_of(fm);
            const int64_t bytes = min3(shape, ifm_block).elements() * ifm_bits / 8;
            const int64_t tx = transfer(true, mem, fm, ifm_block, bytes);
            worst = std::max(worst, timing(mem).read_latency + cost_figure(ctx, op, "IFM block cycles", double(tx) / bandwidth(mem)));
        };
        fetch(op.kernel().ifm, ifm_shape);
        if (ifm2_read && kind == U85Kind::Elementwise) fetch(op.kernel().ifm2, ifm2_shape);
        // The stream carries a scalar operand in a register; Vela's model still fetches it, as
        // one element of a constant tensor, and that read's latency bounds the block.
        if (kind == U85Kind::Elementwise && op.kernel().has_ifm2 && op.kernel().elementwise().ifm2_scalar) {
            const MemoryKind mem = ctx.memory.port_memory(ctx.memory.mode.const_port);
            worst = std::max(worst, int64_t{timing(mem).read_latency});
        }
        return worst;
    }

    int64_t block_ofm_cycles() const {
        if (!in_memory(op.kernel().ofm)) return 0;
        const MemoryKind mem = memory_of(op.kernel().ofm);
        const int64_t bytes = min3(ofm_shape, ofm_block).elements() * ofm_bits / 8;
        const int64_t tx = transfer(false, mem, op.kernel().ofm, ofm_block, bytes);
        return timing(mem).write_latency + cost_figure(ctx, op, "OFM block cycles", double(tx) / bandwidth(mem));
    }

    // The width of the LUT's input (a table indexed by the op's result), if any.
    std::optional<int> lut_input_bits() const {
        const int bits = input_bits(op.kernel().output.lut);
        return bits ? std::optional<int>(bits) : std::nullopt;
    }

    double output_cycles_per_element() const {
        if (kind == U85Kind::Elementwise && op.kernel().elementwise().mode == ElementwiseMode::Div) return kDivideCyclesPerElement;
        const bool binary = kind == U85Kind::Elementwise && op.kernel().has_ifm2;
        // A LUT activation takes the op's result at the LUT's input width and widens it
        // itself; the op's output class follows the LUT input.
        const int result_bits = lut_input_bits().value_or(ofm_bits);
        U85OutputClass oc = U85OutputClass::Ofm8;
        if (op.kernel().ofm.storage == Storage::Chained && (result_bits == 32 || ifm_bits == 32)) oc = U85OutputClass::Chained32;
        else if (result_bits == 64) oc = U85OutputClass::Ofm64;
        else if (binary && ifm_bits == 32) oc = result_bits == 32 ? U85OutputClass::Binary32 : U85OutputClass::Chained32;
        else if (result_bits == 32) oc = U85OutputClass::Ofm32;
        else if (result_bits == 16) oc = U85OutputClass::Ofm16;
        // The activation pass runs alongside; it has half throughput when the OFM is written
        // with H and W swapped or reversed along W.
        const OfmTranspose t = op.kernel().ofm.transpose;
        const bool half_rate = t == OfmTranspose::WHC || t == OfmTranspose::WCH || t == OfmTranspose::CWH ||
                               op.kernel().ofm.reverse == OfmReverse::W;
        const auto ac = half_rate ? U85ActivationClass::HalfRate : U85ActivationClass::FullRate;
        return std::max(row.output_cycles[oc], row.activation_cycles[ac]);
    }

    int64_t mac_cycles_per_block() const {
        const Block3 ifm_blk = min3(ifm_shape, ifm_block);
        const Block3 blocks = div_up3(min3(ofm_shape, ofm_block), ublock);
        const int64_t writeback = 32 * ublock.depth / (8 * ctx.npu.cores);  // ideal weight-decode rate
        const int sparse_divisor = op.kernel().sparse_2_4 ? 2 : 1;
        const int delay_per_step = row.accumulator_delay.per_step(acc48);
        int64_t total = 0;
        for_each_sub_kernel(kernel, [&](int elements, int64_t count) {
            int64_t steps = 0, cycles = 0;
            switch (kind) {
                case U85Kind::Pooling:
                    steps = 1;
                    cycles = cost_product(ctx, op, "MAC cycles", {std::max(4, elements), blocks.elements(), ifm_bits / 2});
                    break;
                case U85Kind::Depthwise:
                    steps = div_round_up(elements, 4);
                    cycles = cost_product(ctx, op, "MAC cycles", {std::max<int64_t>(writeback, 4 * blocks.elements_wh() * (ifm_bits / 8)),
                                                             steps, blocks.depth});
                    break;
                case U85Kind::Conv:
                case U85Kind::ReduceSum:
                    steps = elements;
                    cycles = cost_product(ctx, op, "MAC cycles", {std::max<int64_t>(writeback, ifm_blk.depth / 8 * blocks.elements_wh()),
                                                             steps, blocks.depth, ifm_bits / 8}) /
                             sparse_divisor;
                    break;
                case U85Kind::ConvPartKernel:
                    steps = div_round_up(elements, ifm_bits == 16 ? 2 : 4);
                    cycles = cost_product(ctx, op, "MAC cycles", {std::max<int64_t>(writeback, 4 * blocks.elements_wh()), steps,
                                                             blocks.depth, div_round_up(ifm_blk.depth, 8)}) /
                             sparse_divisor;
                    break;
                case U85Kind::Elementwise:
                case U85Kind::Resize: break;
            }
            // Accumulator pipeline delay when a block is one micro-block wide and high.
            int64_t delay = 0;
            if (blocks.elements_wh() == 1) {
                if (blocks.depth == 1) delay = delay_per_step * steps;
                else if (steps > 1) delay = delay_per_step * (steps - 1) * blocks.depth;
            }
            if (kind == U85Kind::ConvPartKernel) delay *= div_round_up(ifm_blk.depth, 8);
            total += cost_product(ctx, op, "MAC cycles", {cycles + delay, count});
        });
        if (kind == U85Kind::Conv || kind == U85Kind::ConvPartKernel || kind == U85Kind::ReduceSum) {
            // Vela repeats depth-first and reduce-sum blocks per IFM depth block; part-kernel
            // convolutions are costed the same way (its estimator treats them as convolutions).
            total = cost_product(ctx, op, "MAC cycles", {total, div_round_up(ifm_shape.depth, ifm_blk.depth)});
        }
        return total;
    }

    void mac_op_cycles(OpCost& cost) const {
        const Block3 ofm_blk = min3(ofm_shape, ofm_block);
        const int64_t ublocks_in_block = div_up3(ofm_blk, ublock).elements();
        const double ofm_blocks = double(div_up3(ofm_shape, ublock).elements()) / double(ublocks_in_block);
        const double ao_compute = std::ceil(output_cycles_per_element() * double(ofm_blk.elements()));
        double bias = 0;
        if ((kind == U85Kind::Conv || kind == U85Kind::ConvPartKernel || kind == U85Kind::Depthwise) &&
            !op.kernel().scales.empty()) {
            bias = kBiasReadCyclesPerChannel * ofm_blk.depth * timing(ctx.memory_of(op.kernel().scales[0].region)).read_latency;
        }
        const double ao_block = std::max(ao_compute, bias);
        const double mac_block = double(mac_cycles_per_block());
        const int64_t ifm_cycles = block_ifm_cycles(), ofm_cycles = block_ofm_cycles();
        const BlockBalance b = balance_block(mac_block, ao_block, ofm_blocks, ifm_cycles, ofm_cycles);
        // MAC-bound: every block's MACs, then the last block's output; output-bound: every
        // block's output after the first block's MACs. Around them: the first IFM block's fetch
        // and the last OFM block's write.
        const int64_t body =
            cost_figure(ctx, op, "compute cycles", b.mac_bound() ? b.mac * ofm_blocks : b.output * ofm_blocks + b.mac);
        cost.fill_cycles = ifm_cycles;
        cost.drain_cycles = ofm_cycles + (b.mac_bound() ? cost_figure(ctx, op, "output cycles", b.output) : 0);
        cost.compute_cycles = cost.fill_cycles + body + cost.drain_cycles;
        cost.mac_cycles = cost_figure(ctx, op, "MAC cycles", mac_block * ofm_blocks + ao_block);
        cost.output_cycles = cost_figure(ctx, op, "output cycles", ao_compute * ofm_blocks + mac_block);
        cost.issue_cycles = cost_figure(ctx, op, "issue cycles", b.issue);
        const bool per_channel = kind == U85Kind::Depthwise || kind == U85Kind::Pooling;
        cost.macs = cost_product(ctx, op, "MACs", {kernel.elements_wh(), ofm_shape.elements(), per_channel ? 1 : ifm_shape.depth}) /
                    (op.kernel().sparse_2_4 ? 2 : 1);
    }

    // Elementwise and resize: the output unit's rate, or the command-issue limit with each
    // block's IFM and OFM transfers overlapped. (Vela prices a resize at 0 cycles; the
    // elementwise model stands in for it.)
    void streaming_op_cycles(OpCost& cost) const {
        const int64_t elements = storage_rounded(ofm_shape, op.kernel().ofm.format).elements();
        const double per_element = output_cycles_per_element();
        const double ao = std::ceil(per_element * double(elements));
        const double block = double(std::max(block_ofm_cycles(), block_ifm_cycles()));
        const double issue = std::ceil((block / double(ofm_block.elements()) + per_element) / 4.0 * double(elements));
        cost.compute_cycles = cost_figure(ctx, op, "compute cycles", std::max(issue, ao));
        cost.output_cycles = cost_figure(ctx, op, "output cycles", ao);
        cost.issue_cycles = cost_figure(ctx, op, "issue cycles", issue);
    }

    // Bytes per memory and channel, as Vela's element-access model counts them.
    struct ChannelBytes {
        MemoryKind memory;
        std::optional<U85ReadChannel> read_channel;  // empty: the write channel
        int64_t bytes;
    };

    std::vector<ChannelBytes> accesses() const {
        std::vector<ChannelBytes> out;
        const U85ReadChannel ifm_channel =
            kind == U85Kind::Elementwise || kind == U85Kind::Resize ? U85ReadChannel::IfmStream : U85ReadChannel::Ifm;
        if (uses_macs(kind)) {
            const Block3 ifm_blk = min3(ifm_shape, ifm_block), ofm_blk = min3(ofm_shape, ofm_block);
            Block3 blocks = div_up3(ofm_shape, ofm_blk);
            if (kind == U85Kind::Depthwise || kind == U85Kind::Pooling) blocks.depth = 1;
            const int64_t sub_kernels =
                div_round_up(kernel.width, kSubKernelMax) * div_round_up(kernel.height, kSubKernelMax);
            const int64_t fetch = storage_rounded(ifm_blk, op.kernel().ifm.format).elements_wh() *
                                  storage_rounded(ifm_shape, op.kernel().ifm.format).depth;
            if (in_memory(op.kernel().ifm)) {
                const MemoryKind mem = memory_of(op.kernel().ifm);
                out.push_back({mem, ifm_channel,
                               transfer(true, mem, op.kernel().ifm, ifm_block,
                                        cost_product(ctx, op, "IFM elements read", {fetch, sub_kernels, blocks.elements()}))});
            }
            // Weights and scales are streamed again for every OFM block in height and width.
            const int64_t refetch = blocks.elements_wh();
            const MemoryKind const_memory = ctx.memory.port_memory(ctx.memory.mode.const_port);
            for (const auto& w : op.kernel().weights) {
                const MemoryKind mem = ctx.memory_of(w.region);
                // Fast weights have their own read buffer when they are read from a staging copy.
                const bool fast = op.kernel().weight_format == WeightFormat::Fast && mem != const_memory;
                out.push_back({mem, fast ? U85ReadChannel::FastWeight : U85ReadChannel::Weight,
                               cost_product(ctx, op, "weight bytes", {refetch, static_cast<int64_t>(w.length)})});
            }
            // Vela charges scale reads to the constant memory even when the stream reads a copy
            // a DMA staged in faster memory; so do we, to track its estimates. Through the
            // scale channel's small read buffer this makes scales from DRAM expensive.
            for (const auto& s : op.kernel().scales)
                out.push_back({const_memory, U85ReadChannel::Scale,
                               cost_product(ctx, op, "scale bytes", {refetch, static_cast<int64_t>(s.length)})});
        } else {
            // Each IFM in memory is read once (a scalar operand is in the command stream).
            auto read_whole = [&](const FeatureMap& fm, const Block3& shape) {
                if (!in_memory(fm)) return;
                const MemoryKind mem = memory_of(fm);
                const int64_t elements = storage_rounded(shape, fm.format).elements();
                out.push_back({mem, ifm_channel, transfer(true, mem, fm, ifm_block, elements)});
            };
            read_whole(op.kernel().ifm, ifm_shape);
            if (ifm2_read) read_whole(op.kernel().ifm2, ifm2_shape);
        }
        if (in_memory(op.kernel().ofm)) {
            const MemoryKind mem = memory_of(op.kernel().ofm);
            const int64_t elements = storage_rounded(ofm_shape, op.kernel().ofm.format).elements();
            out.push_back({mem, std::nullopt, transfer(false, mem, op.kernel().ofm, ofm_block, elements)});
        }
        return out;
    }

    // Per memory: the traffic, and the cycles its busiest channel (or the memory as a whole)
    // needs for it.
    void traffic(OpCost& cost) const {
        std::array<std::map<int, int64_t>, kMemoryKinds> channel_cycles;
        for (const ChannelBytes& a : accesses()) {
            const auto m = static_cast<size_t>(a.memory);
            if (a.read_channel) cost.traffic.add_read(a.memory, a.bytes);
            else cost.traffic.add_write(a.memory, a.bytes);
            const int key = a.read_channel ? static_cast<int>(*a.read_channel) : -1;
            channel_cycles[m][key] +=
                cost_figure(ctx, op, "access cycles", double(a.bytes) / channel_bandwidth(a.memory, a.read_channel));
        }
        for (size_t m = 0; m < static_cast<size_t>(kMemoryKinds); ++m) {
            const int64_t bytes = cost.traffic.read[m] + cost.traffic.write[m];
            int64_t cycles = cost_figure(ctx, op, "access cycles", double(bytes) / bandwidth(static_cast<MemoryKind>(m)));
            for (const auto& [channel, c] : channel_cycles[m]) cycles = std::max(cycles, c);
            cost.access_cycles[m] = bytes > 0 ? cycles : 0;
        }
    }

    // Weight decoding: the decoders' rate, or the weight stream's read, whichever is slower.
    // The stream does not say how many weights are zero; the slowest standard-decoder rate
    // (half the weights zero, 8 per cycle per decoder) and the slower fast-decoder rate are
    // assumed.
    int64_t weight_decode_cycles() const {
        if (op.kernel().weights.empty()) return 0;
        const int64_t weight_count = cost_product(ctx, op, "weights", {kernel.elements_wh(), ofm_shape.depth,
                                                                   kind == U85Kind::Depthwise ? 1 : ifm_shape.depth});
        const int per_cycle = op.kernel().weight_format == WeightFormat::Fast ? 32 : 8 * ctx.npu.cores;
        const int64_t decode = weight_count / per_cycle;
        int64_t read = 0, bytes = 0;
        const MemoryKind mem = ctx.memory_of(op.kernel().weights[0].region);
        for (const auto& w : op.kernel().weights) bytes += static_cast<int64_t>(w.length);
        read = cost_figure(ctx, op, "weight read cycles",
                           double(bytes) / channel_bandwidth(mem, op.kernel().weight_format == WeightFormat::Fast ? U85ReadChannel::FastWeight
                                                                                        : U85ReadChannel::Weight)) +
               timing(mem).read_latency;
        return std::max(decode, read);
    }
};

}  // namespace

int64_t u85_dma_cycles(const DecodedOp& op, const CostContext& ctx, MemoryKind from, std::optional<MemoryKind> to, int64_t bytes,
                       std::optional<DmaIndexRead> index) {
    const U85TimingRow& row = u85_timing(ctx.npu);
    auto read_cycles = [&](MemoryKind mem, int64_t amount) {
        const double bandwidth = u85_channel_bandwidth(ctx.memory, row, mem, U85ReadChannel::Mem2Mem);
        return cost_figure(ctx, op, "read cycles", double(amount) / bandwidth) + ctx.memory.timing(mem).read_latency;
    };
    const int64_t read = read_cycles(from, bytes) + (index ? read_cycles(index->memory, index->bytes) : 0);
    const int64_t write =
        to ? cost_figure(ctx, op, "write cycles", double(bytes) / u85_channel_bandwidth(ctx.memory, row, *to, std::nullopt)) +
                 ctx.memory.timing(*to).write_latency
           : cost_figure(ctx, op, "write cycles", double(bytes) / kLutRamBytesPerCycle);
    return std::max(read, write);
}

OpCost u85_kernel_cost(const DecodedOp& op, const CostContext& ctx) {
    const U85Op u(op, ctx);
    OpCost cost;
    if (uses_macs(u.kind)) u.mac_op_cycles(cost);
    else u.streaming_op_cycles(cost);
    u.traffic(cost);
    cost.weight_decode_cycles = u.weight_decode_cycles();
    return cost;
}

}  // namespace ethosu
