# install() + install(EXPORT): the `kiln` tool, the harness libraries and probes, the headers,
# the device files, Kiln.cmake, and the tuned kernel library, as package Kiln with namespace Kiln::.
# A downstream project does find_package(Kiln), links Kiln::kernels, and can call
# kiln_add_kernel() on kernels of its own.
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Kiln")
set(KILN_INSTALL_DEVICES_DIR "${CMAKE_INSTALL_DATADIR}/kiln/devices")

set_target_properties(kiln_headers PROPERTIES EXPORT_NAME headers)
set_target_properties(kiln_harness_cpu PROPERTIES EXPORT_NAME harness_cpu)
set_target_properties(kiln_probe_cpu PROPERTIES EXPORT_NAME probe_cpu)
set(kiln_exported kiln kiln_headers kiln_harness_cpu kiln_probe_cpu)
if(TARGET kiln_harness_cuda)
  set_target_properties(kiln_harness_cuda PROPERTIES EXPORT_NAME harness_cuda)
  set_target_properties(kiln_probe_cuda PROPERTIES EXPORT_NAME probe_cuda)
  list(APPEND kiln_exported kiln_harness_cuda kiln_probe_cuda)
endif()
if(TARGET kiln_kernels)
  set_target_properties(kiln_kernels PROPERTIES EXPORT_NAME kernels)
  list(APPEND kiln_exported kiln_kernels)
  install(DIRECTORY "${KILN_GENERATED_INCLUDE_DIR}/" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()

install(TARGETS ${kiln_exported}
  EXPORT KilnTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY autotune/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY presets/devices/ DESTINATION ${KILN_INSTALL_DEVICES_DIR} FILES_MATCHING PATTERN "*.json")
install(EXPORT KilnTargets NAMESPACE Kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR})

configure_package_config_file(cmake/KilnConfig.cmake.in "${CMAKE_CURRENT_BINARY_DIR}/KilnConfig.cmake"
  INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR}
  PATH_VARS KILN_INSTALL_DEVICES_DIR)
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/KilnConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${CMAKE_CURRENT_BINARY_DIR}/KilnConfig.cmake"
  "${CMAKE_CURRENT_BINARY_DIR}/KilnConfigVersion.cmake"
  cmake/Kiln.cmake
  DESTINATION ${KILN_INSTALL_CMAKEDIR})
