# The installed package works for a host app: cmake --install into a fresh prefix, configure and
# build examples/host_app against it with find_package(fusor), run it on SqueezeNet. host_app
# checks its own answers (repeat runs agree, no allocations in steady state, optimized output
# matches level disabled) and exits non-zero when they fail.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P install_test.cmake
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT ${v})
    message(FATAL_ERROR "${v} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(step_out "${out}" PARENT_SCOPE)
endfunction()

step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/fusor/fusor.h include/fusor/session.h lib/cmake/fusor/fusorConfig.cmake
          share/fusor/providers/cpu.provider)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
# The app must not see the source tree: only the installed headers and package.
step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/host_app -B ${WORK_DIR}/build -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_PREFIX_PATH=${prefix})
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2)
step(${CMAKE_COMMAND} -E env --unset=FUSOR_RULES_DIR XDG_CACHE_HOME=${WORK_DIR}/cache ${WORK_DIR}/build/host_app
     ${SOURCE_DIR}/examples/models/squeezenet1_1.onnx all ${WORK_DIR}/squeezenet.opt.onnx)
message("${step_out}")
if(NOT step_out MATCHES "host_app: ok")
  message(FATAL_ERROR "host_app did not report ok")
endif()
if(NOT EXISTS ${WORK_DIR}/squeezenet.opt.onnx)
  message(FATAL_ERROR "host_app did not write the optimized model")
endif()
