# ctest: installs the build into a temporary prefix, builds a consumer with find_package only
# (every component; it runs a model through the C++ API bit-exact against its golden: the
# corpus's person_detect when -DVECTORS_DIR holds it, else the CLI's bundled example and the
# installed CLI's output), a consumer of the C API alone where fmt, TBB, ZLIB, FlatBuffers and
# nlohmann_json cannot be found, and another with pkg-config only, and runs them; with -DPYTHON
# (the interpreter the module was built for), imports the installed module from the prefix and
# runs a model with it.
# -DBUILD_DIR -DSOURCE_DIR -DWORK_DIR -DCC [-DVECTORS_DIR] [-DPYTHON -DPYTHON_DIR -DVERSION]
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

set(person_detect ${VECTORS_DIR}/person_detect)
if(VECTORS_DIR AND EXISTS ${person_detect}/ethos-u55-128/model_vela.tflite)
  run(${WORK_DIR}/consumer/run_model ${person_detect}/ethos-u55-128/model_vela.tflite
      in=${person_detect}/golden/seed1.in0.bin out=${person_detect}/golden/seed1.out0.bin)
else()
  message(STATUS "corpus absent (${VECTORS_DIR}): the C++ API runs the CLI's example instead")
  run(${prefix}/bin/ethosu-emu example ${WORK_DIR}/example.bin)
  run(${prefix}/bin/ethosu-emu run ${WORK_DIR}/example.bin --output-prefix ${WORK_DIR}/example)
  file(GLOB example_outputs ${WORK_DIR}/example.out*.bin)
  list(SORT example_outputs)
  list(TRANSFORM example_outputs PREPEND out=)
  run(${WORK_DIR}/consumer/run_model ${WORK_DIR}/example.bin ${example_outputs})
endif()

# The C API alone, with the other packages made unfindable.
set(unfindable)
foreach(package fmt TBB ZLIB FlatBuffers flatbuffers nlohmann_json)
  list(APPEND unfindable -DCMAKE_DISABLE_FIND_PACKAGE_${package}=ON)
endforeach()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/c_api_consumer -B ${WORK_DIR}/c_api_consumer
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release ${unfindable})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/c_api_consumer)
run(${WORK_DIR}/c_api_consumer/consumer)
run(${WORK_DIR}/c_api_consumer/device_model_host)

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
