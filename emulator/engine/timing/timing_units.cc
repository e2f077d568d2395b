#include "emulator/engine/timing/timing_units.h"

#include <algorithm>
#include <optional>

namespace ethosu {
namespace {

int64_t dma_bytes(const CostContext& ctx, const DecodedOp& op) {
    const Dma& d = op.dma();
    const int64_t rows = d.dimensions >= 2 ? d.size0 : 1;
    const int64_t planes = d.dimensions >= 3 ? d.size1 : 1;
    return cost_product(ctx, op, "bytes moved", {static_cast<int64_t>(d.length), rows, planes});
}

// The indices an index-mode DMA reads: one int32 per row (the skips between planes are not read).
int64_t index_bytes(const CostContext& ctx, const DecodedOp& op) {
    const Dma& d = op.dma();
    const int64_t rows = d.dimensions >= 2 ? d.size0 : 1;
    const int64_t planes = d.dimensions >= 3 ? d.size1 : 1;
    return cost_product(ctx, op, "index bytes", {rows, planes, static_cast<int64_t>(kDmaIndexBytes)});
}

// U55/U65 DMA. These generations have no index mode.
int64_t u55_dma(const DecodedOp& op, const CostContext& ctx, const DmaTransfer& x) {
    if (x.to) return dma_cycles(ctx, op, x.from, *x.to, x.read_bytes, x.bytes);
    return cost_figure(ctx, op, "read cycles", double(x.read_bytes) / ctx.memory.bytes_per_cycle(x.from)) +
           ctx.memory.timing(x.from).read_latency;
}

// U85 DMA: its cost still reads the bytes moved, not their bursts (no anchor measures U85).
int64_t u85_dma(const DecodedOp& op, const CostContext& ctx, const DmaTransfer& x) {
    return u85_dma_cycles(op, ctx, x.from, x.to, x.bytes, x.index);
}

// The cost functions of each CostModel, in its order: a generation's traits name its row.
struct CostFunctions {
    OpCost (*kernel)(const DecodedOp&, const CostContext&);
    int64_t (*dma)(const DecodedOp&, const CostContext&, const DmaTransfer&);
};
constexpr CostFunctions kCostModels[] = {
    {u55_kernel_cost, u55_dma},  // CostModel::U55
    {u85_kernel_cost, u85_dma},  // CostModel::U85
};

const CostFunctions& cost_functions(const NpuConfig& npu) {
    return kCostModels[static_cast<size_t>(npu.traits().cost_model)];
}

// Whether b continues a: slices of one operation's OFM depth (Vela slices an op's OFM depth to
// stream its weights). Same kind, IFM and kernel; weight streams; an OFM of the same rows and
// columns that starts at a later channel of the same pixel.
bool depth_slice_of(const DecodedOp& previous, const DecodedOp& op) {
    if (previous.kind != op.kind) return false;
    const KernelOp& a = previous.kernel();
    const KernelOp& b = op.kernel();
    const auto in_memory = [](const FeatureMap& fm) { return fm.storage == Storage::Tile2x2 || fm.storage == Storage::Tile3x1; };
    if (b.weights.empty() || !in_memory(a.ifm) || !in_memory(b.ifm) || !in_memory(a.ofm) ||
        !in_memory(b.ofm) || a.ifm.region != b.ifm.region || a.ifm.tile_base != b.ifm.tile_base ||
        a.kernel.width != b.kernel.width || a.kernel.height != b.kernel.height || a.ofm.region != b.ofm.region ||
        a.ofm.height != b.ofm.height || a.ofm.width != b.ofm.width || a.ofm.format != b.ofm.format) {
        return false;
    }
    const int64_t channel_offset = static_cast<int64_t>(b.ofm.tile_base[0]) - static_cast<int64_t>(a.ofm.tile_base[0]);
    const int64_t pixel_bytes = b.ofm.format == DataFormat::NHCWB16 ? b.ofm.stride_y : b.ofm.stride_x;
    return channel_offset > 0 && channel_offset < pixel_bytes;
}

}  // namespace

int64_t OutstandingOps::until_at_most(int64_t n, int64_t at) const {
    const int64_t must_finish = static_cast<int64_t>(ends_.size()) - n;
    return must_finish > 0 ? std::max(at, ends_[static_cast<size_t>(must_finish - 1)]) : at;
}

int64_t CommandProcessor::words_to(const DecodedOp& op) const {
    const uint64_t from = after_branch_ ? op.fetch_start : std::min<uint64_t>(next_word_offset_, op.offset);
    return static_cast<int64_t>((op.offset + 4 - std::min<uint64_t>(from, op.offset)) / 4) +
           (op.kind == OpKind::Branch ? 1 : 0);
}

int64_t CommandProcessor::fetch(const DecodedOp& op) {
    const int64_t words = words_to(op);
    const int64_t began = now_;
    next_word_offset_ = op.offset + 4;
    after_branch_ = op.kind == OpKind::Branch;
    now_ += words;
    words_read_ += words;
    return began;
}

void CommandProcessor::issue_into(const OutstandingOps& queue, Unit unit) {
    const int limit = unit == Unit::Kernel ? traits_.max_outstanding_kernel_ops : traits_.max_outstanding_dmas;
    now_ = queue.until_at_most(limit - 1, now_);
}

void CommandProcessor::wait_for(const OutstandingOps& queue, const DecodedOp& op) {
    now_ = queue.until_at_most(op.wait().count, now_);
}

KernelPipeline::KernelPipeline(const CostContext& ctx) : ctx_(ctx), cost_(cost_functions(ctx.npu).kernel) {}

int64_t KernelPipeline::access_cycles(const DecodedOp& op, OpTiming& t) const {
    int64_t access = 0;
    for (int m = 0; m < kMemoryKinds; ++m) {
        // AXI's read and write data channels are separate, each with the port's bandwidth.
        const int64_t busiest = std::max(t.cost.traffic.read[m], t.cost.traffic.write[m]);
        if (busiest == 0) continue;
        const double bandwidth = ctx_.memory.bytes_per_cycle(static_cast<MemoryKind>(m));
        t.access_cycles[m] = std::max(cost_figure(ctx_, op, "access cycles", double(busiest) / bandwidth),
                                      t.cost.access_cycles[m]);
        access = std::max(access, t.access_cycles[m]);
    }
    return access;
}

int64_t KernelPipeline::earliest_start(const DecodedOp& op, int64_t at, bool slice) const {
    // An op reading the chaining buffer (U85) runs block by block in step with the op that fills
    // it, so it starts with its producer; it still ends after it.
    const bool chained = op.kernel().ifm.storage == Storage::Chained || (op.kernel().has_ifm2 && op.kernel().ifm2.storage == Storage::Chained);
    return chained ? std::max(at, previous_start_) : std::max(at, free_at_ - (slice ? previous_drain_ : 0));
}

void KernelPipeline::issue(const DecodedOp& op, int64_t at, const ChannelUses& dma, OpTiming& t) {
    t.cost = cost_(op, ctx_);
    t.ifm_bits = op.kernel().ifm.precision.bits;
    t.ofm_bits = op.kernel().ofm.precision.bits;
    const int64_t access = access_cycles(op, t);
    // Slices of one operation pipeline when BLOCKDEP lets the next start early: it fetches its first
    // IFM block while the previous writes its last OFM block (Vela counts that fill and drain once
    // per operation). Only compute time hides; memory time does not.
    const bool slice = previous_ && op.kernel().block.blockdep > 0 && depth_slice_of(*previous_, op);
    const int64_t slack = std::max<int64_t>(t.cost.compute_cycles - access, 0);
    const int64_t hidden_fill = slice ? std::min(slack, t.cost.fill_cycles) : 0;
    t.start = earliest_start(op, at, slice);
    // Its traffic shares each channel with the DMA's; ops end in order.
    const ChannelBusy busy = channel_busy(ctx_.memory, t.cost.traffic);
    t.end = std::max({t.start + std::max(t.cost.compute_cycles - hidden_fill, access), dma.shared_end(t.start, busy),
                      free_at_});
    uses_.record(t.start, t.end, busy);
    previous_ = &op;
    previous_start_ = t.start;
    previous_drain_ = std::min(slack, t.cost.drain_cycles);
    free_at_ = t.end;
    outstanding_.add(t.end);
}

DmaTransfer DmaChannel::transfer(const DecodedOp& op, MemoryTraffic& traffic) const {
    const Dma& d = op.dma();
    DmaTransfer x;
    x.bytes = dma_bytes(ctx_, op);
    x.from = ctx_.memory_of(d.src.region);
    // A 1D transfer's reads come in the source memory's aligned bursts (the rows of 2D and 3D
    // transfers are counted as their bytes).
    x.read_bytes = d.dimensions == 1 ? burst_aligned_bytes(ctx_, op, d.src.address, static_cast<uint64_t>(x.bytes),
                                                           ctx_.memory.timing(x.from).axi_burst_bytes())
                                     : x.bytes;
    traffic.add_read(x.from, x.read_bytes);
    if (d.gather || d.scatter) {
        x.index = DmaIndexRead{ctx_.memory_of(d.index.region), index_bytes(ctx_, op)};
        traffic.add_read(x.index->memory, x.index->bytes);
    }
    if (!d.dst.internal) {
        x.to = ctx_.memory_of(d.dst.region);
        traffic.add_write(*x.to, x.bytes);
    }
    return x;
}

void DmaChannel::issue(const DecodedOp& op, int64_t at, const ChannelUses& kernel, OpTiming& t) {
    const DmaTransfer x = transfer(op, t.cost.traffic);
    // Its access cycles per memory, as the per-layer report counts them: the bytes read and written
    // there together over the memory's bandwidth.
    for (int m = 0; m < kMemoryKinds; ++m) {
        const int64_t moved = t.cost.traffic.read[m] + t.cost.traffic.write[m];
        if (moved == 0) continue;
        const double bandwidth = ctx_.memory.bytes_per_cycle(static_cast<MemoryKind>(m));
        t.access_cycles[m] = cost_figure(ctx_, op, "access cycles", double(moved) / bandwidth);
    }
    const int64_t duration = cost_functions(ctx_.npu).dma(op, ctx_, x);
    const int64_t start = std::max(at, free_at_);
    const ChannelBusy busy = channel_busy(ctx_.memory, t.cost.traffic);
    // Latencies and the slower side set its duration alone; sharing the channels with the kernel
    // ops stretches it by what they take.
    int64_t alone = start;
    for (const auto& channels : busy)
        for (const double b : channels) alone = std::max(alone, start + static_cast<int64_t>(b));
    int64_t begun = start;
    t.end = start + duration + (kernel.shared_end(start, busy, &begun) - alone);
    t.start = begun;  // a DMA whose port a kernel op saturates waits for it
    uses_.record(t.start, t.end, busy);
    free_at_ = t.end;
    outstanding_.add(t.end);
}

}  // namespace ethosu
