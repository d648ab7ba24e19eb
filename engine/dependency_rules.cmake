# The dependency rule (docs/architecture.md), checked when CMake configures: a library listed on the
# left never links, directly or through another library, one listed on the right. A change that
# breaks it fails the configure step with the path of libraries that made the link.
#   t5s_core        (tokenizers, options, input, quality, spans; torch-free) -/-> torch, t5s_engine
#   t5s_history     (SQLite; torch-free)                                      -/-> torch, t5s_engine
#   t5s_learning    (the learning loop serve and learn run)                   -/-> t5s_engine_thread
#   t5studio        (the CLI, serve and learn included)                       -/-> t5s_engine_thread, but
#                   through the desktop UI it opens when run without a command (so a build without the
#                   GUI carries no engine thread)
#   t5s_engine_thread (the desktop's engine; no UI code)                      -/-> the UI, ImGui, GLFW

# Sets <out> to "a -> b -> c" when <target> reaches <forbidden> other than through the targets
# listed after <out>, else to "".
function(t5s_link_path target forbidden out)
  set(allowed_through ${ARGN})
  set(paths "${target}")
  set(queue "${target}")
  set(seen "${target}")
  while(queue)
    list(POP_FRONT queue current)
    list(POP_FRONT paths current_path)
    if(NOT TARGET ${current})
      continue()
    endif()
    get_target_property(type ${current} TYPE)
    set(deps "")
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(direct ${current} LINK_LIBRARIES)
      if(direct)
        list(APPEND deps ${direct})
      endif()
    endif()
    get_target_property(interface ${current} INTERFACE_LINK_LIBRARIES)
    if(interface)
      list(APPEND deps ${interface})
    endif()
    foreach(dep ${deps})
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
      if(dep MATCHES "^\\$<" OR dep IN_LIST seen OR dep IN_LIST allowed_through)
        continue()
      endif()
      if(dep STREQUAL forbidden)
        set(${out} "${current_path} -> ${dep}" PARENT_SCOPE)
        return()
      endif()
      list(APPEND seen "${dep}")
      list(APPEND queue "${dep}")
      list(APPEND paths "${current_path} -> ${dep}")
    endforeach()
  endwhile()
  set(${out} "" PARENT_SCOPE)
endfunction()

# t5s_forbid_link(target forbidden... [UNLESS_THROUGH allowed...])
function(t5s_forbid_link target)
  cmake_parse_arguments(RULE "" "" "UNLESS_THROUGH" ${ARGN})
  if(NOT TARGET ${target})
    return()
  endif()
  foreach(forbidden ${RULE_UNPARSED_ARGUMENTS})
    t5s_link_path(${target} ${forbidden} path ${RULE_UNLESS_THROUGH})
    if(path)
      message(FATAL_ERROR "dependency rule broken: ${target} must not link ${forbidden}, but links it through ${path} "
                          "(engine/dependency_rules.cmake, docs/architecture.md)")
    endif()
  endforeach()
endfunction()

t5s_forbid_link(t5s_core torch t5s_torch_cpu t5s_engine)
t5s_forbid_link(t5s_history torch t5s_torch_cpu t5s_engine)
t5s_forbid_link(t5s_learning t5s_engine_thread)
t5s_forbid_link(t5studio t5s_engine_thread UNLESS_THROUGH t5s_ui)
t5s_forbid_link(t5s_engine_thread t5s_ui_logic t5s_ui PkgConfig::IMGUI PkgConfig::GLFW3)
