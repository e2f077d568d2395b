#pragma once
// The fuzz targets of the run path share one harness: the bundled example model (built with the
// project's CommandStreamBuilder, so no corpus is needed) with its command stream replaced by the
// fuzz input, executed bit-exactly with timing and then timing only.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "frontend/runner/run_model.h"

namespace ethosu::fuzz {

// Options for a fuzz input's runs: work limits far below a real model's but above those of the
// seeds (the example and hello_world_int8 do a few thousand steps per op), so that an input
// asking for more is refused when its op is charged, as the budgets are meant to, and every
// execution stays cheap. execute false: timing only.
RunOptions fuzz_run_options(bool execute);

// data: byte 0 picks the NPU configuration, the rest are little-endian command words. Only
// ethosu::Error may escape the run (and is caught); anything else, or a crash, is a finding.
void run_example_with_stream(const uint8_t* data, size_t size);

// The example's own input in that layout: configuration byte, then its words.
std::vector<uint8_t> example_input();

// For LLVMFuzzerInitialize: an empty corpus directory (the first non-option argument) gets the
// example's input as its first file, so that a run without /work/shared starts from a real stream.
void seed_empty_corpus(int argc, char** argv);

}  // namespace ethosu::fuzz
