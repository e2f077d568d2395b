# ctest: installs the build into a temporary prefix, builds a consumer with find_package only
# and another with pkg-config only, and runs both; with -DPYTHON (the interpreter the module was
# built for), imports the installed module from the prefix and runs a model with it.
# -DBUILD_DIR -DSOURCE_DIR -DWORK_DIR -DCC [-DPYTHON -DPYTHON_DIR -DVERSION]
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/consumer -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run(${WORK_DIR}/consumer/consumer)
run(${WORK_DIR}/consumer/consumer_linux)
run(${WORK_DIR}/consumer/device_model_host)
run(${WORK_DIR}/consumer/driver_library_client)

file(GLOB_RECURSE pc_files ${prefix}/*/ethosu_emu.pc)
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir} sh -c
    "${CC} -o ${WORK_DIR}/consumer_pc ${SOURCE_DIR}/tests/install/consumer/consumer.c $(pkg-config --cflags --libs ethosu_emu)")
run(${WORK_DIR}/consumer_pc)

if(PYTHON)
  run(${PYTHON} ${SOURCE_DIR}/tests/install/use_python_module.py ${prefix}/${PYTHON_DIR} ${VERSION}
      ${prefix}/bin/ethosu-emu ${WORK_DIR})
endif()
