#pragma once
// The kinds of op the decoder freezes: each NPU_OP_* command of a description names its kind
// (`op = "Conv"`), and the decoder has one decode function per kind.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ethosu {

enum class OpKind : uint8_t {
    Conv, Depthwise, Pool, Elementwise, Resize,  // kernel operations
    DmaStart, DmaWait, KernelWait, PmuMask,        // data movement and synchronisation
    Stop, Irq, Branch,                             // control
};
inline constexpr size_t kOpKindCount = static_cast<size_t>(OpKind::Branch) + 1;
std::string_view op_kind_name(OpKind k);
bool is_kernel_op(OpKind k);

}  // namespace ethosu
