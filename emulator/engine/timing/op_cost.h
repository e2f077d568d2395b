#pragma once
// One kernel operation's cost, as a generation's cost function estimates it from the decoded op
// alone: compute cycles (MAC array, output unit, command issue) and the bytes its block
// traversal moves per memory. The timing model turns these into a timeline.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "emulator/engine/rounding.h"
#include "emulator/engine/timing/arch_timing.h"
#include "emulator/engine/timing/system_config.h"
#include "emulator/isa/decoded_op.h"
#include "emulator/memory/address_space.h"

namespace ethosu {

struct MemoryTraffic {
    std::array<int64_t, kMemoryKinds> read{};   // bytes, by MemoryKind
    std::array<int64_t, kMemoryKinds> write{};
    void add_read(MemoryKind k, int64_t bytes) { read[static_cast<size_t>(k)] += bytes; }
    void add_write(MemoryKind k, int64_t bytes) { write[static_cast<size_t>(k)] += bytes; }
};

struct OpCost {
    int64_t compute_cycles = 0;  // the op's NPU cycles without memory stalls
    int64_t mac_cycles = 0;      // MAC array busy
    int64_t output_cycles = 0;   // output unit (AO) busy
    int64_t issue_cycles = 0;    // command-issue limit
    int64_t weight_decode_cycles = 0;
    // Parts of compute_cycles at the op's edges: fetching the first IFM block, and the last
    // block's output and write-back (0 where a cost function does not separate them).
    int64_t fill_cycles = 0;
    int64_t drain_cycles = 0;
    int64_t macs = 0;
    MemoryTraffic traffic;       // what the op's block traversal reads and writes
    // Per memory, cycles its accesses need when they take longer than bytes / bandwidth (U55/U65:
    // bursts shorter than the memory's; U85: per-channel read buffers); 0: bytes / bandwidth.
    std::array<int64_t, kMemoryKinds> access_cycles{};
};

// Where the op's data lives: the memory behind each region, and that memory's parameters; and
// the file (or label) of the stream, which the cost functions' errors name.
struct CostContext {
    const NpuConfig& npu;
    const MemorySystem& memory;
    std::array<MemoryKind, AddressSpace::kRegions> region_memory{};
    std::string source;

    MemoryKind memory_of(int region) const { return region_memory.at(static_cast<size_t>(region)); }
};

// Kernel ops (CONV, DEPTHWISE, POOL, ELEMENTWISE, RESIZE); one function per generation.
OpCost u55_kernel_cost(const DecodedOp& op, const CostContext& ctx);  // U55 and U65
OpCost u85_kernel_cost(const DecodedOp& op, const CostContext& ctx);

// DMA: cycles to read read_bytes from one memory and write write_bytes to another (read and write
// overlap; the slower side, plus its latency, bounds the transfer).
int64_t dma_cycles(const CostContext& ctx, const DecodedOp& op, MemoryKind from, MemoryKind to, int64_t read_bytes,
                   int64_t write_bytes);

// The bytes a read of [address, address + length) brings over AXI: reads of a memory come in
// bursts of its burst_length (the system config's <memory>_burst_length), aligned to it, so the
// first and last bursts carry bytes outside the range (writes have byte strobes and carry only
// the range). On the FVP anchors, the flash (128-byte bursts) reads of the weight DMAs and weight
// streams are this much above their lengths: MobileNetV2 +24,912 bytes (the FVP's AXI1 beats are
// 24,264 above the lengths), AD +3,104 (3,272), RNNoise +3,280 (4,488).
int64_t burst_aligned_bytes(const CostContext& ctx, const DecodedOp& op, uint64_t address, uint64_t length, int burst_length);

// U85 DMA: the same, with each side limited by its AXI channel (memory-to-memory reads, writes);
// to = nullopt: a LUT load into the internal LUT RAM. In index mode (gather/scatter) the read
// side also fetches the indices (`index`) on the same channel, and a row's address depends on
// its index, so the index fetch and its latency come before the rows.
struct DmaIndexRead {
    MemoryKind memory = MemoryKind::Sram;
    int64_t bytes = 0;
};
int64_t u85_dma_cycles(const DecodedOp& op, const CostContext& ctx, MemoryKind from, std::optional<MemoryKind> to, int64_t bytes,
                       std::optional<DmaIndexRead> index = std::nullopt);

// Cycle, byte and MAC figures of one op stay at most kMaxCostFigure, 2^53: the estimates compute
// in double, which holds such figures exactly, and a sum of a few of them fits int64. Only a
// hostile op comes near it (a 65536 x 65536 OFM in 1x1 blocks under a 65536-tap kernel; the
// largest corpus op costs about 2^22 cycles); its cost is an Error naming the op instead of
// undefined behaviour (ctx names the stream's file).
inline constexpr int64_t kMaxCostFigure = int64_t{1} << 53;
// The product of non-negative factors, checked against kMaxCostFigure; what: the figure's name.
int64_t cost_product(const CostContext& ctx, const DecodedOp& op, std::string_view what, std::initializer_list<int64_t> factors);
// A figure computed in floating point, truncated toward zero (as the estimates round), checked.
int64_t cost_figure(const CostContext& ctx, const DecodedOp& op, std::string_view what, double value);

// The hardware splits kernels larger than 8x8 into sub-kernels of at most 8x8 taps, row by row
// from the top left. Calls fn(taps, count) once per distinct sub-kernel size (at most four: the
// whole ones and those cut at the right and bottom edges), so that costing them takes four
// steps whatever the kernel's size.
inline constexpr int kSubKernelMax = 8;
template <typename Fn>
void for_each_sub_kernel(const Block3& kernel, Fn fn) {
    const std::array<std::pair<int, int>, 2> heights = {{{kSubKernelMax, kernel.height / kSubKernelMax},
                                                         {kernel.height % kSubKernelMax, 1}}};
    const std::array<std::pair<int, int>, 2> widths = {{{kSubKernelMax, kernel.width / kSubKernelMax},
                                                        {kernel.width % kSubKernelMax, 1}}};
    for (const auto& [h, rows] : heights) {
        for (const auto& [w, columns] : widths) {
            if (h > 0 && w > 0 && rows > 0 && columns > 0) fn(h * w, int64_t{rows} * columns);
        }
    }
}

// The IFM lines (rows or columns) an op's OFM blocks read along one axis, summed over the blocks
// and the sub-kernels (the IFM is fetched again for each): a block reads the lines its OFM lines
// need under each sub-kernel, clipped to the IFM. Padding is made by the NPU (IFM_PAD_*), not
// read, and a block at the OFM's edge holds only the OFM lines there are. Vela's estimate counts
// every block at the configured IFM block's size instead.
struct IfmAxis {
    int ofm = 1, block = 1;  // OFM lines, and per OFM block
    int stride = 1, pad_before = 0;
    int ifm = 1;             // IFM lines as stored
    int taps = 1, dilation = 1;
    int upscale = 1;         // IFM_UPSCALE: 1 or 2
};
int64_t ifm_lines_read(const IfmAxis& axis);

Block3 min3(const Block3& a, const Block3& b);
Block3 div_up3(const Block3& a, const Block3& b);
// The shape as stored: NHCWB16 rounds the depth up to whole 16-channel bricks.
Block3 storage_rounded(Block3 s, DataFormat format);
// The kernel's height and width without dilation (the registers hold the dilated size).
Block3 undilated_kernel(const Kernel& k);

// How a MAC op's per-block MAC and output-unit work share the block's command-issue budget:
// the issue limit is a quarter of (the IFM/OFM block transfer skew + MAC + output cycles per
// block), and neither unit runs faster than it.
struct BlockBalance {
    double issue = 0, mac = 0, output = 0;
    bool mac_bound() const { return mac > output; }
};
BlockBalance balance_block(double mac_block, double output_block, double ofm_blocks, int64_t ifm_block_cycles,
                           int64_t ofm_block_cycles);

// The IFM extent the op reads: from the OFM, stride, dilated kernel and padding (the IFM width
// is not a register on every generation), limited below by 1.
Block3 input_extent(const DecodedOp& op);
// The OFM's shape, and the OFM block the stream configures (NPU_SET_OFM_BLK_*, at least 1 each).
Block3 shape_of(const FeatureMap& fm);
Block3 configured_ofm_block(const KernelOp& op);
// Whether the op's clamp is a fused ReLU-style activation: narrower than the OFM type, or with
// its lower bound at the OFM zero point (real zero).
bool has_clamp_activation(const KernelOp& op);

}  // namespace ethosu
