// A client of the installed driver library (<ethosu.hpp>, namespace EthosU), built outside the
// project: a device, a batch of buffers written and read back, a network the device refuses.
#include <ethosu.hpp>
#include <uapi/ethosu.h>

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
    EthosU::Device device;
    if (device.capabilities().hwCfg.type != EthosU::HardwareConfiguration::DeviceType::DIRECT) {
        std::puts("the emulated device is not a direct-drive device");
        return 1;
    }
    const auto buffers = device.createBuffers({5, 40});
    const char text[] = "forty bytes of data for the second buffer";
    buffers[1]->write(text, 40);
    char back[40] = {};
    buffers[1]->read(back, sizeof back);
    if (std::memcmp(back, text, 40) != 0) {
        std::puts("the buffer did not keep its bytes");
        return 1;
    }
    const std::vector<unsigned char> garbage(64, 0x5a);
    try {
        EthosU::Network network(device, garbage.data(), garbage.size());
        std::puts("a network of garbage was accepted");
        return 1;
    } catch (const EthosU::Exception& e) {
        std::printf("driver library: buffers round-trip; garbage network refused (%s)\n", e.what());
    }
    return ETHOSU_PMU_EVENT_MAX == 4 ? 0 : 1;
}
