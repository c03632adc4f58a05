# The layer check (scripts/check_layers.py, docs/architecture.md): no file under src/ includes from a
# higher layer. `layers_selftest` plants faulty trees and expects the checker to name each fault.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME layers COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/check_layers.py
           --src ${CMAKE_SOURCE_DIR}/src)
  add_test(NAME layers_selftest COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/check_layers.py --self-test)
else()
  message(WARNING "no python3: the layer check (scripts/check_layers.py) is not registered with ctest")
endif()
