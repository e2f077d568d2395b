#include "emulator/isa/decoded_op.h"

namespace ethosu {

OpBody default_body(OpKind kind) {
    auto kernel_op = [](KernelKindParts parts) {
        KernelOp op;
        op.parts = std::move(parts);
        return op;
    };
    switch (kind) {
        case OpKind::Conv:
        case OpKind::Depthwise: return kernel_op(std::monostate{});
        case OpKind::Pool: return kernel_op(PoolMode::Max);
        case OpKind::Elementwise: return kernel_op(Elementwise{});
        case OpKind::Resize: return kernel_op(Resize{});
        case OpKind::DmaStart: return Dma{};
        case OpKind::DmaWait:
        case OpKind::KernelWait: return WaitOp{};
        case OpKind::PmuMask: return PmuOp{};
        case OpKind::Stop:
        case OpKind::Irq: return SignalOp{};
        case OpKind::Branch: return BranchOp{};
    }
    throw std::logic_error("op kind without a body");
}

}  // namespace ethosu
