# cmake -DIN=… -DOUT=… -P inline_js.cmake: copies a minified script for inlining into the
# report's HTML, dropping its sourceMappingURL comment and refusing what would end or change the
# <script> element it goes in.
file(READ "${IN}" js)
string(REGEX REPLACE "\n?//# sourceMappingURL=[^\n]*\n?$" "\n" js "${js}")
string(FIND "${js}" "</script" close_at)
string(FIND "${js}" "<!--" comment_at)
if(NOT close_at EQUAL -1 OR NOT comment_at EQUAL -1)
  message(FATAL_ERROR "${IN} holds '</script' or '<!--': it cannot be inlined in <script>")
endif()
string(FIND "${js}" "sourceMappingURL" map_at)
if(NOT map_at EQUAL -1)
  message(FATAL_ERROR "${IN}: a sourceMappingURL is left in it")
endif()
file(WRITE "${OUT}" "${js}")
