# cmake --install: the public headers, the libraries behind them, a CMake package with one
# component per public API (find_package(ethosu_emu COMPONENTS ...), see
# ethosu_emu-config.cmake.in) and a pkg-config file for the device and the core-driver glue.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ETHOSU_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ethosu_emu)

# Installs the targets of one export set, each exported under its short name (ethosu_emu::isa,
# ...), and its ethosu_emu-<set>-targets.cmake. A set's targets may link those of another set.
function(ethosu_install_export_set set)
  set(targets)
  while(ARGN)
    list(POP_FRONT ARGN target export_name)
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
    list(APPEND targets ${target})
  endwhile()
  install(TARGETS ${targets} EXPORT ethosu_emu_${set}_targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/ethosu_emu/objects)
  install(EXPORT ethosu_emu_${set}_targets NAMESPACE ethosu_emu:: FILE ethosu_emu-${set}-targets.cmake
          DESTINATION ${ETHOSU_CMAKE_DIR})
endfunction()

# Component device: the C API (ethosu_emu.h, ethosu_device.h), the core-driver glue, ExecuTorch's
# DMA copy, and the engine under them. Their outside libraries, fmt and TBB, are linked by name.
ethosu_install_export_set(device
  ethosu_isa isa ethosu_memory memory ethosu_engine engine ethosu_timing timing ethosu_traces traces
  ethosu_device device ethosu_mmio_trap mmio_trap ethosu_bus_window bus_window
  ethosu_core_driver_glue core_driver_glue ethosu_executorch_io executorch_io)
install(FILES ${ETHOSU_ROOT}/frontend/device/ethosu_emu.h ${ETHOSU_ROOT}/frontend/device/ethosu_device.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ethosu_emu)

# Component model_runner: the C++ API to load a model and run it (ethosu_emu/model_runner.hpp),
# with the loaders (FlatBuffers, ZLIB) and the graph runner.
ethosu_install_export_set(model_runner
  ethosu_loaders loaders ethosu_runner runner ethosu_graph graph ethosu_model_runner model_runner)
install(FILES ${ETHOSU_ROOT}/frontend/model_runner/ethosu_emu/model_runner.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ethosu_emu)

# Component linux_stack: the Linux driver stack's /dev/ethosu0, emulated (links the runner), and
# Arm's driver-library API over it (<ethosu.hpp>, namespace EthosU).
ethosu_install_export_set(linux_stack ethosu_linux_stack linux_stack ethosu_driver_library driver_library)
install(DIRECTORY ${ETHOSU_ROOT}/frontend/linux/driver_library/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ethosu_emu/driver_library)

configure_package_config_file(${ETHOSU_ROOT}/cmake/ethosu_emu-config.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/ethosu_emu-config.cmake INSTALL_DESTINATION ${ETHOSU_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ethosu_emu-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ethosu_emu-config.cmake ${CMAKE_CURRENT_BINARY_DIR}/ethosu_emu-config-version.cmake
        DESTINATION ${ETHOSU_CMAKE_DIR})
# The .pc finds the prefix from where it lies, so the installed tree can move.
file(RELATIVE_PATH ETHOSU_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${ETHOSU_ROOT}/cmake/ethosu_emu.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ethosu_emu.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ethosu_emu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
