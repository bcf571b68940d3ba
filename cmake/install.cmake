# Installs the codec (and whatever library modules exist) so an engine can link it:
#   find_package(detgate CONFIG) -> detgate::codec    or    pkg-config --libs detgate-codec
include(CMakePackageConfigHelpers)

set(dg_install_targets detgate_base detgate_codec)
foreach(t detgate_hash detgate_reports detgate_sim detgate_harness)
  if(TARGET ${t})
    list(APPEND dg_install_targets ${t})
  endif()
endforeach()

install(TARGETS ${dg_install_targets} EXPORT detgateTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${DETGATE_INCLUDE_DIR}/detgate DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT detgateTargets NAMESPACE detgate:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/detgate)

configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/detgateConfig.cmake.in
  ${CMAKE_BINARY_DIR}/detgateConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/detgate)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/detgateConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/detgateConfig.cmake ${CMAKE_BINARY_DIR}/detgateConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/detgate)

# Relocatable: the prefix is found from the .pc file's own folder, so --prefix at install time works.
file(RELATIVE_PATH DG_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" DG_PC_TO_PREFIX "${DG_PC_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/detgate-codec.pc.in ${CMAKE_BINARY_DIR}/detgate-codec.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/detgate-codec.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The harness and the modules it links (static libraries: each named, in link order), for an engine
# that runs the gate in-process through pkg-config (find_package gives detgate::harness).
if(TARGET detgate_harness)
  set(DG_PC_HARNESS_LIBS "-ldetgate_reports -ldetgate_hash")
  if(TARGET detgate_sim)
    string(APPEND DG_PC_HARNESS_LIBS " -ldetgate_sim")
  endif()
  configure_file(${CMAKE_SOURCE_DIR}/cmake/detgate-harness.pc.in ${CMAKE_BINARY_DIR}/detgate-harness.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/detgate-harness.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
