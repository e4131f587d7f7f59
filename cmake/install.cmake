# cmake --install: the public headers (include/fusor), every module library, the fusor tool, the
# shipped providers/ and rules/ (share/fusor), and a package config so that a host app can do
#   find_package(fusor REQUIRED)
#   target_link_libraries(app PRIVATE fusor::fusor)
# fusor::fusor brings the module libraries and their dependencies (ONNX, protobuf, SQLite, fmt;
# fusorConfig.cmake finds them); fusor_RULES_DIR names the installed rules directory, for
# SessionOptions::rules_dir.
include(CMakePackageConfigHelpers)

add_library(fusor_lib INTERFACE)
target_link_libraries(fusor_lib INTERFACE fusor_session)
set_target_properties(fusor_lib PROPERTIES EXPORT_NAME fusor)
add_library(fusor::fusor ALIAS fusor_lib)

set(FUSOR_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/fusor)
set(FUSOR_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/fusor)

get_property(_fusor_modules GLOBAL PROPERTY FUSOR_MODULES)
install(TARGETS ${_fusor_modules} fusor_lib EXPORT fusorTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS fusor RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fusor DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/providers ${PROJECT_SOURCE_DIR}/rules DESTINATION ${FUSOR_SHARE_DIR})
install(EXPORT fusorTargets NAMESPACE fusor:: DESTINATION ${FUSOR_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fusorConfig.cmake.in
  ${PROJECT_BINARY_DIR}/fusorConfig.cmake
  INSTALL_DESTINATION ${FUSOR_CMAKE_DIR}
  PATH_VARS FUSOR_SHARE_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fusorConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fusorConfig.cmake ${PROJECT_BINARY_DIR}/fusorConfigVersion.cmake
  DESTINATION ${FUSOR_CMAKE_DIR})
