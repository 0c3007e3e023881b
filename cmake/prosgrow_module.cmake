include(GoogleTest)

# prosgrow_gtest_cases(TARGET LABEL)
#
# Registers every case of the GoogleTest binary TARGET as its own CTest test,
# named TARGET.Suite.Case (so `ctest -R TARGET` still selects them all) and
# labelled LABEL. Each case runs through cmake/gtest_case.sh, which turns a
# case that passed by calling GTEST_SKIP() into exit 77: CTest reports it as
# Skipped, with its reason in the output (scripts/test_summary.py lists
# them), while a case that failed stays Failed. The cases are listed when
# ctest runs (PRE_TEST): building needs no test run.
function(prosgrow_gtest_cases TARGET LABEL)
  set_target_properties(${TARGET} PROPERTIES CROSSCOMPILING_EMULATOR "${CMAKE_SOURCE_DIR}/cmake/gtest_case.sh")
  gtest_discover_tests(${TARGET}
    TEST_PREFIX "${TARGET}."
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 120
    PROPERTIES LABELS "${LABEL}" SKIP_RETURN_CODE 77)
endfunction()

# prosgrow_module(NAME DEPS dep1 dep2 ...)
#
# Defines static library pg_<NAME> from every *.cc in the calling directory
# (recursively) except *_test.cc, and a test binary <NAME>_tests from every
# *_test.cc, linked with GoogleTest, each case registered with CTest
# (prosgrow_gtest_cases, label "unit").
# Files named *_avx2.cc / *_avx512.cc get the matching ISA flags; everything
# else is built for the baseline x86-64 so runtime dispatch stays honest.
function(prosgrow_module NAME)
  cmake_parse_arguments(M "" "" "DEPS;TEST_DEPS" ${ARGN})
  file(GLOB_RECURSE all_cc CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cc")
  set(lib_cc "")
  set(test_cc "")
  foreach(f ${all_cc})
    if(f MATCHES "_test\\.cc$")
      list(APPEND test_cc ${f})
    else()
      list(APPEND lib_cc ${f})
    endif()
    if(f MATCHES "_avx2(_test)?\\.cc$")
      set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
    elseif(f MATCHES "_avx512(_test)?\\.cc$")
      set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS
        "-mavx2;-mfma;-mf16c;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mavx512bf16")
    endif()
  endforeach()
  if(lib_cc)
    add_library(pg_${NAME} STATIC ${lib_cc})
    target_include_directories(pg_${NAME} PUBLIC ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(pg_${NAME} PUBLIC ${M_DEPS})
  else()
    add_library(pg_${NAME} INTERFACE)
    target_include_directories(pg_${NAME} INTERFACE ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(pg_${NAME} INTERFACE ${M_DEPS})
  endif()
  if(test_cc)
    add_executable(${NAME}_tests ${test_cc})
    target_link_libraries(${NAME}_tests PRIVATE pg_${NAME} ${M_TEST_DEPS} GTest::gtest GTest::gtest_main)
    target_compile_definitions(${NAME}_tests PRIVATE
      PROSGROW_SHARED_DIR="${PROSGROW_SHARED_DIR}"
      PROSGROW_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
    prosgrow_gtest_cases(${NAME}_tests unit)
  endif()
endfunction()
