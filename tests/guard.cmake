# The memory guard's test tool: a process that allocates (and touches) memory step by step,
# printing "allocated N MiB" after each step (tests/run/guard_test.cc, bench/guard.sh).
add_executable(guard_alloc ${CMAKE_CURRENT_LIST_DIR}/fake/guard_alloc.cc)
set_target_properties(guard_alloc PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_dependencies(sparkops_tests guard_alloc)
