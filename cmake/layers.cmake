# SPDX-License-Identifier: MIT
# The layer graph, stated once: each folder of the tree and the folders
# whose headers it may include (besides its own). tests/check-layers (ctest
# style.layers) reads this file and fails on an include against it, on an
# edge no file uses, on a folder README whose "May include:" line differs
# from it and on a folder with code it does not name. The build checks here
# that no library links a folder's library outside its layer.
#
# To change the graph: edit the folder's line below, then the
# "May include:" line of its README (style.layers prints the line it
# expects), and say why in the commit (docs/contributing.md, "Style and
# layers").

# ibemu_layer(<folder> [TARGET <target>] [<folder it may include>...])
#
# A folder and what it may include, each of them declared on an earlier
# line (so the graph has no cycle and its order is the order of the
# lines). TARGET names the folder's CMake target when it is not
# ibemu-<folder>. If that target exists, the folders it links must lie
# below the folder (its may-include folders and theirs).
function(ibemu_layer folder)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "TARGET" "")
  set(below)
  foreach(dep ${ARG_UNPARSED_ARGUMENTS})
    get_property(known GLOBAL PROPERTY IBEMU_LAYER_DECLARED_${dep} SET)
    if(NOT known)
      message(FATAL_ERROR "cmake/layers.cmake: ibemu_layer(${folder}): "
        "${dep}/ is not declared on an earlier line")
    endif()
    get_property(dep_below GLOBAL PROPERTY IBEMU_LAYER_BELOW_${dep})
    list(APPEND below ${dep} ${dep_below})
  endforeach()
  list(REMOVE_DUPLICATES below)
  set_property(GLOBAL PROPERTY IBEMU_LAYER_DECLARED_${folder} TRUE)
  set_property(GLOBAL PROPERTY IBEMU_LAYER_BELOW_${folder} "${below}")
  if(NOT ARG_TARGET)
    set(ARG_TARGET ibemu-${folder})
  endif()
  set_property(GLOBAL PROPERTY IBEMU_LAYER_OF_${ARG_TARGET} ${folder})
  if(TARGET ${ARG_TARGET})
    ibemu__layer_check_links(${folder} ${ARG_TARGET} "${below}")
  endif()
endfunction()

# The folders above every layer (tests, benchmarks): they may include any
# folder's headers. Named so that style.layers knows every folder with code.
function(ibemu_layer_top)
endfunction()

# ibemu_layer_private(<header> <folder>...): a header only these folders
# may include, whatever the graph says (node.h, the engine's interface for
# its node classes). Read by style.layers only.
function(ibemu_layer_private header)
endfunction()

function(ibemu__layer_check_links folder target below)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
  else()
    get_target_property(links ${target} LINK_LIBRARIES)
  endif()
  if(NOT links)
    return()
  endif()
  foreach(lib ${links})
    get_property(lib_folder GLOBAL PROPERTY IBEMU_LAYER_OF_${lib})
    if(lib_folder AND NOT lib_folder IN_LIST below)
      message(FATAL_ERROR "${target} (${folder}/) links ${lib} "
        "(${lib_folder}/), which is not below ${folder}/ in "
        "cmake/layers.cmake: drop the link, or add the edge there")
    endif()
  endforeach()
endfunction()

ibemu_layer(common)
ibemu_layer(proto)
ibemu_layer(mad common)
ibemu_layer(cc common)
ibemu_layer(topo common cc)
ibemu_layer(routing common topo)
ibemu_layer(fabric common mad topo routing)
ibemu_layer(switch fabric)
ibemu_layer(hca common topo fabric)
ibemu_layer(agent common mad topo fabric switch hca)
ibemu_layer(model fabric switch hca agent)
# A study's hosts throttle as HCAs do: hca/'s source-side congestion
# control (hca/cc.c) serves them as it serves QP transports.
ibemu_layer(traffic common topo fabric hca)
ibemu_layer(clock proto)
ibemu_layer(daemon common topo routing fabric hca model clock)
ibemu_layer(attach proto mad hca agent daemon)
ibemu_layer(ctl common proto topo switch hca agent traffic daemon attach)
ibemu_layer(cli TARGET ibemu common proto topo routing daemon ctl)
ibemu_layer(sm common mad cc routing)
ibemu_layer(sessc proto)
ibemu_layer(umad TARGET ibumad proto mad sessc)
ibemu_layer(verbs TARGET ibverbs proto sessc)
ibemu_layer(rdmacm TARGET rdmacm proto mad sessc)
ibemu_layer(vtime proto)
ibemu_layer(devnode proto)
# The shipped examples: programs of users; they include ibemu.h as users
# do, by its name on their include path.
ibemu_layer(examples)

ibemu_layer_top(tests bench)

ibemu_layer_private(node.h fabric switch hca model)
