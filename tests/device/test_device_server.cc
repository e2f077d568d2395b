// The device server over a socket pair, with a client written here from PROTOCOL.md as a system
// simulator's device would be: HELLO, register accesses carrying the client's time, MEM_READ and
// MEM_WRITE served from the client's own memory while it waits, SYNC when the pending event is
// due. A corpus stream runs to its golden outputs with the emulator's cycles and the interrupt at
// its end, and the server's stream observer gets each inference at the cycle it started with the
// emulator's figures; malformed messages, unknown NPUs and time running back end the session with the reason.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "frontend/device/completed_stream.h"
#include "frontend/device_server/device_server.h"
#include "frontend/runner/run_model.h"
#include "tests/corpus_index.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

constexpr uint32_t STATUS = 0x004, CMD = 0x008, QBASE = 0x010, QSIZE = 0x020, REGIONCFG = 0x03C, BASEP = 0x080;
constexpr uint32_t kIrqRaised = 2, kEndReached = 32;

struct State {
    uint32_t irq = 0, pending = 0;
    uint64_t cycles = 0;
};

// The client: a socket, its time, its memory (16 MB slots from 0x10000000).
class Client {
public:
    static constexpr uint64_t kFirstSlot = 0x10000000, kSlotBytes = 0x1000000;

    explicit Client(int fd) : fd_(fd) {}

    void send(uint32_t type, const std::vector<uint8_t>& payload) {
        std::vector<uint8_t> message(8);
        const auto length = static_cast<uint32_t>(payload.size());
        std::memcpy(message.data(), &type, 4);
        std::memcpy(message.data() + 4, &length, 4);
        message.insert(message.end(), payload.begin(), payload.end());
        ASSERT_EQ(::send(fd_, message.data(), message.size(), MSG_NOSIGNAL), static_cast<ssize_t>(message.size()));
    }
    // Reads messages, answering the server's memory requests, until one of another kind.
    std::pair<uint32_t, std::vector<uint8_t>> reply() {
        for (;;) {
            auto [type, payload] = receive();
            if (type == 128 || type == 129) {
                serve_memory(type, payload);
                continue;
            }
            return {type, payload};
        }
    }
    std::pair<uint32_t, std::vector<uint8_t>> receive() {
        uint8_t header[8];
        read_all(header, 8);
        uint32_t type = 0, length = 0;
        std::memcpy(&type, header, 4);
        std::memcpy(&length, header + 4, 4);
        std::vector<uint8_t> payload(length);
        read_all(payload.data(), length);
        return {type, payload};
    }

    template <typename... T> static std::vector<uint8_t> pack(T... values) {
        std::vector<uint8_t> bytes;
        (append(bytes, values), ...);
        return bytes;
    }
    static State state_at(const std::vector<uint8_t>& p, size_t at) {
        State s;
        std::memcpy(&s.irq, p.data() + at, 4);
        std::memcpy(&s.pending, p.data() + at + 4, 4);
        std::memcpy(&s.cycles, p.data() + at + 8, 8);
        return s;
    }

    State write(uint32_t offset, uint64_t value, uint32_t size = 4) {
        send(3, pack(now, offset, size, value));
        const auto [type, p] = reply();
        EXPECT_EQ(type, 66u);
        return state_at(p, 0);
    }
    uint64_t read(uint32_t offset, uint32_t size = 4) {
        send(2, pack(now, offset, size));
        const auto [type, p] = reply();
        EXPECT_EQ(type, 65u);
        uint64_t value = 0;
        std::memcpy(&value, p.data(), 8);
        last_state = state_at(p, 8);
        return value;
    }
    State sync() {
        send(4, pack(now));
        const auto [type, p] = reply();
        EXPECT_EQ(type, 66u);
        return state_at(p, 0);
    }

    uint64_t place(const std::vector<uint8_t>& bytes, uint64_t size) {
        memories.emplace_back(std::max<uint64_t>(size, 16), 0);
        std::copy(bytes.begin(), bytes.end(), memories.back().begin());
        return kFirstSlot + kSlotBytes * (memories.size() - 1);
    }

    uint64_t now = 0;
    State last_state;
    std::vector<std::vector<uint8_t>> memories;
    int memory_requests = 0;

private:
    template <typename T> static void append(std::vector<uint8_t>& bytes, T value) {
        const auto* p = reinterpret_cast<const uint8_t*>(&value);
        bytes.insert(bytes.end(), p, p + sizeof(T));
    }
    void read_all(uint8_t* data, size_t size) {
        size_t got = 0;
        while (got < size) {
            const ssize_t n = ::recv(fd_, data + got, size - got, 0);
            ASSERT_GT(n, 0) << "the server closed the connection";
            got += static_cast<size_t>(n);
        }
    }
    void serve_memory(uint32_t type, const std::vector<uint8_t>& p) {
        ++memory_requests;
        uint64_t address = 0;
        uint32_t size = 0;
        std::memcpy(&address, p.data(), 8);
        std::memcpy(&size, p.data() + 8, 4);
        const uint64_t index = (address - kFirstSlot) / kSlotBytes, offset = (address - kFirstSlot) % kSlotBytes;
        const bool inside = address >= kFirstSlot && index < memories.size() && offset + size <= kSlotBytes;
        if (type == 128) {
            std::vector<uint8_t> reply = pack(static_cast<uint32_t>(inside ? 0 : 1));
            if (inside) {
                std::vector<uint8_t> bytes(size, 0);
                const auto& m = memories[index];
                if (offset < m.size()) std::memcpy(bytes.data(), m.data() + offset, std::min<uint64_t>(size, m.size() - offset));
                reply.insert(reply.end(), bytes.begin(), bytes.end());
            }
            send(192, reply);
        } else {
            const bool fits = inside && offset + size <= memories[index].size();
            if (fits) std::memcpy(memories[index].data() + offset, p.data() + 16, size);
            send(193, pack(static_cast<uint32_t>(fits ? 0 : 1)));
        }
    }

    int fd_;
};

// A server on one end of a socket pair, on a thread of its own.
struct Served {
    int fds[2] = {-1, -1};
    std::string result;
    std::thread server;
    std::unique_ptr<Client> client;

    DeviceServerOptions options;

    explicit Served(DeviceServerOptions given = {}) : options(std::move(given)) {
        EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        server = std::thread([this] { result = serve_device(fds[1], options); });
        client = std::make_unique<Client>(fds[0]);
    }
    // Closes the client's end and returns why the server stopped ("" when it was the close).
    std::string finish() {
        if (fds[0] >= 0) ::close(fds[0]), fds[0] = -1;
        server.join();
        ::close(fds[1]);
        return result;
    }
    ~Served() {
        if (server.joinable()) finish();
    }
};

std::vector<uint8_t> hello(const std::string& npu, uint32_t version = 1) {
    std::vector<uint8_t> p = Client::pack(version);
    p.insert(p.end(), npu.begin(), npu.end());
    return p;
}

TEST(DeviceServer, ACorpusStreamRunsOverTheProtocol) {
    const fs::path vectors = ETHOSU_VECTORS_DIR;
    if (!fs::exists(vectors / "index.csv")) GTEST_SKIP() << "test vectors not found at " << vectors;
    const fs::path dir = vectors / "person_detect";
    const auto model = load_model((dir / "ethos-u55-128" / "model_vela.tflite").string(), {});
    const RunResult reference = run_model(*model, {}, {.pipeline = {.execute = false}});
    const uint64_t cycles = static_cast<uint64_t>(reference.timing.at(0).totals.cycles);

    // What `ethosu-emu system` keeps of each stream.
    std::vector<NpuDevice::CompletedStream> completed;
    DeviceServerOptions observed;
    observed.on_stream = [&completed](const NpuDevice::CompletedStream& done) { completed.push_back(done); };
    Served s(observed);
    Client& c = *s.client;
    c.send(1, hello("ethos-u55-128"));
    const auto [type, p] = c.receive();
    ASSERT_EQ(type, 64u);
    uint32_t window = 0, status = 1;
    double clock = 0;
    std::memcpy(&window, p.data() + 4, 4);
    std::memcpy(&clock, p.data() + 8, 8);
    std::memcpy(&status, p.data() + 16, 4);
    EXPECT_EQ(status, 0u);
    EXPECT_GE(window, 0x1000u);
    EXPECT_GT(clock, 0.0);

    const NpuInvocation& inv = model->invocations.at(0);
    std::vector<uint8_t> words(inv.stream.words.size() * 4);
    std::memcpy(words.data(), inv.stream.words.data(), words.size());
    const uint64_t stream = c.place(words, words.size());
    std::vector<uint64_t> basep(8, 0);
    std::vector<size_t> slot(8, 0);
    for (const auto& r : inv.regions) {
        basep[static_cast<size_t>(r.index)] = c.place({r.bytes.begin(), r.bytes.end()}, r.size);
        slot[static_cast<size_t>(r.index)] = c.memories.size() - 1;
    }
    std::vector<uint64_t> started_at;
    for (int seed : {1, 2}) {
        SCOPED_TRACE(fmt::format("seed {}", seed));
        c.now += 5000;  // the CPU's work before each inference
        const auto& in = model->inputs[0];
        const auto input = read_file_bytes(dir / "golden" / fmt::format("seed{}.in0.bin", seed));
        std::memcpy(c.memories[slot[static_cast<size_t>(in.region)]].data() + in.offset, input.data(), input.size());
        c.write(QBASE, stream, 8);
        c.write(QSIZE, words.size());
        for (size_t i = 0; i < basep.size(); ++i) c.write(BASEP + 8 * static_cast<uint32_t>(i), basep[i], 8);
        c.write(REGIONCFG, 3);  // the constants on AXI1, the arena on AXI0: Vela's Shared_Sram
        const int requests_before = c.memory_requests;
        started_at.push_back(c.now);
        const State started = c.write(CMD, 1);
        EXPECT_GT(c.memory_requests, requests_before);
        std::printf("person_detect over the protocol: %d memory requests\n", c.memory_requests - requests_before);
        ASSERT_EQ(started.pending, 1u);
        EXPECT_EQ(started.cycles, cycles);
        EXPECT_EQ(started.irq, 0u);
        c.now += started.cycles - 1;
        EXPECT_EQ(c.read(STATUS) & 1, 1u);  // still running a cycle before the end
        c.now += 1;
        const State ended = c.sync();
        EXPECT_EQ(ended.irq, 1u);
        EXPECT_EQ(ended.pending, 0u);
        EXPECT_EQ(c.read(STATUS) & (kIrqRaised | kEndReached), kIrqRaised | kEndReached);
        const auto& out = model->outputs[0];
        const auto golden = read_file_bytes(dir / "golden" / fmt::format("seed{}.out0.bin", seed));
        EXPECT_TRUE(std::equal(golden.begin(), golden.end(),
                               c.memories[slot[static_cast<size_t>(out.region)]].data() + out.offset));
        EXPECT_EQ(c.write(CMD, 2).irq, 0u);
    }
    EXPECT_EQ(s.finish(), "");
    // One record per inference, at the cycle of its CMD write, with run --timing-only's figures.
    ASSERT_EQ(completed.size(), 2u);
    for (size_t i = 0; i < completed.size(); ++i) {
        EXPECT_EQ(completed[i].start, started_at[i]);
        EXPECT_EQ(completed[i].qbase, stream);
        EXPECT_EQ(completed[i].qsize, words.size());
        EXPECT_EQ(completed[i].timing.totals.cycles, reference.timing.at(0).totals.cycles);
        EXPECT_EQ(completed[i].timing.totals.macs, reference.timing.at(0).totals.macs);
        EXPECT_EQ(completed[i].stream.ops.size(), reference.streams.at(0).ops.size());
    }
    EXPECT_EQ(completed[0].hash, completed[1].hash);
}

TEST(DeviceServer, RefusalsEndTheSessionWithTheReason) {
    {
        Served s;
        s.client->send(1, hello("ethos-u99-1"));
        const auto [type, p] = s.client->receive();
        EXPECT_EQ(type, 64u);
        uint32_t status = 0;
        std::memcpy(&status, p.data() + 16, 4);
        EXPECT_EQ(status, 1u);
        EXPECT_NE(s.finish().find("unknown NPU configuration 'ethos-u99-1'"), std::string::npos);
    }
    {
        Served s;
        s.client->send(1, hello("ethos-u55-128", 7));
        s.client->receive();
        EXPECT_NE(s.finish().find("protocol version 7"), std::string::npos);
    }
    {
        Served s;
        s.client->send(1, hello("ethos-u55-128"));
        s.client->receive();
        s.client->now = 100;
        s.client->sync();
        s.client->send(4, Client::pack(uint64_t{50}));  // time runs back
        EXPECT_NE(s.finish().find("time went back from 100 to 50 cycles"), std::string::npos);
    }
    {
        Served s;
        s.client->send(1, hello("ethos-u55-128"));
        s.client->receive();
        s.client->send(200, {});
        EXPECT_NE(s.finish().find("message type 200"), std::string::npos);
    }
    {
        Served s;
        s.client->send(1, hello("ethos-u55-128"));
        s.client->receive();
        s.client->send(2, Client::pack(uint64_t{0}));  // a READ without its offset and size
        EXPECT_NE(s.finish().find("too short"), std::string::npos);
    }
}

}  // namespace
}  // namespace ethosu
