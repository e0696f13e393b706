# Writes OUT, a header with the commit the build was made from, for run manifests
# (docs/runs.md). Run at every build (app/CMakeLists.txt), so that a commit made after the
# configure step is named, and written only when it changed, so that nothing rebuilds for it.
# Not a git checkout (a release tarball, the fresh-machine check's copy): "unknown".
set(commit "unknown")
find_program(GIT git)
if(GIT)
    execute_process(COMMAND ${GIT} -C ${SRC} rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE head RESULT_VARIABLE rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0 AND head)
        set(commit "${head}")
        # Uncommitted changes to tracked files: the commit alone does not say what was built.
        execute_process(COMMAND ${GIT} -C ${SRC} status --porcelain --untracked-files=no
                        OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
        if(rc EQUAL 0 AND NOT changes STREQUAL "")
            set(commit "${commit}+changes")
        endif()
    endif()
endif()
file(WRITE ${OUT}.tmp "#pragma once\n#define FLOWBENCH_COMMIT \"${commit}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
file(REMOVE ${OUT}.tmp)
