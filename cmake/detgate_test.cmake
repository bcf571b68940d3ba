# dg_add_cmocka_test(NAME SOURCES a.c b.c LIBS x y LABELS l1 l2 [TIMEOUT s])
# One cmocka executable per test file, registered with ctest.
function(dg_add_cmocka_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE PkgConfig::CMOCKA ${T_LIBS})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests ${CMAKE_SOURCE_DIR})
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}"
    ENVIRONMENT "DETGATE_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endfunction()
