#include "frontend/device_server/device_server.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "frontend/device/npu_device.h"

namespace ethosu {
namespace {

// Message kinds (PROTOCOL.md).
enum class Message : uint32_t {
    Hello = 1,
    Read = 2,
    Write = 3,
    Sync = 4,
    Reset = 5,
    HelloReply = 64,
    ReadReply = 65,
    State = 66,
    MemRead = 128,
    MemWrite = 129,
    MemData = 192,
    MemDone = 193,
};
constexpr uint32_t kProtocolVersion = 1;
constexpr uint32_t kLongestMessage = 1u << 20;  // a HELLO's name or a page of memory fits many times
constexpr uint32_t kNonSecure = 1, kUnprivileged = 2;
constexpr size_t kMergeGap = 4096;  // a page: changed runs closer than this go back in one MEM_WRITE

// A broken or malformed connection: the server stops serving it.
struct ProtocolError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Little-endian payloads.
class Payload {
public:
    Payload() = default;
    explicit Payload(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
    template <typename T> Payload& put(T value) {
        static_assert(std::is_trivially_copyable_v<T>);
        return put_bytes(&value, sizeof(T));
    }
    Payload& put_bytes(const void* data, size_t size) {
        const size_t at = bytes_.size();
        bytes_.resize(at + size);
        if (size) std::memcpy(bytes_.data() + at, data, size);
        return *this;
    }
    template <typename T> T get(const char* what) {
        if (bytes_.size() - at_ < sizeof(T)) throw ProtocolError(fmt::format("a message too short for its {}", what));
        T value;
        std::memcpy(&value, bytes_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return value;
    }
    std::span<const uint8_t> rest() const { return {bytes_.data() + at_, bytes_.size() - at_}; }
    void expect_end(const char* message) const {
        if (at_ != bytes_.size()) throw ProtocolError(fmt::format("{} of {} bytes, longer than it is", message, bytes_.size()));
    }
    const std::vector<uint8_t>& bytes() const { return bytes_; }

private:
    std::vector<uint8_t> bytes_;
    size_t at_ = 0;
};

class Connection {
public:
    explicit Connection(int fd) : fd_(fd) {}

    void send(Message type, const Payload& payload) {
        Payload header;
        header.put(static_cast<uint32_t>(type)).put(static_cast<uint32_t>(payload.bytes().size()));
        write_all(header.bytes().data(), header.bytes().size());
        write_all(payload.bytes().data(), payload.bytes().size());
    }
    // The next message; nullopt when the client closed the connection between messages.
    std::optional<std::pair<Message, Payload>> receive() {
        uint8_t header[8];
        if (!read_all(header, sizeof header, true)) return std::nullopt;
        uint32_t type = 0, length = 0;
        std::memcpy(&type, header, 4);
        std::memcpy(&length, header + 4, 4);
        if (length > kLongestMessage) throw ProtocolError(fmt::format("a message of {} bytes", length));
        std::vector<uint8_t> bytes(length);
        read_all(bytes.data(), bytes.size(), false);
        return std::pair{static_cast<Message>(type), Payload(std::move(bytes))};
    }
    Payload expect(Message type, const char* what) {
        auto message = receive();
        if (!message) throw ProtocolError(fmt::format("the client closed the connection instead of sending {}", what));
        if (message->first != type)
            throw ProtocolError(fmt::format("message type {} where {} was due", static_cast<uint32_t>(message->first), what));
        return std::move(message->second);
    }

private:
    void write_all(const uint8_t* data, size_t size) {
        while (size) {
            const ssize_t n = ::send(fd_, data, size, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw ProtocolError(fmt::format("the connection broke while sending: {}", std::strerror(errno)));
            data += n, size -= static_cast<size_t>(n);
        }
    }
    // False only when at_boundary and the peer closed before the first byte.
    bool read_all(uint8_t* data, size_t size, bool at_boundary) {
        size_t got = 0;
        while (got < size) {
            const ssize_t n = ::recv(fd_, data + got, size - got, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n == 0 && at_boundary && got == 0) return false;
            if (n <= 0) throw ProtocolError("the connection ended inside a message");
            got += static_cast<size_t>(n);
        }
        return true;
    }

    int fd_;
};

// One NPU served over one connection: the device's bus callbacks become MEM_READ/MEM_WRITE
// requests to the client, made while it waits for the reply to its own request.
class Session {
public:
    Session(int fd, const DeviceServerOptions& options) : connection_(fd), options_(options) {}

    void run() {
        hello();
        while (auto message = connection_.receive()) handle(message->first, message->second);
    }

private:
    void hello() {
        Payload p = connection_.expect(Message::Hello, "HELLO");
        const auto version = p.get<uint32_t>("version");
        const auto rest = p.rest();
        const std::string name(rest.begin(), rest.end());
        const auto npu = find_npu_config(name);
        std::string refusal;
        if (version != kProtocolVersion) refusal = fmt::format("protocol version {}; this server speaks {}", version, kProtocolVersion);
        else if (!npu) refusal = fmt::format("unknown NPU configuration '{}'; valid: {}", name, npu_config_names());
        if (refusal.empty()) {
            try {
                NpuDevice::Options o;
                o.npu = *npu;
                o.system = options_.system;
                o.clock = NpuDevice::Clock::Host;
                // The client waits for the reply while the NPU works on its memory: nothing else
                // writes it meanwhile, so unchanged bytes between changes may go back with them.
                o.bus = BusCallbacks{&Session::mem_read, &Session::mem_write, this, kMergeGap};
                device_ = std::make_unique<NpuDevice>(std::move(o));
                device_->set_irq_line([this](bool level) { irq_level_ = level; });
                if (options_.on_stream) device_->set_stream_observer(options_.on_stream);
            } catch (const std::exception& e) {
                refusal = e.what();
            }
        }
        Payload reply;
        reply.put(kProtocolVersion).put(static_cast<uint32_t>(device_ ? device_->register_bytes() : 0));
        reply.put(device_ ? device_->clock_hz() : 0.0).put(static_cast<uint32_t>(refusal.empty() ? 0 : 1));
        reply.put_bytes(refusal.data(), refusal.size());
        connection_.send(Message::HelloReply, reply);
        if (!refusal.empty()) throw ProtocolError(refusal);
    }

    void handle(Message type, Payload& p) {
        if (type != Message::Read && type != Message::Write && type != Message::Sync && type != Message::Reset)
            throw ProtocolError(fmt::format("message type {} from the client", static_cast<uint32_t>(type)));
        advance_to(p.get<uint64_t>("time"));
        Payload reply;
        switch (type) {
            case Message::Read: {
                const auto offset = p.get<uint32_t>("offset");
                const auto size = p.get<uint32_t>("size");
                p.expect_end("READ");
                uint64_t value = 0;
                device_->read(offset, size, value);
                check_bus();
                reply.put(value);
                put_state(reply);
                if (options_.verbose) fmt::print(stderr, "ethosu-emu device: read 0x{:03x}/{} = 0x{:x}\n", offset, size, value);
                connection_.send(Message::ReadReply, reply);
                return;
            }
            case Message::Write: {
                const auto offset = p.get<uint32_t>("offset");
                const auto size = p.get<uint32_t>("size");
                const auto value = p.get<uint64_t>("value");
                p.expect_end("WRITE");
                if (options_.verbose) fmt::print(stderr, "ethosu-emu device: write 0x{:03x}/{} = 0x{:x}\n", offset, size, value);
                attributes_ = bus_attributes();  // a write (CMD's run bit) is what starts a stream on the bus
                device_->write(offset, size, value);
                check_bus();
                break;
            }
            case Message::Sync: p.expect_end("SYNC"); break;
            case Message::Reset:
                p.expect_end("RESET");
                device_->power_on_reset();
                break;
            default: break;
        }
        put_state(reply);
        connection_.send(Message::State, reply);
    }

    void advance_to(uint64_t now) {
        const uint64_t current = device_->now();
        if (now < current) throw ProtocolError(fmt::format("time went back from {} to {} cycles", current, now));
        device_->advance(now - current);
    }

    void put_state(Payload& reply) const {
        const auto next = device_->cycles_to_next_event();
        reply.put(static_cast<uint32_t>(irq_level_ ? 1 : 0)).put(static_cast<uint32_t>(next ? 1 : 0)).put(next.value_or(0));
    }

    // The bus master attributes of the NPU's accesses: its PROT register's active levels.
    uint32_t bus_attributes() const {
        constexpr uint32_t kProt = 0x024, kActiveCpl = 1, kActiveCsl = 2;  // PROT: 1 privileged, 1 non-secure
        const uint32_t prot = device_->peek(kProt);
        return ((prot & kActiveCsl) ? kNonSecure : 0) | ((prot & kActiveCpl) ? 0 : kUnprivileged);
    }

    // A connection that broke inside a bus callback (which must not throw) ends the session after
    // the request.
    void check_bus() {
        if (!broken_.empty()) throw ProtocolError(broken_);
    }

    static int mem_read(void* user, uint64_t address, void* data, size_t size) {
        auto& s = *static_cast<Session*>(user);
        if (!s.broken_.empty()) return 1;
        try {
            Payload request;
            request.put(address).put(static_cast<uint32_t>(size)).put(s.attributes_);
            s.connection_.send(Message::MemRead, request);
            Payload reply = s.connection_.expect(Message::MemData, "MEM_DATA");
            if (reply.get<uint32_t>("status") != 0) return 1;
            const auto bytes = reply.rest();
            if (bytes.size() != size) throw ProtocolError(fmt::format("MEM_DATA of {} bytes for {}", bytes.size(), size));
            std::memcpy(data, bytes.data(), size);
            return 0;
        } catch (const std::exception& e) {
            s.broken_ = e.what();
            return 1;
        }
    }

    static int mem_write(void* user, uint64_t address, const void* data, size_t size) {
        auto& s = *static_cast<Session*>(user);
        if (!s.broken_.empty()) return 1;
        try {
            Payload request;
            request.put(address).put(static_cast<uint32_t>(size)).put(s.attributes_).put_bytes(data, size);
            s.connection_.send(Message::MemWrite, request);
            Payload reply = s.connection_.expect(Message::MemDone, "MEM_DONE");
            return reply.get<uint32_t>("status") != 0 ? 1 : 0;
        } catch (const std::exception& e) {
            s.broken_ = e.what();
            return 1;
        }
    }

    Connection connection_;
    const DeviceServerOptions& options_;
    std::unique_ptr<NpuDevice> device_;
    bool irq_level_ = false;
    uint32_t attributes_ = 0;
    std::string broken_;
};

}  // namespace

std::string serve_device(int fd, const DeviceServerOptions& options) {
    try {
        Session(fd, options).run();
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

DeviceSocket::DeviceSocket(std::string path) : path_(std::move(path)) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path_.size() >= sizeof address.sun_path)
        throw std::system_error(ENAMETOOLONG, std::generic_category(), fmt::format("socket path {}", path_));
    std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
    ::unlink(path_.c_str());
    if (::bind(listener_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || ::listen(listener_, 1) != 0) {
        const int error = errno;
        ::close(listener_);
        throw std::system_error(error, std::generic_category(), fmt::format("listen on {}", path_));
    }
}

DeviceSocket::~DeviceSocket() {
    ::close(listener_);
    ::unlink(path_.c_str());
}

std::optional<std::string> DeviceSocket::serve_one(const DeviceServerOptions& options) {
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return std::nullopt;
    std::string result = serve_device(client, options);
    ::close(client);
    return result;
}

void DeviceSocket::stop() { ::shutdown(listener_, SHUT_RDWR); }

std::string serve_device_at(const std::string& path, const DeviceServerOptions& options) {
    DeviceSocket socket(path);
    return socket.serve_one(options).value_or(fmt::format("no client connected to {}", path));
}

}  // namespace ethosu
