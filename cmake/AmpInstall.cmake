# `cmake --install build --prefix P`: headers (with the generated .h.inc and
# .cpp.inc files and the .td files another project's TableGen needs),
# amp's libraries with their exported targets, the tools, the mlir-opt
# plugin and P/lib/cmake/amp/AmpConfig.cmake (docs/Embedding.md).
include(CMakePackageConfigHelpers)

set(AMP_INSTALL_CMAKE_DIR lib${LLVM_LIBDIR_SUFFIX}/cmake/amp)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/amp
  DESTINATION include COMPONENT amp-headers
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/amp-c
  DESTINATION include COMPONENT amp-headers FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/amp
  DESTINATION include COMPONENT amp-headers
  FILES_MATCHING PATTERN "*.inc" PATTERN "*.h"
  PATTERN "CMakeFiles" EXCLUDE)

# add_mlir_library puts every amp library into the MLIRTargets export set;
# the host runtime, the .ampgpu format library and the CUDA emulation's
# executor (plain add_library) join
# it here, with the artifact format's headers.
install(TARGETS AmpRuntime AmpGpuFormat AmpGpuHost EXPORT MLIRTargets
  ARCHIVE DESTINATION lib${LLVM_LIBDIR_SUFFIX} COMPONENT amp-libraries)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/cuda/include/
  DESTINATION include COMPONENT amp-headers FILES_MATCHING PATTERN "*.h")
install(EXPORT MLIRTargets NAMESPACE Amp:: FILE AmpTargets.cmake
  DESTINATION ${AMP_INSTALL_CMAKE_DIR} COMPONENT amp-cmake)

install(TARGETS amp-opt amp-run RUNTIME DESTINATION bin COMPONENT amp-tools)
install(TARGETS AmpPlugin LIBRARY DESTINATION lib${LLVM_LIBDIR_SUFFIX}
  COMPONENT amp-tools)

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/AmpConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/AmpConfig.cmake
  INSTALL_DESTINATION ${AMP_INSTALL_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/AmpConfigVersion.cmake
  VERSION ${AMP_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/AmpConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/AmpConfigVersion.cmake
  DESTINATION ${AMP_INSTALL_CMAKE_DIR} COMPONENT amp-cmake)
