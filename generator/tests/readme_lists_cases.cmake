# Fails when a case directory under cases/ has no row `| `<case>` |` in
# README.md's table of cases, so that the table stays the index of them all.
#   cmake -DREADME=README.md -DCASES=cases -P readme_lists_cases.cmake
file(READ "${README}" readme)
file(GLOB cases LIST_DIRECTORIES true "${CASES}/*")
set(missing "")
foreach(case_dir ${cases})
  if(NOT IS_DIRECTORY "${case_dir}")
    continue()
  endif()
  get_filename_component(case "${case_dir}" NAME)
  string(FIND "${readme}" "| `${case}` |" at)
  if(at EQUAL -1)
    list(APPEND missing "${case}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "generator/tests/README.md does not list these cases (add a row `| `<case>` | construct |`): ${missing}")
endif()
