# np_compiled_targets(DIR OUT): every executable and static library defined in DIR and the
# folders below it, for flags that apply to a whole part of the tree (CMakeLists.txt: the
# sanitizers, and the tests' own code compiled for speed).
function(np_compiled_targets dir out)
  set(found "")
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY)$")
      list(APPEND found ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(d ${subdirs})
    np_compiled_targets(${d} below)
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# np_link_objects_first(TARGET LIBRARY): LIBRARY's object files go on TARGET's link line before
# TARGET's own. Where the two share an inline function or a template (nlohmann_json, fmt, the
# standard library), the linker keeps the first copy it meets: so a test compiled at -O0 runs the
# library's code, and what it inlined, as the library was built, not at -O0 (measured: the unit
# tests at -O0 take 7 s instead of 23 s so, 5 s with the whole test at -O2).
function(np_link_objects_first target library)
  target_link_options(${target} PRIVATE $<TARGET_OBJECTS:${library}>)
endfunction()
