# `cmake --install`: headers, libraries, tools and the attnc CMake package
# (find_package(attnc), docs/embedding.md). Two export sets, so that a
# project using only the runtime never needs LLVM/MLIR.

include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(ATTNC_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/attnc")
# add_mlir_library installs each of these into the MLIRTargets export set.
set(ATTNC_COMPILER_LIBS AttncDialect AttncTransforms AttncTarget AttncAnalysis
  AttncConversion AttncPipelines AttncInitAll)
foreach(lib ${ATTNC_COMPILER_LIBS})
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()

# Runtime: the library, its C header.
set_target_properties(attnc_runtime PROPERTIES EXPORT_NAME runtime)
target_include_directories(attnc_runtime INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
install(TARGETS attnc_runtime EXPORT attncRuntimeTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
install(DIRECTORY include/attnc-c DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT runtime)
install(EXPORT attncRuntimeTargets NAMESPACE attnc::
  DESTINATION ${ATTNC_CMAKE_DIR} COMPONENT runtime)

# Compiler: headers (written and generated), the libraries, the tools.
install(DIRECTORY include/attnc ${PROJECT_BINARY_DIR}/include/attnc
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT compiler
  FILES_MATCHING PATTERN "*.h" PATTERN "*.h.inc" PATTERN "*.td"
  PATTERN "*.inc" PATTERN "CMakeFiles" EXCLUDE)
install(EXPORT MLIRTargets NAMESPACE attnc:: FILE attncCompilerTargets.cmake
  DESTINATION ${ATTNC_CMAKE_DIR} COMPONENT compiler)
# The tools link libMLIR.so of the LLVM they were built with.
set_target_properties(attnc-opt attnc-compile PROPERTIES
  INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
install(TARGETS attnc-opt attnc-compile
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT compiler)

configure_package_config_file(cmake/attncConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/attncConfig.cmake
  INSTALL_DESTINATION ${ATTNC_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/attncConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/attncConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/attncConfigVersion.cmake
  DESTINATION ${ATTNC_CMAKE_DIR} COMPONENT runtime)
