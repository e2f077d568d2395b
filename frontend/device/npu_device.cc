#include "frontend/device/npu_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "emulator/engine/pipeline.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/error.h"
#include "traces/chrome_trace.h"

namespace ethosu {
namespace {

// A register field's bits, as the generation's description places them.
struct Bits {
    uint32_t mask = 0;
    int shift = 0;

    uint32_t get(uint32_t word) const { return (word & mask) >> shift; }
    uint32_t put(uint32_t value) const { return (value << shift) & mask; }
};

// The field of a register, or no bits when the generation lacks it (wd_fault exists on U55/U65
// only, branch_fault on U85 only).
Bits optional_field(const isa::GenerationDesc& g, isa::RegField id) {
    const auto* f = g.reg_field(id);
    if (!f) return {};
    const uint64_t mask = ((uint64_t{1} << f->width) - 1) << (f->lo % 32);
    return {static_cast<uint32_t>(mask), f->lo % 32};
}

Bits field(const isa::GenerationDesc& g, isa::RegField id) {
    const Bits bits = optional_field(g, id);
    if (!bits.mask) {
        throw std::logic_error(fmt::format("description of {} lacks register field {}", g.name, static_cast<int>(id)));
    }
    return bits;
}

// The channel a bus fault names (STATUS.faulting_channel), in the codes of the PMU's AXI channels
// that every generation shares (tests/isa/test_tables.cc).
uint32_t faulting_channel(const std::string& access) {
    using Channel = isa::u55::pmu_axi_channel;
    auto code = [](Channel c) { return static_cast<uint32_t>(c); };
    if (access == "DMA destination") return code(Channel::WR_MEM2MEM);
    if (access.starts_with("DMA")) return code(Channel::RD_MEM2MEM);
    if (access == "OFM") return code(Channel::WR_OFM);
    if (access.starts_with("weight")) return code(Channel::RD_WEIGHTS);
    return code(Channel::RD_IFM);
}

// The block shows this in RESET so that every write to it, whatever its value, is seen.
constexpr uint32_t kResetUnwritten = 0xFFFFFFFFu;

}  // namespace

struct NpuDevice::Reg {
    uint32_t id, status, cmd, reset, qbase, qread, qsize, prot, config, regioncfg, basep;
    uint32_t pmcr, pmcntenset, pmcntenclr, pmovsset, pmovsclr, pmintset, pmintclr, pmccntr, pmevcntr, pmevtyper;
    std::optional<uint32_t> mem_attr;  // MEM_ATTR[0] where the generation has it (U85): each region's AXI port
    Bits axi_port;                     // MEM_ATTR
    Bits running, irq_raised, bus_status, parse_error, end_reached, pmu_irq_raised, wd_fault, branch_fault,
        channel, irq_history;
    Bits cmd_run, cmd_clear_irq, cmd_clock_q, cmd_power_q, cmd_stop, cmd_clear_history;
    Bits pending_cpl, pending_csl, active_cpl, active_csl;
    Bits cnt_en, event_cnt_rst, cycle_cnt_rst, mask_en, num_event_cnt, cycle_cnt, cycle_cnt_hi, ev_type;
    std::array<Bits, AddressSpace::kRegions> region_cfg;  // REGIONCFG: each region's AXI configuration

    explicit Reg(const isa::GenerationDesc& g) {
        using R = isa::Reg;
        using F = isa::RegField;
        auto off = [&](R reg) {
            const auto* r = g.reg(reg);
            if (!r) throw std::logic_error(fmt::format("description of {} lacks register {}", g.name, static_cast<int>(reg)));
            return r->offset;
        };
        id = off(R::ID), status = off(R::STATUS), cmd = off(R::CMD), reset = off(R::RESET), qbase = off(R::QBASE);
        qread = off(R::QREAD), qsize = off(R::QSIZE), prot = off(R::PROT), config = off(R::CONFIG);
        regioncfg = off(R::REGIONCFG), basep = off(R::BASEP);
        pmcr = off(R::PMCR), pmcntenset = off(R::PMCNTENSET), pmcntenclr = off(R::PMCNTENCLR);
        pmovsset = off(R::PMOVSSET), pmovsclr = off(R::PMOVSCLR), pmintset = off(R::PMINTSET), pmintclr = off(R::PMINTCLR);
        pmccntr = off(R::PMCCNTR), pmevcntr = off(R::PMEVCNTR), pmevtyper = off(R::PMEVTYPER);
        if (g.reg(R::MEM_ATTR)) mem_attr = off(R::MEM_ATTR), axi_port = field(g, F::MEM_ATTR__axi_port);
        running = field(g, F::STATUS__state), irq_raised = field(g, F::STATUS__irq_raised);
        bus_status = field(g, F::STATUS__bus_status), parse_error = field(g, F::STATUS__cmd_parse_error);
        end_reached = field(g, F::STATUS__cmd_end_reached), pmu_irq_raised = field(g, F::STATUS__pmu_irq_raised);
        wd_fault = optional_field(g, F::STATUS__wd_fault), branch_fault = optional_field(g, F::STATUS__branch_fault);
        channel = field(g, F::STATUS__faulting_channel), irq_history = field(g, F::STATUS__irq_history_mask);
        cmd_run = field(g, F::CMD__transition_to_running_state), cmd_clear_irq = field(g, F::CMD__clear_irq);
        cmd_clock_q = field(g, F::CMD__clock_q_enable), cmd_power_q = field(g, F::CMD__power_q_enable);
        cmd_stop = field(g, F::CMD__stop_request), cmd_clear_history = field(g, F::CMD__clear_irq_history);
        pending_cpl = field(g, F::RESET__pending_CPL), pending_csl = field(g, F::RESET__pending_CSL);
        active_cpl = field(g, F::PROT__active_CPL), active_csl = field(g, F::PROT__active_CSL);
        cnt_en = field(g, F::PMCR__cnt_en), event_cnt_rst = field(g, F::PMCR__event_cnt_rst);
        cycle_cnt_rst = field(g, F::PMCR__cycle_cnt_rst), mask_en = field(g, F::PMCR__mask_en);
        num_event_cnt = field(g, F::PMCR__num_event_cnt), cycle_cnt = field(g, F::PMCNTENSET__CYCLE_CNT);
        cycle_cnt_hi = field(g, F::PMCCNTR__CYCLE_CNT_HI), ev_type = field(g, F::PMEVTYPER__EV_TYPE);
        region_cfg = {field(g, F::REGIONCFG__region0), field(g, F::REGIONCFG__region1), field(g, F::REGIONCFG__region2),
                      field(g, F::REGIONCFG__region3), field(g, F::REGIONCFG__region4), field(g, F::REGIONCFG__region5),
                      field(g, F::REGIONCFG__region6), field(g, F::REGIONCFG__region7)};
    }

    uint32_t faults() const { return bus_status.mask | parse_error.mask | wd_fault.mask | branch_fault.mask; }
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
    shadow_.assign(words, 0);
    writable_.assign(words, 0);
    driver_value_.assign(words, 0);
    for (const auto& r : gen_.registers)
        if (r.access != isa::Access::RO)
            for (uint32_t b = 0; b < r.bytes(); b += 4) writable_[(r.offset + b) / 4] = 1;
    reset();
    at(reg_->prot) = reg_->active_cpl.put(options_.privileged ? 1 : 0) | reg_->active_csl.put(options_.secure ? 0 : 1);
    publish();
}

NpuDevice::~NpuDevice() { run_concurrently(false); }

void NpuDevice::reset() {
    std::fill(regs_.begin(), regs_.end(), 0);
    for (const auto& r : gen_.registers) {
        for (uint32_t i = 0; i < r.count; ++i) regs_[(r.offset + i * (r.width_bits / 8)) / 4] = r.reset;
    }
    at(reg_->id) = options_.npu.hw_id_reset;
    at(reg_->config) = options_.npu.config_word;
    at(reg_->status) = 0;  // the reset completes at once: reset_status reads 0
    std::fill(driver_value_.begin(), driver_value_.end(), 0);
    run_requested_ = false;
    running_reported_ = false;
}

void NpuDevice::map(uint64_t npu_address, std::span<uint8_t> host, std::string name) {
    std::lock_guard lock(mutex_);
    if (npu_address < kUnmappedWindow + 0x1000 && npu_address + host.size() > kUnmappedWindow)
        throw std::invalid_argument(fmt::format("{} at 0x{:x}: the page at 0x{:x} is kept unmapped", name, npu_address,
                                                kUnmappedWindow));
    map_.map(npu_address, host, std::move(name), MemoryKind::Sram);
}

std::optional<uint64_t> NpuDevice::npu_address(const void* host) const {
    std::lock_guard lock(mutex_);
    const auto* p = static_cast<const uint8_t*>(host);
    const MemoryMap::Mapping* m = map_.holding({p, 1});
    if (!m) return std::nullopt;
    return m->address + static_cast<uint64_t>(p - m->bytes.data());
}

uint64_t NpuDevice::unmapped_address(const void* host, int index) {
    std::lock_guard lock(mutex_);
    // 16-byte steps: the core driver wants aligned base addresses.
    const size_t slot = std::min<size_t>(unmapped_.size(), 0x1000 / 16 - 1);
    const std::string what = index < 0 ? "the command stream" : fmt::format("base address {}", index);
    if (slot == unmapped_.size()) unmapped_.push_back({});
    unmapped_[slot] = fmt::format("host pointer {} ({}) is in no buffer mapped with ethosu_emu_map", host, what);
    return kUnmappedWindow + 16 * slot;
}

uint64_t NpuDevice::read64(uint32_t offset) const {
    return regs_[offset / 4] | (uint64_t{regs_[offset / 4 + 1]} << 32);
}

bool NpuDevice::irq_pending() const {
    return (regs_[reg_->status / 4] & (reg_->irq_raised.mask | reg_->pmu_irq_raised.mask)) != 0;
}

void NpuDevice::set_irq_handler(std::function<void()> handler) {
    std::lock_guard lock(mutex_);
    irq_handler_ = std::move(handler);
}

uint32_t NpuDevice::read(uint32_t offset) {
    std::lock_guard lock(mutex_);
    if (offset % 4 || offset / 4 >= regs_.size()) return 0;
    // A driver polling STATUS sees a started stream running, then (as time passes) done.
    if (offset == reg_->status && run_requested_) {
        if (running_reported_) execute();
        else running_reported_ = true;
    }
    const Reg& r = *reg_;
    if (offset == r.pmcntenclr) return at(r.pmcntenset);
    if (offset == r.pmovsclr) return at(r.pmovsset);
    if (offset == r.pmintclr) return at(r.pmintset);
    return at(offset);
}

void NpuDevice::write(uint32_t offset, uint32_t value) {
    std::lock_guard lock(mutex_);
    if (offset % 4 || offset / 4 >= regs_.size() || !writable_[offset / 4]) return;  // RO: ignored
    const Reg& r = *reg_;
    uint32_t& status = at(r.status);
    if (offset == r.reset) {
        reset();
        // pending_CPL and pending_CSL become active.
        at(r.prot) = r.active_cpl.put(r.pending_cpl.get(value)) | r.active_csl.put(r.pending_csl.get(value));
    } else if (offset == r.cmd) {
        if (value & r.cmd_clear_irq.mask) status &= ~(r.irq_raised.mask | r.pmu_irq_raised.mask);
        status &= ~r.irq_history.put(r.cmd_clear_history.get(value));
        at(r.cmd) = value & (r.cmd_clock_q.mask | r.cmd_power_q.mask);  // the other bits are commands
        if ((value & r.cmd_stop.mask) && (status & r.running.mask)) {
            run_requested_ = false;
            status &= ~r.running.mask;
        }
        // A faulted NPU does not start again until a soft reset (the core driver resets it).
        if ((value & r.cmd_run.mask) && !(status & r.faults())) {
            run_requested_ = true;
            running_reported_ = false;
            status = (status | r.running.mask) & ~r.end_reached.mask;
        }
    } else if (offset == r.pmcr) {
        if (value & r.event_cnt_rst.mask)
            for (int n = 0; n < pmu_event_counters(options_.npu.generation); ++n) at(r.pmevcntr + 4 * n) = 0;
        if (value & r.cycle_cnt_rst.mask) at(r.pmccntr) = at(r.pmccntr + 4) = 0;
        // The reset bits act and read 0; num_event_cnt is read-only.
        const uint32_t kept = r.num_event_cnt.mask;
        const uint32_t actions = r.event_cnt_rst.mask | r.cycle_cnt_rst.mask;
        at(r.pmcr) = (at(r.pmcr) & kept) | (value & ~(kept | actions));
        driver_value_[offset / 4] = 1;
    } else if (offset == r.pmcntenset || offset == r.pmovsset || offset == r.pmintset) {
        at(offset) |= value;
        driver_value_[offset / 4] = 1;
    } else if (offset == r.pmcntenclr) {
        at(r.pmcntenset) &= ~value;
    } else if (offset == r.pmovsclr) {
        at(r.pmovsset) &= ~value;
    } else if (offset == r.pmintclr) {
        at(r.pmintset) &= ~value;
    } else {
        if ((offset == r.qsize || offset == r.qbase) && !(status & r.running.mask)) status &= ~r.end_reached.mask;
        at(offset) = value;
        driver_value_[offset / 4] = 1;
    }
}

void NpuDevice::fault(uint32_t bits, uint32_t channel, uint32_t qread, std::string message) {
    const Reg& r = *reg_;
    uint32_t& status = at(r.status);
    status = (status & ~(r.running.mask | r.channel.mask)) | bits | r.channel.put(channel);
    at(r.qread) = qread;
    // A bus error after the driver handed the NPU host pointers no mapping holds: name them.
    if ((bits & r.bus_status.mask) && !unmapped_.empty()) {
        message += "; the driver handed the NPU unmapped memory:";
        for (const auto& u : unmapped_) message += " " + u + ";";
        message.pop_back();
    }
    last_error_ = std::move(message);
    raise_irq();
}

std::pair<uint32_t, uint32_t> NpuDevice::fault_status(const Error& error) const {
    const Reg& r = *reg_;
    switch (error.kind()) {
        case ErrorKind::OutOfBounds: {
            const auto* bus = dynamic_cast<const BusError*>(&error);
            return {r.bus_status.mask, bus ? faulting_channel(bus->access()) : 0};
        }
        // Only U85 has branches, and a branch_fault bit.
        case ErrorKind::BranchFault: return {r.branch_fault.mask ? r.branch_fault.mask : r.parse_error.mask, 0};
        default: return {r.parse_error.mask, 0};
    }
}

void NpuDevice::execute() {
    run_requested_ = false;
    running_reported_ = false;
    const Reg& r = *reg_;
    const uint64_t qbase = read64(r.qbase);
    const uint32_t qsize = at(r.qsize);
    const std::string source = fmt::format("command stream at 0x{:x}", qbase);
    last_error_.clear();
    last_timing_.reset();
    struct ForgetUnmapped {
        std::vector<std::string>& notes;
        ~ForgetUnmapped() { notes.clear(); }
    } forget{unmapped_};

    // An empty queue ends before its NPU_OP_STOP, as a truncated stream does.
    if (qsize == 0) return fault(r.parse_error.mask, 0, 0, fmt::format("{}: QSIZE is 0, no command stream", source));
    const MemoryMap::Mapping* stream_memory = map_.find(qbase, qsize);
    if (!stream_memory)
        return fault(r.bus_status.mask, 0, 0, fmt::format("{}: {} bytes outside every mapped memory", source, qsize));
    std::vector<uint32_t> words(qsize / 4);
    std::memcpy(words.data(), stream_memory->bytes.data() + (qbase - stream_memory->address), words.size() * 4);

    // The memory behind each region: REGIONCFG picks an AXI configuration per region (U55/U65:
    // AXI_LIMIT 0-1 on AXI0, 2-3 on AXI1; U85: MEM_ATTR n, whose axi_port bit picks the port).
    TimedMemory timed{memory_, {}};
    AddressSpace space(map_);
    for (int i = 0; i < AddressSpace::kRegions; ++i) {
        const uint32_t cfg = r.region_cfg[static_cast<size_t>(i)].get(at(r.regioncfg));
        const int port = r.mem_attr ? static_cast<int>(r.axi_port.get(at(*r.mem_attr + 4 * cfg))) : (cfg >= 2 ? 1 : 0);
        timed.regions[static_cast<size_t>(i)] = memory_.port_memory(port);
        space.set_base(i, read64(r.basep + 8 * i));
    }
    StreamOutcome outcome;
    try {
        // Each straight-line block is decoded before its ops run (follow_stream): a malformed op
        // faults the run before any op of its block has run.
        outcome = run_stream(options_.npu, words, source, &space, timed, {.weight_cache = &weights_});
    } catch (const Error& e) {
        const auto [bits, channel] = fault_status(e);
        return fault(bits, channel, static_cast<uint32_t>(e.where().offset.value_or(0)), e.what());
    }
    const DecodedStream& stream = outcome.stream;
    last_timing_ = std::make_unique<TimingResult>(std::move(*outcome.timing));
    finished(stream);
    uint32_t history = 0;
    for (const auto& op : stream.ops)
        if (op.kind == OpKind::Stop || op.kind == OpKind::Irq) history |= op.mask;
    uint32_t& status = at(r.status);
    status = (status & ~r.running.mask) | r.end_reached.mask | r.irq_history.put(history);
    at(r.qread) = qsize;
    count_pmu(*last_timing_);
    raise_irq();
}

uint64_t NpuDevice::dma_copy(std::span<uint8_t> dst, std::span<const uint8_t> src) {
    std::lock_guard lock(mutex_);
    try {
        return copy_with_dma(dst, src);
    } catch (const std::exception& e) {
        last_error_ = e.what();
        throw;
    }
}

uint64_t NpuDevice::copy_with_dma(std::span<uint8_t> dst, std::span<const uint8_t> src) {
    const std::string source = "DMA copy";
    if (run_requested_) throw Error({source, std::nullopt, "CMD"}, "the NPU is running a command stream");
    if (dst.size() != src.size()) throw Error({source, std::nullopt, "length"}, "source and destination sizes differ");
    last_error_.clear();
    last_timing_.reset();
    if (src.empty()) return 0;
    // Region 0 the source, region 1 the destination, 4 KB apart in a map of their own.
    const uint64_t dst_address = (src.size() + 0x1FFF) / 0x1000 * 0x1000;
    MemoryMap copy_map;
    copy_map.map_read_only(0, src, "DMA source", MemoryKind::Sram);
    copy_map.map(dst_address, dst, "DMA destination", MemoryKind::Sram);
    AddressSpace space(copy_map);
    space.set_base(0, 0);
    space.set_base(1, dst_address);
    // Both sides in the memory Vela's memory mode gives the arena: the copies move tensors
    // between the application's buffers and the NPU's scratch, which share that memory.
    TimedMemory timed{memory_, {}};
    timed.regions.fill(memory_.port_memory(memory_.port_for_role("scratch")));

    using isa::Cmd;
    using isa::Field;
    constexpr uint64_t kChunk = uint64_t{1} << 28;  // within every generation's DMA0_LEN
    CommandStreamBuilder b(options_.npu.generation);
    b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, 0}})
        .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__region, 1}});
    for (uint64_t at = 0; at < src.size(); at += kChunk) {
        b.emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, at}})
            .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, at}})
            .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, std::min<uint64_t>(kChunk, src.size() - at)}})
            .emit(Cmd::OP_DMA_START);
    }
    b.emit(Cmd::OP_DMA_WAIT, {{Field::OP_DMA_WAIT__k, 0}}).emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 0}});
    StreamOutcome outcome = run_stream(options_.npu, b.words(), source, &space, timed, {.weight_cache = &weights_});
    last_timing_ = std::make_unique<TimingResult>(std::move(*outcome.timing));
    finished(outcome.stream);
    count_pmu(*last_timing_);
    publish();
    return static_cast<uint64_t>(last_timing_->totals.cycles);
}

void NpuDevice::finished(const DecodedStream& stream) {
    if (!tracing_) return;
    traced_streams_.push_back(stream);
    traced_timing_.push_back(*last_timing_);
}

void NpuDevice::record_trace(bool on) {
    std::lock_guard lock(mutex_);
    tracing_ = on;
    if (on) return;
    traced_streams_.clear();
    traced_timing_.clear();
}

void NpuDevice::write_trace(const std::string& path) {
    std::lock_guard lock(mutex_);
    try {
        write_chrome_trace({"ethosu-emu device", options_.npu, memory_, traced_streams_, traced_timing_}, path);
    } catch (const std::exception& e) {
        last_error_ = e.what();
        throw;
    }
}

void NpuDevice::count_pmu(const TimingResult& timing) {
    const Reg& r = *reg_;
    const uint32_t pmcr = at(r.pmcr);
    if (!(pmcr & r.cnt_en.mask)) return;
    const int counters = pmu_event_counters(options_.npu.generation);
    std::vector<uint32_t> events;
    for (int n = 0; n < counters; ++n) events.push_back(r.ev_type.get(at(r.pmevtyper + 4 * n)));
    const PmuReading reading = read_pmu(memory_, {timing}, events, (pmcr & r.mask_en.mask) != 0);
    const uint32_t enabled = at(r.pmcntenset);
    auto counted = [&](uint32_t offset) { driver_value_[offset / 4] = 0; };
    for (int n = 0; n < counters; ++n) {
        if (!(enabled & (1u << n))) continue;
        const uint32_t offset = r.pmevcntr + 4 * n;
        const uint64_t sum = uint64_t{at(offset)} + reading.counters[static_cast<size_t>(n)];
        at(offset) = static_cast<uint32_t>(sum);
        counted(offset);
        if (sum >> 32) at(r.pmovsset) |= 1u << n, counted(r.pmovsset);
    }
    if (enabled & r.cycle_cnt.mask) {
        // A 48-bit counter: CYCLE_CNT_HI holds bits 32-47.
        const uint64_t limit = uint64_t{r.cycle_cnt_hi.mask} << 32 | 0xFFFFFFFFu;
        const uint64_t sum = read64(r.pmccntr) + reading.cycle_counter;
        at(r.pmccntr) = static_cast<uint32_t>(sum);
        at(r.pmccntr + 4) = static_cast<uint32_t>((sum & limit) >> 32);
        counted(r.pmccntr), counted(r.pmccntr + 4);
        if (sum > limit) at(r.pmovsset) |= r.cycle_cnt.mask, counted(r.pmovsset);
    }
    if (at(r.pmovsset) & at(r.pmintset)) at(r.status) |= r.pmu_irq_raised.mask;
}

void NpuDevice::raise_irq() {
    at(reg_->status) |= reg_->irq_raised.mask;
    publish();
    if (irq_handler_) irq_handler_();
}

bool NpuDevice::run_until_idle() {
    std::lock_guard lock(mutex_);
    if (!run_requested_) return false;
    execute();
    return true;
}

// What the block shows at an offset: the register's value, except in the words a driver only
// writes: RESET, and the write-one-to-clear PMU words (which read as their SET twins), show a
// value no effective write leaves there, so that every write to them is seen.
uint32_t NpuDevice::block_value(uint32_t offset) {
    const Reg& r = *reg_;
    if (offset == r.reset) return kResetUnwritten;
    if (offset == r.pmcntenclr || offset == r.pmovsclr || offset == r.pmintclr) return 0;
    return at(offset);
}

void NpuDevice::publish() {
    for (size_t i = 0; i < block_.size(); ++i) {
        const uint32_t value = block_value(static_cast<uint32_t>(i * 4));
        std::atomic_ref<uint32_t> word(block_[i]);
        uint32_t seen = word.load(std::memory_order_relaxed);
        // A word the driver wrote since the last observation keeps its write for the next one.
        if (writable_[i] && seen != shadow_[i]) continue;
        if (word.compare_exchange_strong(seen, value, std::memory_order_acq_rel) || !writable_[i]) {
            if (!writable_[i]) word.store(value, std::memory_order_release);
            shadow_[i] = value;
        }
    }
}

void NpuDevice::sync() {
    std::lock_guard lock(mutex_);
    sync_locked();
}

void NpuDevice::sync_locked() {
    const uint32_t reset_word = reg_->reset / 4, cmd_word = reg_->cmd / 4;
    // Apply what the driver wrote since the last observation, then run, which publishes and
    // raises the interrupt, whose handler may write again (clear_irq): a few rounds.
    for (int round = 0; round < 4; ++round) {
        std::vector<uint32_t> seen(block_.size());
        for (size_t i = 0; i < block_.size(); ++i)
            seen[i] = std::atomic_ref<uint32_t>(block_[i]).load(std::memory_order_acquire);
        std::vector<uint32_t> changed;
        for (uint32_t i = 0; i < block_.size(); ++i)
            if (writable_[i] && seen[i] != shadow_[i]) changed.push_back(i);
        if (changed.empty() && !run_requested_) break;
        // Order: a soft reset first (it clears what came before it), CMD last (it starts the
        // run the other registers describe). A memory block cannot tell a write of the value a
        // register already holds from no write: after a reset, every word that still holds what
        // the driver wrote before it counts as written again (the core driver soft-resets before
        // each inference after releasing power, then programs QBASE, BASEP and the PMU with the
        // same values as before).
        if (std::ranges::find(changed, reset_word) != changed.end()) {
            std::vector<uint32_t> rewritten;
            for (uint32_t i = 0; i < block_.size(); ++i)
                if (driver_value_[i] && seen[i] == shadow_[i] && i != cmd_word) rewritten.push_back(i);
            write(reset_word * 4, seen[reset_word]);
            for (uint32_t i : rewritten) write(i * 4, seen[i]);
        }
        for (uint32_t i : changed)
            if (i != reset_word && i != cmd_word) write(i * 4, seen[i]);
        if (seen[cmd_word] != shadow_[cmd_word]) write(cmd_word * 4, seen[cmd_word]);
        for (uint32_t i : changed) shadow_[i] = seen[i];
        publish();
        if (run_requested_) execute();
    }
}

void NpuDevice::run_concurrently(bool on) {
    if (on == observer_.joinable()) return;
    if (!on) {
        stop_observing_ = true;
        observer_.join();
        return;
    }
    stop_observing_ = false;
    observer_ = std::thread([this] {
        // Observes often while the driver is at work, backing off to a millisecond when idle.
        using namespace std::chrono_literals;
        auto pause = 20us;
        while (!stop_observing_) {
            bool changed = false;
            {
                std::lock_guard lock(mutex_);
                const auto before = shadow_;
                sync_locked();
                changed = shadow_ != before;
            }
            pause = changed ? 20us : std::min<std::chrono::microseconds>(pause * 2, 1000us);
            std::this_thread::sleep_for(pause);
        }
    });
}

}  // namespace ethosu
