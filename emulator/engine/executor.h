#pragma once
// Functional execution of a decoded command stream: every op in stream order (the order a
// correctly synchronised stream guarantees), on the NPU's address space and internal SHRAM.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <tbb/enumerable_thread_specific.h>

#include "emulator/engine/weights.h"
#include "emulator/isa/control_flow.h"
#include "emulator/isa/decoder.h"
#include "emulator/memory/address_space.h"
#include "emulator/memory/feature_map.h"

namespace ethosu {

// The U55/U65 shared buffer. Only its LUT area matters functionally: internal-mode DMAs write
// LUTs there, TABLE_n activations read them. On U85 the same bytes stand for the LUT RAM.
class Shram {
public:
    static constexpr int kLutSlotBytes = 256;
    static constexpr int kLutBytes = 2048;  // 8 slots; an int16 LUT fills all of them

    explicit Shram(const NpuConfig& config);

    std::span<uint8_t> bytes() { return bytes_; }
    // The LUT area starts kLutBytes before the end (Vela places it in the last two banks).
    std::span<const uint8_t> lut(int slot) const;
    uint64_t lut_base() const { return bytes_.size() - kLutBytes; }

    // Notes a write of [offset, offset + length) by a DMA, so a table activation can tell
    // whether its LUT was ever loaded.
    void mark_written(uint64_t offset, uint64_t length);
    // Whether every byte of `slots` LUT slots from `first` has been written.
    bool lut_loaded(int first, int slots) const;

private:
    std::vector<uint8_t> bytes_;
    std::vector<bool> lut_written_ = std::vector<bool>(kLutBytes);
};

// Decoded weights, cached per op and the streams it reads: a model's weights decode once.
// Vela stages weights in SRAM and reuses staging addresses for other ops' weights, so an
// entry is only reused when the stream bytes are still the same, and only for an op of the
// same shape and traversal (the same bytes decode differently for another shape).
class WeightCache {
public:
    const OpWeights& get(const DecodedOp& op, const NpuConfig& config, const AddressSpace& memory,
                         const std::string& source);

    // Decodes ahead, in parallel, the weights of the stream's CONV and DEPTHWISE ops from the
    // bytes they are predicted to read: the memory as it is now, or, for a range the last
    // preceding 1D DMA wrote, that DMA's source. A wrong prediction costs only time (get()
    // compares the bytes); a prediction that does not decode is left for get() to report.
    void prefetch(const DecodedStream& stream, const NpuConfig& config, const AddressSpace& memory,
                  const std::string& source);

private:
    // Op kind, OFM and IFM depth, kernel size, dilation, weight order, OFM block depth, IFM bits.
    using OpShape = std::array<int, 10>;
    // The op's command offset, its shape, and its weight and scale streams (region, base, length).
    using Key = std::tuple<uint32_t, OpShape, std::vector<std::tuple<int, uint64_t, uint64_t>>>;
    static Key key_of(const DecodedOp& op);
    struct Entry {
        std::vector<uint8_t> stream_bytes;  // what the weights were decoded from
        std::unique_ptr<OpWeights> weights;
    };
    std::map<Key, Entry> cache_;
    // get()'s lookup buffers, reused so that a hit allocates nothing.
    Key lookup_;
    std::vector<std::span<const uint8_t>> spans_;
};

// Buffers the kernels reuse from op to op: once grown, running an op allocates nothing.
struct KernelScratch {
    std::vector<int16_t> ifm;      // the IFM area, zero point taken off, dense HWC
    std::vector<int16_t> weights;  // weights rearranged for a kernel's inner loop
    std::vector<int64_t> operands;  // a pixel's operands and results (pooling, elementwise)
    tbb::enumerable_thread_specific<std::vector<int32_t>> accumulators;  // per worker thread
    tbb::enumerable_thread_specific<std::vector<int16_t>> patches;       // per worker thread
    tbb::enumerable_thread_specific<std::vector<int64_t>> results;       // per worker thread
};

// U85 chaining: an op's OFM kept inside the NPU (storage CHAINED) for the next op to read as its
// IFM or IFM2. Modelled as a dense NHWC buffer of the OFM's elements.
struct ChainBuffers {
    std::map<int, std::vector<uint8_t>> slots;  // by chain buffer number (the feature map's region)
    std::vector<uint8_t> pending;               // what the running op chains, stored when it ends
    int pending_slot = -1;
};

struct ExecutionContext {
    const NpuConfig& config;
    const AddressSpace& memory;
    Shram& shram;
    WeightCache& weights;
    const std::string& source;
    ChainBuffers& chain;
    KernelScratch& scratch;

    AccessContext access(const DecodedOp& op, std::string_view what) const;
    // The height x width x depth area of one of the op's feature maps, in memory or, for
    // U85 chained storage, in the chaining buffer (an OFM claims it, an IFM must find it filled).
    FeatureMapView view(const DecodedOp& op, const FeatureMap& fm, int height, int width, int depth,
                        std::string_view what, bool is_output = false);
};

class Executor {
public:
    // weights: a cache that outlives this executor, so that repeated runs of one model decode
    // its weights once; nullptr gives the executor its own.
    Executor(const NpuConfig& config, const AddressSpace& memory, std::string source,
             WeightCache* weights = nullptr);

    // Runs a straight-line stream (decode_stream); a BRANCH in it is refused, as only the
    // command words say where a branch leads.
    void run(const DecodedStream& stream);
    // Runs a command stream from its words, following its branches (follow_stream) with
    // RF_TRUE decided by COND_STATUS; returns the ops executed, in order.
    DecodedStream run(std::span<const uint32_t> words, const FollowOptions& options = {});
    void run_op(const DecodedOp& op);

    Shram& shram() { return shram_; }
    // COND_STATUS.result_flag; nullopt while unpredictable.
    std::optional<bool> result_flag() const { return condition_.flag; }

private:
    NpuConfig config_;
    const AddressSpace& memory_;
    std::string source_;
    Shram shram_;
    WeightCache own_weights_;
    WeightCache* shared_weights_;  // nullptr: own_weights_
    ChainBuffers chain_;
    KernelScratch scratch_;
    // COND_STATUS: bit 0 of the last kernel op's OFM when that OFM is one element, unpredictable
    // (per the register description) after a larger one; 0 at reset.
    struct ConditionStatus {
        std::optional<bool> flag = false;
        uint32_t set_by = 0;       // offset of the kernel op that last wrote it
        int64_t ofm_elements = 1;  // that op's OFM size
    } condition_;
    void update_condition(const DecodedOp& op);
};

// Kernels, one per op family (engine/*.cc).
void run_dma(const DecodedOp& op, ExecutionContext& ctx);
void run_conv(const DecodedOp& op, ExecutionContext& ctx);  // CONV and DEPTHWISE
void run_pool(const DecodedOp& op, ExecutionContext& ctx);
void run_elementwise(const DecodedOp& op, ExecutionContext& ctx);
void run_elementwise_u85(const DecodedOp& op, ExecutionContext& ctx);

}  // namespace ethosu
