# cmake -DPTX=<file.ptx> -DTEXT=<text> -DEXPECT=<ON|OFF> -P ptx_contains.cmake: fails unless the PTX
# file contains TEXT (EXPECT ON) or does not (EXPECT OFF).
file(READ "${PTX}" _ptx)
string(FIND "${_ptx}" "${TEXT}" _at)
if(EXPECT AND _at EQUAL -1)
  message(FATAL_ERROR "${PTX} does not contain ${TEXT}")
elseif(NOT EXPECT AND NOT _at EQUAL -1)
  message(FATAL_ERROR "${PTX} contains ${TEXT}")
endif()
message(STATUS "ok: ${TEXT} ${EXPECT} in ${PTX}")
