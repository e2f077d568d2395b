# SPDX-License-Identifier: GPL-2.0-or-later
# ethosu-emu's QEMU: the MPS2/MPS3 boards and the generic loader only (mps3-an547 is the one with an
# Ethos-U55). CONFIG_MPS2 selects the rest, ETHOSU_NPU included (patch 0002).
CONFIG_MPS2=y
# -device loader: files placed in guest memory before start, the FVP's --data FILE@ADDRESS.
CONFIG_GENERIC_LOADER=y
