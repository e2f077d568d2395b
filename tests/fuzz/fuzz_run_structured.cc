// The run path (see run_harness.h) with our own mutator (command_mutator.h) on the input's
// command words. One input in four still goes to libFuzzer's own mutators.

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "tests/fuzz/command_mutator.h"
#include "tests/fuzz/run_harness.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    ethosu::fuzz::seed_empty_corpus(*argc, *argv);
    return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
    std::minstd_rand rng(seed);
    if (size < 5 || rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
    const auto configs = ethosu::all_npu_configs();
    const auto& gen = ethosu::isa::describe(configs[data[0] % configs.size()].generation);
    std::vector<uint32_t> words((size - 1) / 4);
    std::memcpy(words.data(), data + 1, words.size() * 4);
    auto commands = ethosu::fuzz::split_commands(gen, words);
    if (!commands) return LLVMFuzzerMutate(data, size, max_size);
    ethosu::fuzz::mutate_commands(gen, *commands, rng, /*keep_size=*/false);
    words = ethosu::fuzz::join_commands(*commands);
    // Every command may have been dropped: no words, and no memcpy from their null data.
    const size_t bytes = std::min(words.size() * 4, (max_size - 1) / 4 * 4);
    if (bytes > 0) std::memcpy(data + 1, words.data(), bytes);
    return 1 + bytes;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ethosu::fuzz::run_example_with_stream(data, size);
    return 0;
}
