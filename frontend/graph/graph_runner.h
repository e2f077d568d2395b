#pragma once
// Runs a Vela .tflite as TFLite Micro would: subgraph 0's operators in order, each ethos-u
// operator on the emulated NPU (its own command stream, regions and scratch) and every other
// operator on the host's reference kernels, tensors passed between them in host buffers.

#include <cstdint>
#include <vector>

#include "frontend/runner/run_model.h"
#include "frontend/loaders/model.h"

namespace ethosu {

// A .tflite whose graph is more than one ethos-u operator: CPU operators, several ethos-u
// operators, or none.
bool runs_as_graph(const LoadedModel& model);

// Checks, before anything runs, that every operator can: implemented (else an error naming it and
// its index), every tensor written before it is read (no operator cycle) and written once, types
// and shapes as the kernel needs them, each ethos-u operator's feature maps inside its regions.
// The host's share is charged to `limits` as the NPU's ops are: each CPU operator's work (the
// elements it reads and writes; multiply-accumulates for the convolution family) to max_op_work,
// their sum to max_run_work, and every buffer the run allocates on the host (model inputs,
// variables, operator outputs) to max_allocation_bytes. Throws ethosu::Error naming the operator
// or tensor.
void check_graph(const LoadedModel& model, const WorkLimits& limits = {});

// inputs: raw bytes per model input (empty = zeros). Outputs in model output order; with
// options.pipeline.execute false only the ethos-u operators' streams are timed.
RunResult run_graph(const LoadedModel& model, std::vector<std::vector<uint8_t>> inputs, const RunOptions& options = {});

// run_graph for a model that runs as a graph, else run_model.
RunResult run_whole_model(const LoadedModel& model, std::vector<std::vector<uint8_t>> inputs,
                          const RunOptions& options = {});

}  // namespace ethosu
