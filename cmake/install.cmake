# cmake --install: the C API header, the libraries behind it, a CMake package
# (find_package(ethosu_emu): ethosu_emu::device, ::core_driver_glue, ::executorch_io,
# ::linux_stack, ::driver_library) and a pkg-config file for the device and the core-driver glue.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The libraries the public ones link, exported under short names (ethosu_emu::isa, ...).
set(ETHOSU_EXPORTED
  ethosu_isa isa ethosu_memory memory ethosu_engine engine ethosu_timing timing
  ethosu_traces traces ethosu_loaders loaders ethosu_runner runner ethosu_graph graph ethosu_device device ethosu_mmio_trap mmio_trap ethosu_bus_window bus_window
  ethosu_core_driver_glue core_driver_glue ethosu_executorch_io executorch_io ethosu_linux_stack linux_stack ethosu_driver_library driver_library)
set(ETHOSU_EXPORTED_TARGETS)
while(ETHOSU_EXPORTED)
  list(POP_FRONT ETHOSU_EXPORTED target export_name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  list(APPEND ETHOSU_EXPORTED_TARGETS ${target})
endwhile()

set(ETHOSU_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ethosu_emu)
install(TARGETS ${ETHOSU_EXPORTED_TARGETS} EXPORT ethosu_emu_targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/ethosu_emu/objects)
install(FILES ${ETHOSU_ROOT}/frontend/device/ethosu_emu.h ${ETHOSU_ROOT}/frontend/device/ethosu_device.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ethosu_emu)
install(DIRECTORY ${ETHOSU_ROOT}/frontend/linux/driver_library/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ethosu_emu/driver_library)
install(EXPORT ethosu_emu_targets NAMESPACE ethosu_emu:: FILE ethosu_emu-targets.cmake DESTINATION ${ETHOSU_CMAKE_DIR})
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
