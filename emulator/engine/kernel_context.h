#pragma once
// The engine's own plumbing between the Executor and its kernels (engine/*.cc): the context a
// kernel runs in, the buffers it reuses from op to op (per TBB worker), U85 chain buffers and kept
// accumulators. Private to emulator/engine (and the engine's own tests): front ends see executor.h.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tbb/task_arena.h>

#include "emulator/engine/executor.h"
#include "emulator/engine/kernel_geometry.h"
#include "emulator/memory/feature_map.h"

namespace ethosu {

// Room for n elements in a scratch buffer: it grows to exactly n (resize() may double its
// capacity), and its old contents, which the caller overwrites, are dropped before the new room
// is allocated.
template <typename T>
void make_room(std::vector<T>& buffer, size_t n) {
    if (buffer.capacity() >= n) return;
    std::vector<T>().swap(buffer);
    buffer.reserve(n);
}

// Sizes a scratch buffer to n elements (make_room, then resize).
template <typename T>
void fit_scratch(std::vector<T>& buffer, size_t n) {
    make_room(buffer, n);
    buffer.resize(n);
}

// A buffer per thread of the task arena, for a parallel loop. Room in them is made by the thread
// that starts the loop, before it (fit), so they grow the same way on every run whatever the
// scheduling: once a stream has run, running it again allocates nothing.
template <typename T>
class ThreadScratch {
public:
    // Room for n elements in every thread's buffer.
    void fit(size_t n) {
        const auto threads = static_cast<size_t>(tbb::this_task_arena::max_concurrency());
        if (buffers_.size() < threads) buffers_.resize(threads);
        for (auto& b : buffers_) make_room(b, n);
    }
    // The calling thread's buffer: resizing it within the room fit() made allocates nothing. A
    // thread outside any task arena (a loop run in order) takes the first.
    std::vector<T>& local() {
        const int thread = tbb::this_task_arena::current_thread_index();
        return buffers_.at(thread < 0 ? 0 : static_cast<size_t>(thread));
    }

private:
    std::vector<std::vector<T>> buffers_;
};

// A pixel's channels in a worker's operand buffer (elementwise ops): the two operands, the
// computed values and the results, `channels` each.
struct OperandRows {
    static constexpr size_t kRows = 4;
    OperandRows(std::vector<int64_t>& buffer, int channels) {
        const auto c = static_cast<size_t>(channels);
        buffer.resize(kRows * c);
        first = buffer.data();
        second = first + c;
        values = second + c;
        result = values + c;
    }
    int64_t *first, *second, *values, *result;
};

// Buffers the kernels reuse from op to op: once grown, running an op allocates nothing.
struct KernelScratch {
    // Per worker thread:
    ThreadScratch<int16_t> ifm;  // a band's IFM rows, zero point taken off, dense HWC
    ThreadScratch<uint8_t> ifm_bytes;     // or (gemm_u8) as offset bytes
    ThreadScratch<uint8_t> byte_patches;  // gemm_u8's operand patches and padding
    ThreadScratch<int32_t> accumulators;
    ThreadScratch<int16_t> patches;
    ThreadScratch<const int16_t*> tap_pixels;  // DEPTHWISE: the IFM pixel of each kernel tap
    ThreadScratch<int64_t> results;
    ThreadScratch<int64_t> wide_sums;
    ThreadScratch<int64_t> operands;  // a pixel's operands and results (pooling, elementwise, resize)
    std::vector<uint8_t> upscaled_ifm;  // an IFM_UPSCALE'd IFM, dense NHWC
};

// U85 chaining: an op's OFM kept inside the NPU (storage CHAINED) for the next op to read as its
// IFM or IFM2. Modelled as a dense NHWC buffer of the OFM's elements.
struct ChainBuffers {
    std::map<int, std::vector<uint8_t>> slots;  // by chain buffer number (the feature map's region)
    std::vector<uint8_t> pending;               // what the running op chains, stored when it ends
    int pending_slot = -1;
};

struct ExecutionContext;

// The accumulators the configuration's accumulator RAM holds in `format`, and an OFM's
// accumulators as errors name them ("HxWxC (32-bit)").
int64_t accumulator_capacity(const NpuConfig& config, AccFormat format);
std::string accumulator_shape_text(int height, int width, int depth, AccFormat format);

// U85 accumulators kept inside the NPU between ops. An op with NPU_SET_ACC_FORMAT.acc_output
// DISABLE writes no OFM and leaves its accumulators (the raw sums, before bias and scale, one per
// OFM element) for the next op, which continues them with acc_input KEEP; any other kernel op
// leaves none. Vela 5.1 keeps the OFM area of such a chain of ops the same (it splits a CONV over
// IFM depth or kernel taps, one block at a time).
struct Accumulators {
    bool kept = false;
    int height = 0, width = 0, depth = 0;
    AccFormat format = AccFormat::I32;  // ACC_FORMAT.acc_format of the op that left them
    uint32_t left_by = 0;    // that op's command offset
    std::vector<int64_t> values;  // NHWC
};

// Where an op's accumulators start (ACC_FORMAT.acc_input) and whether it outputs them
// (acc_output), checked against the op and what the previous op left.
class AccumulatorIo {
public:
    AccumulatorIo(const DecodedOp& op, ExecutionContext& ctx);
    // The starting value of OFM element (y, x, c): 0, the kept accumulator or the IFM2 element.
    int64_t initial(int y, int x, int c) const {
        return start_.empty() ? 0 : start_[(static_cast<size_t>(y) * width_ + x) * depth_ + static_cast<size_t>(c)];
    }
    bool starts_at_zero() const { return start_.empty(); }
    bool outputs() const { return outputs_; }
    // Records the final sum of an element of an op that does not output.
    void keep(int y, int x, int c, int64_t sum) {
        kept_[(static_cast<size_t>(y) * width_ + x) * depth_ + static_cast<size_t>(c)] = sum;
    }
    // After the op: hands the sums to the next op (acc_output DISABLE), or leaves none.
    void finish(Accumulators& store);

private:
    const DecodedOp& op_;
    int height_, width_, depth_;
    bool outputs_;
    std::vector<int64_t> start_;
    std::vector<int64_t> kept_;
};

struct ExecutionContext {
    const NpuConfig& config;
    const AddressSpace& memory;
    Shram& shram;
    WeightCache& weights;
    const std::string& source;
    ChainBuffers& chain;
    KernelScratch& scratch;
    Accumulators& accumulators;
    const WorkBudget& budget;  // buffers sized from the op's registers are checked against it
    // A run whose weight cache lives within it (WeightCache::one_run) reads each constant once:
    // kernels that read file-backed constants outside the cache (a DMA's source, a large layer's
    // weight groups) hand them back to the OS (AddressSpace::release) when done.
    void done_reading(std::span<const uint8_t> constants) const {
        if (weights.one_run()) memory.release(constants);
    }
    AccessContext access(const DecodedOp& op, std::string_view what) const;
    // The height x width x depth area of one of the op's feature maps, in memory or, for
    // U85 chained storage, in the chaining buffer (an OFM claims it, an IFM must find it filled).
    FeatureMapView view(const DecodedOp& op, const FeatureMap& fm, int height, int width, int depth,
                        std::string_view what, bool is_output = false);
    // The IFM as a CONV, DEPTHWISE or POOL kernel reads it: geo's area, upscaled as IFM_UPSCALE says.
    FeatureMapView kernel_ifm(const DecodedOp& op, const IfmGeometry& geo, int depth);
};

// Kernels, one per op family (engine/*.cc).
void run_dma(const DecodedOp& op, ExecutionContext& ctx);
void run_conv(const DecodedOp& op, ExecutionContext& ctx);  // CONV and DEPTHWISE
void run_pool(const DecodedOp& op, ExecutionContext& ctx);
// Vela 5.1 programs ARGMAX with OFM_SCALE scale 1, shift 16 "to separate values and indices"
// (ethos_u85_register_cs_generator.cpp GenerateOFMScalingForPooling) and splits longer axes into
// blocks of 32768 so that no index turns negative (scheduler_decompose.cpp DecomposeReduce): the
// accumulator holds the index in its upper 16 bits.
constexpr int kArgMaxIndexShift = 16;
constexpr int kArgMaxLongestWindow = 32768;
void run_elementwise(const DecodedOp& op, ExecutionContext& ctx);
void run_elementwise_u85(const DecodedOp& op, ExecutionContext& ctx);
void run_resize(const DecodedOp& op, ExecutionContext& ctx);  // U85


}  // namespace ethosu
