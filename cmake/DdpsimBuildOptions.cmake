# ddpsim_apply_build_options(DIR): links ddpsim_options (warnings, sanitizers, language level,
# the source root as include directory: top-level CMakeLists.txt) PRIVATE to every library and
# program defined in DIR and the folders below it.
#
# PRIVATE, so a static library's consumers get none of it: not the programs of a project that
# installs ddpsim, nor one that adds it with add_subdirectory. Inside this project every target
# gets it directly, including targets added later, in any folder, without a line of their own.
# $<BUILD_INTERFACE:...>: a static library's PRIVATE links are recorded as $<LINK_ONLY:...> in
# its interface, which install(EXPORT) would refuse for a target outside the export set.
function(ddpsim_apply_build_options dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:ddpsim_options>)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    ddpsim_apply_build_options(${subdir})
  endforeach()
endfunction()

# ddpsim_project_targets(OUT DIR TYPE REGEX): the targets of type TYPE (EXECUTABLE, ...) whose
# name matches REGEX, defined in DIR and the folders below it.
function(ddpsim_project_targets out dir type regex)
  set(found "")
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(target_type ${target} TYPE)
    if(target_type STREQUAL type AND target MATCHES "${regex}")
      list(APPEND found ${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    ddpsim_project_targets(below ${subdir} ${type} "${regex}")
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
