# Issue 34: the checkpoint hooks shipped in /usr/share/sparkops/python (deploy/python), tested with
# stand-in transformers and Lightning modules.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME python.checkpoint_callbacks COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/callbacks_test.py
           ${CMAKE_SOURCE_DIR}/deploy/python)
else()
  message(WARNING "no python3: the checkpoint callbacks test is not registered with ctest")
endif()
