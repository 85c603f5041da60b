# The sanitizer build (scripts/test.sh --sanitize), loaded with -DCMAKE_PROJECT_INCLUDE:
# AddressSanitizer and UndefinedBehaviorSanitizer, every report fatal, on bertc, the runtime
# libraries and the tests. Two exceptions, set per target as BERTC_SANITIZERS:
#  - "none" for the simulated device (runtime/cuda_sim): its memory checkers define ASan's
#    callbacks, which GCC refuses to compile under any -fsanitize;
#  - "undefined" for the rest compiled with its -fsanitize=kernel-address (the checkers'
#    hooks), which no compiler combines with ASan.
# The executables they go into still link both runtimes, for the rest of their code.
add_compile_options(
  "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<NOT:$<STREQUAL:$<TARGET_PROPERTY:BERTC_SANITIZERS>,none>>>:-fsanitize=undefined;-fno-sanitize-recover=undefined;-fno-omit-frame-pointer>"
  "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<STREQUAL:$<TARGET_PROPERTY:BERTC_SANITIZERS>,>>:-fsanitize=address>")
add_link_options(-fsanitize=address,undefined)
# The trainers bertc builds link these runtimes too (RuntimeLocations.h), whatever flags
# they are compiled with.
set(BERTC_RUNTIME_LINK_OPTIONS -fsanitize=address,undefined)

# Sets BERTC_SANITIZERS on the targets of `directory` and below that need an exception.
function(bertc_mark_sanitizer_exceptions directory)
  get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(options ${target} COMPILE_OPTIONS)
    if(directory MATCHES "/runtime/cuda_sim$")
      set_property(TARGET ${target} PROPERTY BERTC_SANITIZERS none)
    elseif(options MATCHES "-fsanitize=kernel-address")
      set_property(TARGET ${target} PROPERTY BERTC_SANITIZERS undefined)
    endif()
  endforeach()
  get_property(subdirectories DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    bertc_mark_sanitizer_exceptions(${subdirectory})
  endforeach()
endfunction()
# Once every target exists: at the end of the top-level CMakeLists.txt.
cmake_language(DEFER CALL bertc_mark_sanitizer_exceptions ${CMAKE_SOURCE_DIR})
