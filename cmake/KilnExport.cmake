# The Kiln package, for find_package(Kiln [COMPONENTS ...]), from an install (install(EXPORT)) or
# straight from this build tree (export()). Namespace Kiln::, three export sets so that a
# component brings only the dependencies it needs:
#   KilnHeadersTargets  Kiln::headers                         (always)
#   KilnToolTargets     Kiln::kiln, each backend's harness     component "tool": tune kernels of your own
#                       and probe
#   KilnKernelsTargets  Kiln::kernels                         component "kernels": the tuned library
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Kiln")
set(KILN_INSTALL_DEVICES_DIR "${CMAKE_INSTALL_DATADIR}/kiln/devices")

set_target_properties(kiln_headers PROPERTIES EXPORT_NAME headers)
set(kiln_tool_targets kiln)
# The packages the backends in this build need, found again by the package (KilnConfig.cmake).
set(KILN_PACKAGE_BACKEND_PACKAGES)
kiln_backends(kiln_backends)
foreach(backend IN LISTS kiln_backends)
  if(NOT TARGET kiln_harness_${backend})
    continue()
  endif()
  set_target_properties(kiln_harness_${backend} PROPERTIES EXPORT_NAME harness_${backend})
  set_target_properties(kiln_probe_${backend} PROPERTIES EXPORT_NAME probe_${backend})
  list(APPEND kiln_tool_targets kiln_harness_${backend} kiln_probe_${backend})
  kiln_backend_property(packages ${backend} PACKAGES)
  list(APPEND KILN_PACKAGE_BACKEND_PACKAGES ${packages})
endforeach()
set(KILN_PACKAGE_COMPONENTS tool)
if(TARGET kiln_kernels)
  set_target_properties(kiln_kernels PROPERTIES EXPORT_NAME kernels)
  list(APPEND KILN_PACKAGE_COMPONENTS kernels)
endif()

# The build tree as a package: find_package(Kiln PATHS <this build>) without installing.
export(TARGETS kiln_headers NAMESPACE Kiln:: FILE "${PROJECT_BINARY_DIR}/KilnHeadersTargets.cmake")
export(TARGETS ${kiln_tool_targets} NAMESPACE Kiln:: FILE "${PROJECT_BINARY_DIR}/KilnToolTargets.cmake")
if(TARGET kiln_kernels)
  export(TARGETS kiln_kernels NAMESPACE Kiln:: FILE "${PROJECT_BINARY_DIR}/KilnKernelsTargets.cmake")
endif()
set(KILN_CONFIG_DEVICES_DIR "${PROJECT_SOURCE_DIR}/presets/devices")
set(KILN_CONFIG_MODULE_DIR "${PROJECT_SOURCE_DIR}/cmake")
configure_package_config_file(cmake/KilnConfig.cmake.in "${PROJECT_BINARY_DIR}/KilnConfig.cmake"
  INSTALL_DESTINATION "${PROJECT_BINARY_DIR}" INSTALL_PREFIX "${PROJECT_BINARY_DIR}"
  PATH_VARS KILN_CONFIG_DEVICES_DIR KILN_CONFIG_MODULE_DIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake" COMPATIBILITY SameMinorVersion)

if(NOT KILN_INSTALL)
  return()
endif()
install(TARGETS kiln_headers EXPORT KilnHeadersTargets INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${kiln_tool_targets}
  EXPORT KilnToolTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT KilnHeadersTargets NAMESPACE Kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR})
install(EXPORT KilnToolTargets NAMESPACE Kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR})
if(TARGET kiln_kernels)
  install(TARGETS kiln_kernels EXPORT KilnKernelsTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT KilnKernelsTargets NAMESPACE Kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR})
  install(DIRECTORY "${KILN_GENERATED_INCLUDE_DIR}/" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
install(DIRECTORY autotune/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY presets/devices/ DESTINATION ${KILN_INSTALL_DEVICES_DIR} FILES_MATCHING PATTERN "*.json")

set(KILN_CONFIG_DEVICES_DIR "${KILN_INSTALL_DEVICES_DIR}")
set(KILN_CONFIG_MODULE_DIR "${KILN_INSTALL_CMAKEDIR}")
configure_package_config_file(cmake/KilnConfig.cmake.in "${CMAKE_CURRENT_BINARY_DIR}/install/KilnConfig.cmake"
  INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR}
  PATH_VARS KILN_CONFIG_DEVICES_DIR KILN_CONFIG_MODULE_DIR)
install(FILES
  "${CMAKE_CURRENT_BINARY_DIR}/install/KilnConfig.cmake"
  "${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake"
  cmake/Kiln.cmake
  cmake/KilnFamily.cmake
  cmake/KilnBackends.cmake
  DESTINATION ${KILN_INSTALL_CMAKEDIR})
