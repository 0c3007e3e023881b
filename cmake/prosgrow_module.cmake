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

# Unity builds (docs/benchmarks.md "Build time"). In the targets listed, most
# sources reach nlohmann/json (prosgrow's own sources CLI11 too), whose parsing
# and template instantiations cost 5-10 CPU seconds in every source file that
# uses them; compiled up to eight files at a time, each batch pays that once.
# No kernel target is listed: their code and flags stay as they are.
# -DPROSGROW_UNITY=OFF compiles every file on its own.
#
# A batch is one translation unit, so a file must not see another's file-scope
# names where that could change what it means. prosgrow_unity_groups keeps on
# its own (SKIP_UNITY_BUILD_INCLUSION) every file that defines, at column 0, a
# function or constant whose name another file of the target also defines
# (internal helpers such as two `Make`s: in one unit they would overload), and
# every file with a `using namespace` or a #define at column 0; and it batches
# together only files whose file-scope aliases (`using json = ...`) agree.
# pg_route is not listed: a member of one of its files has a type from another
# file's anonymous namespace once they share a unit (-Wsubobject-linkage).
set(PROSGROW_UNITY_TARGETS prosgrow pg_server pg_chat pg_bench pg_eval pg_constrain pg_client)

# prosgrow_unity_groups(TARGET): the UNITY_GROUP of each source, as above.
function(prosgrow_unity_groups tgt)
  get_target_property(srcs ${tgt} SOURCES)
  get_target_property(dir ${tgt} SOURCE_DIR)
  set(files "")
  set(all_names "")
  set(all_aliases "")
  foreach(f ${srcs})
    get_filename_component(f "${f}" ABSOLUTE BASE_DIR "${dir}")
    if(NOT f MATCHES "\\.cc$" OR NOT EXISTS "${f}")
      continue()
    endif()
    list(APPEND files "${f}")
    # Function and k-constant definitions at column 0 (the tree is clang-formatted:
    # namespace members are not indented), and file-scope aliases.
    file(STRINGS "${f}" lines REGEX "^[A-Za-z][^=;(]*[ *&][A-Za-z_][A-Za-z0-9_]*[({]|^[A-Za-z][^(]* k[A-Z][A-Za-z0-9_]* =|^using |^#define |^#undef ")
    set(names "")
    set(aliases "")
    set(alone OFF)
    foreach(line IN LISTS lines)
      if(line MATCHES "^using namespace |^#define |^#undef ")
        set(alone ON)
      elseif(line MATCHES "^using ([A-Za-z_][A-Za-z0-9_]*) = ([^;]*);")
        list(APPEND aliases "${CMAKE_MATCH_1}=${CMAKE_MATCH_2}")
      elseif(line MATCHES "^using [A-Za-z_:]*::([A-Za-z_][A-Za-z0-9_]*);")
        list(APPEND aliases "${CMAKE_MATCH_1}=using-declaration")
      elseif(line MATCHES "^[A-Za-z][^=;(]*[ *&]([A-Za-z_][A-Za-z0-9_]*)[({]")
        list(APPEND names "${CMAKE_MATCH_1}")
      elseif(line MATCHES " (k[A-Z][A-Za-z0-9_]*) =")
        list(APPEND names "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES names)
    list(REMOVE_DUPLICATES aliases)
    set(names_${f} "${names}")
    set(aliases_${f} "${aliases}")
    set(alone_${f} ${alone})
    list(APPEND all_names ${names})
    list(APPEND all_aliases ${aliases})
  endforeach()
  # Names defined by more than one file; alias names defined two ways.
  set(shared "")
  list(SORT all_names)
  set(prev "")
  foreach(n IN LISTS all_names)
    if(n STREQUAL prev)
      list(APPEND shared "${n}")
    endif()
    set(prev "${n}")
  endforeach()
  list(REMOVE_DUPLICATES all_aliases)
  set(alias_names "")
  set(split_aliases "")
  foreach(a IN LISTS all_aliases)
    string(REGEX REPLACE "=.*" "" n "${a}")
    if(n IN_LIST alias_names)
      list(APPEND split_aliases "${n}")
    endif()
    list(APPEND alias_names "${n}")
  endforeach()
  # Each file on its own or in a group of files with the same split aliases.
  list(SORT files)
  set(keys "")
  foreach(f IN LISTS files)
    set(alone ${alone_${f}})
    foreach(n IN LISTS names_${f})
      if(n IN_LIST shared)
        set(alone ON)
      endif()
    endforeach()
    if(alone)
      set_source_files_properties("${f}" TARGET_DIRECTORY ${tgt} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      continue()
    endif()
    set(key "aliases:")
    foreach(a IN LISTS aliases_${f})
      string(REGEX REPLACE "=.*" "" n "${a}")
      if(n IN_LIST split_aliases)
        string(APPEND key "${a}|")
      endif()
    endforeach()
    list(FIND keys "${key}" k)
    if(k EQUAL -1)
      list(LENGTH keys k)
      list(APPEND keys "${key}")
      set(count_${k} 0)
    endif()
    math(EXPR batch "${count_${k}} / 8")
    math(EXPR count_${k} "${count_${k}} + 1")
    set_source_files_properties("${f}" TARGET_DIRECTORY ${tgt} PROPERTIES UNITY_GROUP "u${k}_${batch}")
  endforeach()
endfunction()

# prosgrow_build_speedups(TARGET): the unity build, where TARGET is listed.
function(prosgrow_build_speedups tgt)
  if(PROSGROW_UNITY AND tgt IN_LIST PROSGROW_UNITY_TARGETS)
    set_target_properties(${tgt} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
    prosgrow_unity_groups(${tgt})
  endif()
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
    prosgrow_build_speedups(pg_${NAME})
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
