#include "frontend/device/npu_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>

#include "emulator/engine/executor.h"
#include "emulator/engine/pipeline.h"
#include "emulator/engine/timing/pmu.h"
#include "emulator/engine/timing/system_config.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/description.h"
#include "emulator/isa/error.h"
#include "emulator/memory/address_space.h"
#include "frontend/device/bus_window.h"
#include "frontend/device/completed_stream.h"
#include "frontend/device/mmio_trap.h"
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

}  // namespace

// What NpuDevice's interface drives: the register file, the memory map, time, the stream under
// way and the lock over them.
class NpuDevice::Impl {
public:
    using Clock = NpuDevice::Clock;
    using Options = NpuDevice::Options;
    using CompletedStream = NpuDevice::CompletedStream;
    static constexpr uint64_t kUnmappedWindow = NpuDevice::kUnmappedWindow;

    // NpuDevice's calls, as npu_device.h describes them.
    explicit Impl(Options options);
    ~Impl();

    void map(uint64_t npu_address, std::span<uint8_t> host, std::string name);
    std::optional<uint64_t> npu_address(const void* host) const;
    uint64_t unmapped_address(const void* host, int index);

    bool read(uint32_t offset, unsigned size, uint64_t& value);
    bool write(uint32_t offset, unsigned size, uint64_t value);
    uint32_t read(uint32_t offset);
    void write(uint32_t offset, uint32_t value);
    uint32_t peek(uint32_t offset) const;
    void power_on_reset();

    uint64_t now() const;
    std::optional<uint64_t> cycles_to_next_event() const;
    void advance(uint64_t cycles);
    double clock_hz() const { return memory_.system.core_clock; }

    void set_irq_line(std::function<void(bool level)> line);
    void set_irq_handler(std::function<void()> handler);
    bool irq_level() const;

    bool run_until_idle();

    std::span<uint32_t> register_block();
    void run_concurrently(bool on);

    std::vector<uint8_t> save() const;
    void restore(std::span<const uint8_t> state);

    uint64_t dma_copy(std::span<uint8_t> dst, std::span<const uint8_t> src);

    void set_stream_observer(std::function<void(const CompletedStream&)> observer);

    void record_trace(bool on);
    void write_trace(const std::string& path);

    const TimingResult* last_timing() const { return last_timing_.get(); }
    const std::string& last_error() const { return last_error_; }
    uint64_t last_cycles() const;
    std::string last_error_text() const;
    const NpuConfig& config() const { return options_.npu; }
    size_t register_bytes() const { return regs_.size() * 4; }

private:
    struct Reg;  // offsets and field bits of the registers with behaviour, from the description
    // The command processor moves past the op at `offset` `moved_past` cycles into a run.
    struct Progress {
        uint64_t moved_past = 0;
        uint32_t offset = 0;
    };
    // A started stream: what it does when its cycles have passed.
    struct Run {
        uint64_t start = 0, done_at = 0;
        uint32_t status_bits = 0, channel = 0, qread = 0, history = 0;  // at the end
        bool faulted = false;
        // Where the command processor is: QREAD shows the first op it has not moved past.
        std::vector<Progress> progress;
        // PMU counts of the run, added when it ends: each event counter, the cycle counter.
        std::vector<uint64_t> event_counts;
        uint64_t cycle_count = 0;
        // Made only when someone keeps streams (an observer, record_trace).
        std::unique_ptr<CompletedStream> completed;
    };
    // Callbacks owed once the lock is released.
    struct Owed {
        int raises = 0;
        bool level_before = false;
    };
    class Access;  // the lock, and the callbacks owed when it is released

    // Every register to its reset value; keep_pmu (a soft reset) leaves the PMU's as they are.
    void reset_registers(bool keep_pmu);
    uint32_t& at(uint32_t offset) { return regs_[offset / 4]; }
    uint32_t at(uint32_t offset) const { return regs_[offset / 4]; }
    uint64_t read64(uint32_t offset) const;
    uint32_t read_word(uint32_t offset, Owed& owed);
    void write_word(uint32_t offset, uint32_t value, Owed& owed);
    uint32_t value_at(uint32_t offset) const;
    void start(Owed& owed);
    Run execute();
    Run run_on(const MemoryMap& memory, const std::string& source);
    Run fault_run(uint32_t bits, uint32_t channel, uint32_t qread, std::string message);
    void complete(Owed& owed);
    void advance_locked(uint64_t cycles, Owed& owed);
    bool end_stream_now(Owed& owed);
    bool running() const { return run_.has_value(); }
    uint64_t copy_with_dma(std::span<uint8_t> dst, std::span<const uint8_t> src, Owed& owed);
    // The STATUS fault bits and faulting channel of a run's error, by its kind: an access outside
    // mapped memory is a bus error on the channel that made it, a branch that leads nowhere the
    // U85's branch fault, anything else a command parse error.
    std::pair<uint32_t, uint32_t> fault_status(const Error& error) const;
    void raise_irq(Owed& owed);
    std::vector<uint32_t> pmu_event_types() const;
    std::pair<std::vector<uint64_t>, uint64_t> pmu_counts(const TimingResult& timing) const;
    void add_pmu_counts(const std::vector<uint64_t>& events, uint64_t cycles);
    bool keeps_streams() const { return tracing_ || observer_; }
    std::unique_ptr<CompletedStream> completed_stream(uint64_t qbase, std::span<const uint32_t> words,
                                                      DecodedStream stream, std::vector<uint64_t> counts,
                                                      uint64_t cycles) const;
    void finished(CompletedStream&& done);
    bool level_locked() const;

    Options options_;
    const isa::GenerationDesc& gen_;
    std::unique_ptr<Reg> reg_;
    MemorySystem memory_;
    MemoryMap map_;
    std::vector<uint32_t> regs_;     // the register file, one word per 4 bytes of the window
    std::vector<uint8_t> writable_;  // per word: the driver may write it
    std::vector<uint8_t> pmu_;       // per word: a PMU register, which a soft reset leaves alone
    uint64_t now_ = 0;
    std::optional<Run> run_;
    bool run_requested_ = false;     // Clock::Program: started, not yet run
    bool running_reported_ = false;  // Clock::Program: a STATUS read has shown it running
    std::function<void(bool)> irq_line_;
    std::function<void()> irq_handler_;
    std::unique_ptr<TimingResult> last_timing_;
    // Decoded weights kept from run to run, so that a network run again decodes them once; each
    // run checks them against the bytes in memory.
    WeightCache weights_;
    std::string last_error_;
    std::function<void(const CompletedStream&)> observer_;
    bool tracing_ = false;
    std::vector<DecodedStream> traced_streams_;
    std::vector<TimingResult> traced_timing_;
    // Host pointers handed out through unmapped_address, by their offset in kUnmappedWindow.
    std::vector<std::string> unmapped_;
    std::unique_ptr<MmioTrap> trap_;  // the memory-mapped block, made when first asked for
    std::unique_ptr<BusWindow> bus_;  // Options::bus
    // One lock over all of the above; never held while a callback runs.
    mutable std::mutex mutex_;
    std::condition_variable started_;  // run_concurrently: a stream was started, or stop
    int delivering_ = 0;               // accesses calling the interrupt's callbacks now
    std::condition_variable delivered_;
    std::thread completer_;
    bool stop_completing_ = false;
};

struct NpuDevice::Impl::Reg {
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

// Holds the device's lock for one access and, once it is released, calls the interrupt's
// callbacks the access owes: the line when the level changed, the handler when it was raised.
class NpuDevice::Impl::Access {
public:
    explicit Access(const Impl& device) : device_(const_cast<Impl&>(device)), lock_(device.mutex_) {
        owed_.level_before = device_.level_locked();
    }
    ~Access() {
        const bool level = device_.level_locked();
        std::function<void(bool)> line = level != owed_.level_before ? device_.irq_line_ : nullptr;
        std::function<void()> handler = owed_.raises ? device_.irq_handler_ : nullptr;
        if (!line && !handler) return;
        ++device_.delivering_;
        lock_.unlock();
        if (line) line(level);
        if (handler) handler();
        lock_.lock();
        if (--device_.delivering_ == 0) device_.delivered_.notify_all();
    }
    // Waits until interrupts owed by other accesses have been delivered.
    void await_deliveries() {
        device_.delivered_.wait(lock_, [this] { return device_.delivering_ == 0; });
    }
    Access(const Access&) = delete;
    Access& operator=(const Access&) = delete;
    Owed& owed() { return owed_; }

private:
    Impl& device_;
    std::unique_lock<std::mutex> lock_;
    Owed owed_;
};

NpuDevice::Impl::Impl(Options options)
    : options_(std::move(options)),
      gen_(isa::describe(options_.npu.generation)),
      reg_(std::make_unique<Reg>(gen_)),
      memory_(make_memory_system(options_.npu, options_.system)) {
    uint32_t end = 0;
    for (const auto& r : gen_.registers) end = std::max(end, r.offset + r.bytes());
    const size_t words = (end + 0xFFF) / 0x1000 * 0x1000 / 4;
    regs_.assign(words, 0);
    writable_.assign(words, 0);
    pmu_.assign(words, 0);
    for (const auto& r : gen_.registers) {
        for (uint32_t b = 0; b < r.bytes(); b += 4) {
            if (r.access != isa::Access::RO) writable_[(r.offset + b) / 4] = 1;
            if (r.name.starts_with("PM")) pmu_[(r.offset + b) / 4] = 1;
        }
    }
    if (options_.bus) bus_ = std::make_unique<BusWindow>(options_.npu.generation == Generation::U55 ? 32 : 40, *options_.bus);
    power_on_reset();
}

NpuDevice::Impl::~Impl() {
    run_concurrently(false);
    trap_.reset();
}

void NpuDevice::Impl::reset_registers(bool keep_pmu) {
    for (size_t word = 0; word < regs_.size(); ++word)
        if (!keep_pmu || !pmu_[word]) regs_[word] = 0;
    for (const auto& r : gen_.registers) {
        for (uint32_t i = 0; i < r.count; ++i) {
            const size_t word = (r.offset + i * (r.width_bits / 8)) / 4;
            if (!keep_pmu || !pmu_[word]) regs_[word] = r.reset;
        }
    }
    at(reg_->id) = options_.npu.hw_id_reset;
    at(reg_->config) = options_.npu.config_word;
    at(reg_->status) = 0;  // the reset completes at once: reset_status reads 0
    run_.reset();
    run_requested_ = false;
    running_reported_ = false;
}

void NpuDevice::Impl::power_on_reset() {
    Access access(*this);
    reset_registers(false);
    at(reg_->prot) = reg_->active_cpl.put(options_.privileged ? 1 : 0) | reg_->active_csl.put(options_.secure ? 0 : 1);
}

void NpuDevice::Impl::map(uint64_t npu_address, std::span<uint8_t> host, std::string name) {
    Access access(*this);
    if (npu_address < kUnmappedWindow + 0x1000 && npu_address + host.size() > kUnmappedWindow)
        throw std::invalid_argument(fmt::format("{} at 0x{:x}: the page at 0x{:x} is kept unmapped", name, npu_address,
                                                kUnmappedWindow));
    map_.map(npu_address, host, std::move(name));
}

std::optional<uint64_t> NpuDevice::Impl::npu_address(const void* host) const {
    Access access(*this);
    const auto* p = static_cast<const uint8_t*>(host);
    const MemoryMap::Mapping* m = map_.holding({p, 1});
    if (!m) return std::nullopt;
    return m->address + static_cast<uint64_t>(p - m->bytes.data());
}

uint64_t NpuDevice::Impl::unmapped_address(const void* host, int index) {
    Access access(*this);
    // 16-byte steps: the core driver wants aligned base addresses.
    const size_t slot = std::min<size_t>(unmapped_.size(), 0x1000 / 16 - 1);
    const std::string what = index < 0 ? "the command stream" : fmt::format("base address {}", index);
    if (slot == unmapped_.size()) unmapped_.push_back({});
    unmapped_[slot] = fmt::format("host pointer {} ({}) is in no buffer mapped with ethosu_emu_map", host, what);
    return kUnmappedWindow + 16 * slot;
}

uint64_t NpuDevice::Impl::read64(uint32_t offset) const {
    return at(offset) | (uint64_t{at(offset + 4)} << 32);
}

bool NpuDevice::Impl::level_locked() const {
    return (at(reg_->status) & (reg_->irq_raised.mask | reg_->pmu_irq_raised.mask)) != 0;
}

bool NpuDevice::Impl::irq_level() const {
    std::lock_guard lock(mutex_);
    return level_locked();
}

void NpuDevice::Impl::set_irq_line(std::function<void(bool)> line) {
    std::lock_guard lock(mutex_);
    irq_line_ = std::move(line);
}

void NpuDevice::Impl::set_irq_handler(std::function<void()> handler) {
    std::lock_guard lock(mutex_);
    irq_handler_ = std::move(handler);
}

uint64_t NpuDevice::Impl::now() const {
    std::lock_guard lock(mutex_);
    return now_;
}

std::optional<uint64_t> NpuDevice::Impl::cycles_to_next_event() const {
    std::lock_guard lock(mutex_);
    if (!run_) return std::nullopt;
    return run_->done_at > now_ ? run_->done_at - now_ : 0;
}

void NpuDevice::Impl::advance(uint64_t cycles) {
    Access access(*this);
    advance_locked(cycles, access.owed());
}

void NpuDevice::Impl::advance_locked(uint64_t cycles, Owed& owed) {
    now_ += cycles;
    if (run_ && now_ >= run_->done_at) complete(owed);
}

// What a register reads as now, without side effects.
uint32_t NpuDevice::Impl::value_at(uint32_t offset) const {
    const Reg& r = *reg_;
    if (offset == r.pmcntenclr) return at(r.pmcntenset);
    if (offset == r.pmovsclr) return at(r.pmovsset);
    if (offset == r.pmintclr) return at(r.pmintset);
    if (!run_) return at(offset);
    // A stream under way: the command processor's place, and the cycle counter, by the time passed.
    const uint64_t elapsed = now_ - run_->start;
    if (offset == r.qread) {
        for (const Progress& p : run_->progress)
            if (elapsed < p.moved_past) return p.offset;
        return run_->qread;  // past every op: at the end, waiting for the units
    }
    if (offset == r.pmccntr || offset == r.pmccntr + 4) {
        const bool counting = (at(r.pmcr) & r.cnt_en.mask) && (at(r.pmcntenset) & r.cycle_cnt.mask);
        const uint64_t limit = uint64_t{r.cycle_cnt_hi.mask} << 32 | 0xFFFFFFFFu;
        const uint64_t cycles = (read64(r.pmccntr) + (counting ? std::min(elapsed, run_->cycle_count) : 0)) & limit;
        return offset == r.pmccntr ? static_cast<uint32_t>(cycles) : static_cast<uint32_t>(cycles >> 32);
    }
    return at(offset);
}

uint32_t NpuDevice::Impl::peek(uint32_t offset) const {
    std::lock_guard lock(mutex_);
    if (offset % 4 || offset / 4 >= regs_.size()) return 0;
    return value_at(offset);
}

uint32_t NpuDevice::Impl::read_word(uint32_t offset, Owed& owed) {
    if (offset / 4 >= regs_.size()) return 0;
    // A program polling STATUS sees a started stream running, then (as its time passes) done.
    if (offset == reg_->status && run_requested_) {
        if (running_reported_) end_stream_now(owed);
        else running_reported_ = true;
    }
    return value_at(offset);
}

// A program's time: a started stream runs if it has not, and its cycles pass now.
bool NpuDevice::Impl::end_stream_now(Owed& owed) {
    if (run_requested_) run_ = execute();
    if (!run_) return false;
    advance_locked(run_->done_at > now_ ? run_->done_at - now_ : 0, owed);
    return true;
}

bool NpuDevice::Impl::read(uint32_t offset, unsigned size, uint64_t& value) {
    value = 0;
    if ((size != 1 && size != 2 && size != 4 && size != 8) || offset % size) return false;
    Access access(*this);
    if (size == 8) {
        const uint64_t low = read_word(offset, access.owed());
        value = low | uint64_t{read_word(offset + 4, access.owed())} << 32;
        return true;
    }
    const uint32_t word = read_word(offset & ~3u, access.owed());
    const unsigned shift = 8 * (offset % 4);
    value = size == 4 ? word : (word >> shift) & ((1u << (8 * size)) - 1);
    return true;
}

bool NpuDevice::Impl::write(uint32_t offset, unsigned size, uint64_t value) {
    if ((size != 1 && size != 2 && size != 4 && size != 8) || offset % size) return false;
    Access access(*this);
    if (size == 8) {
        write_word(offset, static_cast<uint32_t>(value), access.owed());
        write_word(offset + 4, static_cast<uint32_t>(value >> 32), access.owed());
        return true;
    }
    const uint32_t word_offset = offset & ~3u;
    uint32_t word = static_cast<uint32_t>(value);
    if (size < 4 && word_offset / 4 < regs_.size()) {
        // The bytes the strobes leave out keep a stored value; in a command or write-one-to-set
        // or -clear word they write nothing, which is zeros.
        const Reg& r = *reg_;
        const bool acts = word_offset == r.reset || word_offset == r.pmcntenset || word_offset == r.pmcntenclr ||
                          word_offset == r.pmovsset || word_offset == r.pmovsclr || word_offset == r.pmintset ||
                          word_offset == r.pmintclr;
        const unsigned shift = 8 * (offset % 4);
        const uint32_t mask = ((1u << (8 * size)) - 1) << shift;
        word = ((acts ? 0 : at(word_offset)) & ~mask) | ((static_cast<uint32_t>(value) << shift) & mask);
    }
    write_word(word_offset, word, access.owed());
    return true;
}

uint32_t NpuDevice::Impl::read(uint32_t offset) {
    uint64_t value = 0;
    read(offset, 4, value);
    return static_cast<uint32_t>(value);
}

void NpuDevice::Impl::write(uint32_t offset, uint32_t value) { write(offset, 4, value); }

void NpuDevice::Impl::write_word(uint32_t offset, uint32_t value, Owed& owed) {
    if (offset / 4 >= regs_.size() || !writable_[offset / 4]) return;  // RO: ignored
    const Reg& r = *reg_;
    uint32_t& status = at(r.status);
    if (offset == r.reset) {
        // A soft reset leaves the PMU as it is: Arm's evaluation kit sets the event types and then
        // calls ETHOSU_PMU_Enable, whose first power request soft-resets the NPU, and its FVP runs
        // count those events (the published Corstone-300 figures of ../shared/anchors).
        reset_registers(true);
        // pending_CPL and pending_CSL become active.
        at(r.prot) = r.active_cpl.put(r.pending_cpl.get(value)) | r.active_csl.put(r.pending_csl.get(value));
    } else if (offset == r.cmd) {
        if (value & r.cmd_clear_irq.mask) status &= ~(r.irq_raised.mask | r.pmu_irq_raised.mask);
        status &= ~r.irq_history.put(r.cmd_clear_history.get(value));
        at(r.cmd) = value & (r.cmd_clock_q.mask | r.cmd_power_q.mask);  // the other bits are commands
        if ((value & r.cmd_stop.mask) && (status & r.running.mask)) {
            run_.reset();
            run_requested_ = false;
            status &= ~r.running.mask;
        }
        // A faulted NPU does not start again until a soft reset (the core driver resets it), nor
        // does a running one start a second stream.
        if ((value & r.cmd_run.mask) && !(status & (r.faults() | r.running.mask))) start(owed);
    } else if (offset == r.pmcr) {
        if (value & r.event_cnt_rst.mask)
            for (int n = 0; n < pmu_event_counters(options_.npu.generation); ++n) at(r.pmevcntr + 4 * n) = 0;
        if (value & r.cycle_cnt_rst.mask) at(r.pmccntr) = at(r.pmccntr + 4) = 0;
        // The reset bits act and read 0; num_event_cnt is read-only.
        const uint32_t kept = r.num_event_cnt.mask;
        const uint32_t actions = r.event_cnt_rst.mask | r.cycle_cnt_rst.mask;
        at(r.pmcr) = (at(r.pmcr) & kept) | (value & ~(kept | actions));
    } else if (offset == r.pmcntenset || offset == r.pmovsset || offset == r.pmintset) {
        at(offset) |= value;
    } else if (offset == r.pmcntenclr) {
        at(r.pmcntenset) &= ~value;
    } else if (offset == r.pmovsclr) {
        at(r.pmovsset) &= ~value;
    } else if (offset == r.pmintclr) {
        at(r.pmintset) &= ~value;
    } else {
        if ((offset == r.qsize || offset == r.qbase) && !(status & r.running.mask)) status &= ~r.end_reached.mask;
        at(offset) = value;
    }
}

// CMD.transition_to_running_state. A host's clock: the stream runs now and ends when its cycles
// have passed (a fault at once). A program's: it runs when the program waits.
void NpuDevice::Impl::start(Owed& owed) {
    const Reg& r = *reg_;
    at(r.status) = (at(r.status) | r.running.mask) & ~r.end_reached.mask;
    if (options_.clock == Clock::Program) {
        run_requested_ = true;
        running_reported_ = false;
        started_.notify_all();
        return;
    }
    run_ = execute();
    advance_locked(0, owed);
}

NpuDevice::Impl::Run NpuDevice::Impl::fault_run(uint32_t bits, uint32_t channel, uint32_t qread, std::string message) {
    // A bus error after the driver handed the NPU host pointers no mapping holds: name them.
    if ((bits & reg_->bus_status.mask) && !unmapped_.empty()) {
        message += "; the driver handed the NPU unmapped memory:";
        for (const auto& u : unmapped_) message += " " + u + ";";
        message.pop_back();
    }
    last_error_ = std::move(message);
    Run run;
    run.start = run.done_at = now_;
    run.status_bits = bits, run.channel = channel, run.qread = qread, run.faulted = true;
    return run;
}

std::pair<uint32_t, uint32_t> NpuDevice::Impl::fault_status(const Error& error) const {
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

// Runs the stream at QBASE on the engine and the timing model; what it leaves when it ends. On a
// bus, the memory outside the host's mappings is the bus window, written back when the stream
// has run; a bus error the window met is the NPU's.
NpuDevice::Impl::Run NpuDevice::Impl::execute() {
    run_requested_ = false;
    running_reported_ = false;
    const std::string source = fmt::format("command stream at 0x{:x}", read64(reg_->qbase));
    last_error_.clear();
    last_timing_.reset();
    struct ForgetUnmapped {
        std::vector<std::string>& notes;
        ~ForgetUnmapped() { notes.clear(); }
    } forget{unmapped_};
    if (!bus_) return run_on(map_, source);
    MemoryMap memory;
    for (const auto& m : map_.mappings()) memory.map(m.address, m.bytes, m.name);
    map_bus_window(memory, *bus_);
    Run run = run_on(memory, source);
    bus_->flush();
    if (const auto fault = bus_->fault()) {
        bus_->clear_fault();
        if (!run.faulted) {
            const Reg& r = *reg_;
            // The window knows the address, not which unit asked for it: a read is reported on
            // the IFM channel, a write-back on the OFM one.
            const uint32_t channel = static_cast<uint32_t>(
                fault->write ? isa::u55::pmu_axi_channel::WR_OFM : isa::u55::pmu_axi_channel::RD_IFM);
            run = fault_run(r.bus_status.mask, channel, 0,
                            fmt::format("{}: the bus refused a {} at 0x{:x}", source, fault->write ? "write" : "read",
                                        fault->address));
        }
    }
    return run;
}

NpuDevice::Impl::Run NpuDevice::Impl::run_on(const MemoryMap& map, const std::string& source) {
    const Reg& r = *reg_;
    const uint64_t qbase = read64(r.qbase);
    const uint32_t qsize = at(r.qsize);
    // An empty queue ends before its NPU_OP_STOP, as a truncated stream does.
    if (qsize == 0) return fault_run(r.parse_error.mask, 0, 0, fmt::format("{}: QSIZE is 0, no command stream", source));
    if (qsize > options_.max_queue_bytes)
        return fault_run(r.parse_error.mask, 0, 0,
                         fmt::format("{}: QSIZE {} bytes is past the longest queue a run takes ({} bytes)", source, qsize,
                                     options_.max_queue_bytes));
    const MemoryMap::Mapping* stream_memory = map.find(qbase, qsize);
    if (!stream_memory)
        return fault_run(r.bus_status.mask, 0, 0, fmt::format("{}: {} bytes outside every mapped memory", source, qsize));
    std::vector<uint32_t> words(qsize / 4);
    // A QSIZE under one word leaves no words (and no buffer to copy into: memcpy's null pointer).
    if (!words.empty())
        std::memcpy(words.data(), stream_memory->bytes.data() + (qbase - stream_memory->address), words.size() * 4);

    // The memory behind each region: REGIONCFG picks an AXI configuration per region (U55/U65:
    // AXI_LIMIT 0-1 on AXI0, 2-3 on AXI1; U85: MEM_ATTR n, whose axi_port bit picks the port).
    TimedMemory timed{memory_, {}};
    AddressSpace space(map);
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
        return fault_run(bits, channel, static_cast<uint32_t>(e.where().offset.value_or(0)), e.what());
    }
    const DecodedStream& stream = outcome.stream;
    last_timing_ = std::make_unique<TimingResult>(std::move(*outcome.timing));
    Run run;
    run.start = now_;
    run.done_at = now_ + static_cast<uint64_t>(last_timing_->totals.cycles);
    for (const auto& op : stream.ops)
        if (op.kind == OpKind::Stop || op.kind == OpKind::Irq) run.history |= op.signal().mask;
    run.status_bits = r.end_reached.mask | r.irq_history.put(run.history);
    run.qread = qsize;
    for (const auto& op : last_timing_->ops) run.progress.push_back({static_cast<uint64_t>(op.release), op.offset});
    std::tie(run.event_counts, run.cycle_count) = pmu_counts(*last_timing_);
    if (keeps_streams())
        run.completed = completed_stream(qbase, words, std::move(outcome.stream), run.event_counts, run.cycle_count);
    return run;
}

// The end of the started stream: STATUS, QREAD, the PMU and the interrupt as it leaves them.
void NpuDevice::Impl::complete(Owed& owed) {
    const Reg& r = *reg_;
    Run run = std::move(*run_);
    run_.reset();
    uint32_t& status = at(r.status);
    if (run.faulted) {
        status = (status & ~(r.running.mask | r.channel.mask)) | run.status_bits | r.channel.put(run.channel);
    } else {
        status = (status & ~r.running.mask) | run.status_bits;
        add_pmu_counts(run.event_counts, run.cycle_count);
        if (run.completed) finished(std::move(*run.completed));
    }
    at(r.qread) = run.qread;
    raise_irq(owed);
}

// A program's wait: the started stream ends now, and so does the delivery of an interrupt another
// thread (run_concurrently) is making, so that the waiter finds what the handler leaves.
bool NpuDevice::Impl::run_until_idle() {
    Access access(*this);
    access.await_deliveries();
    return end_stream_now(access.owed());
}

uint64_t NpuDevice::Impl::dma_copy(std::span<uint8_t> dst, std::span<const uint8_t> src) {
    Access access(*this);
    try {
        return copy_with_dma(dst, src, access.owed());
    } catch (const std::exception& e) {
        last_error_ = e.what();
        throw;
    }
}

uint64_t NpuDevice::Impl::copy_with_dma(std::span<uint8_t> dst, std::span<const uint8_t> src, Owed& owed) {
    const std::string source = "DMA copy";
    if (run_requested_ || run_) throw Error({source, std::nullopt, "CMD"}, "the NPU is running a command stream");
    if (dst.size() != src.size()) throw Error({source, std::nullopt, "length"}, "source and destination sizes differ");
    last_error_.clear();
    last_timing_.reset();
    if (src.empty()) return 0;
    // Region 0 the source, region 1 the destination, 4 KB apart in a map of their own.
    const uint64_t dst_address = (src.size() + 0x1FFF) / 0x1000 * 0x1000;
    MemoryMap copy_map;
    copy_map.map_read_only(0, src, "DMA source");
    copy_map.map(dst_address, dst, "DMA destination");
    AddressSpace space(copy_map);
    space.set_base(0, 0);
    space.set_base(1, dst_address);
    // Both sides in the memory Vela's memory mode gives the arena: the copies move tensors
    // between the application's buffers and the NPU's scratch, which share that memory.
    TimedMemory timed{memory_, {}};
    timed.regions.fill(memory_.port_memory(memory_.port_for_role(RegionRole::Scratch)));

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
    const auto [events, cycles] = pmu_counts(*last_timing_);
    if (keeps_streams()) finished(std::move(*completed_stream(0, b.words(), std::move(outcome.stream), events, cycles)));
    add_pmu_counts(events, cycles);
    // The copy's cycles pass; a PMU overflow it caused interrupts.
    now_ += static_cast<uint64_t>(last_timing_->totals.cycles);
    if (at(reg_->status) & reg_->pmu_irq_raised.mask) raise_irq(owed);
    return static_cast<uint64_t>(last_timing_->totals.cycles);
}

uint64_t NpuDevice::Impl::last_cycles() const {
    std::lock_guard lock(mutex_);
    return last_timing_ ? static_cast<uint64_t>(last_timing_->totals.cycles) : 0;
}

std::string NpuDevice::Impl::last_error_text() const {
    std::lock_guard lock(mutex_);
    return last_error_;
}

std::unique_ptr<NpuDevice::CompletedStream> NpuDevice::Impl::completed_stream(uint64_t qbase, std::span<const uint32_t> words,
                                                                        DecodedStream stream, std::vector<uint64_t> counts,
                                                                        uint64_t cycles) const {
    auto done = std::make_unique<CompletedStream>();
    done->start = now_;
    done->qbase = qbase;
    done->qsize = static_cast<uint32_t>(words.size() * 4);
    uint64_t hash = 0xcbf29ce484222325u;  // FNV-1a, 64 bits
    for (const uint32_t word : words) {
        for (int byte = 0; byte < 4; ++byte) hash = (hash ^ ((word >> (8 * byte)) & 0xFF)) * 0x100000001b3u;
    }
    done->hash = hash;
    done->stream = std::move(stream);
    done->timing = *last_timing_;
    done->pmu_events = pmu_event_types();
    done->pmu = {cycles, std::move(counts)};
    done->pmu_counting = (at(reg_->pmcr) & reg_->cnt_en.mask) != 0;
    return done;
}

void NpuDevice::Impl::finished(CompletedStream&& done) {
    if (observer_) observer_(done);
    if (!tracing_) return;
    traced_streams_.push_back(std::move(done.stream));
    traced_timing_.push_back(std::move(done.timing));
}

void NpuDevice::Impl::set_stream_observer(std::function<void(const CompletedStream&)> observer) {
    std::lock_guard lock(mutex_);
    observer_ = std::move(observer);
}

void NpuDevice::Impl::record_trace(bool on) {
    std::lock_guard lock(mutex_);
    tracing_ = on;
    if (on) return;
    traced_streams_.clear();
    traced_timing_.clear();
}

void NpuDevice::Impl::write_trace(const std::string& path) {
    std::lock_guard lock(mutex_);
    try {
        write_chrome_trace({"ethosu-emu device", options_.npu, memory_, traced_streams_, traced_timing_}, path);
    } catch (const std::exception& e) {
        last_error_ = e.what();
        throw;
    }
}

// The event type each event counter has now (PMEVTYPER).
std::vector<uint32_t> NpuDevice::Impl::pmu_event_types() const {
    const Reg& r = *reg_;
    std::vector<uint32_t> events;
    for (int n = 0; n < pmu_event_counters(options_.npu.generation); ++n)
        events.push_back(r.ev_type.get(at(r.pmevtyper + 4 * n)));
    return events;
}

// What a stream's timing gives each event counter, by the event types the PMU has now, and the
// cycle counter.
std::pair<std::vector<uint64_t>, uint64_t> NpuDevice::Impl::pmu_counts(const TimingResult& timing) const {
    const Reg& r = *reg_;
    const PmuReading reading = read_pmu(memory_, {timing}, pmu_event_types(), (at(r.pmcr) & r.mask_en.mask) != 0);
    return {reading.counters, reading.cycle_counter};
}

// Counts into the counters the PMU has enabled; an overflow sets PMOVSSET and, where PMINTSET
// asks for it, the PMU interrupt.
void NpuDevice::Impl::add_pmu_counts(const std::vector<uint64_t>& events, uint64_t cycles) {
    const Reg& r = *reg_;
    if (!(at(r.pmcr) & r.cnt_en.mask)) return;
    const uint32_t enabled = at(r.pmcntenset);
    for (size_t n = 0; n < events.size(); ++n) {
        if (!(enabled & (1u << n))) continue;
        const uint32_t offset = r.pmevcntr + 4 * static_cast<uint32_t>(n);
        const uint64_t sum = uint64_t{at(offset)} + events[n];
        at(offset) = static_cast<uint32_t>(sum);
        if (sum >> 32) at(r.pmovsset) |= 1u << n;
    }
    if (enabled & r.cycle_cnt.mask) {
        // A 48-bit counter: CYCLE_CNT_HI holds bits 32-47.
        const uint64_t limit = uint64_t{r.cycle_cnt_hi.mask} << 32 | 0xFFFFFFFFu;
        const uint64_t sum = read64(r.pmccntr) + cycles;
        at(r.pmccntr) = static_cast<uint32_t>(sum);
        at(r.pmccntr + 4) = static_cast<uint32_t>((sum & limit) >> 32);
        if (sum > limit) at(r.pmovsset) |= r.cycle_cnt.mask;
    }
    if (at(r.pmovsset) & at(r.pmintset)) at(r.status) |= r.pmu_irq_raised.mask;
}

void NpuDevice::Impl::raise_irq(Owed& owed) {
    at(reg_->status) |= reg_->irq_raised.mask;
    ++owed.raises;
}

std::span<uint32_t> NpuDevice::Impl::register_block() {
    std::lock_guard lock(mutex_);
    if (!trap_) {
        // Every access to the window is a register access; the callbacks must not throw.
        auto read_access = [this](uint64_t offset, unsigned size) noexcept -> uint64_t {
            uint64_t value = 0;
            try {
                read(static_cast<uint32_t>(offset), size, value);
            } catch (const std::exception& e) {
                std::lock_guard failed(mutex_);
                last_error_ = e.what();
            }
            return value;
        };
        auto write_access = [this](uint64_t offset, unsigned size, uint64_t value) noexcept {
            try {
                write(static_cast<uint32_t>(offset), size, value);
            } catch (const std::exception& e) {
                std::lock_guard failed(mutex_);
                last_error_ = e.what();
            }
        };
        trap_ = std::make_unique<MmioTrap>(regs_.size() * 4, read_access, write_access);
    }
    return {static_cast<uint32_t*>(const_cast<void*>(trap_->base())), regs_.size()};
}

void NpuDevice::Impl::run_concurrently(bool on) {
    if (on == completer_.joinable()) return;
    if (!on) {
        {
            std::lock_guard lock(mutex_);
            stop_completing_ = true;
        }
        started_.notify_all();
        completer_.join();
        return;
    }
    stop_completing_ = false;
    completer_ = std::thread([this] {
        for (;;) {
            {
                std::unique_lock lock(mutex_);
                started_.wait(lock, [this] { return stop_completing_ || run_requested_; });
                if (stop_completing_) return;
            }
            run_until_idle();
        }
    });
}

// ---- snapshots

namespace {

constexpr uint32_t kSnapshotMagic = 0x56445545;  // "EUDV"
constexpr uint32_t kSnapshotVersion = 1;

class Writer {
public:
    template <typename T> void put(const T& value) {
        static_assert(std::is_trivially_copyable_v<T>);
        const auto* p = reinterpret_cast<const uint8_t*>(&value);
        bytes.insert(bytes.end(), p, p + sizeof(T));
    }
    template <typename T> void put_vector(const std::vector<T>& values) {
        put<uint64_t>(values.size());
        for (const T& v : values) put(v);
    }
    std::vector<uint8_t> bytes;
};

class Reader {
public:
    explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
    template <typename T> T get() {
        static_assert(std::is_trivially_copyable_v<T>);
        if (bytes_.size() - at_ < sizeof(T)) throw std::invalid_argument("device snapshot: truncated");
        T value;
        std::memcpy(&value, bytes_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return value;
    }
    template <typename T> std::vector<T> get_vector(size_t most) {
        const uint64_t n = get<uint64_t>();
        if (n > most) throw std::invalid_argument("device snapshot: a list longer than any device holds");
        std::vector<T> values;
        for (uint64_t i = 0; i < n; ++i) values.push_back(get<T>());
        return values;
    }
    bool done() const { return at_ == bytes_.size(); }

private:
    std::span<const uint8_t> bytes_;
    size_t at_ = 0;
};

}  // namespace

std::vector<uint8_t> NpuDevice::Impl::save() const {
    std::lock_guard lock(mutex_);
    Writer w;
    w.put(kSnapshotMagic), w.put(kSnapshotVersion);
    w.put(options_.npu.config_word), w.put(static_cast<uint32_t>(options_.npu.generation));
    w.put_vector(regs_);
    w.put(now_), w.put(run_requested_), w.put(running_reported_);
    w.put(run_.has_value());
    if (run_) {
        w.put(run_->start), w.put(run_->done_at), w.put(run_->status_bits), w.put(run_->channel);
        w.put(run_->qread), w.put(run_->history), w.put(run_->faulted), w.put(run_->cycle_count);
        w.put_vector(run_->progress);
        w.put_vector(run_->event_counts);
    }
    return std::move(w.bytes);
}

void NpuDevice::Impl::restore(std::span<const uint8_t> state) {
    Access access(*this);
    Reader in(state);
    if (in.get<uint32_t>() != kSnapshotMagic) throw std::invalid_argument("device snapshot: not a snapshot");
    if (const auto v = in.get<uint32_t>(); v != kSnapshotVersion)
        throw std::invalid_argument(fmt::format("device snapshot: version {}, this build reads {}", v, kSnapshotVersion));
    const auto config_word = in.get<uint32_t>();
    const auto generation = in.get<uint32_t>();
    if (config_word != options_.npu.config_word || generation != static_cast<uint32_t>(options_.npu.generation))
        throw std::invalid_argument(fmt::format("device snapshot: of another NPU configuration (CONFIG 0x{:08x}), not {}",
                                                config_word, options_.npu.name));
    auto regs = in.get_vector<uint32_t>(regs_.size());
    if (regs.size() != regs_.size()) throw std::invalid_argument("device snapshot: another register file size");
    const auto now = in.get<uint64_t>();
    const auto requested = in.get<bool>(), reported = in.get<bool>();
    std::optional<Run> run;
    if (in.get<bool>()) {
        Run r;
        r.start = in.get<uint64_t>(), r.done_at = in.get<uint64_t>(), r.status_bits = in.get<uint32_t>();
        r.channel = in.get<uint32_t>(), r.qread = in.get<uint32_t>(), r.history = in.get<uint32_t>();
        r.faulted = in.get<bool>(), r.cycle_count = in.get<uint64_t>();
        r.progress = in.get_vector<Progress>(uint64_t{1} << 24);
        r.event_counts = in.get_vector<uint64_t>(static_cast<size_t>(pmu_event_counters(options_.npu.generation)));
        if (r.done_at < r.start) throw std::invalid_argument("device snapshot: a run that ends before it starts");
        run = std::move(r);
    }
    if (!in.done()) throw std::invalid_argument("device snapshot: bytes after its end");
    regs_ = std::move(regs), now_ = now, run_requested_ = requested, running_reported_ = reported, run_ = std::move(run);
}

NpuDevice::NpuDevice(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {}
NpuDevice::~NpuDevice() = default;

void NpuDevice::map(uint64_t npu_address, std::span<uint8_t> host, std::string name) {
    impl_->map(npu_address, host, std::move(name));
}
std::optional<uint64_t> NpuDevice::npu_address(const void* host) const { return impl_->npu_address(host); }
uint64_t NpuDevice::unmapped_address(const void* host, int index) { return impl_->unmapped_address(host, index); }
bool NpuDevice::read(uint32_t offset, unsigned size, uint64_t& value) { return impl_->read(offset, size, value); }
bool NpuDevice::write(uint32_t offset, unsigned size, uint64_t value) { return impl_->write(offset, size, value); }
uint32_t NpuDevice::read(uint32_t offset) { return impl_->read(offset); }
void NpuDevice::write(uint32_t offset, uint32_t value) { impl_->write(offset, value); }
uint32_t NpuDevice::peek(uint32_t offset) const { return impl_->peek(offset); }
void NpuDevice::power_on_reset() { impl_->power_on_reset(); }
uint64_t NpuDevice::now() const { return impl_->now(); }
std::optional<uint64_t> NpuDevice::cycles_to_next_event() const { return impl_->cycles_to_next_event(); }
void NpuDevice::advance(uint64_t cycles) { impl_->advance(cycles); }
double NpuDevice::clock_hz() const { return impl_->clock_hz(); }
void NpuDevice::set_irq_line(std::function<void(bool level)> line) { impl_->set_irq_line(std::move(line)); }
void NpuDevice::set_irq_handler(std::function<void()> handler) { impl_->set_irq_handler(std::move(handler)); }
bool NpuDevice::irq_level() const { return impl_->irq_level(); }
bool NpuDevice::run_until_idle() { return impl_->run_until_idle(); }
std::span<uint32_t> NpuDevice::register_block() { return impl_->register_block(); }
void NpuDevice::run_concurrently(bool on) { impl_->run_concurrently(on); }
std::vector<uint8_t> NpuDevice::save() const { return impl_->save(); }
void NpuDevice::restore(std::span<const uint8_t> state) { impl_->restore(state); }
uint64_t NpuDevice::dma_copy(std::span<uint8_t> dst, std::span<const uint8_t> src) { return impl_->dma_copy(dst, src); }
void NpuDevice::set_stream_observer(std::function<void(const CompletedStream&)> observer) {
    impl_->set_stream_observer(std::move(observer));
}
void NpuDevice::record_trace(bool on) { impl_->record_trace(on); }
void NpuDevice::write_trace(const std::string& path) { impl_->write_trace(path); }
const TimingResult* NpuDevice::last_timing() const { return impl_->last_timing(); }
const std::string& NpuDevice::last_error() const { return impl_->last_error(); }
uint64_t NpuDevice::last_cycles() const { return impl_->last_cycles(); }
std::string NpuDevice::last_error_text() const { return impl_->last_error_text(); }
const NpuConfig& NpuDevice::config() const { return impl_->config(); }
size_t NpuDevice::register_bytes() const { return impl_->register_bytes(); }

}  // namespace ethosu
