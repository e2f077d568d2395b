#include "frontend/device/npu_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "emulator/engine/executor.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// STATUS fields (the same bits on every generation; wd_fault is U55/U65, branch_fault U85).
constexpr uint32_t kStateRunning = 1u << 0;
constexpr uint32_t kIrqRaised = 1u << 1;
constexpr uint32_t kBusStatus = 1u << 2;
constexpr uint32_t kCmdParseError = 1u << 4;
constexpr uint32_t kCmdEndReached = 1u << 5;
constexpr uint32_t kPmuIrqRaised = 1u << 6;
constexpr uint32_t kBranchFault = 1u << 9;  // U85
constexpr int kFaultingChannelShift = 12;
constexpr int kIrqHistoryShift = 16;
// CMD fields.
constexpr uint32_t kCmdRun = 1u << 0;
constexpr uint32_t kCmdClearIrq = 1u << 1;
constexpr uint32_t kCmdPowerClockMask = 0xCu;  // clock_q_enable, power_q_enable: kept
constexpr uint32_t kCmdStopRequest = 1u << 4;
// PMCR fields.
constexpr uint32_t kPmcrCountEnable = 1u << 0;
constexpr uint32_t kPmcrEventReset = 1u << 1;
constexpr uint32_t kPmcrCycleReset = 1u << 2;
constexpr uint32_t kPmcrMaskEnable = 1u << 3;
constexpr uint32_t kPmcrReadOnly = 0x1Fu << 11;  // num_event_cnt
constexpr uint32_t kCycleCounterBit = 1u << 31;  // in PMCNTENSET/PMOVSSET/PMINTSET
constexpr uint64_t kCycleCounterMask = (uint64_t{1} << 48) - 1;

// The channel a bus fault names (STATUS.faulting_channel): 0 command, 1 IFM, 2 weights,
// 3 scale/bias, 4 mem2mem read; 8 OFM write, 9 mem2mem write.
uint32_t faulting_channel(const std::string& access) {
    if (access == "DMA destination") return 9;
    if (access.starts_with("DMA")) return 4;
    if (access == "OFM") return 8;
    if (access.starts_with("weight")) return 2;
    return 1;
}

}  // namespace

struct NpuDevice::Reg {
    uint32_t id, status, cmd, reset, qbase, qread, qsize, prot, config, regioncfg, basep;
    uint32_t pmcr, pmcntenset, pmcntenclr, pmovsset, pmovsclr, pmintset, pmintclr, pmccntr, pmevcntr, pmevtyper;
    uint32_t mem_attr = 0;  // U85 MEM_ATTR[0], for the AXI port of each region
    bool u85 = false;

    explicit Reg(const isa::GenerationDesc& g) {
        auto off = [&](std::string_view name) {
            const auto* r = g.register_named(name);
            if (!r) throw std::logic_error(fmt::format("description of {} lacks register {}", g.name, name));
            return r->offset;
        };
        id = off("ID"), status = off("STATUS"), cmd = off("CMD"), reset = off("RESET"), qbase = off("QBASE");
        qread = off("QREAD"), qsize = off("QSIZE"), prot = off("PROT"), config = off("CONFIG");
        regioncfg = off("REGIONCFG"), basep = off("BASEP");
        pmcr = off("PMCR"), pmcntenset = off("PMCNTENSET"), pmcntenclr = off("PMCNTENCLR");
        pmovsset = off("PMOVSSET"), pmovsclr = off("PMOVSCLR"), pmintset = off("PMINTSET"), pmintclr = off("PMINTCLR");
        pmccntr = off("PMCCNTR"), pmevcntr = off("PMEVCNTR"), pmevtyper = off("PMEVTYPER");
        u85 = g.generation == Generation::U85;
        if (u85) mem_attr = off("MEM_ATTR");
    }
};

NpuDevice::NpuDevice(Options options)
    : options_(std::move(options)),
      gen_(isa::describe(options_.npu.generation)),
      reg_(std::make_unique<Reg>(gen_)),
      memory_(make_memory_system(options_.npu, options_.system)) {
    uint32_t end = 0;
    for (const auto& r : gen_.registers) end = std::max(end, r.offset + r.bytes());
    const size_t words = (end + 0xFFF) / 0x1000 * 0x1000 / 4;
    regs_.assign(words, 0);
    block_.assign(words, 0);
    writable_.assign(words, 0);
    for (const auto& r : gen_.registers)
        if (r.access != isa::Access::RO)
            for (uint32_t b = 0; b < r.bytes(); b += 4) writable_[(r.offset + b) / 4] = 1;
    reset();
    publish();
}

NpuDevice::~NpuDevice() = default;

void NpuDevice::reset() {
    std::fill(regs_.begin(), regs_.end(), 0);
    for (const auto& r : gen_.registers) {
        for (uint32_t i = 0; i < r.count; ++i) regs_[(r.offset + i * (r.width_bits / 8)) / 4] = r.reset;
    }
    at(reg_->id) = options_.npu.hw_id_reset;
    at(reg_->config) = options_.npu.config_word;
    at(reg_->status) = 0;  // the reset completes at once: reset_status reads 0
    at(reg_->prot) = (options_.privileged ? 1u : 0u) | (options_.secure ? 0u : 2u);
    run_requested_ = false;
}

void NpuDevice::map(uint64_t npu_address, std::span<uint8_t> host, std::string name) {
    map_.map(npu_address, host, std::move(name), MemoryKind::Sram);
}

std::optional<uint64_t> NpuDevice::npu_address(const void* host) const {
    const auto* p = static_cast<const uint8_t*>(host);
    for (const auto& m : map_.mappings()) {
        if (p >= m.bytes.data() && p < m.bytes.data() + m.bytes.size())
            return m.address + static_cast<uint64_t>(p - m.bytes.data());
    }
    return std::nullopt;
}

uint64_t NpuDevice::read64(uint32_t offset) const {
    return regs_[offset / 4] | (uint64_t{regs_[offset / 4 + 1]} << 32);
}

bool NpuDevice::irq_pending() const { return (regs_[reg_->status / 4] & (kIrqRaised | kPmuIrqRaised)) != 0; }

uint32_t NpuDevice::read(uint32_t offset) {
    if (offset % 4 || offset / 4 >= regs_.size()) return 0;
    const Reg& r = *reg_;
    if (offset == r.pmcntenclr) return at(r.pmcntenset);
    if (offset == r.pmovsclr) return at(r.pmovsset);
    if (offset == r.pmintclr) return at(r.pmintset);
    return at(offset);
}

void NpuDevice::write(uint32_t offset, uint32_t value) {
    if (offset % 4 || offset / 4 >= regs_.size() || !writable_[offset / 4]) return;  // RO: ignored
    const Reg& r = *reg_;
    uint32_t& status = at(r.status);
    if (offset == r.reset) {
        reset();
        at(r.prot) = value & 3u;  // pending_CPL, pending_CSL become active
    } else if (offset == r.cmd) {
        if (value & kCmdClearIrq) status &= ~(kIrqRaised | kPmuIrqRaised);
        status &= ~((value >> kIrqHistoryShift) << kIrqHistoryShift);  // clear_irq_history
        at(r.cmd) = value & kCmdPowerClockMask;
        if ((value & kCmdStopRequest) && (status & kStateRunning)) {
            run_requested_ = false;
            status &= ~kStateRunning;
        }
        if ((value & kCmdRun) && !(status & (kBusStatus | kCmdParseError))) {
            run_requested_ = true;
            status = (status | kStateRunning) & ~kCmdEndReached;
        }
    } else if (offset == r.pmcr) {
        if (value & kPmcrEventReset)
            for (int n = 0; n < pmu_event_counters(options_.npu.generation); ++n) at(r.pmevcntr + 4 * n) = 0;
        if (value & kPmcrCycleReset) at(r.pmccntr) = at(r.pmccntr + 4) = 0;
        at(r.pmcr) = (at(r.pmcr) & kPmcrReadOnly) | (value & ~(kPmcrReadOnly | kPmcrEventReset | kPmcrCycleReset));
    } else if (offset == r.pmcntenset || offset == r.pmovsset || offset == r.pmintset) {
        at(offset) |= value;
    } else if (offset == r.pmcntenclr) {
        at(r.pmcntenset) &= ~value;
    } else if (offset == r.pmovsclr) {
        at(r.pmovsset) &= ~value;
    } else if (offset == r.pmintclr) {
        at(r.pmintset) &= ~value;
    } else {
        if ((offset == r.qsize || offset == r.qbase) && !(status & kStateRunning)) status &= ~kCmdEndReached;
        at(offset) = value;
    }
}

void NpuDevice::execute() {
    run_requested_ = false;
    const Reg& r = *reg_;
    uint32_t& status = at(r.status);
    const uint64_t qbase = read64(r.qbase);
    const uint32_t qsize = at(r.qsize);
    const std::string source = fmt::format("command stream at 0x{:x}", qbase);
    auto fault = [&](uint32_t bits, uint32_t channel, uint32_t qread, const std::string& message) {
        status = (status & ~(kStateRunning | (0xFu << kFaultingChannelShift))) | bits |
                 (channel << kFaultingChannelShift);
        at(r.qread) = qread;
        last_error_ = message;
    };
    last_error_.clear();
    last_timing_.reset();

    const MemoryMap::Mapping* stream_memory = map_.find(qbase, qsize);
    if (!stream_memory) {
        fault(kBusStatus, 0, 0, fmt::format("{}: {} bytes outside every mapped memory", source, qsize));
        raise_irq();
        return;
    }
    std::vector<uint32_t> words(qsize / 4);
    std::memcpy(words.data(), stream_memory->bytes.data() + (qbase - stream_memory->address), words.size() * 4);

    DecodedStream stream;
    try {
        stream = decode_stream(options_.npu, words, source);
    } catch (const Error& e) {
        fault(kCmdParseError, 0, static_cast<uint32_t>(e.where().offset.value_or(0)), e.what());
        raise_irq();
        return;
    }

    // The memory behind each region: REGIONCFG picks an AXI configuration per region (U55/U65:
    // AXI_LIMIT 0-1 on AXI0, 2-3 on AXI1; U85: MEM_ATTR n, whose axi_port bit picks the port).
    std::array<MemoryKind, AddressSpace::kRegions> memories{};
    AddressSpace space(map_);
    for (int i = 0; i < AddressSpace::kRegions; ++i) {
        const uint32_t cfg = (at(r.regioncfg) >> (2 * i)) & 3u;
        const int port = r.u85 ? static_cast<int>((at(r.mem_attr + 4 * cfg) >> 2) & 1u) : (cfg >= 2 ? 1 : 0);
        memories[static_cast<size_t>(i)] = memory_.port_memory(port);
        space.set_base(i, read64(r.basep + 8 * i));
    }
    try {
        Executor executor(options_.npu, space, source, &weights_);
        stream = executor.run(words);  // the ops executed, branches followed
    } catch (const BusError& e) {
        fault(kBusStatus, faulting_channel(e.access()), static_cast<uint32_t>(e.where().offset.value_or(0)), e.what());
        raise_irq();
        return;
    } catch (const Error& e) {
        // A branch that leads nowhere is the U85's branch fault; the rest is malformed input.
        const bool branch_fault = r.u85 && e.where().field == "NPU_OP_BRANCH.branch_target";
        fault(branch_fault ? kBranchFault : kCmdParseError, 0, static_cast<uint32_t>(e.where().offset.value_or(0)),
              e.what());
        raise_irq();
        return;
    }
    last_timing_ = std::make_unique<TimingResult>(TimingModel(options_.npu, memory_, memories).run(stream));
    uint32_t history = 0;
    for (const auto& op : stream.ops)
        if (op.kind == OpKind::Stop || op.kind == OpKind::Irq) history |= op.mask & 0xFFFFu;
    status = (status & ~kStateRunning) | kCmdEndReached | (history << kIrqHistoryShift);
    at(r.qread) = qsize;
    count_pmu(*last_timing_);
    raise_irq();
}

void NpuDevice::count_pmu(const TimingResult& timing) {
    const Reg& r = *reg_;
    const uint32_t pmcr = at(r.pmcr);
    if (!(pmcr & kPmcrCountEnable)) return;
    const int counters = pmu_event_counters(options_.npu.generation);
    std::vector<uint32_t> events;
    for (int n = 0; n < counters; ++n) events.push_back(at(r.pmevtyper + 4 * n) & 0x3FFu);
    const PmuReading reading = read_pmu(memory_, {timing}, events, (pmcr & kPmcrMaskEnable) != 0);
    const uint32_t enabled = at(r.pmcntenset);
    for (int n = 0; n < counters; ++n) {
        if (!(enabled & (1u << n))) continue;
        const uint64_t sum = uint64_t{at(r.pmevcntr + 4 * n)} + reading.counters[static_cast<size_t>(n)];
        at(r.pmevcntr + 4 * n) = static_cast<uint32_t>(sum);
        if (sum >> 32) at(r.pmovsset) |= 1u << n;
    }
    if (enabled & kCycleCounterBit) {
        const uint64_t sum = read64(r.pmccntr) + reading.cycle_counter;
        at(r.pmccntr) = static_cast<uint32_t>(sum);
        at(r.pmccntr + 4) = static_cast<uint32_t>((sum & kCycleCounterMask) >> 32);
        if (sum > kCycleCounterMask) at(r.pmovsset) |= kCycleCounterBit;
    }
    if (at(r.pmovsset) & at(r.pmintset)) at(r.status) |= kPmuIrqRaised;
}

void NpuDevice::raise_irq() {
    at(reg_->status) |= kIrqRaised;
    publish();
    if (irq_handler_) irq_handler_();
}

bool NpuDevice::run_until_idle() {
    if (!run_requested_) return false;
    execute();
    return true;
}

void NpuDevice::publish() {
    for (size_t i = 0; i < regs_.size(); ++i) block_[i] = read(static_cast<uint32_t>(i * 4));
    shadow_ = block_;
}

void NpuDevice::sync() {
    // Apply what the driver wrote since the last publish: RESET first (it clears the rest),
    // CMD last (it starts the run the other registers describe); then run, which publishes and
    // raises the interrupt, whose handler may write again (clear_irq).
    for (int round = 0; round < 4; ++round) {
        std::vector<uint32_t> changed;
        for (size_t i = 0; i < block_.size(); ++i)
            if (block_[i] != shadow_[i] && writable_[i]) changed.push_back(static_cast<uint32_t>(i * 4));
        if (changed.empty() && !run_requested_) break;
        auto priority = [&](uint32_t off) { return off == reg_->reset ? 0 : off == reg_->cmd ? 2 : 1; };
        std::stable_sort(changed.begin(), changed.end(),
                         [&](uint32_t a, uint32_t b) { return priority(a) < priority(b); });
        for (uint32_t off : changed) write(off, block_[off / 4]);
        publish();
        run_until_idle();
    }
}

}  // namespace ethosu
