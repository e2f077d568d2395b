// U55/U65 kernel-op cost: the block-traversal model of Vela 5.1's Ethos-U55 performance
// estimator (regor ethos_u55_performance.cpp), rewritten on the decoded op. The OFM block comes
// from the command stream (NPU_SET_OFM_BLK_*); the IFM block follows from it as the hardware
// derives it.

#include <algorithm>
#include <array>
#include <cmath>

#include "emulator/engine/timing/op_cost.h"

namespace ethosu {
namespace {

enum class MacOp { Conv, ConvPartKernel, Depthwise, Pooling, ReduceSum, Elementwise };

MacOp mac_op(const DecodedOp& op) {
    switch (op.kind) {
        case OpKind::Conv: return op.kernel().kernel.part_kernel_first ? MacOp::ConvPartKernel : MacOp::Conv;
        case OpKind::Depthwise: return MacOp::Depthwise;
        case OpKind::Pool: return op.kernel().pool() == PoolMode::ReduceSum ? MacOp::ReduceSum : MacOp::Pooling;
        default: return MacOp::Elementwise;
    }
}

struct U55Op {
    const DecodedOp& op;
    const CostContext& ctx;
    const U55TimingRow& row;
    Block3 array_ublock;  // the configuration's OFM micro-block
    MacOp kind;
    Block3 kernel;  // undilated kernel size (height, width)
    Block3 ifm_shape, ofm_shape;
    Block3 ofm_block_config, ifm_block_config;  // as configured (burst sizes, per-block costs)
    Block3 ofm_block, ifm_block;                // limited to the feature maps (what a block holds)
    Block3 ublock;
    int ifm_bits, ofm_bits;
    bool acc40;

    U55Op(const DecodedOp& o, const CostContext& c)
        : op(o), ctx(c), row(u55_timing(c.npu)), array_ublock(block_of(c.npu.micro_blocks[0])),
          kind(mac_op(o)), kernel(undilated_kernel(o.kernel().kernel)),
          ifm_shape(input_extent(o)), ofm_shape(shape_of(o.kernel().ofm)),
          ifm_bits(o.kernel().ifm.precision.bits), ofm_bits(o.kernel().ofm.precision.bits), acc40(o.kernel().output.acc_format == AccFormat::I40) {
        ofm_block_config = configured_ofm_block(o.kernel());
        ofm_block = min3(ofm_shape, ofm_block_config);
        ublock = micro_block();
        ifm_block_config = arch_ifm_block();
        ifm_block = min3(ifm_shape, ifm_block_config);
    }

    // The 256/128-MAC arrays use a 1x4 micro-block for even-width single-row 1xN convolutions.
    Block3 micro_block() const {
        const Block3 arch = array_ublock;
        if (arch.height == 2 && (kind == MacOp::Conv || kind == MacOp::ConvPartKernel) && ofm_shape.height == 1 &&
            ofm_shape.width % 2 == 0 && kernel.height == 1)
            return {1, 4, arch.depth};
        return arch;
    }

    Block3 arch_ifm_block() const {
        const bool upscaled = op.kernel().kernel.upscale != UpscaleMode::None;
        const int upscale = upscaled ? 2 : 1;
        auto required = [&](int out, int stride, int dilated_kernel) {
            return static_cast<int>(std::ceil(double((out - 1) * stride + std::min(dilated_kernel, kSubKernelMax)) / upscale));
        };
        Block3 b;
        b.height = static_cast<int>(
            round_up(required(ofm_block_config.height, op.kernel().kernel.stride_y, op.kernel().kernel.height), array_ublock.height));
        b.width = static_cast<int>(
            round_up(required(ofm_block_config.width, op.kernel().kernel.stride_x, op.kernel().kernel.width), array_ublock.width));
        const bool equal_depth = kind == MacOp::Elementwise || kind == MacOp::Pooling || kind == MacOp::Depthwise;
        if (equal_depth) {
            b.depth = ofm_block_config.depth;
        } else if (ifm_bits == 16) {
            b.depth = static_cast<int>(round_up(std::min(ifm_shape.depth, 16), 4));
        } else {
            const int cap = kind == MacOp::ConvPartKernel ? 16 : 32;
            b.depth = static_cast<int>(round_up(std::min(ifm_shape.depth, cap), row.ifm_ublock.depth));
        }
        return b;
    }

    MemoryKind ifm_memory(int i) const { return ctx.memory_of((i == 0 ? op.kernel().ifm : op.kernel().ifm2).region); }
    MemoryKind ofm_memory() const { return ctx.memory_of(op.kernel().ofm.region); }
    const MemoryTiming& timing(MemoryKind k) const { return ctx.memory.timing(k); }
    double bandwidth(MemoryKind k) const { return ctx.memory.bytes_per_cycle(k); }

    // The bandwidth `elements` elements take: their bytes, inflated by how far the access pattern
    // falls short of the memory's burst length. The layout comes from the stride registers: a block whose
    // channels are not contiguous in memory is fetched a pixel (NHWC) or brick row at a time.
    int64_t transfer(bool read, MemoryKind mem, const FeatureMap& fm, int bits, const Block3& block, int64_t elements) const {
        const int bytes = bits / 8;
        int64_t burst_bits = 8 * 8;  // int64: a hostile block is 65536 wide and deep
        if (fm.format == DataFormat::NHCWB16) {
            const int64_t brick_stride = fm.stride_c > 0 ? fm.stride_c : int64_t{fm.width} * 16 * bytes;
            if (brick_stride == int64_t{block.depth} * bytes) burst_bits = int64_t{bits} * block.width * block.depth;
            else burst_bits = int64_t{16} * bits * block.width * (read ? 1 : ctx.npu.cores);
        } else {
            const int64_t pixel_stride = fm.stride_x > 0 ? fm.stride_x : int64_t{fm.depth} * bytes;
            const bool contiguous = pixel_stride == int64_t{block.depth} * bytes;
            if (read) burst_bits = contiguous ? int64_t{bits} * block.width * block.depth : bits * block.depth;
            else if (block.depth <= 16 && contiguous) burst_bits = int64_t{bits} * block.width * block.depth;
            else burst_bits = std::min(std::min(64 * 8, 16 * bits * ctx.npu.cores), block.depth * bits);
        }
        const int max_burst = timing(mem).burst_length;
        const int64_t burst = std::max<int64_t>(1, std::min<int64_t>(max_burst, burst_bits / 8));
        return cost_product(ctx, op, "bytes moved", {elements, bytes, max_burst}) / burst;
    }

    int64_t block_ifm_cycles() const {
        int64_t worst = 0;
        for (int i = 0; i < (op.kernel().has_ifm2 && !op.kernel().ifm2_is_scalar() ? 2 : 1); ++i) {
            const FeatureMap& fm = i == 0 ? op.kernel().ifm : op.kernel().ifm2;
            const Block3 shape = i == 0 ? ifm_shape : shape_of_ifm2();
            const MemoryKind mem = ifm_memory(i);
            const int64_t tx =
                transfer(true, mem, fm, ifm_bits, ifm_block_config, min3(shape, ifm_block_config).elements());
            worst = std::max(worst, timing(mem).read_latency + cost_figure(ctx, op, "IFM block cycles", tx / bandwidth(mem)));
        }
        return worst;
    }

    int64_t block_ofm_cycles() const {
        const MemoryKind mem = ofm_memory();
        const int64_t tx = transfer(false, mem, op.kernel().ofm, ofm_bits, ofm_block_config, ofm_block.elements());
        return timing(mem).write_latency + cost_figure(ctx, op, "OFM block cycles", tx / bandwidth(mem));
    }

    Block3 shape_of_ifm2() const {
        const auto& e = op.kernel().elementwise();
        return {e.broadcast_h ? 1 : ofm_shape.height, e.broadcast_w ? 1 : ofm_shape.width,
                e.broadcast_c ? 1 : ofm_shape.depth};
    }

    // An ADD/SUB whose operands both take 16-bit scales (IFM_SCALE_MODE OPA_OPB_16: Vela's
    // simplified scaling, for equal input scales) rather than one 32-bit scale on one operand
    // (OPA_32 / OPB_32, the advanced scaling). Vela's output-rate table prices the two apart
    // (output_cycles_per_elem indices 4 and 5); Vela 2.0 chose between them by that very
    // condition, equal input scales (MLBEDSW-603), until its scheduler rewrite (3.0) lost the scales
    // and fixed the choice at the advanced one (Regor keeps that "if (false)").
    bool simple_add_sub() const { return op.kernel().elementwise().operand_scaling == OperandScaling::Both16; }

    double output_cycles_per_element() const {
        OutputClass oc = OutputClass::Other;
        const bool mul = kind == MacOp::Elementwise && op.kernel().elementwise().mode == ElementwiseMode::Mul;
        const bool add_sub = kind == MacOp::Elementwise &&
                             (op.kernel().elementwise().mode == ElementwiseMode::Add || op.kernel().elementwise().mode == ElementwiseMode::Sub);
        if (kind == MacOp::Elementwise && ifm_bits == 32)
            oc = op.kernel().has_ifm2 ? OutputClass::Elementwise32Binary : OutputClass::Elementwise32Unary;
        else if (mul && ofm_bits == 32) oc = OutputClass::Mul32;
        else if (mul || (kind != MacOp::Elementwise && acc40)) oc = OutputClass::Mul8Or40BitAcc;
        else if (add_sub) oc = simple_add_sub() ? OutputClass::SimpleAddSub : OutputClass::AddSub;
        else if (kind == MacOp::Pooling && op.kernel().pool() == PoolMode::Max) oc = OutputClass::MaxPool;
        const bool clamp_only = op.kernel().output.activation == Activation::None && has_clamp_activation(op.kernel());
        const ActivationClass ac = clamp_only ? ActivationClass::Relu : ActivationClass::LutOrNone;
        return std::max(row.output_cycles[oc], row.activation_cycles[ac]);
    }

    int64_t mac_cycles_per_block() const {
        const Block3 blocks = div_up3(ofm_block, ublock);
        const int64_t writeback = 32 * ublock.depth / 8;
        int64_t cycles_block = 0;
        for_each_sub_kernel(kernel, [&](int elements, int64_t count) {
            int64_t steps = 0, cycles = 0;
            switch (kind) {
                case MacOp::Pooling:
                    steps = 1;
                    cycles = cost_product(ctx, op, "MAC cycles", {std::max(4, elements), blocks.elements(),
                                                             row.pooling_by_ifm_width == RowFlag::Yes ? ifm_bits / 2 : 1});
                    break;
                case MacOp::Depthwise:
                    steps = div_round_up(elements, 4);
                    cycles = cost_product(ctx, op, "MAC cycles", {std::max<int64_t>(writeback, 4 * blocks.elements_wh() * (ifm_bits / 8)),
                                                             steps, blocks.depth});
                    break;
                case MacOp::Conv:
                case MacOp::ReduceSum:
                    steps = elements;
                    cycles = cost_product(ctx, op, "MAC cycles",
                                          {std::max<int64_t>(writeback, 4 * blocks.elements_wh()), steps, blocks.depth});
                    break;
                case MacOp::ConvPartKernel:
                    steps = div_round_up(elements, ifm_bits == 16 ? 2 : 4);
                    cycles = cost_product(ctx, op, "MAC cycles", {std::max<int64_t>(writeback, 4 * blocks.elements_wh()), steps,
                                                             blocks.depth, div_round_up(ifm_block.depth, 8)});
                    break;
                case MacOp::Elementwise: break;
            }
            // Accumulator pipeline delay when a block has a single micro-block in width/height.
            int64_t delay = 0;
            const int per_step = row.accumulator_delay.per_step(acc40);
            if (blocks.elements_wh() == 1) {
                if (blocks.depth == 1) delay = per_step * steps;
                else if (steps > 1) delay = per_step * (steps - 1) * blocks.depth;
            }
            if (row.thin_block_wide_accumulator_stall == RowFlag::Yes && (blocks.width == 1 || blocks.height == 1) &&
                blocks.depth > 1 && acc40)
                delay += per_step * blocks.depth;
            if (kind == MacOp::ConvPartKernel) delay *= div_round_up(ifm_block.depth, 8);
            cycles_block += cost_product(ctx, op, "MAC cycles", {cycles + delay, count});
        });
        if (kind == MacOp::Conv || kind == MacOp::ConvPartKernel || kind == MacOp::ReduceSum)
            cycles_block = cost_product(ctx, op, "MAC cycles", {cycles_block, div_round_up(ifm_shape.depth, ifm_block.depth)});
        return cycles_block / ctx.npu.cores;
    }

    void mac_op_cycles(OpCost& cost) const {
        const int64_t ublocks_in_block = div_up3(ofm_block, ublock).elements();
        const double ofm_blocks = double(div_up3(ofm_shape, ublock).elements()) / double(ublocks_in_block);
        const double ao_per_block = std::ceil(output_cycles_per_element() * double(ofm_block.elements()));
        double bias_per_block = 0;
        if (kind != MacOp::Pooling && kind != MacOp::ReduceSum && !op.kernel().scales.empty()) {
            bias_per_block = 10.0 * ofm_block.depth * timing(ctx.memory_of(op.kernel().scales[0].region)).read_latency / 256;
        }
        const double ao_block = std::max(ao_per_block, bias_per_block);
        const double mac_block = double(mac_cycles_per_block());
        const int64_t ifm_cycles = block_ifm_cycles(), ofm_cycles = block_ofm_cycles();
        const BlockBalance b = balance_block(mac_block, ao_block, ofm_blocks, ifm_cycles, ofm_cycles);
        const int64_t body = cost_figure(ctx, op, "compute cycles",
                                         b.mac_bound() ? b.mac * ofm_blocks + b.output : b.output * ofm_blocks + b.mac);
        // Plus the first IFM block's fetch and the last OFM block's write.
        cost.compute_cycles = body + ofm_cycles + ifm_cycles;
        cost.mac_cycles = cost_figure(ctx, op, "MAC cycles", mac_block * ofm_blocks + ao_block);
        cost.output_cycles = cost_figure(ctx, op, "output cycles", ao_per_block * ofm_blocks + mac_block);
        cost.issue_cycles = cost_figure(ctx, op, "issue cycles", b.issue);
        cost.macs = cost_product(ctx, op, "MACs", {kernel.elements_wh(), ofm_shape.elements(),
                                              kind == MacOp::Depthwise || kind == MacOp::Pooling ? 1 : ifm_shape.depth});
    }

    // The output unit's rate applies to the OFM's own elements, not to the 16-channel bricks an
    // NHCWB16 OFM is stored in: Vela 2.0-3.3's estimator (npu_performance.py, ofm_shape.elements()).
    // Vela 3.4 began rounding the depth up to 16 for NHCWB16 (f8e353bd, "Number of elements
    // depends on ofm format"; Regor keeps it); the FVP anchors count the OFM's elements: YOLO-Fastest's
    // 128x128x4 ADD (../shared/anchors/himax_u55_64, stream offset 0x7e78) and YOLOv8n's one-channel
    // box-decoding ops, four and sixteen times their elements rounded, put the two networks' NPU
    // ACTIVE at +12.0% and +12.3% of the FVP's; counted as they are, +0.3% and +6.0%.
    void elementwise_cycles(OpCost& cost) const {
        const int64_t elements = ofm_shape.elements();
        const double per_element = output_cycles_per_element();
        const double ao = std::ceil(per_element * double(elements));
        const double block = double(std::max(block_ofm_cycles(), block_ifm_cycles()));
        const double issue =
            std::ceil((block / double(ofm_block_config.elements()) + per_element) / 4.0 * double(elements));
        cost.compute_cycles = cost_figure(ctx, op, "compute cycles", std::max(issue, ao));
        cost.output_cycles = cost_figure(ctx, op, "output cycles", ao);
        cost.issue_cycles = cost_figure(ctx, op, "issue cycles", issue);
    }

    // What the op moves, and the time moving it takes. AXI carries the bytes themselves (the PMU's
    // beats); a burst shorter than the memory's burst length takes the time of a whole one, which
    // lengthens the access without moving more. Vela keeps the two apart too (its npu_performance
    // bws and scaled_bws): its unscaled bytes are the FVP's AXI0 write beats on the anchors
    // (MobileNetV2 1,151,317 vs 1,151,319; ../shared/anchors/README.md) and its RNNoise reads
    // (530 beats, the FVP's 530), where its scaled bytes are 26% more on MobileNetV2's reads.
    void traffic(OpCost& cost) const {
        MemoryTraffic& t = cost.traffic;
        MemoryTraffic burst_bytes;  // per memory and direction, bytes as whole bursts cost them
        auto move = [&](bool read, MemoryKind mem, const FeatureMap& fm, int bits, const Block3& block, int64_t elements) {
            const int64_t bytes = cost_product(ctx, op, "bytes moved", {elements, bits / 8});
            if (read) t.add_read(mem, bytes);
            else t.add_write(mem, bytes);
            const int64_t cost_bytes = transfer(read, mem, fm, bits, block, elements);
            if (read) burst_bytes.add_read(mem, cost_bytes);
            else burst_bytes.add_write(mem, cost_bytes);
        };
        auto stream = [&](MemoryKind mem, int64_t bytes) {  // weights and scales: whole bursts
            t.add_read(mem, bytes);
            burst_bytes.add_read(mem, bytes);
        };
        const Block3 out = storage_rounded(ofm_shape, op.kernel().ofm.format);
        if (kind == MacOp::Elementwise) {
            move(true, ifm_memory(0), op.kernel().ifm, ifm_bits, ifm_block_config, storage_rounded(ofm_shape, op.kernel().ifm.format).elements());
            if (op.kernel().has_ifm2 && !op.kernel().ifm2_is_scalar())
                move(true, ifm_memory(1), op.kernel().ifm2, ifm_bits, ifm_block_config,
                     storage_rounded(shape_of_ifm2(), op.kernel().ifm2.format).elements());
        } else {
            Block3 blocks = div_up3(ofm_shape, ofm_block);
            // Depthwise and pooling blocks read only their own channels; a convolution reads the
            // IFM's whole depth for each OFM depth block, unless it is one IFM block deep. The
            // IFM buffer is double-buffered by IFM depth chunks (ifm_block.depth channels, Vela's
            // _ifm_blockdepth): a single chunk is still in the buffer when the next depth block at
            // the same position starts, while deeper IFMs cycle their chunks through it. The FVP
            // anchors: RNNoise's fully connected layers (48-114 channels, 2-3 depth blocks) read
            // their IFM per depth block (its 530 AXI0 read beats); MobileNetV2's pointwise
            // convolutions of 16-32 channels into 96-192 read less than that.
            if (kind == MacOp::Depthwise || kind == MacOp::Pooling || ifm_shape.depth <= ifm_block.depth) blocks.depth = 1;
            // Each block reads the IFM lines its OFM lines need (ifm_lines_read): the FVP anchors
            // read less than whole blocks (MobileNetV2 AXI0 reads 2,468,259 beats: 2,727,567
            // counting whole blocks, 2,532,651 this way; AD 485,194: 497,356 and 485,320).
            const Kernel& k = op.kernel().kernel;
            const int upscale = k.upscale == UpscaleMode::None ? 1 : 2;
            const int64_t rows = ifm_lines_read({ofm_shape.height, ofm_block.height, k.stride_y, k.padding.top,
                                                 ifm_shape.height, kernel.height, k.dilation_y, upscale});
            const int64_t columns = ifm_lines_read({ofm_shape.width, ofm_block.width, k.stride_x, k.padding.left,
                                                    ifm_shape.width, kernel.width, k.dilation_x, upscale});
            const int64_t ifm_elements = cost_product(
                ctx, op, "IFM elements read", {rows, columns, storage_rounded(ifm_shape, op.kernel().ifm.format).depth, blocks.depth});
            move(true, ifm_memory(0), op.kernel().ifm, ifm_bits, ifm_block_config, ifm_elements);
            // Weights and scales are streamed again for every OFM block in height and width.
            const int64_t refetch = blocks.elements_wh();
            for (const std::vector<Stream>* streams : {&op.kernel().weights, &op.kernel().scales}) {
                for (const Stream& w : *streams) {
                    const MemoryKind mem = ctx.memory_of(w.region);
                    stream(mem, cost_product(ctx, op, "weight bytes",
                                             {refetch, burst_aligned_bytes(ctx, op, w.base, w.length, timing(mem).axi_burst_bytes())}));
                }
            }
        }
        move(false, ofm_memory(), op.kernel().ofm, ofm_bits, ofm_block_config, out.elements());
        // AXI's read and write data channels are separate, each with the port's bandwidth (AMBA
        // AXI; Vela adds the two up): the busier one bounds the access.
        for (int m = 0; m < kMemoryKinds; ++m) {
            const int64_t busiest = std::max(burst_bytes.read[m], burst_bytes.write[m]);
            if (busiest > 0)
                cost.access_cycles[m] =
                    cost_figure(ctx, op, "access cycles", double(busiest) / bandwidth(static_cast<MemoryKind>(m)));
        }
    }

    int64_t weight_decode_cycles() const {
        int64_t cycles = 0;
        for (const auto& w : op.kernel().weights) {
            const MemoryKind mem = ctx.memory_of(w.region);
            cycles += cost_figure(ctx, op, "weight decode cycles", double(w.length) / bandwidth(mem)) + timing(mem).read_latency;
        }
        return cycles;
    }
};

}  // namespace

OpCost u55_kernel_cost(const DecodedOp& op, const CostContext& ctx) {
    const U55Op u(op, ctx);
    OpCost cost;
    if (u.kind == MacOp::Elementwise) u.elementwise_cycles(cost);
    else u.mac_op_cycles(cost);
    u.traffic(cost);
    cost.weight_decode_cycles = u.weight_decode_cycles();
    return cost;
}

}  // namespace ethosu
