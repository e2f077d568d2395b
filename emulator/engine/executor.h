#pragma once
// Functional execution of a decoded command stream: every op in stream order (the order a
// correctly synchronised stream guarantees), on the NPU's address space and internal SHRAM.

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "emulator/engine/weights.h"
#include "emulator/engine/work_budget.h"
#include "emulator/isa/control_flow.h"
#include "emulator/isa/decoder.h"
#include "emulator/memory/address_space.h"

namespace ethosu {

// The U55/U65 shared buffer, one per core. Only its LUT area matters functionally: internal-mode
// DMAs write LUTs there, TABLE_n activations read them. On U85 the same bytes stand for the LUT RAM.
// U65-512 has two cores of 48 KB each (CONFIG.shram_size reports their sum, 96): Vela 3.x-5.x give
// it 48 SHRAM banks per core (architecture_features.py / regor ethos_u65.cpp AcceleratorConfig) and
// DMA its LUTs to 0xb800, the last 2 KB of a core's 48 KB, with the destination core mask 3.
class Shram {
public:
    static constexpr int kLutSlotBytes = 256;
    static constexpr int kLutBytes = 2048;  // 8 slots; an int16 LUT fills all of them

    explicit Shram(const NpuConfig& config);
    // What a configuration gives it: the cores, each core's bytes, and the cores an internal-mode
    // DMA writes (the mask in its region field, bit n: core n; U85: the LUT RAM, 1).
    static int cores_of(const NpuConfig& config);
    static uint64_t core_bytes_of(const NpuConfig& config);
    static uint32_t internal_core_mask(const NpuConfig& config, const Dma& dma);

    int cores() const { return static_cast<int>(cores_.size()); }
    uint64_t core_bytes() const { return cores_.front().bytes.size(); }
    // The LUT area starts kLutBytes before the end of a core's SHRAM (Vela places it in the last two
    // banks).
    uint64_t lut_base() const { return core_bytes() - kLutBytes; }

    // The bookkeeping of an internal-mode DMA, which needs no data: the LUT bytes it writes on the
    // cores of its mask (validate() has refused one that is not a 1-D transfer inside every core's
    // memory to at least one core). Returns the mask of the cores written. Full and timing-only runs
    // make the same calls.
    uint32_t load(const Dma& dma);
    // A U55/U65 TABLE activation reads its LUT slots: refused unless a DMA has loaded them on every core.
    void check_table(const DecodedOp& op, const std::string& source) const;
    // The bytes of a load already checked: `data` at `offset` of every core in `core_mask`.
    void write(uint32_t core_mask, uint64_t offset, std::span<const uint8_t> data);
    // Core 0's LUT from `slot` on (check_table has made sure every core holds the same).
    std::span<const uint8_t> lut(int slot) const;
    // As at reset: zeros, no LUT loaded.
    void clear();

private:
    struct Core {
        std::vector<uint8_t> bytes;
        std::vector<bool> lut_written = std::vector<bool>(kLutBytes);
    };
    std::vector<Core> cores_;
    static uint32_t cores_in(int region_mask, int cores);  // the mask's bits that name a core
    // U55/U65: TABLE_n reads SHRAM slots and an internal DMA's region field is a core mask; U85's
    // LUT RAM is neither tracked nor masked.
    bool per_core_shram_;
};

// The checks every run makes on an op before it is timed or executed, with or without data, in
// this order: its work and buffers against the budget, the LUT slots a TABLE activation reads, and
// validate(). Full runs and the device model pass here through Executor::run_op, timing-only runs
// through run_stream's walk without data, so all of them refuse the same streams.
void check_op(const DecodedOp& op, const NpuConfig& config, WorkBudget& budget, const Shram& shram,
              const std::string& source);

// Decoded weights, cached per op and the streams it reads: a model's weights decode once.
// Vela stages weights in SRAM and reuses staging addresses for other ops' weights, so an
// entry is only reused when the stream bytes are still the same, and only for an op of the
// same shape and traversal (the same bytes decode differently for another shape).
class WeightCache {
public:
    enum class Lifetime {
        // Within one run. An entry decoded from read-only memory (the model's constant data)
        // remembers where it came from instead of copying the bytes, and a layer too large to hold
        // decoded (ConvWeightGroups) is not prefetched: the kernel decodes it a group of OFM blocks
        // at a time. Such a cache reads stream bytes only to decode or compare them, and then
        // releases them (AddressSpace::release), so a mapped model file does not stay resident.
        OneRun,
        // Across runs on one memory map (StreamSession): an entry decoded from read-only memory
        // remembers where it came from, which a later run finds unchanged without comparing a byte.
        RunsOnOneMemory,
        // Across runs each on memory mapped anew: entries copy what they were decoded from.
        RunsOnFreshMemory,
    };
    explicit WeightCache(Lifetime lifetime = Lifetime::RunsOnFreshMemory) : lifetime_(lifetime) {}
    bool one_run() const { return lifetime_ == Lifetime::OneRun; }

    const OpWeights& get(const DecodedOp& op, const NpuConfig& config, const AddressSpace& memory,
                         const std::string& source);

    // Decodes ahead, in parallel, the weights of the CONV and DEPTHWISE ops among `ops` (a
    // straight-line run of them) from op `first` on, until their weight streams add up to
    // `stream_bytes`; returns the index after the last op it covered. The bytes are predicted: the memory as it is now, or, for a range the
    // last preceding 1D DMA wrote, that DMA's source. A wrong prediction costs only time (get()
    // compares the bytes); a prediction that does not decode is left for get() to report.
    size_t prefetch(std::span<const DecodedOp> ops, const NpuConfig& config, const AddressSpace& memory,
                    const std::string& source, size_t first = 0, uint64_t stream_bytes = UINT64_MAX);
    void clear() { cache_.clear(); }

private:
    // Op kind, OFM and IFM depth, kernel size, dilation, weight order, OFM block depth, IFM bits.
    using OpShape = std::array<int, 10>;
    // The op's command offset, its shape, and its weight and scale streams (region, base, length).
    using Key = std::tuple<uint32_t, OpShape, std::vector<std::tuple<int, uint64_t, uint64_t>>>;
    static Key key_of(const DecodedOp& op);
    using Spans = std::vector<std::span<const uint8_t>>;
    struct Entry {
        // What the weights were decoded from: a copy, or the read-only bytes themselves.
        std::vector<uint8_t> copied;
        Spans borrowed;
        std::unique_ptr<OpWeights> weights;

        bool decoded_from(const Spans& spans) const;
        void remember(const Spans& spans, bool borrow);
    };
    Lifetime lifetime_;
    bool borrows_read_only() const { return lifetime_ != Lifetime::RunsOnFreshMemory; }
    std::map<Key, Entry> cache_;
    // get()'s lookup buffers, reused so that a hit allocates nothing.
    Key lookup_;
    std::vector<std::span<const uint8_t>> spans_;
};

class Executor {
public:
    // Compressed weight bytes a run without a shared cache decodes ahead (and holds) at a time.
    static constexpr uint64_t kDecodeWindowBytes = 64 * 1024;

    // weights: a cache that outlives this executor, so that repeated runs of one model decode
    // its weights once; nullptr gives the executor its own. limits: each run's work and buffers.
    Executor(const NpuConfig& config, const AddressSpace& memory, std::string source,
             WeightCache* weights = nullptr, const WorkLimits& limits = {});
    ~Executor();
    Executor(Executor&&) noexcept;

    // Runs a straight-line stream (decode_stream); a BRANCH in it is refused, as only the
    // command words say where a branch leads. Each run's work starts from 0 against the limits.
    void run(const DecodedStream& stream);
    // Runs a command stream from its words, following its branches (follow_stream) with
    // RF_TRUE decided by COND_STATUS; returns the ops executed, in order.
    DecodedStream run(std::span<const uint32_t> words, const FollowOptions& options = {});
    // Checks the op (check_op: an Error past the limits or for an op the engine refuses), then executes it.
    void run_op(const DecodedOp& op);
    // Back to the state an NPU reset leaves (SHRAM and LUTs, chain buffers, kept accumulators,
    // COND_STATUS), keeping what only saves work: decoded weights and kernel scratch.
    void reset();

    Shram& shram() { return shram_; }
    // COND_STATUS.result_flag; nullopt while unpredictable.
    std::optional<bool> result_flag() const { return condition_.flag; }

private:
    NpuConfig config_;
    const AddressSpace& memory_;
    std::string source_;
    WorkBudget budget_;
    Shram shram_;
    WeightCache own_weights_{WeightCache::Lifetime::OneRun};
    WeightCache* shared_weights_;  // nullptr: own_weights_
    // What the kernels keep from op to op: chain buffers, kept accumulators, scratch (kernel_context.h).
    struct KernelState;
    std::unique_ptr<KernelState> kernels_;
    // COND_STATUS: bit 0 of the last kernel op's OFM when that OFM is one element, unpredictable
    // (per the register description) after a larger one; 0 at reset.
    struct ConditionStatus {
        std::optional<bool> flag = false;
        uint32_t set_by = 0;       // offset of the kernel op that last wrote it
        int64_t ofm_elements = 1;  // that op's OFM size
    } condition_;
    void update_condition(const DecodedOp& op);
    // The ops of a straight-line run whose weights are decoded ahead: ops[first, end).
    struct PrefetchWindow {
        const DecodedOp* ops = nullptr;
        size_t first = 0, end = 0;
    };
    // Kept across runs, so that replaying the same ops with a kept cache looks nothing up again.
    PrefetchWindow window_;
    // Before op, one of `ahead` (the straight-line run it starts), runs: decodes ahead the weights
    // of the window that starts at it, unless the window holding it already has.
    void prefetch_weights(std::span<const DecodedOp> ahead, const DecodedOp& op);
};

}  // namespace ethosu
