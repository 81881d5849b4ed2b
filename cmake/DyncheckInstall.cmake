include(CMakePackageConfigHelpers)
set(DYNCHECK_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dyncheck)
install(EXPORT dyncheckTargets NAMESPACE dyncheck:: DESTINATION ${DYNCHECK_CMAKE_DIR})
configure_package_config_file(cmake/dyncheckConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/dyncheckConfig.cmake INSTALL_DESTINATION ${DYNCHECK_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/dyncheckConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/dyncheckConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/dyncheckConfigVersion.cmake
              cmake/FindMPFR.cmake
        DESTINATION ${DYNCHECK_CMAKE_DIR})
