# Writes the emulator's forwarding headers from their list (cmake -P).
#
#   cmake -DLIST=cpp/emu/forwarding_headers.tsv -DSOURCE_INCLUDE_DIR=cpp/emu/include
#         -DOUT_DIR=<generated include dir> [-DSTAMP=<file>] -P forwarding_headers.cmake
#
# Every line of LIST that is not blank or a # comment is "<path>\t<header>":
# OUT_DIR/<path> becomes a header that includes <header>, a file of
# SOURCE_INCLUDE_DIR. Files under OUT_DIR that the list does not name are
# removed, and a file is rewritten only when its text changes. A malformed
# line, a path given twice, a path that is also a hand-written header in
# SOURCE_INCLUDE_DIR, or a header that is not there stops with an error
# naming the line. STAMP, when given, is touched at the end (the build's
# record that the headers are up to date).
cmake_minimum_required(VERSION 3.20)

foreach(var LIST SOURCE_INCLUDE_DIR OUT_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "forwarding_headers.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT EXISTS "${LIST}")
  message(FATAL_ERROR "forwarding_headers.cmake: the list ${LIST} does not exist")
endif()

file(STRINGS "${LIST}" lines)
set(paths "")
set(line_no 0)
foreach(line IN LISTS lines)
  math(EXPR line_no "${line_no} + 1")
  if(line MATCHES "^[ \t]*(#.*)?$")
    continue()
  endif()
  set(at "${LIST}:${line_no}")
  if(NOT line MATCHES "^([^\t ]+)\t([^\t ]+)$")
    message(FATAL_ERROR "${at}: want \"<tt-metal include path><TAB><emulator header>\", got \"${line}\"")
  endif()
  set(path "${CMAKE_MATCH_1}")
  set(target "${CMAKE_MATCH_2}")
  foreach(p IN ITEMS "${path}" "${target}")
    if(p MATCHES "^/" OR p MATCHES "(^|/)\\.\\.?(/|$)" OR NOT p MATCHES "\\.(h|hpp)$")
      message(FATAL_ERROR "${at}: \"${p}\" is not a relative .h or .hpp path without . or .. components")
    endif()
  endforeach()
  if(path IN_LIST paths)
    message(FATAL_ERROR "${at}: ${path} is listed twice")
  endif()
  if(EXISTS "${SOURCE_INCLUDE_DIR}/${path}")
    message(FATAL_ERROR "${at}: ${path} is also a hand-written header in ${SOURCE_INCLUDE_DIR}; "
                        "keep one of them (the list for a header that only includes another)")
  endif()
  if(NOT EXISTS "${SOURCE_INCLUDE_DIR}/${target}" OR IS_DIRECTORY "${SOURCE_INCLUDE_DIR}/${target}")
    message(FATAL_ERROR "${at}: ${path} forwards to ${target}, which is not a header in ${SOURCE_INCLUDE_DIR}")
  endif()
  list(APPEND paths "${path}")
  string(CONCAT text
    "// Generated from cpp/emu/forwarding_headers.tsv (do not edit): the tt-metal\n"
    "// include path ${path}, mirrored by zyx-tt's emulator.\n"
    "#pragma once\n"
    "#include \"${target}\"\n")
  set(file "${OUT_DIR}/${path}")
  set(old "")
  if(EXISTS "${file}")
    file(READ "${file}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${file}" "${text}")
  endif()
endforeach()

# Headers of an earlier list that this one no longer names.
file(GLOB_RECURSE present RELATIVE "${OUT_DIR}" "${OUT_DIR}/*")
foreach(p IN LISTS present)
  if(NOT p IN_LIST paths)
    file(REMOVE "${OUT_DIR}/${p}")
  endif()
endforeach()

if(DEFINED STAMP AND NOT STAMP STREQUAL "")
  file(TOUCH "${STAMP}")
endif()
