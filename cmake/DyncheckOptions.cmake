# Compiler flags shared by every dyncheck target, attached through an interface target
# so that they do not leak into consumers of the installed package.
add_library(dyncheck_build_flags INTERFACE)
target_compile_options(dyncheck_build_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  # Aggregates with defaulted trailing members (Measurement, Curve, ParamSpec) are brace-
  # initialised on purpose; -Wextra would flag every such use.
  -Wno-missing-field-initializers
  $<$<BOOL:${DYNCHECK_WARNINGS_AS_ERRORS}>:-Werror>)
# A seed must give the same bits on every x86-64 machine (issue #10): never contract a*b + c into
# an FMA (GCC does by default in GNU modes, and any -m flag enabling FMA would make it happen).
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(dyncheck_build_flags INTERFACE -ffp-contract=off)
endif()
if(DYNCHECK_SANITIZE)
  target_compile_options(dyncheck_build_flags INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(dyncheck_build_flags INTERFACE -fsanitize=address,undefined)
endif()

# Add a dyncheck library `dyncheck_<name>` with alias `dyncheck::<name>`, exported as `dyncheck::<name>`.
function(dyncheck_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(dyncheck_${name} STATIC ${ARG_SOURCES})
  add_library(dyncheck::${name} ALIAS dyncheck_${name})
  set_target_properties(dyncheck_${name} PROPERTIES EXPORT_NAME ${name} POSITION_INDEPENDENT_CODE ON)
  target_include_directories(dyncheck_${name} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(dyncheck_${name} PUBLIC cxx_std_20)
  target_link_libraries(dyncheck_${name} PUBLIC ${ARG_PUBLIC_DEPS}
                        PRIVATE ${ARG_PRIVATE_DEPS} $<BUILD_INTERFACE:dyncheck_build_flags>)
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(TARGETS dyncheck_${name} EXPORT dyncheckTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
