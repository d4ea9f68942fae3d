# Runs cubind-gen on one golden case and compares its output with expected/.
#
#   cmake -DGEN=<cubind-gen> -DCASE=<cases/NAME> -DTEMPLATES=<templates>
#         -DWORK=<scratch dir> [-DACCEPT=ON] -P run_case.cmake
#
# Produces, under WORK:
#   model.json   cubind-gen --dump-model
#   report.txt   cubind-gen --report
#   fragments/   cubind-gen --fragments fragments: per template, each of its
#                renderings, with the fragments of other templates inside it
#                shown as <<template: label>>, so that a template edit changes
#                only that template's file
# and fails with a unified diff (diff -ruN expected WORK) on any difference.
# With ACCEPT=ON it replaces CASE/expected with WORK instead.
foreach(var GEN CASE TEMPLATES WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_case.cmake: -D${var}=... is required")
  endif()
endforeach()
get_filename_component(name "${CASE}" NAME)

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# Relative -I and working directory: nothing of this checkout's location may
# reach the output (checked below as well).
set(common --spec spec.toml -I . --templates "${TEMPLATES}")
function(generate output_file)
  execute_process(COMMAND "${GEN}" ${common} ${ARGN}
                  WORKING_DIRECTORY "${CASE}"
                  RESULT_VARIABLE rc
                  OUTPUT_FILE "${output_file}"
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "golden ${name}: cubind-gen ${ARGN} failed (${rc}):\n${err}")
  endif()
endfunction()
generate("${WORK}/model.json" --dump-model)
generate("${WORK}/report.txt" --report)
generate("${WORK}/fragments.log" --fragments "${WORK}/fragments")
file(REMOVE "${WORK}/fragments.log")  # the list of files written: the tree itself is compared

get_filename_component(case_abs "${CASE}" ABSOLUTE)
get_filename_component(work_abs "${WORK}" ABSOLUTE)
file(GLOB_RECURSE produced "${WORK}/*")
foreach(f ${produced})
  file(READ "${f}" text)
  foreach(dir "${case_abs}" "${work_abs}" "${TEMPLATES}")
    string(FIND "${text}" "${dir}" at)
    if(NOT at EQUAL -1)
      file(RELATIVE_PATH rel "${WORK}" "${f}")
      message(FATAL_ERROR "golden ${name}: ${rel} contains the machine-dependent path ${dir}")
    endif()
  endforeach()
endforeach()

if(ACCEPT)
  file(REMOVE_RECURSE "${CASE}/expected")
  file(COPY "${WORK}/" DESTINATION "${CASE}/expected")
  message(STATUS "golden ${name}: accepted into ${CASE}/expected")
  return()
endif()

if(NOT EXISTS "${CASE}/expected")
  message(FATAL_ERROR "golden ${name}: no expected/ yet: review the output in ${WORK} and accept it "
                      "with generator/tests/accept-goldens.sh ${name}")
endif()
find_program(DIFF_EXECUTABLE diff)
if(NOT DIFF_EXECUTABLE)
  message(FATAL_ERROR "golden ${name}: the diff program is needed to compare goldens")
endif()
# diff writes straight to this test's output (shown by ctest --output-on-failure).
message(NOTICE "golden ${name}: diff -ruN expected <actual>")
execute_process(COMMAND "${DIFF_EXECUTABLE}" -ruN expected "${WORK}"
                WORKING_DIRECTORY "${CASE}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "golden ${name}: the output differs from expected/ (above: - expected, + actual). "
                      "If the change is intended, accept it: generator/tests/accept-goldens.sh ${name}")
endif()
message(STATUS "golden ${name}: ok")
